//! The embedded adapter: the local API's store, on redb (an ACID copy-on-write B-tree file
//! whose pages carry checksums); tests run it in memory.
//!
//! Three tables: `items` (encoded table key to the item) and the two sparse indexes `gsi1`
//! and `gsi2` (encoded index entry, no value). Keys are encoded as bytes with a `\0`
//! separator (`pk \0 sk`; index entries `gsipk \0 gsisk \0 pk \0 sk`), so a partition is one
//! contiguous byte range and a sort-key condition is a sub-range.
//!
//! Reads run on the caller's thread, each in a read transaction (a consistent snapshot that
//! never waits for a writer). Writes go through one committer thread (group commit): every
//! waiting job is applied in one write transaction, committed in two phases (so a damaged
//! last commit is an error, never a silent roll-back to the one before), and each job is
//! answered after the commit is durable. Each job stays all-or-nothing: its conditions are
//! checked against what the earlier jobs of the batch left, as DynamoDB serializes
//! transactions, and its changes are applied only once all of them hold.
//!
//! Opening runs redb's integrity check, which verifies every page's checksum: a flipped byte
//! in live data refuses the start (every start, as nothing is repaired away) instead of
//! losing records. A failed commit (an fsync error,
//! say) stops all later writes until a restart, because what reached the disk is unknown.

use std::ops::Bound;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use redb::{Database, ReadableDatabase, ReadableTable, Table, TableDefinition};
use tokio::sync::oneshot;

use super::{
    apply_updates, eval_cond, Cond, Index, Item, Key, Page, Query, Request, SkRange, Store, StoreError, Update, Val,
    Write, MAX_TRANSACTION_WRITES,
};

const ITEMS: TableDefinition<&[u8], &[u8]> = TableDefinition::new("items");
const GSI1: TableDefinition<&[u8], ()> = TableDefinition::new("gsi1");
const GSI2: TableDefinition<&[u8], ()> = TableDefinition::new("gsi2");

/// redb's page cache: what the store keeps in memory, whatever the size of the data.
const CACHE_BYTES: usize = 64 << 20;

pub struct EmbeddedStore {
    db: Arc<Database>,
    jobs: Option<mpsc::Sender<Job>>,
    committer: Option<JoinHandle<()>>,
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
    StoreError::Backend(format!("embedded store: {e}"))
}

impl EmbeddedStore {
    /// Opens (or creates) the store in the file `path`, after checking every page of it.
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        let started = Instant::now();
        let mut db = redb::Builder::new()
            .set_cache_size(CACHE_BYTES)
            .create(path)
            .map_err(|e| backend(format!("{}: {e}", path.display())))?;
        match db.check_integrity() {
            Ok(true) => {}
            // Two-phase commits leave only the free-page bookkeeping to rebuild: no data moves.
            Ok(false) => tracing::warn!(path = %path.display(), "embedded store: free-page map rebuilt"),
            Err(e) => {
                return Err(backend(format!(
                    "{} failed its integrity check ({e}); restore it from a copy",
                    path.display()
                )))
            }
        }
        tracing::info!(
            path = %path.display(),
            check_ms = started.elapsed().as_millis() as u64,
            "embedded store opened and checked"
        );
        Self::init(db)
    }

    /// A fresh store that lives in memory only.
    pub fn in_memory() -> Self {
        Self::on_backend(redb::backends::InMemoryBackend::new()).expect("an in-memory store always starts")
    }

    fn on_backend(storage: impl redb::StorageBackend) -> Result<Self, StoreError> {
        let db = redb::Builder::new()
            .set_cache_size(1 << 20)
            .create_with_backend(storage)
            .map_err(backend)?;
        Self::init(db)
    }

    fn init(db: Database) -> Result<Self, StoreError> {
        let txn = db.begin_write().map_err(backend)?;
        {
            txn.open_table(ITEMS).map_err(backend)?;
            txn.open_table(GSI1).map_err(backend)?;
            txn.open_table(GSI2).map_err(backend)?;
        }
        txn.commit().map_err(backend)?;
        let db = Arc::new(db);
        let (jobs, rx) = mpsc::channel();
        let committer_db = db.clone();
        let committer = std::thread::Builder::new()
            .name("embedded-store-commit".into())
            .spawn(move || committer(&committer_db, rx))
            .map_err(backend)?;
        Ok(EmbeddedStore {
            db,
            jobs: Some(jobs),
            committer: Some(committer),
            requests: AtomicU64::new(0),
        })
    }

    fn count(&self, kind: Request) {
        self.requests.fetch_add(1, Ordering::Relaxed);
        super::note(kind);
    }

    async fn submit(&self, writes: Vec<Write>, returning: bool) -> JobResult {
        let (done, answer) = oneshot::channel();
        let stopped = || backend("the committer has stopped");
        let job = Job {
            writes,
            returning,
            done,
        };
        self.jobs
            .as_ref()
            .ok_or_else(stopped)?
            .send(job)
            .map_err(|_| stopped())?;
        answer.await.map_err(|_| stopped())?
    }
}

