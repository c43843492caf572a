//! The trades group: createTrade, the trade reads and lists, edits, status moves
//! (updateTradeStatus, deleteTrade, cancelInvestment) and trade notes. The trade record, its
//! state table and views live in `shared::model::trade`, the writes that keep the offering's
//! counters right in `shared::records::trade`, for the payments, escrow and trade-document
//! groups to build on.

mod create;
mod documents;
mod edits;
mod esign;
mod notes;
mod reads;
mod status;
mod support;
mod trade_esign;

use std::sync::LazyLock;

use shared::esign::Effects;
use shared::{effect, Function, Routes};
use trade_esign::{NDA, SUBSCRIPTION};

/// What an envelope's status change means for the envelopes this group sends: registered
/// with the routes, so every function that changes one (this one, the operator's sandbox
/// actions) commits the same effects.
pub(crate) static ESIGN_EFFECTS: LazyLock<Effects> = LazyLock::new(|| {
    let mut effects = Effects::default();
    effects.register(SUBSCRIPTION, effect!(trade_esign::subscription_effects));
    effects.register(NDA, effect!(trade_esign::nda_effects));
    effects
});

/// The trades function: this group's routes; it keeps documents.
pub const FUNCTION: Function = Function {
    name: "trades",
    routes,
    documents: shared::function::S3_DOCUMENTS,
    operator: false,
};

/// Every route of the trades group.
pub fn routes() -> Routes {
    let routes = Routes::of(&[
        create::routes,
        reads::routes,
        edits::routes,
        status::routes,
        notes::routes,
        documents::routes,
        esign::routes,
    ]);
    ESIGN_EFFECTS
        .iter()
        .fold(routes, |r, (purpose, effect)| r.esign_effect(purpose, effect))
}
