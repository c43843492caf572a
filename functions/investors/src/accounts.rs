//! Accounts: createAccount, updateAccount, getAccount, getAccountLinkId, deleteAccount,
//! updateAccountArchivestatus, getAllAccounts, searchAccount, `GET /v3/accounts`, `GET` and
//! `PATCH /v3/accounts/{accountId}`.

use http::Method;
use serde_json::{Map, Value};
use shared::auth::PiiLevel;
use shared::http::router::{Handler, ScopeReq};
use shared::list::ListSpec;
use shared::model::account::{AccountRef, ArchiveView, READ_ONLY};
use shared::model::ids::no_account;
use shared::model::{validate, Account};
use shared::records::{self, Record};
use shared::webhooks::{ids_event, value_text, view_event, Event};
use shared::{list_op, op, Routes};
use shared::{ApiError, Ctx, Params, Plan, Reply};

/// createAccount's parameters: (stored field, accepted names). The first name is the one
/// `106` reports; the others are aliases existing clients send (OBSERVED.md, CONTRACT.md).
const REQUIRED: &[&[&str]] = &[
    &["accountRegistration", "accountName"],
    &["type"],
    &["domesticYN", "residentType"],
    &["streetAddress1", "address1"],
    &["city"],
    &["state"],
    &["zip"],
    &["country"],
];

/// The fields createAccount, updateAccount and PATCH set, each with its accepted names and
/// the record's name (`110`).
const FIELD_PERMISSIONS: &[&[&str]] = &[
    &["accountRegistration", "accountName"],
    &["type"],
    &["entityType"],
    &["domesticYN", "residentType"],
    &["streetAddress1", "address1"],
    &["streetAddress2", "address2"],
    &["city"],
    &["state"],
    &["zip"],
    &["country"],
    &["email"],
    &["phone"],
    &["taxID"],
    &["KYCstatus", "kycStatus"],
    &["AMLstatus", "amlStatus"],
    &["AMLdate", "amlDate"],
    &["AccreditedStatus", "accreditedStatus"],
    &["approvalStatus"],
    &["suitabilityScore"],
    &["suitabilityDate"],
    &["suitabilityApprover"],
    &["accreditedInvestor"],
    &["accreditedInvestorDate"],
    &["506cLimit"],
    &["accountTotalLimit"],
    &["singleInvestmentLimit"],
    &["associatedAC"],
    &["tags"],
    &["notes"],
    &["approvalPrincipal"],
    &["approvalLastReview"],
    &["field1"],
    &["field2"],
    &["field3"],
];

/// The row createAccount and updateAccount write from their parameters: every field a
/// client sets (the required ones `106` when missing or blank); the rest stay default.
/// The results of the service's own reviews (KYC/AML, accreditation, the three part 2's
/// PATCH may not set): an update that leaves them out keeps them, since a client could not
/// restore a verification it wiped.
const REVIEW_RESULTS: &[&[&str]] = &[
    &["KYCstatus", "kycStatus"],
    &["AMLstatus", "amlStatus"],
    &["AMLdate", "amlDate"],
    &["AccreditedStatus", "accreditedStatus"],
    &["accreditedInvestor"],
    &["accreditedInvestorDate"],
];

