//! External bank accounts, ACH fund moves and the client's payment settings: the records and
//! their views (part 3, "External bank account", "ACH fund move"; shapes designed where it
//! says "not shown" are in `docs/payments.md`). No store, no `Ctx`.

use crate::mask::b64;
use rust_decimal::prelude::ToPrimitive;
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

use crate::error::ApiError;
use crate::ids::IdKind;

/// ACH reference numbers (`RefNum`): numeric, from 1,000,000.
pub const FUND_MOVE: IdKind = IdKind::numeric("fundmove", 1_000_000);

/// What an external account belongs to (`types`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Owner {
    Account,
    Issuer,
}

impl Owner {
    /// `types` as sent (any casing); `106` otherwise.
    pub fn parse(raw: &str) -> Result<Owner, ApiError> {
        match raw.trim().to_ascii_lowercase().as_str() {
            "account" => Ok(Owner::Account),
            "issuer" => Ok(Owner::Issuer),
            _ => Err(ApiError::invalid("types", "must be Account or Issuer")),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Owner::Account => "Account",
            Owner::Issuer => "Issuer",
        }
    }

    /// The parameter naming the owner.
    pub fn id_param(self) -> &'static str {
        match self {
            Owner::Account => "accountId",
            Owner::Issuer => "issuerId",
        }
    }
}

/// An account's or issuer's bank account on file: one per owner.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExternalAccount {
    pub types: Owner,
    pub owner_id: String,
    pub full_name: String,
    pub nickname: String,
    /// Nine digits as sent.
    pub routing_number: String,
    /// The digits exactly as sent, leading zeros kept.
    pub account_number: String,
    pub bank_name: String,
    /// `Checking` or `Savings`.
    pub account_type: String,
    pub created_date: String,
    pub updated_date: String,
    pub ip_address: String,
}

/// The record of createExternalAccount, updateExternalAccount and their webhooks, in part 1's
/// order: the owner's ID under `accountId` or `issuerId`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExternalAccountView<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub account_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub issuer_id: Option<&'a str>,
    #[serde(rename = "ExtAccountfullname")]
    pub full_name: &'a str,
    #[serde(rename = "Extnickname")]
    pub nickname: &'a str,
    #[serde(rename = "ExtRoutingnumber")]
    pub routing_number: String,
    #[serde(rename = "ExtAccountnumber")]
    pub account_number: String,
    pub types: &'static str,
    pub account_type: &'a str,
}

/// getExternalAccount's details (OBSERVED: inside `statusDesc`).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExternalAccountDetails<'a> {
    #[serde(rename = "AccountName")]
    pub full_name: &'a str,
    #[serde(rename = "AccountNickName")]
    pub nickname: &'a str,
    #[serde(rename = "AccountNumber")]
    pub account_number: String,
    #[serde(rename = "AccountRoutingNumber")]
    pub routing_number: String,
    pub account_type: &'a str,
    pub created_date: &'a str,
    pub updated_date: &'a str,
}

impl ExternalAccount {
    pub fn view(&self) -> ExternalAccountView<'_> {
        let id = Some(self.owner_id.as_str());
        ExternalAccountView {
            account_id: id.filter(|_| self.types == Owner::Account),
            issuer_id: id.filter(|_| self.types == Owner::Issuer),
            full_name: &self.full_name,
            nickname: &self.nickname,
            routing_number: b64(&self.routing_number),
            account_number: b64(&self.account_number),
            types: self.types.name(),
            account_type: &self.account_type,
        }
    }

    pub fn details(&self) -> ExternalAccountDetails<'_> {
        ExternalAccountDetails {
            full_name: &self.full_name,
            nickname: &self.nickname,
            account_number: b64(&self.account_number),
            routing_number: b64(&self.routing_number),
            account_type: &self.account_type,
            created_date: &self.created_date,
            updated_date: &self.updated_date,
        }
    }

    /// Whether a fund move can debit it: nickname, numbers and holder name all on file
    /// (part 3, rule 1; `149` otherwise).
    pub fn usable(&self) -> bool {
        [
            &self.nickname,
            &self.routing_number,
            &self.account_number,
            &self.full_name,
        ]
        .iter()
        .all(|v| !v.trim().is_empty())
    }
}

