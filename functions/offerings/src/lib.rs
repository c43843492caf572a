//! The offerings group: issuers and their financial accounts, offerings and their
//! lifecycle, funding reads. Each module registers its own operations. Trades, offering
//! documents and subscriptions are other crates' work; what they share with offerings lives
//! in `shared::model::offering`.

mod funding;
mod issuer_accounts;
mod issuers;
mod lifecycle;
mod offerings;
mod support;

use shared::Routes;

/// Every route of the offerings group.
pub fn routes() -> Routes {
    Routes::new()
        .merge(issuers::routes())
        .merge(issuer_accounts::routes())
        .merge(offerings::routes())
        .merge(lifecycle::routes())
        .merge(funding::routes())
}