impl Drop for EmbeddedStore {
    /// Waits for the committer to finish, so the file is closed when the store is gone and a
    /// new store may open it at once.
    fn drop(&mut self) {
        self.jobs.take();
        if let Some(thread) = self.committer.take() {
            let _ = thread.join();
        }
    }
}

/// How long a batch waits for more writers, each time one more has joined it.
const COMMIT_DELAY: Duration = Duration::from_micros(200);
/// The most a batch waits in all (give or take the sleep's wake-up), and the size at which it
/// stops waiting (one drain may still take it up to `MAX_BATCH`).
const MAX_COMMIT_WAIT: Duration = Duration::from_millis(1);
const FULL_BATCH: usize = 64;
const MAX_BATCH: usize = 512;

fn committer(db: &Database, jobs: mpsc::Receiver<Job>) {
    let mut stopped: Option<StoreError> = None;
    while let Ok(first) = jobs.recv() {
        let mut batch = vec![first];
        drain(&jobs, &mut batch);
        // A commit delay, as databases offer: while writers keep arriving, the batch waits
        // for them (never more than MAX_COMMIT_WAIT), so that they share one commit and its
        // two fsyncs. A lone writer waits one COMMIT_DELAY. A little latency under load for
        // much less CPU per write.
        let started = Instant::now();
        while batch.len() < FULL_BATCH {
            let Some(left) = MAX_COMMIT_WAIT.checked_sub(started.elapsed()).filter(|d| !d.is_zero()) else {
                break;
            };
            let before = batch.len();
            std::thread::sleep(COMMIT_DELAY.min(left));
            drain(&jobs, &mut batch);
            if batch.len() == before {
                break;
            }
        }
        let results = match &stopped {
            Some(e) => Err(e.clone()),
            None => commit_batch(db, &batch).inspect_err(|e| {
                tracing::error!(error = %e, "embedded store: a commit failed; writes stop until a restart");
                stopped = Some(backend(format!("writes stopped after a failed commit ({e}); restart")));
            }),
        };
        match results {
            Ok(results) => {
                for (job, result) in batch.into_iter().zip(results) {
                    let _ = job.done.send(result);
                }
            }
            Err(e) => {
                for job in batch {
                    let _ = job.done.send(Err(e.clone()));
                }
            }
        }
    }
}

fn drain(jobs: &mpsc::Receiver<Job>, batch: &mut Vec<Job>) {
    while batch.len() < MAX_BATCH {
        match jobs.try_recv() {
            Ok(job) => batch.push(job),
            Err(_) => break,
        }
    }
}

/// Applies a batch in one write transaction: each job checked against what the batch's
/// earlier jobs left and applied only when all its checks hold. `Err` when the transaction
/// itself fails (nothing of the batch is then committed).
fn commit_batch(db: &Database, batch: &[Job]) -> Result<Vec<JobResult>, StoreError> {
    let mut txn = db.begin_write().map_err(backend)?;
    txn.set_two_phase_commit(true);
    let mut changed = false;
    let results = {
        let mut items = txn.open_table(ITEMS).map_err(backend)?;
        let mut gsi = [
            txn.open_table(GSI1).map_err(backend)?,
            txn.open_table(GSI2).map_err(backend)?,
        ];
        let mut results = Vec::with_capacity(batch.len());
        for job in batch {
            // Planning only reads: a panic in it (a bug) fails its job, not the committer,
            // which every writer of the process shares.
            let planned = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                plan_job(&job.writes, |k| read_item(&items, k))
            }))
            .unwrap_or_else(|_| Err(backend("planning the write panicked")));
            match planned {
                Ok((planned, last)) => {
                    for change in planned {
                        apply_change(&mut items, &mut gsi, change)?;
                        changed = true;
                    }
                    results.push(Ok(if job.returning { last } else { None }));
                }
                Err(e) => results.push(Err(e)),
            }
        }
        results
    };
    if changed {
        txn.commit().map_err(backend)?;
    } else {
        txn.abort().map_err(backend)?;
    }
    Ok(results)
}

