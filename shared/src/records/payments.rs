//! Where payments live, read by the payments group and (later) custody and escrow:
//!
//! - an external account: `{client}#EXTACCT` / `{types}#{ownerId}`, versioned;
//! - a fund move: `{client}#FUNDMOVE` / RefNum, versioned; `gsi2` lists an account's moves
//!   (`{client}#ACH#{accountId}`), and `gsi1` holds it only while `Pending`
//!   (`ACHDUE`), so the batch reads exactly the moves it submits;
//! - the fund-once marker: `{client}#TRADEFUND` / tradeId, with the `RefNum` of the move that
//!   holds the trade (`Pending`, `Submitted` or `Settled`), put only if absent;
//! - the pending-ACH marker of the trade operations (`records::trade::pending_ach_*`);
//! - the client's payment settings and its accounts blocked for ACH.

use crate::error::ApiError;
use crate::ids::sortable;
use crate::model::payments::{
    ExternalAccount, FundMove, FundStatus, LedgerEntry, LinkSession, LinkedCard, Owner, PaymentSettings,
};
use crate::records::{
    decode, get_json, json_item, next_version, put_json, versioned_delete, versioned_put, Owned, Stored,
};
use crate::store::{Cond, Index, Key, Query, SkRange, Store, Val, Write};

// ---------------------------------------------------------------- external accounts

pub fn external_key(client: &str, types: Owner, owner: &str) -> Key {
    Key::new(format!("{client}#EXTACCT"), format!("{}#{owner}", types.name()))
}

pub async fn external(
    store: &dyn Store,
    client: &str,
    types: Owner,
    owner: &str,
) -> Result<Option<Stored<ExternalAccount>>, ApiError> {
    get_json(store, &external_key(client, types, owner)).await
}

/// The account's external account, when one is on file that a fund move can debit (`149`
/// otherwise): what ACH and custody moves and ACH disbursements pay from or to.
pub async fn usable_external(store: &dyn Store, client: &str, account: &str) -> Result<ExternalAccount, ApiError> {
    external(store, client, Owner::Account, account)
        .await?
        .filter(|e| e.rec.usable())
        .map(|e| e.rec)
        .ok_or_else(crate::model::payments::no_external_account)
}

/// Writes `after` as new (`before` none: fails if one exists) or over the version read.
pub fn external_put(client: &str, after: &ExternalAccount, before: Option<i64>) -> Result<Write, ApiError> {
    let key = external_key(client, after.types, &after.owner_id);
    put_json(key, after, before)
}

pub fn external_delete(client: &str, before: &Stored<ExternalAccount>) -> Write {
    versioned_delete(
        external_key(client, before.rec.types, &before.rec.owner_id),
        before.version,
    )
}

// ---------------------------------------------------------------- fund moves

pub fn move_key(client: &str, ref_num: &str) -> Key {
    Key::new(format!("{client}#FUNDMOVE"), sortable(ref_num))
}

/// The index partition of an account's ACH moves (debits and refunds) or card moves.
fn account_moves_pk(client: &str, account: &str, card: bool) -> String {
    let method = if card { "CC" } else { "ACH" };
    format!("{client}#{method}#{account}")
}

/// The index partition of a client's custody fund moves, sorted by account then move.
fn custody_moves_pk(client: &str) -> String {
    format!("{client}#CUSTODY")
}

/// The index partitions of the moves each batch processes: ACH debits and refunds, card
/// charges.
pub const ACH_DUE: &str = "ACHDUE";
pub const CARD_DUE: &str = "CARDDUE";

