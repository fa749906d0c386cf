//! The checks, one module per Kube-OVN kind family.

pub mod ip;
pub mod nat;
pub mod static_ip;
pub mod subnet;
pub mod subnet_address;
pub mod vip;
pub mod vpc;
