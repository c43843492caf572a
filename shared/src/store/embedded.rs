//! The embedded adapter on redb: durable on disk for the local API, in memory for tests.
//!
//! Keys are encoded as bytes with a `\0` separator (`pk \0 sk`; index entries
//! `gsipk \0 gsisk \0 pk \0 sk`), so a partition is one contiguous byte range and a sort-key
//! condition is a sub-range. Every write runs in one redb write transaction, which redb
//! serializes: conditions are checked and writes applied atomically, as DynamoDB does.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc};

use tokio::sync::oneshot;

use async_trait::async_trait;
use redb::{Database, Durability, ReadableTable, TableDefinition};

use super::{
    apply_updates, eval_cond, Cond, Index, Item, Key, Page, Query, SkRange, Store, StoreError, Update, Val, Write,
    MAX_TRANSACTION_WRITES,
};

/// One entry of a redb range iteration.
type RangeEntry<'a> = Result<
    (
        redb::AccessGuard<'a, &'static [u8]>,
        redb::AccessGuard<'a, &'static [u8]>,
    ),
    redb::StorageError,
>;

const ITEMS: TableDefinition<&[u8], &[u8]> = TableDefinition::new("items");
const GSI1: TableDefinition<&[u8], &[u8]> = TableDefinition::new("gsi1");
const GSI2: TableDefinition<&[u8], &[u8]> = TableDefinition::new("gsi2");

pub struct EmbeddedStore {
    db: Arc<Database>,
    jobs: mpsc::Sender<Job>,
    requests: AtomicU64,
}

/// Writes waiting for the committer, and where to answer.
struct Job {
    writes: Vec<Write>,
    returning: bool,
    done: oneshot::Sender<Result<Option<Item>, StoreError>>,
}

/// Group commit: one thread applies every waiting job in one redb transaction and answers
/// each after the commit, so concurrent writers share the cost of a commit. Each job stays
/// all-or-nothing: its conditions are checked against the state the earlier jobs left.
fn committer(db: Arc<Database>, jobs: mpsc::Receiver<Job>) {
    while let Ok(first) = jobs.recv() {
        let mut batch = vec![first];
        while batch.len() < 512 {
            match jobs.try_recv() {
                Ok(job) => batch.push(job),
                Err(_) => break,
            }
        }
        let results = commit_batch(&db, &batch);
        for (job, result) in batch.into_iter().zip(results) {
            let _ = job.done.send(result);
        }
    }
}

fn commit_batch(db: &Database, batch: &[Job]) -> Vec<Result<Option<Item>, StoreError>> {
    let run = || -> Result<Vec<Result<Option<Item>, StoreError>>, StoreError> {
        let mut tx = db.begin_write().map_err(backend)?;
        tx.set_durability(Durability::Eventual);
        let results = {
            let mut tables: WriteTables<'_> = [
                tx.open_table(ITEMS).map_err(backend)?,
                tx.open_table(GSI1).map_err(backend)?,
                tx.open_table(GSI2).map_err(backend)?,
            ];
            batch
                .iter()
                .map(|job| apply_job(&mut tables, &job.writes, job.returning))
                .collect::<Result<Vec<_>, _>>()?
        };
        tx.commit().map_err(backend)?;
        Ok(results)
    };
    match run() {
        Ok(results) => results,
        Err(e) => batch.iter().map(|_| Err(e.clone())).collect(),
    }
}

fn backend(e: impl std::fmt::Display) -> StoreError {
    StoreError::Backend(e.to_string())
}

