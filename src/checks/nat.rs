//! The NAT kinds: the VPC NAT gateway, its iptables rules, and OVN's.

pub mod gateway;
pub mod iptables;
pub mod ovn;
