//! Encrypted webhooks (CONTRACT): the body is one form field, `params`, holding base64
//! (standard, padded) of a 12-byte random nonce followed by the AES-256-GCM ciphertext and
//! tag of the form-encoded payload, with no associated data. GCM authenticates what it hides.

use aes_gcm::aead::Aead;
use aes_gcm::{Aes256Gcm, KeyInit, Nonce};
use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;

/// The 32 bytes of a base64 key, or why it is not one.
pub fn parse_key(b64: &str) -> Result<[u8; 32], String> {
    let bytes = STANDARD.decode(b64).map_err(|_| "not base64".to_owned())?;
    bytes.try_into().map_err(|_| "32 bytes (AES-256) are needed".to_owned())
}

/// `value` encrypted under `key`: base64 of the nonce, the ciphertext and the tag (what
/// `params` holds; also single bank numbers inside a payload, CONTRACT).
pub fn seal(key: &[u8; 32], value: &str) -> Result<String, String> {
    let mut nonce = [0u8; 12];
    getrandom::fill(&mut nonce).map_err(|e| e.to_string())?;
    let sealed = Aes256Gcm::new(key.into())
        .encrypt(Nonce::from_slice(&nonce), value.as_bytes())
        .map_err(|e| e.to_string())?;
    let mut params = nonce.to_vec();
    params.extend(sealed);
    Ok(STANDARD.encode(params))
}

/// The form body carrying `payload` encrypted under `key`.
pub fn encrypt(key: &[u8; 32], payload: &str) -> Result<String, String> {
    serde_urlencoded::to_string([("params", seal(key, payload)?)]).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_body_decrypts_to_the_payload_with_the_key_and_not_without() {
        let key = [7u8; 32];
        let body = encrypt(&key, "partyId=P1&KYCstatus=").unwrap();
        let (name, value) = serde_urlencoded::from_str::<Vec<(String, String)>>(&body)
            .unwrap()
            .remove(0);
        assert_eq!(name, "params");
        let raw = STANDARD.decode(value).unwrap();
        let (nonce, sealed) = raw.split_at(12);
        let cipher = Aes256Gcm::new((&key).into());
        let opened = cipher.decrypt(Nonce::from_slice(nonce), sealed).unwrap();
        assert_eq!(opened, b"partyId=P1&KYCstatus=");
        assert!(Aes256Gcm::new((&[8u8; 32]).into())
            .decrypt(Nonce::from_slice(nonce), sealed)
            .is_err());
        // A fresh nonce each time: the same payload never looks the same twice.
        assert_ne!(encrypt(&key, "a=1").unwrap(), encrypt(&key, "a=1").unwrap());
        assert!(parse_key(&STANDARD.encode([1u8; 31])).is_err());
        assert!(parse_key("not base64!").is_err());
        assert_eq!(parse_key(&STANDARD.encode([1u8; 32])), Ok([1u8; 32]));
    }
}
