//! VpcNatGateway admission (kube-ovn-webhook's `VpcNatGwCreateOrUpdateHook`
//! and `VpcNatGwDeleteHook`), and the NAT configuration every iptables NAT
//! hook checks first (`ValidateVpcNatConfig`, `ValidateVpcNatGatewayConfig`).
//! Every failure is `Errored(400)`, as upstream.

use crate::admission::denial::Denial;
use crate::admission::{Operation, Request};
use crate::k8s::cluster::Cluster;
use crate::k8s::kinds;
use crate::k8s::objects::{ConfigMap, VpcNatGateway};
use crate::upstream::go_net::parse_ip;
use crate::upstream::go_strconv::go_quote;
use crate::upstream::kubeovn_util::cidr_contain_ip;

/// Admits a VpcNatGateway CREATE, UPDATE or DELETE.
pub fn admit(request: &Request<'_>, cluster: &dyn Cluster) -> Result<(), Denial> {
    match request.operation {
        Operation::Create | Operation::Update => {
            let gw = request.object()?;
            let old = request.old_object_if_any()?;
            validate(&gw, old.as_ref(), cluster)
        }
        Operation::Delete => validate_delete(&request.name, cluster),
        Operation::Other => Ok(()),
    }
}

/// The namespace of Kube-OVN's NAT configuration.
pub const CONFIG_NAMESPACE: &str = "kube-system";
/// Holds the NAT gateway image and the StatefulSet name prefix.
pub const NAT_CONFIG: &str = "ovn-vpc-nat-config";
/// Holds `enable-vpc-nat-gw`.
pub const NAT_GW_CONFIG: &str = "ovn-vpc-nat-gw-config";
/// The label kube-ovn-controller puts on an IptablesEIP naming its gateway.
pub const NAT_GW_NAME_LABEL: &str = "ovn.kubernetes.io/vpc-nat-gw-name";
/// The StatefulSet name prefix when `natGwNamePrefix` is not set.
const DEFAULT_NAME_PREFIX: &str = "vpc-nat-gw";
/// A StatefulSet's `controller-revision-hash` label is its name plus 11
/// characters, and a label value holds at most 63.
const STATEFULSET_NAME_MAX: usize = 52;

/// The NAT configuration, read once per evaluation.
pub struct NatConfig {
    nat: ConfigMap,
}

impl NatConfig {
    /// Upstream's two configuration checks, in their order: the NAT config
    /// names an image, and the gateway config enables NAT gateways.
    pub fn load(cluster: &dyn Cluster) -> Result<NatConfig, Denial> {
        let nat = cluster
            .config_map(CONFIG_NAMESPACE, NAT_CONFIG)?
            .ok_or_else(|| not_configured(NAT_CONFIG))?;
        if nat.data.get("image").is_none_or(String::is_empty) {
            return Err(Denial::bad_request(format!(
                "parameter \"image\" in ConfigMap \"{NAT_CONFIG}\" cannot be empty"
            )));
        }
        let gw = cluster
            .config_map(CONFIG_NAMESPACE, NAT_GW_CONFIG)?
            .ok_or_else(|| not_configured(NAT_GW_CONFIG))?;
        if gw.data.get("enable-vpc-nat-gw").map(String::as_str) != Some("true") {
            return Err(Denial::bad_request(format!(
                "parameter \"enable-vpc-nat-gw\" in ConfigMap \"{NAT_GW_CONFIG}\" not true"
            )));
        }
        Ok(NatConfig { nat })
    }

    fn name_prefix(&self) -> &str {
        match self.nat.data.get("natGwNamePrefix").map(|p| p.trim()) {
            Some(prefix) if !prefix.is_empty() => prefix,
            _ => DEFAULT_NAME_PREFIX,
        }
    }
}

fn not_configured(name: &str) -> Denial {
    Denial::bad_request(format!("configMap \"{name}\" not configured"))
}

