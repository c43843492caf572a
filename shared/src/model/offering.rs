//! Offerings, and what the trades group needs of them: share reservation that can never
//! oversell, the close rule's count of open trades, funding totals, the purchase-history
//! index, and the escrow account an operator links.
//!
//! # The offering item
//!
//! An offering is a [`Record`] (JSON in `d`, version `v`, list indexes) under
//! `<client>#OFFERING` / `<offeringId>`, plus top-level attributes that trades change with
//! one conditional update inside their own transaction, without reading or rewriting `d`:
//!
//! | attribute | type | meaning |
//! |---|---|---|
//! | `remainingShares` | N | units not reserved by a trade; never below zero |
//! | `openTrades` | N | the offering's trades not in a closing state; `closeOffering` needs 0 |
//! | `acceptsInvestments` | Bool | false once closed, cancelled or deleted |
//! | `pendingAmount`, `fundedAmount`, `committedAmount` | N | funding totals of getOfferingDetails |
//!
//! Writes of the offering's own operations go through [`records::update_in_place`], which
//! leaves these attributes alone (a put of the whole item would undo a concurrent trade).

use rust_decimal::prelude::ToPrimitive;
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

use crate::error::ApiError;
use crate::ids::sortable;
use crate::records::{self, Record, Stored};
use crate::store::{CmpOp, Cond, Index, Item, Key, Query, SkRange, Store, Update, Val, Write};

/// The `issueType` values updateOffering enforces (any casing); createOffering stores
/// whatever it is sent.
pub const ISSUE_TYPES: &[&str] = &["Equity", "Debt", "Hybrid", "Fund"];

/// Stored `offeringStatus` values. `Pending` at creation; `Approved` by the operator;
/// `Denied` by updateOffering; `closed` and `cancelled` (lower case, as stored by the
/// incumbent) by closeOffering and cancelOffering.
pub mod status {
    pub const PENDING: &str = "Pending";
    pub const APPROVED: &str = "Approved";
    pub const DENIED: &str = "Denied";
    pub const CLOSED: &str = "closed";
    pub const CANCELLED: &str = "cancelled";
}

/// Trade statuses in which a trade lets its offering close (part 2, closeOffering): `FUNDED`,
/// `SETTLED`, `UNWIND SETTLED`, `Rejected`, `CANCELED` (see [`is_closing_trade_status`]).
pub const CLOSING_TRADE_STATUSES: &[&str] = &["FUNDED", "SETTLED", "UNWIND SETTLED", "REJECTED", "CANCELED"];

/// Whether a trade status lets the offering close: case-insensitive, `_` read as a space,
/// `CANCELLED` as `CANCELED`.
pub fn is_closing_trade_status(s: &str) -> bool {
    let norm = s.trim().to_ascii_uppercase().replace('_', " ");
    let norm = if norm == "CANCELLED" {
        "CANCELED".to_owned()
    } else {
        norm
    };
    CLOSING_TRADE_STATUSES.contains(&norm.as_str())
}

/// Top-level attribute names of the offering item (see the module documentation).
pub mod attr {
    pub const REMAINING_SHARES: &str = "remainingShares";
    pub const OPEN_TRADES: &str = "openTrades";
    pub const ACCEPTS_INVESTMENTS: &str = "acceptsInvestments";
    pub const PENDING_AMOUNT: &str = "pendingAmount";
    pub const FUNDED_AMOUNT: &str = "fundedAmount";
    pub const COMMITTED_AMOUNT: &str = "committedAmount";
}

pub use super::ids::no_offering;

/// An amount as the API renders offering amounts: a string with six decimals.
pub fn six_decimals(d: Decimal) -> String {
    let mut d = d.round_dp(6);
    d.rescale(6);
    d.to_string()
}

