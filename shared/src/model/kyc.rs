//! KYC/AML records: the latest provider response of each check type and the open question
//! set of a party or entity (one record per party, keyed by its ID), the once-per-party
//! manual requests (requestKycAml), and billing entries of billed checks in production.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::ids::IdKind;
use crate::providers::kyc::Question;

/// Numbers handed to the provider as references (its sandbox uses them as report IDs).
pub const REPORT: IdKind = IdKind::numeric("kycreport", 3_000_000_000);

/// requestKycAml request IDs.
pub const REQUEST: IdKind = IdKind::numeric("kycrequest", 500_000);

/// Seconds the answers to the follow-up questions may take (part 1, Limits).
pub const ANSWER_WINDOW_SECS: i64 = 600;

/// The check types of getKycAmlResponse.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CheckType {
    /// performKycAmlBasic.
    Basic,
    /// performKycAml.
    Enhanced,
    /// performAml.
    AmlOnly,
}

impl CheckType {
    /// The `type` parameter value (`Basic`, `Enhanced`, `AML Only`; any case).
    pub fn parse(s: &str) -> Option<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "basic" => Some(CheckType::Basic),
            "enhanced" => Some(CheckType::Enhanced),
            "aml only" => Some(CheckType::AmlOnly),
            _ => None,
        }
    }
}

/// One stored provider response.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct CheckResponse {
    /// When the check ran (`YYYY-MM-DD HH:MM:SS`).
    pub created_at: String,
    /// The provider's report ID (`id-number`).
    pub report_id: String,
    /// The response body as the check answered it (without the envelope).
    pub response: Value,
}

/// An open set of follow-up questions.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Session {
    #[serde(rename = "idNumber")]
    pub id_number: String,
    /// Unix milliseconds after which the answers are refused.
    pub expires: i64,
    pub questions: Vec<Question>,
}

/// The KYC/AML state of one party or entity.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct KycRecord {
    #[serde(rename = "partyId")]
    pub id: String,
    pub basic: Option<CheckResponse>,
    pub enhanced: Option<CheckResponse>,
    pub aml: Option<CheckResponse>,
    pub session: Option<Session>,
    pub deleted: bool,
    #[serde(rename = "createdDate")]
    pub created: String,
    #[serde(rename = "updatedDate")]
    pub updated: String,
}

crate::records::record!(KycRecord, "KYC", id);

impl KycRecord {
    pub fn slot(&self, t: CheckType) -> Option<&CheckResponse> {
        match t {
            CheckType::Basic => self.basic.as_ref(),
            CheckType::Enhanced => self.enhanced.as_ref(),
            CheckType::AmlOnly => self.aml.as_ref(),
        }
    }

    pub fn set(&mut self, t: CheckType, r: CheckResponse) {
        match t {
            CheckType::Basic => self.basic = Some(r),
            CheckType::Enhanced => self.enhanced = Some(r),
            CheckType::AmlOnly => self.aml = Some(r),
        }
    }
}

/// A manual KYC/AML request (requestKycAml), keyed by the investor ID: one per investor.
/// The review fills it in: updateKycAmlRequest moves `requestStatus`, updateKycAmlStatus
/// (or the operator's review) records the decided `kycStatus`/`amlStatus`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct KycRequest {
    #[serde(rename = "investorId")]
    pub id: String,
    pub request_id: String,
    /// `Pending` when made; then as sent to updateKycAmlRequest (no fixed list).
    pub request_status: String,
    /// The reviewer's decision, as sent; empty until one is made.
    pub kyc_status: String,
    pub aml_status: String,
    pub notes: String,
    pub deleted: bool,
    #[serde(rename = "createdDate")]
    pub created: String,
    #[serde(rename = "updatedDate")]
    pub updated: String,
}

impl KycRequest {
    /// The record the review operations answer and their webhooks carry (every stored
    /// field but `deleted`, in this order).
    pub fn details(&self) -> serde_json::Map<String, Value> {
        super::fields_without(self, &["deleted"])
    }
}

crate::records::record!(KycRequest, "KYCREQUEST", id);

/// A billing entry of a billed operation, written only in production.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct BillingEntry {
    /// A unique key: `<createdDate>#<unique>`.
    pub id: String,
    pub operation: String,
    /// The party, entity or account the call was about.
    #[serde(rename = "subjectId")]
    pub subject_id: String,
    /// The provider report ID or request ID.
    pub reference: String,
    pub deleted: bool,
    #[serde(rename = "createdDate")]
    pub created: String,
}

crate::records::record!(BillingEntry, "BILLING", id);

/// performKycAml's and performKycAmlBasic's answer, also stored as the check's response.
#[derive(Serialize)]
#[serde(untagged)]
pub enum CheckOutcome<'a> {
    /// An individual: `kyc` holds the provider's raw result under `response`, then the
    /// statuses (part 2; CONTRACT, "What clients written for the incumbent rely on").
    Individual { kyc: KycOutcome<'a> },
    /// An entity: its `AML SCORE` (`{"OFAC": score}` or `0`), then the statuses.
    Entity {
        #[serde(rename = "AML SCORE")]
        aml_score: Value,
        #[serde(flatten)]
        statuses: CheckStatuses<'a>,
    },
}

/// An individual's `kyc`.
#[derive(Serialize)]
pub struct KycOutcome<'a> {
    pub response: Value,
    #[serde(flatten)]
    pub statuses: CheckStatuses<'a>,
}

/// The statuses a check decides.
#[derive(Serialize)]
pub struct CheckStatuses<'a> {
    pub kycstatus: &'a str,
    pub amlstatus: &'a str,
}

/// The performKycAml and performKycAmlBasic webhook.
#[derive(Serialize)]
pub struct CheckEvent<'a> {
    #[serde(rename = "partyId")]
    pub party_id: &'a str,
    pub kycstatus: &'a str,
    pub amlstatus: &'a str,
}

/// performAml's `partyDetails`: the raw watch-list result and the status it decides.
#[derive(Serialize)]
pub struct AmlDetails<'a> {
    pub response: Value,
    #[serde(rename = "amlStatus")]
    pub aml_status: &'a str,
}

/// updateKycAml's record and webhook once the answers pass.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct KycPassed<'a> {
    pub party_id: &'a str,
    pub kyc_status: &'a str,
}

/// getKycAml's `Party Status`.
#[derive(Serialize)]
pub struct PartyStatus<'a> {
    #[serde(rename = "PartyID")]
    pub party_id: &'a str,
    #[serde(rename = "AML status")]
    pub aml_status: &'a str,
    #[serde(rename = "AML date")]
    pub aml_date: &'a str,
}

/// requestKycAml's record.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RequestRef<'a> {
    pub investor_id: &'a str,
    pub request_id: &'a str,
}
