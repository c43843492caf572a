//! Parameter value types parsed at the edge, with the spec's `106` on failure.

use chrono::NaiveDate;

use crate::error::ApiError;

/// A date parameter: `MM-DD-YYYY` (part 1), `YYYY-MM-DD` accepted too. Stored as sent.
pub fn date(name: &str, v: &str) -> Result<String, ApiError> {
    let ok = NaiveDate::parse_from_str(v, "%m-%d-%Y").is_ok() || NaiveDate::parse_from_str(v, "%Y-%m-%d").is_ok();
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

const US_STATES: &[&str] = &[
    "AL", "AK", "AZ", "AR", "CA", "CO", "CT", "DE", "DC", "FL", "GA", "HI", "ID", "IL", "IN", "IA", "KS", "KY", "LA",
    "ME", "MD", "MA", "MI", "MN", "MS", "MO", "MT", "NE", "NV", "NH", "NJ", "NM", "NY", "NC", "ND", "OH", "OK", "OR",
    "PA", "RI", "SC", "SD", "TN", "TX", "UT", "VT", "VA", "WA", "WV", "WI", "WY", "AS", "GU", "MP", "PR", "VI", "UM",
    "AA", "AE", "AP", "NOUS",
];

/// An account's `state`: a two-letter US code, or `NOUS` outside the US (case-insensitive,
/// stored as sent). The incumbent rejects unrecognised text with `106`.
pub fn account_state(v: &str) -> Result<String, ApiError> {
    if US_STATES.iter().any(|s| s.eq_ignore_ascii_case(v.trim())) {
        Ok(v.to_owned())
    } else {
        Err(ApiError::invalid("state", "must be a two-letter US state code or NOUS"))
    }
}
