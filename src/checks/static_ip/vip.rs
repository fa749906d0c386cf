//! I21: a Vip taken by a pod. `ovn.kubernetes.io/vip` makes
//! kube-ovn-controller give the pod's NICs a Vip's address
//! (`acquireAddress` → `podReuseVip`, `pkg/controller/pod.go:2486`,
//! `pkg/controller/vip.go:447` at 1533681d7a6b) without looking at the Vip's
//! `spec.namespace`, so a tenant could take a Vip meant for another
//! namespace; and it refuses a Vip another port has reserved
//! (`ovn.kubernetes.io/ip_reserved`) unless the pod is a StatefulSet's or a
//! VM's of that very port. A Vip that does not exist is not checked: the
//! controller refuses the pod itself (`failed to get static vip`).

use crate::admission::denial::Denial;
use crate::checks::static_ip::network::annotation;
use crate::checks::static_ip::owner::{Claim, Subject};
use crate::k8s::cluster::Cluster;

/// `ovn.kubernetes.io/vip` (`util.VipAnnotation`): the Vip a pod takes.
pub const VIP: &str = "ovn.kubernetes.io/vip";
/// `ovn.kubernetes.io/ip_reserved` (`util.IPReservedLabel`): the port a Vip
/// is reserved by.
pub const IP_RESERVED: &str = "ovn.kubernetes.io/ip_reserved";

/// Checks the Vip a claim names, if any: meant for the claim's namespace,
/// and not reserved by another port (403).
pub fn check_vip(claim: &Claim<'_>, cluster: &dyn Cluster) -> Result<(), Denial> {
    // Read as the controller reads it: not trimmed.
    let name = annotation(claim.annotations, VIP);
    if name.is_empty() {
        return Ok(());
    }
    let Some(vip) = cluster.pod_vip(name)? else {
        return Ok(());
    };
    if !vip.spec.namespace.is_empty() && vip.spec.namespace != claim.namespace {
        return Err(Denial::forbidden(format!(
            "vip {name} is reserved for namespace {}",
            vip.spec.namespace
        )));
    }
    let reserved_by = vip
        .metadata
        .labels
        .get(IP_RESERVED)
        .map_or("", String::as_str);
    if reserved_by.is_empty() || kept(claim, reserved_by) {
        return Ok(());
    }
    Err(Denial::forbidden(format!(
        "vip '{name}' is in use by pod {reserved_by}"
    )))
}

/// Whether the controller keeps a Vip reserved by `port` for this claim:
/// `keepVIP` (a StatefulSet's or a VM's pod) and the port the pod's primary
/// NIC has (`ovs.PodNameToPortName`: `<pod or VM>.<namespace>`). A workload
/// keeps it for the port of any pod it generates whose kind keeps Vips (a
/// StatefulSet); another workload's pods never get it.
fn kept(claim: &Claim<'_>, port: &str) -> bool {
    let Some(pod) = port
        .strip_suffix(claim.namespace)
        .and_then(|p| p.strip_suffix('.'))
    else {
        return false;
    };
    match &claim.subject {
        Subject::Pod {
            statefulset, vm, ..
        } => (statefulset.is_some() || *vm) && pod == claim.owner_name,
        Subject::Workload(w) => {
            w.kind == crate::checks::static_ip::owner::WorkloadKind::StatefulSet && w.generates(pod)
        }
    }
}
