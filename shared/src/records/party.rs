//! Writes that individual parties and entities share.

use crate::error::ApiError;
use crate::model::party::PartyRecord;
use crate::records::{replace, Stored};
use crate::store::Write;

/// The versioned write of a party's or entity's new statuses (see
/// [`PartyRecord::set_statuses`]).
pub fn with_statuses<R: PartyRecord>(
    client: &str,
    s: &Stored<R>,
    kyc: Option<&str>,
    aml: Option<(&str, &str)>,
    now: &str,
) -> Result<Vec<Write>, ApiError> {
    let mut r = s.rec.clone();
    r.set_statuses(kyc, aml, now);
    replace(client, s, &r)
}
