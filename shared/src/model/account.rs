//! Accounts: the form of ownership trades are placed against (`A…`).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::shown::{Mask, Shown};
use crate::auth::PiiLevel;

/// An account, stored with the field names of part 2's Account resource.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Account {
    #[serde(rename = "accountId")]
    pub id: String,
    pub account_name: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub entity_type: String,
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
    pub kyc_status: String,
    pub kyc_date: String,
    pub aml_status: String,
    pub aml_date: String,
    pub suitability_score: String,
    pub suitability_date: String,
    pub suitability_approver: String,
    pub accredited_status: String,
    pub accredited_investor: String,
    pub accredited_investor_date: String,
    #[serde(rename = "506cLimit")]
    pub limit_506c: String,
    pub account_total_limit: String,
    pub single_investment_limit: String,
    #[serde(rename = "associatedAC")]
    pub associated_ac: String,
    pub syndicate: String,
    pub tags: String,
    pub notes: String,
    pub approval_status: String,
    pub approval_principal: String,
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

crate::records::record!(Account, "ACCOUNT", id);

impl Account {
    /// This row with the fields stored under any of `names` (the record's names; others are
    /// passed over) taken from `before`.
    pub fn keeping(self, before: &Account, names: &[String]) -> Account {
        let (Ok(Value::Object(mut row)), Ok(Value::Object(old))) =
            (serde_json::to_value(&self), serde_json::to_value(before))
        else {
            return self;
        };
        for name in names {
            if let Some(v) = old.get(name) {
                row.insert(name.clone(), v.clone());
            }
        }
        serde_json::from_value(Value::Object(row)).unwrap_or(self)
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

/// Fields a PATCH may name but not change (silently ignored). `syndicate` is the service's
/// (part 2: literal `syndicate` when enabled for the key, else empty), as in updateAccount.
pub const READ_ONLY: &[&str] = &[
    "accountId",
    "syndicate",
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
        super::object(&self.shown(pii))
    }

    /// [`Account::view`] serialized straight from the record (list pages).
    pub fn shown(&self, pii: PiiLevel) -> Shown<'_, Self> {
        Shown {
            rec: self,
            hide: &["archived", "deleted", "createdIpAddress", "updatedIpAddress"],
            status: Some(("accountstatus", self.archived)),
            mask: Some(Mask {
                always: &["socialSecurityNumber", "dateOfBirth"],
                base: ACCOUNT_BASE,
                pii,
            }),
        }
    }
}

/// The account fields of the createAccount and updateAccount webhooks, in part 1's order
/// (between the fields that lead and end each).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AccountFields<'a> {
    account_name: &'a str,
    #[serde(rename = "type")]
    kind: &'a str,
    entity_type: &'a str,
    resident_type: &'a str,
    #[serde(rename = "socialSecurityNumber")]
    ssn: &'a str,
    #[serde(rename = "dateOfBirth")]
    dob: &'a str,
    address1: &'a str,
    address2: &'a str,
    city: &'a str,
    state: &'a str,
    zip: &'a str,
    country: &'a str,
    email: &'a str,
    phone: &'a str,
    #[serde(rename = "taxID")]
    tax_id: &'a str,
    kyc_status: &'a str,
    aml_status: &'a str,
    aml_date: &'a str,
    suitability_score: &'a str,
    suitability_date: &'a str,
    suitability_approver: &'a str,
    accredited_status: &'a str,
    accredited_investor: &'a str,
    accredited_investor_date: &'a str,
    #[serde(rename = "506cLimit")]
    limit_506c: &'a str,
    account_total_limit: &'a str,
    single_investment_limit: &'a str,
    #[serde(rename = "associatedAC")]
    associated_ac: &'a str,
    syndicate: &'a str,
    tags: &'a str,
    notes: &'a str,
    approval_status: &'a str,
    approval_principal: &'a str,
    approval_last_review: &'a str,
    /// Deleted, as webhook text `1`/`0`.
    virtual_status: bool,
    field1: &'a str,
    field2: &'a str,
    field3: &'a str,
}

