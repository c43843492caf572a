//! Accreditation verification requests (requestAiVerification): one record per request,
//! keyed by its `airequestId`, plus an entry per request under its account so that one
//! account's requests are one query (getAiRequest). The status rules of part 2 (§States and
//! transitions, Accreditation request status) live here; the transaction that applies them
//! is `crate::reviews`.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::mask::MASK;
use crate::model::Account;
use crate::webhooks::{view_event, Event};

/// The status of a new request.
pub const PENDING: &str = "Pending";
/// The account's `accreditedStatus` after an `Approved` request.
pub const VERIFIED_ACCREDITED: &str = "Verified Accredited";
/// The account's `accreditedStatus` after a `rejected` request.
pub const NOT_ACCREDITED: &str = "Not Accredited";

/// An accreditation request, stored with the field names of part 2's Accreditation request.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct AiRequest {
    #[serde(rename = "airequestId")]
    pub id: String,
    pub account_id: String,
    /// As sent (`Upload` expected, not validated).
    pub ai_method: String,
    /// As sent (optional parameter of requestAiVerification).
    pub allow: String,
    /// When the latest decision (`Approved` or `rejected`) was made; empty before.
    pub ai_date: String,
    /// Who made the latest reviewer status change.
    pub reviewed_by: String,
    pub notes: String,
    /// Stored as sent, any casing (part 2: no fixed list).
    #[serde(rename = "aiRequestStatus")]
    pub status: String,
    pub deleted: bool,
    #[serde(rename = "createdDate")]
    pub created: String,
    #[serde(rename = "updatedDate")]
    pub updated: String,
}

crate::records::record!(AiRequest, "AIREQUEST", id);

/// The account `accreditedStatus` a request status decides: `Approved` → `Verified
/// Accredited`, `rejected` → `Not Accredited` (any casing, surrounding blanks ignored);
/// any other status decides nothing.
pub fn decided_status(request_status: &str) -> Option<&'static str> {
    let s = request_status.trim();
    if s.eq_ignore_ascii_case("approved") {
        Some(VERIFIED_ACCREDITED)
    } else if s.eq_ignore_ascii_case("rejected") {
        Some(NOT_ACCREDITED)
    } else {
        None
    }
}

/// A status change of a request: the new status (stored as sent) and, from a reviewer,
/// notes and who reviewed (each kept as it was when absent).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StatusChange {
    pub status: String,
    pub notes: Option<String>,
    pub reviewed_by: Option<String>,
}

impl AiRequest {
    /// The request after `change` at `now`: a decision also sets `aiDate`.
    pub fn changed(&self, change: &StatusChange, now: &str) -> AiRequest {
        let mut r = self.clone();
        r.status = change.status.clone();
        if let Some(n) = &change.notes {
            r.notes = n.clone();
        }
        if let Some(by) = &change.reviewed_by {
            r.reviewed_by = by.clone();
        }
        if decided_status(&change.status).is_some() {
            r.ai_date = now.to_owned();
        }
        r.updated = now.to_owned();
        r
    }

    /// The record of getAiRequest's `request` array, in part 2's order: the request's
    /// fields, the account's `accountName` and `accreditedStatus` as stored, and the masked
    /// `clientId` and `developerAPIKey`.
    pub fn details<'a>(&'a self, account: &'a Account) -> Details<'a> {
        Details {
            id: &self.id,
            account_id: &self.account_id,
            ai_method: &self.ai_method,
            allow: &self.allow,
            ai_date: &self.ai_date,
            reviewed_by: &self.reviewed_by,
            notes: &self.notes,
            status: &self.status,
            created: &self.created,
            account_name: &account.account_name,
            accredited_status: &account.accredited_status,
            client_id: MASK,
            developer_api_key: MASK,
        }
    }

    /// The record of requestAiVerification, updateAiVerification (`with_notes`) and
    /// updateAiRequest, also their webhooks (part 1's table).
    pub fn summary_view<'a>(&'a self, accredited_status: &'a str, with_notes: bool) -> Summary<'a> {
        Summary {
            account_id: &self.account_id,
            status: &self.status,
            id: &self.id,
            notes: with_notes.then_some(self.notes.as_str()),
            accredited_status,
        }
    }

    /// [`AiRequest::summary_view`] as a JSON object.
    pub fn summary(&self, accredited_status: &str, with_notes: bool) -> Map<String, Value> {
        super::object(&self.summary_view(accredited_status, with_notes))
    }

    /// The webhook of `method`: the fields of [`AiRequest::summary_view`].
    pub fn event(&self, method: &str, accredited_status: &str, with_notes: bool) -> Event {
        view_event(method, &self.summary_view(accredited_status, with_notes))
    }
}

