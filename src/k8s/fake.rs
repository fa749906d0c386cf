//! An in-memory cluster for tests of the checks, and the builders of its
//! objects: every object a check's test needs is made here, from JSON, and
//! decoded as the policy decodes it.

use crate::k8s::cluster::{AddressSet, Cluster, LookupError, OvnNatKind};
use crate::k8s::decode;
use crate::k8s::kinds::{self, ApiResource};
use crate::k8s::objects::{
    ConfigMap, InUse, Ip, IpPool, IptablesEip, IptablesRule, Namespace,
    NetworkAttachmentDefinition, PodVip, Service, Subnet, Vpc, VpcReferrer,
};
use serde_json::{Value, json};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

/// Decodes a `serde_json::Value` (tests build objects with `json!`).
pub fn from_value<T: for<'a> serde::Deserialize<'a>>(value: Value) -> Result<T, decode::Error> {
    decode::from_str(&value.to_string())
}

/// Any object named `name`, its other fields (`spec`, `status`, `data`)
/// from `fields`: `object::<Vpc>("vpc-a", json!({"status": {"default": true}}))`.
pub fn object<T: for<'a> serde::Deserialize<'a>>(name: &str, fields: Value) -> T {
    let mut value = json!({"metadata": {"name": name}});
    if let (Some(all), Value::Object(fields)) = (value.as_object_mut(), fields) {
        all.extend(fields);
    }
    from_value(value).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// A Subnet and its `spec`: `subnet("net-a", json!({"cidrBlock": "10.0.1.0/24"}))`.
pub fn subnet(name: &str, spec: Value) -> Subnet {
    object(name, json!({ "spec": spec }))
}

/// An IP object and its `spec`:
/// `ip("a.default", json!({"subnet": "net-a", "ipAddress": "10.0.1.5"}))`.
pub fn ip(name: &str, spec: Value) -> Ip {
    object(name, json!({ "spec": spec }))
}

/// An IPPool and its `spec`: `ippool("p", json!({"subnet": "s", "ips": ["10.0.1.5"]}))`.
pub fn ippool(name: &str, spec: Value) -> IpPool {
    object(name, json!({ "spec": spec }))
}

/// A NetworkAttachmentDefinition in `namespace` and its CNI `config`:
/// `nad("default", "attachnet", json!({"type": "kube-ovn", "provider": "attachnet.default.ovn"}))`.
pub fn nad(namespace: &str, name: &str, config: Value) -> NetworkAttachmentDefinition {
    from_value(json!({
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"config": config.to_string()},
    }))
    .unwrap_or_else(|e| panic!("{namespace}/{name}: {e}"))
}

