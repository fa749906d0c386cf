//! Who claims an address: the claim itself, the name upstream compares with
//! an IP CR's `spec.podName`, and (I3) the workload whose pods may hold pool
//! addresses.

use crate::k8s::objects::OwnerReference;
use crate::upstream::go_strconv::go_atoi;
use std::collections::BTreeMap;
use std::fmt;

/// What is being admitted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Subject {
    /// A Pod, with the workload that controls it, if any (I3).
    Pod {
        /// The controlling workload, from the controller ownerReference.
        controller: Option<Workload>,
        /// Set when kube-ovn-controller allocates it as a StatefulSet's (I13).
        statefulset: Option<StatefulSetPod>,
        /// A KubeVirt launcher pod (`isVMPod`: an ownerReference of kind
        /// `VirtualMachineInstance` in `kubevirt.io`); its owner name is the VM's.
        vm: bool,
    },
    /// A workload, checked through its pod template.
    Workload(Workload),
}

/// A claim to static addresses: the annotations of a pod or of a
/// workload's pod template, and whose they are.
#[derive(Clone, Debug)]
pub struct Claim<'a> {
    /// The pod's (or pod template's) annotations.
    pub annotations: &'a BTreeMap<String, String>,
    /// The request's namespace.
    pub namespace: &'a str,
    /// The name upstream compares with `spec.podName`: pod, VM or workload name.
    pub owner_name: &'a str,
    /// Pod or workload.
    pub subject: Subject,
}

/// A workload kind whose pods Kube-OVN gives static addresses from its template.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WorkloadKind {
    /// apps/v1 Deployment: pods `<name>-<pod-template-hash>-<5 chars>`.
    Deployment,
    /// apps/v1 StatefulSet: pods `<name>-<ordinal>`.
    StatefulSet,
    /// apps/v1 DaemonSet: pods `<name>-<5 chars>`.
    DaemonSet,
    /// batch/v1 Job: pods `<name>-<5 chars>`.
    Job,
    /// batch/v1 CronJob: pods `<name>-<scheduled minute>-<5 chars>`.
    CronJob,
}

impl WorkloadKind {
    /// The kind for an admission request's `kind.kind`, if it is a workload.
    pub fn from_kind(kind: &str) -> Option<Self> {
        match kind {
            "Deployment" => Some(Self::Deployment),
            "StatefulSet" => Some(Self::StatefulSet),
            "DaemonSet" => Some(Self::DaemonSet),
            "Job" => Some(Self::Job),
            "CronJob" => Some(Self::CronJob),
            _ => None,
        }
    }
}

impl fmt::Display for WorkloadKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// A named workload in the request's namespace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Workload {
    /// Its kind, which decides how its pods are named.
    pub kind: WorkloadKind,
    /// `metadata.name`
    pub name: String,
}

impl Workload {
    /// Whether `pod_name` is a name this workload's controller gives its pods.
    pub fn generates(&self, pod_name: &str) -> bool {
        let Some(rest) = pod_name
            .strip_prefix(self.name.as_str())
            .and_then(|r| r.strip_prefix('-'))
        else {
            return false;
        };
        match self.kind {
            WorkloadKind::StatefulSet => is_digits(rest),
            WorkloadKind::DaemonSet | WorkloadKind::Job => is_random_suffix(rest),
            WorkloadKind::Deployment => rest
                .rsplit_once('-')
                .is_some_and(|(hash, suffix)| is_template_hash(hash) && is_random_suffix(suffix)),
            WorkloadKind::CronJob => rest
                .rsplit_once('-')
                .is_some_and(|(minute, suffix)| is_digits(minute) && is_random_suffix(suffix)),
        }
    }
}

fn is_digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// The characters of Kubernetes' `rand.String` (k8s.io/apimachinery
/// `util/rand`): no vowels, no `0`, `1` or `3`.
const NAME_ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

/// The 5 characters `generateName` appends.
fn is_random_suffix(s: &str) -> bool {
    s.len() == 5 && s.bytes().all(|b| NAME_ALPHABET.contains(&b))
}

/// A `pod-template-hash`: `rand.SafeEncodeString` of a decimal `uint32`, so
/// only the characters the digits map to (`'0'` is byte 48, 48 % 27 = 21: `4`).
fn is_template_hash(s: &str) -> bool {
    (1..=10).contains(&s.len())
        && s.bytes()
            .all(|b| matches!(b, b'4'..=b'9' | b'b' | b'c' | b'd' | b'f'))
}

