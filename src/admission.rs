//! The admission exchange with the policy-server.

pub mod denial;
