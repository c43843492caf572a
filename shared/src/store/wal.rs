//! The embedded store's durable copy: an append-only log of committed changes plus a
//! snapshot, both replayed into the memory mirror when the store opens.
//!
//! The mirror serves every read, so the disk only needs to remember changes in order: one
//! append and one `fdatasync` per group commit, instead of a B-tree update of every touched
//! page. When the log outgrows the live data it is compacted: the mirror is written to a new
//! snapshot (written aside, synced, renamed), then the log is emptied.
//!
//! Framing, for the log and the snapshot alike: `len: u32 LE`, `check: [u8; 4]` (the first
//! bytes of the payload's BLAKE3 hash), `payload` (postcard of a list of `(key, item or
//! None)`). A torn or corrupt frame at the log's end (a crash mid-append) ends the replay
//! and is cut off; nothing after it was ever acknowledged.

use std::fs::{File, OpenOptions};
use std::io::{BufReader, Read, Write as _};
use std::path::{Path, PathBuf};

use super::{Item, StoreError};

/// A change: the encoded table key and the item after it (`None`: deleted).
pub type Change = (Vec<u8>, Option<Item>);

/// The log is compacted once it is larger than this and than twice the last snapshot.
const COMPACT_MIN: u64 = 64 << 20;
/// Items per snapshot frame.
const SNAPSHOT_CHUNK: usize = 4096;

fn io(e: std::io::Error) -> StoreError {
    StoreError::Backend(format!("embedded store file: {e}"))
}

fn check(payload: &[u8]) -> [u8; 4] {
    let h = blake3::hash(payload);
    let mut out = [0; 4];
    out.copy_from_slice(&h.as_bytes()[..4]);
    out
}

fn frame(changes: &[(&[u8], Option<&Item>)], out: &mut Vec<u8>) -> Result<(), StoreError> {
    let start = out.len();
    out.extend_from_slice(&[0; 8]);
    let out_vec = std::mem::take(out);
    let mut out_vec = postcard::to_extend(changes, out_vec).map_err(|e| StoreError::Backend(e.to_string()))?;
    let len = u32::try_from(out_vec.len() - start - 8).map_err(|_| StoreError::Backend("frame too large".into()))?;
    let sum = check(&out_vec[start + 8..]);
    out_vec[start..start + 4].copy_from_slice(&len.to_le_bytes());
    out_vec[start + 4..start + 8].copy_from_slice(&sum);
    *out = out_vec;
    Ok(())
}

/// Reads frames until the end or the first bad one; answers the changes and the length of
/// the good prefix.
fn read_frames(file: &File, mut apply: impl FnMut(Vec<Change>)) -> Result<u64, StoreError> {
    let mut r = BufReader::with_capacity(1 << 20, file);
    let mut good = 0u64;
    let mut header = [0u8; 8];
    let mut payload = Vec::new();
    loop {
        if r.read_exact(&mut header).is_err() {
            return Ok(good);
        }
        let len = u32::from_le_bytes([header[0], header[1], header[2], header[3]]) as usize;
        payload.resize(len, 0);
        if r.read_exact(&mut payload).is_err() || check(&payload) != header[4..8] {
            return Ok(good);
        }
        let Ok(changes) = postcard::from_bytes::<Vec<Change>>(&payload) else {
            return Ok(good);
        };
        apply(changes);
        good += 8 + len as u64;
    }
}

/// The files of one store.
pub struct Wal {
    log: File,
    log_len: u64,
    snapshot: PathBuf,
    snapshot_len: u64,
    dir: PathBuf,
    buf: Vec<u8>,
}

impl Wal {
    /// Opens (or creates) the store at `path` (`path` is the log; the snapshot sits beside
    /// it with the extension `snap`) and replays it into `apply`.
    pub fn open(path: &Path, mut apply: impl FnMut(Vec<Change>)) -> Result<Wal, StoreError> {
        let dir = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .to_path_buf();
        let snapshot = path.with_extension("snap");
        let mut snapshot_len = 0;
        if let Ok(f) = File::open(&snapshot) {
            snapshot_len = f.metadata().map_err(io)?.len();
            let good = read_frames(&f, &mut apply)?;
            if good != snapshot_len {
                // A snapshot is renamed into place only once complete and synced.
                return Err(StoreError::Backend(format!("{} is corrupt", snapshot.display())));
            }
        }
        let log = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(path)
            .map_err(io)?;
        let len = log.metadata().map_err(io)?.len();
        let good = read_frames(&log, &mut apply)?;
        if good != len {
            tracing::warn!(
                dropped = len - good,
                "embedded store: cutting off a torn write at the end of the log"
            );
            log.set_len(good).map_err(io)?;
            log.sync_all().map_err(io)?;
        }
        Ok(Wal {
            log,
            log_len: good,
            snapshot,
            snapshot_len,
            dir,
            buf: Vec::new(),
        })
    }

    /// Appends one commit's changes and syncs them.
    pub fn append(&mut self, changes: &[(&[u8], Option<&Item>)]) -> Result<(), StoreError> {
        self.buf.clear();
        frame(changes, &mut self.buf)?;
        let result = self.log.write_all(&self.buf).and_then(|()| self.log.sync_data());
        if let Err(e) = result {
            // Whatever part of the frame reached the file would be cut off at the next open,
            // but a later frame written after it would be lost with it: cut it now.
            let _ = self.log.set_len(self.log_len);
            return Err(io(e));
        }
        self.log_len += self.buf.len() as u64;
        if self.buf.capacity() > 1 << 20 {
            self.buf = Vec::new();
        }
        Ok(())
    }

