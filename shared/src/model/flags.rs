//! The operator's flag lists: social security numbers (`775`) and email addresses (`776`)
//! that cannot be used in a party or entity. Service-wide (every client), one item per
//! value under `#FLAG#SSN` / `#FLAG#EMAIL`, keyed by a hash of the normalized value so that
//! keys stay short and carry no PII; the item keeps the normalized value for listing.
//!
//! SSNs compare by their digits only (`123-45-6789` = `123456789`); email addresses
//! case-insensitively, surrounding blanks ignored. An operation checks a value by adding a
//! `Write::Check` that the flag item is absent to its own transaction: no extra read, and
//! a flag added concurrently is honoured atomically.

/// Which list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlagKind {
    Ssn,
    Email,
}

impl FlagKind {
    /// From the operator path segment (`ssn`, `email`).
    pub fn parse(s: &str) -> Option<Self> {
        match s.to_ascii_lowercase().as_str() {
            "ssn" => Some(FlagKind::Ssn),
            "email" => Some(FlagKind::Email),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            FlagKind::Ssn => "ssn",
            FlagKind::Email => "email",
        }
    }

    /// The partition holding this list.
    pub fn partition(self) -> &'static str {
        match self {
            FlagKind::Ssn => "#FLAG#SSN",
            FlagKind::Email => "#FLAG#EMAIL",
        }
    }

    /// The comparison form of a value: SSN digits, or the trimmed lower-cased address.
    /// `None` when nothing is left to compare (an empty value is never flagged).
    pub fn normalize(self, raw: &str) -> Option<String> {
        let n: String = match self {
            FlagKind::Ssn => raw.chars().filter(char::is_ascii_digit).collect(),
            FlagKind::Email => raw.trim().to_lowercase(),
        };
        (!n.is_empty()).then_some(n)
    }

    /// A value the operator may put on the list: nine digits, or an address with `@` and
    /// no blanks. Answers the normalized form.
    pub fn normalize_for_list(self, raw: &str) -> Result<String, String> {
        let n = self.normalize(raw).unwrap_or_default();
        let ok = match self {
            FlagKind::Ssn => n.len() == 9,
            FlagKind::Email => n.contains('@') && !n.chars().any(char::is_whitespace),
        };
        if ok {
            Ok(n)
        } else {
            Err(match self {
                FlagKind::Ssn => format!("{raw:?} is not a social security number (nine digits)"),
                FlagKind::Email => format!("{raw:?} is not an email address"),
            })
        }
    }
}

/// The attribute of a flag item holding the normalized value.
pub const VALUE_ATTR: &str = "value";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ssns_compare_by_digits_and_emails_without_case() {
        let k = FlagKind::Ssn;
        assert_eq!(k.normalize("123-45-6789"), k.normalize("123456789"));
        let e = FlagKind::Email;
        assert_eq!(e.normalize(" Ann@Example.COM "), Some("ann@example.com".into()));
        assert!(k.normalize_for_list("12-34").is_err());
        assert!(e.normalize_for_list("not an email").is_err());
        assert_eq!(e.normalize_for_list("A@B.c").unwrap(), "a@b.c");
    }
}
