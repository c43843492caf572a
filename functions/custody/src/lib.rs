//! The custody group (part 3, "Custody accounts"; CONTRACT, "Payments, custody and escrow";
//! shapes in `docs/custody.md`): the custody agreement (attested or e-signed), custody
//! account requests under their four names with the operator's review and the daily
//! processing, custody accounts and their positions, the IRA account and party
//! supplements, custody fund moves (submitted by the `ach` batch) and disbursements.

mod accounts;
mod agreement;
mod disbursements;
mod moves;
mod requests;
mod supplements;

use shared::{Function, Routes};

pub use requests::CUSTODY_BATCH;

/// The custody function: this group's routes; it keeps no documents.
pub const FUNCTION: Function = Function {
    name: "custody",
    routes,
    documents: None,
    operator: false,
};

/// Every route of the custody group, its operator endpoints and e-signature effect
/// included.
pub fn routes() -> Routes {
    Routes::of(&[
        agreement::routes,
        requests::routes,
        accounts::routes,
        supplements::routes,
        moves::routes,
        disbursements::routes,
    ])
}
