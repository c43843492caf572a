//! ATS records (part 3, "ATS order, trade, market hours"; CONTRACT, "ATS"; shapes in
//! `docs/ats.md`): orders, the matched trades between them, and their views. An order's
//! `executionTime` is set once, when it is created, to the microsecond; a matched trade's
//! when it matched. Both list newest first by it, and keyset paging reads the same index.

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

use crate::error::ApiError;
use crate::ids::IdKind;

pub const ORDER: IdKind = IdKind::numeric("order", 100_000);
pub const MATCH: IdKind = IdKind::numeric("match", 100_000);

/// The order statuses of part 3's table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum OrderStatus {
    Pending,
    Live,
    #[serde(rename = "Partially Executed")]
    PartiallyExecuted,
    Executed,
    Cancelled,
    #[serde(rename = "Partially Executed & Cancelled")]
    PartiallyExecutedCancelled,
    #[serde(rename = "Not Approved")]
    NotApproved,
}

impl OrderStatus {
    pub fn name(self) -> &'static str {
        match self {
            OrderStatus::Pending => "Pending",
            OrderStatus::Live => "Live",
            OrderStatus::PartiallyExecuted => "Partially Executed",
            OrderStatus::Executed => "Executed",
            OrderStatus::Cancelled => "Cancelled",
            OrderStatus::PartiallyExecutedCancelled => "Partially Executed & Cancelled",
            OrderStatus::NotApproved => "Not Approved",
        }
    }

    pub fn is_terminal(self) -> bool {
        !matches!(
            self,
            OrderStatus::Pending | OrderStatus::Live | OrderStatus::PartiallyExecuted
        )
    }

    /// On the book: may match (or, for a quote request, be shown).
    pub fn is_open(self) -> bool {
        matches!(self, OrderStatus::Live | OrderStatus::PartiallyExecuted)
    }
}

/// `106` naming `field`, the code every invalid ATS parameter answers, in the body every
/// group's `106` has (`Invalid parameter …` and `Error(s)`).
pub fn invalid(field: &str, why: &str) -> ApiError {
    ApiError::invalid(field, why)
}

/// `106`: the order or match does not exist (CONTRACT).
pub fn no_order() -> ApiError {
    ApiError::invalid("orderid", "Order does not exist")
}

pub fn no_match() -> ApiError {
    ApiError::invalid("matchId", "Matched trade does not exist")
}

/// An order as stored.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AtsOrder {
    pub order_id: String,
    pub security_id: String,
    pub security_name: String,
    pub issuer_id: String,
    pub member_id: String,
    pub account_id: String,
    /// `Buy` or `Sell`, as sent; answered as `Bid` or `Offer`.
    pub side: String,
    /// `Limit` or `RFQ`.
    #[serde(rename = "type")]
    pub kind: String,
    pub shares: u64,
    pub remaining_shares: u64,
    pub price: Decimal,
    /// `GTC`, `Day` or `Other`.
    pub expiration: String,
    /// `MM-DD-YYYY` for `Other`, else empty.
    pub expiration_date: String,
    /// When it expires (epoch seconds), set when it goes live; `None` for `GTC`.
    pub expires_at: Option<i64>,
    pub disclose_price: bool,
    pub solicited: String,
    /// `All or None`, `Minimum Quantity`, or empty.
    pub contingencies: String,
    pub minimum_threshold: u64,
    pub order_status: OrderStatus,
    pub token: Option<String>,
    /// Its place in its security's time priority, once the book has taken it (0 before).
    pub seq: u64,
    /// The matches it took part in, oldest first.
    pub matches: Vec<String>,
    pub execution_time: String,
    pub created_date: String,
    pub updated_date: String,
    pub cancel_date: String,
    pub deleted: bool,
}

impl AtsOrder {
    pub fn is_buy(&self) -> bool {
        self.side == "Buy"
    }

