//! The storage port: DynamoDB's semantics and nothing more (get, conditional writes,
//! transactions, queries by partition key on the table or a GSI). No scan, by construction.
//!
//! One table holds every record. Its key is `pk` + `sk` (strings); two sparse global
//! secondary indexes, `gsi1` (`gsi1pk`, `gsi1sk`) and `gsi2` (`gsi2pk`, `gsi2sk`), both
//! projecting all attributes, serve the list endpoints. Every client record's partition key
//! starts with the client's ID, so one client can never address another's records.

pub mod dynamo;
pub mod embedded;

use std::collections::BTreeMap;

use async_trait::async_trait;
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

/// An attribute value.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Val {
    S(String),
    /// As a decimal string on the wire, so compact binary encodings round-trip it.
    N(#[serde(with = "rust_decimal::serde::str")] Decimal),
    Bool(bool),
}

impl Val {
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Val::S(s) => Some(s),
            _ => None,
        }
    }
    pub fn as_num(&self) -> Option<Decimal> {
        match self {
            Val::N(n) => Some(*n),
            _ => None,
        }
    }
}

impl From<&str> for Val {
    fn from(s: &str) -> Self {
        Val::S(s.to_owned())
    }
}
impl From<String> for Val {
    fn from(s: String) -> Self {
        Val::S(s)
    }
}
impl From<i64> for Val {
    fn from(n: i64) -> Self {
        Val::N(Decimal::from(n))
    }
}

/// An item: attribute name to value. Always holds `pk` and `sk`.
pub type Item = BTreeMap<String, Val>;

/// The primary key of an item.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Key {
    pub pk: String,
    pub sk: String,
}

impl Key {
    pub fn new(pk: impl Into<String>, sk: impl Into<String>) -> Self {
        Key {
            pk: pk.into(),
            sk: sk.into(),
        }
    }
    /// The item holding just this key; callers add attributes.
    pub fn item(&self) -> Item {
        let mut item = Item::new();
        item.insert("pk".into(), Val::S(self.pk.clone()));
        item.insert("sk".into(), Val::S(self.sk.clone()));
        item
    }
    /// The key of an item, if it has one.
    pub fn of(item: &Item) -> Option<Key> {
        Some(Key::new(item.get("pk")?.as_str()?, item.get("sk")?.as_str()?))
    }
}

/// Comparison operators usable in conditions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

/// A condition on the item currently stored under the write's key. Comparisons against a
/// missing attribute are false (as in DynamoDB).
#[derive(Clone, Debug, PartialEq)]
pub enum Cond {
    /// An item exists under the key.
    Exists,
    /// No item exists under the key.
    NotExists,
    AttrExists(String),
    AttrNotExists(String),
    Cmp(String, CmpOp, Val),
    And(Vec<Cond>),
}

/// One change of an update.
#[derive(Clone, Debug, PartialEq)]
pub enum Update {
    Set(String, Val),
    /// Adds to a number, treating a missing attribute as zero.
    Add(String, Decimal),
    Remove(String),
}

/// A write, alone or in a transaction.
#[derive(Clone, Debug, PartialEq)]
pub enum Write {
    Put {
        item: Item,
        cond: Option<Cond>,
    },
    Update {
        key: Key,
        ops: Vec<Update>,
        cond: Option<Cond>,
    },
    Delete {
        key: Key,
        cond: Option<Cond>,
    },
    /// Writes nothing; fails the transaction when the condition does not hold.
    Check {
        key: Key,
        cond: Cond,
    },
}

impl Write {
    pub fn key(&self) -> Option<Key> {
        match self {
            Write::Put { item, .. } => Key::of(item),
            Write::Update { key, .. } | Write::Delete { key, .. } | Write::Check { key, .. } => Some(key.clone()),
        }
    }
}

/// Which key a query reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Index {
    Table,
    Gsi1,
    Gsi2,
}

impl Index {
    /// The (partition, sort) attribute names of this index.
    pub fn attrs(self) -> (&'static str, &'static str) {
        match self {
            Index::Table => ("pk", "sk"),
            Index::Gsi1 => ("gsi1pk", "gsi1sk"),
            Index::Gsi2 => ("gsi2pk", "gsi2sk"),
        }
    }
    pub fn name(self) -> Option<&'static str> {
        match self {
            Index::Table => None,
            Index::Gsi1 => Some("gsi1"),
            Index::Gsi2 => Some("gsi2"),
        }
    }
}

/// A condition on the sort key of a query.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SkRange {
    All,
    BeginsWith(String),
    /// Inclusive at both ends.
    Between(String, String),
}

/// A query: one partition of the table or an index, in sort-key order.
#[derive(Clone, Debug, PartialEq)]
pub struct Query {
    pub index: Index,
    pub pk: String,
    pub sk: SkRange,
    /// Ascending sort-key order when true.
    pub forward: bool,
    /// Page size (at most this many items are returned).
    pub limit: u32,
    /// Continuation: the `next` of the previous page.
    pub start: Option<Item>,
}

