//! Vpc admission: kube-ovn-webhook's `VpcCreateHook`, `VpcUpdateHook` and
//! `VpcDeleteHook`, with `util.ValidateVpc`.
//!
//! Codes as upstream: a CREATE or UPDATE that fails is `Errored(400)`; a
//! DELETE refused because the VPC is in use is `Denied` (403).

use crate::admission::denial::Denial;
use crate::admission::{Operation, Request};
use crate::k8s::cluster::{Cluster, OvnNatKind};
use crate::k8s::objects::{Vpc, VpcSpec};
use crate::upstream::go_net::{parse_cidr, parse_ip};
use crate::upstream::go_strconv::go_quote;
use crate::upstream::kubeovn_util::check_cidrs;

/// Admits a Vpc CREATE, UPDATE or DELETE.
pub fn admit(request: &Request<'_>, cluster: &dyn Cluster) -> Result<(), Denial> {
    match request.operation {
        Operation::Create => validate_create(&request.object()?, cluster),
        Operation::Update => validate_update(&request.object()?),
        Operation::Delete => validate_delete(&request.old_object()?, cluster),
        Operation::Other => Ok(()),
    }
}

/// A Vpc CREATE: no Subnet may have its name, and the spec must be valid.
/// A Subnet is never a Vpc, so an audit replay cannot clash with itself.
pub fn validate_create(vpc: &Vpc, cluster: &dyn Cluster) -> Result<(), Denial> {
    if cluster
        .subnets()?
        .iter()
        .any(|subnet| subnet.metadata.name == vpc.metadata.name)
    {
        return Err(Denial::bad_request(
            "vpc and subnet cannot have the same name",
        ));
    }
    validate_spec(&vpc.spec).map_err(Denial::bad_request)
}

/// A Vpc UPDATE: the spec must be valid.
pub fn validate_update(vpc: &Vpc) -> Result<(), Denial> {
    validate_spec(&vpc.spec).map_err(Denial::bad_request)
}

/// A Vpc DELETE: refused while it has Subnets, or while an OVN DNAT, SNAT
/// or FIP rule is in it (the first by name, I12).
pub fn validate_delete(vpc: &Vpc, cluster: &dyn Cluster) -> Result<(), Denial> {
    let name = vpc.metadata.name.as_str();
    if !vpc.status.subnets.is_empty() {
        return Err(Denial::forbidden(
            "can't delete vpc when any subnet in the vpc",
        ));
    }
    for kind in OvnNatKind::ALL {
        let referrers = cluster.vpc_referrers(kind)?;
        if let Some(rule) = referrers
            .iter()
            .filter(|rule| rule.vpc() == name)
            .min_by(|a, b| a.metadata.name.cmp(&b.metadata.name))
        {
            return Err(Denial::forbidden(format!(
                "can't delete vpc {}: still referenced by {} {}",
                go_quote(name),
                kind.kind(),
                go_quote(&rule.metadata.name)
            )));
        }
    }
    Ok(())
}

