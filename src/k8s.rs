//! Kubernetes and Kube-OVN objects, and every lookup of them.

pub mod cluster;
#[cfg(test)]
pub mod fake;
pub mod names;
pub mod objects;
