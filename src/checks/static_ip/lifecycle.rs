//! I18: the NICs a Pod UPDATE makes kube-ovn-controller allocate, decided
//! as the controller decides them, from the pod as it will be and never
//! from a diff (`enqueueUpdatePod`, `isPodAlive` and `needAllocateSubnets`,
//! `pkg/controller/pod.go` at 1533681d7a6b).
//!
//! On every update event of a pod the controller allocates, for a pod that
//! is alive, every NIC when the pod carries `kubevirt.io/migrationJobName`
//! (any value, pod.go:1881), else each NIC, the primary one included, whose
//! `<provider>.kubernetes.io/allocated` is not `"true"` (pod.go:1888), with
//! the providers the new object's network selections give. Whatever the
//! update changed: it allocates on the next event it sees.

use super::MIGRATION_JOB;
use super::network::{OVN_PROVIDER, annotation, provider_key};
use super::networks::{DEFAULT_NETWORK, Selections};
use crate::k8s::objects::Pod;
use std::collections::BTreeSet;

/// What kube-ovn-controller allocates after an update.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Allocating {
    /// Nothing: every NIC is allocated, or the pod is not alive.
    Nothing,
    /// Every NIC (the migration key).
    Every,
    /// The NICs of these providers (`ovn` the primary one). A selection's
    /// provider is named in every form it may take (its NAD may be created
    /// or retyped later, I20); a NIC's own provider decides.
    Only(BTreeSet<String>),
}

/// What kube-ovn-controller allocates for `pod` as it will be after the
/// update. `owned`: a StatefulSet's or a VM's pod (`isStatefulSetPod`,
/// `isVMPod`), which the controller keeps allocating while it is being
/// deleted (pod.go:397-424).
pub fn allocating(pod: &Pod, selections: &Selections<'_>, owned: bool) -> Allocating {
    if !phase_alive(pod) {
        return Allocating::Nothing;
    }
    // Any other pod being deleted goes to the delete queue (pod.go:409).
    // Owned ones are alive until deletionTimestamp + their grace period
    // (`isPodAlive`, pod.go:166); the policy reads no clock, so it treats
    // them as alive throughout: after that it only checks what the
    // controller no longer allocates.
    if pod.metadata.deletion_timestamp.is_some() && !owned {
        return Allocating::Nothing;
    }
    let annotations = &pod.metadata.annotations;
    if annotations.contains_key(MIGRATION_JOB) {
        return Allocating::Every;
    }
    let mut providers = BTreeSet::new();
    // The primary NIC, unless another default network replaces it
    // (`getPodKubeovnNets`, pod.go:482).
    if !annotations.contains_key(DEFAULT_NETWORK) {
        providers.insert(OVN_PROVIDER.to_string());
    }
    for entry in selections.entries.as_deref().unwrap_or_default() {
        providers.extend(entry.candidate_providers());
    }
    providers.retain(|p| annotation(annotations, &provider_key(p, "allocated")) != "true");
    if providers.is_empty() {
        Allocating::Nothing
    } else {
        Allocating::Only(providers)
    }
}

