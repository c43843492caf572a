//! Escrow balances (part 3, "Escrow balances"; CONTRACT, "The escrow ledger", "Escrow
//! figures"): an escrow account's figures summed from its ledger, and the record of its
//! last reconciliation with the escrow bank.

use serde::{Deserialize, Serialize};

use crate::model::offering::EscrowAccount;
use crate::model::payments::{FundStatus, LedgerEntry};

/// `availableBalanceCents` (the `Settled` and `Returned` entries) and `totalBalanceCents`
/// (every entry) of a ledger.
pub fn figures(ledger: &[LedgerEntry]) -> (i64, i64) {
    ledger.iter().fold((0, 0), |(available, total), e| {
        let counts = matches!(e.fund_status, FundStatus::Settled | FundStatus::Returned);
        (
            available + if counts { e.amount_cents } else { 0 },
            total + e.amount_cents,
        )
    })
}

/// The last reconciliation of an escrow account with the escrow bank.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Reconciliation {
    /// UTC, `YYYY-MM-DD HH:MM:SS`.
    pub reconciled_at: String,
    pub available_balance_cents: i64,
    pub total_balance_cents: i64,
}

/// `balances`, in part 3's order, with CONTRACT's `reconciledAt` after them.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BalancesView<'a> {
    pub escrow_account_number: &'a str,
    pub escrow_account_status: &'a str,
    pub deal_status: Option<&'a str>,
    pub escrow_bank: &'a str,
    pub available_balance_cents: i64,
    pub total_balance_cents: i64,
    pub open_date: Option<&'a str>,
    pub expiration_date: Option<&'a str>,
    pub close_date: Option<&'a str>,
    pub reconciled_at: Option<&'a str>,
}

impl EscrowAccount {
    /// The account's balances from its `ledger`; `deal_status` is the offering's status when
    /// the account serves one offering (null when shared).
    pub fn balances<'a>(
        &'a self,
        ledger: &[LedgerEntry],
        deal_status: Option<&'a str>,
        last: Option<&'a Reconciliation>,
    ) -> BalancesView<'a> {
        let (available, total) = figures(ledger);
        BalancesView {
            escrow_account_number: &self.number,
            escrow_account_status: &self.status,
            deal_status,
            escrow_bank: &self.bank,
            available_balance_cents: available,
            total_balance_cents: total,
            open_date: self.open_date.as_deref(),
            expiration_date: self.expiration_date.as_deref(),
            close_date: self.close_date.as_deref(),
            reconciled_at: last.map(|r| r.reconciled_at.as_str()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(cents: i64, status: FundStatus) -> LedgerEntry {
        LedgerEntry {
            escrow_account_number: "E1".into(),
            ref_num: "1".into(),
            kind: "debit".into(),
            amount_cents: cents,
            fund_status: status,
            account_id: "A1".into(),
            trade_id: "1".into(),
            offering_id: "1".into(),
            created_date: String::new(),
            updated_date: String::new(),
        }
    }

    #[test]
    fn available_counts_settled_and_returned_and_total_counts_all() {
        let ledger = [
            entry(1000, FundStatus::Settled),
            entry(250, FundStatus::Returned),
            entry(400, FundStatus::Pending),
            entry(300, FundStatus::Submitted),
            entry(-1000, FundStatus::Settled),
            entry(99, FundStatus::Voided),
        ];
        assert_eq!(figures(&ledger), (250, 1049));
        assert_eq!(figures(&[]), (0, 0));
    }
}