fn row_from_params(p: &Params) -> Result<Account, ApiError> {
    let mut req = Vec::with_capacity(REQUIRED.len());
    for names in REQUIRED {
        req.push(p.req(names)?);
    }
    let [account_name, kind, resident_type, address1, city, state, zip, country] =
        <[String; 8]>::try_from(req).map_err(|_| ApiError::internal("eight required account fields"))?;
    Ok(Account {
        account_name,
        kind,
        resident_type,
        address1,
        city,
        state: validate::us_state("state", &state)?,
        zip,
        country,
        entity_type: p.text(&["entityType"])?,
        address2: p.text(&["streetAddress2", "address2"])?,
        email: p.text(&["email"])?,
        phone: p.text(&["phone"])?,
        tax_id: p.text(&["taxID"])?,
        kyc_status: p.text(&["KYCstatus", "kycStatus"])?,
        aml_status: p.text(&["AMLstatus", "amlStatus"])?,
        aml_date: p.text(&["AMLdate", "amlDate"])?,
        accredited_status: p.text(&["AccreditedStatus", "accreditedStatus"])?,
        approval_status: p.text(&["approvalStatus"])?,
        suitability_score: p.text(&["suitabilityScore"])?,
        suitability_date: p.text(&["suitabilityDate"])?,
        suitability_approver: p.text(&["suitabilityApprover"])?,
        accredited_investor: p.text(&["accreditedInvestor"])?,
        accredited_investor_date: p.text(&["accreditedInvestorDate"])?,
        limit_506c: p.text(&["506cLimit"])?,
        account_total_limit: p.text(&["accountTotalLimit"])?,
        single_investment_limit: p.text(&["singleInvestmentLimit"])?,
        associated_ac: p.text(&["associatedAC"])?,
        tags: validate::tags(&p.text(&["tags"])?)?,
        notes: p.text(&["notes"])?,
        approval_principal: p.text(&["approvalPrincipal"])?,
        approval_last_review: p.text(&["approvalLastReview"])?,
        field1: p.text(&["field1"])?,
        field2: p.text(&["field2"])?,
        field3: p.text(&["field3"])?,
        // `syndicate` is `syndicate` only when enabled for the key; no key enables it yet.
        syndicate: String::new(),
        ..Account::default()
    })
}

/// `PUT /v3/createAccount`: answers `accountDetails` as an array of the one new record, as the
/// incumbent does (CONTRACT, "What clients written for the incumbent rely on"), not part 1's
/// insert array.
pub async fn create(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    ctx.check_aliased_fields(&p, FIELD_PERMISSIONS)?;
    let mut a = row_from_params(&p)?;
    a.created_ip = ctx.ip.to_string();
    a.id = ctx.next_id(shared::ids::ACCOUNT).await?;
    a.created = ctx.now();
    a.updated = a.created.clone();
    let event = view_event("createAccount", &a.created_event(ctx.client_id()));
    let writes = records::insert(ctx.client_id(), &a)?;
    ctx.transact(async move |_, _| Ok(Plan::new(writes.clone(), ()).event(event.clone())))
        .await?;
    Ok(Reply::ok().with("accountDetails", [a.created_view()]))
}

const LIST: ListSpec = ListSpec {
    equality_only: true,
    sort_fallback: true,
    ..ListSpec::newest_first("accountId").texts(&[
        "accountName",
        "type",
        "entityType",
        "residentType",
        "socialSecurityNumber",
        "dateOfBirth",
        "address1",
        "address2",
        "city",
        "state",
        "zip",
        "country",
        "email",
        "phone",
        "taxID",
        "kycStatus",
        "kycDate",
        "amlStatus",
        "amlDate",
        "suitabilityScore",
        "suitabilityDate",
        "suitabilityApprover",
        "accreditedStatus",
        "accreditedInvestor",
        "accreditedInvestorDate",
        "506cLimit",
        "accountTotalLimit",
        "singleInvestmentLimit",
        "associatedAC",
        "syndicate",
        "tags",
        "notes",
        "approvalStatus",
        "approvalPrincipal",
        "approvalLastReview",
        "field1",
        "field2",
        "field3",
        "accountstatus",
    ])
};

/// `GET /v3/accounts`: scope `account.read` at any PII level; equality filters only.
const LIST_OP: Handler = list_op!(Account, LIST, "accounts", |r, ctx| r.shown(ctx.pii));

async fn load_live(ctx: &Ctx, id: &str) -> Result<records::Stored<Account>, ApiError> {
    records::live::<Account>(ctx, id, || ApiError::not_found(format!("Account {id} not found"))).await
}

/// `GET /v3/accounts/{accountId}`.
pub async fn read(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let s = load_live(&ctx, &p.req(&["accountId"])?).await?;
    Ok(Reply::ok().with("account", s.rec.view(ctx.pii)))
}