/// `isPodStatusPhaseAlive` (pod.go:178): a pod that has finished for good
/// is never allocated again.
fn phase_alive(pod: &Pod) -> bool {
    let (phase, policy) = (pod.status.phase.as_str(), pod.spec.restart_policy.as_str());
    !((phase == "Succeeded" && policy != "Always")
        || (phase == "Failed" && policy == "Never")
        || (phase == "Failed" && pod.status.reason == "Evicted"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::static_ip::networks;
    use crate::k8s::objects::{ObjectMeta, PodSpec, PodStatus};
    use rstest::rstest;
    use std::collections::BTreeMap;

    fn pod(annotations: &[(&str, &str)], phase: &str, policy: &str, reason: &str) -> Pod {
        Pod {
            metadata: ObjectMeta {
                annotations: annotations
                    .iter()
                    .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
                    .collect(),
                ..ObjectMeta::default()
            },
            spec: PodSpec {
                restart_policy: policy.to_string(),
            },
            status: PodStatus {
                phase: phase.to_string(),
                reason: reason.to_string(),
            },
        }
    }

    fn only(providers: &[&str]) -> Allocating {
        Allocating::Only(providers.iter().map(|p| (*p).to_string()).collect())
    }

    fn decide(pod: &Pod, owned: bool) -> Allocating {
        let selections = networks::read(&pod.metadata.annotations, "default");
        allocating(pod, &selections, owned)
    }

    #[rstest]
    #[case::succeeded_never("Succeeded", "Never", "", false)]
    #[case::succeeded_on_failure("Succeeded", "OnFailure", "", false)]
    #[case::succeeded_always("Succeeded", "Always", "", true)]
    #[case::failed_never("Failed", "Never", "", false)]
    #[case::failed_on_failure("Failed", "OnFailure", "", true)]
    #[case::failed_evicted("Failed", "Always", "Evicted", false)]
    #[case::running("Running", "Always", "", true)]
    #[case::pending_no_status("", "", "", true)]
    fn phases_as_the_controller_reads_them(
        #[case] phase: &str,
        #[case] policy: &str,
        #[case] reason: &str,
        #[case] alive: bool,
    ) {
        let pod = pod(
            &[("ovn.kubernetes.io/ip_address", "10.16.0.9")],
            phase,
            policy,
            reason,
        );
        let want = if alive {
            only(&["ovn"])
        } else {
            Allocating::Nothing
        };
        assert_eq!(decide(&pod, false), want);
    }

    #[test]
    fn allocated_marks_and_the_migration_key() {
        let allocated = [
            ("ovn.kubernetes.io/allocated", "true"),
            ("k8s.v1.cni.cncf.io/networks", "net1"),
            ("net1.default.ovn.kubernetes.io/allocated", "true"),
            ("net1.default.kubernetes.io/allocated", "true"),
        ];
        assert_eq!(
            decide(&pod(&allocated, "Running", "Always", ""), false),
            Allocating::Nothing
        );
        let mut migrating = allocated.to_vec();
        migrating.push((MIGRATION_JOB, ""));
        assert_eq!(
            decide(&pod(&migrating, "Running", "Always", ""), false),
            Allocating::Every
        );
        // Not "true" is not allocated; the primary NIC counts too.
        let unmarked = [
            ("ovn.kubernetes.io/allocated", "True"),
            ("k8s.v1.cni.cncf.io/networks", "net1"),
            ("net1.default.ovn.kubernetes.io/allocated", "true"),
        ];
        assert_eq!(
            decide(&pod(&unmarked, "Running", "Always", ""), false),
            only(&["net1.default", "ovn"])
        );
    }

    #[test]
    fn a_second_entry_of_a_nad_renames_the_first_ones_provider() {
        let renamed = [
            ("ovn.kubernetes.io/allocated", "true"),
            ("k8s.v1.cni.cncf.io/networks", "net1@eth1,net1@eth2"),
            ("net1.default.ovn.kubernetes.io/allocated", "true"),
            ("net1.default.kubernetes.io/allocated", "true"),
        ];
        assert_eq!(
            decide(&pod(&renamed, "Running", "Always", ""), false),
            only(&["net1.default.ovn.eth1", "net1.default.ovn.eth2"])
        );
    }

    #[test]
    fn another_default_network_replaces_the_primary_nic() {
        let replaced = [("v1.multus-cni.io/default-network", "net1")];
        assert_eq!(
            decide(&pod(&replaced, "Running", "Always", ""), false),
            only(&["net1.default", "net1.default.ovn"])
        );
    }

    #[test]
    fn a_pod_being_deleted_unless_a_statefulsets_or_a_vms() {
        let mut dying = pod(&[], "Running", "Always", "");
        dying.metadata.deletion_timestamp = Some("2026-12-06T00:00:00Z".into());
        assert_eq!(decide(&dying, false), Allocating::Nothing);
        assert_eq!(decide(&dying, true), only(&["ovn"]));
        let annotations: BTreeMap<String, String> = BTreeMap::new();
        dying.metadata.annotations = annotations;
        dying.metadata.deletion_timestamp = None;
        assert_eq!(decide(&dying, false), only(&["ovn"]));
    }
}
