//! Custody supplements (part 3): the IRA account supplement (createCustodyAccountSupplement,
//! its deprecated form addCustodyAccountSupplement with every mailing field optional, and
//! updateCustodyAccountSupplement) and the party supplement (createCustodyPartySupplement
//! and its alias addCustodyPartySupplement, with part 3's value aliases). A create over an
//! existing supplement replaces it.

use serde_json::Value;
use shared::model::custody::{
    check_account_supplement, check_account_values, party_field_value, AccountSupplement, Fields, PartySupplement,
    ACCOUNT_SUPPLEMENT_FIELDS, PARTY_SUPPLEMENT_FIELDS, REQUIRED_MAILING,
};
use shared::model::ids::{no_party, PartyId};
use shared::model::Party;
use shared::records::{self, Owned};
use shared::{op, ApiError, Ctx, Params, Plan, Reply, Routes};

/// The fields of `names` the call sends (trimmed), in that order.
fn sent(p: &Params, names: &[&str]) -> Result<Vec<(String, String)>, ApiError> {
    let mut out = Vec::new();
    for name in names {
        if let Some(v) = p.opt(&[name])? {
            out.push(((*name).to_owned(), v.trim().to_owned()));
        }
    }
    Ok(out)
}

/// `110` when the request sets a supplement field (or its `createdIpAddress`) the key has no
/// permission for.
fn check_fields(ctx: &Ctx, p: &Params, fields: &[&str]) -> Result<(), ApiError> {
    ctx.check_fields(p, fields)?;
    ctx.check_fields(p, &["createdIpAddress"])
}

/// `createdIpAddress` as sent, else the caller's address.
fn created_ip(ctx: &Ctx, p: &Params) -> Result<String, ApiError> {
    Ok(p.opt(&["createdIpAddress"])?
        .filter(|v| !v.trim().is_empty())
        .unwrap_or_else(|| ctx.ip.to_string()))
}

/// The account supplement fields with `changes` applied, in part 3's order.
fn merged(before: &Fields, changes: &[(String, String)]) -> Fields {
    let mut out = Fields::new();
    for f in ACCOUNT_SUPPLEMENT_FIELDS {
        let v = changes
            .iter()
            .find(|(k, _)| k == f)
            .map(|(_, v)| Value::String(v.clone()))
            .or_else(|| before.get(*f).cloned())
            .unwrap_or_else(|| Value::String(String::new()));
        out.insert((*f).into(), v);
    }
    out
}

/// Stores the supplement `make` builds (given the time) over whatever its owner holds: a
/// create replaces an existing supplement.
async fn replace<R: Owned + Send + 'static>(ctx: Ctx, make: impl Fn(String) -> R + Send) -> Result<R, ApiError> {
    ctx.transact(async move |ctx, _| {
        let after = make(ctx.now());
        let before = records::owned::<R>(ctx.store(), ctx.client_id(), after.owner()).await?;
        let write = records::owned_put(ctx.client_id(), &after, before.map(|b| b.version))?;
        Ok(Plan::new(vec![write], after))
    })
    .await
}

/// createCustodyAccountSupplement (`strict`: the mailing address required) and
/// addCustodyAccountSupplement: `accountId` and part 3's fields. Answers `accountDetails`
/// echoing the stored supplement, statusDesc `Account added successfully.`.
async fn create_account(ctx: Ctx, p: Params, strict: bool) -> Result<Reply, ApiError> {
    check_fields(&ctx, &p, ACCOUNT_SUPPLEMENT_FIELDS)?;
    let account = p.req(&["accountId"])?;
    if strict {
        for f in REQUIRED_MAILING {
            p.req(&[f])?;
        }
    }
    let changes = sent(&p, ACCOUNT_SUPPLEMENT_FIELDS)?;
    let fields = merged(&Fields::new(), &changes);
    check_account_supplement(&fields)?;
    let ip = created_ip(&ctx, &p)?;
    let account = records::active_account(&ctx, &account).await?.rec.id;
    let after = replace(ctx, move |now| AccountSupplement {
        account_id: account.clone(),
        fields: fields.clone(),
        created_ip: ip.clone(),
        created_date: now.clone(),
        updated_date: now,
    })
    .await?;
    Ok(Reply::ok()
        .desc("Account added successfully.")
        .with_value("accountDetails", Value::Object(after.view())))
}

