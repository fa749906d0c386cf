//! Reading the host's answers: a `{Kind}List`'s envelope and items (one
//! by one, keeping only what a lookup needs), the IP objects that may hold
//! an address (`scan`), an object by name in a kind-wide list, the NAT
//! objects read by their labels, and the host's error texts.

use crate::k8s::cluster::view::{Lookup, LookupError};
use crate::k8s::decode;
use crate::k8s::kinds::{self, ApiResource};
use crate::k8s::objects::{Ip, IpPool, IpRef, IptablesRuleSpec, MetaRef};
use crate::k8s::scan;
use crate::upstream::go_strconv::go_quote;
use serde::Deserialize;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::marker::PhantomData;
use std::net::IpAddr;

/// The `apiVersion` and `kind` of an answer, which must be the ones asked
/// for: an answer of another kind is the host's error, and reading it as an
/// object of the kind asked for could admit what the cluster forbids.
#[derive(Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(super) struct TypeHead<'a> {
    #[serde(borrow)]
    api_version: Option<Cow<'a, str>>,
    #[serde(borrow)]
    kind: Option<Cow<'a, str>>,
}

impl TypeHead<'_> {
    /// `required`: whether an absent field is an error (a list's envelope is
    /// always typed by the host; a single object may come without its type).
    pub(super) fn check(
        &self,
        api_version: &str,
        kind: &str,
        required: bool,
    ) -> Result<(), String> {
        for (field, got, want) in [
            ("kind", &self.kind, kind),
            ("apiVersion", &self.api_version, api_version),
        ] {
            match got.as_deref() {
                Some(got) if got == want => {}
                Some(got) => {
                    return Err(format!(
                        "invalid value: string {}, expected {want}",
                        go_quote(got)
                    ));
                }
                None if required => {
                    return Err(format!("missing field `{field}`, expected {want}"));
                }
                None => {}
            }
        }
        Ok(())
    }
}

/// Decodes a `{Kind}List` answer of `kind`: its kind is checked, its items
/// decoded as `I` (the kind's own type, or a lighter borrowed view of it).
/// `items` is required: an answer without it is not a list, and reading it
/// as an empty one would admit what the cluster forbids.
pub(super) fn decode_list<'a, I>(kind: &ApiResource, raw: &'a [u8]) -> Result<Vec<I>, LookupError>
where
    I: Deserialize<'a>,
{
    decode_list_kept(kind, raw, Some)
}

/// [`decode_list`], keeping of each item only what `keep` returns: the
/// items are read one by one and never held together, so a list of
/// thousands allocates for the few it keeps.
pub(super) fn decode_list_kept<'a, I, O>(
    kind: &ApiResource,
    raw: &'a [u8],
    keep: impl FnMut(I) -> Option<O>,
) -> Result<Vec<O>, LookupError>
where
    I: Deserialize<'a>,
{
    let fail = |why: String| {
        LookupError::list(
            kind,
            format!("error deserializing list all resources response: {why}"),
        )
    };
    if decode::is_null(raw) {
        return Err(fail("expected a list, found null".to_string()));
    }
    let seed = ListSeed {
        keep,
        item: PhantomData,
    };
    let (head, items) = decode::from_slice_seed(raw, seed).map_err(|e| fail(e.to_string()))?;
    head.check(kind.api_version, &format!("{}List", kind.kind), true)
        .map_err(fail)?;
    items.ok_or_else(|| fail("missing field `items`".to_string()))
}

/// Reads a `{Kind}List` answer: its type, and what `keep` keeps of each of
/// its items (`None` when it has no `items`). Other keys are skipped; a
/// repeated one is refused, as serde's derived readers refuse it.
struct ListSeed<F, I> {
    keep: F,
    item: PhantomData<fn() -> I>,
}

type ListRead<'a, O> = (TypeHead<'a>, Option<Vec<O>>);

impl<'de, I, O, F> DeserializeSeed<'de> for ListSeed<F, I>
where
    I: Deserialize<'de>,
    F: FnMut(I) -> Option<O>,
{
    type Value = ListRead<'de, O>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_struct("List", &["apiVersion", "kind", "items"], self)
    }
}