fn bad_request(desc: impl Into<String>) -> ApiError {
    ApiError::Resource {
        http: 400,
        code: "1400",
        desc: desc.into(),
    }
}

/// `PATCH /v3/accounts/{accountId}` with `{"account": {...}}`: omitted fields unchanged,
/// read-only fields ignored, unknown fields `1400`, a blank required field (createAccount's)
/// `1422`, an archived account 404, HTTP 304 when nothing changes, no webhook.
/// A concurrent change of the same account makes the write fail its version check; the
/// patch is then applied again to the fresh copy (it names only the fields it changes).
pub async fn patch(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let id = p.req(&["accountId"])?;
    let Some(Value::Object(changes)) = p.value("account") else {
        return Err(bad_request("The body must be a JSON object with an \"account\" object"));
    };
    let changes = parse_changes(changes)?;
    ctx.check_changed_fields(changes.keys().map(String::as_str), FIELD_PERMISSIONS)?;
    ctx.transact(async move |ctx, _| {
        let stored = load_live(&ctx, &id).await?;
        // Archived is not active: every other write of an account refuses it (`148`).
        if stored.rec.archived {
            return Err(ApiError::not_found(format!("Account {id} is archived")));
        }
        let mut fields = match serde_json::to_value(&stored.rec) {
            Ok(Value::Object(m)) => m,
            _ => return Err(ApiError::internal("account is not an object")),
        };
        if changes.iter().all(|(k, v)| fields.get(k) == Some(v)) {
            return Ok(Plan::answer(Reply::ok().desc("No modification was needed").status(304)));
        }
        fields.extend(changes.clone());
        let mut after: Account =
            serde_json::from_value(Value::Object(fields)).map_err(|e| ApiError::internal_from("changed account", e))?;
        after.updated = ctx.now();
        after.updated_ip = ctx.ip.to_string();
        Ok(Plan::new(
            records::replace(ctx.client_id(), &stored, &after)?,
            Reply::ok(),
        ))
    })
    .await
}

/// The settable fields a PATCH names, as stored text; `1400` for anything else, `1422` for a
/// value a field's rules refuse.
fn parse_changes(changes: &Map<String, Value>) -> Result<Map<String, Value>, ApiError> {
    let known = match serde_json::to_value(Account::default()) {
        Ok(Value::Object(m)) => m,
        _ => return Err(ApiError::internal("account is not an object")),
    };
    let mut out = Map::new();
    for (k, v) in changes {
        if READ_ONLY.contains(&k.as_str()) || API_NEVER_SETS.contains(&k.as_str()) {
            continue;
        }
        if !known.contains_key(k) || INTERNAL.contains(&k.as_str()) {
            return Err(bad_request(format!("Unknown account field: {k}")));
        }
        let text = match v {
            Value::String(s) => s.clone(),
            Value::Number(n) => n.to_string(),
            _ => return Err(bad_request(format!("Field {k} must be a string"))),
        };
        out.insert(k.clone(), Value::String(text));
    }
    // Only a body that is well formed throughout is judged by its values: a known field with a
    // value its rules refuse is part 1's invalid request (422).
    let invalid = |e: ApiError| ApiError::Resource {
        http: 422,
        code: "1422",
        desc: e.desc(),
    };
    for (k, v) in &out {
        let text = v.as_str().unwrap_or_default();
        // createAccount's required fields stay set, as updateAccount keeps them.
        let required = REQUIRED.iter().any(|names| names.last() == Some(&k.as_str()));
        if required && text.trim().is_empty() {
            return Err(invalid(ApiError::invalid(k, "is required and cannot be blank")));
        }
        match k.as_str() {
            "state" => validate::us_state("state", text).map_err(invalid)?,
            "tags" => validate::tags(text).map_err(invalid)?,
            _ => String::new(),
        };
    }
    Ok(out)
}

/// Stored fields that are not account fields of the API.
const INTERNAL: &[&str] = &["archived", "deleted", "createdIpAddress", "updatedIpAddress"];