/// An offering. `remaining_shares`, `open_trades` and the funding totals are not part of
/// the JSON record: they are read from the item's top-level attributes (authoritative).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Offering {
    #[serde(rename = "offeringId")]
    pub id: String,
    #[serde(rename = "issuerId")]
    pub issuer_id: String,
    #[serde(rename = "issueName")]
    pub issue_name: String,
    #[serde(rename = "issueType")]
    pub issue_type: String,
    #[serde(rename = "targetAmount")]
    pub target_amount: Decimal,
    #[serde(rename = "minAmount")]
    pub min_amount: Decimal,
    #[serde(rename = "maxAmount")]
    pub max_amount: Decimal,
    #[serde(rename = "unitPrice")]
    pub unit_price: Decimal,
    #[serde(rename = "totalShares")]
    pub total_shares: i64,
    #[serde(rename = "startDate")]
    pub start_date: String,
    #[serde(rename = "endDate")]
    pub end_date: String,
    #[serde(rename = "offeringStatus")]
    pub status: String,
    /// The status before the last close, restored by reopenOffering when it was an open one.
    #[serde(rename = "statusBeforeClose")]
    pub status_before_close: String,
    #[serde(rename = "offeringText")]
    pub offering_text: String,
    #[serde(rename = "stampingText")]
    pub stamping_text: String,
    /// Set only by the operator (`PUT /operator/.../escrow-account`).
    #[serde(rename = "escrowAccountNumber")]
    pub escrow_account_number: String,
    pub field1: String,
    pub field2: String,
    pub field3: String,
    pub deleted: bool,
    #[serde(rename = "createdDate")]
    pub created: String,
    #[serde(rename = "createdIPAddress")]
    pub created_ip: String,
    #[serde(rename = "updatedDate")]
    pub updated: String,
    #[serde(rename = "updatedIPAddress")]
    pub updated_ip: String,
    #[serde(skip)]
    pub remaining_shares: i64,
    #[serde(skip)]
    pub open_trades: i64,
    #[serde(skip)]
    pub pending_amount: Decimal,
    #[serde(skip)]
    pub funded_amount: Decimal,
    #[serde(skip)]
    pub committed_amount: Decimal,
}

fn num_attr(item: &Item, name: &str) -> Decimal {
    item.get(name).and_then(Val::as_num).unwrap_or_default()
}

impl Record for Offering {
    const KIND: &'static str = "OFFERING";
    fn id(&self) -> &str {
        &self.id
    }
    fn created(&self) -> &str {
        &self.created
    }
    fn deleted(&self) -> bool {
        self.deleted
    }
    fn read_attrs(&mut self, item: &Item) {
        self.remaining_shares = num_attr(item, attr::REMAINING_SHARES).to_i64().unwrap_or(0);
        self.open_trades = num_attr(item, attr::OPEN_TRADES).to_i64().unwrap_or(0);
        self.pending_amount = num_attr(item, attr::PENDING_AMOUNT);
        self.funded_amount = num_attr(item, attr::FUNDED_AMOUNT);
        self.committed_amount = num_attr(item, attr::COMMITTED_AMOUNT);
    }
}

impl Offering {
    /// Whether createTrade may reserve shares: from creation until closed, cancelled or
    /// deleted (CONTRACT.md, Offerings and trades); a reopened offering accepts them again.
    pub fn accepts_investments(&self) -> bool {
        !self.deleted && self.status != status::CLOSED && self.status != status::CANCELLED
    }

    /// `totalShares` derived at creation: whole units of `unit_price` within `max_amount`.
    pub fn shares_for(max_amount: Decimal, unit_price: Decimal) -> Option<i64> {
        if unit_price <= Decimal::ZERO {
            return None;
        }
        max_amount.checked_div(unit_price)?.floor().to_i64()
    }

    /// The getOffering object: part 2's Offering fields in order, amounts with six decimals,
    /// share counts as integer strings.
    pub fn details(&self) -> OfferingDetails {
        OfferingDetails {
            fields: self.fields(),
            escrow_account_number: self.escrow_account_number.clone(),
            field1: self.field1.clone(),
            field2: self.field2.clone(),
            field3: self.field3.clone(),
        }
    }

    /// The getAllOffers record: getOffering's fields without `escrowAccountNumber` and
    /// `field1`-`field3`, plus `createdDate` and `createdIPAddress` (part 2).
    pub fn summary(&self) -> OfferingSummary {
        OfferingSummary {
            fields: self.fields(),
            created_date: self.created.clone(),
            created_ip_address: self.created_ip.clone(),
        }
    }

    /// The updateOffering webhook: getOffering's fields, `createdDate`, `createdIPAddress`.
    pub fn updated_view(&self) -> OfferingUpdated {
        OfferingUpdated {
            details: self.details(),
            created_date: self.created.clone(),
            created_ip_address: self.created_ip.clone(),
        }
    }

