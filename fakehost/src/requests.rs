//! The requests of the `kubewarden/kubernetes/*` host calls: the SDK's own
//! types, which are what the policy serializes, and its two list requests
//! read as one, since a list is answered the same way with or without a
//! namespace.

pub use kubewarden_policy_sdk::host_capabilities::kubernetes::{
    GetResourceRequest, ListAllResourcesRequest, ListResourcesByNamespaceRequest,
};
use std::collections::BTreeSet;

/// `list_resources_all` (no namespace) or `list_resources_by_namespace`.
#[derive(Debug)]
pub struct ListRequest {
    /// apiVersion
    pub api_version: String,
    /// Kind
    pub kind: String,
    /// The namespace, for `list_resources_by_namespace`.
    pub namespace: Option<String>,
    /// Label selector.
    pub label_selector: Option<String>,
    /// Field selector.
    pub field_selector: Option<String>,
    /// Field masks.
    pub field_masks: Option<BTreeSet<String>>,
}

impl ListRequest {
    /// Decodes the payload of `list_resources_by_namespace` (`by_namespace`)
    /// or of `list_resources_all` as the SDK's request type.
    pub fn decode(by_namespace: bool, payload: &[u8]) -> serde_json::Result<Self> {
        Ok(if by_namespace {
            serde_json::from_slice::<ListResourcesByNamespaceRequest>(payload)?.into()
        } else {
            serde_json::from_slice::<ListAllResourcesRequest>(payload)?.into()
        })
    }
}

impl From<ListAllResourcesRequest> for ListRequest {
    fn from(r: ListAllResourcesRequest) -> Self {
        ListRequest {
            api_version: r.api_version,
            kind: r.kind,
            namespace: None,
            label_selector: r.label_selector,
            field_selector: r.field_selector,
            field_masks: r.field_masks,
        }
    }
}

impl From<ListResourcesByNamespaceRequest> for ListRequest {
    fn from(r: ListResourcesByNamespaceRequest) -> Self {
        ListRequest {
            api_version: r.api_version,
            kind: r.kind,
            namespace: Some(r.namespace),
            label_selector: r.label_selector,
            field_selector: r.field_selector,
            field_masks: r.field_masks,
        }
    }
}
