//! Billing entries of billed operations (part 1: written in production only).

use crate::ctx::Ctx;
use crate::error::ApiError;
use crate::model::kyc::BillingEntry;
use crate::records;
use crate::store::Write;
use crate::Environment;

/// A billing entry of a billed operation (KYC/AML checks, manual KYC/AML requests,
/// accreditation verification, ACH and card payments): written in production only, in the transaction of the
/// operation's state change (sandbox calls are not billed, part 1).
pub fn billing(ctx: &Ctx, operation: &str, subject: &str, reference: &str) -> Result<Vec<Write>, ApiError> {
    if ctx.app.env != Environment::Production {
        return Ok(Vec::new());
    }
    let created = ctx.now();
    let entry = BillingEntry {
        id: format!("{created}#{}", crate::ids::unique()),
        operation: operation.to_owned(),
        subject_id: subject.to_owned(),
        reference: reference.to_owned(),
        deleted: false,
        created,
    };
    records::insert(ctx.client_id(), &entry)
}