    /// The `GET /v3/offerings` record: getOffering's fields, `createdDate`,
    /// `createdIPAddress`, `updatedDate` and `virtualStatus` (`ACTIVE` / `DELETED`).
    pub fn list_view(&self) -> OfferingListView {
        OfferingListView {
            details: self.details(),
            created_date: self.created.clone(),
            created_ip_address: self.created_ip.clone(),
            updated_date: self.updated.clone(),
            virtual_status: if self.deleted { "DELETED" } else { "ACTIVE" },
        }
    }

    /// `{offeringId, offeringStatus}` with the stored status.
    pub fn status_view(&self) -> OfferingStatusView {
        OfferingStatusView {
            offering_id: self.id.clone(),
            offering_status: self.status.clone(),
        }
    }

    /// getOfferingDetails's funding record: the escrow account and the funding totals.
    pub fn funding(&self) -> FundingView {
        FundingView {
            escrow_account_number: self.escrow_account_number.clone(),
            pending_amount: six_decimals(self.pending_amount),
            funded_amount: six_decimals(self.funded_amount),
            committed_amount: six_decimals(self.committed_amount),
        }
    }

    fn fields(&self) -> OfferingFields {
        OfferingFields {
            issuer_id: self.issuer_id.clone(),
            offering_id: self.id.clone(),
            issue_name: self.issue_name.clone(),
            issue_type: self.issue_type.clone(),
            target_amount: six_decimals(self.target_amount),
            min_amount: six_decimals(self.min_amount),
            max_amount: six_decimals(self.max_amount),
            unit_price: six_decimals(self.unit_price),
            total_shares: self.total_shares.to_string(),
            remaining_shares: self.remaining_shares.to_string(),
            start_date: self.start_date.clone(),
            end_date: self.end_date.clone(),
            offering_status: self.status.clone(),
            offering_text: self.offering_text.clone(),
            stamping_text: self.stamping_text.clone(),
        }
    }
}

/// The fields every offering view starts with, in part 2's order.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OfferingFields {
    pub issuer_id: String,
    pub offering_id: String,
    pub issue_name: String,
    pub issue_type: String,
    pub target_amount: String,
    pub min_amount: String,
    pub max_amount: String,
    pub unit_price: String,
    pub total_shares: String,
    pub remaining_shares: String,
    pub start_date: String,
    pub end_date: String,
    pub offering_status: String,
    pub offering_text: String,
    pub stamping_text: String,
}

/// The getOffering object (see [`Offering::details`]).
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OfferingDetails {
    #[serde(flatten)]
    pub fields: OfferingFields,
    pub escrow_account_number: String,
    pub field1: String,
    pub field2: String,
    pub field3: String,
}

/// The getAllOffers record (see [`Offering::summary`]).
#[derive(Clone, Debug, Serialize)]
pub struct OfferingSummary {
    #[serde(flatten)]
    pub fields: OfferingFields,
    #[serde(rename = "createdDate")]
    pub created_date: String,
    #[serde(rename = "createdIPAddress")]
    pub created_ip_address: String,
}

/// The updateOffering webhook (see [`Offering::updated_view`]).
#[derive(Clone, Debug, Serialize)]
pub struct OfferingUpdated {
    #[serde(flatten)]
    pub details: OfferingDetails,
    #[serde(rename = "createdDate")]
    pub created_date: String,
    #[serde(rename = "createdIPAddress")]
    pub created_ip_address: String,
}

/// The `GET /v3/offerings` record (see [`Offering::list_view`]).
#[derive(Clone, Debug, Serialize)]
pub struct OfferingListView {
    #[serde(flatten)]
    pub details: OfferingDetails,
    #[serde(rename = "createdDate")]
    pub created_date: String,
    #[serde(rename = "createdIPAddress")]
    pub created_ip_address: String,
    #[serde(rename = "updatedDate")]
    pub updated_date: String,
    #[serde(rename = "virtualStatus")]
    pub virtual_status: &'static str,
}

/// `{offeringId, offeringStatus}`: createOffering's and getOfferingStatus's record, and the
/// lifecycle webhooks (with the upper-case status they report).
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OfferingStatusView {
    pub offering_id: String,
    pub offering_status: String,
}

