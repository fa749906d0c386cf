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
use crate::k8s::objects::{ObjectMeta, Pod};
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
/// update, at `now` (nanoseconds since the Unix epoch, the evaluation's
/// clock). `owned`: a StatefulSet's or a VM's pod by its ownerReferences
/// (`isStatefulSetPod`, `isVMPod`), which `enqueueUpdatePod` keeps
/// queueing for allocation while it is being deleted (pod.go:397-424).
pub fn allocating(pod: &Pod, selections: &Selections<'_>, owned: bool, now: i128) -> Allocating {
    if !phase_alive(pod) {
        return Allocating::Nothing;
    }
    // Any other pod being deleted goes to the delete queue (pod.go:409).
    if pod.metadata.deletion_timestamp.is_some() && !owned {
        return Allocating::Nothing;
    }
    // An owned one is allocated until deletionTimestamp plus its grace
    // period (`isPodAlive`, pod.go:166, called by `needAllocateSubnets`,
    // pod.go:1872): past that, nothing.
    if past_grace(&pod.metadata, now) {
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

/// The evaluation's clock, in nanoseconds since the Unix epoch (WASI's
/// wall clock in the policy-server); 0 where it cannot be read, which
/// keeps every pod alive (the policy then checks more, never less).
pub fn now() -> i128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i128::try_from(d.as_nanos()).unwrap_or(i128::MAX))
}

/// `isPodAlive`'s first test (pod.go:166-173), where the grace period is
/// set: `now.After(deletionTimestamp.Add(time.Duration(grace) * time.Second))`.
/// Go's `Duration` product wraps at 64 bits, as here. A timestamp that does
/// not parse (the API server writes RFC 3339) keeps the pod alive.
fn past_grace(meta: &ObjectMeta, now: i128) -> bool {
    let (Some(serde_json::Value::String(stamp)), Some(grace)) =
        (&meta.deletion_timestamp, meta.deletion_grace_period_seconds)
    else {
        return false;
    };
    let Some(deleted) = parse_rfc3339(stamp) else {
        return false;
    };
    now > deleted + i128::from(grace.wrapping_mul(1_000_000_000))
}

/// An RFC 3339 time (`2006-01-02T15:04:05Z`, with an optional fraction and
/// a `Z` or `±hh:mm` zone, as `metav1.Time` reads it) in nanoseconds since
/// the Unix epoch; `None` where it is not one.
fn parse_rfc3339(s: &str) -> Option<i128> {
    let b = s.as_bytes();
    let num = |from: usize, len: usize| -> Option<i128> {
        let digits = b.get(from..from + len)?;
        digits.iter().try_fold(0i128, |n, d| {
            d.is_ascii_digit().then(|| n * 10 + i128::from(d - b'0'))
        })
    };
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't') {
        return None;
    }
    if b[13] != b':' || b[16] != b':' {
        return None;
    }
    let (year, month, day) = (num(0, 4)?, num(5, 2)?, num(8, 2)?);
    let (hour, minute, second) = (num(11, 2)?, num(14, 2)?, num(17, 2)?);
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || minute > 59 {
        return None;
    }
    if second > 59 {
        return None;
    }
    let mut i = 19;
    let mut nanos = 0i128;
    if b.get(i) == Some(&b'.') {
        let start = i + 1;
        i = start;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        if i == start {
            return None;
        }
        let digits = &s[start..i.min(start + 9)];
        nanos = digits.parse::<i128>().ok()? * 10i128.pow(9 - u32::try_from(digits.len()).ok()?);
    }
    let offset = match &b[i..] {
        [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), _, _, b':', _, _] => {
            let (h, m) = (num(i + 1, 2)?, num(i + 4, 2)?);
            if h > 23 || m > 59 {
                return None;
            }
            let offset = (h * 60 + m) * 60;
            if *sign == b'+' { offset } else { -offset }
        }
        _ => return None,
    };
    // Days from the civil date (Howard Hinnant's `days_from_civil`).
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let seconds = days * 86_400 + hour * 3_600 + minute * 60 + second - offset;
    Some(seconds * 1_000_000_000 + nanos)
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
        allocating(pod, &selections, owned, now())
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

    fn deleting(stamp: &str, grace: Option<i64>) -> Pod {
        let mut pod = pod(&[], "Running", "Always", "");
        pod.metadata.deletion_timestamp = Some(stamp.into());
        pod.metadata.deletion_grace_period_seconds = grace;
        pod
    }

    /// `isPodAlive` (pod.go:166): an owned pod being deleted is allocated
    /// until deletionTimestamp plus its grace period, by the clock; with no
    /// grace period set, while its phase is alive.
    #[rstest]
    #[case::past("2020-01-01T00:00:00Z", Some(30), false)]
    #[case::future("2099-01-01T00:00:00Z", Some(30), true)]
    #[case::no_grace_period("2020-01-01T00:00:00Z", None, true)]
    #[case::grace_past_now("2020-01-01T00:00:00Z", Some(9_000_000_000), true)]
    // 10^10 s overflows Go's Duration and wraps to a negative one: past.
    #[case::grace_wraps_in_go("2099-01-01T00:00:00Z", Some(10_000_000_000), false)]
    #[case::offset_zone("2099-01-01T00:00:00+05:00", Some(0), true)]
    #[case::unparsable("yesterday", Some(0), true)]
    fn an_owned_pod_being_deleted_by_the_clock(
        #[case] stamp: &str,
        #[case] grace: Option<i64>,
        #[case] alive: bool,
    ) {
        let want = if alive {
            only(&["ovn"])
        } else {
            Allocating::Nothing
        };
        assert_eq!(decide(&deleting(stamp, grace), true), want);
        assert_eq!(decide(&deleting(stamp, grace), false), Allocating::Nothing);
    }

    #[rstest]
    #[case::utc("1970-01-01T00:00:00Z", Some(0))]
    #[case::second("1970-01-01T00:00:01Z", Some(1_000_000_000))]
    #[case::fraction("1970-01-01T00:00:01.5Z", Some(1_500_000_000))]
    #[case::zone("1970-01-01T01:00:00+01:00", Some(0))]
    #[case::leap_day("2024-02-29T00:00:00Z", Some(1_709_164_800_000_000_000))]
    #[case::no_zone("2024-02-29T00:00:00", None)]
    #[case::month_13("2024-13-01T00:00:00Z", None)]
    #[case::empty_fraction("2024-01-01T00:00:00.Z", None)]
    fn rfc3339_as_go_reads_it(#[case] text: &str, #[case] nanos: Option<i128>) {
        assert_eq!(parse_rfc3339(text), nanos);
    }
}