/// Part 3's nickname rule: letters, digits, spaces, hyphens, underscores and slashes
/// (Latin-1 letters included); `106` otherwise.
pub fn check_nickname(v: &str) -> Result<(), ApiError> {
    let allowed = |c: char| c.is_alphanumeric() && (c as u32) < 0x100 || matches!(c, ' ' | '-' | '_' | '/');
    if v.chars().all(allowed) {
        Ok(())
    } else {
        Err(ApiError::invalid(
            "Extnickname",
            "letters, digits, spaces, hyphens, underscores and slashes only",
        ))
    }
}

/// An account or routing number parameter: digits only (part 3: "integer"), kept exactly
/// as sent; `106` otherwise.
pub fn digits(name: &str, v: &str) -> Result<String, ApiError> {
    let t = v.trim();
    if t.is_empty() || t.len() > 34 || !t.bytes().all(|b| b.is_ascii_digit()) {
        return Err(ApiError::invalid(name, "digits only"));
    }
    Ok(t.to_owned())
}

/// The ABA rule of a routing number: nine digits (`207` otherwise) whose weighted sum
/// 3-7-1 is a multiple of ten (`215` otherwise).
pub fn check_aba(routing: &str) -> Result<(), ApiError> {
    let d: Vec<u32> = routing.chars().filter_map(|c| c.to_digit(10)).collect();
    if d.len() != 9 || routing.len() != 9 {
        return Err(ApiError::coded("207", "Routing number must be a nine-digit ABA number"));
    }
    let sum: u32 = d.iter().zip([3, 7, 1].iter().cycle()).map(|(a, w)| a * w).sum();
    if !sum.is_multiple_of(10) {
        return Err(ApiError::coded("215", "Routing number is not a valid ABA number"));
    }
    Ok(())
}

/// A fund-move amount: a plain decimal with at most two places, above zero (`732`
/// otherwise; part 3: no scientific notation).
pub fn fund_amount(v: &str) -> Result<Decimal, ApiError> {
    let t = v.trim();
    let (int, frac) = t.split_once('.').unwrap_or((t, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    let bad = || ApiError::coded("732", "Amount is not in a valid format");
    if int.is_empty() || !digits(int) || !digits(frac) || frac.len() > 2 || (t.contains('.') && frac.is_empty()) {
        return Err(bad());
    }
    let amount: Decimal = t.parse().map_err(|_| bad())?;
    if amount <= Decimal::ZERO {
        return Err(bad());
    }
    Ok(amount.round_dp(2))
}

/// An amount as the fund-move reads show it: two places.
pub fn money(d: Decimal) -> String {
    let mut d = d.round_dp(2);
    d.rescale(2);
    d.to_string()
}

/// `fundStatus` of an ACH fund move (part 3's state table).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum FundStatus {
    Pending,
    Submitted,
    Settled,
    Returned,
    Voided,
    Declined,
}

impl FundStatus {
    pub fn name(self) -> &'static str {
        match self {
            FundStatus::Pending => "Pending",
            FundStatus::Submitted => "Submitted",
            FundStatus::Settled => "Settled",
            FundStatus::Returned => "Returned",
            FundStatus::Voided => "Voided",
            FundStatus::Declined => "Declined",
        }
    }

    /// Whether the trade counts as funded or being funded: a new move is refused (`150`
    /// while `Pending`, `210` once `Submitted` or `Settled`).
    pub fn holds_trade(self) -> bool {
        matches!(self, FundStatus::Pending | FundStatus::Submitted | FundStatus::Settled)
    }

    /// Whether the transfer is still under way (`Pending`, or `Submitted` to the bank): part 2's
    /// "pending ACH transfer", which keeps the trade from being deleted or cancelled.
    pub fn in_flight(self) -> bool {
        matches!(self, FundStatus::Pending | FundStatus::Submitted)
    }
}

/// `150`: the trade's settled money is still on its way back (its refund is `Pending` or
/// `Submitted`): paying again now, or calling the trade funded, would take the money twice.
pub fn refund_under_way() -> ApiError {
    ApiError::coded(
        "150",
        "The trade's refund is still under way; pay again once it is through.",
    )
}

/// `150` or `210`: the trade already has a fund move in `status`.
pub fn already_funding(status: FundStatus) -> ApiError {
    match status {
        FundStatus::Pending => crate::model::trade::ach_pending(),
        _ => ApiError::coded("210", "ACH request already sent this trade."),
    }
}