/// getOfferingDetails's record (see [`Offering::funding`]).
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FundingView {
    pub escrow_account_number: String,
    pub pending_amount: String,
    pub funded_amount: String,
    pub committed_amount: String,
}

/// The key of an offering item.
pub fn offering_key(client: &str, offering_id: &str) -> Key {
    records::key::<Offering>(client, offering_id)
}

/// The writes that create an offering: the record and its counters, with
/// `remainingShares` = `totalShares`, no open trades, zero funding totals.
pub fn insert(client: &str, o: &Offering) -> Result<Vec<Write>, ApiError> {
    let attrs = vec![
        (attr::REMAINING_SHARES.to_owned(), Val::from(o.total_shares)),
        (attr::OPEN_TRADES.to_owned(), Val::from(0)),
        (attr::ACCEPTS_INVESTMENTS.to_owned(), Val::Bool(o.accepts_investments())),
        (attr::PENDING_AMOUNT.to_owned(), Val::from(0)),
        (attr::FUNDED_AMOUNT.to_owned(), Val::from(0)),
        (attr::COMMITTED_AMOUNT.to_owned(), Val::from(0)),
    ];
    records::insert_with(client, o, attrs)
}

/// The writes of an offering operation that changes the record (`before` as read): the JSON
/// record and `acceptsInvestments` follow `after`; `ops` and `cond` are added to the same
/// conditional update (the version read is always checked). Shares and funding
/// attributes are left alone unless `ops` changes them.
pub fn update(
    client: &str,
    before: &Stored<Offering>,
    after: &Offering,
    mut ops: Vec<Update>,
    cond: Option<Cond>,
) -> Result<Vec<Write>, ApiError> {
    ops.push(Update::Set(
        attr::ACCEPTS_INVESTMENTS.into(),
        Val::Bool(after.accepts_investments()),
    ));
    records::update_in_place(client, before, after, ops, cond)
}

/// The condition closeOffering adds: no trade of the offering outside a closing state.
pub fn no_open_trades() -> Cond {
    Cond::Cmp(attr::OPEN_TRADES.into(), CmpOp::Le, Val::from(0))
}

/// The offering with its authoritative `remainingShares`, open-trade count and funding
/// totals (one strongly consistent read), deleted ones included; `None` when unknown.
pub async fn load(store: &dyn Store, client: &str, offering_id: &str) -> Result<Option<Stored<Offering>>, ApiError> {
    records::load::<Offering>(store, client, offering_id).await
}

/// An offering that is not deleted, or `138`. The ID must be numeric (`106` otherwise).
pub async fn live(store: &dyn Store, client: &str, offering_id: &str) -> Result<Stored<Offering>, ApiError> {
    let id = offering_id.trim();
    if id.is_empty() || !id.bytes().all(|b| b.is_ascii_digit()) {
        return Err(ApiError::invalid("offeringId", "Numeric values only"));
    }
    match load(store, client, id).await? {
        Some(s) if !s.rec.deleted => Ok(s),
        _ => Err(no_offering()),
    }
}

/// What one trade operation does to its offering, applied as ONE conditional update of the
/// offering item inside the trade's own transaction (a transaction may hold one write per
/// item, so combine everything a trade operation changes here).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OfferingChange {
    /// Units reserved (positive) or given back (negative). A reservation fails the write
    /// (`ConditionFailed` at its index) when fewer units remain: shares are never oversold.
    pub shares: i64,
    /// Change of the number of the offering's trades not in a closing state
    /// ([`is_closing_trade_status`]): +1 for a new trade, -1 when a trade enters a closing
    /// state, +1 when it leaves one.
    pub open_trades: i64,
    /// Changes of the funding totals (see `docs/offerings.md` for which trade status counts
    /// where).
    pub pending: Decimal,
    pub funded: Decimal,
    pub committed: Decimal,
    /// Fail unless the offering accepts investments (not closed, cancelled or deleted):
    /// createTrade, and edits that add units.
    pub require_accepting: bool,
}

impl OfferingChange {
    /// createTrade: `units` reserved, one more open trade, `amount` pending and committed,
    /// only while the offering accepts investments.
    pub fn new_trade(units: i64, amount: Decimal) -> Self {
        OfferingChange {
            shares: units,
            open_trades: 1,
            pending: amount,
            committed: amount,
            require_accepting: true,
            ..OfferingChange::default()
        }
    }
}