/// The name upstream compares with `spec.podName`: the pod's own, or, for a
/// KubeVirt launcher pod, the VM's (first `kubevirt.io/*`
/// VirtualMachineInstance owner).
pub fn pod_owner_name<'a>(pod_name: &'a str, owners: &'a [OwnerReference]) -> &'a str {
    owners
        .iter()
        .find(|o| is_vmi(o))
        .map_or(pod_name, |o| o.name.as_str())
}

/// `isVMPod` (`pkg/controller/pod.go:3023`): a KubeVirt launcher pod, one
/// with an ownerReference of kind `VirtualMachineInstance` in `kubevirt.io`
/// (controller or not), even where the VM is named as the pod is.
pub fn is_vm_pod(owners: &[OwnerReference]) -> bool {
    owners.iter().any(is_vmi)
}

fn is_vmi(owner: &OwnerReference) -> bool {
    owner.kind == "VirtualMachineInstance" && owner.api_version.starts_with("kubevirt.io/")
}

/// The workload that controls a pod, from its controller ownerReference. A
/// ReplicaSet `<deployment>-<hash>` stands for its Deployment, so pods of
/// every revision of the Deployment count as siblings.
pub fn pod_workload(owners: &[OwnerReference]) -> Option<Workload> {
    let owner = owners.iter().find(|o| o.controller)?;
    let group = owner.api_version.split('/').next().unwrap_or_default();
    let (kind, name) = match (group, owner.kind.as_str()) {
        ("apps", "ReplicaSet") => {
            let deployment = owner
                .name
                .rsplit_once('-')
                .map_or(owner.name.as_str(), |(d, _)| d);
            (WorkloadKind::Deployment, deployment)
        }
        ("apps", "StatefulSet") => (WorkloadKind::StatefulSet, owner.name.as_str()),
        ("apps", "DaemonSet") => (WorkloadKind::DaemonSet, owner.name.as_str()),
        ("batch", "Job") => (WorkloadKind::Job, owner.name.as_str()),
        _ => return None,
    };
    Some(Workload {
        kind,
        name: name.to_string(),
    })
}

/// I13: a pod kube-ovn-controller allocates as a StatefulSet's
/// (`isStatefulSetPod`): it takes only the `ip_pool` group at its ordinal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StatefulSetPod {
    /// The StatefulSet's name.
    pub statefulset: String,
    /// The index of the pool group the pod takes.
    pub ordinal: u64,
}

/// The pod as a StatefulSet's, as kube-ovn-controller's `isStatefulSetPod`
/// decides (`pkg/controller/pod.go:1731`): the first ownerReference of kind
/// `StatefulSet` whose `apiVersion` starts with `apps/` and whose name
/// starts the pod's name, whether it is the controller or not.
pub fn statefulset_pod(pod_name: &str, owners: &[OwnerReference]) -> Option<StatefulSetPod> {
    let owner = owners.iter().find(|o| {
        o.kind == "StatefulSet"
            && o.api_version.starts_with("apps/")
            && pod_name.starts_with(o.name.as_str())
    })?;
    Some(StatefulSetPod {
        statefulset: owner.name.clone(),
        ordinal: ordinal(pod_name),
    })
}