/// One planned change: the encoded key, the item before and the item after (`None`: absent).
struct Change {
    key: Vec<u8>,
    old: Option<Item>,
    new: Option<Item>,
}

/// Writes one change and moves its index entries.
fn apply_change(
    items: &mut Table<&[u8], &[u8]>,
    gsi: &mut [Table<&[u8], ()>; 2],
    change: Change,
) -> Result<(), StoreError> {
    for (table, index) in gsi.iter_mut().zip([Index::Gsi1, Index::Gsi2]) {
        let before = change.old.as_ref().map(|o| index_key(index, o)).transpose()?.flatten();
        let after = change.new.as_ref().map(|n| index_key(index, n)).transpose()?.flatten();
        if before != after {
            if let Some(k) = before {
                table.remove(k.as_slice()).map_err(backend)?;
            }
            if let Some(k) = after {
                table.insert(k.as_slice(), ()).map_err(backend)?;
            }
        }
    }
    match &change.new {
        Some(item) => {
            let bytes = postcard::to_allocvec(item).map_err(backend)?;
            items.insert(change.key.as_slice(), bytes.as_slice()).map_err(backend)?;
        }
        None => {
            items.remove(change.key.as_slice()).map_err(backend)?;
        }
    }
    Ok(())
}

fn read_item(items: &impl ReadableTable<&'static [u8], &'static [u8]>, key: &[u8]) -> Result<Option<Item>, StoreError> {
    match items.get(key).map_err(backend)? {
        None => Ok(None),
        Some(bytes) => postcard::from_bytes(bytes.value())
            .map(Some)
            .map_err(|e| backend(format!("an unreadable item ({e})"))),
    }
}

