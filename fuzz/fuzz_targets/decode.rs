//! The decoder the policy reads every request and lookup answer with
//! (`src/k8s/decode.rs`) on arbitrary bytes: no panic; what it accepts is
//! JSON (serde_json accepts the same text); and a text made of
//! the value with every `null` removed from objects decodes to the same
//! object, since `null` is read as an absent key.
#![no_main]

use kube_ovn_policy::admission::ValidationRequest;
use kube_ovn_policy::k8s::decode::from_slice;
use kube_ovn_policy::k8s::objects::{Ip, Subnet, Vip, WorkloadObject};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

/// The value with every object member whose value is `null` removed.
fn without_nulls(value: Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k, without_nulls(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(without_nulls).collect()),
        other => other,
    }
}

fn is_json(data: &[u8]) {
    serde_json::from_slice::<serde::de::IgnoredAny>(data).expect("decoded text is JSON");
}

fn check<T>(data: &[u8])
where
    T: for<'a> serde::Deserialize<'a> + PartialEq + std::fmt::Debug,
{
    let Ok(decoded) = from_slice::<T>(data) else {
        return;
    };
    is_json(data);
    // A number beyond f64 is JSON, skipped where no field reads it, but no `Value`.
    let Ok(value) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    if value.is_object() {
        let text = serde_json::to_vec(&without_nulls(value)).expect("re-encoded");
        assert_eq!(from_slice::<T>(&text).ok().as_ref(), Some(&decoded));
    }
}

fuzz_target!(|data: &[u8]| {
    check::<Subnet>(data);
    check::<Ip>(data);
    check::<Vip>(data);
    check::<WorkloadObject>(data);
    if from_slice::<ValidationRequest<'_>>(data).is_ok() {
        is_json(data);
    }
});
