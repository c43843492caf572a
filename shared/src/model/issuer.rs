//! Issuers, their financial account (createIssuerAccount) and the account's custodian records.
//! How they are stored: [`crate::records::issuer`].

use serde::{Deserialize, Serialize};

use crate::mask::b64;
use crate::model::Stamps;

pub use super::ids::no_issuer;

/// An issuer. `issuerStatus` is free text: `Pending` at creation, then whatever
/// `updateIssuer` supplies.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Issuer {
    #[serde(rename = "issuerId")]
    pub id: String,
    pub issuer_name: String,
    pub first_name: String,
    pub last_name: String,
    pub email: String,
    /// Digits, or `None` (a read answers `null`) when never given.
    pub phone_number: Option<String>,
    pub issuer_status: String,
    pub field1: String,
    pub deleted: bool,
    #[serde(flatten)]
    pub stamps: Stamps,
}

crate::records::record!(stamped Issuer, "ISSUER", id);

impl Issuer {
    /// The issuer record of getIssuer, getAllIssuers and `GET /v3/issuers` (part 2's fields).
    pub fn view(&self) -> IssuerView {
        IssuerView {
            issuer_id: self.id.clone(),
            issuer_name: self.issuer_name.clone(),
            first_name: self.first_name.clone(),
            last_name: self.last_name.clone(),
            email: self.email.clone(),
            phone_number: self.phone_number.clone(),
            issuer_status: self.issuer_status.clone(),
        }
    }

    /// The `GET /v3/issuers` record: [`Issuer::view`] plus `createdDate` and `updatedDate`,
    /// so that every sortable field is in the record.
    pub fn list_view(&self) -> IssuerListView {
        IssuerListView {
            view: self.view(),
            created_date: self.stamps.created.clone(),
            updated_date: self.stamps.updated.clone(),
        }
    }

    /// `{issuerId, issuerStatus}`: createIssuer's and updateIssuer's record and webhook.
    pub fn status_view(&self) -> IssuerStatusView {
        IssuerStatusView {
            issuer_id: self.id.clone(),
            issuer_status: self.issuer_status.clone(),
        }
    }
}

/// See [`Issuer::view`]; `phoneNumber` null when never given.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct IssuerView {
    pub issuer_id: String,
    pub issuer_name: String,
    pub first_name: String,
    pub last_name: String,
    pub email: String,
    pub phone_number: Option<String>,
    pub issuer_status: String,
}

/// See [`Issuer::list_view`].
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct IssuerListView {
    #[serde(flatten)]
    pub view: IssuerView,
    pub created_date: String,
    pub updated_date: String,
}

/// See [`Issuer::status_view`].
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct IssuerStatusView {
    pub issuer_id: String,
    pub issuer_status: String,
}

/// An issuer's financial account (createIssuerAccount): one per issuer, keyed by the
/// issuer's ID. SSN and date of birth are stored as sent; createIssuerAccount answers them
/// base64-encoded and getIssuerAccount decoded.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct IssuerAccount {
    #[serde(flatten)]
    pub details: IssuerAccountDetails,
    pub deleted: bool,
    #[serde(rename = "createdDate")]
    pub created: String,
    #[serde(rename = "createdIpAddress")]
    pub created_ip: String,
    #[serde(rename = "updatedDate")]
    pub updated: String,
}

/// A financial account's own fields, as stored and as getIssuerAccount answers them (its
/// `statusDesc`, part 2's fields in order, SSN and `dob` in clear).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct IssuerAccountDetails {
    pub issuer_id: String,
    #[serde(rename = "accountfirstName")]
    pub account_first_name: String,
    #[serde(rename = "accountlastName")]
    pub account_last_name: String,
    pub account_type: String,
    pub company_name: String,
    pub company_state: String,
    pub entity_type: String,
    #[serde(rename = "companyTaxID")]
    pub company_tax_id: String,
    pub account_middle_initial: String,
    #[serde(rename = "socialSecurityNumber")]
    pub ssn: String,
    pub dob: String,
    #[serde(rename = "residentUS")]
    pub resident_us: String,
    #[serde(rename = "citizenUS")]
    pub citizen_us: String,
    pub address_line1: String,
    pub address_line2: String,
    pub city: String,
    pub state: String,
    pub zip: String,
    pub country: String,
    pub issuing_country: String,
    pub additional_info: String,
    #[serde(rename = "issuerAccountStatus")]
    pub status: String,
}

crate::records::record!(IssuerAccount, "ISSUERACCOUNT", details.issuer_id);

/// The status of a financial account while it exists (the account is storage only: no review).
pub const ISSUER_ACCOUNT_ACTIVE: &str = "Active";

