//! Issuer financial accounts: createIssuerAccount (creates, or updates the existing one),
//! getIssuerAccount and deleteIssuerAccount. Storage only: nothing reviews them.

use serde::Serialize;
use shared::model::ids::IssuerId;
use shared::model::issuer::{
    no_issuer, CustodianRecord, CustodianView, IssuerAccount, IssuerAccountCreated, IssuerAccountDetails,
    ISSUER_ACCOUNT_ACTIVE,
};
use shared::model::validate;
use shared::records::issuer::{custodian_delete, custodian_key, custodians, live_issuer};
use shared::records::{self, Record};
use shared::store::{Write, MAX_TRANSACTION_WRITES};
use shared::webhooks::view_event;
use shared::{insert_array, op, ApiError, Ctx, Params, Plan, Reply, Routes};

use crate::support::{issuer_id, required_if_permitted};

/// The fields a createIssuerAccount request may set (field permissions, `110`).
const FIELDS: &[&str] = &[
    "companyName",
    "companyState",
    "createdIpAddress",
    "issuingCountry",
    "accountType",
    "entityType",
    "companyTaxID",
    "accountMiddleInitial",
    "socialSecurityNumber",
    "dob",
    "residentUS",
    "citizenUS",
    "addressline1",
    "addressLine1",
    "addressline2",
    "addressLine2",
    "city",
    "state",
    "zip",
    "country",
    "additionalInfo",
    "accountfirstName",
    "accountlastName",
];

/// The answer of a createIssuerAccount that rewrote the issuer's existing account: the
/// insert array without its element 0.
#[derive(Serialize)]
struct Rewritten {
    #[serde(rename = "1")]
    record: [IssuerAccountCreated; 1],
}

/// The deleteIssuerAccount webhook: `providerid` only when one custodian record went.
#[derive(Serialize)]
struct DeleteEvent<'a> {
    #[serde(rename = "issuerId")]
    issuer_id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    providerid: Option<&'a str>,
}

fn non_blank(v: String, check: impl Fn(&str) -> Result<String, ApiError>) -> Result<String, ApiError> {
    if v.trim().is_empty() {
        Ok(v)
    } else {
        check(&v)
    }
}

/// The account a createIssuerAccount request describes (every field from its parameters).
fn account_from_params(ctx: &Ctx, p: &Params, issuer_id: &IssuerId) -> Result<IssuerAccount, ApiError> {
    let company_name = required_if_permitted(ctx, p, &["companyName"])?;
    let company_state = non_blank(required_if_permitted(ctx, p, &["companyState"])?, |v| {
        let ok = v.len() == 2 && v.bytes().all(|b| b.is_ascii_alphabetic());
        ok.then(|| v.to_owned())
            .ok_or_else(|| ApiError::invalid("companyState", "must be two letters"))
    })?;
    let created_ip = required_if_permitted(ctx, p, &["createdIpAddress"])?;
    let issuing_country = required_if_permitted(ctx, p, &["issuingCountry"])?;
    let company_tax_id = non_blank(p.text(&["companyTaxID"])?, |v| {
        let ok = v.len() == 9 && v.bytes().all(|b| b.is_ascii_digit());
        ok.then(|| v.to_owned())
            .ok_or_else(|| ApiError::invalid("companyTaxID", "must be 9 digits, no hyphens"))
    })?;
    Ok(IssuerAccount {
        details: IssuerAccountDetails {
            issuer_id: issuer_id.to_string(),
            account_first_name: p.text(&["accountfirstName", "accountFirstName"])?,
            account_last_name: p.text(&["accountlastName", "accountLastName"])?,
            account_type: p.text(&["accountType"])?,
            company_name,
            company_state,
            entity_type: p.text(&["entityType"])?,
            company_tax_id,
            account_middle_initial: p.text(&["accountMiddleInitial"])?,
            ssn: non_blank(p.text(&["socialSecurityNumber"])?, validate::ssn)?,
            dob: non_blank(p.text(&["dob"])?, |v| validate::date("dob", v))?,
            resident_us: p.text(&["residentUS"])?,
            citizen_us: p.text(&["citizenUS"])?,
            address_line1: p.text(&["addressline1", "addressLine1"])?,
            address_line2: p.text(&["addressline2", "addressLine2"])?,
            city: p.text(&["city"])?,
            state: p.text(&["state"])?,
            zip: p.text(&["zip"])?,
            country: p.text(&["country"])?,
            issuing_country,
            additional_info: p.text(&["additionalInfo"])?,
            status: ISSUER_ACCOUNT_ACTIVE.into(),
        },
        deleted: false,
        created: String::new(),
        created_ip,
        updated: String::new(),
    })
}

