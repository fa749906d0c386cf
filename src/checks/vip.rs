//! Vip admission: kube-ovn-webhook's `VipCreateHook` and `VipUpdateHook`.
//! Every failure is `Errored(400)`, as upstream.

use crate::admission::denial::Denial;
use crate::admission::{Operation, Request};
use crate::checks::subnet_address::{self, Addresses};
use crate::k8s::cluster::Cluster;
use crate::k8s::objects::Vip;

/// Admits a Vip CREATE or UPDATE.
pub fn admit(request: &Request<'_>, cluster: &dyn Cluster) -> Result<(), Denial> {
    match request.operation {
        Operation::Create => validate_create(&request.object()?, cluster),
        Operation::Update => {
            // Upstream decodes the old object first.
            let old = request.old_object()?;
            validate_update(&request.object()?, &old, cluster)
        }
        Operation::Delete | Operation::Other => Ok(()),
    }
}

/// A Vip CREATE: its subnet exists and its addresses lie in it.
pub fn validate_create(vip: &Vip, cluster: &dyn Cluster) -> Result<(), Denial> {
    let name = vip.metadata.name.as_str();
    let spec = &vip.spec;
    let addresses = Addresses {
        subnet: &spec.subnet,
        v4: &spec.v4ip,
        v6: &spec.v6ip,
        upper_case_v6: &|| {
            format!(
                "vip {name} v6 ip address {} can not contain upper case",
                spec.v6ip
            )
        },
        v6_word: "vip",
    };
    subnet_address::check(&addresses, cluster).map_err(Denial::bad_request)
}

/// A Vip UPDATE that changes the spec: refused once the Vip is assigned (it
/// has a MAC), else checked as a CREATE.
pub fn validate_update(new: &Vip, old: &Vip, cluster: &dyn Cluster) -> Result<(), Denial> {
    if new.spec == old.spec {
        return Ok(());
    }
    if !old.status.mac.is_empty() {
        return Err(Denial::bad_request(
            "vip has been assigned, does not support change",
        ));
    }
    validate_create(new, cluster)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::k8s::fake::{FakeHost, object, subnet, typed};
    use crate::k8s::kinds;
    use rstest::rstest;
    use serde_json::{Value, json};

    fn vip(spec: Value, mac: &str) -> Vip {
        typed(object(
            &kinds::VIP,
            "vip-a",
            json!({"spec": spec, "status": {"mac": mac}}),
        ))
    }

    fn host() -> FakeHost {
        FakeHost::new([subnet(
            "dual",
            json!({"cidrBlock": "10.98.0.0/24,fd00:98::/120"}),
        )])
    }

    #[rstest]
    #[case::dual_stack_addresses(
        json!({"subnet": "dual", "v4ip": "10.98.0.8", "v6ip": "fd00:98::8"}),
        Ok(())
    )]
    #[case::no_address(json!({"subnet": "dual"}), Ok(()))]
    #[case::subnet_empty(
        json!({"subnet": ""}),
        Err("subnet parameter cannot be empty")
    )]
    #[case::subnet_missing(
        json!({"subnet": "abc", "v4ip": "x"}),
        Err("Subnet.kubeovn.io \"abc\" not found")
    )]
    #[case::v4_not_an_ip(
        json!({"subnet": "dual", "v4ip": "10.10.10.10.10"}),
        Err("10.10.10.10.10 is not a valid ip")
    )]
    #[case::v4_outside_subnet(
        json!({"subnet": "dual", "v4ip": "10.98.1.8"}),
        Err(
            "the V4ip 10.98.1.8 is not in the range of subnet dual, cidr 10.98.0.0/24,fd00:98::/120",
        )
    )]
    #[case::v6_upper_case(
        json!({"subnet": "dual", "v6ip": "FD00:98::8"}),
        Err("vip vip-a v6 ip address FD00:98::8 can not contain upper case")
    )]
    #[case::v6_not_an_ip(
        json!({"subnet": "dual", "v6ip": "2001:250:207::eff2::2"}),
        Err("2001:250:207::eff2::2 is not a valid ip")
    )]
    #[case::v6_outside_subnet(
        json!({"subnet": "dual", "v6ip": "fd00:99::8"}),
        Err(
            "the vip fd00:99::8 is not in the range of subnet dual, cidr 10.98.0.0/24,fd00:98::/120",
        )
    )]
    fn create_checks_subnet_and_addresses(#[case] spec: Value, #[case] want: Result<(), &str>) {
        assert_eq!(
            validate_create(&vip(spec, ""), &host().cluster()),
            want.map_err(Denial::bad_request)
        );
    }

    #[test]
    fn update_checks_only_a_changed_spec_of_an_unassigned_vip() {
        let old = vip(json!({"subnet": "dual", "v4ip": "10.98.0.8"}), "");
        let bad = vip(json!({"subnet": "dual", "v4ip": "10.98.1.8"}), "");
        assert_eq!(validate_update(&old, &old, &host().cluster()), Ok(()));
        assert!(validate_update(&bad, &old, &host().cluster()).is_err());
        let assigned = vip(
            json!({"subnet": "dual", "v4ip": "10.98.0.8"}),
            "00:00:00:aa:bb:cc",
        );
        let moved = vip(json!({"subnet": "dual", "v4ip": "10.98.0.9"}), "");
        assert_eq!(
            validate_update(&moved, &assigned, &host().cluster()),
            Err(Denial::bad_request(
                "vip has been assigned, does not support change"
            ))
        );
        // An empty selector list is a change from no selector, as in Go.
        let selected = vip(
            json!({"subnet": "dual", "v4ip": "10.98.0.8", "selector": []}),
            "",
        );
        assert_eq!(
            validate_update(&selected, &assigned, &host().cluster()),
            Err(Denial::bad_request(
                "vip has been assigned, does not support change"
            ))
        );
    }
}