impl<'de, I, O, F> Visitor<'de> for ListSeed<F, I>
where
    I: Deserialize<'de>,
    F: FnMut(I) -> Option<O>,
{
    type Value = ListRead<'de, O>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("struct List")
    }

    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut head = TypeHead::default();
        let mut items = None;
        let (mut saw_api_version, mut saw_kind) = (false, false);
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            let (field, seen) = match key.as_ref() {
                "apiVersion" => ("apiVersion", &mut saw_api_version),
                "kind" => ("kind", &mut saw_kind),
                "items" => {
                    if items.is_some() {
                        return Err(de::Error::duplicate_field("items"));
                    }
                    items = Some(map.next_value_seed(ItemsSeed {
                        keep: &mut self.keep,
                        item: PhantomData,
                    })?);
                    continue;
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
            };
            if std::mem::replace(seen, true) {
                return Err(de::Error::duplicate_field(field));
            }
            let value = map.next_value::<Option<Cow<'de, str>>>()?;
            match field {
                "kind" => head.kind = value,
                _ => head.api_version = value,
            }
        }
        Ok((head, items.flatten()))
    }
}

/// A list's `items`, `null` read as absent, each item passed to `keep`.
struct ItemsSeed<'k, F, I> {
    keep: &'k mut F,
    item: PhantomData<fn() -> I>,
}

impl<'de, I, O, F> DeserializeSeed<'de> for ItemsSeed<'_, F, I>
where
    I: Deserialize<'de>,
    F: FnMut(I) -> Option<O>,
{
    type Value = Option<Vec<O>>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_option(self)
    }
}

impl<'de, I, O, F> Visitor<'de> for ItemsSeed<'_, F, I>
where
    I: Deserialize<'de>,
    F: FnMut(I) -> Option<O>,
{
    type Value = Option<Vec<O>>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a sequence")
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_seq(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut kept = Vec::new();
        while let Some(item) = seq.next_element::<I>()? {
            kept.extend((self.keep)(item));
        }
        Ok(Some(kept))
    }
}

/// The IP CRs of `subnet` holding one of `addresses` (sorted) in a raw IP
/// list answer, read with borrowed strings; only those kept are copied.
pub(super) fn ips_of_subnet(
    raw: &[u8],
    subnet: &str,
    addresses: &[IpAddr],
    into: &mut Vec<Ip>,
) -> Result<(), LookupError> {
    ips_where(raw, addresses, |ip| ip.spec.subnet.as_ref() == subnet, into)
}