    /// `Bid` for a buy, `Offer` for a sell (part 3).
    pub fn action(&self) -> &'static str {
        if self.is_buy() {
            "Bid"
        } else {
            "Offer"
        }
    }

    pub fn filled(&self) -> u64 {
        self.shares - self.remaining_shares
    }

    pub fn is_rfq(&self) -> bool {
        self.kind == "RFQ"
    }

    /// The status a cancel or an expiry leaves (a cancel through the API keeps `Cancelled`
    /// even after fills; an expiry after fills is `Partially Executed & Cancelled`).
    pub fn ended(&self, by_expiry: bool) -> OrderStatus {
        if by_expiry && self.filled() > 0 {
            OrderStatus::PartiallyExecutedCancelled
        } else {
            OrderStatus::Cancelled
        }
    }

    /// The status after a fill left `remaining` shares.
    pub fn after_fill(remaining: u64) -> OrderStatus {
        if remaining == 0 {
            OrderStatus::Executed
        } else {
            OrderStatus::PartiallyExecuted
        }
    }

    /// createOrder's `orderDetails`.
    pub fn created_view(&self) -> CreatedOrder<'_> {
        CreatedOrder {
            id: &self.order_id,
            security_id: &self.security_id,
            order_id: &self.order_id,
            action: self.action(),
            order_status: self.order_status.name(),
            token: self.token.as_deref(),
        }
    }

    /// The record of the order list and of the `updateOrder` webhook (OBSERVED's fields).
    pub fn view(&self) -> OrderView<'_> {
        OrderView {
            id: &self.order_id,
            order_id: &self.order_id,
            security_id: &self.security_id,
            security_name: &self.security_name,
            issuer_id: &self.issuer_id,
            member_id: &self.member_id,
            account_id: &self.account_id,
            action: self.action(),
            kind: &self.kind,
            shares: self.shares,
            remaining_shares: self.remaining_shares,
            share_price: self.price,
            amount: (self.price * Decimal::from(self.shares)).normalize(),
            price_not_displayed: !self.disclose_price,
            all_or_none: self.contingencies == "All or None",
            minimum_quantity: self.minimum_threshold,
            contingencies: &self.contingencies,
            expiration_type: &self.expiration,
            expiration_date: &self.expiration_date,
            solicited: &self.solicited,
            status: if self.order_status.is_terminal() {
                "Inactive"
            } else {
                "Active"
            },
            order_status: self.order_status.name(),
            token: self.token.as_deref(),
            deleted: self.deleted,
            execution_time: &self.execution_time,
            created_date: &self.created_date,
            updated_date: &self.updated_date,
            cancel_date: &self.cancel_date,
        }
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CreatedOrder<'a> {
    pub id: &'a str,
    pub security_id: &'a str,
    pub order_id: &'a str,
    pub action: &'static str,
    pub order_status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token: Option<&'a str>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OrderView<'a> {
    pub id: &'a str,
    pub order_id: &'a str,
    pub security_id: &'a str,
    pub security_name: &'a str,
    pub issuer_id: &'a str,
    pub member_id: &'a str,
    pub account_id: &'a str,
    pub action: &'static str,
    #[serde(rename = "type")]
    pub kind: &'a str,
    pub shares: u64,
    pub remaining_shares: u64,
    pub share_price: Decimal,
    pub amount: Decimal,
    pub price_not_displayed: bool,
    pub all_or_none: bool,
    pub minimum_quantity: u64,
    pub contingencies: &'a str,
    pub expiration_type: &'a str,
    pub expiration_date: &'a str,
    pub solicited: &'a str,
    pub status: &'static str,
    pub order_status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token: Option<&'a str>,
    pub deleted: bool,
    pub execution_time: &'a str,
    pub created_date: &'a str,
    pub updated_date: &'a str,
    pub cancel_date: &'a str,
}

/// getOrder's element: the order's record, part 3's `number_shares` and
/// `shares_remaining`, and its matches (OBSERVED-MORE: `matchedOrders` with `matchid`).
#[derive(Serialize)]
pub struct OrderDetail<'a> {
    #[serde(flatten)]
    pub order: OrderView<'a>,
    pub number_shares: u64,
    pub shares_remaining: u64,
    #[serde(rename = "matchedOrders")]
    pub matched_orders: Vec<MatchRef<'a>>,
}

#[derive(Serialize)]
pub struct MatchRef<'a> {
    pub matchid: &'a str,
}

impl AtsOrder {
    pub fn detail(&self) -> OrderDetail<'_> {
        OrderDetail {
            order: self.view(),
            number_shares: self.shares,
            shares_remaining: self.remaining_shares,
            matched_orders: self.matches.iter().map(|m| MatchRef { matchid: m }).collect(),
        }
    }
}

