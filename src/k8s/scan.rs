//! A byte scan of an IP list answer that finds, without decoding its items,
//! the few of them that can hold an address a request claims.
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
//! claimed address, no item is kept, and only the list's head is read;
//! where some are, only the items they are in are decoded. Anything
//! unexpected is left to the full decoding, which answers exactly.
//!
//! The same reasoning finds one object by name in a kind-wide list
//! ([`item_named`]): a name taken from a request is resolved against such a
//! list before any lookup narrowed to it (docs/lookups.md), and that list is
//! read on every such decision, so it is searched, not decoded.

use crate::upstream::kubeovn_util::parse_item;
use memchr::memmem;
use std::net::IpAddr;

/// The keys whose string values an IP object holds its addresses in.
const ADDRESS_KEYS: [&[u8]; 3] = [b"\"ipAddress", b"\"v4IpAddress", b"\"v6IpAddress"];

/// What an IP list answer holds for a request, found without decoding it.
#[derive(Debug, PartialEq, Eq)]
pub struct Holders<'a> {
    /// The list with its `items` emptied (`{..., "items": []}`), for the
    /// head's checks.
    pub head: Vec<u8>,
    /// The JSON text of each item that may hold one of the addresses, in
    /// list order: only these need decoding.
    pub items: Vec<&'a [u8]>,
}

/// The items of an IP list answer that may hold one of `addresses`
/// (sorted), and its head; `None` when the answer must be decoded in full
/// (it has an escape, or its shape is not the plain one the policy-server
/// writes: `items` last, each item starting `{"apiVersion":"kubeovn.io/v1",
/// "kind":"IP","metadata":{`).
pub fn holders<'a>(raw: &'a [u8], addresses: &[IpAddr]) -> Option<Holders<'a>> {
    let head = plain_head(raw)?;
    let claimed = Claimed::new(addresses);
    let mut items: Vec<&[u8]> = Vec::new();
    let mut item_end = 0;
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
        if at < item_end || !claimed.may_be_in(value) {
            continue;
        }
        let (start, len) = ip_item_around(raw, at)?;
        items.push(&raw[start..start + len]);
        item_end = start + len;
    }
    Some(Holders { head, items })
}

/// The list's head as `{<every key before items>,"items":[]}`, when the
/// answer is `{..., "items": [...]}` with `items` its last key, as the
/// policy-server writes a list (apiVersion, kind, metadata, items). The
/// items are not read, so neither is a second `items` key after them (the
/// policy-server writes none).
pub(crate) fn plain_head(raw: &[u8]) -> Option<Vec<u8>> {
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

/// The start and length of the IP item of a plain answer (no escapes)
/// that holds position `at`.
fn ip_item_around(raw: &[u8], at: usize) -> Option<(usize, usize)> {
    item_around(
        raw,
        at,
        br#"{"apiVersion":"kubeovn.io/v1","kind":"IP","metadata":{"#,
    )
}

/// The items of an IPPool list answer that may be reserved for some
/// namespaces (I19): those with a `"namespaces"` key whose value is not an
/// empty array, and the head; `None` when the answer must be decoded in full
/// (an escape anywhere, or not the plain shape: `items` last, each item
/// starting `{"apiVersion":"kubeovn.io/v1","kind":"IPPool","metadata":{`).
/// A pool whose `spec.namespaces` is absent or empty reserves nothing, so
/// only the others are decoded: in a cluster of 1 000 pools that reserve
/// nothing, none. A `"namespaces"` key found elsewhere in an item (an
/// annotation of that name) only makes that item decoded.
pub fn reserving_pools(raw: &[u8]) -> Option<Holders<'_>> {
    if memchr::memchr(b'\\', raw).is_some() {
        return None;
    }
    let head = plain_head(raw)?;
    let key = b"\"namespaces\"";
    let mut items: Vec<&[u8]> = Vec::new();
    let mut item_end = 0;
    for at in memmem::find_iter(raw, key) {
        if at < item_end {
            continue;
        }
        // A string "namespaces" that is not a key is followed by no colon.
        let Some(value) = skip_space(&raw[at + key.len()..]).strip_prefix(b":") else {
            continue;
        };
        let value = skip_space(value);
        if value
            .strip_prefix(b"[")
            .is_some_and(|rest| skip_space(rest).starts_with(b"]"))
        {
            continue;
        }
        let (start, len) = item_around(raw, at, POOL_ITEM_START)?;
        items.push(&raw[start..start + len]);
        item_end = start + len;
    }
    Some(Holders { head, items })
}

