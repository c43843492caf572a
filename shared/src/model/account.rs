//! Accounts: the form of ownership trades are placed against (`A…`).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::auth::PiiLevel;
use crate::records::Record;

/// An account, stored with the field names of part 2's Account resource.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Account {
    #[serde(rename = "accountId")]
    pub id: String,
    #[serde(rename = "accountName")]
    pub account_name: String,
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(rename = "entityType")]
    pub entity_type: String,
    #[serde(rename = "residentType")]
    pub resident_type: String,
    #[serde(rename = "socialSecurityNumber")]
    pub ssn: String,
    #[serde(rename = "dateOfBirth")]
    pub dob: String,
    pub address1: String,
    pub address2: String,
    pub city: String,
    pub state: String,
    pub zip: String,
    pub country: String,
    pub email: String,
    pub phone: String,
    #[serde(rename = "taxID")]
    pub tax_id: String,
    #[serde(rename = "kycStatus")]
    pub kyc_status: String,
    #[serde(rename = "kycDate")]
    pub kyc_date: String,
    #[serde(rename = "amlStatus")]
    pub aml_status: String,
    #[serde(rename = "amlDate")]
    pub aml_date: String,
    #[serde(rename = "suitabilityScore")]
    pub suitability_score: String,
    #[serde(rename = "suitabilityDate")]
    pub suitability_date: String,
    #[serde(rename = "suitabilityApprover")]
    pub suitability_approver: String,
    #[serde(rename = "accreditedStatus")]
    pub accredited_status: String,
    #[serde(rename = "accreditedInvestor")]
    pub accredited_investor: String,
    #[serde(rename = "accreditedInvestorDate")]
    pub accredited_investor_date: String,
    #[serde(rename = "506cLimit")]
    pub limit_506c: String,
    #[serde(rename = "accountTotalLimit")]
    pub account_total_limit: String,
    #[serde(rename = "singleInvestmentLimit")]
    pub single_investment_limit: String,
    #[serde(rename = "associatedAC")]
    pub associated_ac: String,
    pub syndicate: String,
    pub tags: String,
    pub notes: String,
    #[serde(rename = "approvalStatus")]
    pub approval_status: String,
    #[serde(rename = "approvalPrincipal")]
    pub approval_principal: String,
    #[serde(rename = "approvalLastReview")]
    pub approval_last_review: String,
    pub field1: String,
    pub field2: String,
    pub field3: String,
    pub archived: bool,
    pub deleted: bool,
    #[serde(rename = "createdIpAddress")]
    pub created_ip: String,
    #[serde(rename = "updatedIpAddress")]
    pub updated_ip: String,
    #[serde(rename = "createdDate")]
    pub created: String,
    #[serde(rename = "updatedDate")]
    pub updated: String,
}

impl Record for Account {
    const KIND: &'static str = "ACCOUNT";
    fn id(&self) -> &str {
        &self.id
    }
    fn created(&self) -> &str {
        &self.created
    }
    fn deleted(&self) -> bool {
        self.deleted
    }
}

/// Fields `account.read.pii_medium` / `pii_low` see in clear (CONTRACT: the base fields).
const ACCOUNT_BASE: &[&str] = &[
    "accountId",
    "accountName",
    "type",
    "entityType",
    "residentType",
    "kycStatus",
    "amlStatus",
    "accreditedStatus",
    "approvalStatus",
    "accountstatus",
    "kycDate",
    "amlDate",
    "suitabilityDate",
    "accreditedInvestorDate",
    "approvalLastReview",
    "createdDate",
    "updatedDate",
    "506cLimit",
    "accountTotalLimit",
    "singleInvestmentLimit",
];

/// Fields a PATCH may name but not change (silently ignored).
pub const READ_ONLY: &[&str] = &[
    "accountId",
    "createdDate",
    "updatedDate",
    "accountstatus",
    "accreditedStatus",
    "accreditedInvestor",
    "accreditedInvestorDate",
];

impl Account {
    /// The record of `GET /v3/accounts` at a PII level.
    pub fn view(&self, pii: PiiLevel) -> Map<String, Value> {
        let mut m = super::public_fields(
            self,
            &["archived", "deleted", "createdIpAddress", "updatedIpAddress"],
            "accountstatus",
            self.archived,
        );
        super::party::redact(&mut m, &["socialSecurityNumber", "dateOfBirth"], ACCOUNT_BASE, pii);
        m
    }
}
