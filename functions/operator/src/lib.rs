//! The operator API (`/operator/...`): clients, keys, webhook registrations and tokens,
//! field permissions, the flag lists of SSNs and email addresses, reviews (accreditation,
//! manual KYC/AML), offering approval and escrow accounts, custodian settings, and the
//! e-signature sandbox. JSON in and out; the kernel checks the operator's credentials (a
//! token locally, IAM in AWS) and renders `OpError` as `{"error": ...}`.

mod clients;
mod esign;
mod flags;
mod offerings;
mod reviews;

use shared::Routes;

/// Every operator endpoint.
pub fn routes() -> Routes {
    Routes::of(&[
        clients::routes,
        flags::routes,
        reviews::routes,
        offerings::routes,
        esign::routes,
    ])
}