/// The single conditional update applying `change` to an offering (see [`OfferingChange`]).
/// Its condition always requires the offering item (an update never creates one); a
/// reservation also requires `remainingShares >= shares`, and `require_accepting` that the
/// offering accepts investments.
pub fn change_write(client: &str, offering_id: &str, change: &OfferingChange) -> Write {
    let mut ops = Vec::new();
    let mut conds = vec![Cond::AttrExists(attr::REMAINING_SHARES.into())];
    if change.shares != 0 {
        ops.push(Update::Add(
            attr::REMAINING_SHARES.into(),
            Decimal::from(-change.shares),
        ));
    }
    if change.shares > 0 {
        conds.push(Cond::Cmp(
            attr::REMAINING_SHARES.into(),
            CmpOp::Ge,
            Val::from(change.shares),
        ));
    }
    if change.open_trades != 0 {
        ops.push(Update::Add(attr::OPEN_TRADES.into(), Decimal::from(change.open_trades)));
    }
    for (name, delta) in [
        (attr::PENDING_AMOUNT, change.pending),
        (attr::FUNDED_AMOUNT, change.funded),
        (attr::COMMITTED_AMOUNT, change.committed),
    ] {
        if !delta.is_zero() {
            ops.push(Update::Add(name.into(), delta));
        }
    }
    if change.require_accepting {
        conds.push(Cond::Cmp(attr::ACCEPTS_INVESTMENTS.into(), CmpOp::Eq, Val::Bool(true)));
    }
    Write::Update {
        key: offering_key(client, offering_id),
        ops,
        cond: Some(Cond::And(conds)),
    }
}

/// Reserves `units` of an offering for a new trade, as one conditional write: fails
/// (`ConditionFailed`) unless the offering accepts investments and at least `units` remain.
/// Also counts the trade as open (the close rule). createTrade should prefer
/// [`change_write`] with [`OfferingChange::new_trade`], which also counts its amount.
pub fn reserve_shares(client: &str, offering_id: &str, units: u64) -> Write {
    let units = i64::try_from(units).unwrap_or(i64::MAX);
    change_write(client, offering_id, &OfferingChange::new_trade(units, Decimal::ZERO))
}

/// Gives `units` back to an offering (a trade cancelled, or its units reduced); nothing
/// else changes. Fails only when the offering item does not exist.
pub fn release_shares(client: &str, offering_id: &str, units: u64) -> Write {
    let units = i64::try_from(units).unwrap_or(i64::MAX);
    change_write(
        client,
        offering_id,
        &OfferingChange {
            shares: -units,
            ..OfferingChange::default()
        },
    )
}

// ---------------------------------------------------------------- purchase history

/// One trade of an offering as getOfferingPurchaseHistory lists it. The trades group writes
/// it ([`purchase_write`]) in the transaction of every trade change that alters these
/// values, and sets `deleted` when the trade is virtually deleted.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct PurchaseEntry {
    #[serde(rename = "tradeId")]
    pub trade_id: String,
    #[serde(rename = "accountId")]
    pub account_id: String,
    #[serde(rename = "offeringId")]
    pub offering_id: String,
    #[serde(rename = "totalAmount")]
    pub total_amount: Decimal,
    #[serde(rename = "totalShares")]
    pub total_shares: i64,
    /// The trade's creation time, `YYYY-MM-DD HH:MM:SS`.
    #[serde(rename = "purchaseDate")]
    pub purchase_date: String,
    #[serde(rename = "accountName")]
    pub account_name: String,
    #[serde(rename = "orderStatus")]
    pub order_status: String,
    pub deleted: bool,
}

/// The key of a purchase-history entry: partition `<client>#PURCHASE#<offeringId>`, sort key
/// the sortable trade ID (`ids::sortable`), so one query reads an offering's trades in order.
pub fn purchase_key(client: &str, offering_id: &str, trade_id: &str) -> Key {
    Key::new(format!("{client}#PURCHASE#{offering_id}"), sortable(trade_id))
}

/// The write that stores (or replaces) a purchase-history entry, JSON in `d`.
pub fn purchase_write(client: &str, entry: &PurchaseEntry) -> Write {
    let mut item = purchase_key(client, &entry.offering_id, &entry.trade_id).item();
    item.insert("d".into(), Val::S(serde_json::to_string(entry).unwrap_or_default()));
    Write::Put { item, cond: None }
}

