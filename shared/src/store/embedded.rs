//! The embedded adapter: every item in memory, made durable by an append-only log on disk
//! (the local API; tests run it in memory only).
//!
//! The log ([`super::wal`]) is the durable copy: a write is acknowledged only once its
//! changes are appended and synced. The memory mirror serves every read and holds the two
//! list indexes, rebuilt when the store opens, so a write costs one append and one sync per
//! group commit and a read costs no I/O at all.
//!
//! Keys are encoded as bytes with a `\0` separator (`pk \0 sk`; index entries
//! `gsipk \0 gsisk \0 pk \0 sk`), so a partition is one contiguous byte range and a sort-key
//! condition is a sub-range.
//!
//! Writes go through one committer thread (group commit): it applies every waiting job in
//! one log append and answers each after the sync, so concurrent writers share a
//! commit. Each job stays all-or-nothing: its conditions are checked against the state the
//! earlier jobs of the batch left, as DynamoDB serializes transactions.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ops::Bound;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc, RwLock};
use std::time::Duration;

use async_trait::async_trait;
use tokio::sync::oneshot;

use super::wal::Wal;

use super::{
    apply_updates, eval_cond, Cond, Index, Item, Key, Page, Query, SkRange, Store, StoreError, Update, Val, Write,
    MAX_TRANSACTION_WRITES,
};

/// The in-memory mirror: items by encoded table key, and the two sparse indexes.
#[derive(Default)]
struct Mirror {
    items: BTreeMap<Vec<u8>, Item>,
    gsi1: BTreeSet<Vec<u8>>,
    gsi2: BTreeSet<Vec<u8>>,
}

impl Mirror {
    fn index(&self, index: Index) -> Option<&BTreeSet<Vec<u8>>> {
        match index {
            Index::Table => None,
            Index::Gsi1 => Some(&self.gsi1),
            Index::Gsi2 => Some(&self.gsi2),
        }
    }

    /// Replaces the item under `key` (its old index entries go, the new ones come).
    fn set(&mut self, key: Vec<u8>, new: Option<Item>) -> Result<(), StoreError> {
        let mut added = [None, None];
        if let Some(n) = &new {
            for (slot, index) in added.iter_mut().zip([Index::Gsi1, Index::Gsi2]) {
                *slot = index_key(index, n)?;
            }
        }
        let old = match new {
            Some(item) => self.items.insert(key, item),
            None => self.items.remove(&key),
        };
        for (add, index) in added.into_iter().zip([Index::Gsi1, Index::Gsi2]) {
            let set = if index == Index::Gsi1 {
                &mut self.gsi1
            } else {
                &mut self.gsi2
            };
            if let Some(k) = old.as_ref().map(|o| index_key(index, o)).transpose()?.flatten() {
                set.remove(&k);
            }
            if let Some(k) = add {
                set.insert(k);
            }
        }
        Ok(())
    }
}

pub struct EmbeddedStore {
    mirror: Arc<RwLock<Mirror>>,
    jobs: mpsc::Sender<Job>,
    requests: AtomicU64,
}

/// Writes waiting for the committer, and where to answer.
struct Job {
    writes: Vec<Write>,
    returning: bool,
    done: oneshot::Sender<JobResult>,
}

/// What one job answers.
type JobResult = Result<Option<Item>, StoreError>;

fn backend(e: impl std::fmt::Display) -> StoreError {
    StoreError::Backend(e.to_string())
}

impl EmbeddedStore {
    /// Opens (or creates) the store whose log is `path` (its snapshot sits beside it).
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        let mut mirror = Mirror::default();
        let mut failed = None;
        let wal = Wal::open(path, |changes| {
            for (k, v) in changes {
                if let Err(e) = mirror.set(k, v) {
                    failed.get_or_insert(e);
                }
            }
        })?;
        if let Some(e) = failed {
            return Err(e);
        }
        Self::init(Some(wal), mirror)
    }

    /// A fresh store that lives in memory only.
    pub fn in_memory() -> Self {
        Self::init(None, Mirror::default()).expect("an in-memory store always starts")
    }

    fn init(wal: Option<Wal>, mirror: Mirror) -> Result<Self, StoreError> {
        let mirror = Arc::new(RwLock::new(mirror));
        let (jobs, rx) = mpsc::channel();
        let committer_mirror = mirror.clone();
        std::thread::Builder::new()
            .name("embedded-store-commit".into())
            .spawn(move || committer(wal, committer_mirror, rx))
            .map_err(backend)?;
        Ok(EmbeddedStore {
            mirror,
            jobs,
            requests: AtomicU64::new(0),
        })
    }

    fn count(&self) {
        self.requests.fetch_add(1, Ordering::Relaxed);
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Mirror> {
        self.mirror.read().unwrap_or_else(|e| e.into_inner())
    }

    async fn submit(&self, writes: Vec<Write>, returning: bool) -> JobResult {
        let (done, answer) = oneshot::channel();
        let stopped = || StoreError::Backend("the committer has stopped".into());
        self.jobs
            .send(Job {
                writes,
                returning,
                done,
            })
            .map_err(|_| stopped())?;
        answer.await.map_err(|_| stopped())?
    }
}

/// How long a small batch waits for more writers.
const COMMIT_DELAY: Duration = Duration::from_micros(200);

