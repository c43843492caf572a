//! The escrow group (part 3, "Escrow balances"; CONTRACT, "The escrow ledger",
//! "Reconciliation", "Escrow figures"; shapes in `docs/escrow.md`): an offering's escrow
//! balances summed from the ledger the payments group writes, their reconciliation with the
//! sandbox escrow bank twice each business day, and the operator's switch for that bank.

mod balances;
mod reconcile;

use shared::{Function, Routes};

pub use reconcile::ESCROW_BATCH;

/// The escrow function: this group's routes; it keeps no documents.
pub const FUNCTION: Function = Function {
    name: "escrow",
    routes,
    documents: None,
    operator: false,
};

/// Every route of the escrow group, its operator endpoints included.
pub fn routes() -> Routes {
    Routes::of(&[balances::routes, reconcile::routes])
}
