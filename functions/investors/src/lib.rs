//! The investors group: accounts, parties, entities and links. Each resource module
//! registers its own operations.

mod accounts;
mod archive;
mod entities;
mod entity_supp;
mod kyc;
mod links;
mod notes;
mod parties;
mod suitability;
mod support;

use shared::Routes;

/// Every route of the investors group.
pub fn routes() -> Routes {
    Routes::new()
        .merge(accounts::routes())
        .merge(parties::routes())
        .merge(entities::routes())
        .merge(entity_supp::routes())
        .merge(archive::routes())
        .merge(links::routes())
        .merge(notes::routes())
        .merge(suitability::routes())
        .merge(kyc::routes())
}