impl EmbeddedStore {
    /// Opens (or creates) the store in a file.
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        let db = Database::create(path).map_err(backend)?;
        Self::init(db)
    }

    /// A fresh store that lives in memory only.
    pub fn in_memory() -> Self {
        let db = Database::builder()
            .create_with_backend(redb::backends::InMemoryBackend::new())
            .expect("an in-memory redb database always opens");
        Self::init(db).expect("an in-memory redb database always initialises")
    }

    fn init(db: Database) -> Result<Self, StoreError> {
        let tx = db.begin_write().map_err(backend)?;
        for t in [ITEMS, GSI1, GSI2] {
            tx.open_table(t).map_err(backend)?;
        }
        tx.commit().map_err(backend)?;
        let db = Arc::new(db);
        let (jobs, rx) = mpsc::channel();
        let committer_db = db.clone();
        std::thread::Builder::new()
            .name("embedded-store-commit".into())
            .spawn(move || committer(committer_db, rx))
            .map_err(backend)?;
        Ok(EmbeddedStore {
            db,
            jobs,
            requests: AtomicU64::new(0),
        })
    }

    fn count(&self) {
        self.requests.fetch_add(1, Ordering::Relaxed);
    }
}

fn check_part(s: &str) -> Result<&str, StoreError> {
    if s.contains('\0') {
        return Err(StoreError::Backend("key attribute contains NUL".into()));
    }
    Ok(s)
}

fn encode(parts: &[&str]) -> Vec<u8> {
    let mut out = Vec::with_capacity(parts.iter().map(|p| p.len() + 1).sum());
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            out.push(0);
        }
        out.extend_from_slice(p.as_bytes());
    }
    out
}

fn table_key(key: &Key) -> Result<Vec<u8>, StoreError> {
    Ok(encode(&[check_part(&key.pk)?, check_part(&key.sk)?]))
}

/// The encoded entry of `item` in `index` (None when the item is not in that sparse index).
fn index_key(index: Index, item: &Item) -> Result<Option<Vec<u8>>, StoreError> {
    let (pa, sa) = index.attrs();
    let (Some(Val::S(ip)), Some(Val::S(is))) = (item.get(pa), item.get(sa)) else {
        return Ok(None);
    };
    let key = Key::of(item).ok_or_else(|| StoreError::Backend("item without key".into()))?;
    if index == Index::Table {
        return table_key(&key).map(Some);
    }
    Ok(Some(encode(&[
        check_part(ip)?,
        check_part(is)?,
        check_part(&key.pk)?,
        check_part(&key.sk)?,
    ])))
}

/// Items are stored in postcard's compact binary form (no escaping of the JSON records
/// they carry).
fn decode_item(bytes: &[u8]) -> Result<Item, StoreError> {
    postcard::from_bytes(bytes).map_err(backend)
}

fn encode_item(item: &Item) -> Result<Vec<u8>, StoreError> {
    postcard::to_stdvec(item).map_err(backend)
}

type WriteTables<'a> = [redb::Table<'a, &'static [u8], &'static [u8]>; 3];

fn read_item(tables: &WriteTables<'_>, key: &Key) -> Result<Option<Item>, StoreError> {
    let k = table_key(key)?;
    match tables[0].get(k.as_slice()).map_err(backend)? {
        Some(v) => decode_item(v.value()).map(Some),
        None => Ok(None),
    }
}

fn store_item(
    tables: &mut WriteTables<'_>,
    key: &Key,
    old: Option<&Item>,
    new: Option<&Item>,
) -> Result<(), StoreError> {
    for (slot, index) in [(1, Index::Gsi1), (2, Index::Gsi2)] {
        if let Some(old) = old {
            if let Some(k) = index_key(index, old)? {
                tables[slot].remove(k.as_slice()).map_err(backend)?;
            }
        }
        if let Some(new) = new {
            if let Some(k) = index_key(index, new)? {
                tables[slot].insert(k.as_slice(), &[][..]).map_err(backend)?;
            }
        }
    }
    let k = table_key(key)?;
    match new {
        Some(item) => {
            let bytes = encode_item(item)?;
            tables[0].insert(k.as_slice(), bytes.as_slice()).map_err(backend)?;
        }
        None => {
            tables[0].remove(k.as_slice()).map_err(backend)?;
        }
    }
    Ok(())
}