/// An ACH fund move (a debit for a trade, or a refund credited back).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FundMove {
    pub ref_num: String,
    pub account_id: String,
    pub trade_id: String,
    pub offering_id: String,
    /// `debit`, `refund` (CONTRACT, "Refunds"), `card` or `custody`.
    pub kind: String,
    pub amount: Decimal,
    pub fund_status: FundStatus,
    /// `Pending` or `Approved`: `Approved` once submitted, or when the client approves a
    /// `Pending` move (updateExternalFundMoveApprovedStatus).
    pub transaction_status: String,
    /// The return or decline reason (`R01 - Insufficient funds`); empty otherwise.
    pub errors: String,
    pub description: String,
    pub bank_name: String,
    pub account_fullname: String,
    pub account_number: String,
    pub routing_number: String,
    pub created_date: String,
    pub updated_date: String,
    pub created_ip: String,
    /// The card processor's side of a card move (`kind` `card`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub card: Option<CardCharge>,
    /// The escrow account of the trade's offering when the move was made (empty: none); the
    /// move's ledger entry lives under it.
    #[serde(default)]
    pub escrow_account: String,
    /// A custody move from an external account with a sandbox test nickname (its
    /// `approvalStatus` is `TEST ENTRY`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub test_entry: bool,
    /// A refund's debit (its `RefNum`): the payment that holds the trade again when the
    /// refund does not reach the investor.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub refund_of: String,
}

/// One fund move in its escrow account's ledger (CONTRACT, "The escrow ledger"): written in
/// the transaction of the move and of each status change after it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LedgerEntry {
    pub escrow_account_number: String,
    pub ref_num: String,
    /// `debit`, `card` or `refund`.
    pub kind: String,
    /// US cents; a refund is negative.
    pub amount_cents: i64,
    pub fund_status: FundStatus,
    pub account_id: String,
    pub trade_id: String,
    pub offering_id: String,
    pub created_date: String,
    pub updated_date: String,
}

/// An amount in whole cents (amounts have two places at most).
pub fn cents(amount: Decimal) -> i64 {
    // Checked: an amount too large for cents (far above every limit) saturates, never panics.
    amount
        .round_dp(2)
        .checked_mul(Decimal::ONE_HUNDRED)
        .and_then(|c| c.to_i64())
        .unwrap_or(i64::MAX)
}

/// What the card processor says of a card move.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CardCharge {
    /// The reference answered at creation (`ccreferencenumber`).
    pub cc_reference: String,
    /// The processor's token of the card charged.
    pub token: String,
    pub processor_transaction_id: String,
    pub processor_transaction_message: String,
    pub processor_token_message: String,
}

/// A card linked to an account: the processor's token and what may be shown, never the
/// full number.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LinkedCard {
    pub account_id: String,
    /// `VI`, `MC`, `DI` or `AX` (the incumbent's card types).
    pub brand: String,
    pub last4: String,
    /// `MM/YY`.
    pub expiry: String,
    pub token: String,
    pub created_date: String,
    pub updated_date: String,
}

/// getLinkedCreditCard's record (designed: the retired getCreditCard's fields without the
/// number in clear or the CVV).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LinkedCardView<'a> {
    pub account_id: &'a str,
    #[serde(rename = "cardType")]
    pub brand: &'a str,
    #[serde(rename = "creditCardNumber")]
    pub number: String,
    /// `MMYY`, as the retired addCreditCard took it.
    #[serde(rename = "expirationDate")]
    pub expiry: String,
    pub created_date: &'a str,
    pub updated_date: &'a str,
}

impl LinkedCard {
    pub fn view(&self) -> LinkedCardView<'_> {
        LinkedCardView {
            account_id: &self.account_id,
            brand: &self.brand,
            number: format!("XXXXXXXXXXXX{}", self.last4),
            expiry: self.expiry.replace('/', ""),
            created_date: &self.created_date,
            updated_date: &self.updated_date,
        }
    }
}

/// ccFundMove's and ccFundMovement's `transactionDetails` element (part 3).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CardCreated<'a> {
    #[serde(flatten)]
    pub head: MoveHead<'a>,
    pub total_amount: String,
    pub ccreferencenumber: &'a str,
    pub fund_status: &'static str,
    pub transactionstatus: &'a str,
}

