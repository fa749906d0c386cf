//! The Kubernetes and Kube-OVN objects the policy reads, as serde structs
//! holding only the fields a check looks at, split by family as Kube-OVN's
//! `pkg/apis/kubeovn/v1/` is. Each says `#[serde(default)]`: an absent key
//! leaves the field's default, unknown keys are skipped, and
//! [`crate::k8s::decode`] reads `null` as the zero value, as Go does. The
//! kind each type is read as is in [`crate::k8s::kinds`].

mod core;
mod ip;
mod ippool;
mod nat;
mod subnet;
mod vip;
mod vpc;
mod workload;

pub use self::core::{
    ConfigMap, Namespace, NamespacedMeta, NetworkAttachmentDefinition,
    NetworkAttachmentDefinitionSpec, Service, ServiceSpec,
};
pub use ip::{Ip, IpRef, IpSpec, MetaRef};
pub use ippool::{CrdSpec, CrdVersion, IpPool, IpPoolCrd, IpPoolSpec, SelectableField};
pub use nat::{
    Enabled, IptablesEip, IptablesEipSpec, IptablesRule, IptablesRuleSpec, NatStatus, OvnEip,
    OvnEipSpec, OvnRule, OvnRuleSpec, Ready, Toleration, VpcNatGateway, VpcNatGatewaySpec,
};
pub use subnet::{
    AvailabilitySpec, AvailabilityStatus, BigInt, InUse, NatOutgoingPolicyMatch,
    NatOutgoingPolicyRule, Subnet, SubnetAvailability, SubnetByName, SubnetSpec, SubnetStatus,
    U2oFeatures, Using,
};
pub use vip::{PodVip, PodVipMeta, PodVipSpec, Vip, VipSpec, VipStatus};
pub use vpc::{
    PolicyRoute, StaticRoute, Vpc, VpcField, VpcPeering, VpcReferrer, VpcSpec, VpcStatus,
};
pub use workload::{
    JobSpec, JobTemplate, ObjectMeta, OwnerReference, Pod, PodSpec, PodStatus, Replicas,
    WorkloadObject, WorkloadSpec,
};

use serde::Deserialize;
use std::collections::BTreeMap;

/// The metadata fields the policy reads of a Kube-OVN object.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct Meta {
    pub name: String,
    pub annotations: BTreeMap<String, String>,
}
