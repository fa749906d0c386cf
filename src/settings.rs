//! Policy settings, as given in the ClusterAdmissionPolicy's `spec.settings`.

use crate::k8s::decode::Raw;
use crate::k8s::names::is_dns1123_subdomain;
use crate::upstream::kubeovn_util::{Protocol, check_protocol};
use serde::Deserialize;

/// The default for `defaultVpc`: Kube-OVN's default VPC.
pub const DEFAULT_VPC: &str = "ovn-cluster";

/// The default for `maxNetworksPerPod` (docs/lookups.md): far above what a
/// real pod attaches, low enough that no request's NICs can hold a
/// policy-server worker.
pub const DEFAULT_MAX_NETWORKS_PER_POD: u64 = 64;

/// The policy's settings. Unknown keys are refused, so a misspelt setting is
/// an error rather than silently ignored.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Settings {
    /// I8: the VPC a Subnet with an empty `spec.vpc` belongs to.
    pub default_vpc: Option<String>,
    /// I9: the apiserver Service ClusterIP(s), `ip` or `v4,v6`; looked up
    /// from Service `default/kubernetes` when unset.
    pub kubernetes_service_ip: Option<String>,
    /// I15: whether a subnet's record of the addresses in use may spare
    /// the lookups of its IP objects; unset is `true`.
    pub use_subnet_status: Option<bool>,
    /// I19: whether an IPPool's `spec.namespaces` keeps other namespaces'
    /// pods from its addresses; unset is `true`.
    pub check_ippool_namespaces: Option<bool>,
    /// §4: the most NICs a pod or pod template may ask for; unset is
    /// [`DEFAULT_MAX_NETWORKS_PER_POD`].
    pub max_networks_per_pod: Option<u64>,
}

/// A settings document as written: each setting's text, so that a value
/// that is not a string is refused quoting it. Unknown keys and repeated
/// ones are refused.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Document<'a> {
    #[serde(borrow, default)]
    default_vpc: Option<Raw<'a>>,
    #[serde(borrow, default, rename = "kubernetesServiceIP")]
    kubernetes_service_ip: Option<Raw<'a>>,
    #[serde(borrow, default)]
    use_subnet_status: Option<Raw<'a>>,
    #[serde(borrow, default, rename = "checkIPPoolNamespaces")]
    check_ippool_namespaces: Option<Raw<'a>>,
    #[serde(borrow, default)]
    max_networks_per_pod: Option<Raw<'a>>,
}

/// A string setting: `null` is unset (as absent); anything but a string is
/// refused, quoting the value given.
fn string_field(name: &str, raw: Option<Raw<'_>>) -> Result<Option<String>, String> {
    raw.map(|raw| {
        serde_json::from_str::<String>(raw.get())
            .map_err(|_| format!("{name}: expected a string, got {}", raw.get()))
    })
    .transpose()
}

/// A boolean setting: `null` is unset (as absent); anything but `true` or
/// `false` is refused, quoting the value given.
fn bool_field(name: &str, raw: Option<Raw<'_>>) -> Result<Option<bool>, String> {
    raw.and_then(|raw| match raw.get() {
        "null" => None,
        text => Some(
            serde_json::from_str::<bool>(text)
                .map_err(|_| format!("{name}: expected true or false, got {text}")),
        ),
    })
    .transpose()
}

/// A count setting: `null` is unset (as absent); anything but an integer
/// of at least 1 is refused, quoting the value given.
fn count_field(name: &str, raw: Option<Raw<'_>>) -> Result<Option<u64>, String> {
    raw.and_then(|raw| match raw.get() {
        "null" => None,
        text => Some(
            serde_json::from_str::<u64>(text)
                .ok()
                .filter(|n| *n >= 1)
                .ok_or_else(|| format!("{name}: expected an integer of at least 1, got {text}")),
        ),
    })
    .transpose()
}

/// Reads a settings object: each known key once, no other key.
fn read_document(payload: &str) -> Result<Settings, String> {
    let document: Option<Document<'_>> =
        serde_json::from_str(payload).map_err(|e| format!("settings are not valid: {e}"))?;
    let Some(document) = document else {
        return Ok(Settings::default());
    };
    Ok(Settings {
        default_vpc: string_field("defaultVpc", document.default_vpc)?,
        kubernetes_service_ip: string_field("kubernetesServiceIP", document.kubernetes_service_ip)?,
        use_subnet_status: bool_field("useSubnetStatus", document.use_subnet_status)?,
        check_ippool_namespaces: bool_field(
            "checkIPPoolNamespaces",
            document.check_ippool_namespaces,
        )?,
        max_networks_per_pod: count_field("maxNetworksPerPod", document.max_networks_per_pod)?,
    })
}

