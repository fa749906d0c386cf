//! The checks, one module per Kube-OVN kind family. Each kind's module has
//! an `admit` that matches the operation and runs upstream's checks in
//! upstream's order:
//!
//! | kind | module |
//! |---|---|
//! | Pod; Deployment, StatefulSet, DaemonSet, Job, CronJob | [`static_ip`] (entries and order; below it [`static_ip::network`], [`static_ip::conflicts`], [`static_ip::pools`], [`static_ip::status`], [`static_ip::in_subnet`], [`static_ip::owner`], [`static_ip::networks`], [`static_ip::attached`], [`static_ip::landing`] (I5), [`static_ip::lifecycle`] (I18), [`static_ip::vip`]) |
//! | Subnet | [`subnet`] |
//! | Vpc | [`vpc`] |
//! | Vip | [`vip`] |
//! | IP | [`ip`] |
//! | IPPool | [`ippool`] (I14) |
//! | NetworkAttachmentDefinition | [`nad`] (I20) |
//! | VpcNatGateway | [`nat::gateway`] |
//! | IptablesEIP, IptablesDnatRule, IptablesSnatRule, IptablesFIPRule | [`nat::iptables`] |
//! | OvnEip, OvnDnatRule, OvnSnatRule, OvnFip | [`nat::ovn`] |
//!
//! [`subnet_address`] is the "address in its subnet" check that Vip, IP and
//! the EIP kinds share.
//!
//! `I<n>` in comments names the improvement of the contract a piece of code
//! carries out (`docs/differences.md` has each in full): I1 addresses
//! compared by value; I2 ownership needs name and namespace; I3 workloads
//! own their pods' addresses; I4 pools with `;`; I5 the subnet a pod lands
//! in; I6 static IPs checked against their subnet; I7 attachment networks;
//! I8 the default VPC; I9 the apiserver address; I10 workload updates; I11
//! audit; I12 determinism (the first by name); I13 pools as the controller
//! allocates them; I14 IPPool objects as the controller's IPAM takes them;
//! I15 the subnet's own record of what is in use; I16 no exemption by
//! annotation; I17 every address the controller will hand out; I18 Pod
//! UPDATE; I19 IPPool namespaces; I20 NetworkAttachmentDefinitions; I21
//! Vips taken by pods. Every lookup is bounded, and a pod's NICs capped
//! (`maxNetworksPerPod`): docs/lookups.md.

pub mod ip;
pub mod ippool;
pub mod nad;
pub mod nat;
pub mod static_ip;
pub mod subnet;
pub mod subnet_address;
pub mod vip;
pub mod vpc;
