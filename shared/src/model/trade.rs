//! Trades: an account's investment intent in an offering, and what the payments, escrow and
//! trade-document groups build on: the record, its status table, the writes that keep its
//! read copies and its offering's counters right in ONE transaction, and the pending-ACH
//! marker that guards cancellation.
//!
//! # Items
//!
//! | item | key (`pk` / `sk`) | holds |
//! |---|---|---|
//! | the trade | `<client>#TRADE` / tradeId | [`Trade`] JSON in `d`, version `v`, list keys `gsi1`/`gsi2` ([`records`]) |
//! | by offering | `<client>#TRADE#OFFERING#<offeringId>` / sortable tradeId | a copy of `d` (getTradesForOffering) |
//! | by account | `<client>#TRADE#ACCOUNT#<accountId>` / sortable tradeId | a copy of `d` (getAccountTradeHistory) |
//! | purchase history | `<client>#PURCHASE#<offeringId>` / sortable tradeId | [`offering::PurchaseEntry`] |
//! | pending ACH | `<client>#TRADEACH` / tradeId | present while an ACH fund move of the trade is `Pending` |
//!
//! Every change of a trade goes through [`insert`] or [`replace`] (the record, both copies
//! and the purchase entry) plus, when the change moves shares or money, the offering's
//! [`crate::records::offering::change_write`] computed by [`offering_change`] from the trade as read and as
//! written. The record's put is conditioned on the version read, the offering's update on
//! enough remaining shares: a concurrent change fails the whole transaction and the caller
//! reads again.

use rust_decimal::prelude::ToPrimitive;
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::ApiError;
use crate::ids::sortable;
use crate::mask::MASK;
use crate::model::offering::{self, six_decimals, OfferingChange, PurchaseEntry};
use crate::records::{self, Record, Stored};
use crate::store::{Cond, Index, Key, Query, SkRange, Store, Val, Write};
use crate::webhooks::Event;

pub use super::ids::no_trade;

/// `190`: the trade's status does not allow the operation (the incumbent's "Trade status
/// should be in CREATED", generalised to every status rule of the trade operations).
pub fn wrong_status(why: impl Into<String>) -> ApiError {
    ApiError::coded("190", why)
}

/// `150`: an ACH fund move of the trade is pending, so it cannot be cancelled (or its payment
/// method changed) before the payments group voids or settles it.
pub fn ach_pending() -> ApiError {
    ApiError::coded("150", "External Fund Move Already in Process for this trade")
}

/// A trade status, parsed loosely from what clients send: any casing, `_` for a space,
/// repeated spaces, `CANCELLED` for `CANCELED`. The stored `orderStatus` keeps what was sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TradeStatus {
    Created,
    Funded,
    Settled,
    UnwindPending,
    UnwindSettled,
    Canceled,
    Rejected,
}

impl TradeStatus {
    pub const ALL: [TradeStatus; 7] = [
        TradeStatus::Created,
        TradeStatus::Funded,
        TradeStatus::Settled,
        TradeStatus::UnwindPending,
        TradeStatus::UnwindSettled,
        TradeStatus::Canceled,
        TradeStatus::Rejected,
    ];

    pub fn parse(s: &str) -> Option<TradeStatus> {
        let norm = s
            .replace('_', " ")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .to_ascii_uppercase();
        Some(match norm.as_str() {
            "CREATED" => TradeStatus::Created,
            "FUNDED" => TradeStatus::Funded,
            "SETTLED" => TradeStatus::Settled,
            "UNWIND PENDING" => TradeStatus::UnwindPending,
            "UNWIND SETTLED" => TradeStatus::UnwindSettled,
            "CANCELED" | "CANCELLED" => TradeStatus::Canceled,
            "REJECTED" => TradeStatus::Rejected,
            _ => return None,
        })
    }

