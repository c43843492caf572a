//! The investors group: accounts, parties, entities and links. Each resource module
//! registers its own operations.

mod accounts;
mod entities;
mod links;
mod parties;

use shared::Routes;

/// Every route of the investors group.
pub fn routes() -> Routes {
    Routes::new()
        .merge(accounts::routes())
        .merge(parties::routes())
        .merge(entities::routes())
        .merge(links::routes())
}
