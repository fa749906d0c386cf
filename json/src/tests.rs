use super::*;
use proptest::prelude::*;

crate::json_struct! {
    #[derive(Debug, Default, PartialEq)]
    struct Spec {
        name: String = "name",
        count: u32 = "count",
        on: bool = "on",
        tags: Vec<String> = "tags",
        maybe: Option<Vec<String>> = "maybe",
        labels: BTreeMap<String, String> = "labels",
    }
}

crate::json_struct! {
    #[derive(Debug, Default, PartialEq)]
    struct Object<'a> {
        spec: Spec = "spec",
        raw: Option<Raw<'a>> = "raw",
    }
}

fn decode(text: &str) -> Result<Object<'_>, String> {
    from_str(text).map_err(|e| e.to_string())
}

#[test]
fn reads_fields_skips_unknown_keys_and_keeps_the_last_of_a_repeated_key() {
    let object = decode(
        r#" {"spec": {"name": "a\"b\u00e9\ud83d\ude00", "count": 7, "on": true,
             "tags": ["x", null, "y"], "other": {"deep": [1, -2.5e3, {"k": null}]},
             "labels": {"k": "v", "n": null}, "count": 8},
             "raw": {"a": [1, 2]} } "#,
    )
    .expect("decodes");
    assert_eq!(object.spec.name, "a\"b\u{e9}\u{1f600}");
    assert_eq!(object.spec.count, 8);
    assert!(object.spec.on);
    assert_eq!(object.spec.tags, ["x", "", "y"]);
    assert_eq!(object.spec.maybe, None);
    assert_eq!(object.spec.labels.get("n").map(String::as_str), Some(""));
    assert_eq!(object.raw, Some(Raw(r#"{"a": [1, 2]}"#)));
}

#[test]
fn null_is_the_zero_value_and_keeps_an_empty_list_apart() {
    let object = decode(r#"{"spec": {"name": null, "count": null, "on": null, "tags": null, "maybe": []}, "raw": null}"#)
        .expect("decodes");
    assert_eq!(
        object.spec,
        Spec {
            maybe: Some(vec![]),
            ..Spec::default()
        }
    );
    assert_eq!(object.raw, None);
    assert_eq!(decode("null").expect("decodes"), Object::default());
}

#[test]
fn borrows_strings_without_escapes() {
    let mut reader = Reader::new(r#"["plain", "esc\n"]"#);
    let mut seen = Vec::new();
    reader
        .array(&mut |r| {
            seen.push(matches!(r.string()?, Cow::Borrowed(_)));
            Ok(())
        })
        .expect("decodes");
    assert_eq!(seen, [true, false]);
}

#[test]
fn type_errors_name_the_path() {
    let cases = [
        (
            r#"{"spec": {"name": 7}}"#,
            "spec.name: expected a string, found a number",
        ),
        (
            r#"{"spec": {"tags": ["a", {}]}}"#,
            "spec.tags[1]: expected a string, found an object",
        ),
        (
            r#"{"spec": {"count": -1}}"#,
            "spec.count: expected an unsigned 32-bit integer, found -1",
        ),
        (
            r#"{"spec": {"count": 1.5}}"#,
            "spec.count: expected an unsigned 32-bit integer, found 1.5",
        ),
        (
            r#"{"spec": {"count": 4294967296}}"#,
            "spec.count: expected an unsigned 32-bit integer, found 4294967296",
        ),
        (
            r#"{"spec": {"on": "true"}}"#,
            "spec.on: expected a boolean, found a string",
        ),
        (
            r#"{"spec": {"labels": {"k": ["v"]}}}"#,
            "spec.labels.k: expected a string, found an array",
        ),
        (
            r#"{"spec": []}"#,
            "spec: expected an object, found an array",
        ),
        (r#"[]"#, "expected an object, found an array"),
    ];
    for (text, want) in cases {
        assert_eq!(decode(text).expect_err(text), want, "{text}");
    }
}

#[test]
fn syntax_errors_give_the_byte_offset() {
    let cases = [
        ("", "unexpected end of text at byte 0"),
        ("{", "expected a key at byte 1"),
        (r#"{"spec" 1}"#, "expected ':' at byte 8"),
        (r#"{"spec": {} "raw": 1}"#, "expected ',' or '}' at byte 12"),
        (r#"{"raw": [1 2]}"#, "raw: expected ',' or ']' at byte 11"),
        (r#"{"raw": 01}"#, "raw: invalid number at byte 8"),
        (r#"{"raw": 1.}"#, "raw: invalid number at byte 8"),
        (r#"{"raw": nul}"#, "raw: expected a JSON value at byte 8"),
        (r#"{"raw": "a\x"}"#, "raw: invalid escape at byte 11"),
        (
            r#"{"spec": {"name": "\ud800"}}"#,
            "spec.name: lone surrogate in a \\u escape at byte 25",
        ),
        (
            "{\"raw\": \"a\tb\"}",
            "raw: control character in a string at byte 10",
        ),
        ("{} x", "trailing characters after the JSON value at byte 3"),
    ];
    for (text, want) in cases {
        assert_eq!(decode(text).expect_err(text), want, "{text}");
    }
    assert_eq!(
        from_slice::<Object<'_>>(b"{\"spec\": {\"name\": \"\xff\"}}")
            .expect_err("not UTF-8")
            .to_string(),
        "invalid UTF-8 at byte 19"
    );
}

#[test]
fn nesting_is_bounded() {
    let deep = |n: usize| format!("{{\"raw\": {}{}}}", "[".repeat(n), "]".repeat(n));
    // The object holding "raw" is the first level.
    assert!(decode(&deep(MAX_DEPTH as usize - 1)).is_ok());
    let err = decode(&deep(MAX_DEPTH as usize)).expect_err("too deep");
    assert!(err.ends_with("nested too deeply at byte 135"), "{err}");
    let err = decode(&deep(100_000)).expect_err("too deep");
    assert!(err.ends_with("nested too deeply at byte 135"), "{err}");
}

/// Text shaped like JSON, often almost valid.
fn json_like() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        Just("null".to_string()),
        Just("true".to_string()),
        Just("fals".to_string()),
        "-?(0|[1-9][0-9]{0,3})(\\.[0-9]{0,2})?([eE][-+]?[0-9]{0,2})?",
        "\"([a-z\\\\\"/ ]|\\\\u[0-9a-fA-F]{4}|\\\\[nrtbfx]|[\u{e9}\u{1f600}\t])*\"",
    ];
    leaf.prop_recursive(4, 32, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(|v| format!("[{}]", v.join(","))),
            prop::collection::vec(("\"[a-z]{0,2}\"", inner.clone()), 0..4).prop_map(|v| {
                let fields: Vec<String> = v.into_iter().map(|(k, v)| format!("{k}: {v}")).collect();
                format!("{{{}}}", fields.join(" ,"))
            }),
            (inner.clone(), "[ ,:\\]}]{0,1}").prop_map(|(v, junk)| format!("{v}{junk}")),
        ]
    })
}

proptest! {
    /// The reader accepts exactly the texts serde_json accepts, and a
    /// skipped value is the same text serde_json reads.
    #[test]
    fn accepts_what_serde_json_accepts(text in json_like()) {
        let ours = Reader::new(&text).raw().map(|raw| raw.len());
        let mut reader = Reader::new(&text);
        let whole = reader.skip().and_then(|()| reader.finish());
        let theirs = serde_json::from_str::<serde::de::IgnoredAny>(&text);
        prop_assert_eq!(whole.is_ok(), theirs.is_ok(), "{:?}: {:?} vs {:?}", text, whole, theirs);
        if whole.is_ok() {
            prop_assert_eq!(ours, Ok(text.trim_end().len()));
        }
    }

    /// Strings decode to what serde_json decodes.
    #[test]
    fn strings_decode_as_serde_json_does(text in "\"([a-z\\\\\" ]|\\\\u[0-9a-fA-F]{4}|\\\\[nrtbf/]|[\u{e9}\u{1f600}])*\"") {
        let ours = from_str::<String>(&text).ok();
        let theirs = serde_json::from_str::<String>(&text).ok();
        prop_assert_eq!(ours, theirs);
    }
}

proptest! {
    /// The word-at-a-time scan stops where a byte-at-a-time scan does.
    #[test]
    fn plain_runs_end_at_the_first_special_byte(
        chars in prop::collection::vec(prop_oneof![
            Just('"'),
            Just('\\'),
            (0u8..0x20).prop_map(char::from),
            (0x20u8..0x80).prop_map(char::from),
            Just('\u{e9}'),
            Just('\u{1f600}'),
        ], 0..40),
        skip in 0usize..40,
    ) {
        let text: String = chars.iter().collect();
        let from = chars.iter().take(skip).map(|c| c.len_utf8()).sum::<usize>();
        let want = from + text.as_bytes()[from..]
            .iter()
            .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
            .unwrap_or(text.len() - from);
        prop_assert_eq!(Reader::new(&text).plain_run(from), want);
    }
}
