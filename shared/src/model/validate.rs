//! Parameter value types parsed at the edge, with the spec's `106` on failure.

use chrono::NaiveDate;

use crate::error::ApiError;

/// A date parameter: `MM-DD-YYYY` (part 1), `YYYY-MM-DD` accepted too. Stored as sent.
pub fn date(name: &str, v: &str) -> Result<String, ApiError> {
    // chrono takes `1-2-1980` for `%m-%d-%Y`; the formats are fixed-width, so the shape is
    // checked first.
    let shape = |digits: [usize; 3]| {
        let parts: Vec<&str> = v.split('-').collect();
        parts.len() == 3
            && parts
                .iter()
                .zip(digits)
                .all(|(p, n)| p.len() == n && p.bytes().all(|b| b.is_ascii_digit()))
    };
    let ok = (shape([2, 2, 4]) && NaiveDate::parse_from_str(v, "%m-%d-%Y").is_ok())
        || (shape([4, 2, 2]) && NaiveDate::parse_from_str(v, "%Y-%m-%d").is_ok());
    if ok {
        Ok(v.to_owned())
    } else {
        Err(ApiError::invalid(name, "must be a date in MM-DD-YYYY format"))
    }
}

/// Tags: up to 10, comma separated (part 1, Limits).
pub fn tags(v: &str) -> Result<String, ApiError> {
    if v.split(',').filter(|t| !t.trim().is_empty()).count() > 10 {
        return Err(ApiError::invalid("tags", "at most 10 tags"));
    }
    Ok(v.to_owned())
}

/// A social security number, `xxx-xx-xxxx` (dashes optional).
pub fn ssn(v: &str) -> Result<String, ApiError> {
    let digits: String = v.chars().filter(|c| *c != '-').collect();
    let shape_ok = digits.len() == 9 && digits.chars().all(|c| c.is_ascii_digit());
    let dashes_ok = !v.contains('-') || (v.len() == 11 && &v[3..4] == "-" && &v[6..7] == "-");
    if shape_ok && dashes_ok {
        Ok(v.to_owned())
    } else {
        Err(ApiError::invalid("socialSecurityNumber", "must be xxx-xx-xxxx"))
    }
}

/// USPS codes: the states, DC, the territories and freely associated states, the military
/// "states", and `NOUS`.
const US_STATES: &[&str] = &[
    "AL", "AK", "AZ", "AR", "CA", "CO", "CT", "DE", "DC", "FL", "GA", "HI", "ID", "IL", "IN", "IA", "KS", "KY", "LA",
    "ME", "MD", "MA", "MI", "MN", "MS", "MO", "MT", "NE", "NV", "NH", "NJ", "NM", "NY", "NC", "ND", "OH", "OK", "OR",
    "PA", "RI", "SC", "SD", "TN", "TX", "UT", "VT", "VA", "WA", "WV", "WI", "WY", "AS", "GU", "MP", "PR", "VI", "UM",
    "FM", "MH", "PW", "AA", "AE", "AP", "NOUS",
];

/// An account's `state` or an entity's `primState` (parameter `name`): a two-letter US code,
/// or `NOUS` outside the US (case-insensitive, stored as sent). The incumbent rejects
/// unrecognised text with `106`.
pub fn us_state(name: &str, v: &str) -> Result<String, ApiError> {
    if US_STATES.iter().any(|s| s.eq_ignore_ascii_case(v.trim())) {
        Ok(v.to_owned())
    } else {
        Err(ApiError::invalid(name, "must be a two-letter US state code or NOUS"))
    }
}

/// The largest amount the service takes or computes, exclusive: a quadrillion. Amounts keep
/// six decimals (22 digits), and an offering's running totals of many such amounts stay
/// exact in a decimal and within DynamoDB's 38 digits.
pub fn amount_limit() -> rust_decimal::Decimal {
    rust_decimal::Decimal::from(1_000_000_000_000_000i64)
}

/// The most units one request may name: a trillion (as the ATS's shares).
pub const MAX_UNITS: i64 = 1_000_000_000_000;

/// An amount parameter (offering amounts): a non-negative decimal in plain notation
/// (`1000`, `1000.5`, `.25`), at most six decimal places, below [`amount_limit`]; anything
/// else `106`.
pub fn amount(name: &str, v: &str) -> Result<rust_decimal::Decimal, ApiError> {
    let t = v.trim();
    let (int, frac) = t.split_once('.').unwrap_or((t, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    let well_formed = !(int.is_empty() && frac.is_empty()) && digits(int) && digits(frac) && frac.len() <= 6;
    if !well_formed {
        return Err(ApiError::invalid(
            name,
            "must be a non-negative decimal number with at most six decimal places",
        ));
    }
    t.parse::<rust_decimal::Decimal>()
        .ok()
        .filter(|d| *d < amount_limit())
        .ok_or_else(|| ApiError::invalid(name, "is out of range (below 1000000000000000)"))
}

/// A count of units: a non-negative integer of at most [`MAX_UNITS`]; anything else `106`.
pub fn units(name: &str, v: &str) -> Result<i64, ApiError> {
    let t = v.trim();
    if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
        return Err(ApiError::invalid(name, "must be a whole number of units"));
    }
    t.parse()
        .ok()
        .filter(|n| *n <= MAX_UNITS)
        .ok_or_else(|| ApiError::invalid(name, "is out of range (at most 1000000000000)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_are_usps_codes_or_nous_in_any_case() {
        for ok in ["TX", "tx", " PW", "FM", "MH", "PR", "AE", "nous"] {
            assert!(us_state("state", ok).is_ok(), "{ok}");
        }
        for refused in ["ZZ", "Texas", "T1", "", "TXX"] {
            assert!(us_state("state", refused).is_err(), "{refused}");
        }
    }

    #[test]
    fn amounts_are_plain_non_negative_decimals_of_six_places_at_most() {
        for (v, want) in [
            ("1000", "1000"),
            ("0.5", "0.5"),
            (".25", "0.25"),
            ("7.", "7"),
            (" 12.123456 ", "12.123456"),
        ] {
            assert_eq!(amount("a", v).unwrap().to_string(), want, "{v}");
        }
        for v in [
            "",
            ".",
            "-1",
            "+1",
            "1e5",
            "1,000",
            "1.1234567",
            "abc",
            "1.2.3",
            "99999999999999999999999999999999",
            "1000000000000000",
        ] {
            assert!(amount("a", v).is_err(), "{v}");
        }
        assert!(amount("a", "999999999999999.999999").is_ok());
        assert_eq!(units("u", "12").unwrap(), 12);
        assert_eq!(units("u", "1000000000000").unwrap(), MAX_UNITS);
        for v in ["", "1.5", "-2", "x", "1000000000001"] {
            assert!(units("u", v).is_err(), "{v}");
        }
    }
}
