//! Trades: an account's investment intent in an offering, and what the payments, escrow and
//! trade-document groups build on: the record, its status table, its views, and what a
//! change of the trade does to its offering's counters ([`offering_change`]). Keys, reads
//! and writes are in [`crate::records::trade`].

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::ApiError;
use crate::mask::MASK;
use crate::model::offering::{self, six_decimals, OfferingChange, PurchaseEntry};
use crate::model::Stamps;
use crate::webhooks::{view_event, Event};

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

    /// A status that holds no money: leaving `FUNDED` for it returns the settled funds.
    pub fn is_unfunded(self) -> bool {
        matches!(self, TradeStatus::Created) || !self.holds_shares()
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
    #[serde(flatten)]
    pub stamps: Stamps,
}

crate::records::record!(stamped Trade, "TRADE", id);

/// `transactionType` as stored: upper case, without spaces or underscores.
pub fn normalize_transaction_type(raw: &str) -> String {
    raw.chars()
        .filter(|c| !c.is_whitespace() && *c != '_')
        .collect::<String>()
        .to_uppercase()
}

/// `unitPrice` × `units` + `fees`; `None` when it reaches the service's amount limit.
pub fn total_amount(unit_price: Decimal, units: i64, fees: Decimal) -> Option<Decimal> {
    unit_price
        .checked_mul(Decimal::from(units))?
        .checked_add(fees)
        .filter(|total| *total < super::validate::amount_limit())
}

