//! The platform library every function links.
pub mod aws;
pub mod queue;
pub mod store;