    /// The spelling the service stores when it sets the status itself.
    pub fn name(self) -> &'static str {
        match self {
            TradeStatus::Created => "CREATED",
            TradeStatus::Funded => "FUNDED",
            TradeStatus::Settled => "SETTLED",
            TradeStatus::UnwindPending => "UNWIND PENDING",
            TradeStatus::UnwindSettled => "UNWIND SETTLED",
            TradeStatus::Canceled => "CANCELED",
            TradeStatus::Rejected => "Rejected",
        }
    }

    /// The state table: where a trade in this status may move.
    ///
    /// | from | to |
    /// |---|---|
    /// | `CREATED` | `FUNDED`, `CANCELED`, `Rejected` |
    /// | `FUNDED` | `SETTLED`, `CREATED` (funds returned), `UNWIND PENDING`, `CANCELED`, `Rejected` |
    /// | `SETTLED` | `UNWIND PENDING` |
    /// | `UNWIND PENDING` | `UNWIND SETTLED` |
    /// | `UNWIND SETTLED`, `CANCELED`, `Rejected` | none (terminal) |
    pub fn next(self) -> &'static [TradeStatus] {
        use TradeStatus::*;
        match self {
            Created => &[Funded, Canceled, Rejected],
            Funded => &[Settled, Created, UnwindPending, Canceled, Rejected],
            Settled => &[UnwindPending],
            UnwindPending => &[UnwindSettled],
            UnwindSettled | Canceled | Rejected => &[],
        }
    }

    pub fn can_move_to(self, to: TradeStatus) -> bool {
        self.next().contains(&to)
    }

    pub fn is_terminal(self) -> bool {
        self.next().is_empty()
    }

    /// Whether the trade holds its units of the offering (every status but `CANCELED`,
    /// `Rejected` and `UNWIND SETTLED`); these count in `committedAmount` too.
    pub fn holds_shares(self) -> bool {
        !matches!(
            self,
            TradeStatus::Canceled | TradeStatus::Rejected | TradeStatus::UnwindSettled
        )
    }

    /// Whether the trade keeps its offering from closing (`offering::is_closing_trade_status`
    /// is false for it): `CREATED`, `UNWIND PENDING`.
    pub fn is_open(self) -> bool {
        !offering::is_closing_trade_status(self.name())
    }

    /// Counted in `pendingAmount` (awaiting funds).
    pub fn is_pending(self) -> bool {
        self == TradeStatus::Created
    }

    /// Counted in `fundedAmount` (funds arrived).
    pub fn is_funded(self) -> bool {
        matches!(self, TradeStatus::Funded | TradeStatus::Settled)
    }
}

/// Why and by whom an investment was cancelled (cancelInvestment, fundReturnRequest).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Cancellation {
    #[serde(rename = "requestedBy")]
    pub requested_by: String,
    pub reason: String,
    pub notes: String,
    #[serde(rename = "createdIpAddress")]
    pub ip: String,
    #[serde(rename = "createdDate")]
    pub date: String,
}

/// A trade, stored with the field names its reads answer.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Trade {
    #[serde(rename = "tradeId")]
    pub id: String,
    #[serde(rename = "offeringId")]
    pub offering_id: String,
    #[serde(rename = "accountId")]
    pub account_id: String,
    /// The account's name when the trade was created (the purchase history shows it).
    #[serde(rename = "accountName")]
    pub account_name: String,
    /// The account's primary party when the trade was created (it signs the documents).
    #[serde(rename = "partyId")]
    pub party_id: String,
    /// The primary party's link type: always `IndivACParty` (a primary party is individual).
    pub party_type: String,
    /// The offering's escrow account number when the trade was created (empty when none).
    #[serde(rename = "escrowId")]
    pub escrow_id: String,
    /// The trade's transaction reference: its ID (CONTRACT: a non-empty string).
    #[serde(rename = "transactionId")]
    pub transaction_id: String,
    /// Upper-cased, spaces and underscores removed (`EXTERNALCREDITCARD`).
    #[serde(rename = "transactionType")]
    pub transaction_type: String,
    /// Units of the offering.
    #[serde(rename = "totalShares")]
    pub units: i64,
    #[serde(rename = "unitPrice")]
    pub unit_price: Decimal,
    pub fees: Decimal,
    /// `unitPrice` × units + `fees`.
    #[serde(rename = "totalAmount")]
    pub total_amount: Decimal,
    /// As last sent (`UNWIND_PENDING` stays so); [`Trade::status`] parses it.
    #[serde(rename = "orderStatus")]
    pub status: String,
    pub errors: String,
    #[serde(rename = "documentKey")]
    pub document_key: String,
    /// `NOTSIGNED` until the e-signature flow reports otherwise.
    #[serde(rename = "esignStatus")]
    pub esign_status: String,
    pub users: String,
    pub field1: String,
    pub field2: String,
    pub field3: String,
    #[serde(rename = "RRApprovalStatus")]
    pub rr_approval_status: String,
    #[serde(rename = "RRName")]
    pub rr_name: String,
    #[serde(rename = "RRApprovalDate")]
    pub rr_approval_date: String,
    #[serde(rename = "PrincipalApprovalStatus")]
    pub principal_approval_status: String,
    #[serde(rename = "PrincipalName")]
    pub principal_name: String,
    #[serde(rename = "PrincipalDate")]
    pub principal_date: String,
    #[serde(rename = "closeId")]
    pub close_id: String,
    /// `yes` or `no`.
    #[serde(rename = "eligibleToClose")]
    pub eligible_to_close: String,
    pub archived: bool,
    /// Virtually deleted (deleteTrade): still readable by ID, out of the lists.
    pub deleted: bool,
    pub cancellation: Option<Cancellation>,
    #[serde(rename = "createdDate")]
    pub created: String,
    #[serde(rename = "createdIpAddress")]
    pub created_ip: String,
    #[serde(rename = "updatedDate")]
    pub updated: String,
    #[serde(rename = "updatedIpAddress")]
    pub updated_ip: String,
}

