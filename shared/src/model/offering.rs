//! Offerings, and what the trades group needs of them: the close rule's trade statuses,
//! share and funding changes a trade makes, purchase-history entries, and the escrow account
//! an operator links. How they are stored: [`crate::records::offering`].

use rust_decimal::prelude::ToPrimitive;
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

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

impl Offering {
    /// Whether createTrade may reserve shares: from creation until closed, cancelled or
    /// deleted (CONTRACT.md, Offerings and trades); a reopened offering accepts them again.
    pub fn accepts_investments(&self) -> bool {
        !self.deleted && self.status != status::CLOSED && self.status != status::CANCELLED
    }

    /// `106` naming `offeringId` unless the offering accepts investments: what refuses a new
    /// trade, units added to one, and a payment into one.
    pub fn require_accepting_investments(&self) -> Result<(), crate::ApiError> {
        if self.accepts_investments() {
            return Ok(());
        }
        Err(crate::ApiError::invalid(
            "offeringId",
            format!("the offering does not accept investments (status {})", self.status),
        ))
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
            updated: self.updated_view(),
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
#[serde(rename_all = "camelCase")]
pub struct OfferingListView {
    #[serde(flatten)]
    pub updated: OfferingUpdated,
    pub updated_date: String,
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

// ---------------------------------------------------------------- purchase history

/// One trade of an offering as getOfferingPurchaseHistory lists it. The trades group writes
/// it ([`purchase_write`]) in the transaction of every trade change that alters these
/// values, and sets `deleted` when the trade is virtually deleted.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PurchaseEntry {
    pub trade_id: String,
    pub account_id: String,
    pub offering_id: String,
    pub total_amount: Decimal,
    pub total_shares: i64,
    /// The trade's creation time, `YYYY-MM-DD HH:MM:SS`.
    pub purchase_date: String,
    pub account_name: String,
    pub order_status: String,
    pub deleted: bool,
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
#[serde(rename_all = "camelCase", default)]
pub struct EscrowAccount {
    #[serde(rename = "escrowAccountNumber")]
    pub number: String,
    #[serde(rename = "escrowBank")]
    pub bank: String,
    /// `open` or `closed` (part 3).
    #[serde(rename = "escrowAccountStatus")]
    pub status: String,
    /// `YYYY-MM-DD` or null (part 3).
    pub open_date: Option<String>,
    pub expiration_date: Option<String>,
    pub close_date: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
