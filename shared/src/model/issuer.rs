//! Issuers, their financial account (createIssuerAccount) and the account's custodian records.

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use crate::error::ApiError;
use crate::ids::sortable;
use crate::mask::b64;
use crate::records::{self, Record};
use crate::store::{Cond, Index, Key, Query, SkRange, Store, Val, Write};

pub use super::ids::no_issuer;

/// An issuer. `issuerStatus` is free text: `Pending` at creation, then whatever
/// `updateIssuer` supplies.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Issuer {
    #[serde(rename = "issuerId")]
    pub id: String,
    #[serde(rename = "issuerName")]
    pub issuer_name: String,
    #[serde(rename = "firstName")]
    pub first_name: String,
    #[serde(rename = "lastName")]
    pub last_name: String,
    pub email: String,
    /// Digits, or `None` (a read answers `null`) when never given.
    #[serde(rename = "phoneNumber")]
    pub phone_number: Option<String>,
    #[serde(rename = "issuerStatus")]
    pub issuer_status: String,
    pub field1: String,
    pub deleted: bool,
    #[serde(rename = "createdDate")]
    pub created: String,
    #[serde(rename = "createdIpAddress")]
    pub created_ip: String,
    #[serde(rename = "updatedDate")]
    pub updated: String,
    #[serde(rename = "updatedIpAddress")]
    pub updated_ip: String,
}

impl Record for Issuer {
    const KIND: &'static str = "ISSUER";
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

impl Issuer {
    /// The issuer record of getIssuer, getAllIssuers and `GET /v3/issuers` (part 2's fields).
    pub fn view(&self) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert("issuerId".into(), self.id.clone().into());
        m.insert("issuerName".into(), self.issuer_name.clone().into());
        m.insert("firstName".into(), self.first_name.clone().into());
        m.insert("lastName".into(), self.last_name.clone().into());
        m.insert("email".into(), self.email.clone().into());
        m.insert(
            "phoneNumber".into(),
            self.phone_number.clone().map_or(Value::Null, Value::String),
        );
        m.insert("issuerStatus".into(), self.issuer_status.clone().into());
        m
    }

    /// The `GET /v3/issuers` record: [`Issuer::view`] plus `createdDate` and `updatedDate`,
    /// so that every sortable field is in the record.
    pub fn list_view(&self) -> Map<String, Value> {
        let mut m = self.view();
        m.insert("createdDate".into(), self.created.clone().into());
        m.insert("updatedDate".into(), self.updated.clone().into());
        m
    }
}

/// An issuer's financial account (createIssuerAccount): one per issuer, keyed by the
/// issuer's ID. SSN and date of birth are stored as sent; createIssuerAccount answers them
/// base64-encoded and getIssuerAccount decoded.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct IssuerAccount {
    #[serde(rename = "issuerId")]
    pub issuer_id: String,
    #[serde(rename = "accountfirstName")]
    pub account_first_name: String,
    #[serde(rename = "accountlastName")]
    pub account_last_name: String,
    #[serde(rename = "accountType")]
    pub account_type: String,
    #[serde(rename = "companyName")]
    pub company_name: String,
    #[serde(rename = "companyState")]
    pub company_state: String,
    #[serde(rename = "entityType")]
    pub entity_type: String,
    #[serde(rename = "companyTaxID")]
    pub company_tax_id: String,
    #[serde(rename = "accountMiddleInitial")]
    pub account_middle_initial: String,
    #[serde(rename = "socialSecurityNumber")]
    pub ssn: String,
    pub dob: String,
    #[serde(rename = "residentUS")]
    pub resident_us: String,
    #[serde(rename = "citizenUS")]
    pub citizen_us: String,
    #[serde(rename = "addressLine1")]
    pub address_line1: String,
    #[serde(rename = "addressLine2")]
    pub address_line2: String,
    pub city: String,
    pub state: String,
    pub zip: String,
    pub country: String,
    #[serde(rename = "issuingCountry")]
    pub issuing_country: String,
    #[serde(rename = "additionalInfo")]
    pub additional_info: String,
    #[serde(rename = "issuerAccountStatus")]
    pub status: String,
    pub deleted: bool,
    #[serde(rename = "createdDate")]
    pub created: String,
    #[serde(rename = "createdIpAddress")]
    pub created_ip: String,
    #[serde(rename = "updatedDate")]
    pub updated: String,
}

impl Record for IssuerAccount {
    const KIND: &'static str = "ISSUERACCOUNT";
    fn id(&self) -> &str {
        &self.issuer_id
    }
    fn created(&self) -> &str {
        &self.created
    }
    fn deleted(&self) -> bool {
        self.deleted
    }
}

/// The status of a financial account while it exists (the account is storage only: no review).
pub const ISSUER_ACCOUNT_ACTIVE: &str = "Active";