impl<'a> AccountFields<'a> {
    /// The account's fields with the SSN and date of birth as the webhook carries them.
    fn of(a: &'a Account, ssn: &'a str, dob: &'a str) -> Self {
        AccountFields {
            account_name: &a.account_name,
            kind: &a.kind,
            entity_type: &a.entity_type,
            resident_type: &a.resident_type,
            ssn,
            dob,
            address1: &a.address1,
            address2: &a.address2,
            city: &a.city,
            state: &a.state,
            zip: &a.zip,
            country: &a.country,
            email: &a.email,
            phone: &a.phone,
            tax_id: &a.tax_id,
            kyc_status: &a.kyc_status,
            aml_status: &a.aml_status,
            aml_date: &a.aml_date,
            suitability_score: &a.suitability_score,
            suitability_date: &a.suitability_date,
            suitability_approver: &a.suitability_approver,
            accredited_status: &a.accredited_status,
            accredited_investor: &a.accredited_investor,
            accredited_investor_date: &a.accredited_investor_date,
            limit_506c: &a.limit_506c,
            account_total_limit: &a.account_total_limit,
            single_investment_limit: &a.single_investment_limit,
            associated_ac: &a.associated_ac,
            syndicate: &a.syndicate,
            tags: &a.tags,
            notes: &a.notes,
            approval_status: &a.approval_status,
            approval_principal: &a.approval_principal,
            approval_last_review: &a.approval_last_review,
            virtual_status: a.deleted,
            field1: &a.field1,
            field2: &a.field2,
            field3: &a.field3,
        }
    }
}

/// The createAccount webhook: part 1's fields in order (no SSN or date of birth is set yet).
#[derive(Serialize)]
pub struct CreatedEvent<'a> {
    #[serde(rename = "accountId")]
    id: &'a str,
    providerid: &'a str,
    status: &'a str,
    #[serde(rename = "developerAPIKey")]
    developer_api_key: &'a str,
    #[serde(flatten)]
    fields: AccountFields<'a>,
    #[serde(rename = "createdIpAddress")]
    created_ip: &'a str,
    client_id: &'a str,
}

impl Account {
    pub fn created_event<'a>(&'a self, client_id: &'a str) -> CreatedEvent<'a> {
        CreatedEvent {
            id: &self.id,
            providerid: "",
            status: "Active",
            developer_api_key: crate::mask::MASK,
            fields: AccountFields::of(self, "", ""),
            created_ip: &self.created_ip,
            client_id,
        }
    }

    /// The updateAccount webhook.
    pub fn updated_event(&self) -> UpdatedEvent<'_> {
        UpdatedEvent {
            id: &self.id,
            fields: AccountFields::of(self, redacted(&self.ssn), redacted(&self.dob)),
            updated_ip: &self.updated_ip,
        }
    }

    /// createAccount's record.
    pub fn created_view(&self) -> CreatedView<'_> {
        CreatedView {
            id: &self.id,
            kyc_status: &self.kyc_status,
            aml_status: &self.aml_status,
            accredited_status: &self.accredited_status,
            approval_status: &self.approval_status,
        }
    }
}

/// A stored SSN or date of birth as webhooks carry it: `REDACTED` when set (part 1,
/// Conventions 8), empty otherwise.
fn redacted(v: &str) -> &'static str {
    if v.is_empty() {
        ""
    } else {
        crate::mask::REDACTED
    }
}

/// The updateAccount webhook: createAccount's fields without `providerid`, `status`,
/// `developerAPIKey`, `createdIpAddress` and `client_id`, with the stored SSN and date of
/// birth, then `updatedIpAddress`.
#[derive(Serialize)]
pub struct UpdatedEvent<'a> {
    #[serde(rename = "accountId")]
    id: &'a str,
    #[serde(flatten)]
    fields: AccountFields<'a>,
    #[serde(rename = "updatedIpAddress")]
    updated_ip: &'a str,
}

/// The record createAccount answers.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CreatedView<'a> {
    #[serde(rename = "accountId")]
    id: &'a str,
    kyc_status: &'a str,
    aml_status: &'a str,
    accredited_status: &'a str,
    approval_status: &'a str,
}

/// An account named by its ID alone (deleteAccount's, deleteSuitability's and the upload
/// webhooks).
#[derive(Serialize)]
pub struct AccountRef<'a> {
    #[serde(rename = "accountId")]
    pub id: &'a str,
}

/// updateAccountArchivestatus's record and webhook: `archiveStatus` `1` or `0`.
#[derive(Serialize)]
pub struct ArchiveView<'a> {
    #[serde(rename = "accountId")]
    pub id: &'a str,
    #[serde(rename = "archiveStatus")]
    pub archive_status: &'a str,
}
