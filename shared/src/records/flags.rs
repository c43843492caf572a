//! How the flag lists are stored: one item per normalized value, keyed by its hash, and the
//! check an operation adds to its own transaction.

use crate::model::flags::FlagKind;
use crate::store::{Cond, Key, Write};

/// The store items of a flag list.
pub trait FlagItems {
    fn key(self, normalized: &str) -> Key;
    fn check(self, raw: &str) -> Option<Write>;
}

impl FlagItems for FlagKind {
    /// The key of a normalized value's flag item.
    fn key(self, normalized: &str) -> Key {
        Key::new(
            self.partition(),
            blake3::hash(normalized.as_bytes()).to_hex().to_string(),
        )
    }

    /// The transaction item that fails when `raw` is flagged; `None` for an empty value.
    fn check(self, raw: &str) -> Option<Write> {
        let n = self.normalize(raw)?;
        Some(Write::Check {
            key: self.key(&n),
            cond: Cond::NotExists,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flag_items_are_keyed_by_the_normalized_value() {
        let (k, e) = (FlagKind::Ssn, FlagKind::Email);
        assert_eq!(k.key("123456789"), k.key(&k.normalize("123-45-6789").unwrap()));
        assert!(e.check("").is_none() && k.check("--").is_none());
    }
}