/// Upstream's `util.ValidateVpc`: static routes, policy routes and peerings.
pub fn validate_spec(spec: &VpcSpec) -> Result<(), String> {
    for route in &spec.static_routes {
        if !matches!(route.policy.as_str(), "" | "policyDst" | "policySrc") {
            return Err(format!("unknown policy type: {}", route.policy));
        }
        let cidr = route.cidr.as_str();
        if cidr.contains('/') {
            if parse_cidr(cidr).is_none() {
                return Err(format!("invalid cidr {cidr}: invalid CIDR address: {cidr}"));
            }
        } else if parse_ip(cidr).is_none() {
            return Err(format!("invalid IP {cidr}"));
        }
        if parse_ip(&route.next_hop_ip).is_none() {
            return Err(format!("invalid next hop IP {}", route.next_hop_ip));
        }
    }
    for route in &spec.policy_routes {
        if !matches!(route.action.as_str(), "allow" | "drop" | "reroute") {
            return Err(format!("unknown policy action: {}", route.action));
        }
        // An ECMP reroute may name several next hops.
        if route.action == "reroute"
            && route
                .next_hop_ip
                .split(',')
                .any(|ip| parse_ip(ip).is_none())
        {
            return Err(format!("invalid next hop ips: {}", route.next_hop_ip));
        }
    }
    for peering in &spec.vpc_peerings {
        if !check_cidrs(&peering.local_connect_ip) {
            return Err(format!("invalid cidr {}", peering.local_connect_ip));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::k8s::fake::{FakeHost, object, typed};
    use crate::k8s::kinds::{self, ApiResource};
    use crate::k8s::objects::{PolicyRoute, StaticRoute, VpcPeering};
    use rstest::rstest;
    use serde_json::json;

    fn route(policy: &str, cidr: &str, next_hop: &str) -> StaticRoute {
        StaticRoute {
            policy: policy.into(),
            cidr: cidr.into(),
            next_hop_ip: next_hop.into(),
        }
    }

    fn policy(action: &str, hops: &str) -> PolicyRoute {
        PolicyRoute {
            action: action.into(),
            next_hop_ip: hops.into(),
        }
    }

    fn peering(ip: &str) -> VpcPeering {
        VpcPeering {
            local_connect_ip: ip.into(),
        }
    }

    #[rstest]
    #[case::empty(VpcSpec::default(), Ok(()))]
    #[case::routes_policies_and_peerings(
        VpcSpec {
            static_routes: vec![route("policyDst", "10.0.0.0/24", "10.1.0.1")],
            policy_routes: vec![policy("reroute", "10.0.0.1,10.0.0.2"), policy("drop", "")],
            vpc_peerings: vec![peering("169.254.0.1/30")],
            ..Default::default()
        },
        Ok(())
    )]
    #[case::host_route_across_families(
        VpcSpec {
            static_routes: vec![route("", "10.0.0.7", "fd00::1")],
            ..Default::default()
        },
        Ok(())
    )]
    #[case::static_route_policy_unknown(
        VpcSpec {
            static_routes: vec![route("policyAny", "10.0.0.0/24", "10.1.0.1")],
            ..Default::default()
        },
        Err("unknown policy type: policyAny")
    )]
    #[case::static_route_cidr_prefix_too_long(
        VpcSpec {
            static_routes: vec![route("", "10.0.0.0/33", "10.1.0.1")],
            ..Default::default()
        },
        Err("invalid cidr 10.0.0.0/33: invalid CIDR address: 10.0.0.0/33")
    )]
    #[case::static_route_address_invalid(
        VpcSpec {
            static_routes: vec![route("", "10.0.0.256", "10.1.0.1")],
            ..Default::default()
        },
        Err("invalid IP 10.0.0.256")
    )]
    #[case::next_hop_empty(
        VpcSpec {
            static_routes: vec![route("", "10.0.0.0/8", "")],
            ..Default::default()
        },
        Err("invalid next hop IP ")
    )]
    #[case::policy_route_action_unknown(
        VpcSpec {
            policy_routes: vec![policy("Allow", "")],
            ..Default::default()
        },
        Err("unknown policy action: Allow")
    )]
    #[case::policy_route_hops_spaced(
        VpcSpec {
            policy_routes: vec![policy("reroute", "10.0.0.1, 10.0.0.2")],
            ..Default::default()
        },
        Err("invalid next hop ips: 10.0.0.1, 10.0.0.2")
    )]
    #[case::peering_not_a_cidr(
        VpcSpec {
            vpc_peerings: vec![peering("169.254.0.1")],
            ..Default::default()
        },
        Err("invalid cidr 169.254.0.1")
    )]
    fn spec_checks_in_upstream_order(#[case] spec: VpcSpec, #[case] want: Result<(), &str>) {
        assert_eq!(validate_spec(&spec), want.map_err(str::to_string));
    }

    fn referrer(
        kind: &ApiResource,
        name: &str,
        spec_vpc: &str,
        status_vpc: &str,
    ) -> serde_json::Value {
        object(
            kind,
            name,
            json!({"spec": {"vpc": spec_vpc}, "status": {"vpc": status_vpc}}),
        )
    }

    #[test]
    fn delete_is_refused_while_in_use() {
        let vpc = |subnets: serde_json::Value| -> Vpc {
            typed(object(
                &kinds::VPC,
                "vpc-a",
                json!({"status": {"subnets": subnets}}),
            ))
        };
        let host = FakeHost::new([
            referrer(&kinds::OVN_DNAT_RULE, "dnat-z", "", "vpc-b"),
            referrer(&kinds::OVN_SNAT_RULE, "snat-z", "vpc-a", ""),
            referrer(&kinds::OVN_SNAT_RULE, "snat-b", "vpc-a", ""),
            referrer(&kinds::OVN_FIP, "fip-a", "", "vpc-a"),
        ]);
        assert_eq!(
            validate_delete(&vpc(json!(["s1"])), &host.cluster()),
            Err(Denial::forbidden(
                "can't delete vpc when any subnet in the vpc"
            ))
        );
        // DNAT rules are checked first; among SNAT rules the first by name is named.
        assert_eq!(
            validate_delete(&vpc(json!([])), &host.cluster()),
            Err(Denial::forbidden(
                "can't delete vpc \"vpc-a\": still referenced by OvnSnatRule \"snat-b\""
            ))
        );
        // status.vpc wins over spec.vpc.
        let moved = FakeHost::new([referrer(&kinds::OVN_DNAT_RULE, "dnat-a", "vpc-a", "vpc-b")]);
        assert_eq!(validate_delete(&vpc(json!(null)), &moved.cluster()), Ok(()));
    }
}