/// How the policy-server starts each item of an IPPool list.
const POOL_ITEM_START: &[u8] = br#"{"apiVersion":"kubeovn.io/v1","kind":"IPPool","metadata":{"#;

/// The start and length of the item of a plain answer (no escapes) that
/// starts with `start` and holds position `at`.
fn item_around(raw: &[u8], at: usize, start: &[u8]) -> Option<(usize, usize)> {
    let from = memchr::memrchr_iter(b'{', &raw[..at]).find(|&b| raw[b..].starts_with(start))?;
    let len = object_len(&raw[from..])?;
    (at < from + len).then_some((from, len))
}

/// The addresses a request claims, for the scan: each value is looked up,
/// never compared with every claimed address in turn, so a pool of 20 000
/// addresses against a list of 50 000 IP objects costs their sum, not
/// their product.
struct Claimed<'a> {
    /// Sorted, without repeats (as the checks pass them).
    addresses: &'a [IpAddr],
    /// The IPv4 ones as numbers, sorted.
    v4: Vec<u32>,
}

impl<'a> Claimed<'a> {
    fn new(addresses: &'a [IpAddr]) -> Self {
        let v4 = addresses
            .iter()
            .filter_map(|a| match a {
                IpAddr::V4(v4) => Some(u32::from(*v4)),
                IpAddr::V6(_) => None,
            })
            .collect();
        Claimed { addresses, v4 }
    }

    /// Whether `value` may hold one of the addresses as an IP object's
    /// address field holds them (`held_addresses`: comma-separated, each
    /// parsed by `parse_item`). An entry of digits and dots is read as Go
    /// reads an IPv4 address ([`dotted_v4`]); any other entry by
    /// `parse_item`. Either is then looked up.
    fn may_be_in(&self, value: &[u8]) -> bool {
        value.split(|&b| b == b',').any(|entry| {
            if !entry.is_empty() && entry.iter().all(|&b| b == b'.' || b.is_ascii_digit()) {
                dotted_v4(entry).is_some_and(|n| self.v4.binary_search(&n).is_ok())
            } else {
                // Not UTF-8: the decoder says so.
                std::str::from_utf8(entry).map_or(true, |entry| {
                    parse_item(entry).is_some_and(|a| self.addresses.binary_search(&a).is_ok())
                })
            }
        })
    }
}

/// An IPv4 address of digits and dots as Go's `netip.ParseAddr` reads it
/// (four decimal fields of at most 255, no leading zeros), as a number;
/// `None` where Go refuses it. Written out because it runs for each of the
/// tens of thousands of values an IP list holds.
fn dotted_v4(text: &[u8]) -> Option<u32> {
    let mut fields = text.split(|&b| b == b'.');
    let mut n = 0u32;
    for _ in 0..4 {
        let field = fields.next()?;
        if field.is_empty() || field.len() > 3 || (field.len() > 1 && field[0] == b'0') {
            return None;
        }
        let value = field.iter().try_fold(0u32, |v, &d| {
            d.is_ascii_digit().then(|| v * 10 + u32::from(d - b'0'))
        })?;
        if value > 255 {
            return None;
        }
        n = n << 8 | value;
    }
    fields.next().is_none().then_some(n)
}

/// Where an object of one name is in a kind-wide list answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Item<'a> {
    /// The object's own JSON text.
    Found(&'a [u8]),
    /// No object of the list has that name.
    Absent,
    /// The answer is not in the plain shape the scan reads (an escape, a
    /// `"name"` that is not a key followed by a string, an item that does
    /// not start as the policy-server writes one): decode it.
    Unknown,
}

