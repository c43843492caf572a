//! Accounts: createAccount, `GET /v3/accounts`, `GET` and `PATCH /v3/accounts/{accountId}`.

use http::Method;
use serde_json::{json, Map, Value};
use shared::auth::PiiLevel;
use shared::http::router::ScopeReq;
use shared::list::{field as f, Dir, FieldKind, ListSpec};
use shared::mask::MASK;
use shared::model::account::READ_ONLY;
use shared::model::{validate, Account};
use shared::records::{self, Record};
use shared::store::StoreError;
use shared::webhooks::Event;
use shared::{insert_array, ApiError, Ctx, Params, Reply};
use shared::{op, Routes};

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

const FIELD_PERMISSIONS: &[&str] = &[
    "accountRegistration",
    "accountName",
    "type",
    "entityType",
    "domesticYN",
    "residentType",
    "streetAddress1",
    "address1",
    "streetAddress2",
    "address2",
    "city",
    "state",
    "zip",
    "country",
    "email",
    "phone",
    "taxID",
    "KYCstatus",
    "AMLstatus",
    "AMLdate",
    "AccreditedStatus",
    "approvalStatus",
    "suitabilityScore",
    "suitabilityDate",
    "suitabilityApprover",
    "accreditedInvestor",
    "accreditedInvestorDate",
    "506cLimit",
    "accountTotalLimit",
    "singleInvestmentLimit",
    "associatedAC",
    "tags",
    "notes",
    "approvalPrincipal",
    "approvalLastReview",
    "field1",
    "field2",
    "field3",
];

/// `PUT /v3/createAccount`.
pub async fn create(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    ctx.check_fields(&p, FIELD_PERMISSIONS)?;
    let mut req = Vec::with_capacity(REQUIRED.len());
    for names in REQUIRED {
        req.push(p.req(names)?);
    }
    let [account_name, kind, resident_type, address1, city, state, zip, country] =
        <[String; 8]>::try_from(req).map_err(|_| ApiError::Internal(String::new()))?;
    let mut a = Account {
        account_name,
        kind,
        resident_type,
        address1,
        city,
        state: validate::account_state(&state)?,
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
        created_ip: ctx.ip.to_string(),
        ..Account::default()
    };
    a.id = ctx.next_id(shared::ids::ACCOUNT).await?;
    a.created = ctx.now();
    a.updated = a.created.clone();
    let event = created_event(&a, ctx.client_id());
    ctx.commit(records::insert(ctx.client_id(), &a)?, vec![event]).await?;
    let record = json!({
        "accountId": a.id,
        "kycStatus": a.kyc_status,
        "amlStatus": a.aml_status,
        "accreditedStatus": a.accredited_status,
        "approvalStatus": a.approval_status,
    });
    Ok(Reply::ok().with("accountDetails", insert_array(record)))
}