/// Account fields the API never sets (part 2: "empty for accounts made through the API"): a
/// PATCH naming them is ignored, as for the fields part 2 says cannot be set.
const API_NEVER_SETS: &[&str] = &["socialSecurityNumber", "dateOfBirth"];

/// A live account of the caller, or `148`.
pub async fn live_account(ctx: &Ctx, id: &str) -> Result<records::Stored<Account>, ApiError> {
    match records::load::<Account>(ctx.store(), ctx.client_id(), id).await? {
        Some(s) if !s.rec.deleted() && !s.rec.archived => Ok(s),
        _ => Err(no_account()),
    }
}

/// An account of the caller that is not deleted, archived or not (reads show an archived
/// account with `accountstatus` `Archived`), or `148`.
pub async fn existing_account(ctx: &Ctx, id: &str) -> Result<records::Stored<Account>, ApiError> {
    records::live::<Account>(ctx, id, no_account).await
}

/// The webhook of getAccount (and getAccountLinkId, with `limit_name` for `506cLimit`):
/// `accountId` and the account fields of the getAccount record, then `archived_status`
/// (`1`/`0`, in place of `accountstatus`), `createdDate` and `updatedDate`.
fn read_event(method: &str, a: &Account, record: &Map<String, Value>, limit_name: &str) -> Event {
    let mut e = Event::new(method);
    for (k, v) in record {
        match k.as_str() {
            "accountstatus" | "createdDate" | "updatedDate" => {}
            "506cLimit" => e = e.field(limit_name, value_text(v)),
            _ => e = e.field(k, value_text(v)),
        }
    }
    e.field("archived_status", Some(if a.archived { "1" } else { "0" }.to_owned()))
        .field("createdDate", Some(a.created.clone()))
        .field("updatedDate", Some(a.updated.clone()))
}

/// Applies `change` to the fresh copy of an account (archived ones only when `archived_ok`)
/// and writes it conditioned on the version read; a concurrent change makes it re-read and
/// apply again. `change` answers `None` when there is nothing to write.
async fn change_account(
    ctx: &Ctx,
    id: String,
    archived_ok: bool,
    change: impl Fn(&Account) -> Option<(Account, Vec<Event>)> + Send + Sync,
) -> Result<Option<Account>, ApiError> {
    ctx.transact(async move |ctx, _| {
        let stored = if archived_ok {
            existing_account(&ctx, &id).await?
        } else {
            live_account(&ctx, &id).await?
        };
        let Some((after, events)) = change(&stored.rec) else {
            return Ok(Plan::answer(None));
        };
        Ok(Plan::new(records::replace(ctx.client_id(), &stored, &after)?, Some(after)).events(events))
    })
    .await
}

/// `PUT /v3/updateAccount`: rewrites the whole row from createAccount's parameters (the
/// required ones stay required; optional ones not sent become empty), keeps what a client
/// cannot set (ID, SSN, date of birth, `kycDate`, archive status, creation), and fires
/// `updateAccount` on every call. An archived account is `148`.
pub async fn update(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    ctx.check_aliased_fields(&p, FIELD_PERMISSIONS)?;
    let id = p.req(&["accountId"])?;
    let row = row_from_params(&p)?;
    // The row is rewritten whole (part 1, Retry 4), but never past the key's permissions
    // (clearing a field is setting it), and the reviews' results stay unless sent.
    let mut kept: Vec<String> = Vec::new();
    for names in FIELD_PERMISSIONS {
        let sent = names.iter().any(|n| p.value(n).is_some());
        if !ctx.may_set_any(names) || (REVIEW_RESULTS.contains(names) && !sent) {
            kept.extend(names.iter().map(|n| (*n).to_owned()));
        }
    }
    let (now, ip) = (ctx.now(), ctx.ip.to_string());
    let after = change_account(&ctx, id, false, move |before| {
        let after = Account {
            id: before.id.clone(),
            ssn: before.ssn.clone(),
            dob: before.dob.clone(),
            kyc_date: before.kyc_date.clone(),
            archived: before.archived,
            deleted: before.deleted,
            created_ip: before.created_ip.clone(),
            created: before.created.clone(),
            updated_ip: ip.clone(),
            updated: now.clone(),
            ..row.clone()
        }
        .keeping(before, &kept);
        let event = view_event("updateAccount", &after.updated_event());
        Some((after, vec![event]))
    })
    .await?
    .ok_or_else(|| ApiError::internal("changed concurrently on every attempt"))?;
    Ok(Reply::ok().with_value("accountDetails", Value::Object(after.view(ctx.pii))))
}

