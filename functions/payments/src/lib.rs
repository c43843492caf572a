//! The payments group: external bank accounts, ACH fund moves, card payments, their
//! batches and the operator's payment settings. Records live in `shared::model::payments` and `shared::records::payments`,
//! where custody and escrow read them too. Shapes and decisions: `docs/payments.md`.

mod ach;
mod batch;
mod cards;
mod external;
mod links;
mod settings;

use shared::{Function, Routes};

pub use batch::ACH as ACH_BATCH;
pub use cards::CARD_BATCH;

/// The payments function: this group's routes; it keeps no documents.
pub const FUNCTION: Function = Function {
    name: "payments",
    routes,
    documents: None,
    operator: false,
};

/// Every route of the payments group, its operator endpoints included.
pub fn routes() -> Routes {
    Routes::of(&[
        external::routes,
        ach::routes,
        settings::routes,
        batch::routes,
        cards::routes,
        links::routes,
    ])
}
