//! The Multus network selections a pod carries and the
//! NetworkAttachmentDefinitions they name, read as kube-ovn-controller
//! reads them (I17): `nadutils.ParseNetworkAnnotation` of
//! network-attachment-definition-client v1.7.7 for the annotations, and
//! `loadNetConf`, `util.IsOvnNetwork` and `isKubeOVNIPAMNetwork`
//! (`pkg/controller/network_attachment.go:82`, `pkg/util/network_attachment.go:13`,
//! `pkg/controller/pod.go:2347` at 1533681d7a6b) for a NAD's config.
//!
//! Both are read with Go's `encoding/json` rules ([`go_json`]): keys
//! folded, a repeated key decoded into the value already there, a wrong
//! type anywhere failing the whole text, `\ud800` read as U+FFFD.

use crate::upstream::go_json;
use std::collections::BTreeMap;

/// `k8s.v1.cni.cncf.io/networks`: the pod's attachments.
pub const NETWORKS: &str = "k8s.v1.cni.cncf.io/networks";
/// `v1.multus-cni.io/default-network`: a NAD that replaces the primary network.
pub const DEFAULT_NETWORK: &str = "v1.multus-cni.io/default-network";
/// The CNI type and IPAM type of Kube-OVN (`util.CniTypeName`).
pub const KUBE_OVN: &str = "kube-ovn";

/// One network selection: the NAD it names and what it asks of it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Entry {
    /// The NAD's name.
    pub name: String,
    /// The NAD's namespace: the pod's when the selection names none.
    pub namespace: String,
    /// The interface name asked for (`name@if`, `"interface"`), or empty.
    pub interface: String,
    /// The `"ips"` asked for, as written.
    pub ips: Vec<String>,
    /// Whether it comes from `v1.multus-cni.io/default-network`.
    pub default: bool,
}

impl Entry {
    /// `<namespace>/<name>`, the key kube-ovn-controller counts a NAD's
    /// selections by.
    pub fn nad_key(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }

    /// The per-interface address key kube-ovn-controller reads first for a
    /// selection that names an interface (`perInterfaceIPAnnotationKey`,
    /// `pod.go:3354`): `<nad>.<ns>.kubernetes.io/ip_address.<if>`.
    pub fn per_interface_key(&self) -> Option<String> {
        (!self.interface.is_empty()).then(|| {
            format!(
                "{}.{}.kubernetes.io/ip_address.{}",
                self.name, self.namespace, self.interface
            )
        })
    }

    /// The providers an annotation of this selection may be written for,
    /// whatever its NAD turns out to be: `<nad>.<ns>.ovn`, with `.<if>`,
    /// and `<nad>.<ns>` (a Kube-OVN IPAM-only NAD).
    pub fn candidate_providers(&self) -> Vec<String> {
        let ovn = format!("{}.{}.ovn", self.name, self.namespace);
        let mut providers = vec![format!("{}.{}", self.name, self.namespace)];
        if !self.interface.is_empty() {
            providers.push(format!("{ovn}.{}", self.interface));
        }
        providers.push(ovn);
        providers
    }
}

/// Every selection of a pod, `v1.multus-cni.io/default-network`'s first,
/// then `k8s.v1.cni.cncf.io/networks`'s, as `getPodAttachmentNet`
/// (`pod.go:2105`) collects them. `None` where either does not parse: the
/// controller then fails the pod's every network, attaching nothing.
pub fn entries(annotations: &BTreeMap<String, String>, namespace: &str) -> Option<Vec<Entry>> {
    let mut all = Vec::new();
    for (key, default) in [(DEFAULT_NETWORK, true), (NETWORKS, false)] {
        let Some(value) = annotations.get(key).filter(|v| !v.is_empty()) else {
            continue;
        };
        let mut parsed = parse_network_annotation(value, namespace)?;
        for entry in &mut parsed {
            entry.default = default;
        }
        all.extend(parsed);
    }
    Some(all)
}