/// The createAccount webhook, with part 1's fields in order.
fn created_event(a: &Account, client_id: &str) -> Event {
    let s = |v: &String| Some(v.clone());
    Event::new("createAccount")
        .field("accountId", s(&a.id))
        .field("providerid", Some(String::new()))
        .field("status", Some("Active".into()))
        .field("developerAPIKey", Some(MASK.into()))
        .field("accountName", s(&a.account_name))
        .field("type", s(&a.kind))
        .field("entityType", s(&a.entity_type))
        .field("residentType", s(&a.resident_type))
        .field("socialSecurityNumber", Some(String::new()))
        .field("dateOfBirth", Some(String::new()))
        .field("address1", s(&a.address1))
        .field("address2", s(&a.address2))
        .field("city", s(&a.city))
        .field("state", s(&a.state))
        .field("zip", s(&a.zip))
        .field("country", s(&a.country))
        .field("email", s(&a.email))
        .field("phone", s(&a.phone))
        .field("taxID", s(&a.tax_id))
        .field("kycStatus", s(&a.kyc_status))
        .field("amlStatus", s(&a.aml_status))
        .field("amlDate", s(&a.aml_date))
        .field("suitabilityScore", s(&a.suitability_score))
        .field("suitabilityDate", s(&a.suitability_date))
        .field("suitabilityApprover", s(&a.suitability_approver))
        .field("accreditedStatus", s(&a.accredited_status))
        .field("accreditedInvestor", s(&a.accredited_investor))
        .field("accreditedInvestorDate", s(&a.accredited_investor_date))
        .field("506cLimit", s(&a.limit_506c))
        .field("accountTotalLimit", s(&a.account_total_limit))
        .field("singleInvestmentLimit", s(&a.single_investment_limit))
        .field("associatedAC", s(&a.associated_ac))
        .field("syndicate", s(&a.syndicate))
        .field("tags", s(&a.tags))
        .field("notes", s(&a.notes))
        .field("approvalStatus", s(&a.approval_status))
        .field("approvalPrincipal", s(&a.approval_principal))
        .field("approvalLastReview", s(&a.approval_last_review))
        .field("virtualStatus", Some(if a.deleted { "1" } else { "0" }.into()))
        .field("field1", s(&a.field1))
        .field("field2", s(&a.field2))
        .field("field3", s(&a.field3))
        .field("createdIpAddress", s(&a.created_ip))
        .field("client_id", Some(client_id.to_owned()))
}

const LIST: ListSpec = ListSpec {
    fields: &[
        f("accountId", FieldKind::Id),
        f("accountName", FieldKind::Text),
        f("type", FieldKind::Text),
        f("entityType", FieldKind::Text),
        f("residentType", FieldKind::Text),
        f("address1", FieldKind::Text),
        f("address2", FieldKind::Text),
        f("city", FieldKind::Text),
        f("state", FieldKind::Text),
        f("zip", FieldKind::Text),
        f("country", FieldKind::Text),
        f("email", FieldKind::Text),
        f("phone", FieldKind::Text),
        f("taxID", FieldKind::Text),
        f("kycStatus", FieldKind::Text),
        f("kycDate", FieldKind::Text),
        f("amlStatus", FieldKind::Text),
        f("amlDate", FieldKind::Text),
        f("suitabilityScore", FieldKind::Text),
        f("suitabilityDate", FieldKind::Text),
        f("suitabilityApprover", FieldKind::Text),
        f("accreditedStatus", FieldKind::Text),
        f("accreditedInvestor", FieldKind::Text),
        f("accreditedInvestorDate", FieldKind::Text),
        f("506cLimit", FieldKind::Text),
        f("accountTotalLimit", FieldKind::Text),
        f("singleInvestmentLimit", FieldKind::Text),
        f("associatedAC", FieldKind::Text),
        f("syndicate", FieldKind::Text),
        f("tags", FieldKind::Text),
        f("notes", FieldKind::Text),
        f("approvalStatus", FieldKind::Text),
        f("approvalPrincipal", FieldKind::Text),
        f("approvalLastReview", FieldKind::Text),
        f("field1", FieldKind::Text),
        f("field2", FieldKind::Text),
        f("field3", FieldKind::Text),
        f("accountstatus", FieldKind::Text),
        f("createdDate", FieldKind::Date),
        f("updatedDate", FieldKind::Date),
    ],
    id_field: "accountId",
    default_sort: ("createdDate", Dir::Desc),
    equality_only: true,
    sort_fallback: true,
};

/// `GET /v3/accounts`: scope `account.read` at any PII level; equality filters only.
pub async fn list(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let q = shared::list::parse(p.query_pairs(), &LIST)?;
    let page = records::list::<Account>(ctx.store(), ctx.client_id(), &q, |r| r.view(ctx.pii)).await?;
    Ok(page.into_reply("accounts"))
}

