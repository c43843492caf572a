//! External bank accounts: createExternalAccount, updateExternalAccount (a whole-record
//! replace), getExternalAccount and deleteExternalAccount. One per account or issuer; the
//! numbers are kept exactly as sent and answered in base64. Shapes: `docs/payments.md`.

use serde::Serialize;
use serde_json::Value;
use shared::http::envelope::insert_array;
use shared::mask::b64;
use shared::model::ids::{AccountId, IssuerId};
use shared::model::payments::{check_nickname, digits, ExternalAccount, ExternalAccountView, Owner};
use shared::records::active_account;
use shared::records::issuer::live_issuer;
use shared::records::payments as pay;
use shared::records::Stored;
use shared::webhooks::{bank_number, view_event};
use shared::{op, ApiError, Ctx, Params, Plan, Reply, Routes};

/// `116`: the owner already has an external account.
fn already_exists() -> ApiError {
    ApiError::coded("116", "External account already exists")
}

/// `types` (default `Account` where `optional`) and the owner's ID: `106` when missing,
/// the owner's unknown-ID code when malformed.
fn owner_param(p: &Params, optional: bool) -> Result<(Owner, String), ApiError> {
    let types = owner_types(p, optional)?;
    Ok((types, owner_id(p, types)?))
}

/// `types` (default `Account` where `optional`; `106` when missing).
fn owner_types(p: &Params, optional: bool) -> Result<Owner, ApiError> {
    match p.opt(&["types"])?.filter(|t| !t.trim().is_empty()) {
        Some(t) => Owner::parse(&t),
        None if optional => Ok(Owner::Account),
        None => Err(ApiError::missing("types")),
    }
}

/// The ID of the owner `types` names: `106` when missing, its unknown-ID code when malformed.
fn owner_id(p: &Params, types: Owner) -> Result<String, ApiError> {
    Ok(match types {
        Owner::Account => AccountId::param(p, &[owner_name(types)])?.as_str().to_owned(),
        Owner::Issuer => IssuerId::param(p, &[owner_name(types)])?.as_str().to_owned(),
    })
}

/// The owner exists and is live: `148` for an account, `136` for an issuer.
async fn owner_exists(ctx: &Ctx, types: Owner, id: &str) -> Result<(), ApiError> {
    match types {
        Owner::Account => active_account(ctx, id).await.map(drop),
        Owner::Issuer => live_issuer(ctx.store(), ctx.client_id(), &IssuerId::stored(id))
            .await
            .map(drop),
    }
}

/// The record a create or update sends, before the owner is checked.
/// What create and update share: the fields' permissions (`110`), the owner, the record sent,
/// then the owner's existence.
async fn checked_record(ctx: &Ctx, p: &Params) -> Result<(Owner, String, ExternalAccount), ApiError> {
    ctx.check_fields(p, FIELDS)?;
    // Every parameter is checked (`106`) before an ID that names nothing is answered as
    // unknown (`148`/`136`): CONTRACT's order of checks.
    let types = owner_types(p, false)?;
    p.req(&[owner_name(types)])?;
    let mut record = parse_record(ctx, p, types, String::new())?;
    let id = owner_id(p, types)?;
    record.owner_id.clone_from(&id);
    owner_exists(ctx, types, &id).await?;
    Ok((types, id, record))
}

/// The parameter that names an owner of `types`.
fn owner_name(types: Owner) -> &'static str {
    match types {
        Owner::Account => "accountId",
        Owner::Issuer => "issuerId",
    }
}