/// A pod's annotations: `annotations(&[("ovn.kubernetes.io/ip_address", "10.0.1.5")])`.
pub fn annotations(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// A ConfigMap in `namespace`, and its `data`, as [`FakeCluster::config_maps`] holds it.
pub fn config_map(namespace: &str, name: &str, data: Value) -> (String, ConfigMap) {
    (namespace.to_string(), object(name, json!({ "data": data })))
}

impl Subnet {
    /// The same Subnet with the record of what is in use (I15) that its
    /// by-name lookup reads from `status` (a JSON object's text).
    pub fn with_in_use(mut self, status: &str) -> Self {
        self.in_use = InUse::read(status);
        self
    }
}

/// Label pairs of a fake object.
pub type Labels = Vec<(String, String)>;

/// An in-memory cluster for tests of the checks.
#[derive(Default)]
pub struct FakeCluster {
    /// IP CRs.
    pub ips: Vec<Ip>,
    /// Subnets.
    pub subnets: Vec<Subnet>,
    /// Namespaces.
    pub namespaces: Vec<Namespace>,
    /// IPPool names.
    pub ippools: Vec<String>,
    /// IPPool objects (I14).
    pub pools: Vec<IpPool>,
    /// Vpcs.
    pub vpcs: Vec<Vpc>,
    /// Service `default/kubernetes`.
    pub kubernetes_service: Option<Service>,
    /// OVN NAT rules by kind.
    pub vpc_referrers: Vec<(OvnNatKind, VpcReferrer)>,
    /// ConfigMaps by namespace.
    pub config_maps: Vec<(String, ConfigMap)>,
    /// IptablesEIPs.
    pub eips: Vec<IptablesEip>,
    /// Labelled objects (iptables NAT rules, EIPs by name) by kind.
    pub labelled_objects: Vec<(&'static ApiResource, Labels, IptablesRule)>,
    /// NetworkAttachmentDefinitions (I17).
    pub nads: Vec<NetworkAttachmentDefinition>,
    /// Vips as pods naming them read them (I21).
    pub vips: Vec<PodVip>,
    /// Other objects that exist, by kind and name.
    pub existing: Vec<(&'static ApiResource, String)>,
    /// When set, every lookup fails with this text.
    pub fail: Option<String>,
    /// The IP and Subnet lookups made, in order: `list IP <subnet>`,
    /// `get IP <name>`, `get Subnet <name>` (I15's tests count them).
    pub lookups: RefCell<Vec<String>>,
}

impl Cluster for FakeCluster {
    fn ips_holding(&self, subnet: &str, addresses: &AddressSet) -> Result<Vec<Ip>, LookupError> {
        let addresses = addresses.as_slice();
        self.lookups.borrow_mut().push(format!("list IP {subnet}"));
        self.fail.clone().map_or(
            Ok(self
                .ips
                .iter()
                .filter(|ip| {
                    ip.spec.subnet == subnet && ip.addresses().iter().any(|a| addresses.contains(a))
                })
                .cloned()
                .collect()),
            |e| Err(LookupError::failed(e)),
        )
    }
    fn subnets(&self) -> Result<&[Subnet], LookupError> {
        self.fail
            .clone()
            .map_or(Ok(&self.subnets), |e| Err(LookupError::failed(e)))
    }
    fn namespace(&self, name: &str) -> Result<Option<Namespace>, LookupError> {
        self.fail.clone().map_or(
            Ok(self
                .namespaces
                .iter()
                .find(|n| n.metadata.name == name)
                .cloned()),
            |e| Err(LookupError::failed(e)),
        )
    }
    fn ippools(&self) -> Result<&[IpPool], LookupError> {
        self.fail
            .clone()
            .map_or(Ok(&self.pools), |e| Err(LookupError::failed(e)))
    }
    fn ippool(&self, name: &str) -> Result<Option<IpPool>, LookupError> {
        // A pool known by its name alone has no subnet, addresses or namespaces.
        let named = || {
            self.ippools
                .iter()
                .any(|p| p == name)
                .then(|| ippool(name, json!({})))
        };
        self.ippools().map(|all| {
            all.iter()
                .find(|p| p.metadata.name == name)
                .cloned()
                .or_else(named)
        })
    }
    fn exists(&self, kind: &ApiResource, name: &str) -> Result<bool, LookupError> {
        self.fail.clone().map_or(
            Ok(
                (*kind == kinds::IPPOOL && self.ippools.iter().any(|p| p == name))
                    || self.existing.iter().any(|(k, n)| *k == kind && n == name),
            ),
            |e| Err(LookupError::failed(e)),
        )
    }
    fn config_map(&self, namespace: &str, name: &str) -> Result<Option<ConfigMap>, LookupError> {
        self.fail.clone().map_or(
            Ok(self
                .config_maps
                .iter()
                .find(|(ns, cm)| ns == namespace && cm.metadata.name == name)
                .map(|(_, cm)| cm.clone())),
            |e| Err(LookupError::failed(e)),
        )
    }
    fn vpc(&self, name: &str) -> Result<Option<Vpc>, LookupError> {
        self.vpcs()
            .map(|all| all.iter().find(|v| v.metadata.name == name).cloned())
    }
    fn iptables_eip(&self, name: &str) -> Result<Option<IptablesEip>, LookupError> {
        self.fail.clone().map_or(
            Ok(self.eips.iter().find(|e| e.metadata.name == name).cloned()),
            |e| Err(LookupError::failed(e)),
        )
    }
    fn iptables_dnat_rules(
        &self,
        labels: &[(&str, &str)],
    ) -> Result<Vec<IptablesRule>, LookupError> {
        Ok(self
            .matching(&kinds::IPTABLES_DNAT_RULE, labels)?
            .into_iter()
            .cloned()
            .collect())
    }
    fn labelled(
        &self,
        kind: &ApiResource,
        labels: &[(&str, &str)],
    ) -> Result<Vec<String>, LookupError> {
        Ok(self
            .matching(kind, labels)?
            .into_iter()
            .map(|r| r.metadata.name.clone())
            .collect())
    }
    fn subnet(&self, name: &str) -> Result<Option<Rc<Subnet>>, LookupError> {
        self.lookups.borrow_mut().push(format!("get Subnet {name}"));
        self.subnets().map(|all| {
            all.iter()
                .find(|s| s.metadata.name == name)
                .map(|s| Rc::new(s.clone()))
        })
    }
    fn ip(&self, name: &str) -> Result<Option<Ip>, LookupError> {
        self.lookups.borrow_mut().push(format!("get IP {name}"));
        self.fail.clone().map_or(
            Ok(self.ips.iter().find(|ip| ip.metadata.name == name).cloned()),
            |e| Err(LookupError::failed(e)),
        )
    }
    fn vpcs(&self) -> Result<&[Vpc], LookupError> {
        self.fail
            .clone()
            .map_or(Ok(&self.vpcs), |e| Err(LookupError::failed(e)))
    }
    fn kubernetes_service(&self) -> Result<Option<Service>, LookupError> {
        self.fail
            .clone()
            .map_or(Ok(self.kubernetes_service.clone()), |e| {
                Err(LookupError::failed(e))
            })
    }
    fn vpc_referrers(&self, kind: OvnNatKind) -> Result<Vec<VpcReferrer>, LookupError> {
        self.fail.clone().map_or(
            Ok(self
                .vpc_referrers
                .iter()
                .filter(|(k, _)| *k == kind)
                .map(|(_, r)| r.clone())
                .collect()),
            |e| Err(LookupError::failed(e)),
        )
    }
    fn network_attachment_definition(
        &self,
        namespace: &str,
        name: &str,
    ) -> Result<Option<NetworkAttachmentDefinition>, LookupError> {
        self.network_attachment_definition_of(namespace, name)
    }
    fn pod_vip(&self, name: &str) -> Result<Option<PodVip>, LookupError> {
        self.fail.clone().map_or(
            Ok(self.vips.iter().find(|v| v.metadata.name == name).cloned()),
            |e| Err(LookupError::failed(e)),
        )
    }
}

impl FakeCluster {
    fn network_attachment_definition_of(
        &self,
        namespace: &str,
        name: &str,
    ) -> Result<Option<NetworkAttachmentDefinition>, LookupError> {
        self.fail.clone().map_or(
            Ok(self
                .nads
                .iter()
                .find(|n| n.metadata.name == name && n.metadata.namespace == namespace)
                .cloned()),
            |e| Err(LookupError::failed(e)),
        )
    }

    fn matching(
        &self,
        kind: &ApiResource,
        labels: &[(&str, &str)],
    ) -> Result<Vec<&IptablesRule>, LookupError> {
        if let Some(e) = &self.fail {
            return Err(LookupError::failed(e.clone()));
        }
        Ok(self
            .labelled_objects
            .iter()
            .filter(|(k, have, _)| {
                *k == kind
                    && labels
                        .iter()
                        .all(|(key, value)| have.iter().any(|(hk, hv)| hk == key && hv == value))
            })
            .map(|(_, _, rule)| rule)
            .collect())
    }
}