impl Settings {
    /// `defaultVpc`, or `ovn-cluster`.
    pub fn default_vpc(&self) -> &str {
        self.default_vpc.as_deref().unwrap_or(DEFAULT_VPC)
    }

    /// `useSubnetStatus`, or `true` (I15).
    pub fn use_subnet_status(&self) -> bool {
        self.use_subnet_status.unwrap_or(true)
    }

    /// `checkIPPoolNamespaces`, or `true` (I19).
    pub fn check_ippool_namespaces(&self) -> bool {
        self.check_ippool_namespaces.unwrap_or(true)
    }

    /// `maxNetworksPerPod`, or [`DEFAULT_MAX_NETWORKS_PER_POD`] (§4).
    pub fn max_networks_per_pod(&self) -> u64 {
        self.max_networks_per_pod
            .unwrap_or(DEFAULT_MAX_NETWORKS_PER_POD)
    }

    /// Checks every value; the message names the setting at fault.
    pub fn validate(&self) -> Result<(), String> {
        if let Some(vpc) = &self.default_vpc
            && !is_dns1123_subdomain(vpc)
        {
            return Err(format!(
                "defaultVpc: {vpc:?} is not a valid Vpc name (lower-case alphanumerics, '-' and '.', at most 253 characters)"
            ));
        }
        if let Some(ip) = &self.kubernetes_service_ip {
            let valid = !ip.contains('/')
                && matches!(
                    check_protocol(ip),
                    Some(Protocol::V4 | Protocol::V6 | Protocol::Dual)
                )
                && !ip.contains(' ');
            if !valid {
                return Err(format!(
                    "kubernetesServiceIP: {ip:?} is not an IP address or a dual-stack pair \"<ipv4>,<ipv6>\""
                ));
            }
        }
        Ok(())
    }

