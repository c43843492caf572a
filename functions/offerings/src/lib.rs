//! The offerings group: issuers and their financial accounts, offerings and their
//! lifecycle, funding reads, offering documents (watermarked PDFs) and subscription
//! templates from the client's e-signature account. Each module registers its own
//! operations. Trades are another crate's work; what they share with offerings lives in
//! `shared::model::offering`, `shared::model::subscription` and `shared::esign`.

mod documents;
mod funding;
mod issuer_accounts;
mod issuers;
mod lifecycle;
mod offerings;
mod subscriptions;
mod support;
pub mod watermark;

use shared::{Function, Routes};

/// The offerings function: this group's routes; it keeps documents.
pub const FUNCTION: Function = Function {
    name: "offerings",
    routes,
    documents: shared::function::S3_DOCUMENTS,
    operator: false,
};

/// Every route of the offerings group.
pub fn routes() -> Routes {
    Routes::of(&[
        issuers::routes,
        issuer_accounts::routes,
        offerings::routes,
        lifecycle::routes,
        funding::routes,
        documents::routes,
        subscriptions::routes,
    ])
}
