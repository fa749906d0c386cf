//! A byte scan of an IP list answer that tells, without decoding its items,
//! that none of them can hold an address a request claims.
//!
//! A subnet of 10 000 pods answers an IP list of about 6 MB; decoding every
//! item to find the one or two that hold a claimed address took most of the
//! module's time in a decision (docs/performance.md). An IP object holds an
//! address only through `spec.ipAddress`, `spec.v4IpAddress` or
//! `spec.v6IpAddress` (`held_addresses`). Where the answer has no escape at
//! all (the policy-server writes none: serde_json escapes only quotes,
//! backslashes and control characters), each of those keys appears in it as
//! its literal text, so every value they carry can be found with a search
//! for `Address"` and parsed as the decoder would parse it. When none of
//! those values (nor any other value of a key so named, anywhere) is a
//! claimed address, no item is kept, and only the list's head is read.
//! Anything unexpected is left to the full decoding, which answers exactly.

use crate::upstream::kubeovn_util::parse_item;
use memchr::memmem;
use std::net::IpAddr;

/// The keys whose string values an IP object holds its addresses in.
const ADDRESS_KEYS: [&[u8]; 3] = [b"\"ipAddress", b"\"v4IpAddress", b"\"v6IpAddress"];

/// Whether the decoding of an IP list answer can be skipped: `Some(head)`,
/// the list with its `items` emptied (`{..., "items": []}`) for the head's
/// checks, when no item can hold one of `addresses`; `None` when the answer
/// must be decoded in full (an item may hold one, the answer has an escape,
/// or its shape is not the plain one the policy-server writes).
pub fn head_without_holders(raw: &[u8], addresses: &[IpAddr]) -> Option<Vec<u8>> {
    let head = plain_head(raw)?;
    let v4_texts: Vec<String> = addresses
        .iter()
        .filter(|a| a.is_ipv4())
        .map(IpAddr::to_string)
        .collect();
    // One pass over the answer for both: a backslash (an escape) anywhere,
    // and each `Address"` that ends a key.
    for at in memchr::memchr2_iter(b'\\', b'A', raw) {
        if raw[at] == b'\\' {
            return None;
        }
        let Some(after) = raw[at..].strip_prefix(b"Address\"") else {
            continue;
        };
        let before = &raw[..at + "Address".len()];
        if !ADDRESS_KEYS.iter().any(|key| before.ends_with(key)) {
            continue;
        }
        // `null`, or a value of another type: the decoder says what it is.
        let value = string_value(after)?;
        if may_be_one_of(value, addresses, &v4_texts) {
            return None;
        }
    }
    Some(head)
}

/// The list's head as `{<every key before items>,"items":[]}`, when the
/// answer is `{..., "items": [...]}` with `items` its last key, as the
/// policy-server writes a list (apiVersion, kind, metadata, items). The
/// items are not read, so neither is a second `items` key after them (the
/// policy-server writes none).
fn plain_head(raw: &[u8]) -> Option<Vec<u8>> {
    let key = b"\"items\"";
    let at = memmem::find(raw, key)?;
    let rest = skip_space(&raw[at + key.len()..]);
    let rest = skip_space(rest.strip_prefix(b":")?);
    if !rest.starts_with(b"[") {
        return None;
    }
    let body = raw.trim_ascii_end().strip_suffix(b"}")?.trim_ascii_end();
    if !body.ends_with(b"]") {
        return None;
    }
    let mut head = raw[..at].to_vec();
    head.extend_from_slice(b"\"items\":[]}");
    Some(head)
}

/// Whether `value` may hold one of `addresses` as an IP object's address
/// field holds them (`held_addresses`: comma-separated, each parsed by
/// `parse_item`). Without a `:` a value holds IPv4 addresses only, each
/// written as Go's parser requires, in canonical dotted decimal (no leading
/// zeros): it can hold one only if it contains that text, so most values
/// are dismissed without being parsed. The checks are plain loops: values
/// are a few bytes long, and there are three per IP object.
fn may_be_one_of(value: &[u8], addresses: &[IpAddr], v4_texts: &[String]) -> bool {
    if !value.contains(&b':') && !v4_texts.iter().any(|text| contains(value, text.as_bytes())) {
        return false;
    }
    // Not UTF-8: the decoder says so.
    let Ok(value) = std::str::from_utf8(value) else {
        return true;
    };
    value
        .split(',')
        .filter_map(parse_item)
        .any(|a| addresses.contains(&a))
}

/// Whether `needle` occurs in the short `haystack`.
fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.len() >= needle.len() && haystack.windows(needle.len()).any(|w| w == needle)
}

/// The string a key's `:` introduces, without its quotes; `None` when the
/// value is not a string.
fn string_value(after_key: &[u8]) -> Option<&[u8]> {
    let rest = skip_space(after_key);
    let rest = skip_space(rest.strip_prefix(b":")?);
    let rest = rest.strip_prefix(b"\"")?;
    let end = rest.iter().position(|&b| b == b'"')?;
    Some(&rest[..end])
}

fn skip_space(bytes: &[u8]) -> &[u8] {
    let start = bytes
        .iter()
        .position(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
        .unwrap_or(bytes.len());
    &bytes[start..]
}
