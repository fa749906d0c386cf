//! IP admission: kube-ovn-webhook's `IPCreateHook` and `IPUpdateHook` for the
//! `kubeovn.io/v1` IP objects themselves. Every failure is `Errored(400)`.
//! Beyond upstream, an IP object whose `ovn.kubernetes.io/subnet` label
//! names another subnet than its `spec.subnet` is refused: the static-IP
//! policy reads a subnet's holders by that label (I15's bounded lookups),
//! and only a hand-written object can disagree with itself.

use crate::admission::denial::Denial;
use crate::admission::{Operation, Request};
use crate::checks::subnet_address::{self, Addresses};
use crate::k8s::cluster::Cluster;
use crate::k8s::objects::Ip;
use serde::Deserialize;
use std::collections::BTreeMap;

/// The label kube-ovn-controller gives an IP object: its subnet's name.
pub const SUBNET_LABEL: &str = "ovn.kubernetes.io/subnet";

/// Admits an IP CREATE or UPDATE.
pub fn admit(request: &Request<'_>, cluster: &dyn Cluster) -> Result<(), Denial> {
    let ip: Ip = match request.operation {
        Operation::Create => {
            let ip = request.object()?;
            validate_create(&ip, cluster)?;
            ip
        }
        Operation::Update => {
            // Upstream decodes the old object first.
            let old = request.old_object()?;
            let ip = request.object()?;
            validate_update(&ip, &old, cluster)?;
            ip
        }
        Operation::Delete | Operation::Other => return Ok(()),
    };
    let labelled: Labelled = request.object()?;
    check_subnet_label(&ip, &labelled.metadata.labels)
}

/// An object's labels, read apart from [`Ip`], which every lookup decodes.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Labelled {
    metadata: Labels,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Labels {
    labels: BTreeMap<String, String>,
}

/// The subnet label, where set, names `spec.subnet` (400 otherwise).
fn check_subnet_label(ip: &Ip, labels: &BTreeMap<String, String>) -> Result<(), Denial> {
    match labels.get(SUBNET_LABEL) {
        Some(label) if *label != ip.spec.subnet => Err(Denial::bad_request(format!(
            "ip {} label {SUBNET_LABEL}={label} differs from its spec.subnet {}",
            ip.metadata.name, ip.spec.subnet
        ))),
        _ => Ok(()),
    }
}

/// An IP CREATE: its subnet exists, its addresses lie in it, and its pod
/// type is one Kube-OVN knows.
pub fn validate_create(ip: &Ip, cluster: &dyn Cluster) -> Result<(), Denial> {
    let spec = &ip.spec;
    let name = ip.metadata.name.as_str();
    let addresses = Addresses {
        subnet: &spec.subnet,
        v4: &spec.v4_ip_address,
        v6: &spec.v6_ip_address,
        upper_case_v6: &|| format!("ip {name} v6 ip address can not contain upper case"),
        v6_word: "ip",
    };
    subnet_address::check(&addresses, cluster).map_err(Denial::bad_request)?;
    if !matches!(
        spec.pod_type.as_str(),
        "" | "VirtualMachine" | "StatefulSet"
    ) {
        return Err(Denial::bad_request(format!(
            "podType {} is not supported",
            spec.pod_type
        )));
    }
    Ok(())
}