impl Record for Trade {
    const KIND: &'static str = "TRADE";
    fn id(&self) -> &str {
        &self.id
    }
    fn created(&self) -> &str {
        &self.created
    }
    fn deleted(&self) -> bool {
        self.deleted
    }
}

/// `transactionType` as stored: upper case, without spaces or underscores.
pub fn normalize_transaction_type(raw: &str) -> String {
    raw.chars()
        .filter(|c| !c.is_whitespace() && *c != '_')
        .collect::<String>()
        .to_uppercase()
}

/// `unitPrice` × `units` + `fees`; `None` when it overflows.
pub fn total_amount(unit_price: Decimal, units: i64, fees: Decimal) -> Option<Decimal> {
    unit_price.checked_mul(Decimal::from(units))?.checked_add(fees)
}

/// A decimal as a JSON number (editTradeUnits' `sharePrice`).
pub fn json_number(d: Decimal) -> Value {
    d.to_f64()
        .and_then(serde_json::Number::from_f64)
        .map(Value::Number)
        .unwrap_or_else(|| Value::String(d.to_string()))
}

/// What a trade holds of its offering: the inputs of [`offering_change`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Holding {
    pub status: TradeStatus,
    pub units: i64,
    pub amount: Decimal,
}

impl Holding {
    /// The offering counters this holding contributes to.
    fn contribution(self) -> OfferingChange {
        let holds = self.status.holds_shares();
        let pick = |on: bool| if on { self.amount } else { Decimal::ZERO };
        OfferingChange {
            shares: if holds { self.units } else { 0 },
            open_trades: i64::from(self.status.is_open()),
            pending: pick(self.status.is_pending()),
            funded: pick(self.status.is_funded()),
            committed: pick(holds),
            require_accepting: false,
        }
    }
}

/// What a trade change does to its offering: the counters of the trade after the change
/// minus those before (`None` for a new trade). Adding units requires the offering to accept
/// investments.
pub fn offering_change(before: Option<Holding>, after: Holding) -> OfferingChange {
    let b = before.map(Holding::contribution).unwrap_or_default();
    let a = after.contribution();
    OfferingChange {
        shares: a.shares - b.shares,
        open_trades: a.open_trades - b.open_trades,
        pending: a.pending - b.pending,
        funded: a.funded - b.funded,
        committed: a.committed - b.committed,
        require_accepting: a.shares > b.shares,
    }
}

/// The offering write of a change, or none when it changes nothing there.
pub fn offering_write(client: &str, offering_id: &str, change: &OfferingChange) -> Option<Write> {
    let zero = OfferingChange {
        require_accepting: change.require_accepting,
        ..OfferingChange::default()
    };
    (change != &zero).then(|| crate::records::offering::change_write(client, offering_id, change))
}

/// A webhook value: text as it is.
fn text(v: &str) -> Option<String> {
    Some(v.to_owned())
}

impl Trade {
    /// The status, parsed; a stored status is always one of the table's.
    pub fn status(&self) -> TradeStatus {
        TradeStatus::parse(&self.status).unwrap_or_else(|| {
            tracing::error!(trade = %self.id, status = %self.status, "stored trade status outside the table");
            TradeStatus::Canceled
        })
    }

