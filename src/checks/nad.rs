//! I20: NetworkAttachmentDefinition CREATE and UPDATE. Upstream's webhook
//! never sees them; kube-ovn-controller reads a NAD's config only when a pod
//! selects it (`loadNetConf`, `IsOvnNetwork`, multus
//! `LoadDelegateNetConfList`), and panics on a config whose `plugins` list
//! is empty or whose plugin it reaches is `null` (measured at
//! 1533681d7a6b: it exits and crash-loops while such a pod exists). A pod
//! that selects a NAD is checked when it is created (§5), but the NAD can be
//! written after the pod: so the NAD itself is refused here.

use crate::admission::denial::Denial;
use crate::admission::{Operation, Request};
use crate::checks::static_ip::networks::crashes_controller;
use crate::k8s::objects::NetworkAttachmentDefinition;

/// Admits a NetworkAttachmentDefinition CREATE or UPDATE whose config
/// kube-ovn-controller can read without crashing (400 otherwise).
pub fn admit(request: &Request<'_>) -> Result<(), Denial> {
    if !matches!(request.operation, Operation::Create | Operation::Update) {
        return Ok(());
    }
    let nad: NetworkAttachmentDefinition = request.object()?;
    let namespace = if nad.metadata.namespace.is_empty() {
        &request.namespace
    } else {
        &nad.metadata.namespace
    };
    let name = if nad.metadata.name.is_empty() {
        &request.name
    } else {
        &nad.metadata.name
    };
    if crashes_controller(&nad.spec.config) {
        return Err(Denial::bad_request(format!(
            "network-attachment-definition {namespace}/{name}: kube-ovn-controller panics on a pod that selects it: its plugins list is empty or holds a null it reaches"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::admission::Request;
    use rstest::rstest;
    use serde_json::json;

    fn decide(operation: &str, config: &str) -> Result<(), Denial> {
        let raw = json!({
            "uid": "1", "kind": {"group": "k8s.cni.cncf.io", "version": "v1", "kind": "NetworkAttachmentDefinition"},
            "operation": operation, "name": "net-a", "namespace": "team-a",
            "object": {"metadata": {"name": "net-a", "namespace": "team-a"}, "spec": {"config": config}},
        })
        .to_string();
        let request: Request<'_> = crate::k8s::decode::from_slice(raw.as_bytes()).expect("request");
        admit(&request)
    }

    #[rstest]
    #[case::kube_ovn(
        r#"{"cniVersion":"0.3.1","type":"kube-ovn","provider":"net-a.team-a.ovn"}"#,
        true
    )]
    #[case::macvlan(
        r#"{"type":"macvlan","master":"eth0","ipam":{"type":"host-local"}}"#,
        true
    )]
    #[case::empty_config("", true)]
    #[case::not_json_is_for_pods_to_meet("not json", true)]
    #[case::empty_plugins(r#"{"plugins":[]}"#, false)]
    #[case::null_first_plugin(r#"{"plugins":[null]}"#, false)]
    #[case::kube_ovn_before_the_null(r#"{"plugins":[{"type":"kube-ovn"},null]}"#, true)]
    fn a_config_that_crashes_the_controller_is_refused(
        #[case] config: &str,
        #[case] admitted: bool,
    ) {
        for operation in ["CREATE", "UPDATE"] {
            let got = decide(operation, config);
            if admitted {
                assert_eq!(got, Ok(()), "{config}");
            } else {
                assert_eq!(
                    got,
                    Err(Denial::bad_request(
                        "network-attachment-definition team-a/net-a: kube-ovn-controller panics on a pod that selects it: its plugins list is empty or holds a null it reaches"
                    )),
                    "{config}"
                );
            }
        }
        assert_eq!(decide("DELETE", r#"{"plugins":[]}"#), Ok(()));
    }
}
