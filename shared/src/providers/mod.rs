//! Ports to outside verification providers, with the deterministic sandbox implementations
//! the sandbox environment and the tests use.

pub mod esign;
pub mod kyc;
pub mod payments;