/// A pod's network selections read once per evaluation: what every check
/// of them needs, from one decoding of each annotation (docs/lookups.md).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Selections<'a> {
    /// Every selection, as [`entries`] gives them; `None` where an
    /// annotation does not parse (or holds a `null`).
    pub entries: Option<Vec<Entry>>,
    /// [`null_selection`]'s answer.
    pub null: Option<(&'static str, &'a str)>,
    /// [`unreadable`]'s answer.
    pub unreadable: Option<(&'static str, &'a str)>,
}

/// Reads both annotations once: [`entries`], [`null_selection`] and
/// [`unreadable`] in one pass.
pub fn read<'a>(annotations: &'a BTreeMap<String, String>, namespace: &str) -> Selections<'a> {
    let mut read = Selections {
        entries: Some(Vec::new()),
        ..Selections::default()
    };
    for (key, default) in [(DEFAULT_NETWORK, true), (NETWORKS, false)] {
        let Some(value) = annotations.get(key).filter(|v| !v.is_empty()) else {
            continue;
        };
        let parsed: Result<Vec<Option<Entry>>, ()> = if is_json_form(value) {
            go_json::network_selections(value.as_bytes())
                .map(|list| list.into_iter().map(|s| s.map(entry_of)).collect())
                .map_err(|_| ())
        } else {
            value
                .split(',')
                .map(|item| parse_object_text(item.trim()).map(Some).ok_or(()))
                .collect()
        };
        let entries = match parsed {
            Ok(list) if list.iter().any(Option::is_none) => {
                read.null.get_or_insert((key, value.as_str()));
                None
            }
            Ok(list) => Some(list.into_iter().flatten().collect::<Vec<_>>()),
            Err(()) => {
                read.unreadable.get_or_insert((key, value.as_str()));
                None
            }
        };
        match (entries, &mut read.entries) {
            (Some(parsed), Some(all)) => all.extend(parsed.into_iter().map(|mut entry| {
                if entry.namespace.is_empty() {
                    entry.namespace = namespace.to_string();
                }
                entry.default = default;
                entry
            })),
            _ => read.entries = None,
        }
    }
    read
}

/// I17, bad input: the first of the two annotations whose JSON list Go
/// decodes whole with a `null` among its selections. `ParseNetworkAnnotation`
/// then dereferences that nil selection: kube-ovn-controller panics and
/// exits, on every restart too while the pod exists (measured with the
/// controller at 1533681d7a6b: `[null]` on one pod stops it), so no pod
/// network is allocated anywhere. A list that does not decode fails
/// before that, harmlessly.
pub fn null_selection(annotations: &BTreeMap<String, String>) -> Option<(&'static str, &str)> {
    [DEFAULT_NETWORK, NETWORKS].into_iter().find_map(|key| {
        let value = annotations.get(key)?;
        if !is_json_form(value) {
            return None;
        }
        let list = go_json::network_selections(value.as_bytes()).ok()?;
        list.iter()
            .any(Option::is_none)
            .then_some((key, value.as_str()))
    })
}

/// docs/differences.md, §5: the first of the two annotations that
/// `nadutils.ParseNetworkAnnotation` refuses (JSON Go cannot decode into
/// `[]*NetworkSelectionElement`, a text item that is no DNS-1123 label),
/// for a 400 naming it: the controller would never give the pod its
/// networks, and the policy must not take it for "nothing to check". A
/// list with a `null` selection is [`null_selection`]'s, not this.
pub fn unreadable(annotations: &BTreeMap<String, String>) -> Option<(&'static str, &str)> {
    [DEFAULT_NETWORK, NETWORKS].into_iter().find_map(|key| {
        let value = annotations.get(key).filter(|v| !v.is_empty())?;
        let readable = parse_network_annotation(value, "").is_some()
            || (is_json_form(value) && go_json::network_selections(value.as_bytes()).is_ok());
        (!readable).then_some((key, value.as_str()))
    })
}

/// Whether nadutils reads an annotation as JSON: it holds `[`, `{` or `"`
/// anywhere (`strings.IndexAny`).
fn is_json_form(value: &str) -> bool {
    value.contains(['[', '{', '"'])
}

