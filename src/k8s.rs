//! Kubernetes and Kube-OVN objects, and every lookup of them.

pub mod cluster;
pub mod objects;
