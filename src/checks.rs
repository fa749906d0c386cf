//! The checks, one module per Kube-OVN kind family. Each kind's module has
//! an `admit` that matches the operation and runs upstream's checks in
//! upstream's order:
//!
//! | kind | module |
//! |---|---|
//! | Pod; Deployment, StatefulSet, DaemonSet, Job, CronJob | [`static_ip`] (entries and order; below it [`static_ip::network`], [`static_ip::conflicts`], [`static_ip::pools`], [`static_ip::in_subnet`], [`static_ip::owner`]) |
//! | Subnet | [`subnet`] |
//! | Vpc | [`vpc`] |
//! | Vip | [`vip`] |
//! | IP | [`ip`] |
//! | VpcNatGateway | [`nat::gateway`] |
//! | IptablesEIP, IptablesDnatRule, IptablesSnatRule, IptablesFIPRule | [`nat::iptables`] |
//! | OvnEip, OvnDnatRule, OvnSnatRule, OvnFip | [`nat::ovn`] |
//!
//! [`subnet_address`] is the "address in its subnet" check that Vip, IP and
//! the EIP kinds share.

pub mod ip;
pub mod nat;
pub mod static_ip;
pub mod subnet;
pub mod subnet_address;
pub mod vip;
pub mod vpc;
