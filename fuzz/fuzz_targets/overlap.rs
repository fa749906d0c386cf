//! The overlap check on two arbitrary CIDR lists (`a|b`): no panic, and
//! symmetric whenever every block parses.
#![no_main]

use kube_ovn_policy::upstream::go_net::parse_cidr;
use kube_ovn_policy::upstream::kubeovn_util::{check_cidrs, cidr_overlap, nets_overlap};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Some((a, b)) = text.split_once('|') else {
        return;
    };
    let ab = cidr_overlap(a, b);
    let ba = cidr_overlap(b, a);
    if check_cidrs(a) && check_cidrs(b) {
        assert_eq!(ab, ba, "{a:?} {b:?}");
    }
    if let (Some(x), Some(y)) = (parse_cidr(a), parse_cidr(b)) {
        assert_eq!(nets_overlap(&x.net, &y.net), nets_overlap(&y.net, &x.net));
        assert_eq!(nets_overlap(&x.net, &y.net), ab, "{a:?} {b:?}");
    }
});
