//! The one error type checks return: a rejection code and its message.

use std::fmt;

/// A rejection: the code `reject_request` sends and the message users see.
///
/// Codes follow kube-ovn-webhook: 400 for `Errored(400)` (bad annotations,
/// lookup failures, undecodable objects), 403 for `Denied` (conflicts),
/// 409 for `Errored(409)` (Subnet CIDR overlap).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Denial {
    /// The admission response code.
    pub code: u16,
    /// The message, byte for byte as upstream formats it.
    pub message: String,
}

impl Denial {
    /// A 400 rejection (upstream `Errored(400, err)`).
    pub fn bad_request(message: impl Into<String>) -> Self {
        Denial {
            code: 400,
            message: message.into(),
        }
    }

    /// A 403 rejection (upstream `Denied(msg)`).
    pub fn forbidden(message: impl Into<String>) -> Self {
        Denial {
            code: 403,
            message: message.into(),
        }
    }

    /// A 409 rejection (upstream `Errored(409, err)`).
    pub fn conflict(message: impl Into<String>) -> Self {
        Denial {
            code: 409,
            message: message.into(),
        }
    }
}

impl fmt::Display for Denial {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.message, self.code)
    }
}