/// The IP CRs `wanted` keeps that hold one of `addresses` (sorted) in a raw
/// IP list answer, read with borrowed strings; only those kept are copied.
fn ips_where(
    raw: &[u8],
    addresses: &[IpAddr],
    wanted: impl Fn(&IpRef<'_>) -> bool,
    into: &mut Vec<Ip>,
) -> Result<(), LookupError> {
    let keep = |ip: IpRef<'_>| (wanted(&ip) && ip.holds_any(addresses)).then(|| ip.to_owned());
    // Most lists hold none of the addresses, and the others one or two:
    // only the items that may hold one are read.
    if let Some(found) = scan::holders(raw, addresses)
        && decode_list_kept(&kinds::IP, &found.head, |_: IgnoredAny| None::<Ip>).is_ok()
    {
        let kept: Result<Vec<Ip>, _> = found
            .items
            .iter()
            .filter_map(|item| decode::from_slice::<IpRef<'_>>(item).map(keep).transpose())
            .collect();
        // An item that does not decode: the whole list's decoding names it.
        if let Ok(kept) = kept {
            into.extend(kept);
            return Ok(());
        }
    }
    into.extend(decode_list_kept(&kinds::IP, raw, keep)?);
    Ok(())
}

/// The IPPools of a raw IPPool list answer whose `spec.namespaces` is not
/// empty (I19: the only ones that reserve addresses). Where the answer has
/// the plain shape the policy-server writes, only the items that may have
/// such a list are decoded (`scan::reserving_pools`); otherwise every item,
/// as [`decode_list`] reads them.
pub(super) fn reserving_pools(raw: &[u8]) -> Lookup<Vec<IpPool>> {
    let kind = &kinds::IPPOOL;
    let reserves = |pool: IpPool| (!pool.spec.namespaces.is_empty()).then_some(pool);
    if let Some(found) = scan::reserving_pools(raw)
        && decode_list_kept(kind, &found.head, |_: IgnoredAny| None::<()>).is_ok()
    {
        let kept: Result<Vec<IpPool>, _> = found
            .items
            .iter()
            .filter_map(|item| decode::from_slice::<IpPool>(item).map(reserves).transpose())
            .collect();
        // An item that does not decode: the whole list's decoding names it.
        if let Ok(kept) = kept {
            return Ok(kept);
        }
    }
    decode_list_kept(kind, raw, reserves)
}

/// The JSON text of the object named `name` in a `{Kind}List` answer of
/// `kind`: searched for without decoding the list where it has the plain
/// shape the policy-server writes (`scan::item_named`), else found by
/// decoding every item's name. The list's head is checked either way.
pub(super) fn find_named<'r>(
    kind: &ApiResource,
    raw: &'r [u8],
    name: &str,
) -> Lookup<Option<&'r [u8]>> {
    let head_ok = scan::plain_head(raw)
        .is_some_and(|head| decode_list_kept(kind, &head, |_: IgnoredAny| None::<()>).is_ok());
    if head_ok {
        match scan::item_named(raw, kind.api_version, kind.kind, name) {
            scan::Item::Absent => return Ok(None),
            scan::Item::Found(item) => return Ok(Some(item)),
            scan::Item::Unknown => {}
        }
    }
    let mut error = None;
    let found = decode_list_kept(
        kind,
        raw,
        |item: decode::Raw<'r>| match decode::from_slice::<NameRef<'_>>(item.get().as_bytes()) {
            Ok(named) => (named.metadata.name == name).then_some(item),
            Err(e) => {
                error.get_or_insert(e);
                None
            }
        },
    )?;
    match (found.first(), error) {
        (Some(item), _) => Ok(Some(item.get().as_bytes())),
        (None, Some(e)) => Err(LookupError::list(
            kind,
            format!("error deserializing list all resources response: {e}"),
        )),
        (None, None) => Ok(None),
    }
}

/// The names of every object in a list answer of `kind`, read once: a
/// request's names are then resolved against it at no cost per name.
pub(super) fn names(kind: &ApiResource, raw: &[u8]) -> Lookup<HashSet<String>> {
    decode_list_kept(kind, raw, |item: NameRef<'_>| {
        Some(item.metadata.name.into_owned())
    })
    .map(|names| names.into_iter().collect())
}

/// The IP CRs holding one of `addresses` (sorted) in a raw IP list answer,
/// by `spec.subnet`: read once however many subnets are then asked about.
pub(super) fn holders_by_subnet(
    raw: &[u8],
    addresses: &[IpAddr],
) -> Lookup<HashMap<String, Vec<Ip>>> {
    let mut held = Vec::new();
    ips_where(raw, addresses, |_| true, &mut held)?;
    let mut by_subnet: HashMap<String, Vec<Ip>> = HashMap::new();
    for ip in held {
        by_subnet
            .entry(ip.spec.subnet.clone())
            .or_default()
            .push(ip);
    }
    Ok(by_subnet)
}

/// Any object, by its name alone, borrowed from the answer.
#[derive(Default, Deserialize)]
#[serde(default)]
struct NameRef<'a> {
    #[serde(borrow)]
    metadata: MetaRef<'a>,
}

/// A NAT object as a kind-wide list holds it: its name, its labels (what
/// the checks select it by), and the spec fields the masks keep.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct LabelledRule {
    pub(super) metadata: LabelledMeta,
    pub(super) spec: IptablesRuleSpec,
}

/// A NAT object's name and labels.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct LabelledMeta {
    pub(super) name: String,
    labels: BTreeMap<String, String>,
}

