//! The admission exchange with the policy-server.

pub mod denial;

use crate::k8s::cluster::LookupError;
use denial::Denial;
use json::{Decode, Raw};

/// Decodes an admission `object` / `oldObject`; `null` or absent is
/// upstream's "there is no content to decode" (400), and so is any object
/// that does not decode (400, with the decoder's reason).
pub fn decode<'a, T: Decode<'a>>(kind: &str, object: Option<Raw<'a>>) -> Result<T, Denial> {
    let Some(Raw(raw)) = object else {
        return Err(Denial::bad_request("there is no content to decode"));
    };
    json::from_str(raw)
        .map_err(|e| Denial::bad_request(format!("cannot decode {kind} object: {e}")))
}

impl From<LookupError> for Denial {
    fn from(e: LookupError) -> Self {
        Denial::bad_request(e.0)
    }
}
