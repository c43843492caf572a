//! Identifiers from global per-type counters, reserved in blocks so that most creates cost
//! no counter write (the reservation is housekeeping outside the per-operation budget).

use std::collections::HashMap;
use std::sync::Mutex;

use rust_decimal::prelude::ToPrimitive;
use rust_decimal::Decimal;

use crate::error::ApiError;
use crate::store::{Key, Store, Update, Val};

/// A kind of identifier: its counter, prefix and first value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct IdKind {
    pub counter: &'static str,
    pub prefix: &'static str,
    pub first: u64,
}

impl IdKind {
    /// A party-like kind: `prefix` and seven digits from `1000000` (`A1000000`).
    const fn prefixed(counter: &'static str, prefix: &'static str) -> Self {
        IdKind {
            counter,
            prefix,
            first: 1_000_000,
        }
    }

    /// A numeric kind counting from `first`.
    pub const fn numeric(counter: &'static str, first: u64) -> Self {
        IdKind {
            counter,
            prefix: "",
            first,
        }
    }
}

pub const ACCOUNT: IdKind = IdKind::prefixed("account", "A");
pub const PARTY: IdKind = IdKind::prefixed("party", "P");
pub const ENTITY: IdKind = IdKind::prefixed("entity", "E");
pub const NOTE: IdKind = IdKind::numeric("note", 100_000);
pub const LINK: IdKind = IdKind::numeric("link", 100_000);
/// Accreditation requests (`airequestId`, requestAiVerification).
pub const AI_REQUEST: IdKind = IdKind::numeric("airequest", 100_000);
pub const ISSUER: IdKind = IdKind::numeric("issuer", 100_000);
pub const OFFERING: IdKind = IdKind::numeric("offering", 100_000);
/// Trades (`tradeId`, createTrade).
pub const TRADE: IdKind = IdKind::numeric("trade", 100_000);

/// Hands out IDs from blocks reserved in the store.
pub struct IdAllocator {
    block: u64,
    blocks: Mutex<HashMap<&'static str, (u64, u64)>>,
}

impl IdAllocator {
    pub fn new(block: u64) -> Self {
        IdAllocator {
            block: block.max(1),
            blocks: Mutex::default(),
        }
    }

    /// The next ID of `kind`, e.g. `P1000000` or `100000`.
    pub async fn next(&self, store: &dyn Store, kind: IdKind) -> Result<String, ApiError> {
        loop {
            if let Some(n) = self.take(kind) {
                return Ok(format!("{}{}", kind.prefix, kind.first + n));
            }
            let item = store
                .update(
                    &Key::new("#COUNTER", kind.counter),
                    vec![Update::Add("n".into(), Decimal::from(self.block))],
                    None,
                )
                .await?;
            let end = item
                .get("n")
                .and_then(Val::as_num)
                .and_then(|n| n.to_u64())
                .ok_or_else(|| ApiError::internal("counter is not a number"))?;
            let mut blocks = self.blocks.lock().unwrap_or_else(|e| e.into_inner());
            blocks.insert(kind.counter, (end - self.block, end));
        }
    }

    fn take(&self, kind: IdKind) -> Option<u64> {
        let mut blocks = self.blocks.lock().unwrap_or_else(|e| e.into_inner());
        let (next, end) = blocks.get_mut(kind.counter)?;
        (*next < *end).then(|| {
            *next += 1;
            *next - 1
        })
    }
}

/// A sort-key form of an ID whose numeric part orders numerically (`P1000000` →
/// `P000001000000`).
pub fn sortable(id: &str) -> String {
    let digits = id.trim_start_matches(|c: char| !c.is_ascii_digit());
    let prefix = &id[..id.len() - digits.len()];
    match digits.parse::<u64>() {
        Ok(n) if digits.chars().all(|c| c.is_ascii_digit()) => format!("{prefix}{n:012}"),
        _ => id.to_owned(),
    }
}

/// An identifier unique across instances and restarts: a random per-process prefix and a
/// counter (request IDs, outbox entries); cheaper than a random UUID each time.
pub fn unique() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::OnceLock;
    static PREFIX: OnceLock<String> = OnceLock::new();
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let prefix = PREFIX.get_or_init(|| crate::auth::random_secret()[..12].to_owned());
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    // Twelve hex digits written directly: every request makes one, and `format!` was a
    // visible part of a ping's cost. 2^48 IDs per process before they wrap.
    let mut id = String::with_capacity(prefix.len() + 12);
    id.push_str(prefix);
    id.extend(
        (0..12)
            .rev()
            .map(|i| char::from(b"0123456789abcdef"[(n >> (i * 4)) as usize & 0xf])),
    );
    id
}

#[cfg(test)]
mod tests {
    #[test]
    fn unique_ids_share_the_process_prefix_and_count_up_in_hex() {
        let (a, b) = (super::unique(), super::unique());
        for id in [&a, &b] {
            assert_eq!(id.len(), 24, "{id}");
            assert!(
                id.bytes().all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()),
                "{id}"
            );
        }
        assert_eq!(a[..12], b[..12]);
        let count = |id: &str| u64::from_str_radix(&id[12..], 16).expect("twelve hex digits, checked above");
        assert!(count(&b) > count(&a), "{a} then {b}");
    }
}