async fn load_live(ctx: &Ctx, id: &str) -> Result<records::Stored<Account>, ApiError> {
    match records::load::<Account>(ctx.store(), ctx.client_id(), id).await? {
        Some(s) if !s.rec.deleted() => Ok(s),
        _ => Err(ApiError::not_found(format!("Account {id} not found"))),
    }
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
/// read-only fields ignored, unknown fields `1400`, HTTP 304 when nothing changes, no webhook.
/// A concurrent change of the same account makes the write fail its version check; the
/// patch is then applied again to the fresh copy (it names only the fields it changes).
pub async fn patch(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let id = p.req(&["accountId"])?;
    let Some(Value::Object(changes)) = p.value("account") else {
        return Err(bad_request("The body must be a JSON object with an \"account\" object"));
    };
    let changes = parse_changes(changes)?;
    for _ in 0..5 {
        let stored = load_live(&ctx, &id).await?;
        let mut fields = match serde_json::to_value(&stored.rec) {
            Ok(Value::Object(m)) => m,
            _ => return Err(ApiError::Internal(String::new())),
        };
        if changes.iter().all(|(k, v)| fields.get(k) == Some(v)) {
            return Ok(Reply::ok().desc("No modification was needed").status(304));
        }
        fields.extend(changes.clone());
        let mut after: Account =
            serde_json::from_value(Value::Object(fields)).map_err(|_| ApiError::Internal(String::new()))?;
        after.updated = ctx.now();
        after.updated_ip = ctx.ip.to_string();
        match ctx
            .commit(records::replace(ctx.client_id(), &stored, &after)?, Vec::new())
            .await
        {
            Ok(()) => return Ok(Reply::ok()),
            Err(StoreError::ConditionFailed { .. } | StoreError::Conflict) => continue,
            Err(e) => return Err(e.into()),
        }
    }
    Err(ApiError::Internal(String::new()))
}

/// The settable fields a PATCH names, as stored text; `1400` for anything else.
fn parse_changes(changes: &Map<String, Value>) -> Result<Map<String, Value>, ApiError> {
    let known = match serde_json::to_value(Account::default()) {
        Ok(Value::Object(m)) => m,
        _ => return Err(ApiError::Internal(String::new())),
    };
    let mut out = Map::new();
    for (k, v) in changes {
        if READ_ONLY.contains(&k.as_str()) {
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
        match k.as_str() {
            "state" => validate::account_state(&text).map_err(|e| bad_request(e.desc()))?,
            "tags" => validate::tags(&text).map_err(|e| bad_request(e.desc()))?,
            _ => String::new(),
        };
        out.insert(k.clone(), Value::String(text));
    }
    Ok(out)
}

/// Stored fields that are not account fields of the API.
const INTERNAL: &[&str] = &[
    "archived",
    "deleted",
    "createdIpAddress",
    "updatedIpAddress",
    "socialSecurityNumber",
    "dateOfBirth",
];

/// A live account of the caller, or `148`.
pub async fn live_account(ctx: &Ctx, id: &str) -> Result<records::Stored<Account>, ApiError> {
    match records::load::<Account>(ctx.store(), ctx.client_id(), id).await? {
        Some(s) if !s.rec.deleted() && !s.rec.archived => Ok(s),
        _ => Err(ApiError::coded("148", "Account is not exist/active.")),
    }
}

/// The accounts routes.
pub fn routes() -> Routes {
    const READ: ScopeReq = ScopeReq {
        family: "account.read",
        min: PiiLevel::Low,
        name: "account.read",
    };
    const WRITE: ScopeReq = ScopeReq {
        family: "account.write",
        min: PiiLevel::High,
        name: "account.write",
    };
    Routes::new()
        .op("createAccount", op!(create))
        .resource(Method::GET, "/v3/accounts", READ, op!(list))
        .resource(Method::GET, "/v3/accounts/{accountId}", READ, op!(read))
        .resource(Method::PATCH, "/v3/accounts/{accountId}", WRITE, op!(patch))
}