impl Query {
    pub fn new(index: Index, pk: impl Into<String>) -> Self {
        Query {
            index,
            pk: pk.into(),
            sk: SkRange::All,
            forward: true,
            limit: 1000,
            start: None,
        }
    }
}

/// A page of query results. `next` is `Some` when more items may follow.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Page {
    pub items: Vec<Item>,
    pub next: Option<Item>,
}

#[derive(Debug, Clone, thiserror::Error, PartialEq)]
pub enum StoreError {
    /// A condition did not hold; `index` is the failing write's position in a transaction.
    #[error("condition failed (write {index:?})")]
    ConditionFailed { index: Option<usize> },
    /// The transaction collided with another one; nothing was written. Safe to retry.
    #[error("transaction conflict")]
    Conflict,
    /// A write would make an item larger than [`MAX_ITEM_BYTES`]; nothing was written.
    #[error("an item would exceed {MAX_ITEM_BYTES} bytes")]
    TooLarge,
    #[error("store backend: {0}")]
    Backend(String),
}

/// The largest item either store keeps: DynamoDB's 400 KB (409,600 bytes, attribute names and
/// values counted) with a margin for how it counts numbers. The embedded store refuses what
/// DynamoDB would, so that both answer a request alike.
pub const MAX_ITEM_BYTES: usize = 400_000;

/// [`StoreError::TooLarge`] when a put, or an update's values, would make an item larger than
/// [`MAX_ITEM_BYTES`] (names and values in UTF-8 bytes, a number at its 21-byte most).
pub fn check_item_sizes(writes: &[Write]) -> Result<(), StoreError> {
    for w in writes {
        match w {
            Write::Put { item, .. } => fits(item.iter().map(|(n, v)| attr_bytes(n, v)).sum())?,
            Write::Update { ops, .. } => check_update_size(ops)?,
            Write::Delete { .. } | Write::Check { .. } => {}
        }
    }
    Ok(())
}

/// [`check_item_sizes`] for one update's operations.
pub fn check_update_size(ops: &[Update]) -> Result<(), StoreError> {
    fits(
        ops.iter()
            .map(|op| match op {
                Update::Set(n, v) => attr_bytes(n, v),
                Update::Add(n, _) => n.len() + NUMBER_BYTES,
                Update::Remove(_) => 0,
            })
            .sum(),
    )
}

/// The most bytes DynamoDB counts for a number.
const NUMBER_BYTES: usize = 21;

fn attr_bytes(name: &str, v: &Val) -> usize {
    name.len()
        + match v {
            Val::S(s) => s.len(),
            Val::N(_) => NUMBER_BYTES,
            Val::Bool(_) => 1,
        }
}

fn fits(bytes: usize) -> Result<(), StoreError> {
    if bytes > MAX_ITEM_BYTES {
        Err(StoreError::TooLarge)
    } else {
        Ok(())
    }
}

/// Most writes a transaction may carry (DynamoDB's limit).
pub const MAX_TRANSACTION_WRITES: usize = 100;

/// The storage port.
#[async_trait]
pub trait Store: Send + Sync {
    /// Reads one item (strongly consistent).
    async fn get(&self, key: &Key) -> Result<Option<Item>, StoreError>;
    /// Applies writes atomically: all or none. One write is a single conditional request,
    /// several are one transaction (at most [`MAX_TRANSACTION_WRITES`], distinct keys).
    async fn write(&self, writes: Vec<Write>) -> Result<(), StoreError>;
    /// One conditional update returning the item as it is after the update.
    async fn update(&self, key: &Key, ops: Vec<Update>, cond: Option<Cond>) -> Result<Item, StoreError>;
    /// One page of a query.
    async fn query(&self, q: &Query) -> Result<Page, StoreError>;
    /// Requests made to the backend so far (for cost assertions in tests).
    fn requests(&self) -> u64;
}

/// What one store request is, for [`counting`].
#[derive(Clone, Copy)]
pub(crate) enum Request {
    Read,
    Write,
    /// Creating or describing the table (local API and tests), never an operation's.
    Table,
}

/// The store requests one task made: reads (`GetItem`, `Query` pages) and writes (a
/// conditional write, an update or one `TransactWriteItems`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cost {
    pub reads: u32,
    pub writes: u32,
}

tokio::task_local! {
    static COST: std::cell::Cell<Cost>;
}

/// Runs `f`, counting the store requests made on its own task: a request's cost, with no
/// background worker's or other request's requests in it (tasks `f` spawns are not counted).
pub async fn counting<F: std::future::Future>(f: F) -> (F::Output, Cost) {
    COST.scope(std::cell::Cell::new(Cost::default()), async {
        let out = f.await;
        (out, COST.with(std::cell::Cell::get))
    })
    .await
}