/// `nadutils.ParseNetworkAnnotation`: a JSON list of selections when the
/// text holds `[`, `{` or `"` anywhere, else a comma-separated list of
/// `[<ns>/]<name>[@<if>]`.
pub fn parse_network_annotation(value: &str, namespace: &str) -> Option<Vec<Entry>> {
    let mut entries = if is_json_form(value) {
        parse_json_selections(value)?
    } else {
        value
            .split(',')
            .map(|item| parse_object_text(item.trim()))
            .collect::<Option<Vec<_>>>()?
    };
    for entry in &mut entries {
        if entry.namespace.is_empty() {
            entry.namespace = namespace.to_string();
        }
    }
    Some(entries)
}

/// `parsePodNetworkObjectText`: `[<ns>/]<name>[@<if>]`, each part a DNS-1123
/// label or empty.
fn parse_object_text(item: &str) -> Option<Entry> {
    let slash: Vec<&str> = item.split('/').collect();
    let (namespace, rest) = match slash.as_slice() {
        [ns, rest] => (ns.trim(), *rest),
        [rest] => ("", *rest),
        _ => return None,
    };
    let at: Vec<&str> = rest.split('@').collect();
    let (name, interface) = match at.as_slice() {
        [name] => (name.trim(), ""),
        [name, interface] => (name.trim(), interface.trim()),
        _ => return None,
    };
    let label = |s: &str| {
        s.is_empty()
            || (s
                .bytes()
                .all(|b| matches!(b, b'a'..=b'z' | b'0'..=b'9' | b'-'))
                && !s.starts_with('-')
                && !s.ends_with('-'))
    };
    if ![namespace, name, interface].into_iter().all(label) {
        return None;
    }
    Some(Entry {
        name: name.to_string(),
        namespace: namespace.to_string(),
        interface: interface.to_string(),
        ..Entry::default()
    })
}

/// The JSON form, as Go's `encoding/json` fills `[]*NetworkSelectionElement`
/// ([`go_json::network_selections`]): a value of the wrong type anywhere,
/// or an element that is `null`, fails the whole annotation.
fn parse_json_selections(value: &str) -> Option<Vec<Entry>> {
    go_json::network_selections(value.as_bytes())
        .ok()?
        .into_iter()
        .map(|selection| selection.map(entry_of))
        .collect()
}

/// The fields of a decoded selection the checks read.
fn entry_of(s: go_json::Selection) -> Entry {
    Entry {
        name: s.name,
        namespace: s.namespace,
        interface: s.interface,
        ips: s.ips,
        default: false,
    }
}

/// What a NAD's config makes of it for kube-ovn-controller.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NadKind {
    /// `type: kube-ovn` (in the config or one of its plugins): an OVN
    /// attachment, provider `<nad>.<ns>.ovn`.
    Ovn,
    /// Another CNI with `ipam.type: kube-ovn`: Kube-OVN allocates its
    /// address, provider `<nad>.<ns>`.
    Ipam,
}

/// What kube-ovn-controller's `getPodKubeovnNets` makes of a NAD's config:
/// `loadNetConf` (`network_attachment.go:82`, with multus v4.3.0's
/// `LoadDelegateNetConfList`), then `util.IsOvnNetwork`, else
/// `isKubeOVNIPAMNetwork` (`pod.go:2228`, `2313`), each as it runs in Go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NadLoad {
    /// `loadNetConf` fails (not JSON, a wrong type, no `type` and no
    /// `plugins`, a first plugin without `type`): the pod's networks fail.
    Error,
    /// The controller panics: an empty `plugins` list or a `null` first
    /// plugin (`Plugins[0].Type`), or a `null` plugin that `IsOvnNetwork`
    /// reaches before finding `kube-ovn`.
    Panic,
    /// Kube-OVN allocates for it.
    Kind(NadKind),
    /// Another CNI's, with another IPAM.
    Other,
}

