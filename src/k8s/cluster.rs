//! Every lookup the policy makes goes through here.
//!
//! Checks see the cluster through the [`Cluster`] trait: the policy-server's
//! host capabilities in production ([`HostCluster`]), an in-memory fake in
//! unit tests. Each lookup is made at most once per evaluation and only when
//! a check needs it; results are memoised for the rest of the evaluation.
//! Kube-OVN's kinds are cluster-scoped, so they are listed with
//! `list_resources_all` (served from the policy-server's watch cache) or
//! fetched with `get_resource` and no namespace.
//!
//! The answers are decoded here rather than by the SDK's typed helpers, so
//! that IP objects are read with borrowed strings and only those of the
//! subnet asked about are kept, and so that the same code runs natively
//! (benchmarks, fuzzing) over any [`Host`].
//!
//! By job: [`view`] what the checks may ask; [`host`] the host calls and
//! what each evaluation keeps of their answers; [`bounds`] what each lookup
//! reads (field masks, selectors, the cache of GETs); [`answers`] how an
//! answer is read.

pub mod answers;
pub mod bounds;
pub mod host;
pub mod view;

pub use bounds::{
    IP_FIELD_MASKS, IPPOOL_LIST_FIELD_MASKS, METADATA_FIELD_MASKS, NAD_FIELD_MASKS,
    SUBNET_AVAILABLE_FIELD_MASKS, SUBNET_FIELD_MASKS, SUBNET_GET_FIELD_MASKS, SUBNET_LABEL,
    VIP_FIELD_MASKS, VPC_FIELD_MASKS, VPC_REFERRER_FIELD_MASKS,
};
pub use host::{Host, HostCluster, Wapc};
pub use view::{AddressSet, Cluster, LookupError, OvnNatKind};
