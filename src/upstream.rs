//! Ports of Go and Kube-OVN functions whose exact behaviour the messages
//! depend on (README.md names the versions they follow).

pub mod go_json;
pub mod go_net;
pub mod go_strconv;
pub mod kubeovn_ipam;
pub mod kubeovn_util;