/// A card transaction as getCCFundMoveHistory and getCCFundMoveInfo list it: part 3's
/// fields, the processor's under part 3's neutral names and again under the names the
/// incumbent's clients read (`vantiv*`, OBSERVED-MORE), as part 3 calls its own names neutral.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CardMoveView<'a> {
    #[serde(flatten)]
    pub head: MoveHead<'a>,
    pub total_amount: String,
    pub ccreferencenumber: &'a str,
    #[serde(rename = "RefNum")]
    pub ref_num: &'a str,
    pub fund_status: &'static str,
    pub transactionstatus: &'a str,
    pub errors: &'a str,
    pub created_date: &'a str,
    pub processor_transaction_id: &'a str,
    pub processor_transaction_message: &'a str,
    pub processor_token_message: &'a str,
    pub vantiv_transaction_id: &'a str,
    pub vantiv_transaction_message: &'a str,
    pub vantiv_token_message: &'a str,
}

/// An investor's bank or card link in progress (linkExternalAccount,
/// updateLinkExternalAccount, linkCreditCard), until the operator completes it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LinkSession {
    pub account_id: String,
    pub id: String,
    pub created_date: String,
    pub ip_address: String,
}

/// The fields every fund-move record starts with.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MoveHead<'a> {
    pub account_id: &'a str,
    pub trade_id: &'a str,
    pub offering_id: &'a str,
}

/// externalFundMove's `TradeFinancialDetails` element.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FundMoveCreated<'a> {
    #[serde(flatten)]
    pub head: MoveHead<'a>,
    pub total_amount: String,
    #[serde(rename = "RefNum")]
    pub ref_num: &'a str,
    pub fund_status: &'static str,
    pub transactionstatus: &'a str,
    pub notes: &'a str,
}

/// A fund move as the reads list it (getExternalFundMove, getExternalFundMoveHistory,
/// getAchPendingId): OBSERVED's fields.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FundMoveView<'a> {
    #[serde(flatten)]
    pub head: MoveHead<'a>,
    #[serde(rename = "Bankname")]
    pub bank_name: &'a str,
    pub total_amount: String,
    #[serde(rename = "Accountnumber")]
    pub account_number: String,
    #[serde(rename = "Routingnumber")]
    pub routing_number: String,
    /// `None` in getAchPendingId's records (part 3's pending-list fields), as are `errors`
    /// and `type`.
    #[serde(rename = "RefNum", skip_serializing_if = "Option::is_none")]
    pub ref_num: Option<&'a str>,
    #[serde(rename = "Accountfullname")]
    pub account_fullname: &'a str,
    pub transactionstatus: &'a str,
    pub routing_number_status: &'static str,
    pub fund_status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub errors: Option<&'a str>,
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<&'a str>,
    pub created_date: &'a str,
}

/// The `updateExternalFundMoveStatus` webhook (part 1's payload).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FundMoveStatusEvent<'a> {
    pub account_id: &'a str,
    pub trade_id: &'a str,
    pub transactionstatus: &'a str,
    pub fund_status: &'static str,
    #[serde(rename = "RefNum")]
    pub ref_num: &'a str,
    pub errors: &'a str,
}

/// The `externalFundMove` webhook (part 1: `tradeId`, `RefNum`).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FundMoveEvent<'a> {
    pub trade_id: &'a str,
    #[serde(rename = "RefNum")]
    pub ref_num: &'a str,
}