/// [`NadLoad`] of a config (an empty one is skipped before, `pod.go:2216`).
pub fn nad_load(config: &str) -> NadLoad {
    let Ok(conf) = go_json::plugin_conf(config.as_bytes()) else {
        return NadLoad::Error;
    };
    let mut plugins = Vec::new();
    if conf.kind.is_empty() {
        // `LoadDelegateNetConfList`.
        let Ok(list) = go_json::net_conf_list(config.as_bytes()) else {
            return NadLoad::Error;
        };
        let Some(list) = list.plugins else {
            return NadLoad::Error;
        };
        match list.first() {
            None | Some(None) => return NadLoad::Panic,
            Some(Some(first)) if first.kind.is_empty() => return NadLoad::Error,
            Some(Some(_)) => {}
        }
        plugins = list;
    }
    // `IsOvnNetwork` stops at the first `kube-ovn`, else reads every plugin.
    if conf.kind == KUBE_OVN {
        return NadLoad::Kind(NadKind::Ovn);
    }
    for plugin in &plugins {
        match plugin {
            None => return NadLoad::Panic,
            Some(p) if p.kind == KUBE_OVN => return NadLoad::Kind(NadKind::Ovn),
            Some(_) => {}
        }
    }
    let ipam = std::iter::once(&conf).chain(plugins.iter().flatten());
    if ipam.into_iter().any(|p| p.ipam_type == KUBE_OVN) {
        NadLoad::Kind(NadKind::Ipam)
    } else {
        NadLoad::Other
    }
}

/// The kind of a NAD's `spec.config`, `None` where kube-ovn-controller
/// allocates nothing for it: an empty config (skipped, `pod.go:2228`), one
/// `loadNetConf` refuses (it fails the pod), one that stops the
/// controller, or another CNI's.
pub fn nad_kind(config: &str) -> Option<NadKind> {
    if config.is_empty() {
        return None;
    }
    match nad_load(config) {
        NadLoad::Kind(kind) => Some(kind),
        NadLoad::Error | NadLoad::Panic | NadLoad::Other => None,
    }
}

/// Whether kube-ovn-controller panics on this config when a pod selects
/// its NAD ([`NadLoad::Panic`]). Checked against Go 1.26 (e2e/gojson):
/// `{"plugins":[]}`, `{"plugins":[null]}`, `{"plugins":[{"type":"x"},null]}`
/// panic; `{"plugins":null}`, a config with a `type`, and
/// `{"plugins":[{"type":"kube-ovn"},null]}` (`IsOvnNetwork` returns before
/// the null one, `pkg/util/network_attachment.go:17`) do not.
pub fn crashes_controller(config: &str) -> bool {
    !config.is_empty() && nad_load(config) == NadLoad::Panic
}