    /// Whether the log has grown enough to be compacted.
    pub fn wants_compaction(&self) -> bool {
        self.log_len > COMPACT_MIN && self.log_len > 2 * self.snapshot_len
    }

    /// Writes every live item to a new snapshot and empties the log.
    pub fn compact<'a>(&mut self, items: impl Iterator<Item = (&'a Vec<u8>, &'a Item)>) -> Result<(), StoreError> {
        let tmp = self.snapshot.with_extension("snap.tmp");
        let mut f = File::create(&tmp).map_err(io)?;
        let mut chunk: Vec<(&[u8], Option<&Item>)> = Vec::with_capacity(SNAPSHOT_CHUNK);
        let mut buf = Vec::new();
        let mut len = 0u64;
        let mut flush = |chunk: &mut Vec<(&[u8], Option<&Item>)>, f: &mut File| -> Result<(), StoreError> {
            if chunk.is_empty() {
                return Ok(());
            }
            buf.clear();
            frame(chunk, &mut buf)?;
            f.write_all(&buf).map_err(io)?;
            len += buf.len() as u64;
            chunk.clear();
            Ok(())
        };
        for (k, item) in items {
            chunk.push((k.as_slice(), Some(item)));
            if chunk.len() == SNAPSHOT_CHUNK {
                flush(&mut chunk, &mut f)?;
            }
        }
        flush(&mut chunk, &mut f)?;
        f.sync_all().map_err(io)?;
        std::fs::rename(&tmp, &self.snapshot).map_err(io)?;
        File::open(&self.dir).and_then(|d| d.sync_all()).map_err(io)?;
        // Replaying the old log over the new snapshot would also give the same state (each
        // frame holds whole items), so a crash before this truncation loses nothing.
        self.log.set_len(0).map_err(io)?;
        self.log.sync_all().map_err(io)?;
        self.log_len = 0;
        self.snapshot_len = len;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Val;
    use std::collections::BTreeMap;

    fn item(v: &str) -> Item {
        let mut i = Item::new();
        i.insert("v".into(), Val::S(v.into()));
        i
    }

    fn replay(path: &Path) -> (Wal, BTreeMap<Vec<u8>, Item>) {
        let mut state = BTreeMap::new();
        let wal = Wal::open(path, |changes| {
            for (k, v) in changes {
                match v {
                    Some(i) => state.insert(k, i),
                    None => state.remove(&k),
                };
            }
        })
        .unwrap();
        (wal, state)
    }

    fn temp() -> PathBuf {
        let dir = std::env::temp_dir().join(format!("ips-wal-{}", crate::ids::unique()));
        std::fs::create_dir_all(&dir).unwrap();
        dir.join("store.log")
    }

    #[test]
    fn changes_survive_a_reopen_and_a_torn_tail_is_cut() {
        let path = temp();
        let (mut wal, state) = replay(&path);
        assert!(state.is_empty());
        let (a, b) = (item("a"), item("b"));
        wal.append(&[(b"k1", Some(&a)), (b"k2", Some(&b))]).unwrap();
        wal.append(&[(b"k1", None)]).unwrap();
        drop(wal);
        let good = std::fs::metadata(&path).unwrap().len();
        // A crash in the middle of an append leaves part of a frame.
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(&[9, 0, 0, 0, 1, 2]).unwrap();
        drop(f);
        let (mut wal, state) = replay(&path);
        assert_eq!(state, BTreeMap::from([(b"k2".to_vec(), b.clone())]));
        assert_eq!(std::fs::metadata(&path).unwrap().len(), good);
        wal.append(&[(b"k3", Some(&a))]).unwrap();
        drop(wal);
        let (_, state) = replay(&path);
        assert_eq!(state.len(), 2);
        std::fs::remove_dir_all(path.parent().unwrap()).ok();
    }

    #[test]
    fn a_corrupt_frame_ends_the_replay() {
        let path = temp();
        let (mut wal, _) = replay(&path);
        wal.append(&[(b"k1", Some(&item("a")))]).unwrap();
        let first = std::fs::metadata(&path).unwrap().len();
        wal.append(&[(b"k2", Some(&item("b")))]).unwrap();
        drop(wal);
        let mut bytes = std::fs::read(&path).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 0xFF;
        std::fs::write(&path, bytes).unwrap();
        let (_, state) = replay(&path);
        assert_eq!(state.keys().collect::<Vec<_>>(), vec![&b"k1".to_vec()]);
        assert_eq!(std::fs::metadata(&path).unwrap().len(), first);
        std::fs::remove_dir_all(path.parent().unwrap()).ok();
    }

    #[test]
    fn compaction_keeps_the_state_and_empties_the_log() {
        let path = temp();
        let (mut wal, _) = replay(&path);
        let mut state = BTreeMap::new();
        for n in 0..10_000u32 {
            let k = format!("k{}", n % 5000).into_bytes();
            let i = item(&n.to_string());
            wal.append(&[(k.as_slice(), Some(&i))]).unwrap();
            state.insert(k, i);
        }
        wal.compact(state.iter()).unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 0);
        wal.append(&[(b"k1", None)]).unwrap();
        state.remove(b"k1".as_slice());
        drop(wal);
        let (wal, replayed) = replay(&path);
        assert_eq!(replayed, state);
        assert!(!wal.wants_compaction());
        std::fs::remove_dir_all(path.parent().unwrap()).ok();
    }
}