/// Checks one job and computes its changes, all of them or an error when a check fails, and
/// the item its last write leaves.
fn plan_job(
    writes: &[Write],
    read: impl Fn(&[u8]) -> Result<Option<Item>, StoreError>,
) -> Result<(Vec<Change>, Option<Item>), StoreError> {
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
        let old = read(&k)?;
        let new = apply(w, old.as_ref())?.map_err(|()| StoreError::ConditionFailed {
            index: (writes.len() > 1).then_some(i),
        })?;
        last.clone_from(&new);
        if !matches!(w, Write::Check { .. }) && old != new {
            planned.push(Change { key: k, old, new });
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
fn table_key_of_entry(entry: &[u8]) -> Option<&[u8]> {
    let mut seps = entry.iter().enumerate().filter(|(_, b)| **b == 0).map(|(i, _)| i);
    let second = seps.nth(1)?;
    Some(&entry[second + 1..])
}

impl EmbeddedStore {
    fn read_txn(&self) -> Result<redb::ReadTransaction, StoreError> {
        self.db.begin_read().map_err(backend)
    }

    fn get_sync(&self, key: &Key) -> Result<Option<Item>, StoreError> {
        let k = table_key(key)?;
        let items = self.read_txn()?.open_table(ITEMS).map_err(backend)?;
        read_item(&items, &k)
    }

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
        let txn = self.read_txn()?;
        let items = txn.open_table(ITEMS).map_err(backend)?;
        let range = (Bound::Included(lo.as_slice()), Bound::Excluded(hi.as_slice()));
        let mut take = |item: Item| {
            page.items.push(item);
            page.items.len() == limit
        };
        match q.index {
            Index::Table => {
                let range = items.range::<&[u8]>(range).map_err(backend)?;
                walk(range, q.forward, |entry| {
                    let (_, bytes) = entry.map_err(backend)?;
                    Ok(take(postcard::from_bytes(bytes.value()).map_err(backend)?))
                })?;
            }
            Index::Gsi1 | Index::Gsi2 => {
                let def = if q.index == Index::Gsi1 { GSI1 } else { GSI2 };
                let index = txn.open_table(def).map_err(backend)?;
                let range = index.range::<&[u8]>(range).map_err(backend)?;
                walk(range, q.forward, |entry| {
                    let (entry, _) = entry.map_err(backend)?;
                    let key = table_key_of_entry(entry.value()).ok_or_else(|| backend("a malformed index entry"))?;
                    Ok(take(
                        read_item(&items, key)?.ok_or_else(|| backend("a dangling index entry"))?,
                    ))
                })?;
            }
        }
        if page.items.len() == limit {
            page.next = page.items.last().map(|last| last_key(q.index, last));
        }
        Ok(page)
    }
}

/// Visits a range in either direction until `visit` answers true (the page is full).
fn walk<I: DoubleEndedIterator>(
    mut range: I,
    forward: bool,
    mut visit: impl FnMut(I::Item) -> Result<bool, StoreError>,
) -> Result<(), StoreError> {
    while let Some(entry) = if forward { range.next() } else { range.next_back() } {
        if visit(entry)? {
            break;
        }
    }
    Ok(())
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
        self.count(Request::Read);
        self.get_sync(key)
    }

    async fn write(&self, writes: Vec<Write>) -> Result<(), StoreError> {
        self.count(Request::Write);
        super::check_item_sizes(&writes)?;
        self.submit(writes, false).await.map(|_| ())
    }

    async fn update(&self, key: &Key, ops: Vec<Update>, cond: Option<Cond>) -> Result<Item, StoreError> {
        self.count(Request::Write);
        super::check_update_size(&ops)?;
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
        self.count(Request::Read);
        self.query_sync(q)
    }

    fn requests(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;
    use std::sync::atomic::AtomicBool;

    use super::*;

    fn temp() -> PathBuf {
        let dir = std::env::temp_dir().join(format!("ips-embedded-{}", crate::ids::unique()));
        std::fs::create_dir_all(&dir).unwrap();
        dir.join("store.redb")
    }

    /// An item whose value is easy to find in the file.
    fn item(n: usize) -> Item {
        let mut i = Key::new("c#party", format!("p{n:05}")).item();
        i.insert("gsi1pk".into(), Val::S("c#by-name".into()));
        i.insert("gsi1sk".into(), Val::S(format!("name{n:05}")));
        i.insert("v".into(), Val::S(format!("needle-{n:05}-needle")));
        i
    }

    async fn fill(store: &EmbeddedStore, n: usize) {
        for chunk in (0..n).collect::<Vec<_>>().chunks(50) {
            let writes = chunk.iter().map(|&i| Write::Put {
                item: item(i),
                cond: Some(Cond::NotExists),
            });
            store.write(writes.collect()).await.unwrap();
        }
    }

    async fn all(store: &EmbeddedStore, index: Index, pk: &str) -> Vec<Item> {
        let mut q = Query::new(index, pk);
        q.limit = 7;
        let mut out = Vec::new();
        loop {
            let page = store.query(&q).await.unwrap();
            out.extend(page.items);
            match page.next {
                Some(next) => q.start = Some(next),
                None => return out,
            }
        }
    }

    #[tokio::test]
    async fn an_overflowing_add_fails_its_write_and_the_store_goes_on() {
        use rust_decimal::Decimal;
        let path = temp();
        let store = EmbeddedStore::open(&path).unwrap();
        let add = |n: Decimal| Write::Update {
            key: Key::new("c#counter", "total"),
            ops: vec![Update::Add("n".into(), n)],
            cond: None,
        };
        store.write(vec![add(Decimal::MAX)]).await.unwrap();
        assert!(matches!(
            store.write(vec![add(Decimal::MAX)]).await,
            Err(StoreError::Backend(_))
        ));
        fill(&store, 1).await;
        let counter = store.get(&Key::new("c#counter", "total")).await.unwrap().unwrap();
        assert_eq!(counter.get("n"), Some(&Val::N(Decimal::MAX)));
        std::fs::remove_dir_all(path.parent().unwrap()).ok();
    }

    #[tokio::test]
    async fn records_and_indexes_survive_a_reopen() {
        let path = temp();
        let store = EmbeddedStore::open(&path).unwrap();
        fill(&store, 300).await;
        store
            .write(vec![Write::Delete {
                key: Key::new("c#party", "p00007"),
                cond: None,
            }])
            .await
            .unwrap();
        drop(store);
        let store = EmbeddedStore::open(&path).unwrap();
        let expected: Vec<Item> = (0..300).filter(|&n| n != 7).map(item).collect();
        assert_eq!(all(&store, Index::Table, "c#party").await, expected);
        assert_eq!(all(&store, Index::Gsi1, "c#by-name").await, expected);
        assert_eq!(store.get(&Key::new("c#party", "p00007")).await.unwrap(), None);
        std::fs::remove_dir_all(path.parent().unwrap()).ok();
    }

    #[tokio::test]
    async fn a_flipped_byte_in_live_data_refuses_every_start() {
        let path = temp();
        fill(&EmbeddedStore::open(&path).unwrap(), 2000).await;
        let mut bytes = std::fs::read(&path).unwrap();
        // Flip one bit in every copy of one record's value, so the live copy is among them.
        let needle = b"needle-01234-needle";
        let hits: Vec<usize> = bytes
            .windows(needle.len())
            .enumerate()
            .filter(|(_, w)| w == needle)
            .map(|(i, _)| i)
            .collect();
        assert!(!hits.is_empty());
        for at in hits {
            bytes[at + 8] ^= 0x01;
        }
        std::fs::write(&path, &bytes).unwrap();
        let err = EmbeddedStore::open(&path).err().expect("the damage is detected");
        assert!(err.to_string().contains("integrity check"), "{err}");
        // Nothing was repaired away behind our back: every later start is refused too.
        for _ in 0..2 {
            assert!(EmbeddedStore::open(&path).is_err());
        }
        std::fs::remove_dir_all(path.parent().unwrap()).ok();
    }

    #[tokio::test]
    async fn a_file_cut_short_refuses_the_start() {
        let path = temp();
        fill(&EmbeddedStore::open(&path).unwrap(), 2000).await;
        let len = std::fs::metadata(&path).unwrap().len();
        let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        file.set_len(len - 4096).unwrap();
        drop(file);
        // A file cut short lost pages of acknowledged commits: the start is refused.
        let err = EmbeddedStore::open(&path).err().expect("the damage is detected");
        assert!(err.to_string().contains("truncated"), "{err}");
        std::fs::remove_dir_all(path.parent().unwrap()).ok();
    }

    /// Memory that fails every sync once told to (an fsync error).
    #[derive(Debug)]
    struct FailingSync {
        inner: redb::backends::InMemoryBackend,
        fail: Arc<AtomicBool>,
    }

    impl redb::StorageBackend for FailingSync {
        fn len(&self) -> Result<u64, std::io::Error> {
            self.inner.len()
        }
        fn read(&self, offset: u64, out: &mut [u8]) -> Result<(), std::io::Error> {
            self.inner.read(offset, out)
        }
        fn set_len(&self, len: u64) -> Result<(), std::io::Error> {
            self.inner.set_len(len)
        }
        fn sync_data(&self) -> Result<(), std::io::Error> {
            if self.fail.load(Ordering::SeqCst) {
                return Err(std::io::Error::other("injected fsync failure"));
            }
            self.inner.sync_data()
        }
        fn write(&self, offset: u64, data: &[u8]) -> Result<(), std::io::Error> {
            self.inner.write(offset, data)
        }
    }

    #[tokio::test]
    async fn after_a_failed_commit_writes_stop_and_reads_go_on() {
        let fail = Arc::new(AtomicBool::new(false));
        let store = EmbeddedStore::on_backend(FailingSync {
            inner: redb::backends::InMemoryBackend::new(),
            fail: fail.clone(),
        })
        .unwrap();
        fill(&store, 10).await;
        fail.store(true, Ordering::SeqCst);
        let put = |n| {
            vec![Write::Put {
                item: item(n),
                cond: None,
            }]
        };
        assert!(store.write(put(10)).await.is_err());
        // The disk works again, but what reached it is unknown: no write is taken until a restart.
        fail.store(false, Ordering::SeqCst);
        let err = store.write(put(11)).await.unwrap_err();
        assert!(err.to_string().contains("restart"), "{err}");
        assert_eq!(store.get(&Key::new("c#party", "p00003")).await.unwrap(), Some(item(3)));
    }
}