    pub fn holding(&self) -> Holding {
        Holding {
            status: if self.deleted {
                TradeStatus::Canceled
            } else {
                self.status()
            },
            units: self.units,
            amount: self.total_amount,
        }
    }

    /// `unitPrice` × units: the value of the shares, without fees (`sharePrice`).
    pub fn share_value(&self) -> Decimal {
        self.unit_price * Decimal::from(self.units)
    }

    pub fn archived_status(&self) -> &'static str {
        if self.archived {
            "1"
        } else {
            "0"
        }
    }

    fn approvals(&self, m: &mut Map<String, Value>) {
        m.insert("RRApprovalStatus".into(), self.rr_approval_status.clone().into());
        m.insert("RRName".into(), self.rr_name.clone().into());
        m.insert("RRApprovalDate".into(), self.rr_approval_date.clone().into());
        m.insert(
            "PrincipalApprovalStatus".into(),
            self.principal_approval_status.clone().into(),
        );
        m.insert("PrincipalName".into(), self.principal_name.clone().into());
        m.insert("PrincipalDate".into(), self.principal_date.clone().into());
    }

    fn fields(&self, m: &mut Map<String, Value>) {
        m.insert("field1".into(), self.field1.clone().into());
        m.insert("field2".into(), self.field2.clone().into());
        m.insert("field3".into(), self.field3.clone().into());
    }

    /// The createTrade record (part 2's Trade "created record"), every field present.
    pub fn created_record(&self) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert("tradeId".into(), self.id.clone().into());
        m.insert("transactionId".into(), self.transaction_id.clone().into());
        m.insert("transactionAmount".into(), six_decimals(self.total_amount).into());
        m.insert("transactionDate".into(), self.created.clone().into());
        m.insert("transactionStatus".into(), self.status.clone().into());
        self.approvals(&mut m);
        m.insert("closeId".into(), self.close_id.clone().into());
        m.insert("eligibleToClose".into(), self.eligible_to_close.clone().into());
        m
    }

    /// The createTrade webhook: part 1's fields, `closeId` only when set.
    pub fn created_event(&self) -> Event {
        Event::new("createTrade")
            .field("tradeId", text(&self.id))
            .field("transactionId", text(&self.transaction_id))
            .field("transactionAmount", six_decimals(self.total_amount))
            .field("transactionDate", text(&self.created))
            .field("transactionStatus", text(&self.status))
            .field("RRApprovalStatus", text(&self.rr_approval_status))
            .field("RRName", text(&self.rr_name))
            .field("RRApprovalDate", text(&self.rr_approval_date))
            .field("PrincipalApprovalStatus", text(&self.principal_approval_status))
            .field("PrincipalName", text(&self.principal_name))
            .field("PrincipalDate", text(&self.principal_date))
            .field_if_set("closeId", &self.close_id)
            .field("eligibleToClose", text(&self.eligible_to_close))
    }

    /// The fields every trade read starts with: `id` (the trade ID), `developerAPIKey`
    /// (masked), and the order's identity and amounts.
    fn head(&self, m: &mut Map<String, Value>, with_key: bool) {
        m.insert("id".into(), self.id.clone().into());
        if with_key {
            m.insert("developerAPIKey".into(), MASK.into());
        }
        m.insert("offeringId".into(), self.offering_id.clone().into());
        m.insert("accountId".into(), self.account_id.clone().into());
        m.insert("partyId".into(), self.party_id.clone().into());
        m.insert("party_type".into(), self.party_type.clone().into());
        m.insert("escrowId".into(), self.escrow_id.clone().into());
        m.insert("orderId".into(), self.id.clone().into());
        m.insert("transactionType".into(), self.transaction_type.clone().into());
        m.insert("totalAmount".into(), six_decimals(self.total_amount).into());
        m.insert("totalShares".into(), self.units.to_string().into());
        m.insert("orderStatus".into(), self.status.clone().into());
        m.insert("createdDate".into(), self.created.clone().into());
        m.insert("createdIpAddress".into(), self.created_ip.clone().into());
        m.insert("errors".into(), self.errors.clone().into());
        m.insert("documentKey".into(), self.document_key.clone().into());
        m.insert("esignStatus".into(), self.esign_status.clone().into());
        m.insert("users".into(), self.users.clone().into());
    }

    /// The getTrade record (OBSERVED.md): `id`, `developerAPIKey` (masked), ..., `users`,
    /// `field1`-`field3`, RR and principal fields, `archived_status`, `closeId`,
    /// `eligibleToClose`.
    pub fn details(&self) -> Map<String, Value> {
        let mut m = Map::new();
        self.head(&mut m, true);
        self.fields(&mut m);
        self.approvals(&mut m);
        m.insert("archived_status".into(), self.archived_status().into());
        m.insert("closeId".into(), self.close_id.clone().into());
        m.insert("eligibleToClose".into(), self.eligible_to_close.clone().into());
        m
    }

    /// The getTradeStatus record (OBSERVED-MORE.md, in its order).
    pub fn status_record(&self) -> Map<String, Value> {
        let mut m = Map::new();
        self.head(&mut m, true);
        m.insert("archived_status".into(), self.archived_status().into());
        self.fields(&mut m);
        m.insert("RRApprovalStatus".into(), self.rr_approval_status.clone().into());
        m.insert("RRApprovalDate".into(), self.rr_approval_date.clone().into());
        m
    }

    /// The cancelled-investment record of part 2 (cancelInvestment, fundReturnRequest).
    pub fn cancelled_record(&self) -> Map<String, Value> {
        let mut m = Map::new();
        self.head(&mut m, false);
        m.insert("archived_status".into(), self.archived_status().into());
        self.fields(&mut m);
        m
    }

    /// The updateTradeStatus webhook (part 1's fields, in order).
    pub fn status_event(&self, method: &str) -> Event {
        let mut e = Event::new(method)
            .field("tradeId", text(&self.id))
            .field("id", text(&self.id))
            .field("offeringId", text(&self.offering_id))
            .field("accountId", text(&self.account_id))
            .field("partyId", text(&self.party_id))
            .field("party_type", text(&self.party_type))
            .field("escrowId", text(&self.escrow_id))
            .field("transactionType", text(&self.transaction_type))
            .field("totalAmount", six_decimals(self.total_amount))
            .field("totalShares", self.units.to_string())
            .field("orderStatus", text(&self.status))
            .field("createdDate", text(&self.created))
            .field("createdIpAddress", text(&self.created_ip))
            .field("errors", text(&self.errors))
            .field("documentKey", text(&self.document_key))
            .field("esignStatus", text(&self.esign_status))
            .field("users", text(&self.users));
        e = self.event_fields(e);
        e = self.event_approvals(e);
        e.field("archived_status", self.archived_status().to_owned())
            .field_if_set("closeId", &self.close_id)
            .field("eligibleToClose", text(&self.eligible_to_close))
    }

    /// The updateTrade webhook (part 1's fields, in order).
    pub fn update_event(&self, method: &str) -> Event {
        let e = Event::new(method)
            .field("tradeId", text(&self.id))
            .field("accountId", text(&self.account_id))
            .field("offeringId", text(&self.offering_id))
            .field("orderStatus", text(&self.status));
        let e = self.event_approvals(e);
        self.event_fields(e).field_if_set("closeId", &self.close_id)
    }

    fn event_fields(&self, e: Event) -> Event {
        e.field("field1", text(&self.field1))
            .field("field2", text(&self.field2))
            .field("field3", text(&self.field3))
    }

    fn event_approvals(&self, e: Event) -> Event {
        e.field("RRApprovalStatus", text(&self.rr_approval_status))
            .field("RRName", text(&self.rr_name))
            .field("RRApprovalDate", text(&self.rr_approval_date))
            .field("PrincipalApprovalStatus", text(&self.principal_approval_status))
            .field("PrincipalName", text(&self.principal_name))
            .field("PrincipalDate", text(&self.principal_date))
    }

    /// The getTradesForOffering record (OBSERVED.md).
    pub fn offering_view(&self) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert("accountId".into(), self.account_id.clone().into());
        m.insert("orderId".into(), self.id.clone().into());
        m.insert("orderStatus".into(), self.status.clone().into());
        m.insert("totalAmount".into(), six_decimals(self.total_amount).into());
        m.insert("totalShares".into(), self.units.to_string().into());
        m.insert("transactionType".into(), self.transaction_type.clone().into());
        m.insert("unitPrice".into(), six_decimals(self.unit_price).into());
        self.fields(&mut m);
        m
    }

    /// The updateTradeTransactionType record (OBSERVED-MORE.md).
    pub fn transaction_type_record(&self) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert("orderId".into(), self.id.clone().into());
        m.insert("id".into(), self.id.clone().into());
        m.insert("transactionType".into(), self.transaction_type.clone().into());
        m.insert("developerAPIKey".into(), MASK.into());
        m.insert("offeringId".into(), self.offering_id.clone().into());
        m.insert("accountId".into(), self.account_id.clone().into());
        m.insert("partyId".into(), self.party_id.clone().into());
        m.insert("party_type".into(), self.party_type.clone().into());
        m.insert("totalAmount".into(), six_decimals(self.total_amount).into());
        m.insert("totalShares".into(), self.units.to_string().into());
        m.insert("orderStatus".into(), self.status.clone().into());
        m
    }

    /// The `GET /v3/trades` record: every stored field a client may filter or sort on;
    /// with `deleted=true`, also `archived` (`1` for a deleted trade, as observed).
    pub fn list_view(&self, with_deleted: bool) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert("tradeId".into(), self.id.clone().into());
        m.insert("offeringId".into(), self.offering_id.clone().into());
        m.insert("accountId".into(), self.account_id.clone().into());
        m.insert("partyId".into(), self.party_id.clone().into());
        m.insert("party_type".into(), self.party_type.clone().into());
        m.insert("escrowId".into(), self.escrow_id.clone().into());
        m.insert("transactionId".into(), self.transaction_id.clone().into());
        m.insert("transactionType".into(), self.transaction_type.clone().into());
        m.insert("unitPrice".into(), six_decimals(self.unit_price).into());
        m.insert("totalShares".into(), self.units.to_string().into());
        m.insert("fees".into(), six_decimals(self.fees).into());
        m.insert("totalAmount".into(), six_decimals(self.total_amount).into());
        m.insert("orderStatus".into(), self.status.clone().into());
        m.insert("errors".into(), self.errors.clone().into());
        m.insert("documentKey".into(), self.document_key.clone().into());
        m.insert("esignStatus".into(), self.esign_status.clone().into());
        m.insert("users".into(), self.users.clone().into());
        self.approvals(&mut m);
        m.insert("closeId".into(), self.close_id.clone().into());
        m.insert("eligibleToClose".into(), self.eligible_to_close.clone().into());
        self.fields(&mut m);
        m.insert("archived_status".into(), self.archived_status().into());
        if with_deleted {
            m.insert("archived".into(), if self.deleted { "1" } else { "0" }.into());
        }
        m.insert("createdDate".into(), self.created.clone().into());
        m.insert("createdIpAddress".into(), self.created_ip.clone().into());
        m.insert("updatedDate".into(), self.updated.clone().into());
        m
    }

    /// The trade's purchase-history entry.
    pub fn purchase_entry(&self) -> PurchaseEntry {
        PurchaseEntry {
            trade_id: self.id.clone(),
            account_id: self.account_id.clone(),
            offering_id: self.offering_id.clone(),
            total_amount: self.total_amount,
            total_shares: self.units,
            purchase_date: self.created.clone(),
            account_name: self.account_name.clone(),
            order_status: self.status.clone(),
            deleted: self.deleted,
        }
    }
}