fn parse_record(ctx: &Ctx, p: &Params, types: Owner, owner_id: String) -> Result<ExternalAccount, ApiError> {
    let full_name = p.req(&["ExtAccountfullname"])?.trim().to_owned();
    let nickname = p.req(&["Extnickname"])?.trim().to_owned();
    check_nickname(&nickname)?;
    let routing_number = digits("ExtRoutingnumber", &p.req(&["ExtRoutingnumber"])?)?;
    if routing_number.len() != 9 {
        return Err(ApiError::invalid("ExtRoutingnumber", "nine digits"));
    }
    let account_number = digits("ExtAccountnumber", &p.req(&["ExtAccountnumber"])?)?;
    // Stored as sent (part 1, Conventions 7: part 3 states no check); `Checking` when blank.
    let account_type = p
        .opt(&["accountType"])?
        .filter(|t| !t.trim().is_empty())
        .unwrap_or_else(|| "Checking".to_owned());
    let now = ctx.now();
    Ok(ExternalAccount {
        types,
        owner_id,
        full_name,
        nickname,
        routing_number,
        account_number,
        bank_name: p.opt(&["ExtBankname"])?.unwrap_or_default().trim().to_owned(),
        account_type,
        created_date: now.clone(),
        updated_date: now,
        ip_address: p
            .opt(&["updatedIpAddress", "createdIpAddress"])?
            .unwrap_or_else(|| ctx.ip.to_string()),
    })
}

/// The key of create's answer: part 3's, which differs for issuers.
fn created_key(types: Owner) -> &'static str {
    match types {
        Owner::Account => "External Account Details",
        Owner::Issuer => "Issuer External Account Details",
    }
}

/// The key of update's and delete's answers (OBSERVED).
fn changed_key(types: Owner) -> &'static str {
    match types {
        Owner::Account => "Account External Account Details",
        Owner::Issuer => "Issuer External Account Details",
    }
}

/// The owner's external account, or `149`.
async fn on_file(ctx: &Ctx, types: Owner, id: &str) -> Result<Stored<ExternalAccount>, ApiError> {
    pay::external(ctx.store(), ctx.client_id(), types, id)
        .await?
        .ok_or_else(shared::model::payments::no_external_account)
}

/// The fields an external account's writes set (`110` without their permission).
const FIELDS: &[&str] = &[
    "types",
    "ExtAccountfullname",
    "Extnickname",
    "ExtRoutingnumber",
    "ExtAccountnumber",
    "ExtBankname",
    "accountType",
    "createdIpAddress",
    "updatedIpAddress",
];

/// The record as its webhooks carry it: part 1's base64 numbers, of the numbers as a webhook
/// may show them (CONTRACT: masked but the last four, or encrypted under the client's key).
fn webhook_view<'a>(ctx: &Ctx, record: &'a ExternalAccount) -> Result<ExternalAccountView<'a>, ApiError> {
    let key = ctx.client.webhook_key.as_deref();
    let shown = |number: &str| bank_number(number, key).map(|n| b64(&n));
    Ok(ExternalAccountView {
        routing_number: shown(&record.routing_number)?,
        account_number: shown(&record.account_number)?,
        ..record.view()
    })
}

/// `POST /v3/createExternalAccount`: `types`, `accountId` or `issuerId`, `ExtAccountfullname`,
/// `Extnickname`, `ExtRoutingnumber` (nine digits), `ExtAccountnumber` (digits) required;
/// `ExtBankname`, `accountType` (as sent, `Checking` when blank), `updatedIpAddress` optional.
/// `116` when the owner has one. Answers `[true, [record]]` under `External Account Details`
/// (`Issuer External Account Details`); webhook `createExternalAccount` with the record.
pub async fn create(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let (types, id, record) = checked_record(&ctx, &p).await?;
    let saved = ctx
        .transact(async move |ctx, _| {
            if pay::external(ctx.store(), ctx.client_id(), types, &id).await?.is_some() {
                return Err(already_exists());
            }
            let write = pay::external_put(ctx.client_id(), &record, None)?;
            let event = view_event("createExternalAccount", &webhook_view(&ctx, &record)?);
            Ok(Plan::new(vec![write], record.clone()).event(event))
        })
        .await?;
    Ok(Reply::ok().with_value(created_key(types), insert_array(saved.view())))
}

