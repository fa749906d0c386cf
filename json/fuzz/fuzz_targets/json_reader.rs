//! The policy's JSON reader against serde_json on arbitrary text: it
//! accepts the same texts (below its nesting bound), skips a value to the
//! same end, and decodes strings to the same characters.
#![no_main]

use kube_ovn_json::{self as json, MAX_DEPTH, Reader};
use libfuzzer_sys::fuzz_target;

/// How deeply the text's brackets nest, ignoring strings.
fn nesting(text: &str) -> u32 {
    let (mut depth, mut deepest, mut in_string, mut escaped) = (0u32, 0, false, false);
    for b in text.bytes() {
        match (in_string, escaped, b) {
            (true, true, _) => escaped = false,
            (true, false, b'\\') => escaped = true,
            (true, false, b'"') | (false, _, b'"') => in_string = !in_string,
            (false, _, b'[' | b'{') => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            (false, _, b']' | b'}') => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        assert!(json::from_slice::<json::Ignored>(data).is_err());
        return;
    };
    let mut reader = Reader::new(text);
    let ours = reader.skip().and_then(|()| reader.finish());
    let theirs = serde_json::from_str::<serde::de::IgnoredAny>(text);
    if nesting(text) <= MAX_DEPTH {
        assert_eq!(
            ours.is_ok(),
            theirs.is_ok(),
            "{text:?}: {ours:?} vs {theirs:?}"
        );
    } else {
        assert!(ours.is_err() || theirs.is_ok(), "{text:?}");
    }
    if ours.is_ok() {
        let raw = Reader::new(text).raw().expect("skipped once");
        assert_eq!(raw, text.trim_matches([' ', '\t', '\n', '\r']), "{text:?}");
    }
    if text.trim_start().starts_with('"') {
        let ours = json::from_str::<String>(text).ok();
        let theirs = serde_json::from_str::<String>(text).ok();
        assert_eq!(ours, theirs, "{text:?}");
    }
});
