//! The investors group: accounts, parties, entities, links, KYC/AML and accreditation.
//! Each resource module registers its own operations.

mod accounts;
mod accreditation;
mod ai_documents;
mod archive;
mod documents;
mod entities;
mod entity_supp;
mod kyc;
mod kyc_review;
mod links;
mod notes;
mod parties;
mod suitability;
mod support;

use shared::{Function, Routes};

/// The investors function: this group's routes; it keeps documents.
pub const FUNCTION: Function = Function {
    name: "investors",
    routes,
    documents: shared::function::S3_DOCUMENTS,
    operator: false,
};

/// Every route of the investors group.
pub fn routes() -> Routes {
    Routes::of(&[
        accounts::routes,
        parties::routes,
        entities::routes,
        entity_supp::routes,
        archive::routes,
        links::routes,
        notes::routes,
        suitability::routes,
        kyc::routes,
        kyc_review::routes,
        accreditation::routes,
        documents::routes,
        ai_documents::routes,
    ])
}