impl LabelledRule {
    /// Whether it carries every one of these labels with that value, as the
    /// API server's equality selector `k1=v1,k2=v2` matches it.
    pub(super) fn carries(&self, labels: &[(&str, &str)]) -> bool {
        labels
            .iter()
            .all(|(key, value)| self.metadata.labels.get(*key).map(String::as_str) == Some(*value))
    }
}

/// Whether a failed `get_resource` means the object does not exist.
///
/// policy-evaluator reads the object with kube-rs' `Api::get_opt`, which
/// turns the API server's 404 into `None`, and then fails the call with
/// `Cannot find <apiVersion>/<Kind> named '<name>' inside of namespace
/// '<namespace as Rust's Debug of Option<&str>>'` (`client.rs`,
/// `Client::get_resource`, Kubewarden 1.36). The host call carries no
/// structured error, so that text, for exactly the object asked for, is the
/// only signal; any other failure (403, a missing CRD, a timeout) stays a
/// failed lookup.
pub(super) fn is_not_found(
    text: &str,
    kind: &ApiResource,
    name: &str,
    namespace: Option<&str>,
) -> bool {
    let missing = format!(
        "Cannot find {}/{} named '{name}' inside of namespace '{namespace:?}'",
        kind.api_version, kind.kind
    );
    host_error_summary(text).ends_with(&missing)
}