/// A VpcNatGateway CREATE, or an UPDATE (`old` set): the namespace and the
/// HA mode may not change, then the configuration and the spec.
pub fn validate(
    gw: &VpcNatGateway,
    old: Option<&VpcNatGateway>,
    cluster: &dyn Cluster,
) -> Result<(), Denial> {
    let name = gw.metadata.name.as_str();
    if let Some(old) = old {
        if old.spec.namespace != gw.spec.namespace {
            return Err(Denial::bad_request(format!(
                "VpcNatGateway {}: spec.namespace is immutable (old: {}, new: {})",
                go_quote(name),
                go_quote(&old.spec.namespace),
                go_quote(&gw.spec.namespace)
            )));
        }
        let replicas = |r: i32| if r == 0 { 1 } else { r };
        let (before, after) = (replicas(old.spec.replicas), replicas(gw.spec.replicas));
        if before > 1 && after == 1 {
            return Err(Denial::bad_request(format!(
                "VpcNatGateway {}: replica count reduction from HA (>1) to non-HA (1) is not supported; delete and recreate instead",
                go_quote(name)
            )));
        }
        if before == 1 && after > 1 {
            return Err(Denial::bad_request(format!(
                "VpcNatGateway {}: replica count increase from non-HA (1) to HA (>1) is not supported; delete and recreate instead",
                go_quote(name)
            )));
        }
    }
    let config = NatConfig::load(cluster)?;
    validate_spec(gw, &config, cluster)
}

/// Upstream's `ValidateVpcNatGW`.
fn validate_spec(
    gw: &VpcNatGateway,
    config: &NatConfig,
    cluster: &dyn Cluster,
) -> Result<(), Denial> {
    let spec = &gw.spec;
    let statefulset = format!("{}-{}", config.name_prefix(), gw.metadata.name);
    if statefulset.len() > STATEFULSET_NAME_MAX {
        return Err(Denial::bad_request(format!(
            "generated NAT gateway statefulset name {} length {} exceeds max {STATEFULSET_NAME_MAX}; choose a shorter NAT gateway name",
            go_quote(&statefulset),
            statefulset.len()
        )));
    }
    if spec.vpc.is_empty() {
        return Err(Denial::bad_request("parameter \"vpc\" cannot be empty"));
    }
    let vpc = cluster
        .vpc(&spec.vpc)?
        .ok_or_else(|| Denial::bad_request(kinds::VPC.not_found(&spec.vpc)))?;
    if spec.subnet.is_empty() {
        return Err(Denial::bad_request("parameter \"subnet\" cannot be empty"));
    }
    let subnet = cluster
        .subnet(&spec.subnet)?
        .ok_or_else(|| Denial::bad_request(kinds::SUBNET.not_found(&spec.subnet)))?;
    // An HA gateway gets its LAN addresses from the subnet.
    if spec.replicas <= 1 {
        let lan = spec.lan_ip.as_str();
        if lan.is_empty() {
            return Err(Denial::bad_request("lanIp must be specified"));
        }
        if parse_ip(lan).is_none() {
            return Err(Denial::bad_request(format!(
                "lanIP {lan} is not a valid IP"
            )));
        }
        if !cidr_contain_ip(&subnet.spec.cidr_block, lan) {
            return Err(Denial::bad_request(format!(
                "lanIP {lan} is not in the range of subnet {}, cidr {}",
                subnet.metadata.name, subnet.spec.cidr_block
            )));
        }
    }
    if spec.bfd.enabled && !vpc.spec.enable_bfd {
        return Err(Denial::bad_request(format!(
            "BFD is enabled on NAT gateway but VPC {} does not have BFD enabled (vpc.spec.enableBfd must be true)",
            spec.vpc
        )));
    }
    for toleration in &spec.tolerations {
        if !matches!(toleration.operator.as_str(), "Exists" | "Equal") {
            return Err(Denial::bad_request(format!(
                "invalid taint operator: {}, supported params: \"Equal\", \"Exists\"",
                toleration.operator
            )));
        }
        if !matches!(
            toleration.effect.as_str(),
            "NoSchedule" | "NoExecute" | "PreferNoSchedule"
        ) {
            return Err(Denial::bad_request(format!(
                "invalid taint effect: {}, supported params: \"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\"",
                toleration.effect
            )));
        }
    }
    if !spec.qos_policy.is_empty() && !cluster.exists(&kinds::QOS_POLICY, &spec.qos_policy)? {
        return Err(Denial::bad_request(
            kinds::QOS_POLICY.not_found(&spec.qos_policy),
        ));
    }
    Ok(())
}

/// A VpcNatGateway DELETE: refused while an IptablesEIP is labelled with it.
pub fn validate_delete(name: &str, cluster: &dyn Cluster) -> Result<(), Denial> {
    let eips = cluster.labelled(&kinds::IPTABLES_EIP, &[(NAT_GW_NAME_LABEL, name)])?;
    if eips.is_empty() {
        Ok(())
    } else {
        Err(Denial::bad_request(format!(
            "vpc-nat-gateway \"{name}\" cannot be deleted if any eip is in use"
        )))
    }
}