/// An offering's live purchase-history entries, oldest trade first.
pub async fn purchase_history(
    store: &dyn Store,
    client: &str,
    offering_id: &str,
) -> Result<Vec<PurchaseEntry>, ApiError> {
    let mut q = Query::new(Index::Table, purchase_key(client, offering_id, "").pk);
    q.sk = SkRange::All;
    let mut out = Vec::new();
    loop {
        let page = store.query(&q).await?;
        for item in &page.items {
            let d = item.get("d").and_then(Val::as_str).unwrap_or("");
            let entry: PurchaseEntry =
                serde_json::from_str(d).map_err(|e| ApiError::internal_from("corrupt purchase-history entry", e))?;
            if !entry.deleted {
                out.push(entry);
            }
        }
        match page.next {
            Some(next) => q.start = Some(next),
            None => return Ok(out),
        }
    }
}

impl PurchaseEntry {
    /// The getOfferingPurchaseHistory record (OBSERVED-MORE's fields in order), with the
    /// offering's current `totalShares`, `targetAmount` and `remainingShares`.
    pub fn view(&self, o: &Offering) -> PurchaseView {
        PurchaseView {
            trade_id: self.trade_id.clone(),
            account_id: self.account_id.clone(),
            offering_id: self.offering_id.clone(),
            total_amount: six_decimals(self.total_amount),
            total_shares: self.total_shares.to_string(),
            purchase_date: self.purchase_date.clone(),
            account_name: self.account_name.clone(),
            offering_total_shares: o.total_shares.to_string(),
            target_amount: six_decimals(o.target_amount),
            remaining_shares: o.remaining_shares.to_string(),
        }
    }
}

/// One getOfferingPurchaseHistory record (see [`PurchaseEntry::view`]).
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PurchaseView {
    pub trade_id: String,
    pub account_id: String,
    pub offering_id: String,
    pub total_amount: String,
    pub total_shares: String,
    pub purchase_date: String,
    pub account_name: String,
    pub offering_total_shares: String,
    pub target_amount: String,
    pub remaining_shares: String,
}

// ---------------------------------------------------------------- escrow accounts

/// An escrow account an operator links to offerings (several offerings may share one).
/// Stored once per account number; the offering keeps the number.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct EscrowAccount {
    #[serde(rename = "escrowAccountNumber")]
    pub number: String,
    #[serde(rename = "escrowBank")]
    pub bank: String,
    /// `open` or `closed` (part 3).
    #[serde(rename = "escrowAccountStatus")]
    pub status: String,
    /// `YYYY-MM-DD` or null (part 3).
    #[serde(rename = "openDate")]
    pub open_date: Option<String>,
    #[serde(rename = "expirationDate")]
    pub expiration_date: Option<String>,
    #[serde(rename = "closeDate")]
    pub close_date: Option<String>,
}

/// The key of a client's escrow account: `<client>#ESCROW` / account number.
pub fn escrow_key(client: &str, number: &str) -> Key {
    Key::new(format!("{client}#ESCROW"), number)
}

/// The write that stores (or replaces) an escrow account.
pub fn escrow_write(client: &str, account: &EscrowAccount) -> Write {
    let mut item = escrow_key(client, &account.number).item();
    item.insert("d".into(), Val::S(serde_json::to_string(account).unwrap_or_default()));
    Write::Put { item, cond: None }
}

