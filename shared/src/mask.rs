//! Masking and encoding of sensitive values (part 1, §Conventions 8).

use base64::Engine;

/// How `clientId`, `developerAPIKey` and `trade_developerAPIKey` appear in responses.
pub const MASK: &str = "XXXXXXXXXXXXXXX";
/// How SSN and date of birth appear to most keys.
pub const REDACTED: &str = "REDACTED";

/// `number` masked but its last four characters (`XXXXXXXX4321`).
pub fn last_four(number: &str) -> String {
    let keep = number.chars().count().saturating_sub(4);
    number
        .chars()
        .enumerate()
        .map(|(i, c)| if i < keep { 'X' } else { c })
        .collect()
}

/// Bank routing and account numbers are returned base64-encoded.
pub fn b64(s: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(s)
}