/// The object named `name` in a `{Kind}List` answer of `api_version`
/// `kind`, found without decoding the list. A quote that no odd run of
/// backslashes precedes delimits a string, so `"name"` found so is the
/// string `name`, and where every such `"name"` is followed by `:"` (a key,
/// with a string value), an object's name is written `"name":"<name>"`
/// inside the `"metadata":{…}` that follows its `{"apiVersion":…,"kind":…,`:
/// an object of that name shows there, or does not exist. A name that
/// would need an escape (a quote, a backslash, a control character) is no
/// valid object name and is not looked for by the caller. A match elsewhere
/// (a label called `name`, an owner reference) is passed over. The work is
/// one search of the answer plus the bytes of the objects matched.
pub fn item_named<'a>(raw: &'a [u8], api_version: &str, kind: &str, name: &str) -> Item<'a> {
    if name.bytes().any(|b| b == b'"' || b == b'\\' || b < 0x20) {
        return Item::Unknown;
    }
    let start = format!(r#"{{"apiVersion":"{api_version}","kind":"{kind}","#);
    let key = b"\"name\"";
    for at in memmem::find_iter(raw, key) {
        if escaped(raw, at) {
            continue;
        }
        let Some(value) = raw[at + key.len()..].strip_prefix(b":\"") else {
            return Item::Unknown;
        };
        if !value.starts_with(name.as_bytes()) || value.get(name.len()) != Some(&b'"') {
            continue;
        }
        match item_of_name(raw, at, start.as_bytes()) {
            Ok(Some(item)) => return Item::Found(item),
            Ok(None) => {}
            Err(()) => return Item::Unknown,
        }
    }
    Item::Absent
}

/// Whether the quote at `at` is escaped: an odd run of backslashes before it.
fn escaped(raw: &[u8], at: usize) -> bool {
    raw[..at].iter().rev().take_while(|&&b| b == b'\\').count() % 2 == 1
}

/// The item whose metadata's own `"name"` key is at `at`: `Ok(None)` when
/// that key is nested deeper (a label, an owner reference), `Err` when the
/// item does not start as `start` (`{"apiVersion":…,"kind":…,`) right
/// before its `"metadata":{`.
fn item_of_name<'a>(raw: &'a [u8], at: usize, start: &[u8]) -> Result<Option<&'a [u8]>, ()> {
    let metadata = b"\"metadata\":{";
    let Some(m) = memchr::memrchr_iter(b'"', &raw[..at])
        .find(|&q| raw[q..at].starts_with(metadata) && !escaped(raw, q))
    else {
        return Err(());
    };
    if depth_after(&raw[m + metadata.len()..at]) != Some(0) {
        return Ok(None);
    }
    if !raw[..m].ends_with(start) {
        return Err(());
    }
    let from = m - start.len();
    let len = object_len(&raw[from..]).ok_or(())?;
    Ok(Some(&raw[from..from + len]))
}

/// The nesting depth at the end of `bytes`, which starts outside any
/// string; `None` when it closes more than it opens, or ends inside a
/// string.
fn depth_after(bytes: &[u8]) -> Option<usize> {
    let mut depth = 0usize;
    let mut string = Strings::default();
    for &b in bytes {
        if string.inside(b) {
            continue;
        }
        match b {
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.checked_sub(1)?,
            _ => {}
        }
    }
    (!string.open).then_some(depth)
}

/// Where a forward walk over JSON text is: inside a string or not, and
/// whether the last byte was an escape's backslash.
#[derive(Default)]
struct Strings {
    open: bool,
    escape: bool,
}

impl Strings {
    /// Takes the next byte; whether it is part of a string (its quotes
    /// included).
    fn inside(&mut self, b: u8) -> bool {
        if self.open {
            if self.escape {
                self.escape = false;
            } else if b == b'\\' {
                self.escape = true;
            } else if b == b'"' {
                self.open = false;
            }
            true
        } else if b == b'"' {
            self.open = true;
            true
        } else {
            false
        }
    }
}

