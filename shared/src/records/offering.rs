//! How offerings are stored.
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
//! Purchase-history entries and escrow accounts are stored beside it.

use rust_decimal::prelude::ToPrimitive;
use rust_decimal::Decimal;

use crate::error::ApiError;
use crate::ids::sortable;
use crate::model::offering::{no_offering, EscrowAccount, Offering, OfferingChange, PurchaseEntry};
use crate::records::{self, Record, Stored};
use crate::store::{CmpOp, Cond, Index, Item, Key, Query, Store, Update, Val, Write};

/// Top-level attribute names of the offering item (see the module documentation).
pub mod attr {
    pub const REMAINING_SHARES: &str = "remainingShares";
    pub const OPEN_TRADES: &str = "openTrades";
    pub const ACCEPTS_INVESTMENTS: &str = "acceptsInvestments";
    pub const PENDING_AMOUNT: &str = "pendingAmount";
    pub const FUNDED_AMOUNT: &str = "fundedAmount";
    pub const COMMITTED_AMOUNT: &str = "committedAmount";
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
    let q = Query::new(Index::Table, purchase_key(client, offering_id, "").pk);
    let mut out = Vec::new();
    for item in &super::query_all(store, q).await? {
        let d = item.get("d").and_then(Val::as_str).unwrap_or("");
        let entry: PurchaseEntry =
            serde_json::from_str(d).map_err(|e| ApiError::internal_from("corrupt purchase-history entry", e))?;
        if !entry.deleted {
            out.push(entry);
        }
    }
    Ok(out)
}

/// The key of a client's escrow account: `<client>#ESCROW` / account number.
pub fn escrow_key(client: &str, number: &str) -> Key {
    Key::new(format!("{client}#ESCROW"), number)
}

/// The write that stores (or replaces) an escrow account.
pub fn escrow_write(client: &str, account: &EscrowAccount) -> Write {
    let mut item = escrow_key(client, &account.number).item();
    item.insert("d".into(), Val::S(serde_json::to_string(account).unwrap_or_default()));
    // The reconciliation's list of every account.
    item.insert("gsi1pk".into(), Val::S(crate::records::escrow::ESCROW_ACCOUNTS.into()));
    item.insert("gsi1sk".into(), Val::S(format!("{client}#{}", account.number)));
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
    use crate::model::offering::status;
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
