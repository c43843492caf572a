//! Where custody lives (shapes: `model::custody`):
//!
//! - the agreement on file: `{client}#CUSTATTEST` / accountId, versioned;
//! - the custody account request, one per account by construction: `{client}#CUSTREQ` /
//!   accountId, versioned; `gsi1` holds it under `CUSTDUE` while it awaits review, so the
//!   daily processing reads exactly those; its ID names the account under
//!   `{client}#CUSTREQID` / requestId (a consistent read for the update and review);
//! - the supplements: `{client}#CUSTASUPP` / accountId and `{client}#CUSTPSUPP` / partyId;
//! - the account's settled custody balance in cents: `{client}#CUSTBAL` / accountId, `cents`,
//!   added to when a custody fund move settles and taken from, conditionally, by a
//!   disbursement;
//! - disbursements are records (`model::custody::Disbursement`, kind `CUSTDISB`).

use rust_decimal::Decimal;

use crate::error::ApiError;
use crate::model::custody::{AccountSupplement, Attestation, CustodyRequest, PartySupplement};
use crate::records::{get_json, json_item, next_version, versioned_put, Owned, Stored};
use crate::store::{CmpOp, Cond, Key, Store, Update, Val, Write};

// ---------------------------------------------------------------- per account or party

impl Owned for Attestation {
    const KIND: &'static str = "CUSTATTEST";
    fn owner(&self) -> &str {
        &self.account_id
    }
}

impl Owned for AccountSupplement {
    const KIND: &'static str = "CUSTASUPP";
    fn owner(&self) -> &str {
        &self.account_id
    }
}

impl Owned for PartySupplement {
    const KIND: &'static str = "CUSTPSUPP";
    fn owner(&self) -> &str {
        &self.party_id
    }
}

// ---------------------------------------------------------------- requests

pub fn request_key(client: &str, account: &str) -> Key {
    Key::new(format!("{client}#CUSTREQ"), account)
}

fn request_id_key(client: &str, request_id: &str) -> Key {
    Key::new(format!("{client}#CUSTREQID"), request_id)
}

/// The index partition of the requests awaiting the daily processing.
pub const CUSTODY_DUE: &str = "CUSTDUE";

/// The request written as new (`before` none: fails when the account has one) or over the
/// version read, on the due index while it awaits review.
pub fn request_put(client: &str, r: &CustodyRequest, before: Option<i64>) -> Result<Write, ApiError> {
    let mut item = json_item(request_key(client, &r.account_id), r, next_version(before))?;
    if r.status.awaits_review() {
        item.insert("gsi1pk".into(), Val::S(CUSTODY_DUE.into()));
        item.insert(
            "gsi1sk".into(),
            Val::S(format!("{}#{client}#{}", r.created_date, r.account_id)),
        );
    }
    Ok(versioned_put(item, before))
}

/// The writes of a new request: the request (the one-per-account condition) and its ID.
pub fn request_new(client: &str, r: &CustodyRequest) -> Result<(Write, Write), ApiError> {
    let mut id = request_id_key(client, &r.request_id).item();
    id.insert("accountId".into(), Val::S(r.account_id.clone()));
    Ok((
        request_put(client, r, None)?,
        Write::Put {
            item: id,
            cond: Some(Cond::NotExists),
        },
    ))
}

/// The account's custody account request, if it has one.
pub async fn request_of_account(
    store: &dyn Store,
    client: &str,
    account: &str,
) -> Result<Option<Stored<CustodyRequest>>, ApiError> {
    get_json(store, &request_key(client, account)).await
}

/// A custody account request by its ID.
pub async fn request(
    store: &dyn Store,
    client: &str,
    request_id: &str,
) -> Result<Option<Stored<CustodyRequest>>, ApiError> {
    let Some(item) = store.get(&request_id_key(client, request_id)).await? else {
        return Ok(None);
    };
    match item.get("accountId").and_then(Val::as_str) {
        Some(account) => request_of_account(store, client, account).await,
        None => Ok(None),
    }
}

/// Every client's requests awaiting review, oldest first: (client, accountId).
pub async fn due_requests(store: &dyn Store) -> Result<Vec<(String, String)>, ApiError> {
    let due = crate::records::every_client::<CustodyRequest>(store, CUSTODY_DUE, "#CUSTREQ", "corrupt custody request");
    Ok(due
        .await?
        .into_iter()
        .map(|(client, r)| (client, r.rec.account_id))
        .collect())
}

// ---------------------------------------------------------------- the settled balance

pub fn balance_key(client: &str, account: &str) -> Key {
    Key::new(format!("{client}#CUSTBAL"), account)
}

/// The account's settled custody balance not held by a disbursement, in cents.
pub async fn balance_cents(store: &dyn Store, client: &str, account: &str) -> Result<i64, ApiError> {
    let item = store.get(&balance_key(client, account)).await?;
    Ok(item
        .and_then(|i| i.get("cents").and_then(Val::as_num))
        .and_then(|d| i64::try_from(d).ok())
        .unwrap_or(0))
}

/// Adds `cents` (negative: takes them back) to the balance. With `covered`, the write fails
/// its condition unless the balance holds at least `-cents`: a disbursement never overdraws.
pub fn balance_change(client: &str, account: &str, cents: i64, covered: bool) -> Write {
    let cond = (covered && cents < 0).then(|| Cond::Cmp("cents".into(), CmpOp::Ge, Val::from(-cents)));
    Write::Update {
        key: balance_key(client, account),
        ops: vec![Update::Add("cents".into(), Decimal::from(cents))],
        cond,
    }
}