/// Adds one request to the running task's [`counting`], if any.
pub(crate) fn note(kind: Request) {
    let _ = COST.try_with(|c| {
        let mut cost = c.get();
        match kind {
            Request::Read => cost.reads += 1,
            Request::Write => cost.writes += 1,
            Request::Table => return,
        }
        c.set(cost);
    });
}

/// Commits `writes` as one transaction, once: `false` when a condition did not hold (nothing
/// written). For records outside any client's operations (the operator's client records),
/// where a failed condition is the caller's answer rather than a reason to re-plan.
pub async fn write_once(store: &dyn Store, writes: Vec<Write>) -> Result<bool, StoreError> {
    match store.write(writes).await {
        Ok(()) => Ok(true),
        Err(StoreError::ConditionFailed { .. }) => Ok(false),
        Err(e) => Err(e),
    }
}

/// Evaluates a condition against the stored item (None when absent). Shared by the embedded
/// adapter and by tests; the DynamoDB adapter renders the same condition as an expression.
pub fn eval_cond(cond: &Cond, item: Option<&Item>) -> bool {
    match cond {
        Cond::Exists => item.is_some(),
        Cond::NotExists => item.is_none(),
        Cond::AttrExists(a) => item.is_some_and(|i| i.contains_key(a)),
        Cond::AttrNotExists(a) => !item.is_some_and(|i| i.contains_key(a)),
        Cond::Cmp(a, op, v) => item.and_then(|i| i.get(a)).is_some_and(|cur| cmp_vals(cur, *op, v)),
        Cond::And(cs) => cs.iter().all(|c| eval_cond(c, item)),
    }
}

fn cmp_vals(cur: &Val, op: CmpOp, v: &Val) -> bool {
    use std::cmp::Ordering;
    let ord: Option<Ordering> = match (cur, v) {
        (Val::S(a), Val::S(b)) => Some(a.as_bytes().cmp(b.as_bytes())),
        (Val::N(a), Val::N(b)) => Some(a.cmp(b)),
        (Val::Bool(a), Val::Bool(b)) => Some(a.cmp(b)),
        _ => None,
    };
    match (op, ord) {
        (CmpOp::Ne, None) => true,
        (_, None) => false,
        (CmpOp::Eq, Some(o)) => o == Ordering::Equal,
        (CmpOp::Ne, Some(o)) => o != Ordering::Equal,
        (CmpOp::Lt, Some(o)) => o == Ordering::Less,
        (CmpOp::Le, Some(o)) => o != Ordering::Greater,
        (CmpOp::Gt, Some(o)) => o == Ordering::Greater,
        (CmpOp::Ge, Some(o)) => o != Ordering::Less,
    }
}

/// Rejects what DynamoDB rejects, so both adapters refuse the same writes: updates of the
/// key attributes or of one attribute twice, and empty keys or non-string, empty index keys.
pub fn validate_write(w: &Write) -> Result<(), StoreError> {
    let bad = |why: &str| Err(StoreError::Backend(why.to_owned()));
    if let Some(key) = w.key() {
        if key.pk.is_empty() || key.sk.is_empty() {
            return bad("empty key attribute");
        }
    }
    match w {
        Write::Update { ops, .. } => {
            let mut names: Vec<&str> = ops
                .iter()
                .map(|op| match op {
                    Update::Set(a, _) | Update::Add(a, _) | Update::Remove(a) => a.as_str(),
                })
                .collect();
            if names.iter().any(|a| *a == "pk" || *a == "sk") {
                return bad("an update may not change the key");
            }
            names.sort_unstable();
            if names.windows(2).any(|w| w[0] == w[1]) {
                return bad("two operations on one attribute");
            }
            Ok(())
        }
        Write::Put { item, .. } => {
            for index in [Index::Gsi1, Index::Gsi2] {
                let (p, s) = index.attrs();
                for a in [p, s] {
                    match item.get(a) {
                        None => {}
                        Some(Val::S(v)) if !v.is_empty() => {}
                        Some(_) => return bad("index key attributes must be non-empty strings"),
                    }
                }
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// Applies update operations to an item in place (embedded adapter; DynamoDB does it itself).
/// `Add` to an attribute that holds no number fails, as in DynamoDB.
pub fn apply_updates(item: &mut Item, ops: &[Update]) -> Result<(), StoreError> {
    for op in ops {
        match op {
            Update::Set(a, v) => {
                item.insert(a.clone(), v.clone());
            }
            Update::Add(a, n) => {
                let cur = match item.get(a) {
                    None => Decimal::ZERO,
                    Some(Val::N(cur)) => *cur,
                    Some(_) => return Err(StoreError::Backend(format!("ADD to non-number attribute {a}"))),
                };
                let sum = cur
                    .checked_add(*n)
                    .ok_or_else(|| StoreError::Backend(format!("ADD overflows attribute {a}")))?;
                item.insert(a.clone(), Val::N(sum));
            }
            Update::Remove(a) => {
                item.remove(a);
            }
        }
    }
    Ok(())
}
