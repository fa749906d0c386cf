//! The admission exchange with the policy-server: the ValidationRequest
//! envelope with the AdmissionRequest inside it, the helpers a check's
//! `admit` uses to decode `object` / `oldObject`, and the response.

pub mod denial;

use crate::k8s::cluster::LookupError;
use crate::k8s::decode::{self, Raw};
use denial::Denial;
use serde::{Deserialize, Deserializer};
use std::borrow::Cow;

/// `{"settings": …, "request": <AdmissionRequest>}`, the fields read.
#[derive(Default, Deserialize)]
#[serde(default)]
pub struct ValidationRequest<'a> {
    /// Read by [`crate::settings::Settings::from_json`].
    #[serde(borrow)]
    pub settings: Option<Raw<'a>>,
    /// Required: `None` when absent or `null`.
    #[serde(borrow)]
    pub request: Option<Request<'a>>,
}

/// The AdmissionRequest fields the checks read.
#[derive(Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Request<'a> {
    /// The group and kind dispatch goes by.
    pub kind: GroupVersionKind,
    pub operation: Operation,
    pub name: String,
    pub namespace: String,
    /// Undecoded: each check decodes it as its own type.
    #[serde(borrow)]
    pub object: Option<Raw<'a>>,
    #[serde(borrow)]
    pub old_object: Option<Raw<'a>>,
}

/// The `kind` of an AdmissionRequest.
#[derive(Default, Deserialize)]
#[serde(default)]
pub struct GroupVersionKind {
    /// Empty for the core group.
    pub group: String,
    pub kind: String,
}

/// An admission operation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Operation {
    /// `CREATE`
    Create,
    /// `UPDATE`
    Update,
    /// `DELETE`
    Delete,
    /// Anything else (`CONNECT`, or none): no check admits it.
    #[default]
    Other,
}

impl<'de> Deserialize<'de> for Operation {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(match Cow::<str>::deserialize(d)?.as_ref() {
            "CREATE" => Operation::Create,
            "UPDATE" => Operation::Update,
            "DELETE" => Operation::Delete,
            _ => Operation::Other,
        })
    }
}

impl<'a> Request<'a> {
    /// The `object`, decoded (400 when absent or undecodable).
    pub fn object<T: Deserialize<'a>>(&self) -> Result<T, Denial> {
        decode(&self.kind.kind, self.object)
    }

    /// The `oldObject`, decoded (400 when absent or undecodable).
    pub fn old_object<T: Deserialize<'a>>(&self) -> Result<T, Denial> {
        decode(&self.kind.kind, self.old_object)
    }

    /// The `oldObject` decoded when there is one.
    pub fn old_object_if_any<T: Deserialize<'a>>(&self) -> Result<Option<T>, Denial> {
        self.old_object
            .map(|raw| decode(&self.kind.kind, Some(raw)))
            .transpose()
    }

    /// The `object` and `oldObject` of an UPDATE, decoded in that order.
    pub fn update<T: Deserialize<'a>>(&self) -> Result<(T, T), Denial> {
        Ok((self.object()?, self.old_object()?))
    }
}

/// Decodes an admission `object` / `oldObject`; `null` or absent is
/// upstream's "there is no content to decode" (400), and so is any object
/// that does not decode (400, with the decoder's reason).
pub fn decode<'a, T: Deserialize<'a>>(kind: &str, object: Option<Raw<'a>>) -> Result<T, Denial> {
    let Some(raw) = object else {
        return Err(Denial::bad_request("there is no content to decode"));
    };
    decode::from_str(raw.get())
        .map_err(|e| Denial::bad_request(format!("cannot decode {kind} object: {e}")))
}

impl From<LookupError> for Denial {
    fn from(e: LookupError) -> Self {
        Denial::bad_request(e.to_string())
    }
}

/// A decision: admitted with its warnings (the admission warnings kubectl
/// prints, I13), or denied.
pub type Verdict = Result<Vec<String>, Denial>;

/// The SDK's `ValidationResponse`, as `accept_request` / `reject_request`
/// write it, without the `serde_json::Value` of a mutated object a
/// validating policy never sends (and the code to print it).
#[derive(serde::Serialize)]
struct ValidationResponse<'a> {
    accepted: bool,
    message: Option<&'a str>,
    code: Option<u16>,
    mutated_object: Option<()>,
    audit_annotations: Option<()>,
    warnings: Option<&'a [String]>,
}

impl ValidationResponse<'_> {
    fn default_accept() -> Self {
        ValidationResponse {
            accepted: true,
            message: None,
            code: None,
            mutated_object: None,
            audit_annotations: None,
            warnings: None,
        }
    }
}

/// The ValidationResponse JSON of a verdict.
pub fn response(verdict: &Verdict) -> serde_json::Result<Vec<u8>> {
    let response = match verdict {
        Ok(warnings) => ValidationResponse {
            warnings: Some(warnings.as_slice()).filter(|w| !w.is_empty()),
            ..ValidationResponse::default_accept()
        },
        Err(denial) => ValidationResponse {
            accepted: false,
            message: Some(&denial.message),
            code: Some(denial.code),
            ..ValidationResponse::default_accept()
        },
    };
    serde_json::to_vec(&response)
}