/// Writes `after` as new (`before` none) or over the version read, with its index keys.
pub fn move_put(client: &str, after: &FundMove, before: Option<i64>) -> Result<Write, ApiError> {
    let mut item = json_item(move_key(client, &after.ref_num), after, next_version(before))?;
    if after.is_custody() {
        item.insert("gsi2pk".into(), Val::S(custody_moves_pk(client)));
        item.insert(
            "gsi2sk".into(),
            Val::S(format!("{}#{}", after.account_id, sortable(&after.ref_num))),
        );
    } else {
        item.insert(
            "gsi2pk".into(),
            Val::S(account_moves_pk(client, &after.account_id, after.is_card())),
        );
        item.insert("gsi2sk".into(), Val::S(sortable(&after.ref_num)));
    }
    if after.fund_status == FundStatus::Pending {
        let due = if after.is_card() { CARD_DUE } else { ACH_DUE };
        item.insert("gsi1pk".into(), Val::S(due.into()));
        item.insert(
            "gsi1sk".into(),
            Val::S(format!("{}#{client}#{}", after.created_date, sortable(&after.ref_num))),
        );
    }
    Ok(versioned_put(item, before))
}

/// The key of a move's entry in its escrow account's ledger (shared by every offering
/// linked to the account).
pub fn ledger_key(client: &str, escrow: &str, ref_num: &str) -> Key {
    Key::new(format!("{client}#LEDGER#{escrow}"), sortable(ref_num))
}

/// The move's ledger entry as it now stands, if its offering has an escrow account.
fn ledger_write(client: &str, m: &FundMove) -> Result<Option<Write>, ApiError> {
    let Some(entry) = m.ledger_entry() else {
        return Ok(None);
    };
    let item = json_item(
        ledger_key(client, &entry.escrow_account_number, &entry.ref_num),
        &entry,
        1,
    )?;
    Ok(Some(Write::Put { item, cond: None }))
}

/// An escrow account's ledger, oldest move first.
pub async fn ledger(store: &dyn Store, client: &str, escrow: &str) -> Result<Vec<LedgerEntry>, ApiError> {
    all_in(store, Index::Table, format!("{client}#LEDGER#{escrow}")).await
}

/// The writes of a new move: its record, its ledger entry, and for a payment of a trade the markers its
/// status holds (fund-once while `Pending`, `Submitted` or `Settled`; pending-ACH while
/// `Pending` or `Submitted`).
pub fn move_new(client: &str, m: &FundMove) -> Result<Vec<Write>, ApiError> {
    let mut writes = vec![move_put(client, m, None)?];
    writes.extend(ledger_write(client, m)?);
    if m.pays_for_trade() && m.fund_status.holds_trade() {
        writes.push(funding_put(client, &m.trade_id, &m.ref_num));
    }
    if m.pays_for_trade() && m.fund_status.in_flight() {
        writes.push(crate::records::trade::pending_ach_put(client, &m.trade_id, &m.ref_num));
    }
    Ok(writes)
}

/// The writes of a move changing from `before` (as read) to `after`: the record over the
/// version read, its ledger entry, and for a payment of a trade the markers it leaves.
pub fn move_change(client: &str, before: &Stored<FundMove>, after: &FundMove) -> Result<Vec<Write>, ApiError> {
    let mut writes = vec![move_put(client, after, Some(before.version))?];
    writes.extend(ledger_write(client, after)?);
    let (was, is) = (before.rec.fund_status, after.fund_status);
    if after.is_custody() && (was == FundStatus::Settled) != (is == FundStatus::Settled) {
        // The settled custody balance a disbursement may draw on.
        let cents = crate::model::payments::cents(after.amount);
        let delta = if is == FundStatus::Settled { cents } else { -cents };
        writes.push(crate::records::custody::balance_change(
            client,
            &after.account_id,
            delta,
            false,
        ));
    }
    if after.is_refund() && was.in_flight() && !is.in_flight() {
        // The refund held the trade while under way (see `funding_hold`). Settled, the money
        // is back and the trade free; returned (or declined), the money never left escrow:
        // its debit holds the trade again, and a cancellation refunds it anew.
        writes.push(if is == FundStatus::Settled || after.refund_of.is_empty() {
            funding_clear(client, &after.trade_id)
        } else {
            funding_hold(client, &after.trade_id, &after.refund_of, false)
        });
    }
    if !after.pays_for_trade() {
        return Ok(writes);
    }
    if was.in_flight() && !is.in_flight() {
        writes.push(crate::records::trade::pending_ach_clear(client, &after.trade_id));
    }
    if was.holds_trade() && !is.holds_trade() {
        writes.push(funding_clear(client, &after.trade_id));
    }
    Ok(writes)
}

