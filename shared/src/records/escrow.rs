//! Where escrow balances' records live (the accounts themselves: `records::offering`, the
//! ledger: `records::payments::ledger`):
//!
//! - which offerings use an account: `{client}#ESCROWUSE#{number}` / offeringId, written when
//!   the operator links it (a marker left by a later link elsewhere is ignored by readers,
//!   who check the offering's own number);
//! - the last reconciliation: `{client}#ESCROWREC` / number;
//! - the sandbox escrow bank's availability: `OPERATOR#ESCROWBANK` / `STATE`.
//!
//! Every account is on `gsi1` under `ESCROWACCTS` (see `records::offering::escrow_write`), the
//! list the reconciliation reads.

use crate::error::ApiError;
use crate::model::escrow::Reconciliation;
use crate::records::{get_json, json_item, query_all};
use crate::store::{Index, Key, Query, Store, Val, Write};

/// The index partition of every client's escrow accounts.
pub const ESCROW_ACCOUNTS: &str = "ESCROWACCTS";

pub fn use_key(client: &str, number: &str, offering: &str) -> Key {
    Key::new(format!("{client}#ESCROWUSE#{number}"), offering)
}

/// Marks `offering` as using account `number`.
pub fn use_write(client: &str, number: &str, offering: &str) -> Write {
    Write::Put {
        item: use_key(client, number, offering).item(),
        cond: None,
    }
}

/// The offerings marked as using account `number` (some may have moved since).
pub async fn users(store: &dyn Store, client: &str, number: &str) -> Result<Vec<String>, ApiError> {
    let q = Query::new(Index::Table, use_key(client, number, "").pk);
    Ok(query_all(store, q)
        .await?
        .iter()
        .filter_map(|i| i.get("sk").and_then(Val::as_str).map(str::to_owned))
        .collect())
}

fn reconciliation_key(client: &str, number: &str) -> Key {
    Key::new(format!("{client}#ESCROWREC"), number)
}

pub async fn reconciliation(store: &dyn Store, client: &str, number: &str) -> Result<Option<Reconciliation>, ApiError> {
    Ok(get_json(store, &reconciliation_key(client, number))
        .await?
        .map(|s| s.rec))
}

pub fn reconciliation_write(client: &str, number: &str, r: &Reconciliation) -> Result<Write, ApiError> {
    Ok(Write::Put {
        item: json_item(reconciliation_key(client, number), r, 1)?,
        cond: None,
    })
}

/// Every client's escrow accounts: (client, number).
pub async fn all_accounts(store: &dyn Store) -> Result<Vec<(String, String)>, ApiError> {
    let mut q = Query::new(Index::Gsi1, ESCROW_ACCOUNTS);
    q.limit = 500;
    Ok(query_all(store, q)
        .await?
        .iter()
        .filter_map(|i| {
            let client = i.get("pk").and_then(Val::as_str)?.strip_suffix("#ESCROW")?;
            let number = i.get("sk").and_then(Val::as_str)?;
            Some((client.to_owned(), number.to_owned()))
        })
        .collect())
}

fn bank_key() -> Key {
    Key::new("OPERATOR#ESCROWBANK", "STATE")
}

/// Whether the sandbox escrow bank answers (the operator may mark it unavailable).
pub async fn bank_available(store: &dyn Store) -> Result<bool, ApiError> {
    Ok(store.get(&bank_key()).await?.is_none())
}

/// Marks the bank unavailable (`false`) or available again.
pub fn bank_write(available: bool) -> Write {
    if available {
        Write::Delete {
            key: bank_key(),
            cond: None,
        }
    } else {
        Write::Put {
            item: bank_key().item(),
            cond: None,
        }
    }
}
