//! How trades are stored: the record ([`Trade`]), the writes that keep its read copies and
//! its offering's counters right in ONE transaction, its reads, and the pending-ACH marker
//! that guards cancellation.
//!
//! # Items
//!
//! | item | key (`pk` / `sk`) | holds |
//! |---|---|---|
//! | the trade | `<client>#TRADE` / tradeId | [`Trade`] JSON in `d`, version `v`, list keys `gsi1`/`gsi2` ([`crate::records`]) |
//! | by offering | `<client>#TRADE#OFFERING#<offeringId>` / sortable tradeId | a copy of `d` (getTradesForOffering) |
//! | by account | `<client>#TRADE#ACCOUNT#<accountId>` / sortable tradeId | a copy of `d` (getAccountTradeHistory) |
//! | purchase history | `<client>#PURCHASE#<offeringId>` / sortable tradeId | [`offering::PurchaseEntry`] |
//! | pending ACH | `<client>#TRADEACH` / tradeId | present while an ACH fund move of the trade is `Pending` |
//!
//! Every change of a trade goes through [`insert`] or [`replace`] (the record, both copies
//! and the purchase entry) plus, when the change moves shares or money, the offering's
//! [`offering::change_write`] computed by [`offering_change`] from the trade as read and
//! as written. The record's put is conditioned on the version read, the offering's update
//! on enough remaining shares: a concurrent change fails the whole transaction and the
//! caller reads again.

use crate::error::ApiError;
use crate::ids::sortable;
use crate::model::ids::{no_trade, numeric_id};
use crate::model::offering::OfferingChange;
use crate::model::trade::{offering_change, Trade};
use crate::records::offering;
use crate::records::{self, Stored};
use crate::store::{Cond, Index, Item, Key, Query, Store, Val, Write};

/// The offering write of a change, or none when it changes nothing there.
pub fn offering_write(client: &str, offering_id: &str, change: &OfferingChange) -> Option<Write> {
    let zero = OfferingChange {
        require_accepting: change.require_accepting,
        ..OfferingChange::default()
    };
    (change != &zero).then(|| offering::change_write(client, offering_id, change))
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
        offering::purchase_write(client, &t.purchase_entry()),
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
    let key = offering::offering_key(client, offering_id);
    writes.iter().position(|w| w.key().as_ref() == Some(&key))
}

// ---------------------------------------------------------------- reads

fn decode(item: &Item) -> Result<Trade, ApiError> {
    let d = item.get("d").and_then(Val::as_str).unwrap_or("");
    serde_json::from_str(d).map_err(|e| ApiError::internal_from("corrupt trade copy", e))
}

/// A trade of the client (deleted ones included), `None` when unknown.
pub async fn load(store: &dyn Store, client: &str, trade_id: &str) -> Result<Option<Stored<Trade>>, ApiError> {
    records::load::<Trade>(store, client, trade_id).await
}

/// The trade named `trade_id` (numeric, `106` otherwise), deleted ones included; `188`
/// when the client has none with that ID.
pub async fn existing(store: &dyn Store, client: &str, trade_id: &str) -> Result<Stored<Trade>, ApiError> {
    let id = numeric_id("tradeId", trade_id)?;
    load(store, client, &id).await?.ok_or_else(no_trade)
}

async fn copies(store: &dyn Store, pk: String, forward: bool) -> Result<Vec<Trade>, ApiError> {
    let mut q = Query::new(Index::Table, pk);
    q.forward = forward;
    super::query_all(store, q).await?.iter().map(decode).collect()
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

/// For the payments group: the write that marks a trade's ACH fund move in flight (put it in
/// externalFundMove's transaction; `ref_num` is the fund move's `RefNum`). While the marker
/// exists, deleteTrade, cancelInvestment, a cancel or reject through updateTradeStatus and
/// updateTradeTransactionType answer `150` and change nothing.
pub fn pending_ach_put(client: &str, trade_id: &str, ref_num: &str) -> Write {
    let mut item = pending_ach_key(client, trade_id).item();
    item.insert("RefNum".into(), Val::S(ref_num.to_owned()));
    Write::Put { item, cond: None }
}

/// For the payments group: the write that clears the marker when the fund move is no longer
/// in flight (settled, voided, returned, declined).
pub fn pending_ach_clear(client: &str, trade_id: &str) -> Write {
    Write::Delete {
        key: pending_ach_key(client, trade_id),
        cond: None,
    }
}

/// The check the trade operations put in their transaction: no ACH fund move of the trade
/// is pending. It fails the transaction (and the operation answers
/// [`ach_pending`](crate::model::trade::ach_pending)) when a concurrent externalFundMove got
/// there first.
pub fn no_pending_ach(client: &str, trade_id: &str) -> Write {
    Write::Check {
        key: pending_ach_key(client, trade_id),
        cond: Cond::NotExists,
    }
}