impl IssuerAccount {
    /// The createIssuerAccount record (part 2's fields in order): SSN and `dob` base64
    /// (empty stays empty); `issuerStatus` is the issuer's own status.
    pub fn created_view(&self, issuer_status: &str) -> Map<String, Value> {
        let enc = |v: &str| if v.is_empty() { String::new() } else { b64(v) };
        let pairs: [(&str, String); 21] = [
            ("issuerId", self.issuer_id.clone()),
            ("companyName", self.company_name.clone()),
            ("companyState", self.company_state.clone()),
            ("companyTaxID", self.company_tax_id.clone()),
            ("entityType", self.entity_type.clone()),
            ("issuingCountry", self.issuing_country.clone()),
            ("accountType", self.account_type.clone()),
            ("accountMiddleInitial", self.account_middle_initial.clone()),
            ("socialSecurityNumber", enc(&self.ssn)),
            ("dob", enc(&self.dob)),
            ("residentUS", self.resident_us.clone()),
            ("citizenUS", self.citizen_us.clone()),
            ("addressLine1", self.address_line1.clone()),
            ("addressLine2", self.address_line2.clone()),
            ("city", self.city.clone()),
            ("zip", self.zip.clone()),
            ("country", self.country.clone()),
            ("additionalInfo", self.additional_info.clone()),
            ("issuerStatus", issuer_status.to_owned()),
            ("createdDate", self.created.clone()),
            ("createdIpAddress", self.created_ip.clone()),
        ];
        pairs
            .into_iter()
            .map(|(k, v)| (k.to_owned(), Value::String(v)))
            .collect()
    }

    /// The getIssuerAccount `statusDesc` object (part 2's fields in order), SSN and `dob` in
    /// clear as that method decodes them.
    pub fn status_view(&self) -> Map<String, Value> {
        let pairs: [(&str, &str); 22] = [
            ("issuerId", &self.issuer_id),
            ("accountfirstName", &self.account_first_name),
            ("accountlastName", &self.account_last_name),
            ("accountType", &self.account_type),
            ("companyName", &self.company_name),
            ("companyState", &self.company_state),
            ("entityType", &self.entity_type),
            ("companyTaxID", &self.company_tax_id),
            ("accountMiddleInitial", &self.account_middle_initial),
            ("socialSecurityNumber", &self.ssn),
            ("dob", &self.dob),
            ("residentUS", &self.resident_us),
            ("citizenUS", &self.citizen_us),
            ("addressLine1", &self.address_line1),
            ("addressLine2", &self.address_line2),
            ("city", &self.city),
            ("state", &self.state),
            ("zip", &self.zip),
            ("country", &self.country),
            ("issuingCountry", &self.issuing_country),
            ("additionalInfo", &self.additional_info),
            ("issuerAccountStatus", &self.status),
        ];
        pairs
            .into_iter()
            .map(|(k, v)| (k.to_owned(), Value::String(v.to_owned())))
            .collect()
    }
}

/// One custodian record of an issuer's financial account (getIssuerAccount's
/// `Financial issuer details`), identified by its custodian's numeric `providerid`.
///
/// The offerings group reads and deletes them; they are written by whoever connects the
/// issuer with a custodian (payments or custody), through [`custodian_write`].
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
    pub fn view(&self) -> Value {
        json!({
            "providerid": self.providerid,
            "CustodianName": self.custodian_name,
            "CustodianAccountNumber": b64(&self.custodian_account_number),
            "RoutingNumber": b64(&self.routing_number),
            "AccountNumber": b64(&self.account_number),
            "AccountName": self.account_name,
            "funds": self.funds,
        })
    }
}

/// The partition of a client's issuer custodian records; the sort key is
/// `<issuerId>#<sortable providerid>`.
pub fn custodian_key(client: &str, issuer_id: &str, providerid: &str) -> Key {
    Key::new(
        format!("{client}#ISSUERCUSTODIAN"),
        format!("{issuer_id}#{}", sortable(providerid)),
    )
}

/// The write that stores (or replaces) a custodian record of an issuer's financial account.
pub fn custodian_write(client: &str, issuer_id: &str, rec: &CustodianRecord) -> Write {
    let mut item = custodian_key(client, issuer_id, &rec.providerid).item();
    item.insert("d".into(), Val::S(serde_json::to_string(rec).unwrap_or_default()));
    Write::Put { item, cond: None }
}

/// The delete of one custodian record, failing (`ConditionFailed`) when it does not exist.
pub fn custodian_delete(client: &str, issuer_id: &str, providerid: &str) -> Write {
    Write::Delete {
        key: custodian_key(client, issuer_id, providerid),
        cond: Some(Cond::Exists),
    }
}

/// An issuer's custodian records, in `providerid` order (one query).
pub async fn custodians(store: &dyn Store, client: &str, issuer_id: &str) -> Result<Vec<CustodianRecord>, ApiError> {
    let mut q = Query::new(Index::Table, custodian_key(client, issuer_id, "").pk);
    q.sk = SkRange::BeginsWith(format!("{issuer_id}#"));
    let mut out = Vec::new();
    loop {
        let page = store.query(&q).await?;
        for item in &page.items {
            let d = item.get("d").and_then(Val::as_str).unwrap_or("");
            match serde_json::from_str(d) {
                Ok(rec) => out.push(rec),
                Err(e) => {
                    return Err(ApiError::internal_from("corrupt custodian record", e));
                }
            }
        }
        match page.next {
            Some(next) => q.start = Some(next),
            None => return Ok(out),
        }
    }
}

/// A live issuer of the client, or `136`.
pub async fn live_issuer(store: &dyn Store, client: &str, id: &str) -> Result<records::Stored<Issuer>, ApiError> {
    match records::load::<Issuer>(store, client, id).await? {
        Some(s) if !s.rec.deleted => Ok(s),
        _ => Err(no_issuer()),
    }
}