async fn create_strict(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    create_account(ctx, p, true).await
}

async fn create_lenient(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    create_account(ctx, p, false).await
}

/// `200`: the account has no supplement to update (the text names the old alias).
fn no_supplement() -> ApiError {
    let mut body = serde_json::Map::new();
    body.insert(
        "Error(s)".into(),
        Value::from(
            "No custody account supplement exists for this account; add one first with \
             createCustodyAccountSupplement (formerly addCustodyAccountSupplement)",
        ),
    );
    ApiError::CodedBody {
        code: "200",
        desc: "Custody account supplement does not exist.".into(),
        http: None,
        body,
    }
}

/// `POST /v3/updateCustodyAccountSupplement`: `accountId`; the fields sent replace the
/// stored ones, the others keep their values; `createdIpAddress` optional. `148` for an
/// unknown or inactive account, `200` without a supplement. Answers statusDesc `Account
/// updated successfully.` and `accountDetails`.
async fn update_account(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    check_fields(&ctx, &p, ACCOUNT_SUPPLEMENT_FIELDS)?;
    let account = p.req(&["accountId"])?;
    let changes = sent(&p, ACCOUNT_SUPPLEMENT_FIELDS)?;
    check_account_values(&merged(&Fields::new(), &changes))?;
    let ip = p.opt(&["createdIpAddress"])?.filter(|v| !v.trim().is_empty());
    let account = records::active_account(&ctx, &account).await?.rec.id;
    let after = ctx
        .transact(async move |ctx, _| {
            let before = records::owned::<AccountSupplement>(ctx.store(), ctx.client_id(), &account)
                .await?
                .ok_or_else(no_supplement)?;
            let mut after = before.rec.clone();
            after.fields = merged(&before.rec.fields, &changes);
            check_account_supplement(&after.fields)?;
            if let Some(ip) = &ip {
                after.created_ip.clone_from(ip);
            }
            after.updated_date = ctx.now();
            let write = records::owned_put(ctx.client_id(), &after, Some(before.version))?;
            Ok(Plan::new(vec![write], after))
        })
        .await?;
    Ok(Reply::ok()
        .desc("Account updated successfully.")
        .with_value("accountDetails", Value::Object(after.view())))
}

/// createCustodyPartySupplement and addCustodyPartySupplement: `partyId` (an individual
/// party of the caller, `198`) and part 3's optional fields, stored with their aliases
/// resolved; `politicallyExposedPersonDetails` is required when the party is exposed
/// (`106`). Answers `party details` echoing the stored values, statusDesc `Party added
/// successfully.`.
async fn create_party(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    check_fields(&ctx, &p, PARTY_SUPPLEMENT_FIELDS)?;
    let party = PartyId::param(&p, &["partyId"])?;
    let mut fields = Fields::new();
    for (k, v) in sent(&p, PARTY_SUPPLEMENT_FIELDS)? {
        let stored = party_field_value(&k, &v);
        fields.insert(k, Value::String(stored));
    }
    let exposed = fields.get("politicallyExposedPerson").and_then(Value::as_str) == Some("Yes");
    let details = fields
        .get("politicallyExposedPersonDetails")
        .and_then(Value::as_str)
        .unwrap_or("");
    if exposed && details.is_empty() {
        return Err(ApiError::missing("politicallyExposedPersonDetails"));
    }
    let ip = created_ip(&ctx, &p)?;
    let party = records::live::<Party>(&ctx, party.as_str(), no_party).await?.rec.id;
    let after = replace(ctx, move |now| PartySupplement {
        party_id: party.clone(),
        fields: fields.clone(),
        created_ip: ip.clone(),
        created_date: now.clone(),
        updated_date: now,
    })
    .await?;
    Ok(Reply::ok()
        .desc("Party added successfully.")
        .with_value("party details", Value::Object(after.view())))
}

pub fn routes() -> Routes {
    Routes::new()
        .op("createCustodyAccountSupplement", op!(create_strict))
        .op("addCustodyAccountSupplement", op!(create_lenient))
        .op("updateCustodyAccountSupplement", op!(update_account))
        .op("createCustodyPartySupplement", op!(create_party))
        .op("addCustodyPartySupplement", op!(create_party))
}