/// The length of the object that `bytes` starts with (`{` … its `}`);
/// `None` when it does not close.
fn object_len(bytes: &[u8]) -> Option<usize> {
    let mut depth = 0usize;
    let mut string = Strings::default();
    for (i, &b) in bytes.iter().enumerate() {
        if string.inside(b) {
            continue;
        }
        match b {
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
    }
    None
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A SubnetList as the policy-server writes it (compact, keys in its
    /// order), with these items' metadata.
    fn list(metadata: &[&str]) -> String {
        let items: Vec<String> = metadata
            .iter()
            .map(|m| format!(r#"{{"apiVersion":"kubeovn.io/v1","kind":"Subnet","metadata":{m}}}"#))
            .collect();
        format!(
            r#"{{"apiVersion":"kubeovn.io/v1","kind":"SubnetList","metadata":{{}},"items":[{}]}}"#,
            items.join(",")
        )
    }

    fn find(raw: &str, name: &str) -> Item<'static> {
        let raw: &'static str = Box::leak(raw.to_string().into_boxed_str());
        item_named(raw.as_bytes(), "kubeovn.io/v1", "Subnet", name)
    }

    fn found(raw: &str, name: &str) -> Option<String> {
        match find(raw, name) {
            Item::Found(item) => Some(String::from_utf8(item.to_vec()).expect("utf-8")),
            other => panic!("{name}: {other:?}"),
        }
    }

    /// An IPPoolList as the policy-server writes it, with these items' specs.
    fn pools(specs: &[&str]) -> String {
        let items: Vec<String> = specs
            .iter()
            .enumerate()
            .map(|(i, spec)| {
                format!(
                    r#"{{"apiVersion":"kubeovn.io/v1","kind":"IPPool","metadata":{{"annotations":{{}},"name":"p{i}"}},"spec":{spec}}}"#
                )
            })
            .collect();
        format!(
            r#"{{"apiVersion":"kubeovn.io/v1","kind":"IPPoolList","metadata":{{"resourceVersion":""}},"items":[{}]}}"#,
            items.join(",")
        )
    }

    #[test]
    fn only_pools_that_may_reserve_are_kept() {
        let raw = pools(&[
            r#"{"ips":["10.0.0.1"],"subnet":"s"}"#,
            r#"{"ips":["10.0.0.2"],"namespaces":[],"subnet":"s"}"#,
            r#"{"ips":["10.0.0.3"],"namespaces":["a","b"],"subnet":"s"}"#,
            r#"{"ips":["10.0.0.4"],"namespaces":null,"subnet":"s"}"#,
            r#"{"ips":["10.0.0.5"],"namespaces": [ ],"subnet":"s"}"#,
        ]);
        let found = reserving_pools(raw.as_bytes()).expect("the plain shape");
        let kept: Vec<String> = found
            .items
            .iter()
            .map(|i| String::from_utf8(i.to_vec()).expect("utf-8"))
            .collect();
        // The reserved pool, and the null the decoder reads (as empty).
        assert_eq!(kept.len(), 2, "{kept:#?}");
        assert!(kept[0].contains(r#""name":"p2""#) && kept[0].ends_with("}}"));
        assert!(kept[1].contains(r#""name":"p3""#));
        assert_eq!(
            found.head,
            br#"{"apiVersion":"kubeovn.io/v1","kind":"IPPoolList","metadata":{"resourceVersion":""},"items":[]}"#
        );
        // A "namespaces" annotation only makes its item decoded; a string
        // "namespaces" that is no key, nothing.
        let raw = raw.replace(
            r#""metadata":{"annotations":{},"name":"p0"}"#,
            r#""metadata":{"annotations":{"namespaces":"x","y":"namespaces"},"name":"p0"}"#,
        );
        let found = reserving_pools(raw.as_bytes()).expect("the plain shape");
        assert_eq!(found.items.len(), 3);
        // An escape anywhere, or an item the scan does not recognise: the
        // whole list is decoded.
        assert_eq!(
            reserving_pools(raw.replace("\"x\"", r#""\u0078""#).as_bytes()),
            None
        );
        assert_eq!(
            reserving_pools(
                raw.replace(r#""kind":"IPPool","#, r#""kind":"IPPool" ,"#)
                    .as_bytes()
            ),
            None
        );
        // No pool reserves anything: nothing to decode.
        let none = pools(&[r#"{"ips":["10.0.0.1"],"subnet":"s"}"#; 3]);
        assert_eq!(
            reserving_pools(none.as_bytes()).map(|f| f.items.len()),
            Some(0)
        );
    }

    #[test]
    fn an_object_is_found_by_its_own_name_only() {
        let raw = list(&[
            r#"{"finalizers":["x"],"labels":{"name":"ghost"},"name":"a","ownerReferences":[{"apiVersion":"v1","kind":"X","name":"owner"}],"uid":"1"}"#,
            r#"{"annotations":{"k":"{[\"name\"]}"},"name":"b"}"#
                .replace(r#"\""#, "'")
                .as_str(),
            r#"{"creationTimestamp":"2026-12-05T09:00:00Z","name":"c"}"#,
        ]);
        assert_eq!(
            found(&raw, "a").as_deref(),
            Some(
                r#"{"apiVersion":"kubeovn.io/v1","kind":"Subnet","metadata":{"finalizers":["x"],"labels":{"name":"ghost"},"name":"a","ownerReferences":[{"apiVersion":"v1","kind":"X","name":"owner"}],"uid":"1"}}"#
            )
        );
        assert!(found(&raw, "b").is_some_and(|b| b.ends_with(r#""name":"b"}}"#)));
        assert!(found(&raw, "c").is_some());
        // A label called `name`, an owner reference, a prefix of a name, or
        // a name no object has.
        for name in ["ghost", "owner", "", "c-", "d", "Subnet"] {
            assert_eq!(find(&raw, name), Item::Absent, "{name}");
        }
        // A name that would need an escape is left to the decoder (the
        // caller looks for none: it is no valid object name).
        assert_eq!(find(&raw, "a\"b"), Item::Unknown);
        assert_eq!(find(&raw, "a\u{1}"), Item::Unknown);
    }

    #[test]
    fn escapes_elsewhere_do_not_hide_a_name() {
        // JSON in an annotation, a value ending in a backslash, a key that
        // ends in an escaped `"name` and one that is the text `"name":"ab"`.
        let raw = list(&[
            r#"{"annotations":{"cattle.io/status":"{\"name\":\"ab\",\"x\":[\"}\"]}","k":"c:\\"},"name":"ab"}"#,
            r#"{"annotations":{"\"name":"ab"},"name":"cd"}"#,
            r#"{"annotations":{"\"name\":\"ef\"":"x"},"name":"gh"}"#,
        ]);
        assert!(
            found(&raw, "ab")
                .is_some_and(|a| a.ends_with(r#""name":"ab"}}"#) && a.contains("cattle.io"))
        );
        assert!(found(&raw, "cd").is_some_and(|c| c.ends_with(r#""name":"cd"}}"#)));
        assert!(found(&raw, "gh").is_some());
        assert_eq!(find(&raw, "ef"), Item::Absent);
        // Every item found is one JSON object, escapes and all.
        for name in ["ab", "cd", "gh"] {
            let item = found(&raw, name).expect("found");
            assert!(
                serde_json::from_str::<serde_json::Value>(&item).is_ok(),
                "{item}"
            );
        }
    }

    proptest::proptest! {
        /// What the scan finds is what decoding the list finds: the object of
        /// that name, or none; it may only give up (`Unknown`).
        #[test]
        fn found_as_decoded(
            items in proptest::collection::vec(
                (0..4usize, proptest::collection::vec((0..6usize, 0..6usize), 0..3), proptest::bool::ANY),
                0..5),
            asked in 0..4usize,
        ) {
            const NAMES: [&str; 4] = ["a", "ab", "name", "b-c.d"];
            const TEXTS: [&str; 6] = ["name", "a", "\\\"name\\\":\\\"a\\\"", "x\\\\", "{[", "ab"];
            let metadata: Vec<String> = items
                .iter()
                .map(|(n, pairs, owner)| {
                    let labels: Vec<String> = pairs
                        .iter()
                        .map(|&(k, v)| format!(r#""{}":"{}""#, TEXTS[k], TEXTS[v]))
                        .collect();
                    let owner = if *owner {
                        format!(r#","ownerReferences":[{{"kind":"X","name":"{}"}}]"#, NAMES[(n + 1) % 4])
                    } else {
                        String::new()
                    };
                    format!(r#"{{"labels":{{{}}},"name":"{}"{owner}}}"#, labels.join(","), NAMES[*n])
                })
                .collect();
            let metadata: Vec<&str> = metadata.iter().map(String::as_str).collect();
            let raw = list(&metadata);
            let decoded: serde_json::Value = serde_json::from_str(&raw).expect("valid JSON");
            let want = decoded["items"]
                .as_array()
                .expect("items")
                .iter()
                .find(|item| item["metadata"]["name"] == NAMES[asked])
                .cloned();
            match item_named(raw.as_bytes(), "kubeovn.io/v1", "Subnet", NAMES[asked]) {
                Item::Found(item) => {
                    let got: serde_json::Value = serde_json::from_slice(item).expect("an object");
                    proptest::prop_assert_eq!(Some(got), want);
                }
                Item::Absent => proptest::prop_assert_eq!(None, want),
                Item::Unknown => {}
            }
        }
    }

    #[test]
    fn an_answer_the_scan_cannot_read_is_left_to_the_decoder() {
        for raw in [
            // Whitespace after a key's colon, and `"name"` as a value.
            list(&[r#"{"name": "ab"}"#]),
            list(&[r#"{"labels":{"k":"name"},"name":"x"}"#]),
            // An item that does not start as the policy-server writes one.
            list(&[r#"{"name":"ab"}"#]).replace(
                r#"{"apiVersion":"kubeovn.io/v1","kind":"Subnet","metadata""#,
                r#"{"metadata""#,
            ),
        ] {
            assert_eq!(find(&raw, "ab"), Item::Unknown, "{raw}");
        }
    }

    proptest::proptest! {
        /// Dotted IPv4 addresses are read as Go's parser reads them.
        #[test]
        fn dotted_v4_reads_as_go(text in "[0-9.]{0,16}") {
            let go = crate::upstream::go_net::parse_ip(&text).map(|a| match a {
                IpAddr::V4(v4) => u32::from(v4),
                IpAddr::V6(_) => unreachable!("digits and dots are never IPv6"),
            });
            proptest::prop_assert_eq!(dotted_v4(text.as_bytes()), go, "{}", text);
        }
    }

    #[test]
    fn dotted_v4_reads_the_edges_as_go() {
        for text in [
            "0.0.0.0",
            "255.255.255.255",
            "256.0.0.1",
            "01.2.3.4",
            "1.2.3",
            "1.2.3.4.5",
            "1..2.3",
            "1.2.3.4.",
            "0.00.1.2",
            "1234.1.1.1",
        ] {
            let go = crate::upstream::go_net::parse_ip(text).map(|a| match a {
                IpAddr::V4(v4) => u32::from(v4),
                IpAddr::V6(_) => unreachable!(),
            });
            assert_eq!(dotted_v4(text.as_bytes()), go, "{text}");
        }
    }

    #[test]
    fn holders_are_the_items_that_may_hold_an_address() {
        let item = |name: &str, address: &str| {
            format!(
                r#"{{"apiVersion":"kubeovn.io/v1","kind":"IP","metadata":{{"name":"{name}"}},"spec":{{"ipAddress":"{address}","v4IpAddress":"{address}"}}}}"#
            )
        };
        let raw = format!(
            r#"{{"apiVersion":"kubeovn.io/v1","kind":"IPList","metadata":{{}},"items":[{},{},{}]}}"#,
            item("a", "10.0.0.1"),
            item("b", "10.0.0.2"),
            item("c", "10.0.0.3")
        );
        let addresses: Vec<IpAddr> = vec!["10.0.0.2".parse().unwrap(), "10.0.0.3".parse().unwrap()];
        let found = holders(raw.as_bytes(), &addresses).expect("a plain answer");
        assert_eq!(
            found.head,
            br#"{"apiVersion":"kubeovn.io/v1","kind":"IPList","metadata":{},"items":[]}"#.to_vec()
        );
        let items: Vec<&str> = found
            .items
            .iter()
            .map(|i| std::str::from_utf8(i).unwrap())
            .collect();
        assert_eq!(items, vec![item("b", "10.0.0.2"), item("c", "10.0.0.3")]);
        // An item not written as the policy-server writes one: decode it all.
        let bare = raw.replace(
            r#"{"apiVersion":"kubeovn.io/v1","kind":"IP","metadata":{"name":"c""#,
            r#"{"metadata":{"name":"c""#,
        );
        assert_eq!(holders(bare.as_bytes(), &addresses), None);
    }

    #[test]
    fn claimed_addresses_are_looked_up_not_compared_one_by_one() {
        // Read as the request's are (an IPv4-mapped address is its IPv4 one).
        let mut addresses: Vec<IpAddr> = ["10.0.0.5", "10.0.0.50", "fd00::5", "::ffff:10.0.0.7"]
            .iter()
            .map(|a| parse_item(a).expect("address"))
            .collect();
        addresses.sort_unstable();
        let claimed = Claimed::new(&addresses);
        for (value, may) in [
            ("10.0.0.5", true),
            ("10.0.0.50", true),
            ("10.0.0.500", false),
            ("110.0.0.5", false),
            ("10.0.0.05", false),
            ("10.0.0.5/24", true),
            (" 10.0.0.5", true),
            ("10.0.0.6,fd00::5", true),
            ("FD00:0::5", true),
            ("fd00::6", false),
            ("::ffff:10.0.0.7", true),
            ("10.0.0.7", true),
            ("", false),
            ("x", false),
        ] {
            assert_eq!(claimed.may_be_in(value.as_bytes()), may, "{value}");
        }
    }
}
