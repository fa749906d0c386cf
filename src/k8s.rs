//! Kubernetes and Kube-OVN objects, and every lookup of them.

pub mod cluster;
pub mod decode;
#[cfg(test)]
pub mod fake;
pub mod kinds;
pub mod names;
pub mod objects;
pub mod scan;
