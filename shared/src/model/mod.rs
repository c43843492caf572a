//! Records shared across endpoint groups. Each stores the fields as the spec names them;
//! the operations choose the casing each method answers with.

pub mod account;
pub mod entity_supp;
pub mod flags;
pub mod kyc;
pub mod link;
pub mod note;
pub mod party;
pub mod suitability;
pub mod validate;

pub use account::Account;
pub use link::Link;
pub use party::{Entity, Party};