    /// Decodes and checks a settings document.
    pub fn from_json(payload: &[u8]) -> Result<Self, String> {
        let payload = std::str::from_utf8(payload)
            .map_err(|_| "settings are not valid: invalid UTF-8".to_string())?;
        // The policy-server sends `null` or nothing when no settings are given.
        let settings = match payload.trim_start().as_bytes().first() {
            None => Settings::default(),
            Some(b'{' | b'n') => read_document(payload)?,
            Some(_) => {
                return Err("settings are not valid: expected an object of settings".to_string());
            }
        };
        settings.validate()?;
        Ok(settings)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_ippool_namespaces_defaults_to_true() {
        let read =
            |json: &str| Settings::from_json(json.as_bytes()).map(|s| s.check_ippool_namespaces());
        assert_eq!(read("{}"), Ok(true));
        assert_eq!(read(r#"{"checkIPPoolNamespaces":null}"#), Ok(true));
        assert_eq!(read(r#"{"checkIPPoolNamespaces":false}"#), Ok(false));
        assert_eq!(
            read(r#"{"checkIPPoolNamespaces":"no"}"#),
            Err(r#"checkIPPoolNamespaces: expected true or false, got "no""#.to_string())
        );
    }

    #[test]
    fn max_networks_per_pod_defaults_to_64() {
        let read =
            |json: &str| Settings::from_json(json.as_bytes()).map(|s| s.max_networks_per_pod());
        assert_eq!(read("{}"), Ok(64));
        assert_eq!(read(r#"{"maxNetworksPerPod":null}"#), Ok(64));
        assert_eq!(read(r#"{"maxNetworksPerPod":1}"#), Ok(1));
        assert_eq!(read(r#"{"maxNetworksPerPod":5000}"#), Ok(5000));
        for bad in [
            "0",
            "-1",
            "1.5",
            "\"64\"",
            "true",
            "1e3",
            "18446744073709551616",
        ] {
            assert_eq!(
                read(&format!(r#"{{"maxNetworksPerPod":{bad}}}"#)),
                Err(format!(
                    "maxNetworksPerPod: expected an integer of at least 1, got {bad}"
                )),
                "{bad}"
            );
        }
    }

    #[test]
    fn use_subnet_status_defaults_to_true() {
        let read = |json: &str| Settings::from_json(json.as_bytes()).map(|s| s.use_subnet_status());
        assert_eq!(read("{}"), Ok(true));
        assert_eq!(read("null"), Ok(true));
        assert_eq!(read(r#"{"useSubnetStatus":null}"#), Ok(true));
        assert_eq!(read(r#"{"useSubnetStatus":true}"#), Ok(true));
        assert_eq!(read(r#"{"useSubnetStatus":false}"#), Ok(false));
    }

    #[test]
    fn settings_table() {
        let cases: &[(&str, Result<(), &str>)] = &[
            ("{}", Ok(())),
            ("null", Ok(())),
            (r#"{"defaultVpc":"vpc-a"}"#, Ok(())),
            (r#"{"kubernetesServiceIP":"10.96.0.1"}"#, Ok(())),
            (
                r#"{"kubernetesServiceIP":"10.96.0.1,fd00:10:96::1"}"#,
                Ok(()),
            ),
            (r#"{"kubernetesServiceIP":"fd00:10:96::1"}"#, Ok(())),
            (
                r#"{"defaultVpc":"Not_A_Name"}"#,
                Err("defaultVpc: \"Not_A_Name\" is not a valid Vpc name"),
            ),
            (
                r#"{"defaultVpc":""}"#,
                Err("defaultVpc: \"\" is not a valid Vpc name"),
            ),
            (
                r#"{"defaultVpc":7}"#,
                Err("defaultVpc: expected a string, got 7"),
            ),
            (
                r#"{"defaultVpc":["a"]}"#,
                Err("defaultVpc: expected a string, got [\"a\"]"),
            ),
            (
                r#"{"kubernetesServiceIP":{"ip":"10.96.0.1"}}"#,
                Err("kubernetesServiceIP: expected a string, got {\"ip\":\"10.96.0.1\"}"),
            ),
            (r#"{"defaultVpc":null,"kubernetesServiceIP":null}"#, Ok(())),
            (r#"{"useSubnetStatus":false}"#, Ok(())),
            (r#"{"useSubnetStatus":true}"#, Ok(())),
            (r#"{"useSubnetStatus":null}"#, Ok(())),
            (
                r#"{"useSubnetStatus":"false"}"#,
                Err("useSubnetStatus: expected true or false, got \"false\""),
            ),
            (
                r#"{"useSubnetStatus":0}"#,
                Err("useSubnetStatus: expected true or false, got 0"),
            ),
            (
                r#"{"kubernetesServiceIP":""}"#,
                Err("kubernetesServiceIP: \"\" is not an IP address"),
            ),
            (
                r#"{"defaultVpc":"a","defaultVpc":"b"}"#,
                Err("settings are not valid: duplicate field `defaultVpc`"),
            ),
            (
                r#"{"kubernetesServiceIP":"10.96.0.300"}"#,
                Err("kubernetesServiceIP: \"10.96.0.300\" is not an IP address"),
            ),
            (
                r#"{"kubernetesServiceIP":"10.96.0.0/12"}"#,
                Err("kubernetesServiceIP: \"10.96.0.0/12\" is not an IP address"),
            ),
            (
                r#"{"kubernetesServiceIP":"10.96.0.1,10.96.0.2"}"#,
                Err("kubernetesServiceIP: \"10.96.0.1,10.96.0.2\" is not"),
            ),
            (
                r#"{"kubernetesServiceIP":"10.96.0.1, fd00::1"}"#,
                Err("kubernetesServiceIP: \"10.96.0.1, fd00::1\" is not"),
            ),
            (
                r#"{"defaultVPC":"x"}"#,
                Err(
                    "settings are not valid: unknown field `defaultVPC`, expected one of `defaultVpc`, `kubernetesServiceIP`, `useSubnetStatus`, `checkIPPoolNamespaces`, `maxNetworksPerPod`",
                ),
            ),
            (
                "[1]",
                Err("settings are not valid: expected an object of settings"),
            ),
            (
                "\"x\"",
                Err("settings are not valid: expected an object of settings"),
            ),
        ];
        for (json, want) in cases {
            match (Settings::from_json(json.as_bytes()), want) {
                (Ok(_), Ok(())) => {}
                (Err(got), Err(prefix)) => assert!(
                    got.starts_with(prefix),
                    "{json}: got {got:?}, want {prefix:?}…"
                ),
                (got, want) => panic!("{json}: got {got:?}, want {want:?}"),
            }
        }
    }
}