// ---------------------------------------------------------------- keys and writes

pub fn trade_key(client: &str, trade_id: &str) -> Key {
    records::key::<Trade>(client, trade_id)
}

/// The partition of an offering's trade copies.
pub fn by_offering_pk(client: &str, offering_id: &str) -> String {
    format!("{client}#TRADE#OFFERING#{offering_id}")
}

/// The partition of an account's trade copies.
pub fn by_account_pk(client: &str, account_id: &str) -> String {
    format!("{client}#TRADE#ACCOUNT#{account_id}")
}

fn copy_write(pk: String, t: &Trade) -> Result<Write, ApiError> {
    let mut item = Key::new(pk, sortable(&t.id)).item();
    let json = serde_json::to_string(t).map_err(|e| ApiError::internal_from("trade does not serialize", e))?;
    item.insert("d".into(), Val::S(json));
    Ok(Write::Put { item, cond: None })
}

/// The writes beside the record: both read copies and the purchase-history entry.
fn companions(client: &str, t: &Trade) -> Result<Vec<Write>, ApiError> {
    Ok(vec![
        copy_write(by_offering_pk(client, &t.offering_id), t)?,
        copy_write(by_account_pk(client, &t.account_id), t)?,
        crate::records::offering::purchase_write(client, &t.purchase_entry()),
    ])
}