/// A client's escrow account by number (the escrow group reads an offering's through its
/// `escrowAccountNumber`).
pub async fn escrow_account(store: &dyn Store, client: &str, number: &str) -> Result<Option<EscrowAccount>, ApiError> {
    if number.is_empty() {
        return Ok(None);
    }
    let Some(item) = store.get(&escrow_key(client, number)).await? else {
        return Ok(None);
    };
    let d = item.get("d").and_then(Val::as_str).unwrap_or("");
    serde_json::from_str(d)
        .map(Some)
        .map_err(|e| ApiError::internal_from("corrupt escrow account", e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{apply_updates, eval_cond};

    fn item(remaining: i64, accepting: bool) -> Item {
        let mut i = offering_key("c", "100000").item();
        i.insert(attr::REMAINING_SHARES.into(), Val::from(remaining));
        i.insert(attr::OPEN_TRADES.into(), Val::from(0));
        i.insert(attr::ACCEPTS_INVESTMENTS.into(), Val::Bool(accepting));
        i
    }

    /// Applies a change write to an item as a store would: `None` when its condition fails.
    fn apply(w: &Write, current: Option<&Item>) -> Option<Item> {
        let Write::Update { key, ops, cond } = w else {
            panic!("a change is one update");
        };
        if !cond.as_ref().is_none_or(|c| eval_cond(c, current)) {
            return None;
        }
        let mut out = current.cloned().unwrap_or_else(|| key.item());
        apply_updates(&mut out, ops).unwrap();
        Some(out)
    }

    #[test]
    fn a_reservation_never_takes_more_than_remains() {
        let w = reserve_shares("c", "100000", 3);
        let after = apply(&w, Some(&item(3, true))).expect("exactly enough");
        assert_eq!(after[attr::REMAINING_SHARES], Val::from(0));
        assert_eq!(after[attr::OPEN_TRADES], Val::from(1));
        assert!(apply(&w, Some(&after)).is_none(), "none left");
        assert!(apply(&w, Some(&item(2, true))).is_none(), "too few");
        assert!(apply(&w, Some(&item(10, false))).is_none(), "not accepting investments");
        assert!(apply(&w, None).is_none(), "no offering item is ever created");
    }

    #[test]
    fn releases_and_status_moves_need_no_acceptance() {
        let after = apply(&release_shares("c", "100000", 4), Some(&item(1, false))).unwrap();
        assert_eq!(after[attr::REMAINING_SHARES], Val::from(5));
        let funded = OfferingChange {
            open_trades: -1,
            pending: Decimal::new(-1050, 2),
            funded: Decimal::new(1050, 2),
            ..OfferingChange::default()
        };
        let after = apply(&change_write("c", "100000", &funded), Some(&item(1, false))).unwrap();
        assert_eq!(after[attr::OPEN_TRADES], Val::from(-1));
        assert_eq!(after[attr::FUNDED_AMOUNT], Val::N(Decimal::new(1050, 2)));
        assert!(apply(&release_shares("c", "100000", 1), None).is_none());
    }

    #[test]
    fn closing_trade_statuses_match_loosely() {
        for s in [
            "FUNDED",
            "settled",
            "UNWIND SETTLED",
            "UNWIND_SETTLED",
            "Rejected",
            "CANCELED",
            "Cancelled",
        ] {
            assert!(is_closing_trade_status(s), "{s}");
        }
        for s in ["CREATED", "UNWIND PENDING", "UNWIND_PENDING", ""] {
            assert!(!is_closing_trade_status(s), "{s}");
        }
    }

    #[test]
    fn amounts_render_with_six_decimals_and_shares_are_whole_units() {
        assert_eq!(six_decimals(Decimal::new(15, 1)), "1.500000");
        assert_eq!(six_decimals(Decimal::new(1, 7)), "0.000000");
        assert_eq!(six_decimals(Decimal::from(100_000)), "100000.000000");
        assert_eq!(
            Offering::shares_for(Decimal::new(10055, 1), Decimal::new(25, 1)),
            Some(402)
        );
        assert_eq!(Offering::shares_for(Decimal::from(5), Decimal::ZERO), None);
    }

    #[test]
    fn the_record_keeps_authoritative_counters_outside_its_json() {
        let o = Offering {
            id: "100000".into(),
            total_shares: 10,
            remaining_shares: 10,
            status: status::PENDING.into(),
            created: "2026-01-01 00:00:00".into(),
            ..Offering::default()
        };
        let writes = insert("c", &o).unwrap();
        let Write::Put { item, .. } = &writes[0] else {
            panic!("insert puts the item");
        };
        let d = item["d"].as_str().unwrap();
        assert!(!d.contains("remainingShares"), "{d}");
        let mut item = item.clone();
        item.insert(attr::REMAINING_SHARES.into(), Val::from(7));
        let read = records::from_item::<Offering>(&item).unwrap().rec;
        assert_eq!((read.total_shares, read.remaining_shares), (10, 7));
        assert_eq!(read.details().fields.remaining_shares, "7");
    }
}
