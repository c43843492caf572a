//! The card processor and bank-link provider ports, with the deterministic sandbox the
//! sandbox environment and the tests use (CONTRACT, "Sandbox linking"):
//! - cards `4111111111111111` approve and `4000000000000002` decline when captured; any
//!   other number is refused when linked;
//! - a link URL names the link in progress; the operator completes the investor's side.

use rust_decimal::Decimal;

/// A card as the processor keeps it: its brand, last four digits and token.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CardToken {
    pub brand: &'static str,
    pub last4: String,
    pub token: String,
}

/// The processor's answer to a capture.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Capture {
    pub approved: bool,
    pub transaction_id: String,
    pub message: String,
    pub token_message: String,
}

pub trait CardProcessor: Send + Sync {
    /// Takes a card number and `MM/YY` expiry; a refusal says why.
    fn tokenize(&self, number: &str, expiry: &str) -> Result<CardToken, String>;
    /// Charges `amount` to the card behind `token`, once per `reference`.
    fn capture(&self, token: &str, amount: Decimal, reference: &str) -> Capture;
}

pub trait BankLinks: Send + Sync {
    /// Where the investor links a bank account (or a card) for link `id`.
    fn link_url(&self, kind: &str, id: &str) -> String;
}

/// The sandbox of both ports.
pub struct Sandbox;

pub const APPROVING_CARD: &str = "4111111111111111";
pub const DECLINING_CARD: &str = "4000000000000002";

/// Whether `mm/yy` is a month of a year.
fn valid_expiry(expiry: &str) -> bool {
    let Some((mm, yy)) = expiry.split_once('/') else {
        return false;
    };
    mm.len() == 2 && yy.len() == 2 && yy.bytes().all(|b| b.is_ascii_digit()) && matches!(mm.parse::<u8>(), Ok(1..=12))
}

impl CardProcessor for Sandbox {
    fn tokenize(&self, number: &str, expiry: &str) -> Result<CardToken, String> {
        if !valid_expiry(expiry) {
            return Err("expiry: MM/YY".into());
        }
        let outcome = match number {
            APPROVING_CARD => "approve",
            DECLINING_CARD => "decline",
            _ => {
                return Err(format!(
                    "cardNumber: the sandbox takes {APPROVING_CARD} or {DECLINING_CARD}"
                ))
            }
        };
        let last4 = number[number.len() - 4..].to_owned();
        Ok(CardToken {
            brand: "VI",
            token: format!("sandbox-{outcome}-{last4}"),
            last4,
        })
    }

    fn capture(&self, token: &str, _amount: Decimal, reference: &str) -> Capture {
        let approved = token.starts_with("sandbox-approve-");
        Capture {
            approved,
            transaction_id: format!("sbx-{reference}"),
            message: if approved { "Approved" } else { "Declined: do not honor" }.into(),
            token_message: format!("token {token}"),
        }
    }
}

impl BankLinks for Sandbox {
    fn link_url(&self, kind: &str, id: &str) -> String {
        format!("https://sandbox-links.invalid/{kind}/{id}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sandbox_cards() {
        let ok = Sandbox.tokenize(APPROVING_CARD, "12/30").unwrap();
        assert_eq!((ok.brand, ok.last4.as_str()), ("VI", "1111"));
        assert!(Sandbox.capture(&ok.token, Decimal::ONE, "r1").approved);
        let no = Sandbox.tokenize(DECLINING_CARD, "01/29").unwrap();
        let c = Sandbox.capture(&no.token, Decimal::ONE, "r2");
        assert_eq!((c.approved, c.transaction_id.as_str()), (false, "sbx-r2"));
        assert!(Sandbox.tokenize("4242424242424242", "12/30").is_err());
        for bad in ["13/30", "1/30", "12-30", "12/3x", ""] {
            assert!(Sandbox.tokenize(APPROVING_CARD, bad).is_err(), "{bad}");
        }
    }
}