/// A match between a bid and an offer, at the resting order's price.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MatchedTrade {
    pub match_id: String,
    pub security_id: String,
    pub security_name: String,
    pub issuer_id: String,
    pub ask_order_id: String,
    pub bid_order_id: String,
    pub buyer_member_id: String,
    pub seller_member_id: String,
    pub number_of_shares: u64,
    pub price: Decimal,
    /// `YYYY-MM-DD HH:MM:SS.ffffff` UTC.
    pub execution_time: String,
    pub created_date: String,
    pub deleted: bool,
}

impl MatchedTrade {
    /// The trade list's record, and the `matchedTradenotify` webhook's payload.
    pub fn view(&self) -> MatchView<'_> {
        MatchView {
            match_id: &self.match_id,
            security_id: &self.security_id,
            security_name: &self.security_name,
            issuer_id: &self.issuer_id,
            ask_order_id: &self.ask_order_id,
            bid_order_id: &self.bid_order_id,
            buyer_member_id: &self.buyer_member_id,
            seller_member_id: &self.seller_member_id,
            number_of_shares: self.number_of_shares,
            share_price: self.price,
            amount: (self.price * Decimal::from(self.number_of_shares)).normalize(),
            execution_time: &self.execution_time,
            created_date: &self.created_date,
            deleted: self.deleted,
        }
    }

    /// getMatchedTrade's element (part 3's fields; `executionTime` in epoch seconds).
    pub fn details(&self) -> MatchDetails<'_> {
        MatchDetails {
            execution_time: epoch_seconds(&self.execution_time),
            number_of_shares: self.number_of_shares,
            price: self.price,
            orders_matched: OrdersMatched {
                ask_order_id: &self.ask_order_id,
                bid_order_id: &self.bid_order_id,
            },
        }
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MatchView<'a> {
    pub match_id: &'a str,
    pub security_id: &'a str,
    pub security_name: &'a str,
    pub issuer_id: &'a str,
    pub ask_order_id: &'a str,
    pub bid_order_id: &'a str,
    pub buyer_member_id: &'a str,
    pub seller_member_id: &'a str,
    pub number_of_shares: u64,
    pub share_price: Decimal,
    pub amount: Decimal,
    pub execution_time: &'a str,
    pub created_date: &'a str,
    pub deleted: bool,
}

#[derive(Serialize)]
pub struct MatchDetails<'a> {
    #[serde(rename = "executionTime", serialize_with = "number")]
    pub execution_time: Decimal,
    #[serde(rename = "numberOfShares")]
    pub number_of_shares: u64,
    #[serde(rename = "Price")]
    pub price: Decimal,
    #[serde(rename = "ordersMatched")]
    pub orders_matched: OrdersMatched<'a>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OrdersMatched<'a> {
    pub ask_order_id: &'a str,
    pub bid_order_id: &'a str,
}

/// A decimal as a JSON number, digit for digit.
fn number<S: serde::Serializer>(d: &Decimal, s: S) -> Result<S::Ok, S::Error> {
    crate::model::trade::json_number(*d).serialize(s)
}

/// `YYYY-MM-DD HH:MM:SS.ffffff` (UTC) as epoch seconds with the microseconds.
pub fn epoch_seconds(execution_time: &str) -> Decimal {
    chrono::NaiveDateTime::parse_from_str(execution_time, "%Y-%m-%d %H:%M:%S%.f")
        .map(|t| Decimal::new(t.and_utc().timestamp_micros(), 6))
        .unwrap_or_default()
}

/// An instant as an `executionTime`: UTC to the microsecond.
pub fn execution_time(t: chrono::DateTime<chrono::Utc>) -> String {
    t.format("%Y-%m-%d %H:%M:%S%.6f").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn execution_times_are_microseconds_and_read_back_as_epoch_seconds() {
        let t = chrono::DateTime::from_timestamp_micros(1_764_111_111_123_456).expect("instant");
        let text = execution_time(t);
        assert_eq!(text, "2025-11-25 22:51:51.123456");
        assert_eq!(epoch_seconds(&text).to_string(), "1764111111.123456");
    }
}