/// A decimal as a JSON number (editTradeUnits' `sharePrice`), digit for digit: serde_json
/// keeps numbers as their text (`arbitrary_precision`), so no float rounds it.
pub fn json_number(d: Decimal) -> Value {
    d.normalize()
        .to_string()
        .parse::<serde_json::Number>()
        .map(Value::Number)
        .unwrap_or_else(|_| Value::String(d.to_string()))
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

    fn parties(&self) -> PartiesView<'_> {
        PartiesView {
            offering_id: &self.offering_id,
            account_id: &self.account_id,
            party_id: &self.party_id,
            party_type: &self.party_type,
            escrow_id: &self.escrow_id,
        }
    }

    fn order(&self) -> OrderView<'_> {
        OrderView {
            transaction_type: &self.transaction_type,
            total_amount: six_decimals(self.total_amount),
            total_shares: self.units.to_string(),
            order_status: &self.status,
            created_date: &self.stamps.created,
            created_ip_address: &self.stamps.created_ip,
            errors: &self.errors,
            document_key: &self.document_key,
            esign_status: &self.esign_status,
            users: &self.users,
        }
    }

    fn fields(&self) -> FieldsView<'_> {
        FieldsView {
            field1: &self.field1,
            field2: &self.field2,
            field3: &self.field3,
        }
    }

    /// `offeringId` to `users`, then `field1`-`field3`.
    pub fn body(&self) -> BodyView<'_> {
        BodyView {
            parties: self.parties(),
            order: self.order(),
            fields: self.fields(),
        }
    }

    fn approvals(&self) -> ApprovalsView<'_> {
        ApprovalsView {
            rr_approval_status: &self.rr_approval_status,
            rr_name: &self.rr_name,
            rr_approval_date: &self.rr_approval_date,
            principal_approval_status: &self.principal_approval_status,
            principal_name: &self.principal_name,
            principal_date: &self.principal_date,
        }
    }

    /// `closeId` when set: webhooks omit it when empty (`*` in part 1's table).
    fn close_id_if_set(&self) -> Option<&str> {
        Some(self.close_id.as_str()).filter(|c| !c.is_empty())
    }

    /// The createTrade record (part 2's Trade "created record"), every field present.
    pub fn created_view(&self) -> CreatedView<'_> {
        CreatedView {
            trade_id: &self.id,
            transaction_id: &self.transaction_id,
            transaction_amount: six_decimals(self.total_amount),
            transaction_date: &self.stamps.created,
            transaction_status: &self.status,
            approvals: self.approvals(),
            close_id: Some(&self.close_id),
            eligible_to_close: &self.eligible_to_close,
        }
    }

    /// The createTrade webhook: the record's fields, `closeId` only when set.
    pub fn created_event(&self) -> Event {
        let view = CreatedView {
            close_id: self.close_id_if_set(),
            ..self.created_view()
        };
        view_event("createTrade", &view)
    }

    /// The fields every trade read starts with: `id` (the trade ID), `developerAPIKey`
    /// (masked) when `with_key`, and the order's identity and amounts.
    fn head(&self, with_key: bool) -> HeadView<'_> {
        HeadView {
            id: &self.id,
            developer_api_key: with_key.then_some(MASK),
            parties: self.parties(),
            order_id: &self.id,
            order: self.order(),
        }
    }

    /// The getTrade record (OBSERVED.md): `id`, `developerAPIKey` (masked), ..., `users`,
    /// `field1`-`field3`, RR and principal fields, `archived_status`, `closeId`,
    /// `eligibleToClose`.
    pub fn details(&self) -> DetailsView<'_> {
        DetailsView {
            head: self.head(true),
            fields: self.fields(),
            approvals: self.approvals(),
            archived_status: self.archived_status(),
            close_id: &self.close_id,
            eligible_to_close: &self.eligible_to_close,
        }
    }

    /// The getTradeStatus record (OBSERVED-MORE.md, in its order).
    pub fn status_view(&self) -> StatusView<'_> {
        StatusView {
            head: self.head(true),
            archived_status: self.archived_status(),
            fields: self.fields(),
            rr_approval_status: &self.rr_approval_status,
            rr_approval_date: &self.rr_approval_date,
        }
    }

    /// The cancelled-investment record of part 2 (cancelInvestment, fundReturnRequest).
    pub fn cancelled_view(&self) -> CancelledView<'_> {
        CancelledView {
            head: self.head(false),
            archived_status: self.archived_status(),
            fields: self.fields(),
        }
    }

    /// The updateTradeStatus webhook (part 1's fields, in order).
    pub fn status_event(&self, method: &str) -> Event {
        let view = StatusEventView {
            trade_id: &self.id,
            id: &self.id,
            body: self.body(),
            approvals: self.approvals(),
            archived_status: self.archived_status(),
            close_id: self.close_id_if_set(),
            eligible_to_close: &self.eligible_to_close,
        };
        view_event(method, &view)
    }

    /// The updateTrade webhook (part 1's fields, in order).
    pub fn update_event(&self, method: &str) -> Event {
        let view = UpdateEventView {
            trade_id: &self.id,
            account_id: &self.account_id,
            offering_id: &self.offering_id,
            order_status: &self.status,
            approvals: self.approvals(),
            fields: self.fields(),
            close_id: self.close_id_if_set(),
        };
        view_event(method, &view)
    }

    /// The getTradesForOffering record (OBSERVED.md).
    pub fn offering_view(&self) -> OfferingTradeView<'_> {
        OfferingTradeView {
            account_id: &self.account_id,
            order_id: &self.id,
            order_status: &self.status,
            total_amount: six_decimals(self.total_amount),
            total_shares: self.units.to_string(),
            transaction_type: &self.transaction_type,
            unit_price: six_decimals(self.unit_price),
            fields: self.fields(),
        }
    }

    /// The updateTradeTransactionType record (OBSERVED-MORE.md).
    pub fn transaction_type_view(&self) -> TransactionTypeView<'_> {
        TransactionTypeView {
            order_id: &self.id,
            id: &self.id,
            transaction_type: &self.transaction_type,
            developer_api_key: MASK,
            offering_id: &self.offering_id,
            account_id: &self.account_id,
            party_id: &self.party_id,
            party_type: &self.party_type,
            total_amount: six_decimals(self.total_amount),
            total_shares: self.units.to_string(),
            order_status: &self.status,
        }
    }

    /// The `GET /v3/trades` record: every stored field a client may filter or sort on;
    /// with `deleted=true`, also `archived` (`1` for a deleted trade, as observed).
    pub fn list_view(&self, with_deleted: bool) -> ListView<'_> {
        ListView {
            trade_id: &self.id,
            parties: self.parties(),
            transaction_id: &self.transaction_id,
            transaction_type: &self.transaction_type,
            unit_price: six_decimals(self.unit_price),
            total_shares: self.units.to_string(),
            fees: six_decimals(self.fees),
            total_amount: six_decimals(self.total_amount),
            order_status: &self.status,
            errors: &self.errors,
            document_key: &self.document_key,
            esign_status: &self.esign_status,
            users: &self.users,
            approvals: self.approvals(),
            close_id: &self.close_id,
            eligible_to_close: &self.eligible_to_close,
            fields: self.fields(),
            archived_status: self.archived_status(),
            archived: with_deleted.then_some(if self.deleted { "1" } else { "0" }),
            created_date: &self.stamps.created,
            created_ip_address: &self.stamps.created_ip,
            updated_date: &self.stamps.updated,
        }
    }

    /// The reference webhooks of a whole-trade change carry (deleteTrade,
    /// uploadTradeDocument): `tradeId`.
    pub fn reference(&self) -> TradeRefView<'_> {
        TradeRefView { trade_id: &self.id }
    }

    /// updateTradeTransactionType's webhook fields.
    pub fn transaction_type_event(&self) -> TransactionTypeEventView<'_> {
        TransactionTypeEventView {
            trade_id: &self.id,
            transaction_type: &self.transaction_type,
        }
    }

    /// updateTradeArchivestatus' record and webhook.
    pub fn archive_view(&self) -> ArchiveView<'_> {
        ArchiveView {
            trade_id: &self.id,
            party_id: &self.party_id,
            offering_id: &self.offering_id,
            order_status: &self.status,
            archive_status: self.archived_status(),
        }
    }

    /// updateEligibleToCloseStatus' record and webhook.
    pub fn eligible_view(&self) -> EligibleView<'_> {
        EligibleView {
            trade_id: &self.id,
            account_id: &self.account_id,
            offering_id: &self.offering_id,
            order_status: &self.status,
            eligible_to_close: &self.eligible_to_close,
        }
    }

    /// deleteTrade's record.
    pub fn deleted_view(&self) -> DeletedView<'_> {
        DeletedView {
            party_id: &self.party_id,
            offering_id: &self.offering_id,
            order_status: &self.status,
        }
    }

    /// The cancelInvestment (and fundReturnRequest) webhook's fields.
    pub fn cancel_event(&self) -> CancelEventView<'_> {
        CancelEventView {
            account_id: &self.account_id,
            order_id: &self.id,
            transaction_type: &self.transaction_type,
            order_status: &self.status,
        }
    }

    /// The trade's purchase-history entry.
    pub fn purchase_entry(&self) -> PurchaseEntry {
        PurchaseEntry {
            trade_id: self.id.clone(),
            account_id: self.account_id.clone(),
            offering_id: self.offering_id.clone(),
            total_amount: self.total_amount,
            total_shares: self.units,
            purchase_date: self.stamps.created.clone(),
            account_name: self.account_name.clone(),
            order_status: self.status.clone(),
            deleted: self.deleted,
        }
    }
}