/// The number after the last `-`, read as `acquireAddress` reads it with
/// Go's `strconv.Atoi`, whose error it ignores (`pod.go:2726`): text that is
/// not a number is 0, and a number past `i64::MAX` (digits that overflow
/// before any other byte, too) is `i64::MAX`, past every group. The last
/// part holds no `-`, so the value is never negative.
fn ordinal(pod_name: &str) -> u64 {
    let last = pod_name.rsplit('-').next().unwrap_or_default();
    u64::try_from(go_atoi(last).0).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use WorkloadKind::{CronJob, DaemonSet, Deployment, Job, StatefulSet};
    use rstest::rstest;

    #[rstest]
    #[case::statefulset_ordinal_0(StatefulSet, "web", "web-0", true)]
    #[case::statefulset_ordinal_12(StatefulSet, "web", "web-12", true)]
    #[case::statefulset_letter_ordinal(StatefulSet, "web", "web-x", false)]
    #[case::statefulset_no_ordinal(StatefulSet, "web", "web-", false)]
    #[case::statefulset_other_name(StatefulSet, "web", "webx-0", false)]
    #[case::statefulset_two_ordinals(StatefulSet, "web", "web-0-1", false)]
    #[case::daemonset_suffix(DaemonSet, "agent", "agent-x7k2p", true)]
    #[case::daemonset_extra_part(DaemonSet, "agent", "agent-extra-0", false)]
    #[case::job_suffix(Job, "migrate", "migrate-h7x2k", true)]
    #[case::job_short_suffix(Job, "migrate", "migrate-h7x2", false)]
    #[case::deployment_hash_and_suffix(Deployment, "web", "web-7d4b9c8f5-x2x7q", true)]
    #[case::deployment_no_hash(Deployment, "web", "web-x2x7q", false)]
    #[case::deployment_longer_name(Deployment, "web", "web-api-7d4b9c8f5-x2x7q", false)]
    #[case::deployment_upper_case_hash(Deployment, "web", "web-7D4b9c8f5-x2x7q", false)]
    #[case::cronjob_schedule_and_suffix(CronJob, "backup", "backup-29001234-bcdfg", true)]
    #[case::cronjob_letter_schedule(CronJob, "backup", "backup-x-bcdfg", false)]
    #[case::cronjob_no_schedule(CronJob, "backup", "backup-bcdfg", false)]
    // I3: the hash and suffix alphabets. Vowels, 0, 1 and 3 never
    // appear in a suffix; a hash holds only 4-9, b, c, d, f.
    #[case::job_suffix_vowel(Job, "migrate", "migrate-h7x2e", false)]
    #[case::job_suffix_digit_1(Job, "migrate", "migrate-h7x21", false)]
    #[case::daemonset_suffix_digit_3(DaemonSet, "agent", "agent-x7k3p", false)]
    #[case::cronjob_suffix_vowels(CronJob, "backup", "backup-29001234-abcde", false)]
    #[case::deployment_suffix_vowel(Deployment, "web", "web-7d4b9c8f5-x2x7e", false)]
    #[case::deployment_hash_vowels(Deployment, "web", "web-5e7a9c8d4-k2x9p", false)]
    #[case::deployment_hash_digit_0(Deployment, "web", "web-7d4b9c8f0-x2x7q", false)]
    #[case::deployment_ten_char_hash(Deployment, "web", "web-4567bcdf89-bcdfg", true)]
    #[case::deployment_eleven_char_hash(Deployment, "web", "web-4567bcdf894-bcdfg", false)]
    #[case::deployment_job_like_name(Deployment, "web", "web-migrate-h7x2k", false)]
    #[case::deployment_hash_6f5c8d7b9(Deployment, "web", "web-6f5c8d7b9-q7w2f", true)]
    #[case::deployment_hash_6f5c8d7b9_suffix_vowel(Deployment, "web", "web-6f5c8d7b9-q7w2e", false)]
    fn generated_pod_names(
        #[case] kind: WorkloadKind,
        #[case] name: &str,
        #[case] pod: &str,
        #[case] want: bool,
    ) {
        let w = Workload {
            kind,
            name: name.to_string(),
        };
        assert_eq!(w.generates(pod), want);
    }

    #[test]
    fn alphabets_are_kubernetes_own() {
        // SafeEncodeString maps each decimal digit to NAME_ALPHABET[byte % 27].
        let encoded: Vec<u8> = (b'0'..=b'9')
            .map(|d| NAME_ALPHABET[usize::from(d) % NAME_ALPHABET.len()])
            .collect();
        assert_eq!(encoded, b"456789bcdf");
        assert!(is_template_hash("456789bcdf"));
        assert!(!is_template_hash("456789bcdf4"), "a uint32 has 10 digits");
        assert!(!is_template_hash(""));
        for b in NAME_ALPHABET {
            assert!(is_random_suffix(&String::from_utf8(vec![*b; 5]).unwrap()));
        }
        for c in "aeiou013yA-".chars() {
            assert!(!is_random_suffix(&c.to_string().repeat(5)), "{c}");
            assert!(!is_template_hash(&c.to_string()), "{c}");
        }
        assert!(!is_random_suffix("bcdf"));
        assert!(!is_random_suffix("bcdfgh"));
    }

    #[rstest]
    #[case::zero("db-0", Some(0))]
    #[case::two("db-2", Some(2))]
    #[case::leading_zeros("db-007", Some(7))]
    #[case::plus_sign("db-+3", Some(3))]
    #[case::last_dash_wins("db-12-3", Some(3))]
    // Go's Atoi fails and acquireAddress uses its 0.
    #[case::no_digits("db-", Some(0))]
    #[case::letter("db-x", Some(0))]
    #[case::plus_only("db-+", Some(0))]
    #[case::two_plus_signs("db-++3", Some(0))]
    #[case::underscore("db-1_000", Some(0))]
    #[case::arabic_indic_digit("db-٣", Some(0))]
    #[case::no_dash("db", Some(0))]
    #[case::no_dash_other_name("dbx", Some(0))]
    // Past i64::MAX: Atoi's range error keeps the clamped value.
    #[case::i64_max("db-9223372036854775807", Some(9_223_372_036_854_775_807))]
    #[case::past_i64_max("db-9223372036854775808", Some(9_223_372_036_854_775_807))]
    #[case::past_u64_max(
        "db-99999999999999999999999999999999999999",
        Some(9_223_372_036_854_775_807)
    )]
    // Atoi's range error before its syntax error: the digits
    // overflow a uint64 before the letter is read.
    #[case::range_error_before_syntax_error(
        "db-999999999999999999999x",
        Some(9_223_372_036_854_775_807)
    )]
    #[case::syntax_error_within_u64("db-9999999999999999999x", Some(0))]
    // Not the StatefulSet's name: not a StatefulSet pod.
    #[case::other_name("web-0", None)]
    #[case::shorter_name("d-0", None)]
    fn statefulset_ordinals(#[case] pod: &str, #[case] want: Option<u64>) {
        let db = [owner("apps/v1", "StatefulSet", "db", true)];
        let got = statefulset_pod(pod, &db);
        assert_eq!(got.as_ref().map(|p| p.ordinal), want);
        if let Some(p) = got {
            assert_eq!(p.statefulset, "db");
        }
    }

    #[test]
    fn statefulset_ordinals_of_any_length_and_no_owner() {
        let db = [owner("apps/v1", "StatefulSet", "db", true)];
        let huge = format!("db-{}", "9".repeat(100_000));
        assert_eq!(
            statefulset_pod(&huge, &db).map(|p| p.ordinal),
            Some(i64::MAX.unsigned_abs())
        );
        assert_eq!(statefulset_pod("db-0", &[]), None);
    }

    #[rstest]
    #[case::apps_v1_controller(&[owner("apps/v1", "StatefulSet", "db", true)], Some("db"))]
    #[case::apps_v1_not_controller(&[owner("apps/v1", "StatefulSet", "db", false)], Some("db"))]
    #[case::apps_v1beta1(
        &[owner("apps/v1beta1", "StatefulSet", "db", true)],
        Some("db")
    )]
    #[case::apps_slash_only(&[owner("apps/", "StatefulSet", "db", true)], Some("db"))]
    #[case::apps_without_slash(&[owner("apps", "StatefulSet", "db", true)], None)]
    #[case::core_v1(&[owner("v1", "StatefulSet", "db", true)], None)]
    #[case::lower_case_kind(&[owner("apps/v1", "statefulset", "db", true)], None)]
    #[case::deployment(&[owner("apps/v1", "Deployment", "db", true)], None)]
    #[case::shorter_name_prefix(&[owner("apps/v1", "StatefulSet", "d", true)], Some("d"))]
    #[case::first_owner_whose_name_starts_the_pods(
        &[
            owner("apps/v1", "StatefulSet", "cache", true),
            owner("apps/v1", "StatefulSet", "db", false),
        ],
        Some("db")
    )]
    fn statefulset_owners_as_the_controller_reads_them(
        #[case] owners: &[OwnerReference],
        #[case] want: Option<&str>,
    ) {
        let got = statefulset_pod("db-1", owners);
        assert_eq!(got.as_ref().map(|p| p.statefulset.as_str()), want);
    }

    fn owner(api_version: &str, kind: &str, name: &str, controller: bool) -> OwnerReference {
        OwnerReference {
            api_version: api_version.into(),
            kind: kind.into(),
            name: name.into(),
            controller,
        }
    }

    #[test]
    fn pod_owners() {
        let vmi = [owner(
            "kubevirt.io/v1",
            "VirtualMachineInstance",
            "vm-a",
            true,
        )];
        assert_eq!(pod_owner_name("virt-launcher-vm-a-abcde", &vmi), "vm-a");
        let wrong_group = [owner(
            "example.com/v1",
            "VirtualMachineInstance",
            "vm-a",
            true,
        )];
        assert_eq!(
            pod_owner_name("virt-launcher-vm-a-abcde", &wrong_group),
            "virt-launcher-vm-a-abcde"
        );
        assert_eq!(pod_workload(&vmi), None);

        let rs = [owner("apps/v1", "ReplicaSet", "web-7d4b9c8f5", true)];
        assert_eq!(
            pod_workload(&rs),
            Some(Workload {
                kind: WorkloadKind::Deployment,
                name: "web".into()
            })
        );
        let sts = [
            owner("apps/v1", "StatefulSet", "db", false),
            owner("apps/v1", "StatefulSet", "db", true),
        ];
        assert_eq!(
            pod_workload(&sts),
            Some(Workload {
                kind: WorkloadKind::StatefulSet,
                name: "db".into()
            })
        );
        assert_eq!(
            pod_workload(&[owner("apps/v1", "StatefulSet", "db", false)]),
            None
        );
    }
}
