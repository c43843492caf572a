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

use shared::Routes;

/// Every route of the trades group.
pub fn routes() -> Routes {
    Routes::new()
        .merge(create::routes())
        .merge(reads::routes())
        .merge(edits::routes())
        .merge(status::routes())
        .merge(notes::routes())
        .merge(documents::routes())
        .merge(esign::routes())
}