fn committer(mut wal: Option<Wal>, mirror: Arc<RwLock<Mirror>>, jobs: mpsc::Receiver<Job>) {
    while let Ok(first) = jobs.recv() {
        let mut batch = vec![first];
        drain(&jobs, &mut batch);
        if batch.len() < 8 {
            // A short wait lets concurrent writers join the batch and share its commit
            // (a commit delay, as databases offer): a little latency for much less CPU.
            std::thread::sleep(COMMIT_DELAY);
            drain(&jobs, &mut batch);
        }
        let results = commit_batch(wal.as_mut(), &mirror, &batch);
        for (job, result) in batch.into_iter().zip(results) {
            let _ = job.done.send(result);
        }
        if let Some(w) = wal.as_mut().filter(|w| w.wants_compaction()) {
            let current = mirror.read().unwrap_or_else(|e| e.into_inner());
            if let Err(e) = w.compact(current.items.iter()) {
                tracing::error!(error = %e, "embedded store: compaction failed; the log keeps growing");
            }
        }
    }
}

fn drain(jobs: &mpsc::Receiver<Job>, batch: &mut Vec<Job>) {
    while batch.len() < 512 {
        match jobs.try_recv() {
            Ok(job) => batch.push(job),
            Err(_) => break,
        }
    }
}

/// Applies a batch: each job checked against the mirror plus the batch's earlier changes,
/// the accepted ones appended to the log in one synced write, and the mirror updated only
/// once that write is durable.
fn commit_batch(wal: Option<&mut Wal>, mirror: &RwLock<Mirror>, batch: &[Job]) -> Vec<JobResult> {
    let mut changes: HashMap<Vec<u8>, Option<Item>> = HashMap::new();
    let mut order: Vec<Vec<u8>> = Vec::new();
    let results: Vec<JobResult> = {
        let current = mirror.read().unwrap_or_else(|e| e.into_inner());
        batch
            .iter()
            .map(|job| {
                let (planned, last) = plan_job(&job.writes, |k| match changes.get(k) {
                    Some(staged) => staged.clone(),
                    None => current.items.get(k).cloned(),
                })?;
                for (key, new) in planned {
                    if !changes.contains_key(&key) {
                        order.push(key.clone());
                    }
                    changes.insert(key, new);
                }
                Ok(if job.returning { last } else { None })
            })
            .collect()
    };
    if changes.is_empty() {
        return results;
    }
    if let Some(wal) = wal {
        let changed: Vec<(&[u8], Option<&Item>)> = order.iter().map(|k| (k.as_slice(), changes[k].as_ref())).collect();
        if let Err(e) = wal.append(&changed) {
            return batch.iter().map(|_| Err(e.clone())).collect();
        }
    }
    let mut current = mirror.write().unwrap_or_else(|e| e.into_inner());
    for key in order {
        let new = changes.remove(&key).flatten();
        if let Err(e) = current.set(key, new) {
            tracing::error!(error = %e, "embedded store mirror out of step");
        }
    }
    results
}

/// Checks one job and computes its changes (encoded key, new item or `None` for a delete),
/// all of them or an error when a check fails, and the item its last write leaves.
type Plan = (Vec<(Vec<u8>, Option<Item>)>, Option<Item>);

fn plan_job(writes: &[Write], read: impl Fn(&[u8]) -> Option<Item>) -> Result<Plan, StoreError> {
    if writes.is_empty() || writes.len() > MAX_TRANSACTION_WRITES {
        return Err(StoreError::Backend(format!(
            "{} writes in one transaction",
            writes.len()
        )));
    }
    let mut keys: Vec<Vec<u8>> = Vec::with_capacity(writes.len());
    let mut planned = Vec::with_capacity(writes.len());
    let mut last = None;
    for (i, w) in writes.iter().enumerate() {
        super::validate_write(w)?;
        let key = w.key().ok_or_else(|| StoreError::Backend("write without key".into()))?;
        let k = table_key(&key)?;
        if keys.contains(&k) {
            return Err(StoreError::Backend("two writes on one key in a transaction".into()));
        }
        keys.push(k.clone());
        if let Write::Put { item, .. } = w {
            for index in [Index::Gsi1, Index::Gsi2] {
                index_key(index, item)?;
            }
        }
        let old = read(&k);
        let new = apply(w, old.as_ref())?.map_err(|()| StoreError::ConditionFailed {
            index: (writes.len() > 1).then_some(i),
        })?;
        last.clone_from(&new);
        if !matches!(w, Write::Check { .. }) && old != new {
            planned.push((k, new));
        }
    }
    Ok((planned, last))
}

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

/// The table key an index entry points at (its last two parts).
fn table_key_of_entry(entry: &[u8]) -> Option<Vec<u8>> {
    let mut seps = entry.iter().enumerate().filter(|(_, b)| **b == 0).map(|(i, _)| i);
    let second = seps.nth(1)?;
    Some(entry[second + 1..].to_vec())
}

impl EmbeddedStore {
    fn query_sync(&self, q: &Query) -> Result<Page, StoreError> {
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
        let mirror = self.read();
        let range = (Bound::Included(lo), Bound::Excluded(hi));
        let keys: Box<dyn Iterator<Item = Vec<u8>>> = match mirror.index(q.index) {
            None => {
                let it = mirror.items.range::<Vec<u8>, _>(range).map(|(k, _)| k);
                if q.forward {
                    Box::new(it.cloned())
                } else {
                    Box::new(it.rev().cloned())
                }
            }
            Some(set) => {
                let it = set.range::<Vec<u8>, _>(range).filter_map(|e| table_key_of_entry(e));
                if q.forward {
                    Box::new(it)
                } else {
                    Box::new(it.rev())
                }
            }
        };
        for k in keys {
            let item = mirror
                .items
                .get(&k)
                .ok_or_else(|| StoreError::Backend("dangling index entry".into()))?;
            page.items.push(item.clone());
            if page.items.len() == limit {
                break;
            }
        }
        if page.items.len() == limit {
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
        let k = table_key(key)?;
        Ok(self.read().items.get(&k).cloned())
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