/// What one job answers.
type JobResult = Result<Option<Item>, StoreError>;

/// Applies one job's writes inside the batch transaction: all of them, or none when a check
/// fails (the inner error, for this job alone). The outer error is a storage failure while
/// writing, which aborts the whole batch.
fn apply_job(tables: &mut WriteTables<'_>, writes: &[Write], returning: bool) -> Result<JobResult, StoreError> {
    let checked = (|| {
        if writes.is_empty() || writes.len() > MAX_TRANSACTION_WRITES {
            return Err(StoreError::Backend(format!(
                "{} writes in one transaction",
                writes.len()
            )));
        }
        for w in writes {
            super::validate_write(w)?;
        }
        let keys: Vec<Key> = writes
            .iter()
            .map(|w| w.key().ok_or_else(|| StoreError::Backend("write without key".into())))
            .collect::<Result<_, _>>()?;
        let mut sorted = keys.clone();
        sorted.sort();
        sorted.dedup();
        if sorted.len() != keys.len() {
            return Err(StoreError::Backend("two writes on one key in a transaction".into()));
        }
        let mut planned = Vec::with_capacity(writes.len());
        for (i, (w, key)) in writes.iter().zip(keys).enumerate() {
            let old = read_item(tables, &key)?;
            let new = apply(w, old.as_ref())?.map_err(|()| StoreError::ConditionFailed {
                index: (writes.len() > 1).then_some(i),
            })?;
            planned.push((key, old, new));
        }
        Ok(planned)
    })();
    let planned = match checked {
        Ok(p) => p,
        Err(e) => return Ok(Err(e)),
    };
    let mut last = None;
    for (key, old, new) in planned {
        if old != new {
            store_item(tables, &key, old.as_ref(), new.as_ref())?;
        }
        last = new;
    }
    Ok(Ok(if returning { last } else { None }))
}

/// The item after applying `w` to `old`, or the failed condition.
/// The item after applying `w` to `old`: `Ok(Err(()))` when its condition fails.
fn apply(w: &Write, old: Option<&Item>) -> Result<Result<Option<Item>, ()>, StoreError> {
    let holds = |c: &Option<Cond>| c.as_ref().is_none_or(|c| eval_cond(c, old));
    match w {
        Write::Put { item, cond } => Ok(holds(cond).then(|| Some(item.clone())).ok_or(())),
        Write::Update { key, ops, cond } => {
            if !holds(cond) {
                return Ok(Err(()));
            }
            let mut item = old.cloned().unwrap_or_else(|| key.item());
            apply_updates(&mut item, ops)?;
            Ok(Ok(Some(item)))
        }
        Write::Delete { cond, .. } => Ok(holds(cond).then_some(None).ok_or(())),
        Write::Check { cond, .. } => Ok(eval_cond(cond, old).then(|| old.cloned()).ok_or(())),
    }
}

impl EmbeddedStore {
    async fn submit(&self, writes: Vec<Write>, returning: bool) -> Result<Option<Item>, StoreError> {
        let (done, answer) = oneshot::channel();
        self.jobs
            .send(Job {
                writes,
                returning,
                done,
            })
            .map_err(|_| StoreError::Backend("the committer has stopped".into()))?;
        answer
            .await
            .map_err(|_| StoreError::Backend("the committer has stopped".into()))?
    }

