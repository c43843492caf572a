//! Typed identifiers and counts, parsed at the edge. Each type knows the spec's answer for an
//! ID that names nothing (written here once), and a malformed ID gets that same answer: to
//! a client, an ID that cannot exist and one that does not exist are the same thing.

use std::fmt;

use serde::Serialize;

use crate::error::ApiError;
use crate::http::params::Params;

/// `148`: the account does not exist (for this client), is deleted, or (where the operation
/// needs an active one) archived.
pub fn no_account() -> ApiError {
    ApiError::coded("148", "Account is not exist/active.")
}

/// `198`: the party or entity does not exist (for this client) or is deleted.
pub fn no_party() -> ApiError {
    ApiError::coded("198", "Party does not exist")
}

/// `136`: the incumbent's answer for an unknown (or malformed) issuer ID, also used when the
/// issuer has no financial account.
pub fn no_issuer() -> ApiError {
    ApiError::coded("136", "Issuer Account does not exist.")
}

/// `138`: the offering does not exist (unknown, deleted, or another client's).
pub fn no_offering() -> ApiError {
    ApiError::coded("138", "Offering does not exist")
}

/// `188`: the trade does not exist (unknown, another client's, or not the account's).
pub fn no_trade() -> ApiError {
    ApiError::coded("188", "Trade does not exist")
}

/// A numeric ID as sent, without surrounding space or leading zeros; `106` naming the
/// parameter otherwise.
pub fn numeric_id(name: &str, raw: &str) -> Result<String, ApiError> {
    let t = raw.trim();
    if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
        return Err(ApiError::invalid(name, "Numeric values only"));
    }
    t.parse::<u64>()
        .map(|n| n.to_string())
        .map_err(|_| ApiError::invalid(name, "Numeric values only"))
}

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident, $param:literal, $unknown:path, $valid:expr) => {
        $(#[$doc])*
        #[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
        #[serde(transparent)]
        pub struct $name(String);

        impl $name {
            /// The parameter this ID usually travels in.
            pub const PARAM: &'static str = $param;

            /// Parses an ID as sent (trimmed): the type's unknown-ID answer when it cannot
            /// name a record.
            pub fn parse(raw: &str) -> Result<Self, ApiError> {
                let t = raw.trim();
                let valid: fn(&str) -> bool = $valid;
                if valid(t) {
                    Ok($name(t.to_owned()))
                } else {
                    Err($unknown())
                }
            }

            /// The required parameter `names` (first present wins): `106` when missing,
            /// the unknown-ID answer when malformed.
            pub fn param(p: &Params, names: &[&str]) -> Result<Self, ApiError> {
                Self::parse(&p.req(names)?)
            }

            /// The ID as stored in keys and records.
            pub fn as_str(&self) -> &str {
                &self.0
            }

            /// An ID read back from a stored record (trusted: it was parsed when written).
            pub fn stored(id: impl Into<String>) -> Self {
                $name(id.into())
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }
    };
}

fn prefixed(prefix: u8) -> impl Fn(&str) -> bool {
    move |s: &str| {
        let b = s.as_bytes();
        b.len() > 1 && b.len() <= 32 && b[0] == prefix && b[1..].iter().all(u8::is_ascii_digit)
    }
}

fn digits(s: &str) -> bool {
    !s.is_empty() && s.len() <= 20 && s.bytes().all(|b| b.is_ascii_digit())
}

id_type!(
    /// `A…`: an investor account.
    AccountId, "accountId", no_account, |s| prefixed(b'A')(s)
);
id_type!(
    /// `P…`: an individual party.
    PartyId, "partyId", no_party, |s| prefixed(b'P')(s)
);
id_type!(
    /// `E…`: an entity (a party that is an organization).
    EntityId, "partyId", no_party, |s| prefixed(b'E')(s)
);
id_type!(
    /// A numeric issuer ID.
    IssuerId, "issuerId", no_issuer, digits
);
id_type!(
    /// A numeric offering ID.
    OfferingId, "offeringId", no_offering, digits
);
id_type!(
    /// A numeric trade ID.
    TradeId, "tradeId", no_trade, digits
);

/// A count of units (shares): a whole number written in plain digits, optionally with a
/// leading `-` (the operation decides whether zero or a negative count is allowed). Signs
/// like `+5`, booleans, decimals and exponents are `106`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct Units(i64);

impl Units {
    pub fn parse(name: &str, raw: &str) -> Result<Units, ApiError> {
        let t = raw.trim();
        let body = t.strip_prefix('-').unwrap_or(t);
        if body.is_empty() || !body.bytes().all(|b| b.is_ascii_digit()) {
            return Err(ApiError::invalid(name, "must be a whole number of units"));
        }
        let n = t
            .parse::<i64>()
            .map_err(|_| ApiError::invalid(name, "must be a whole number of units"))?;
        if n.unsigned_abs() > super::validate::MAX_UNITS.unsigned_abs() {
            return Err(ApiError::invalid(name, "is out of range (at most 1000000000000)"));
        }
        Ok(Units(n))
    }

    /// The required parameter `name`; a JSON boolean is no count (`true` is not one unit), a
    /// JSON number with an integral value is (`2.0` is two units).
    pub fn param(p: &Params, name: &str) -> Result<Units, ApiError> {
        if let Some(serde_json::Value::Bool(_)) = p.value(name) {
            return Err(ApiError::invalid(name, "must be a whole number of units"));
        }
        match p.integer_text(name)? {
            Some(v) if !v.trim().is_empty() => Units::parse(name, &v),
            _ => Err(ApiError::missing(name)),
        }
    }

    pub fn get(self) -> i64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_parse_at_the_edge_with_the_unknown_answer() {
        assert_eq!(AccountId::parse(" A1000001 ").unwrap().as_str(), "A1000001");
        assert_eq!(AccountId::parse("P1000001").unwrap_err().code(), "148");
        assert_eq!(AccountId::parse("A").unwrap_err().code(), "148");
        assert_eq!(AccountId::parse("A1\u{0}").unwrap_err().code(), "148");
        assert_eq!(PartyId::parse("P12").unwrap().to_string(), "P12");
        assert_eq!(PartyId::parse("x").unwrap_err().code(), "198");
        assert_eq!(EntityId::parse("E7").unwrap().as_str(), "E7");
        assert_eq!(TradeId::parse("12a").unwrap_err().code(), "188");
        assert_eq!(OfferingId::parse("").unwrap_err().code(), "138");
        assert_eq!(IssuerId::parse("-1").unwrap_err().code(), "136");
        assert_eq!(numeric_id("tradeId", "007").unwrap(), "7");
        assert_eq!(numeric_id("tradeId", "7x").unwrap_err().code(), "106");
    }

    #[test]
    fn units_are_plain_whole_numbers() {
        assert_eq!(Units::parse("u", " 5 ").unwrap().get(), 5);
        assert_eq!(Units::parse("u", "-3").unwrap().get(), -3);
        assert_eq!(Units::parse("u", "1000000000000").unwrap().get(), 1_000_000_000_000);
        for bad in [
            "+5",
            "true",
            "1.5",
            "1e3",
            "",
            "-",
            "5 5",
            "99999999999999999999",
            "1000000000001",
        ] {
            assert_eq!(Units::parse("u", bad).unwrap_err().code(), "106", "{bad:?}");
        }
    }
}