impl FundMove {
    fn head(&self) -> MoveHead<'_> {
        MoveHead {
            account_id: &self.account_id,
            trade_id: &self.trade_id,
            offering_id: &self.offering_id,
        }
    }

    pub fn created_view(&self) -> FundMoveCreated<'_> {
        FundMoveCreated {
            head: self.head(),
            total_amount: money(self.amount),
            ref_num: &self.ref_num,
            fund_status: self.fund_status.name(),
            transactionstatus: &self.transaction_status,
            notes: &self.description,
        }
    }

    pub fn view(&self) -> FundMoveView<'_> {
        FundMoveView {
            head: self.head(),
            bank_name: &self.bank_name,
            total_amount: money(self.amount),
            account_number: b64(&self.account_number),
            routing_number: b64(&self.routing_number),
            ref_num: Some(&self.ref_num),
            account_fullname: &self.account_fullname,
            transactionstatus: &self.transaction_status,
            routing_number_status: "Verified",
            fund_status: self.fund_status.name(),
            errors: Some(&self.errors),
            kind: Some(&self.kind),
            created_date: &self.created_date,
        }
    }

    /// The move in `status`: `transactionstatus` becomes `Approved` once it leaves `Pending`.
    pub fn moved(&self, status: FundStatus, errors: &str, now: &str) -> FundMove {
        let mut after = self.clone();
        after.fund_status = status;
        if status != FundStatus::Pending && status != FundStatus::Voided {
            after.transaction_status = "Approved".into();
        }
        after.errors = errors.to_owned();
        after.updated_date = now.to_owned();
        after
    }

    /// Whether the move pays for its trade (an ACH debit or a card charge; a refund moves
    /// money back and never funds).
    pub fn pays_for_trade(&self) -> bool {
        self.kind == "debit" || self.is_card()
    }

    /// The move's entry in its escrow account's ledger, if the offering has one.
    pub fn ledger_entry(&self) -> Option<LedgerEntry> {
        if self.escrow_account.is_empty() {
            return None;
        }
        let sign = if self.is_refund() { -1 } else { 1 };
        Some(LedgerEntry {
            escrow_account_number: self.escrow_account.clone(),
            ref_num: self.ref_num.clone(),
            kind: self.kind.clone(),
            amount_cents: sign * cents(self.amount),
            fund_status: self.fund_status,
            account_id: self.account_id.clone(),
            trade_id: self.trade_id.clone(),
            offering_id: self.offering_id.clone(),
            created_date: self.created_date.clone(),
            updated_date: self.updated_date.clone(),
        })
    }

    /// Whether the move credits money back (CONTRACT, "Refunds").
    pub fn is_refund(&self) -> bool {
        self.kind == "refund"
    }

    /// Whether the move charges a card (ccFundMove, ccFundMovement).
    pub fn is_card(&self) -> bool {
        self.kind == "card"
    }

    /// Whether the move funds a custody account (createCustodyFundMove): it belongs to no
    /// trade and never enters an escrow ledger.
    pub fn is_custody(&self) -> bool {
        self.kind == CUSTODY_KIND
    }

    pub fn card_created_view(&self) -> CardCreated<'_> {
        CardCreated {
            head: self.head(),
            total_amount: money(self.amount),
            ccreferencenumber: self.card.as_ref().map_or("", |c| c.cc_reference.as_str()),
            fund_status: self.fund_status.name(),
            transactionstatus: &self.transaction_status,
        }
    }

    pub fn card_view(&self) -> CardMoveView<'_> {
        let card = self.card.as_ref();
        let field = |f: fn(&CardCharge) -> &str| card.map_or("", f);
        CardMoveView {
            head: self.head(),
            total_amount: money(self.amount),
            ccreferencenumber: field(|c| &c.cc_reference),
            ref_num: &self.ref_num,
            fund_status: self.fund_status.name(),
            transactionstatus: &self.transaction_status,
            errors: &self.errors,
            created_date: &self.created_date,
            processor_transaction_id: field(|c| &c.processor_transaction_id),
            processor_transaction_message: field(|c| &c.processor_transaction_message),
            processor_token_message: field(|c| &c.processor_token_message),
            vantiv_transaction_id: field(|c| &c.processor_transaction_id),
            vantiv_transaction_message: field(|c| &c.processor_transaction_message),
            vantiv_token_message: field(|c| &c.processor_token_message),
        }
    }

    /// The refund of this settled debit: a credit of the same amount to `to`, the
    /// investor's external account (CONTRACT, "Refunds"), `Pending` until the batch; with no
    /// external account it waits `Pending` with [`NO_EXTERNAL_ACCOUNT`].
    pub fn refund(&self, ref_num: String, to: Option<&ExternalAccount>, now: &str) -> FundMove {
        let mut r = FundMove {
            ref_num,
            kind: "refund".into(),
            card: None,
            fund_status: FundStatus::Pending,
            transaction_status: "Pending".into(),
            errors: String::new(),
            description: format!("Refund of {}", self.ref_num),
            refund_of: self.ref_num.clone(),
            created_date: now.to_owned(),
            updated_date: now.to_owned(),
            ..self.clone()
        };
        r.pay_to(to);
        r
    }

    /// Takes the bank details of `to`, or marks the move as waiting for an account.
    pub fn pay_to(&mut self, to: Option<&ExternalAccount>) {
        match to {
            Some(e) => {
                self.bank_name.clone_from(&e.bank_name);
                self.account_fullname.clone_from(&e.full_name);
                self.account_number.clone_from(&e.account_number);
                self.routing_number.clone_from(&e.routing_number);
                self.errors.clear();
            }
            None => {
                self.bank_name.clear();
                self.account_fullname.clear();
                self.account_number.clear();
                self.routing_number.clear();
                self.errors = NO_EXTERNAL_ACCOUNT.into();
            }
        }
    }

    /// getAchPendingId's record (part 3, "ACH fund move": the pending-list fields), with
    /// `type`: CONTRACT lists a refund by it in every fund-move read.
    pub fn pending_view(&self) -> FundMoveView<'_> {
        FundMoveView {
            ref_num: None,
            errors: None,
            ..self.view()
        }
    }

    pub fn status_event(&self) -> FundMoveStatusEvent<'_> {
        FundMoveStatusEvent {
            account_id: &self.account_id,
            trade_id: &self.trade_id,
            transactionstatus: &self.transaction_status,
            fund_status: self.fund_status.name(),
            ref_num: &self.ref_num,
            errors: &self.errors,
        }
    }
}