/// An entry's `ips`, as kube-ovn-controller writes them into the
/// provider's `ip_address` annotation (`strings.Join(attach.IPRequest, ",")`).
pub fn joined_ips(entry: &Entry) -> String {
    entry.ips.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    /// Namespace, name, interface and `ips` of a selection.
    type Parts = (String, String, String, Vec<String>);

    fn names(value: &str) -> Option<Vec<Parts>> {
        parse_network_annotation(value, "pod-ns").map(|entries| {
            entries
                .into_iter()
                .map(|e| (e.namespace, e.name, e.interface, e.ips))
                .collect()
        })
    }

    fn e(
        ns: &str,
        name: &str,
        interface: &str,
        ips: &[&str],
    ) -> (String, String, String, Vec<String>) {
        (
            ns.into(),
            name.into(),
            interface.into(),
            ips.iter().map(|s| s.to_string()).collect(),
        )
    }

    #[rstest]
    #[case::name_only("net1", Some(vec![e("pod-ns", "net1", "", &[])]))]
    #[case::namespace_interface_and_spaces(
        " other/net1@eth1 , net2",
        Some(vec![
            e("other", "net1", "eth1", &[]),
            e("pod-ns", "net2", "", &[])
        ])
    )]
    // Each part a DNS-1123 label: upper case, a dot or a leading dash fail
    // the whole annotation.
    #[case::upper_case("Net1", None)]
    #[case::two_slashes("a/b/c", None)]
    #[case::two_ats("net1@a@b", None)]
    #[case::dot("net.1", None)]
    #[case::leading_dash("-net", None)]
    // An empty item is an empty name (the controller then finds no NAD).
    #[case::empty_item(
        "net1,",
        Some(vec![e("pod-ns", "net1", "", &[]), e("pod-ns", "", "", &[])])
    )]
    fn text_form_as_parse_pod_network_object_text(
        #[case] value: &str,
        #[case] want: Option<Vec<Parts>>,
    ) {
        assert_eq!(names(value), want);
    }

    #[rstest]
    #[case::every_field(
        r#"[{"name":"n1","namespace":"ns1","interface":"eth1","ips":["10.0.0.5"]}]"#,
        Some(vec![e("ns1", "n1", "eth1", &["10.0.0.5"])])
    )]
    // Keys without regard to case, the last matching one winning.
    #[case::keys_any_case_last_wins(
        r#"[{"NAME":"n1","IPs":["a"],"ips":["b"]}]"#,
        Some(vec![e("pod-ns", "n1", "", &["b"])])
    )]
    #[case::long_s_folds_to_s(
        r#"[{"name":"n1","ipſ":["10.0.0.8"]}]"#,
        Some(vec![e("pod-ns", "n1", "", &["10.0.0.8"])])
    )]
    #[case::dotless_and_dotted_i_do_not_fold(
        r#"[{"name":"n1","ıpſ":["10.0.0.9"],"İps":["10.0.0.9"]}]"#,
        Some(vec![e("pod-ns", "n1", "", &[])])
    )]
    #[case::namespace_keys_any_case(
        r#"[{"nameſpace":"x","name":"n1","NAMESPACE":"ns9"}]"#,
        Some(vec![e("ns9", "n1", "", &[])])
    )]
    // null leaves a string as it was; a list null is empty.
    #[case::nulls(
        r#"[{"name":"n1","name":null,"ips":null}]"#,
        Some(vec![e("pod-ns", "n1", "", &[])])
    )]
    // Without `[`, `{` or `"` it is the text form: a NAD named null.
    #[case::bare_null("null", Some(vec![e("pod-ns", "null", "", &[])]))]
    // Every matching key is read: a wrong type anywhere fails.
    #[case::wrong_type_then_right_type(r#"[{"name":"n1","ips":5,"IPS":["a"]}]"#, None)]
    // A later list decodes into the first one's elements (Go 1.26).
    #[case::later_list_into_the_first(
        r#"[{"name":"n1","ips":["a","b"],"IPS":[null]}]"#,
        Some(vec![e("pod-ns", "n1", "", &["a"])])
    )]
    // An escaped lone surrogate is U+FFFD, as Go reads it: the entry is read.
    #[case::lone_surrogate(
        r#"[{"name":"n1","\ud800":1,"ips":["10.0.0.5"]}]"#,
        Some(vec![e("pod-ns", "n1", "", &["10.0.0.5"])])
    )]
    // A wrong type in a field the policy does not use still fails, as in Go.
    #[case::mac_a_number(r#"[{"name":"n1","mac":5}]"#, None)]
    #[case::bad_default_route(r#"[{"name":"n1","default-route":["x"]}]"#, None)]
    #[case::list_then_null(
        r#"[{"name":"n1","ips":["a"],"IPS":null}]"#,
        Some(vec![e("pod-ns", "n1", "", &[])])
    )]
    // A wrong type, a null element, an object rather than a list: the
    // whole annotation fails.
    #[case::ips_a_string(r#"[{"name":"n1","ips":"10.0.0.5"}]"#, None)]
    #[case::name_a_number(r#"[{"name":5}]"#, None)]
    #[case::null_element(r#"[null]"#, None)]
    #[case::object_not_list(r#"{"name":"n1"}"#, None)]
    // Any `"` makes it JSON.
    #[case::quote_in_text(r#"net1""#, None)]
    fn json_form_as_go_reads_it(#[case] value: &str, #[case] want: Option<Vec<Parts>>) {
        assert_eq!(names(value), want);
    }

    fn one(key: &str, value: &str) -> BTreeMap<String, String> {
        [(key.to_string(), value.to_string())].into_iter().collect()
    }

    #[rstest]
    #[case::only_null("[null]")]
    #[case::null_after_a_selection(r#"[{"name":"a"},null]"#)]
    #[case::spaced(" [ null ] ")]
    fn null_selections_are_found_where_go_would_dereference_them(#[case] value: &str) {
        assert_eq!(
            null_selection(&one(NETWORKS, value)),
            Some((NETWORKS, value))
        );
    }

    #[rstest]
    #[case::wrong_type(r#"[{"name":"a","mac":5}]"#, true)]
    #[case::not_json("[{", true)]
    #[case::bad_label("Net1", true)]
    #[case::null_selection_is_not_unreadable("[null]", false)]
    #[case::lone_surrogate_reads(r#"[{"name":"\ud800"}]"#, false)]
    #[case::text_form("ns/net1@eth1", false)]
    fn unreadable_annotations_as_go_refuses_them(#[case] value: &str, #[case] refused: bool) {
        assert_eq!(unreadable(&one(NETWORKS, value)).is_some(), refused);
        assert_eq!(unreadable(&one(DEFAULT_NETWORK, value)).is_some(), refused);
    }

    #[test]
    fn null_default_network_is_found() {
        assert!(null_selection(&one(DEFAULT_NETWORK, "[null]")).is_some());
    }

    // Unmarshal fails first (another element of the wrong type, not a
    // list), or nothing is null: nothing is dereferenced.
    #[rstest]
    #[case::wrong_type_after_null(r#"[null,{"name":5}]"#)]
    #[case::bare_null("null")]
    #[case::empty_list("[]")]
    #[case::no_null(r#"[{"name":"a"}]"#)]
    #[case::text_form("a,b")]
    #[case::not_json("{null}")]
    fn no_null_selection_where_go_dereferences_none(#[case] value: &str) {
        assert_eq!(null_selection(&one(NETWORKS, value)), None);
    }

    #[test]
    fn entries_default_network_first() {
        let annotations: BTreeMap<String, String> = [
            (NETWORKS.to_string(), "b".to_string()),
            (DEFAULT_NETWORK.to_string(), "ns2/a".to_string()),
        ]
        .into_iter()
        .collect();
        let all = entries(&annotations, "ns").expect("parses");
        assert_eq!(
            all.iter()
                .map(|e| (e.nad_key(), e.default))
                .collect::<Vec<_>>(),
            vec![("ns2/a".to_string(), true), ("ns/b".to_string(), false)]
        );
        let mut broken = annotations.clone();
        broken.insert(NETWORKS.to_string(), "A".to_string());
        assert_eq!(entries(&broken, "ns"), None);
    }

    #[rstest]
    #[case::kube_ovn_type(
        r#"{"cniVersion":"0.3.0","type":"kube-ovn","server_socket":"/run/openvswitch/kube-ovn-daemon.sock","provider":"a.b.ovn"}"#,
        Some(NadKind::Ovn)
    )]
    #[case::kube_ovn_ipam(
        r#"{"type":"macvlan","ipam":{"type":"kube-ovn"}}"#,
        Some(NadKind::Ipam)
    )]
    #[case::other_ipam(r#"{"type":"macvlan","ipam":{"type":"host-local"}}"#, None)]
    #[case::key_any_case(r#"{"Type":"kube-ovn"}"#, Some(NadKind::Ovn))]
    #[case::kube_ovn_plugin(
        r#"{"cniVersion":"0.3.1","name":"x","plugins":[{"type":"kube-ovn"},{"type":"portmap"}]}"#,
        Some(NadKind::Ovn)
    )]
    #[case::kube_ovn_ipam_plugin(
        r#"{"plugins":[{"type":"bridge","ipam":{"type":"kube-ovn"}}]}"#,
        Some(NadKind::Ipam)
    )]
    // A typed config's plugins are never read.
    #[case::typed_config_plugins_unread(
        r#"{"type":"bridge","plugins":[{"type":"kube-ovn"}]}"#,
        None
    )]
    // What loadNetConf refuses.
    #[case::empty("", None)]
    #[case::not_json("not json", None)]
    #[case::type_a_number(r#"{"type":5}"#, None)]
    #[case::no_plugins(r#"{"plugins":[]}"#, None)]
    #[case::plugin_without_type(r#"{"plugins":[{"ipam":{"type":"kube-ovn"}}]}"#, None)]
    #[case::neither_type_nor_plugins(r#"{"name":"x"}"#, None)]
    #[case::ipam_a_string(r#"{"type":"macvlan","ipam":"kube-ovn"}"#, None)]
    #[case::capabilities_not_bools(r#"{"type":"kube-ovn","capabilities":{"ips":1}}"#, None)]
    #[case::lone_surrogate_value(r#"{"type":"kube-ovn","name":"\ud800"}"#, Some(NadKind::Ovn))]
    #[case::second_plugins_list_merges(
        r#"{"plugins":[{"type":"bridge"}],"PLUGINS":[{"ipam":{"type":"kube-ovn"}}]}"#,
        Some(NadKind::Ipam)
    )]
    fn nad_kinds_as_the_controller_reads_them(#[case] config: &str, #[case] want: Option<NadKind>) {
        assert_eq!(nad_kind(config), want);
    }

    #[rstest]
    #[case::no_plugins(r#"{"plugins":[]}"#, true)]
    #[case::null_plugin(r#"{"plugins":[null]}"#, true)]
    #[case::null_plugin_first(r#"{"plugins":[null,{"type":"kube-ovn"}]}"#, true)]
    #[case::null_plugin_last(r#"{"plugins":[{"type":"x"},null]}"#, true)]
    #[case::no_plugins_empty_type(r#"{"plugins":[], "type":""}"#, true)]
    #[case::plugins_null(r#"{"plugins":null}"#, false)]
    // IsOvnNetwork returns at the kube-ovn plugin, before the null one.
    #[case::null_plugin_after_kube_ovn(r#"{"plugins":[{"type":"kube-ovn"},null]}"#, false)]
    #[case::lone_surrogate_key(r#"{"\udc00":1,"plugins":[]}"#, true)]
    #[case::typed_no_plugins(r#"{"type":"bridge","plugins":[]}"#, false)]
    #[case::plugin_without_type(r#"{"plugins":[{"ipam":{}}]}"#, false)]
    #[case::plugin_type_a_number(r#"{"plugins":[{"type":"x"},{"type":5}]}"#, false)]
    #[case::type_a_number_no_plugins(r#"{"type":5,"plugins":[]}"#, false)]
    #[case::kube_ovn_plugin(r#"{"plugins":[{"type":"kube-ovn"}]}"#, false)]
    #[case::empty("", false)]
    #[case::not_json("not json", false)]
    fn configs_that_crash_the_controller(#[case] config: &str, #[case] crashes: bool) {
        assert_eq!(crashes_controller(config), crashes);
    }

    #[test]
    fn providers_and_keys() {
        let entry = Entry {
            name: "net1".into(),
            namespace: "ns".into(),
            interface: "eth1".into(),
            ..Entry::default()
        };
        assert_eq!(
            entry.per_interface_key().as_deref(),
            Some("net1.ns.kubernetes.io/ip_address.eth1")
        );
        assert_eq!(
            entry.candidate_providers(),
            vec!["net1.ns", "net1.ns.ovn.eth1", "net1.ns.ovn"]
        );
    }

    /// One read gives what the three readers give, each annotation decoded once.
    #[rstest]
    #[case::none(None, None)]
    #[case::text(Some("a,ns/b@eth1"), None)]
    #[case::text_bad(Some("a,B"), None)]
    #[case::json(Some(r#"[{"name":"a","ips":["10.0.0.1"]}]"#), Some("b"))]
    #[case::json_null(Some("[null]"), Some("c@net2"))]
    #[case::json_wrong_type(Some(r#"[{"name":5}]"#), None)]
    #[case::both_bad(Some("x y"), Some("[null]"))]
    #[case::default_only(None, Some(r#"{"name":"d"}"#))]
    #[case::surrogate(Some(r#"[{"name":"a","\ud800":1,"ips":["10.0.0.2"]}]"#), None)]
    fn one_read_agrees_with_each_reader(
        #[case] networks: Option<&str>,
        #[case] default: Option<&str>,
    ) {
        let mut annotations = BTreeMap::new();
        if let Some(v) = networks {
            annotations.insert(NETWORKS.to_string(), v.to_string());
        }
        if let Some(v) = default {
            annotations.insert(DEFAULT_NETWORK.to_string(), v.to_string());
        }
        let read = read(&annotations, "ns");
        assert_eq!(read.entries, entries(&annotations, "ns"));
        assert_eq!(read.null, null_selection(&annotations));
        assert_eq!(read.unreadable, unreadable(&annotations));
    }
}