/// The writes that create a trade: the record (must not exist), its count, its copies, its
/// purchase entry, and the offering's reservation (shares, open trade, amounts; only while
/// the offering accepts investments and enough units remain).
pub fn insert(client: &str, t: &Trade) -> Result<Vec<Write>, ApiError> {
    let mut writes = records::insert(client, t)?;
    writes.extend(companions(client, t)?);
    let change = offering_change(None, t.holding());
    writes.extend(offering_write(client, &t.offering_id, &change));
    Ok(writes)
}

/// The writes that change a trade (`before` as read): the record conditioned on its
/// version, its copies and purchase entry, and the offering's counters moved by the
/// difference of what the trade holds before and after.
pub fn replace(client: &str, before: &Stored<Trade>, after: &Trade) -> Result<Vec<Write>, ApiError> {
    let mut writes = records::replace(client, before, after)?;
    writes.extend(companions(client, after)?);
    let change = offering_change(Some(before.rec.holding()), after.holding());
    writes.extend(offering_write(client, &after.offering_id, &change));
    Ok(writes)
}

/// The position of the offering write in `writes` (a failed condition there means the
/// offering stopped accepting investments or ran out of units).
pub fn offering_write_index(client: &str, offering_id: &str, writes: &[Write]) -> Option<usize> {
    let key = crate::records::offering::offering_key(client, offering_id);
    writes.iter().position(|w| w.key().as_ref() == Some(&key))
}