/// A host error as a rejection message shows it: its first line (with
/// `RUST_BACKTRACE` set, the policy-server appends a backtrace), without the
/// debug dump of the API server's Status that kube-rs appends to an API
/// error (`… at the cluster scope: Forbidden (Status { status: … })`).
pub(super) fn host_error_summary(text: &str) -> &str {
    let line = text.lines().next().unwrap_or("").trim_end();
    [" (Status { ", " (ErrorResponse { "]
        .iter()
        .filter_map(|dump| line.find(dump))
        .min()
        .map_or(line, |end| &line[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An IP list answer with these items.
    fn ip_list(items: &str) -> String {
        format!(
            r#"{{"apiVersion":"kubeovn.io/v1","kind":"IPList","metadata":{{"resourceVersion":"7"}},"items":{items}}}"#
        )
    }

    fn ip_item(name: &str, subnet: &str, v4: &str) -> String {
        format!(
            r#"{{"apiVersion":"kubeovn.io/v1","kind":"IP","metadata":{{"name":"{name}","labels":{{"x":"y"}}}},"spec":{{"subnet":"{subnet}","v4IpAddress":"{v4}","ipAddress":"{v4}","namespace":"ns","podName":"{name}"}}}}"#
        )
    }

    fn kept(raw: &str, subnet: &str, addresses: &[&str]) -> Result<Vec<String>, String> {
        let addresses: Vec<IpAddr> = addresses.iter().map(|a| a.parse().unwrap()).collect();
        let addresses = crate::k8s::cluster::AddressSet::new(addresses);
        let mut found = Vec::new();
        ips_of_subnet(raw.as_bytes(), subnet, addresses.as_slice(), &mut found)
            .map_err(|e| e.to_string())?;
        Ok(found.into_iter().map(|ip| ip.metadata.name).collect())
    }

    #[test]
    fn only_the_ip_objects_of_the_subnet_holding_an_address_asked_for_are_kept() {
        let raw = ip_list(&format!(
            "[{},{},{},{}]",
            ip_item("a", "net1", "10.0.0.1"),
            ip_item("b", "net1", "10.0.0.2"),
            ip_item("c", "net2", "10.0.0.2"),
            ip_item("d", "net1", "not-an-ip"),
        ));
        assert_eq!(kept(&raw, "net1", &["10.0.0.2"]), Ok(vec!["b".to_string()]));
        assert_eq!(
            kept(&raw, "net1", &["10.0.0.1", "10.0.0.2"]),
            Ok(vec!["a".to_string(), "b".to_string()])
        );
        assert_eq!(kept(&raw, "net1", &["10.0.0.9"]), Ok(vec![]));
        assert_eq!(kept(&raw, "net1", &[]), Ok(vec![]));
        // Held through the combined field, written as a CIDR (I1 by value).
        let cidr =
            ip_item("e", "net1", "").replace(r#""ipAddress":"""#, r#""ipAddress":"10.0.0.3/24""#);
        assert_eq!(
            kept(&ip_list(&format!("[{cidr}]")), "net1", &["10.0.0.3"]),
            Ok(vec!["e".to_string()])
        );
    }

    #[test]
    fn a_list_answer_that_is_not_a_list_is_refused_whatever_it_holds() {
        let why = |raw: &str| kept(raw, "net1", &["10.0.0.1"]).expect_err(raw);
        let prefix =
            "cannot list kubeovn.io/v1 IP: error deserializing list all resources response: ";
        for (raw, message) in [
            (ip_list("null"), "missing field `items`"),
            (
                r#"{"apiVersion":"kubeovn.io/v1","kind":"IPList"}"#.to_string(),
                "missing field `items`",
            ),
            ("null".to_string(), "expected a list, found null"),
            (
                ip_list("[]").replace("IPList", "SubnetList"),
                "invalid value: string \"SubnetList\", expected IPList",
            ),
            (
                r#"{"apiVersion":"kubeovn.io/v1","items":[]}"#.to_string(),
                "missing field `kind`, expected IPList",
            ),
            // Where the items are read (one may hold the address).
            (
                ip_list(r#"[{"spec":{"ipAddress":"10.0.0.1"}}],"items":[]"#),
                "items: duplicate field `items` at line 1 column 132",
            ),
            (
                ip_list("[]").replace(r#""kind":"IPList""#, r#""kind":"IPList","kind":"IPList""#),
                "kind: duplicate field `kind` at line 1 column 52",
            ),
            (
                ip_list("5"),
                "items: invalid type: integer `5`, expected a sequence at line 1 column 90",
            ),
            // An item that may hold the address is read in full.
            (
                ip_list(r#"[{"spec":{"subnet":7,"ipAddress":"10.0.0.1"}}]"#),
                "items[0].spec.subnet: invalid type: integer `7`, expected a string at line 1 column 109",
            ),
            (
                ip_list(r#"[{"spec":{"ipAddress":7}}]"#),
                "items[0].spec.ipAddress: invalid type: integer `7`, expected a string at line 1 column 112",
            ),
            (
                ip_list(r#"[{"spec":{"ipAddress":"10.0.0.1"}}"#),
                "expected `,` or `]` at line 1 column 124",
            ),
        ] {
            assert_eq!(why(&raw), format!("{prefix}{message}"), "{raw}");
        }
    }

    #[test]
    fn items_that_cannot_hold_an_address_asked_for_are_not_read() {
        // No key an IP holds an address in carries one asked for: the items
        // are not decoded, so what else they hold is not judged.
        let raw = ip_list(&format!(
            r#"[{},{{"spec":{{"subnet":7,"v4IpAddress":"10.0.0.8"}}}}]"#,
            ip_item("a", "net1", "10.0.0.1")
        ));
        assert_eq!(kept(&raw, "net1", &["10.0.0.2"]), Ok(vec![]));
        assert!(kept(&raw, "net1", &["10.0.0.8"]).is_err());
    }

    mod scanned_as_decoded {
        use super::*;
        use proptest::prelude::*;

        /// Address texts an IP object may carry, in many forms of a few addresses.
        const TEXTS: [&str; 14] = [
            "10.0.0.5",
            "10.0.0.50",
            "110.0.0.5",
            "10.0.0.5/24",
            " 10.0.0.5",
            "10.0.0.05",
            "::ffff:10.0.0.5",
            "::ffff:a00:5",
            "fd00::5",
            "FD00:0::5",
            "fd00::5/64",
            "10.0.0.5,fd00::5",
            "",
            "not-an-ip",
        ];

        /// An item, as the policy-server writes one or (`bare`) not: only
        /// the former's items are read one by one.
        fn item(subnet: &str, key: &str, text: &str, bare: bool) -> String {
            let start = if bare {
                ""
            } else {
                r#""apiVersion":"kubeovn.io/v1","kind":"IP","#
            };
            format!(
                r#"{{{start}"metadata":{{"name":"{text}","labels":{{"k":"{{"}}}},"spec":{{"subnet":"{subnet}","{key}":"{text}"}}}}"#
            )
        }

        proptest! {
            /// The scan never changes what is kept: every list gives what
            /// decoding all of its items gives.
            #[test]
            fn whatever_the_list(
                items in proptest::collection::vec(
                    (0..2usize, 0..3usize, 0..TEXTS.len(), proptest::bool::weighted(0.2)), 0..6),
                asked in proptest::collection::vec(0..4usize, 0..3),
            ) {
                let keys = ["ipAddress", "v4IpAddress", "v6IpAddress"];
                let raw = ip_list(&format!("[{}]", items.iter()
                    .map(|&(s, k, t, bare)| item(["net1", "net2"][s], keys[k], TEXTS[t], bare))
                    .collect::<Vec<_>>().join(",")));
                let addresses: Vec<IpAddr> = asked.iter()
                    .map(|&a| ["10.0.0.5", "fd00::5", "10.0.0.50", "::ffff:10.0.0.5"][a].parse().unwrap())
                    .collect();
                let addresses = crate::k8s::cluster::AddressSet::new(addresses);
                let mut scanned = Vec::new();
                ips_of_subnet(raw.as_bytes(), "net1", addresses.as_slice(), &mut scanned).unwrap();
                let decoded = decode_list_kept(&kinds::IP, raw.as_bytes(), |ip: IpRef<'_>| {
                    (ip.spec.subnet.as_ref() == "net1" && ip.holds_any(addresses.as_slice()))
                        .then(|| ip.metadata.name.to_string())
                }).unwrap();
                let names: Vec<String> = scanned.into_iter().map(|ip| ip.metadata.name).collect();
                prop_assert_eq!(names, decoded);
            }
        }
    }

    #[test]
    fn the_scan_finds_every_form_an_address_is_held_in() {
        // Each list must give what decoding every item gives.
        let with = |spec: &str| {
            ip_list(&format!(
                r#"[{},{{"metadata":{{"name":"x"}},"spec":{{"subnet":"net1",{spec}}}}}]"#,
                ip_item("a", "net1", "10.0.0.1")
            ))
        };
        for (raw, asked) in [
            // Whitespace around the colon, a CIDR, a dual-stack pair.
            (with(r#""ipAddress" : "10.0.0.5""#), "10.0.0.5"),
            (with(r#""ipAddress":"10.0.0.5/24""#), "10.0.0.5"),
            (with(r#""ipAddress":"10.0.0.5,fd00::5""#), "fd00::5"),
            // IPv6 not as the request writes it.
            (with(r#""v6IpAddress":"FD00:0:0::0005""#), "fd00::5"),
            (with(r#""v4IpAddress":" 10.0.0.5 ""#), "10.0.0.5"),
            // Escapes: the scan cannot see through them.
            (with(r#""ip\u0041ddress":"10.0.0.5""#), "10.0.0.5"),
            (with(r#""ipAddress":"10.0.0.\u0035""#), "10.0.0.5"),
        ] {
            let addresses: Vec<IpAddr> = vec![asked.parse().unwrap()];
            let mut scanned = Vec::new();
            let got = ips_of_subnet(raw.as_bytes(), "net1", &addresses, &mut scanned).map(|()| {
                scanned
                    .iter()
                    .map(|ip| ip.metadata.name.clone())
                    .collect::<Vec<_>>()
            });
            let decoded = decode_list_kept(&kinds::IP, raw.as_bytes(), |ip: IpRef<'_>| {
                (ip.spec.subnet.as_ref() == "net1" && ip.holds_any(&addresses))
                    .then(|| ip.metadata.name.to_string())
            });
            assert_eq!(
                got.map_err(|e| e.to_string()),
                decoded.map_err(|e| e.to_string()),
                "{raw}"
            );
        }
    }
}