/// The ConfigMaps that turn VPC NAT gateways on (image `nat:v1`), as the
/// NAT kinds' tests keep them in their cluster.
#[cfg(test)]
pub fn enabled_config_maps() -> Vec<serde_json::Value> {
    use crate::k8s::fake::config_map;
    use serde_json::json;
    vec![
        config_map(CONFIG_NAMESPACE, NAT_CONFIG, json!({"image": "nat:v1"})),
        config_map(
            CONFIG_NAMESPACE,
            NAT_GW_CONFIG,
            json!({"enable-vpc-nat-gw": "true"}),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::k8s::fake::{FakeHost, config_map, labelled, object, subnet, typed};
    use rstest::rstest;
    use serde_json::{Value, json};

    /// A cluster with these ConfigMaps.
    fn host_with(config_maps: Vec<Value>) -> FakeHost {
        let mut host = FakeHost::new(config_maps);
        host.extend([
            object(&kinds::VPC, "vpc-a", json!({"spec": {"enableBfd": false}})),
            subnet("net-a", json!({"cidrBlock": "10.0.1.0/24"})),
            object(&kinds::QOS_POLICY, "qos-a", json!({})),
        ]);
        host
    }

    fn host() -> FakeHost {
        host_with(enabled_config_maps())
    }

    fn gateway(name: &str, spec: Value) -> VpcNatGateway {
        let mut full = json!({"vpc": "vpc-a", "subnet": "net-a", "lanIp": "10.0.1.254"});
        if let (Some(full), Some(extra)) = (full.as_object_mut(), spec.as_object()) {
            full.extend(extra.clone());
        }
        typed(object(&kinds::VPC_NAT_GATEWAY, name, json!({"spec": full})))
    }

    #[rstest]
    #[case::defaults("gw1", json!({}), Ok(()))]
    #[case::replicas_without_lan_ip("gw1", json!({"replicas": 3, "lanIp": ""}), Ok(()))]
    #[case::qos_policy_and_tolerations(
        "gw1",
        json!({"qosPolicy": "qos-a", "tolerations": [{"operator": "Exists", "effect": "NoExecute"}]}),
        Ok(())
    )]
    #[case::statefulset_name_too_long(
        "gw-0123456789-0123456789-0123456789-012345",
        json!({}),
        Err(
            "generated NAT gateway statefulset name \"vpc-nat-gw-gw-0123456789-0123456789-0123456789-012345\" length 53 exceeds max 52; choose a shorter NAT gateway name",
        )
    )]
    #[case::vpc_empty(
        "gw1",
        json!({"vpc": ""}),
        Err("parameter \"vpc\" cannot be empty")
    )]
    #[case::vpc_missing(
        "gw1",
        json!({"vpc": "vpc-x"}),
        Err("Vpc.kubeovn.io \"vpc-x\" not found")
    )]
    #[case::subnet_empty(
        "gw1",
        json!({"subnet": ""}),
        Err("parameter \"subnet\" cannot be empty")
    )]
    #[case::subnet_missing(
        "gw1",
        json!({"subnet": "net-x"}),
        Err("Subnet.kubeovn.io \"net-x\" not found")
    )]
    #[case::lan_ip_empty("gw1", json!({"lanIp": ""}), Err("lanIp must be specified"))]
    #[case::lan_ip_not_an_ip(
        "gw1",
        json!({"lanIp": "10.0.1.300"}),
        Err("lanIP 10.0.1.300 is not a valid IP")
    )]
    #[case::lan_ip_outside_subnet(
        "gw1",
        json!({"lanIp": "10.0.2.1"}),
        Err("lanIP 10.0.2.1 is not in the range of subnet net-a, cidr 10.0.1.0/24")
    )]
    #[case::bfd_without_vpc_bfd(
        "gw1",
        json!({"bfd": {"enabled": true}}),
        Err(
            "BFD is enabled on NAT gateway but VPC vpc-a does not have BFD enabled (vpc.spec.enableBfd must be true)",
        )
    )]
    #[case::toleration_operator_empty(
        "gw1",
        json!({"tolerations": [{"operator": "", "effect": "NoSchedule"}]}),
        Err("invalid taint operator: , supported params: \"Equal\", \"Exists\"")
    )]
    #[case::toleration_effect_empty(
        "gw1",
        json!({"tolerations": [{"operator": "Equal", "effect": ""}]}),
        Err(
            "invalid taint effect: , supported params: \"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\"",
        )
    )]
    #[case::qos_policy_missing(
        "gw1",
        json!({"qosPolicy": "qos-x"}),
        Err("QoSPolicy.kubeovn.io \"qos-x\" not found")
    )]
    fn create_checks_in_upstream_order(
        #[case] name: &str,
        #[case] spec: Value,
        #[case] want: Result<(), &str>,
    ) {
        assert_eq!(
            validate(&gateway(name, spec), None, &host().cluster()),
            want.map_err(Denial::bad_request)
        );
    }

    #[test]
    fn configuration_is_checked_first() {
        let gw = gateway("gw1", json!({"vpc": ""}));
        let missing = host_with(vec![]);
        assert_eq!(
            validate(&gw, None, &missing.cluster()),
            Err(Denial::bad_request(
                "configMap \"ovn-vpc-nat-config\" not configured"
            ))
        );
        let mut maps = enabled_config_maps();
        maps[0] = config_map(CONFIG_NAMESPACE, NAT_CONFIG, json!({"image": ""}));
        let no_image = host_with(maps);
        assert_eq!(
            validate(&gw, None, &no_image.cluster()),
            Err(Denial::bad_request(
                "parameter \"image\" in ConfigMap \"ovn-vpc-nat-config\" cannot be empty"
            ))
        );
        let mut maps = enabled_config_maps();
        maps[1] = config_map(
            CONFIG_NAMESPACE,
            NAT_GW_CONFIG,
            json!({"enable-vpc-nat-gw": "True"}),
        );
        let disabled = host_with(maps);
        assert_eq!(
            validate(&gw, None, &disabled.cluster()),
            Err(Denial::bad_request(
                "parameter \"enable-vpc-nat-gw\" in ConfigMap \"ovn-vpc-nat-gw-config\" not true"
            ))
        );
        let mut maps = enabled_config_maps();
        maps[0] = config_map(
            CONFIG_NAMESPACE,
            NAT_CONFIG,
            json!({"image": "nat:v1", "natGwNamePrefix": " a-much-longer-prefix-for-gateways "}),
        );
        let prefixed = host_with(maps);
        assert!(
            validate(
                &gateway("gw-0123456789-0123456789-01", json!({})),
                None,
                &prefixed.cluster()
            )
            .is_err()
        );
    }

    #[test]
    fn updates_keep_namespace_and_ha_mode() {
        let with = |namespace: &str, replicas: i32| {
            gateway("gw1", json!({"namespace": namespace, "replicas": replicas}))
        };
        assert_eq!(
            validate(&with("a", 0), Some(&with("a", 1)), &host().cluster()),
            Ok(())
        );
        assert_eq!(
            validate(&with("a", 3), Some(&with("a", 2)), &host().cluster()),
            Ok(())
        );
        assert_eq!(
            validate(&with("b", 1), Some(&with("a", 1)), &host().cluster()),
            Err(Denial::bad_request(
                "VpcNatGateway \"gw1\": spec.namespace is immutable (old: \"a\", new: \"b\")"
            ))
        );
        assert_eq!(
            validate(&with("a", 1), Some(&with("a", 2)), &host().cluster()),
            Err(Denial::bad_request(
                "VpcNatGateway \"gw1\": replica count reduction from HA (>1) to non-HA (1) is not supported; delete and recreate instead"
            ))
        );
        assert_eq!(
            validate(&with("a", 2), Some(&with("a", 0)), &host().cluster()),
            Err(Denial::bad_request(
                "VpcNatGateway \"gw1\": replica count increase from non-HA (1) to HA (>1) is not supported; delete and recreate instead"
            ))
        );
    }

    #[test]
    fn delete_is_refused_while_an_eip_names_the_gateway() {
        let mut host = host();
        assert_eq!(validate_delete("gw1", &host.cluster()), Ok(()));
        host.extend([labelled(
            &kinds::IPTABLES_EIP,
            "eip-a",
            &[(NAT_GW_NAME_LABEL, "gw1")],
            json!({"spec": {"natGwDp": "gw1"}}),
        )]);
        assert_eq!(
            validate_delete("gw1", &host.cluster()),
            Err(Denial::bad_request(
                "vpc-nat-gateway \"gw1\" cannot be deleted if any eip is in use"
            ))
        );
        assert_eq!(validate_delete("gw2", &host.cluster()), Ok(()));
    }
}
