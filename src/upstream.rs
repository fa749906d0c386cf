//! Ports of Go and Kube-OVN functions whose exact behaviour the messages depend on.

pub mod net;