/// The record of getAiRequest's `request` array, in part 2's order: the request's fields,
/// the account's `accountName` and `accreditedStatus` as stored, and the masked `clientId`
/// and `developerAPIKey`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Details<'a> {
    #[serde(rename = "airequestId")]
    id: &'a str,
    account_id: &'a str,
    ai_method: &'a str,
    allow: &'a str,
    ai_date: &'a str,
    reviewed_by: &'a str,
    notes: &'a str,
    #[serde(rename = "aiRequestStatus")]
    status: &'a str,
    #[serde(rename = "createdDate")]
    created: &'a str,
    account_name: &'a str,
    accredited_status: &'a str,
    client_id: &'a str,
    #[serde(rename = "developerAPIKey")]
    developer_api_key: &'a str,
}

/// `accountId`, `aiRequestStatus`, `airequestId`, [`notes`,] `accreditedStatus` (the
/// account's value as stored after the call).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary<'a> {
    account_id: &'a str,
    #[serde(rename = "aiRequestStatus")]
    status: &'a str,
    #[serde(rename = "airequestId")]
    id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    notes: Option<&'a str>,
    accredited_status: &'a str,
}

/// How long a verification holds (the letter says so).
pub const VALID_DAYS: u64 = 90;

/// The account after a request moved to `request_status` at `now` (`YYYY-MM-DD HH:MM:SS`),
/// when that status decides its `accreditedStatus`: an approval also sets
/// `accreditedInvestorDate`, "the date the latest review expires" (part 2), `VALID_DAYS`
/// on (`MM-DD-YYYY`, as the account's other dates). `None` when the account stays.
pub fn account_after(account: &Account, request_status: &str, now: &str) -> Option<Account> {
    let decided = decided_status(request_status)?;
    let mut a = account.clone();
    a.accredited_status = decided.to_owned();
    let expires = chrono::NaiveDateTime::parse_from_str(now, "%Y-%m-%d %H:%M:%S")
        .ok()
        .and_then(|t| t.date().checked_add_days(chrono::Days::new(VALID_DAYS)));
    if let Some(expires) = expires.filter(|_| decided == VERIFIED_ACCREDITED) {
        a.accredited_investor_date = expires.format("%m-%d-%Y").to_string();
    }
    if a == *account {
        return None;
    }
    a.updated = now.to_owned();
    Some(a)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_approval_dates_its_expiry_and_a_rejection_keeps_it() {
        let approved = account_after(&Account::default(), "Approved", "2026-11-27 10:00:00").unwrap();
        assert_eq!(
            (
                approved.accredited_status.as_str(),
                approved.accredited_investor_date.as_str()
            ),
            (VERIFIED_ACCREDITED, "02-25-2027")
        );
        assert_eq!(
            account_after(&approved, "Approved", "2026-11-27 11:00:00"),
            None,
            "the same day"
        );
        let renewed = account_after(&approved, "Approved", "2026-12-01 09:00:00").unwrap();
        assert_eq!(renewed.accredited_investor_date, "03-01-2027");
        let rejected = account_after(&approved, "rejected", "2026-12-01 09:00:00").unwrap();
        assert_eq!(
            (
                rejected.accredited_status.as_str(),
                rejected.accredited_investor_date.as_str()
            ),
            (NOT_ACCREDITED, "02-25-2027")
        );
    }

    #[test]
    fn only_approved_and_rejected_decide_in_any_casing() {
        assert_eq!(decided_status("Approved"), Some(VERIFIED_ACCREDITED));
        assert_eq!(decided_status(" APPROVED "), Some(VERIFIED_ACCREDITED));
        assert_eq!(decided_status("rejected"), Some(NOT_ACCREDITED));
        assert_eq!(decided_status("Rejected"), Some(NOT_ACCREDITED));
        for other in [
            "Pending",
            "Need More Info",
            "New Info Added",
            "Updated Letter Requested",
            "",
        ] {
            assert_eq!(decided_status(other), None, "{other}");
        }
    }

    #[test]
    fn a_decision_dates_the_request_and_changes_the_account_once() {
        let r = AiRequest {
            id: "100000".into(),
            status: PENDING.into(),
            notes: "n".into(),
            ..AiRequest::default()
        };
        let change = StatusChange {
            status: "approved".into(),
            notes: None,
            reviewed_by: Some("rev".into()),
        };
        let after = r.changed(&change, "2024-01-02 03:04:05");
        assert_eq!(
            (after.status.as_str(), after.notes.as_str(), after.reviewed_by.as_str()),
            ("approved", "n", "rev")
        );
        assert_eq!(after.ai_date, "2024-01-02 03:04:05");
        let account = Account::default();
        let a = account_after(&account, "approved", "t").unwrap();
        assert_eq!(a.accredited_status, VERIFIED_ACCREDITED);
        assert_eq!(account_after(&a, "Approved", "t2"), None, "no change, no write");
        assert_eq!(account_after(&a, "Need More Info", "t2"), None);
        let other = r.changed(
            &StatusChange {
                status: "Need More Info".into(),
                ..change
            },
            "t",
        );
        assert_eq!(other.ai_date, "");
    }
}