/// The `kind` of a custody fund move.
pub const CUSTODY_KIND: &str = "custody";

/// The webhook of every fund-move status change after creation (part 1's payload).
pub const STATUS_METHOD: &str = "updateExternalFundMoveStatus";

/// The error a refund waits with while the investor has no external account (CONTRACT).
pub const NO_EXTERNAL_ACCOUNT: &str = "no external account";

/// The sandbox nicknames of part 3 that settle or return a fund move inside the call.
pub const SANDBOX_SETTLED: &str = "Test ACH Settled";
pub const SANDBOX_R01: &str = "Test ACH R01";
pub const R01: &str = "R01 - Insufficient funds";

/// A client's payment settings (CONTRACT: sandbox providers, 100,000.00 ACH, 5,000.00
/// card, 100,000.00 custody risk limit until the operator changes them).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PaymentSettings {
    pub ach_provider: Option<String>,
    pub card_provider: Option<String>,
    pub max_single_ach: Decimal,
    pub card_limit: Decimal,
    pub custody_risk_limit: Decimal,
}

impl Default for PaymentSettings {
    fn default() -> Self {
        PaymentSettings {
            ach_provider: Some("sandbox".into()),
            card_provider: Some("sandbox".into()),
            max_single_ach: Decimal::new(10_000_000, 2),
            card_limit: Decimal::new(500_000, 2),
            custody_risk_limit: Decimal::new(10_000_000, 2),
        }
    }
}

/// `149`: the account (or issuer) has no usable external account on file.
pub fn no_external_account() -> ApiError {
    ApiError::coded("149", "No external account on file")
}

/// `773`: the operator blocked the account for ACH.
pub fn ach_blocked() -> ApiError {
    ApiError::coded("773", "Account is blocked for ACH")
}

/// `211`: no payment provider of the kind is configured for the client.
pub fn no_provider() -> ApiError {
    ApiError::coded("211", "No supported payment provider is configured for this client")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aba_numbers() {
        assert!(check_aba("021000021").is_ok());
        assert!(check_aba("011000015").is_ok());
        assert_eq!(check_aba("021000022").unwrap_err().code(), "215");
        assert_eq!(check_aba("02100002").unwrap_err().code(), "207");
        assert_eq!(check_aba("0210000210").unwrap_err().code(), "207");
    }

    #[test]
    fn cents_saturate_instead_of_overflowing() {
        assert_eq!(cents(Decimal::new(5010, 2)), 5010);
        assert_eq!(
            cents(Decimal::from_str_exact("1000000000000000000000000000").unwrap()),
            i64::MAX
        );
    }

    #[test]
    fn amounts() {
        assert_eq!(fund_amount("10").unwrap(), Decimal::new(10, 0));
        assert_eq!(money(fund_amount("10.5").unwrap()), "10.50");
        assert_eq!(money(fund_amount(" 0.01 ").unwrap()), "0.01");
        for bad in ["1e3", "1.234", "-5", "0", "0.00", "", "1.", ".5", "1,000", "abc", "NaN"] {
            assert_eq!(fund_amount(bad).unwrap_err().code(), "732", "{bad}");
        }
    }

    #[test]
    fn nicknames_and_digits() {
        for ok in ["Test ACH Settled", "My_acct-1/2", "Café"] {
            assert!(check_nickname(ok).is_ok(), "{ok}");
        }
        for bad in ["a.b", "a`b", "a,b", "Łódź", "a'b"] {
            assert!(check_nickname(bad).is_err(), "{bad}");
        }
        assert_eq!(digits("n", " 000123 ").unwrap(), "000123");
        assert!(digits("n", "12a").is_err());
        assert_eq!(b64("000123"), "MDAwMTIz");
    }
}