/// `POST /v3/getAccount` (deprecated): `accountDetails`, one object holding the account record;
/// the `getAccount` webhook fires on every call.
pub async fn get(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let id = p.req(&["accountId"])?;
    let a = existing_account(&ctx, &id).await?.rec;
    let record = a.view(ctx.pii);
    let event = read_event("getAccount", &a, &record, "506cLimit");
    ctx.transact(async move |_, _| Ok(Plan::answer(()).event(event.clone())))
        .await?;
    Ok(Reply::ok().with_value("accountDetails", Value::Object(record)))
}

/// `POST /v3/getAccountLinkId`: the getAccount record with `fivenotsixcLimit` in place of
/// `506cLimit`, plus `linkIds` (the account's live link IDs, comma separated). The webhook
/// fires only when the account has links.
pub async fn get_link_ids(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let id = p.req(&["accountId"])?;
    let a = existing_account(&ctx, &id).await?.rec;
    let ids = records::link::account_link_ids(ctx.store(), ctx.client_id(), &id).await?;
    let link_ids = ids.join(",");
    let record = a.view(ctx.pii);
    if !ids.is_empty() {
        let event = read_event("getAccountLinkId", &a, &record, "fivenotsixcLimit").field("linkIds", link_ids.clone());
        ctx.transact(async move |_, _| Ok(Plan::answer(()).event(event.clone())))
            .await?;
    }
    let mut out: Map<String, Value> = record
        .into_iter()
        .map(|(k, v)| {
            if k == "506cLimit" {
                ("fivenotsixcLimit".to_owned(), v)
            } else {
                (k, v)
            }
        })
        .collect();
    out.insert("linkIds".into(), Value::String(link_ids));
    Ok(Reply::ok().with_value("accountDetails", Value::Object(out)))
}

/// `POST /v3/deleteAccount`: a virtual delete; the account then shows `accountstatus`
/// `Archived` in lists with `deleted=true`. Envelope only; webhook `deleteAccount` with
/// `accountId`.
pub async fn delete(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let id = p.req(&["accountId"])?;
    let (now, ip) = (ctx.now(), ctx.ip.to_string());
    change_account(&ctx, id.clone(), true, move |before| {
        let mut after = before.clone();
        after.deleted = true;
        after.archived = true;
        after.updated = now.clone();
        after.updated_ip = ip.clone();
        Some((after, vec![view_event("deleteAccount", &AccountRef { id: &id })]))
    })
    .await?;
    Ok(Reply::ok())
}

/// `updateAccountArchivestatus` / `updateAccountArchiveStatus`: `archiveStatus` `1` archives,
/// `0` makes the account active again. Setting the current status again answers `101`,
/// writes nothing and still fires (part 1: every successful call fires, no de-duplication;
/// as updatePartyEntityArchivestatus). The webhook goes under both spellings: routing matches
/// names case-insensitively, so the service cannot tell which one the client called.
pub async fn archive(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    ctx.check_fields(&p, &["archiveStatus"])?;
    let id = p.req(&["accountId"])?;
    let archived = p.archive_status()?;
    let flag = if archived { "1" } else { "0" };
    let (now, ip) = (ctx.now(), ctx.ip.to_string());
    let view = ArchiveView {
        id: &id,
        archive_status: flag,
    };
    let event = view_event(&ctx.operation, &view);
    let reply = Reply::ok().with("accountDetails", &view);
    let fired = event.clone();
    let changed = change_account(&ctx, id.clone(), true, move |before| {
        if before.archived == archived {
            return None;
        }
        let mut after = before.clone();
        after.archived = archived;
        after.updated = now.clone();
        after.updated_ip = ip.clone();
        Some((after, vec![fired.clone()]))
    })
    .await?;
    if changed.is_none() {
        ctx.transact(async move |_, _| Ok(Plan::answer(()).event(event.clone())))
            .await?;
    }
    Ok(reply)
}