impl IssuerAccount {
    /// The createIssuerAccount record (part 2's fields in order): SSN and `dob` base64
    /// (empty stays empty); `issuerStatus` is the issuer's own status.
    pub fn created_view(&self, issuer_status: &str) -> IssuerAccountCreated {
        let enc = |v: &str| if v.is_empty() { String::new() } else { b64(v) };
        IssuerAccountCreated {
            issuer_id: self.details.issuer_id.clone(),
            company_name: self.details.company_name.clone(),
            company_state: self.details.company_state.clone(),
            company_tax_id: self.details.company_tax_id.clone(),
            entity_type: self.details.entity_type.clone(),
            issuing_country: self.details.issuing_country.clone(),
            account_type: self.details.account_type.clone(),
            account_middle_initial: self.details.account_middle_initial.clone(),
            pii: Pii {
                social_security_number: enc(&self.details.ssn),
                dob: enc(&self.details.dob),
            },
            resident_us: self.details.resident_us.clone(),
            citizen_us: self.details.citizen_us.clone(),
            address_line1: self.details.address_line1.clone(),
            address_line2: self.details.address_line2.clone(),
            city: self.details.city.clone(),
            zip: self.details.zip.clone(),
            country: self.details.country.clone(),
            additional_info: self.details.additional_info.clone(),
            issuer_status: issuer_status.to_owned(),
            created_date: self.created.clone(),
            created_ip_address: self.created_ip.clone(),
        }
    }
}

/// The SSN and date of birth of an account view, in the spec's order.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Pii {
    pub social_security_number: String,
    pub dob: String,
}

/// An SSN or date of birth as webhooks carry it: `REDACTED` when set (part 1, Conventions
/// 8), empty otherwise.
fn redact(v: &str) -> String {
    if v.is_empty() {
        String::new()
    } else {
        crate::mask::REDACTED.into()
    }
}

impl Pii {
    fn redacted(&self) -> Pii {
        Pii {
            social_security_number: redact(&self.social_security_number),
            dob: redact(&self.dob),
        }
    }
}

/// See [`IssuerAccount::created_view`].
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct IssuerAccountCreated {
    pub issuer_id: String,
    pub company_name: String,
    pub company_state: String,
    #[serde(rename = "companyTaxID")]
    pub company_tax_id: String,
    pub entity_type: String,
    pub issuing_country: String,
    pub account_type: String,
    pub account_middle_initial: String,
    #[serde(flatten)]
    pub pii: Pii,
    #[serde(rename = "residentUS")]
    pub resident_us: String,
    #[serde(rename = "citizenUS")]
    pub citizen_us: String,
    pub address_line1: String,
    pub address_line2: String,
    pub city: String,
    pub zip: String,
    pub country: String,
    pub additional_info: String,
    pub issuer_status: String,
    pub created_date: String,
    pub created_ip_address: String,
}

impl IssuerAccountCreated {
    /// The createIssuerAccount webhook: the record with SSN and `dob` redacted.
    pub fn redacted(&self) -> Self {
        let pii = self.pii.redacted();
        Self { pii, ..self.clone() }
    }
}

impl IssuerAccountDetails {
    /// The getIssuerAccount webhook: the object with SSN and `dob` redacted.
    pub fn redacted(&self) -> Self {
        Self {
            ssn: redact(&self.ssn),
            dob: redact(&self.dob),
            ..self.clone()
        }
    }
}

/// One custodian record of an issuer's financial account (getIssuerAccount's
/// `Financial issuer details`), identified by its custodian's numeric `providerid`.
///
/// The offerings group reads and deletes them; they are written by whoever connects the
/// issuer with a custodian (payments or custody), through [`crate::records::issuer::custodian_write`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CustodianRecord {
    pub providerid: String,
    #[serde(rename = "CustodianName")]
    pub custodian_name: String,
    #[serde(rename = "CustodianAccountNumber")]
    pub custodian_account_number: String,
    #[serde(rename = "RoutingNumber")]
    pub routing_number: String,
    #[serde(rename = "AccountNumber")]
    pub account_number: String,
    #[serde(rename = "AccountName")]
    pub account_name: String,
    /// Funds held, a decimal string.
    pub funds: String,
}

impl CustodianRecord {
    /// The getIssuerAccount record: bank numbers base64-encoded (part 1, Conventions 8).
    pub fn view(&self) -> CustodianView {
        CustodianView {
            providerid: self.providerid.clone(),
            custodian_name: self.custodian_name.clone(),
            custodian_account_number: b64(&self.custodian_account_number),
            routing_number: b64(&self.routing_number),
            account_number: b64(&self.account_number),
            account_name: self.account_name.clone(),
            funds: self.funds.clone(),
        }
    }
}

/// See [`CustodianRecord::view`].
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct CustodianView {
    #[serde(rename = "providerid")]
    pub providerid: String,
    pub custodian_name: String,
    pub custodian_account_number: String,
    pub routing_number: String,
    pub account_number: String,
    pub account_name: String,
    #[serde(rename = "funds")]
    pub funds: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn account_views_keep_the_spec_order_and_redact_for_webhooks() {
        let a = IssuerAccount {
            details: IssuerAccountDetails {
                issuer_id: "100000".into(),
                ssn: "123456789".into(),
                ..IssuerAccountDetails::default()
            },
            ..IssuerAccount::default()
        };
        let v = serde_json::to_value(a.details.redacted()).unwrap();
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys.len(), 22);
        assert_eq!(keys[8..11], ["accountMiddleInitial", "socialSecurityNumber", "dob"]);
        assert_eq!(v["socialSecurityNumber"], crate::mask::REDACTED);
        assert_eq!(v["dob"], "");
        let created = serde_json::to_value(a.created_view("Pending")).unwrap();
        assert_eq!(created["socialSecurityNumber"], b64("123456789"));
        assert_eq!(created.as_object().unwrap().len(), 21);
        let stored = serde_json::to_value(&a).unwrap();
        assert_eq!(serde_json::from_value::<IssuerAccount>(stored).unwrap(), a);
    }
}
