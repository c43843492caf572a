//! Masking and encoding of sensitive values (part 1, §Conventions 8).

use base64::Engine;

/// How `clientId`, `developerAPIKey` and `trade_developerAPIKey` appear in responses.
pub const MASK: &str = "XXXXXXXXXXXXXXX";
/// How SSN and date of birth appear to most keys.
pub const REDACTED: &str = "REDACTED";

/// Bank routing and account numbers are returned base64-encoded.
pub fn b64(s: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(s)
}