/// The move that holds the trade (`Pending`, `Submitted` or `Settled`), if any.
pub async fn holding_move(
    store: &dyn Store,
    client: &str,
    trade_id: &str,
) -> Result<Option<Stored<FundMove>>, ApiError> {
    match funding(store, client, trade_id).await? {
        Some(ref_num) => fund_move(store, client, &ref_num).await,
        None => Ok(None),
    }
}

/// A fund move of the client by `RefNum`.
pub async fn fund_move(store: &dyn Store, client: &str, ref_num: &str) -> Result<Option<Stored<FundMove>>, ApiError> {
    get_json(store, &move_key(client, ref_num)).await
}

/// Every record of one partition (of the table or an index), oldest first: one query per
/// page of 500.
async fn all_in<T: serde::de::DeserializeOwned>(
    store: &dyn Store,
    index: Index,
    pk: String,
) -> Result<Vec<T>, ApiError> {
    let mut q = Query::new(index, pk);
    q.limit = 500;
    crate::records::query_all(store, q)
        .await?
        .iter()
        .map(|item| decode(item, "corrupt payment record").map(|s: Stored<T>| s.rec))
        .collect()
}

/// An account's ACH moves (or its card moves), oldest first.
pub async fn account_moves(
    store: &dyn Store,
    client: &str,
    account: &str,
    card: bool,
) -> Result<Vec<FundMove>, ApiError> {
    all_in(store, Index::Gsi2, account_moves_pk(client, account, card)).await
}

/// The client's custody fund moves, of one account or of all, by account then oldest
/// first: one index partition read.
pub async fn custody_moves(store: &dyn Store, client: &str, account: Option<&str>) -> Result<Vec<FundMove>, ApiError> {
    let mut q = Query::new(Index::Gsi2, custody_moves_pk(client));
    q.sk = match account {
        Some(a) => SkRange::BeginsWith(format!("{a}#")),
        None => SkRange::All,
    };
    q.limit = 500;
    crate::records::query_all(store, q)
        .await?
        .iter()
        .map(|item| decode(item, "corrupt fund move").map(|s: Stored<FundMove>| s.rec))
        .collect()
}

/// Every client's `Pending` moves of a batch (`due`: [`ACH_DUE`] or [`CARD_DUE`]), oldest
/// first: (client, move). One index query a page; the index holds nothing else.
pub async fn due_moves(store: &dyn Store, due: &str) -> Result<Vec<(String, FundMove)>, ApiError> {
    let moves = crate::records::every_client::<FundMove>(store, due, "#FUNDMOVE", "corrupt fund move").await?;
    Ok(moves.into_iter().map(|(client, m)| (client, m.rec)).collect())
}

// ---------------------------------------------------------------- the fund-once marker

pub fn funding_key(client: &str, trade_id: &str) -> Key {
    Key::new(format!("{client}#TRADEFUND"), trade_id)
}

/// The `RefNum` of the move that holds the trade, if any.
pub async fn funding(store: &dyn Store, client: &str, trade_id: &str) -> Result<Option<String>, ApiError> {
    let item = store.get(&funding_key(client, trade_id)).await?;
    Ok(item.and_then(|i| i.get("RefNum").and_then(Val::as_str).map(str::to_owned)))
}

/// Marks the trade held by move `ref_num`; fails when another move holds it.
pub fn funding_put(client: &str, trade_id: &str, ref_num: &str) -> Write {
    Write::Put {
        item: funding_item(client, trade_id, ref_num),
        cond: Some(Cond::NotExists),
    }
}