/// `POST /v3/updateExternalAccount`: create's parameters; replaces the whole record (the
/// created date stays). `149` when none is on file. Answers `[true, [record]]` under
/// `Account External Account Details` (`Issuer External Account Details`); webhook
/// `updateExternalAccount` with the record.
pub async fn update(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let (types, id, record) = checked_record(&ctx, &p).await?;
    let saved = ctx
        .transact(async move |ctx, _| {
            let before = on_file(&ctx, types, &id).await?;
            let mut after = record.clone();
            after.created_date.clone_from(&before.rec.created_date);
            let write = pay::external_put(ctx.client_id(), &after, Some(before.version))?;
            let event = view_event("updateExternalAccount", &webhook_view(&ctx, &after)?);
            Ok(Plan::new(vec![write], after).event(event))
        })
        .await?;
    Ok(Reply::ok().with_value(changed_key(types), insert_array(saved.view())))
}

/// `POST /v3/getExternalAccount`: `accountId` (or `types` = `Issuer` and `issuerId`). The
/// details travel in `statusDesc` (OBSERVED): `AccountName`, `AccountNickName`,
/// `AccountNumber`, `AccountRoutingNumber` (base64), `accountType`, `createdDate`,
/// `updatedDate`. `149` when none is on file.
pub async fn get(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let (types, id) = owner_param(&p, true)?;
    owner_exists(&ctx, types, &id).await?;
    let stored = on_file(&ctx, types, &id).await?;
    let details =
        serde_json::to_value(stored.rec.details()).map_err(|e| ApiError::internal_from("external account view", e))?;
    Ok(Reply::ok().desc_value(details))
}

/// deleteExternalAccount's record: `accountId` and `Ext_status`, or `issuerId` and `status`
/// (part 1's webhook payload).
#[derive(Serialize)]
struct Deleted<'a> {
    #[serde(rename = "accountId", skip_serializing_if = "Option::is_none")]
    account_id: Option<&'a str>,
    #[serde(rename = "Ext_status", skip_serializing_if = "Option::is_none")]
    ext_status: Option<&'static str>,
    #[serde(rename = "issuerId", skip_serializing_if = "Option::is_none")]
    issuer_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    status: Option<&'static str>,
}

/// `POST /v3/deleteExternalAccount`: `types`, `accountId` (or `issuerId`). `149` when none is
/// on file. Answers `[true, [{accountId, Ext_status: Deleted}]]` under `Account External
/// Account Details` (issuers: `{issuerId, status}` under `Issuer External Account
/// Details`); webhook `deleteExternalAccount` with that record. Moves already made keep their
/// own copy of the numbers.
pub async fn delete(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let (types, id) = owner_param(&p, false)?;
    owner_exists(&ctx, types, &id).await?;
    let account = types == Owner::Account;
    let deleted = Deleted {
        account_id: Some(id.as_str()).filter(|_| account),
        ext_status: Some("Deleted").filter(|_| account),
        issuer_id: Some(id.as_str()).filter(|_| !account),
        status: Some("Deleted").filter(|_| !account),
    };
    let view: Value = serde_json::to_value(&deleted).map_err(|e| ApiError::internal_from("deleted view", e))?;
    let event = view_event("deleteExternalAccount", &deleted);
    let owner = id.clone();
    ctx.transact(async move |ctx, _| {
        let before = on_file(&ctx, types, &owner).await?;
        let write = pay::external_delete(ctx.client_id(), &before);
        Ok(Plan::new(vec![write], ()).event(event.clone()))
    })
    .await?;
    Ok(Reply::ok().with_value(changed_key(types), insert_array(view)))
}

pub fn routes() -> Routes {
    Routes::new()
        .op("createExternalAccount", op!(create))
        .op("updateExternalAccount", op!(update))
        .op("getExternalAccount", op!(get))
        .op("deleteExternalAccount", op!(delete))
}