// ---------------------------------------------------------------- views (in the spec's field order)

/// `offeringId`, `accountId`, `partyId`, `party_type`, `escrowId`.
#[derive(Serialize)]
pub struct PartiesView<'a> {
    #[serde(rename = "offeringId")]
    pub offering_id: &'a str,
    #[serde(rename = "accountId")]
    pub account_id: &'a str,
    #[serde(rename = "partyId")]
    pub party_id: &'a str,
    pub party_type: &'a str,
    #[serde(rename = "escrowId")]
    pub escrow_id: &'a str,
}

/// `transactionType` to `users`: the order as the reads show it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OrderView<'a> {
    pub transaction_type: &'a str,
    pub total_amount: String,
    pub total_shares: String,
    pub order_status: &'a str,
    pub created_date: &'a str,
    pub created_ip_address: &'a str,
    pub errors: &'a str,
    pub document_key: &'a str,
    pub esign_status: &'a str,
    pub users: &'a str,
}

/// `field1`-`field3`.
#[derive(Serialize)]
pub struct FieldsView<'a> {
    pub field1: &'a str,
    pub field2: &'a str,
    pub field3: &'a str,
}

/// The trade's parties, order and free fields ([`Trade::body`]).
#[derive(Serialize)]
pub struct BodyView<'a> {
    #[serde(flatten)]
    pub parties: PartiesView<'a>,
    #[serde(flatten)]
    pub order: OrderView<'a>,
    #[serde(flatten)]
    pub fields: FieldsView<'a>,
}

