//! The ATS group (part 3, "ATS"; CONTRACT, "ATS"; shapes in `docs/ats.md`): orders placed
//! on a price-time book per security, matched by the pure core of the `matching` crate one
//! message at a time per security, the CLOB, matched trades, market hours, the order and
//! trade lists, the operator's approval and hours, and the expiry batch.

mod book;
mod hours;
mod lists;
mod operator;
mod orders;
mod support;

use shared::{Function, Routes};

pub use book::{apply as BOOK_WORK, open_books, EXPIRY_BATCH};

/// The ATS function: this group's routes; it keeps no documents.
pub const FUNCTION: Function = Function {
    name: "ats",
    routes,
    documents: None,
    operator: false,
};

/// Every route of the ATS group, its operator endpoints included.
pub fn routes() -> Routes {
    Routes::of(&[
        orders::routes,
        hours::routes,
        lists::routes,
        operator::routes,
        book::routes,
    ])
}
