//! The Go-compatible parsers and printers on arbitrary text: no panic, and
//! whatever parses prints back to the same address.
#![no_main]

use kube_ovn_policy::k8s::objects::BigInt;
use kube_ovn_policy::upstream::go_net::{format_ip, is_valid_mac, parse_cidr, parse_ip};
use kube_ovn_policy::upstream::go_strconv::{atoi, go_quote};
use kube_ovn_policy::upstream::kubeovn_util::{
    check_cidrs, check_protocol, cidr_contain_ip, ip_to_string, split_string_ip,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Some(ip) = parse_ip(text) {
        assert_eq!(parse_ip(&format_ip(&ip)), Some(ip), "{text:?}");
    }
    if let Some(cidr) = parse_cidr(text) {
        assert!(cidr.prefix <= cidr.bits);
        assert!(cidr.net.contains(&cidr.ip), "{text:?}");
    }
    let _ = is_valid_mac(text);
    let _ = check_protocol(text);
    let _ = check_cidrs(text);
    let _ = atoi(text);
    let _ = go_quote(text);
    let _ = split_string_ip(text);
    let _ = ip_to_string(text);
    let _ = BigInt::parse(text);
    let (cidrs, ips) = text.split_once('|').unwrap_or((text, text));
    let _ = cidr_contain_ip(cidrs, ips);
});
