//! What the offering and issuer operations share: typed ID parameters, the issuer
//! field-permission rule, and the check that an offering is still live.

use shared::model::ids::{IssuerId, OfferingId};
use shared::model::offering::Offering;
use shared::records::offering;
use shared::records::Stored;
use shared::{ApiError, Ctx, Params};

/// A required numeric ID parameter: `106` when missing or not all digits (what these
/// operations answer for a malformed ID, where the ID types answer their unknown-ID code),
/// then parsed as its type by `typed`.
pub fn numeric_id<T>(p: &Params, name: &str, typed: fn(&str) -> Result<T, ApiError>) -> Result<T, ApiError> {
    let v = p.req(&[name])?;
    let v = v.trim();
    if v.bytes().all(|b| b.is_ascii_digit()) {
        typed(v)
    } else {
        Err(ApiError::invalid(name, "Numeric values only"))
    }
}

/// The `offeringId` parameter: `106` when missing or not numeric.
pub fn offering_id(p: &Params) -> Result<OfferingId, ApiError> {
    numeric_id(p, OfferingId::PARAM, OfferingId::parse)
}

/// The `issuerId` parameter: `106` when missing or not numeric.
pub fn issuer_id(p: &Params) -> Result<IssuerId, ApiError> {
    numeric_id(p, IssuerId::PARAM, IssuerId::parse)
}

/// A parameter part 2 marks required for an issuer operation: enforced (`106` when missing
/// or blank) only when the caller's key has the field permission (part 1, Conventions 10);
/// otherwise skipped silently (a key without the permission cannot send it: `110`).
pub fn required_if_permitted(ctx: &Ctx, p: &Params, names: &[&str]) -> Result<String, ApiError> {
    if names.iter().all(|n| ctx.client.may_set(n)) {
        p.req(names)
    } else {
        p.text(names)
    }
}

/// The live offering `id`: `138` when unknown or deleted.
pub async fn live_offering(ctx: &Ctx, id: &OfferingId) -> Result<Stored<Offering>, ApiError> {
    offering::live(ctx.store(), ctx.client_id(), id.as_str()).await
}

/// The check, inside a transaction, that an offering is still live (not deleted): its
/// live-list index key exists. A write of documents or templates carries it so that nothing
/// attaches to an offering deleted meanwhile (`138`).
pub fn offering_live_check(client: &str, offering_id: &str) -> shared::store::Write {
    shared::store::Write::Check {
        key: offering::offering_key(client, offering_id),
        cond: shared::store::Cond::AttrExists("gsi1pk".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(query: &str) -> Params {
        Params::from_query(Some(query)).unwrap()
    }

    #[test]
    fn a_malformed_numeric_id_is_106_and_a_well_formed_one_is_typed() {
        assert_eq!(
            offering_id(&params("offeringId=%20100000%20")).unwrap().as_str(),
            "100000"
        );
        assert_eq!(offering_id(&params("offeringId=12a")).unwrap_err().code(), "106");
        assert_eq!(issuer_id(&params("issuerId=x1")).unwrap_err().code(), "106");
        assert_eq!(issuer_id(&params("other=1")).unwrap_err().code(), "106");
        // Digits that cannot name a record answer the type's unknown-ID code, as a lookup did.
        let long = format!("offeringId={}", "9".repeat(25));
        assert_eq!(offering_id(&params(&long)).unwrap_err().code(), "138");
    }
}