// ---------------------------------------------------------------- reads

fn decode(item: &crate::store::Item) -> Result<Trade, ApiError> {
    let d = item.get("d").and_then(Val::as_str).unwrap_or("");
    serde_json::from_str(d).map_err(|e| ApiError::internal_from("corrupt trade copy", e))
}

/// A trade of the client (deleted ones included), `None` when unknown.
pub async fn load(store: &dyn Store, client: &str, trade_id: &str) -> Result<Option<Stored<Trade>>, ApiError> {
    records::load::<Trade>(store, client, trade_id).await
}

pub use super::ids::numeric_id;

/// The trade named `trade_id` (numeric, `106` otherwise), deleted ones included; `188`
/// when the client has none with that ID.
pub async fn existing(store: &dyn Store, client: &str, trade_id: &str) -> Result<Stored<Trade>, ApiError> {
    let id = numeric_id("tradeId", trade_id)?;
    load(store, client, &id).await?.ok_or_else(no_trade)
}

async fn copies(store: &dyn Store, pk: String, forward: bool) -> Result<Vec<Trade>, ApiError> {
    let mut q = Query::new(Index::Table, pk);
    q.sk = SkRange::All;
    q.forward = forward;
    let mut out = Vec::new();
    loop {
        let page = store.query(&q).await?;
        for item in &page.items {
            out.push(decode(item)?);
        }
        match page.next {
            Some(next) => q.start = Some(next),
            None => return Ok(out),
        }
    }
}

/// An offering's trades, deleted ones included, oldest first (one query per 1000).
pub async fn of_offering(store: &dyn Store, client: &str, offering_id: &str) -> Result<Vec<Trade>, ApiError> {
    copies(store, by_offering_pk(client, offering_id), true).await
}

/// An account's trades, deleted ones included, newest first (one query per 1000).
pub async fn of_account(store: &dyn Store, client: &str, account_id: &str) -> Result<Vec<Trade>, ApiError> {
    copies(store, by_account_pk(client, account_id), false).await
}

// ---------------------------------------------------------------- the payments seam

/// The key of a trade's pending-ACH marker.
pub fn pending_ach_key(client: &str, trade_id: &str) -> Key {
    Key::new(format!("{client}#TRADEACH"), trade_id)
}

/// For the payments group: the write that marks a trade's ACH fund move `Pending` (put it in
/// externalFundMove's transaction; `ref_num` is the fund move's `RefNum`). While the marker
/// exists, deleteTrade, cancelInvestment, a cancel or reject through updateTradeStatus and
/// updateTradeTransactionType answer `150` and change nothing.
pub fn pending_ach_put(client: &str, trade_id: &str, ref_num: &str) -> Write {
    let mut item = pending_ach_key(client, trade_id).item();
    item.insert("RefNum".into(), Val::S(ref_num.to_owned()));
    Write::Put { item, cond: None }
}