/// The RR and principal approval fields.
#[derive(Serialize)]
pub struct ApprovalsView<'a> {
    #[serde(rename = "RRApprovalStatus")]
    pub rr_approval_status: &'a str,
    #[serde(rename = "RRName")]
    pub rr_name: &'a str,
    #[serde(rename = "RRApprovalDate")]
    pub rr_approval_date: &'a str,
    #[serde(rename = "PrincipalApprovalStatus")]
    pub principal_approval_status: &'a str,
    #[serde(rename = "PrincipalName")]
    pub principal_name: &'a str,
    #[serde(rename = "PrincipalDate")]
    pub principal_date: &'a str,
}

/// createTrade's record and webhook ([`Trade::created_view`], [`Trade::created_event`]).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CreatedView<'a> {
    pub trade_id: &'a str,
    pub transaction_id: &'a str,
    pub transaction_amount: String,
    pub transaction_date: &'a str,
    pub transaction_status: &'a str,
    #[serde(flatten)]
    pub approvals: ApprovalsView<'a>,
    /// `None` (the webhook of a trade without one) is omitted from the webhook.
    pub close_id: Option<&'a str>,
    pub eligible_to_close: &'a str,
}

/// The start of every trade read ([`Trade::details`], [`Trade::status_view`],
/// [`Trade::cancelled_view`]).
#[derive(Serialize)]
pub struct HeadView<'a> {
    pub id: &'a str,
    #[serde(rename = "developerAPIKey", skip_serializing_if = "Option::is_none")]
    pub developer_api_key: Option<&'static str>,
    #[serde(flatten)]
    pub parties: PartiesView<'a>,
    #[serde(rename = "orderId")]
    pub order_id: &'a str,
    #[serde(flatten)]
    pub order: OrderView<'a>,
}

/// getTrade's record (and updateTradeStatus', updateTrade's).
#[derive(Serialize)]
pub struct DetailsView<'a> {
    #[serde(flatten)]
    pub head: HeadView<'a>,
    #[serde(flatten)]
    pub fields: FieldsView<'a>,
    #[serde(flatten)]
    pub approvals: ApprovalsView<'a>,
    pub archived_status: &'static str,
    #[serde(rename = "closeId")]
    pub close_id: &'a str,
    #[serde(rename = "eligibleToClose")]
    pub eligible_to_close: &'a str,
}

/// getTradeStatus' record.
#[derive(Serialize)]
pub struct StatusView<'a> {
    #[serde(flatten)]
    pub head: HeadView<'a>,
    pub archived_status: &'static str,
    #[serde(flatten)]
    pub fields: FieldsView<'a>,
    #[serde(rename = "RRApprovalStatus")]
    pub rr_approval_status: &'a str,
    #[serde(rename = "RRApprovalDate")]
    pub rr_approval_date: &'a str,
}

/// The cancelled-investment record.
#[derive(Serialize)]
pub struct CancelledView<'a> {
    #[serde(flatten)]
    pub head: HeadView<'a>,
    pub archived_status: &'static str,
    #[serde(flatten)]
    pub fields: FieldsView<'a>,
}

/// The updateTradeStatus webhook.
#[derive(Serialize)]
struct StatusEventView<'a> {
    #[serde(rename = "tradeId")]
    trade_id: &'a str,
    id: &'a str,
    #[serde(flatten)]
    body: BodyView<'a>,
    #[serde(flatten)]
    approvals: ApprovalsView<'a>,
    archived_status: &'static str,
    #[serde(rename = "closeId")]
    close_id: Option<&'a str>,
    #[serde(rename = "eligibleToClose")]
    eligible_to_close: &'a str,
}

