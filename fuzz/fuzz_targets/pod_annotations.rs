//! Annotation validation (ValidatePodNetwork) and the static-IP checks on
//! arbitrary annotations: one `key=value` per line, a key often one of the
//! annotations the policy reads.
#![no_main]

use kube_ovn_policy::checks::static_ip::owner::{Claim, Subject};
use kube_ovn_policy::checks::static_ip::{self, network};
use kube_ovn_policy::k8s::cluster::{Host, HostCluster};
use kube_ovn_policy::settings::Settings;
use libfuzzer_sys::fuzz_target;
use std::collections::BTreeMap;

const KEYS: &[&str] = &[
    "ovn.kubernetes.io/ip_address",
    "ovn.kubernetes.io/ip_pool",
    "ovn.kubernetes.io/logical_switch",
    "ovn.kubernetes.io/cidr",
    "ovn.kubernetes.io/mac_address",
    "ovn.kubernetes.io/ip_family",
    "ovn.kubernetes.io/ingress_rate",
    "net1.default.ovn.kubernetes.io/ip_address",
    "net1.default.ovn.kubernetes.io/ip_pool",
    "net1.default.ovn.kubernetes.io/logical_switch",
    "net1.default.ovn.kubernetes.io/ip_family",
    "kubevirt.io/migrationJobName",
    "k8s.v1.cni.cncf.io/networks",
    "v1.multus-cni.io/default-network",
    "net1.default.kubernetes.io/ip_address.eth1",
];

/// Every lookup answers one IP CR and one Subnet of `ovn-default`.
struct Small;

impl Host for Small {
    fn call(&self, operation: &str, payload: &[u8]) -> Result<Vec<u8>, String> {
        let text = String::from_utf8_lossy(payload);
        let answer = match (
            operation,
            text.contains("\"Subnet\""),
            text.contains("\"IP\""),
        ) {
            ("list_resources_all", _, true) => {
                r#"{"apiVersion":"kubeovn.io/v1","kind":"IPList","items":[{"metadata":{"name":"a.default"},"spec":{"podName":"a","namespace":"default","subnet":"ovn-default","ipAddress":"10.16.0.5,fd00::5","v4IpAddress":"10.16.0.5","v6IpAddress":"fd00::5"}}]}"#
            }
            ("list_resources_all", _, _) if text.contains("NetworkAttachmentDefinition") => {
                r#"{"apiVersion":"k8s.cni.cncf.io/v1","kind":"NetworkAttachmentDefinitionList","items":[{"metadata":{"name":"net1","namespace":"default"},"spec":{"config":"{\"type\":\"kube-ovn\"}"}}]}"#
            }
            ("list_resources_all", true, _) => {
                r#"{"apiVersion":"kubeovn.io/v1","kind":"SubnetList","items":[{"metadata":{"name":"ovn-default"},"spec":{"default":true,"provider":"net1.default.ovn","cidrBlock":"10.16.0.0/16,fd00::/112","gateway":"10.16.0.1,fd00::1"}}]}"#
            }
            ("get_resource", true, _) => {
                r#"{"apiVersion":"kubeovn.io/v1","kind":"Subnet","metadata":{"name":"ovn-default"},"spec":{"cidrBlock":"10.16.0.0/16,fd00::/112","gateway":"10.16.0.1,fd00::1"}}"#
            }
            _ => return Err("not found".to_string()),
        };
        Ok(answer.as_bytes().to_vec())
    }
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut annotations = BTreeMap::new();
    for line in text.lines() {
        let (key, value) = line.split_once('=').unwrap_or((line, ""));
        // A one-character key picks a known annotation.
        let key = match key.as_bytes() {
            [b] => KEYS[usize::from(*b) % KEYS.len()].to_string(),
            _ => key.to_string(),
        };
        annotations.insert(key, value.to_string());
    }
    let _ = network::validate(&annotations);
    let claim = Claim {
        annotations: &annotations,
        namespace: "default",
        owner_name: "app-1",
        subject: Subject::Pod {
            controller: None,
            statefulset: None,
            vm: false,
        },
    };
    let _ = static_ip::validate(&claim, &Settings::default(), &HostCluster::with_host(Small));
});