/// The most accounts the deprecated list methods answer (as getAllOffers' cap).
const LEGACY_LIST_CAP: usize = 10_000;

/// The caller's live accounts, newest first (the list index), at most `cap`.
async fn live_accounts(ctx: &Ctx, cap: usize) -> Result<Vec<Account>, ApiError> {
    records::newest::<Account>(ctx, cap).await
}

/// A list answer of the deprecated methods: `accountDetails`, an array of account records,
/// and its webhook: `accountIds`, comma separated.
async fn account_list(ctx: &Ctx, method: &str, accounts: Vec<Account>) -> Result<Reply, ApiError> {
    let event = ids_event(method, None, "accountIds", accounts.iter().map(|a| a.id.as_str()));
    ctx.transact(async move |_, _| Ok(Plan::answer(()).event(event.clone())))
        .await?;
    let records: Vec<Value> = accounts.iter().map(|a| Value::Object(a.view(ctx.pii))).collect();
    Ok(Reply::ok().with_value("accountDetails", Value::Array(records)))
}

/// `POST /v3/getAllAccounts` (deprecated; `GET /v3/accounts` replaces it): every live account,
/// newest first, at most 10,000.
pub async fn get_all(ctx: Ctx, _p: Params) -> Result<Reply, ApiError> {
    let accounts = live_accounts(&ctx, LEGACY_LIST_CAP).await?;
    account_list(&ctx, "getAllAccounts", accounts).await
}

/// `POST /v3/searchAccount` (deprecated): live accounts whose ID equals `accountId` and/or
/// whose name contains `accountName` (alias `accountRegistration`, case-insensitive); one of
/// them is required. No match is `101` with an empty array.
pub async fn search(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let id = p.opt(&["accountId"])?.filter(|v| !v.trim().is_empty());
    let name = p
        .opt(&["accountName", "accountRegistration"])?
        .filter(|v| !v.trim().is_empty());
    let accounts = match (id, name) {
        (None, None) => return Err(ApiError::missing("accountId")),
        (Some(id), name) => {
            let found = match records::load::<Account>(ctx.store(), ctx.client_id(), id.trim()).await? {
                Some(s) if !s.rec.deleted => vec![s.rec],
                _ => Vec::new(),
            };
            match name {
                Some(n) => found.into_iter().filter(|a| name_matches(a, &n)).collect(),
                None => found,
            }
        }
        (None, Some(n)) => live_accounts(&ctx, usize::MAX)
            .await?
            .into_iter()
            .filter(|a| name_matches(a, &n))
            .take(LEGACY_LIST_CAP)
            .collect(),
    };
    account_list(&ctx, "searchAccount", accounts).await
}

fn name_matches(a: &Account, text: &str) -> bool {
    a.account_name.to_lowercase().contains(&text.trim().to_lowercase())
}

/// The accounts routes.
pub fn routes() -> Routes {
    const READ: ScopeReq = ScopeReq::new("account.read", PiiLevel::Low, "account.read");
    const WRITE: ScopeReq = ScopeReq::new("account.write", PiiLevel::High, "account.write");
    Routes::new()
        .op("createAccount", op!(create))
        .op("updateAccount", op!(update))
        .op("getAccount", op!(get))
        .op("getAccountLinkId", op!(get_link_ids))
        .op("deleteAccount", op!(delete))
        .op("updateAccountArchivestatus", op!(archive))
        .op("updateAccountArchiveStatus", op!(archive))
        .op("getAllAccounts", op!(get_all))
        .op("searchAccount", op!(search))
        .resource(Method::GET, "/v3/accounts", READ, LIST_OP)
        .resource(Method::GET, "/v3/accounts/{accountId}", READ, op!(read))
        .resource(Method::PATCH, "/v3/accounts/{accountId}", WRITE, op!(patch))
}