/// The updateTrade webhook.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct UpdateEventView<'a> {
    trade_id: &'a str,
    account_id: &'a str,
    offering_id: &'a str,
    order_status: &'a str,
    #[serde(flatten)]
    approvals: ApprovalsView<'a>,
    #[serde(flatten)]
    fields: FieldsView<'a>,
    close_id: Option<&'a str>,
}

/// getTradesForOffering's record.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OfferingTradeView<'a> {
    pub account_id: &'a str,
    pub order_id: &'a str,
    pub order_status: &'a str,
    pub total_amount: String,
    pub total_shares: String,
    pub transaction_type: &'a str,
    pub unit_price: String,
    #[serde(flatten)]
    pub fields: FieldsView<'a>,
}

/// updateTradeTransactionType's record.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TransactionTypeView<'a> {
    pub order_id: &'a str,
    pub id: &'a str,
    pub transaction_type: &'a str,
    #[serde(rename = "developerAPIKey")]
    pub developer_api_key: &'static str,
    pub offering_id: &'a str,
    pub account_id: &'a str,
    pub party_id: &'a str,
    #[serde(rename = "party_type")]
    pub party_type: &'a str,
    pub total_amount: String,
    pub total_shares: String,
    pub order_status: &'a str,
}

/// The `GET /v3/trades` record.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ListView<'a> {
    pub trade_id: &'a str,
    #[serde(flatten)]
    pub parties: PartiesView<'a>,
    pub transaction_id: &'a str,
    pub transaction_type: &'a str,
    pub unit_price: String,
    pub total_shares: String,
    pub fees: String,
    pub total_amount: String,
    pub order_status: &'a str,
    pub errors: &'a str,
    pub document_key: &'a str,
    pub esign_status: &'a str,
    pub users: &'a str,
    #[serde(flatten)]
    pub approvals: ApprovalsView<'a>,
    pub close_id: &'a str,
    pub eligible_to_close: &'a str,
    #[serde(flatten)]
    pub fields: FieldsView<'a>,
    #[serde(rename = "archived_status")]
    pub archived_status: &'static str,
    /// Only with `deleted=true`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub archived: Option<&'static str>,
    pub created_date: &'a str,
    pub created_ip_address: &'a str,
    pub updated_date: &'a str,
}

/// `tradeId` alone.
#[derive(Serialize)]
pub struct TradeRefView<'a> {
    #[serde(rename = "tradeId")]
    pub trade_id: &'a str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TransactionTypeEventView<'a> {
    pub trade_id: &'a str,
    pub transaction_type: &'a str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ArchiveView<'a> {
    pub trade_id: &'a str,
    pub party_id: &'a str,
    pub offering_id: &'a str,
    pub order_status: &'a str,
    pub archive_status: &'static str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EligibleView<'a> {
    pub trade_id: &'a str,
    pub account_id: &'a str,
    pub offering_id: &'a str,
    pub order_status: &'a str,
    pub eligible_to_close: &'a str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DeletedView<'a> {
    pub party_id: &'a str,
    pub offering_id: &'a str,
    pub order_status: &'a str,
}

/// `Transaction Type` has a space in its name: it arrives form-encoded as
/// `Transaction+Type`.
#[derive(Serialize)]
pub struct CancelEventView<'a> {
    #[serde(rename = "accountId")]
    pub account_id: &'a str,
    #[serde(rename = "OrderId")]
    pub order_id: &'a str,
    #[serde(rename = "Transaction Type")]
    pub transaction_type: &'a str,
    #[serde(rename = "OrderStatus")]
    pub order_status: &'a str,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_become_json_numbers_digit_for_digit() {
        let exact = |s: &str| json_number(s.parse().unwrap()).to_string();
        assert_eq!(exact("10.10"), "10.1");
        assert_eq!(exact("12345678901234.123456"), "12345678901234.123456", "beyond an f64");
        assert_eq!(exact("0.1"), "0.1");
        assert_eq!(exact("25"), "25");
    }

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
        assert!(
            crate::records::trade::offering_write("c", "1", &c).is_none(),
            "nothing moves"
        );
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