/// For the payments group: the write that clears the marker when the fund move leaves
/// `Pending` (submitted, voided, returned).
pub fn pending_ach_clear(client: &str, trade_id: &str) -> Write {
    Write::Delete {
        key: pending_ach_key(client, trade_id),
        cond: None,
    }
}

/// The check the trade operations put in their transaction: no ACH fund move of the trade
/// is pending. It fails the transaction (and the operation answers [`ach_pending`]) when a
/// concurrent externalFundMove got there first.
pub fn no_pending_ach(client: &str, trade_id: &str) -> Write {
    Write::Check {
        key: pending_ach_key(client, trade_id),
        cond: Cond::NotExists,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_parse_loosely() {
        assert_eq!(TradeStatus::parse("unwind_pending"), Some(TradeStatus::UnwindPending));
        assert_eq!(
            TradeStatus::parse(" UNWIND  PENDING "),
            Some(TradeStatus::UnwindPending)
        );
        assert_eq!(TradeStatus::parse("Cancelled"), Some(TradeStatus::Canceled));
        assert_eq!(TradeStatus::parse("Rejected"), Some(TradeStatus::Rejected));
        assert_eq!(TradeStatus::parse("DONE"), None);
        for s in TradeStatus::ALL {
            assert_eq!(TradeStatus::parse(s.name()), Some(s));
        }
    }

    #[test]
    fn the_open_statuses_are_those_that_keep_an_offering_from_closing() {
        let open: Vec<_> = TradeStatus::ALL.into_iter().filter(|s| s.is_open()).collect();
        assert_eq!(open, vec![TradeStatus::Created, TradeStatus::UnwindPending]);
        assert!(TradeStatus::Canceled.is_terminal() && !TradeStatus::Canceled.holds_shares());
    }

    fn h(status: TradeStatus, units: i64, amount: i64) -> Holding {
        Holding {
            status,
            units,
            amount: Decimal::from(amount),
        }
    }

    #[test]
    fn offering_changes_follow_the_offerings_table() {
        use TradeStatus::*;
        let c = offering_change(None, h(Created, 5, 50));
        assert_eq!(c, OfferingChange::new_trade(5, Decimal::from(50)));
        let c = offering_change(Some(h(Created, 5, 50)), h(Funded, 5, 50));
        assert_eq!((c.shares, c.open_trades), (0, -1));
        assert_eq!(
            (c.pending, c.funded, c.committed),
            (Decimal::from(-50), Decimal::from(50), Decimal::ZERO)
        );
        let c = offering_change(Some(h(Funded, 5, 50)), h(UnwindPending, 5, 50));
        assert_eq!(
            (c.open_trades, c.funded, c.committed),
            (1, Decimal::from(-50), Decimal::ZERO)
        );
        let c = offering_change(Some(h(UnwindPending, 5, 50)), h(UnwindSettled, 5, 50));
        assert_eq!((c.shares, c.open_trades, c.committed), (-5, -1, Decimal::from(-50)));
        let c = offering_change(Some(h(Created, 5, 50)), h(Canceled, 5, 50));
        assert_eq!((c.shares, c.open_trades, c.pending), (-5, -1, Decimal::from(-50)));
        let c = offering_change(Some(h(Created, 5, 50)), h(Created, 8, 80));
        assert!(c.require_accepting);
        assert_eq!(
            (c.shares, c.pending, c.committed),
            (3, Decimal::from(30), Decimal::from(30))
        );
        let c = offering_change(Some(h(Funded, 5, 50)), h(Settled, 5, 50));
        assert!(offering_write("c", "1", &c).is_none(), "nothing moves");
    }

    #[test]
    fn transaction_types_are_upper_cased_without_spaces_or_underscores() {
        assert_eq!(normalize_transaction_type("external credit card"), "EXTERNALCREDITCARD");
        assert_eq!(
            normalize_transaction_type("Operator_Custody Account"),
            "OPERATORCUSTODYACCOUNT"
        );
        assert_eq!(normalize_transaction_type(" _ "), "");
    }
}