    fn query_sync(&self, q: &Query) -> Result<Page, StoreError> {
        let tx = self.db.begin_read().map_err(backend)?;
        let items = tx.open_table(ITEMS).map_err(backend)?;
        let table = match q.index {
            Index::Table => None,
            Index::Gsi1 => Some(tx.open_table(GSI1).map_err(backend)?),
            Index::Gsi2 => Some(tx.open_table(GSI2).map_err(backend)?),
        };
        let pk = check_part(&q.pk)?;
        let mut lo = encode(&[pk, ""]);
        let mut hi = encode(&[pk, "\u{10FFFF}"]);
        hi.push(0xFF);
        match &q.sk {
            SkRange::All => {}
            SkRange::BeginsWith(p) => {
                lo = encode(&[pk, check_part(p)?]);
                hi = lo.clone();
                hi.push(0xFF);
            }
            SkRange::Between(a, b) => {
                lo = encode(&[pk, check_part(a)?]);
                hi = encode(&[pk, check_part(b)?]);
                hi.push(1);
            }
        }
        if let Some(start) = &q.start {
            let after = index_key(q.index, start)?.ok_or_else(|| StoreError::Backend("bad start key".into()))?;
            if q.forward {
                let mut next = after;
                next.push(0);
                lo = lo.max(next);
            } else {
                hi = hi.min(after);
            }
        }
        let mut page = Page::default();
        if lo >= hi {
            return Ok(page);
        }
        let limit = q.limit.max(1) as usize;
        let source = table.as_ref().unwrap_or(&items);
        let range = source.range(lo.as_slice()..hi.as_slice()).map_err(backend)?;
        let mut visit = |entry: RangeEntry<'_>| -> Result<bool, StoreError> {
            let (k, v) = entry.map_err(backend)?;
            let item = if table.is_some() {
                let raw = k.value();
                let parts: Vec<&[u8]> = raw.split(|b| *b == 0).collect();
                let [_, _, p, s] = parts.as_slice() else {
                    return Err(StoreError::Backend("corrupt index entry".into()));
                };
                let key = encode(&[
                    std::str::from_utf8(p).map_err(backend)?,
                    std::str::from_utf8(s).map_err(backend)?,
                ]);
                let stored = items
                    .get(key.as_slice())
                    .map_err(backend)?
                    .ok_or_else(|| StoreError::Backend("dangling index entry".into()))?;
                decode_item(stored.value())?
            } else {
                decode_item(v.value())?
            };
            page.items.push(item);
            Ok(page.items.len() < limit)
        };
        let mut more = false;
        if q.forward {
            for e in range {
                if !visit(e)? {
                    more = true;
                    break;
                }
            }
        } else {
            for e in range.rev() {
                if !visit(e)? {
                    more = true;
                    break;
                }
            }
        }
        if more {
            page.next = page.items.last().map(|last| last_key(q.index, last));
        }
        Ok(page)
    }
}

/// The key attributes of `item` that continue a query on `index` after it.
pub(crate) fn last_key(index: Index, item: &Item) -> Item {
    let mut key = Item::new();
    for a in ["pk", "sk", index.attrs().0, index.attrs().1] {
        if let Some(v) = item.get(a) {
            key.insert(a.to_owned(), v.clone());
        }
    }
    key
}

#[async_trait]
impl Store for EmbeddedStore {
    async fn get(&self, key: &Key) -> Result<Option<Item>, StoreError> {
        self.count();
        let tx = self.db.begin_read().map_err(backend)?;
        let items = tx.open_table(ITEMS).map_err(backend)?;
        let k = table_key(key)?;
        match items.get(k.as_slice()).map_err(backend)? {
            Some(v) => decode_item(v.value()).map(Some),
            None => Ok(None),
        }
    }

    async fn write(&self, writes: Vec<Write>) -> Result<(), StoreError> {
        self.count();
        self.submit(writes, false).await.map(|_| ())
    }

    async fn update(&self, key: &Key, ops: Vec<Update>, cond: Option<Cond>) -> Result<Item, StoreError> {
        self.count();
        let w = Write::Update {
            key: key.clone(),
            ops,
            cond,
        };
        self.submit(vec![w], true)
            .await?
            .ok_or_else(|| StoreError::Backend("update produced no item".into()))
    }

    async fn query(&self, q: &Query) -> Result<Page, StoreError> {
        self.count();
        self.query_sync(q)
    }

    fn requests(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }
}
