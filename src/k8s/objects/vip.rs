//! `kubeovn.io/v1` Vip ([`crate::k8s::kinds::VIP`]).

use super::Meta;
use serde::Deserialize;

#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct Vip {
    pub metadata: Meta,
    pub spec: VipSpec,
    pub status: VipStatus,
}

/// Every `spec` field: an UPDATE is checked when any of them changed. Lists
/// keep an absent or `null` list (`None`) apart from `[]`, as Go's
/// `reflect.DeepEqual` keeps a nil slice apart from an empty one.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct VipSpec {
    pub namespace: String,
    pub subnet: String,
    #[serde(rename = "type")]
    pub vip_type: String,
    pub v4ip: String,
    pub v6ip: String,
    pub mac_address: String,
    pub selector: Option<Vec<String>>,
    pub attach_subnets: Option<Vec<String>>,
}

/// A Vip as a pod that names it (`ovn.kubernetes.io/vip`, I21) sees it: the
/// namespace it is meant for and the port it is reserved by.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct PodVip {
    pub metadata: PodVipMeta,
    pub spec: PodVipSpec,
}

/// A Vip's name and labels.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct PodVipMeta {
    pub name: String,
    pub labels: std::collections::BTreeMap<String, String>,
}

/// The namespace a Vip is meant for (empty: any).
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct PodVipSpec {
    pub namespace: String,
}

/// A MAC is set once it is assigned.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct VipStatus {
    pub mac: String,
}