/// An IP UPDATE: checked as a CREATE, then no field that was set may change.
pub fn validate_update(new: &Ip, old: &Ip, cluster: &dyn Cluster) -> Result<(), Denial> {
    validate_create(new, cluster)?;
    let (n, o) = (&new.spec, &old.spec);
    let immutable = [
        ("subnet", &n.subnet, &o.subnet),
        ("namespace", &n.namespace, &o.namespace),
        ("podName", &n.pod_name, &o.pod_name),
        ("podType", &n.pod_type, &o.pod_type),
        ("v4IPAddress", &n.v4_ip_address, &o.v4_ip_address),
        ("v6IPAddress", &n.v6_ip_address, &o.v6_ip_address),
        ("macAddress", &n.mac_address, &o.mac_address),
    ];
    match immutable
        .iter()
        .find(|(_, new, old)| !old.is_empty() && new != old)
    {
        Some((field, ..)) => Err(Denial::bad_request(format!(
            "ip {} {field} can not change",
            new.metadata.name
        ))),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::k8s::fake::{FakeHost, subnet, typed};

    #[rstest]
    #[case::same(Some("v6"), Ok(()))]
    #[case::absent(None, Ok(()))]
    #[case::another(
        Some("v4"),
        Err("ip a.default label ovn.kubernetes.io/subnet=v4 differs from its spec.subnet v6")
    )]
    fn the_subnet_label_names_spec_subnet(
        #[case] label: Option<&str>,
        #[case] want: Result<(), &str>,
    ) {
        let object = ip("a.default", json!({"subnet": "v6"}));
        let labels: BTreeMap<String, String> = label
            .map(|l| (SUBNET_LABEL.to_string(), l.to_string()))
            .into_iter()
            .collect();
        let got = check_subnet_label(&object, &labels).map_err(|d| d.message);
        assert_eq!(got, want.map_err(str::to_string));
    }
    use rstest::rstest;
    use serde_json::{Value, json};

    /// An IP object as a request holds it.
    fn ip(name: &str, spec: Value) -> Ip {
        typed(crate::k8s::fake::ip(name, spec))
    }

    fn host() -> FakeHost {
        FakeHost::new([subnet("v6", json!({"cidrBlock": "fd00:16::/112"}))])
    }

    #[rstest]
    #[case::statefulset_v6_address(
        json!({"subnet": "v6", "v6IpAddress": "fd00:16::5", "podType": "StatefulSet"}),
        Ok(())
    )]
    #[case::virtual_machine(json!({"subnet": "v6", "podType": "VirtualMachine"}), Ok(()))]
    #[case::subnet_empty(json!({"subnet": ""}), Err("subnet parameter cannot be empty"))]
    #[case::subnet_missing(json!({"subnet": "v4"}), Err("Subnet.kubeovn.io \"v4\" not found"))]
    #[case::v4_address_in_v6_subnet(
        json!({"subnet": "v6", "v4IpAddress": "10.16.0.5"}),
        Err("the V4ip 10.16.0.5 is not in the range of subnet v6, cidr fd00:16::/112")
    )]
    #[case::v6_address_upper_case(
        json!({"subnet": "v6", "v6IpAddress": "FD00:16::5"}),
        Err("ip web-0.default v6 ip address can not contain upper case")
    )]
    #[case::v6_address_outside_subnet(
        json!({"subnet": "v6", "v6IpAddress": "fd00:17::5"}),
        Err("the ip fd00:17::5 is not in the range of subnet v6, cidr fd00:16::/112")
    )]
    #[case::pod_type_pod(json!({"subnet": "v6", "podType": "Pod"}), Err("podType Pod is not supported"))]
    fn create_checks_subnet_addresses_and_pod_type(
        #[case] spec: Value,
        #[case] want: Result<(), &str>,
    ) {
        assert_eq!(
            validate_create(&ip("web-0.default", spec), &host().cluster()),
            want.map_err(Denial::bad_request)
        );
    }

    /// The IP object `web-0.default` with every field set but `podType`.
    fn stored() -> Ip {
        ip(
            "web-0.default",
            json!({"subnet": "v6", "namespace": "default", "podName": "web-0", "macAddress": "00:00:00:00:00:01"}),
        )
    }

    /// [`stored`] with `field` set to `value`.
    fn changed(field: &str, value: &str) -> Ip {
        let mut spec = json!({"subnet": "v6", "namespace": "default", "podName": "web-0", "macAddress": "00:00:00:00:00:01"});
        spec[field] = json!(value);
        ip("web-0.default", spec)
    }

    #[test]
    fn update_keeps_every_field_that_was_set() {
        let old = stored();
        assert_eq!(validate_update(&old, &old, &host().cluster()), Ok(()));
        // A field that was empty may be filled in.
        assert_eq!(
            validate_update(&changed("podType", "StatefulSet"), &old, &host().cluster()),
            Ok(())
        );
    }

    #[rstest]
    #[case::namespace("namespace", "namespace")]
    #[case::pod_name("podName", "podName")]
    #[case::mac_address("macAddress", "macAddress")]
    fn update_refuses_a_change_of_a_set_field(#[case] field: &str, #[case] name: &str) {
        assert_eq!(
            validate_update(&changed(field, "other"), &stored(), &host().cluster()),
            Err(Denial::bad_request(format!(
                "ip web-0.default {name} can not change"
            )))
        );
    }
}
