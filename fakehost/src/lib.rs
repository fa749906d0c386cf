//! `fakehost`: what the policy-server answers to the policy's
//! `kubewarden/kubernetes/*` host calls, in one place for every test seam:
//!
//! - [`cluster::ClusterState`] answers them from a test's objects, with
//!   selectors, field masks and scripted failures. The policy's own unit
//!   tests run their checks through the real `HostCluster` over it
//!   (`src/k8s/fake.rs`'s `FakeHost`); testhost serves it to `policy.wasm`.
//! - [`answers`] and [`requests`] are policy-evaluator's texts, envelopes
//!   and request types, which kop-serve also answers a real API server's
//!   objects with.
//! - [`kinds`] is the policy's kind table as `kinds.json` holds it, so that
//!   this crate does not depend on the policy (the policy takes it as a
//!   dev-dependency).

pub mod answers;
pub mod cluster;
pub mod kinds;
pub mod requests;

use std::error::Error;

/// Any error, as the host calls' answers carry it.
pub type BoxError = Box<dyn Error + Send + Sync>;