/// The trade's funding marker: the `RefNum` of the move that holds it.
fn funding_item(client: &str, trade_id: &str, ref_num: &str) -> crate::store::Item {
    let mut item = funding_key(client, trade_id).item();
    item.insert("RefNum".into(), Val::S(ref_num.to_owned()));
    item
}

/// Hands the trade to move `ref_num`, whatever held it: from its settled payment to that
/// payment's refund, which holds it while under way (no new payment is taken while the money
/// paid is still on its way back; the marker says `refund` so that a status change can check
/// it without a read), and back from a refund that did not reach the investor.
pub fn funding_hold(client: &str, trade_id: &str, ref_num: &str, refund: bool) -> Write {
    let mut item = funding_item(client, trade_id, ref_num);
    if refund {
        item.insert(REFUND_ATTR.into(), Val::Bool(true));
    }
    Write::Put { item, cond: None }
}

const REFUND_ATTR: &str = "refund";

/// Holds when no refund of the trade is under way (see [`funding_hold`]).
pub fn no_refund_under_way(client: &str, trade_id: &str) -> Write {
    Write::Check {
        key: funding_key(client, trade_id),
        cond: Cond::AttrNotExists(REFUND_ATTR.into()),
    }
}

/// Frees the trade for a new move (the move holding it was returned, voided or declined).
pub fn funding_clear(client: &str, trade_id: &str) -> Write {
    Write::Delete {
        key: funding_key(client, trade_id),
        cond: None,
    }
}

// ---------------------------------------------------------------- cards and links

impl Owned for LinkedCard {
    const KIND: &'static str = "CARD";
    fn owner(&self) -> &str {
        &self.account_id
    }
}

/// The key of an account's bank (`BANK`) or card (`CARD`) link in progress.
pub fn link_key(client: &str, what: &str, account: &str) -> Key {
    Key::new(format!("{client}#LINK#{what}"), account)
}

pub async fn link_session(
    store: &dyn Store,
    client: &str,
    what: &str,
    account: &str,
) -> Result<Option<Stored<LinkSession>>, ApiError> {
    get_json(store, &link_key(client, what, account)).await
}

/// Starts (or restarts) a link: the latest request wins.
pub fn link_put(client: &str, what: &str, session: &LinkSession) -> Result<Write, ApiError> {
    let item = json_item(link_key(client, what, &session.account_id), session, 1)?;
    Ok(Write::Put { item, cond: None })
}

pub fn link_clear(client: &str, what: &str, account: &str) -> Write {
    Write::Delete {
        key: link_key(client, what, account),
        cond: None,
    }
}

// ---------------------------------------------------------------- settings and blocks

pub fn settings_key(client: &str) -> Key {
    Key::new(format!("{client}#PAYSET"), "SETTINGS")
}

/// The client's payment settings (CONTRACT's defaults until the operator sets them) and
/// the version they were read at (`None`: never set).
pub async fn settings(store: &dyn Store, client: &str) -> Result<(PaymentSettings, Option<i64>), ApiError> {
    Ok(match get_json::<PaymentSettings>(store, &settings_key(client)).await? {
        Some(s) => (s.rec, Some(s.version)),
        None => (PaymentSettings::default(), None),
    })
}

pub fn settings_put(client: &str, after: &PaymentSettings, before: Option<i64>) -> Result<Write, ApiError> {
    put_json(settings_key(client), after, before)
}

pub fn ach_block_key(client: &str, account: &str) -> Key {
    Key::new(format!("{client}#ACHBLOCK"), account)
}

pub async fn ach_blocked(store: &dyn Store, client: &str, account: &str) -> Result<bool, ApiError> {
    Ok(store.get(&ach_block_key(client, account)).await?.is_some())
}

/// Blocks (or unblocks) the account for ACH.
pub fn ach_block_write(client: &str, account: &str, blocked: bool) -> Write {
    let key = ach_block_key(client, account);
    if blocked {
        Write::Put {
            item: key.item(),
            cond: None,
        }
    } else {
        Write::Delete { key, cond: None }
    }
}