/// `PUT /v3/createIssuerAccount`: the issuer's financial account. A new account answers
/// `Financial issuer details` = `[true, [record]]`; when the issuer already has one it is
/// rewritten from the parameters (its `createdDate` kept) and the answer holds only key
/// `1`: `{"1": [record]}` (the insert array without its element 0).
pub async fn create(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    ctx.check_fields(&p, FIELDS)?;
    let issuer_id = issuer_id(&p)?;
    let mut account = account_from_params(&ctx, &p, &issuer_id)?;
    let issuer_status = live_issuer(ctx.store(), ctx.client_id(), &issuer_id)
        .await?
        .rec
        .issuer_status;
    ctx.transact(async move |ctx, _| {
        let existing = records::load::<IssuerAccount>(ctx.store(), ctx.client_id(), issuer_id.as_str()).await?;
        let now = ctx.now();
        account.updated.clone_from(&now);
        let (writes, updated) = match &existing {
            None => {
                account.created.clone_from(&now);
                (records::insert(ctx.client_id(), &account)?, false)
            }
            Some(s) if s.rec.deleted() => {
                account.created.clone_from(&now);
                (records::replace(ctx.client_id(), s, &account)?, false)
            }
            Some(s) => {
                account.created.clone_from(&s.rec.created);
                (records::replace(ctx.client_id(), s, &account)?, true)
            }
        };
        let record = account.created_view(&issuer_status);
        let event = view_event("createIssuerAccount", &record.redacted());
        let reply = if updated {
            Reply::ok().with("Financial issuer details", Rewritten { record: [record] })
        } else {
            Reply::ok().with_value("Financial issuer details", insert_array(record))
        };
        Ok(Plan::new(writes, reply).event(event))
    })
    .await
}

/// The issuer's live financial account: `136` when the issuer or its account does not
/// exist. One read: deleteIssuer deletes the account with the issuer, so a live account
/// always has a live issuer.
async fn issuer_account(ctx: &Ctx, issuer_id: &IssuerId) -> Result<records::Stored<IssuerAccount>, ApiError> {
    match records::load::<IssuerAccount>(ctx.store(), ctx.client_id(), issuer_id.as_str()).await? {
        Some(s) if !s.rec.deleted => Ok(s),
        _ => Err(no_issuer()),
    }
}

/// `POST /v3/getIssuerAccount`: `statusDesc` is the account object (SSN and `dob` decoded),
/// then `issuerId` and `Financial issuer details`, the custodian records. `106` for a
/// missing or non-numeric `issuerId`.
pub async fn get(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let issuer_id = issuer_id(&p)?;
    ctx.transact(async move |ctx, _| {
        let s = issuer_account(&ctx, &issuer_id).await?;
        let status = &s.rec.details;
        let custodian_records: Vec<CustodianView> = custodians(ctx.store(), ctx.client_id(), &s.rec.details.issuer_id)
            .await?
            .iter()
            .map(CustodianRecord::view)
            .collect();
        let event = view_event("getIssuerAccount", &status.redacted());
        let status =
            serde_json::to_value(status).map_err(|e| ApiError::internal_from("account view does not serialize", e))?;
        let reply = Reply::ok()
            .desc_value(status)
            .with("issuerId", &s.rec.details.issuer_id)
            .with("Financial issuer details", custodian_records);
        Ok(Plan::answer(reply).event(event))
    })
    .await
}

/// `POST /v3/deleteIssuerAccount`: with `providerid`, deletes that custodian record only
/// (`136` when the issuer has none with that ID); without it, virtually deletes the
/// financial account and deletes all its custodian records.
pub async fn delete(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let provider = match p.int("providerid")? {
        Some(n) if n >= 0 => Some(n.to_string()),
        Some(_) => return Err(ApiError::invalid("providerid", "Numeric values only")),
        None => None,
    };
    let issuer_id = issuer_id(&p)?;
    let done = || Reply::ok().desc("Issuer Financial Account deleted successfully!");
    if let Some(provider) = provider {
        live_issuer(ctx.store(), ctx.client_id(), &issuer_id).await?;
        let event = view_event(
            "deleteIssuerAccount",
            &DeleteEvent {
                issuer_id: issuer_id.as_str(),
                providerid: Some(&provider),
            },
        );
        let write = custodian_delete(ctx.client_id(), issuer_id.as_str(), &provider);
        let missing = ApiError::coded("136", "Issuer Financial Account custodian record does not exist.");
        ctx.transact(async move |_, _| {
            Ok(Plan::answer(())
                .check(write.clone(), missing.clone())
                .event(event.clone()))
        })
        .await?;
        return Ok(done());
    }
    let id = issuer_id.clone();
    let later = ctx
        .transact(async move |ctx, _| {
            let stored = issuer_account(&ctx, &id).await?;
            let mut after = stored.rec.clone();
            after.deleted = true;
            after.updated = ctx.now();
            let mut writes = records::replace(ctx.client_id(), &stored, &after)?;
            let providers: Vec<String> = custodians(ctx.store(), ctx.client_id(), id.as_str())
                .await?
                .into_iter()
                .map(|c| c.providerid)
                .collect();
            let room = MAX_TRANSACTION_WRITES - writes.len() - 1;
            let (now, later) = providers.split_at(providers.len().min(room));
            writes.extend(now.iter().map(|provider| Write::Delete {
                key: custodian_key(ctx.client_id(), id.as_str(), provider),
                cond: None,
            }));
            let event = view_event(
                "deleteIssuerAccount",
                &DeleteEvent {
                    issuer_id: id.as_str(),
                    providerid: None,
                },
            );
            Ok(Plan::new(writes, later.to_vec()).event(event))
        })
        .await?;
    // Beyond one transaction's room: cleared afterwards (the account is already deleted, so
    // nothing reads them).
    for chunk in later.chunks(MAX_TRANSACTION_WRITES) {
        let deletes = chunk
            .iter()
            .map(|id| Write::Delete {
                key: custodian_key(ctx.client_id(), issuer_id.as_str(), id),
                cond: None,
            })
            .collect();
        ctx.store().write(deletes).await?;
    }
    Ok(done())
}

/// The issuer financial account routes.
pub fn routes() -> Routes {
    Routes::new()
        .op("createIssuerAccount", op!(create))
        .op("getIssuerAccount", op!(get))
        .op("deleteIssuerAccount", op!(delete))
}
