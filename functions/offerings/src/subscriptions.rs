//! Subscription templates of offerings and the e-signature account they come from:
//! addSubscriptionsforOffering, getSubscriptionsforOffering, updateSubscriptionsforOffering
//! (deprecated), deleteSubscriptionsforOffering and fetchSubscriptionDocuments. Templates
//! come from the client's connected e-signature account (`shared::providers::esign`, the
//! sandbox provider); an offering's active ones are `shared::records::subscription::active`,
//! what sendSubscriptionDocument sends. Shapes and decisions: `docs/offerings-documents.md`.

use serde::Serialize;
use serde_json::{Map, Value};
use shared::esign;
use shared::model::ids::{no_offering, OfferingId};
use shared::model::subscription::{OfferingTemplate, SUBSCRIPTION};
use shared::model::Stamps;
use shared::providers::esign::{ESignError, ESignProvider, Template};
use shared::records::subscription::{self, StoredTemplate};
use shared::webhooks::{view_event, Event};
use shared::{op, ApiError, Ctx, Params, Plan, Reply, Routes};

use crate::support::{live_offering, numeric_id, offering_id, offering_live_check};

/// getSubscriptionsforOffering's `document_details` when the offering has no template
/// (observed, with body statusCode `404` and statusDesc `Error(s)`).
pub const NONE: &str = "Template details does not exist.";
/// The answer of deleteSubscriptionsforOffering.
pub const DELETED: &str = "Template deleted successfully";
/// The longest template name.
const MAX_NAME: usize = 200;

/// `106`: `templateId` names no active template of the offering.
fn no_template() -> ApiError {
    ApiError::invalid("templateId", NONE)
}

/// `106`: the offering has this e-signature template already.
fn duplicate(key: &str) -> ApiError {
    ApiError::invalid(
        "file_name",
        format!("template {key} is already a subscription template of this offering"),
    )
}

/// The e-signature template a request names: `file_name` = `<templateId>--<templateName>`
/// (a `filename0=` prefix, the indexed upload form, is accepted), or `templatename` in that
/// form when `file_name` is absent. Answers the template ID and the name after `--`.
fn template_spec(p: &Params) -> Result<(String, String), ApiError> {
    let file_name = p.opt(&["file_name"])?.filter(|v| !v.trim().is_empty());
    let raw = match file_name {
        Some(v) => v,
        None => p
            .opt(&["templatename", "templateName"])?
            .filter(|v| v.contains("--"))
            .ok_or_else(|| ApiError::missing("file_name"))?,
    };
    let raw = raw.trim();
    let raw = raw.strip_prefix("filename0=").unwrap_or(raw);
    match raw.split_once("--") {
        Some((id, name)) if !id.trim().is_empty() && id.trim().len() <= 100 => {
            Ok((id.trim().to_owned(), name.trim().to_owned()))
        }
        _ => Err(ApiError::invalid("file_name", "must be <templateId>--<templateName>")),
    }
}

/// The template name to store: `templatename` when sent (not blank, not the
/// `<templateId>--<templateName>` form), else the name after `--`.
fn template_name(p: &Params, from_file: &str) -> Result<String, ApiError> {
    let sent = p
        .opt(&["templatename", "templateName"])?
        .map(|v| v.trim().to_owned())
        .filter(|v| !v.is_empty() && !v.contains("--"));
    let name = sent.unwrap_or_else(|| from_file.to_owned());
    if name.is_empty() {
        return Err(ApiError::missing("templatename"));
    }
    if name.chars().count() > MAX_NAME {
        return Err(ApiError::invalid(
            "templatename",
            format!("at most {MAX_NAME} characters"),
        ));
    }
    Ok(name)
}

/// The caller's connected account's template `key` (`106` without an account or for a
/// template it does not hold).
async fn account_template(ctx: &Ctx, key: &str) -> Result<Template, ApiError> {
    Ok(esign::provider(ctx).template(ctx.client_id(), key).await?)
}

/// getSubscriptionsforOffering's webhook: the templates answered.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct TemplatesEvent<'a> {
    offering_id: &'a str,
    template_ids: String,
}

/// deleteSubscriptionsforOffering's webhook.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct DeletedEvent<'a> {
    offering_id: &'a str,
    template_id: &'a str,
}

/// fetchSubscriptionDocuments's webhook: the account's templates.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct FetchedEvent {
    template_ids: String,
}

/// `POST /v3/addSubscriptionsforOffering`: `offeringId`, `templatename`, `file_name` =
/// `<templateId>--<templateName>` (the template of the connected e-signature account);
/// optional `createdIpAddress`. Answers `document_details` =
/// `[{offeringId, templateName, templateNameID}]` (`templateNameID` a JSON number); fires
/// `addSubscriptionsforOffering` with those fields. No connected account, a template the
/// account does not hold, or one the offering has already: `106`.
pub async fn add(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let offering_id = offering_id(&p)?;
    let (key, name_in_file) = template_spec(&p)?;
    let name = template_name(&p, &name_in_file)?;
    let created_ip = p
        .opt(&["createdIpAddress", "createdIPAddress"])?
        .filter(|v| !v.trim().is_empty())
        .unwrap_or_else(|| ctx.ip.to_string());
    let o = live_offering(&ctx, &offering_id).await?;
    let template = account_template(&ctx, &key).await?;
    let now = ctx.now();
    let t = OfferingTemplate {
        id: ctx.next_id(SUBSCRIPTION).await?,
        offering_id: o.rec.id.clone(),
        template_key: template.id,
        template_name: name,
        template_url: template.uri,
        stamps: Stamps::created(now, created_ip),
        deleted: false,
    };
    ctx.transact(async move |ctx, _| {
        let client = ctx.client_id();
        let (record, marker) = subscription::insert(client, &t)?;
        let summary = t.summary();
        let event = view_event("addSubscriptionsforOffering", &summary);
        let reply = Reply::ok().with("document_details", [summary]);
        Ok(Plan::new(vec![record], reply)
            .check(marker, duplicate(&t.template_key))
            .check(offering_live_check(client, &t.offering_id), no_offering())
            .event(event))
    })
    .await
}

/// `POST /v3/getSubscriptionsforOffering`: `offeringId`; `document_details`, the offering's
/// active templates newest first, each `{createdDate, offeringId, templateId (the
/// templateNameID), templateKey (the e-signature template ID), templateName, templateUrl}`.
/// None: body statusCode `404`, statusDesc `Error(s)`, `document_details` `Template details
/// does not exist.` (observed). Missing or non-numeric `offeringId` `106`; unknown `138`.
pub async fn get(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let id = offering_id(&p)?;
    ctx.transact(async move |ctx, _| {
        let s = live_offering(&ctx, &id).await?;
        let templates = subscription::active(ctx.store(), ctx.client_id(), &s.rec.id).await?;
        if templates.is_empty() {
            let mut body = Map::new();
            body.insert("document_details".into(), Value::from(NONE));
            return Err(ApiError::CodedBody {
                code: "404",
                desc: "Error(s)".into(),
                http: None,
                body,
            });
        }
        let ids: Vec<&str> = templates.iter().map(|t| t.id.as_str()).collect();
        let event = view_event(
            "getSubscriptionsforOffering",
            &TemplatesEvent {
                offering_id: &s.rec.id,
                template_ids: ids.join(","),
            },
        );
        let out: Vec<_> = templates.iter().map(OfferingTemplate::view).collect();
        Ok(Plan::answer(Reply::ok().with("document_details", out)).event(event))
    })
    .await
}

/// `offeringId` and `templateId` (the templateNameID), both numeric (`106`).
fn ids(p: &Params) -> Result<(OfferingId, String), ApiError> {
    Ok((offering_id(p)?, numeric_id(p, "templateId", |id| Ok(id.to_owned()))?))
}

/// The offering's live template `id`: `138` for the offering, `106` for the template.
async fn existing(ctx: &Ctx, offering_id: &OfferingId, id: &str) -> Result<StoredTemplate, ApiError> {
    let o = live_offering(ctx, offering_id).await?;
    subscription::find(ctx.store(), ctx.client_id(), &o.rec.id, id)
        .await?
        .ok_or_else(no_template)
}

/// The plan of a change of a stored template, with the check that its offering is live: a
/// new e-sign template the offering has already is `106`, a deleted offering `138`.
fn change_plan<T>(
    ctx: &Ctx,
    before: &StoredTemplate,
    after: &OfferingTemplate,
    answer: T,
    event: Event,
) -> Result<Plan<T>, ApiError> {
    let client = ctx.client_id();
    let (writes, marker) = subscription::update(client, before, after)?;
    let mut plan = Plan::new(writes, answer);
    if let Some(marker) = marker {
        plan = plan.check(marker, duplicate(&after.template_key));
    }
    Ok(plan
        .check(offering_live_check(client, &after.offering_id), no_offering())
        .event(event))
}

/// `POST /v3/updateSubscriptionsforOffering` (deprecated): `offeringId`, `templateId` (the
/// templateNameID), `templatename` (the new name); optional `file_name`
/// (`<templateId>--<templateName>`: another template of the account) and
/// `updatedIpAddress`. Answers as addSubscriptionsforOffering; fires
/// `updateSubscriptionsforOffering` with those fields.
pub async fn update(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let (offering_id, id) = ids(&p)?;
    let name = p.req(&["templatename", "templateName"])?.trim().to_owned();
    if name.chars().count() > MAX_NAME {
        return Err(ApiError::invalid(
            "templatename",
            format!("at most {MAX_NAME} characters"),
        ));
    }
    let new_key = match p.opt(&["file_name"])?.filter(|v| !v.trim().is_empty()) {
        Some(_) => Some(template_spec(&p)?.0),
        None => None,
    };
    let updated_ip = p
        .opt(&["updatedIpAddress", "updatedIPAddress"])?
        .filter(|v| !v.trim().is_empty())
        .unwrap_or_else(|| ctx.ip.to_string());
    ctx.transact(async move |ctx, _| {
        let before = existing(&ctx, &offering_id, &id).await?;
        let mut after = before.rec.clone();
        if let Some(key) = &new_key {
            let template = account_template(&ctx, key).await?;
            after.template_key = template.id;
            after.template_url = template.uri;
        }
        after.template_name.clone_from(&name);
        after.stamps.updated = ctx.now();
        after.stamps.updated_ip.clone_from(&updated_ip);
        let summary = after.summary();
        let event = view_event("updateSubscriptionsforOffering", &summary);
        let reply = Reply::ok().with("document_details", [summary]);
        change_plan(&ctx, &before, &after, reply, event)
    })
    .await
}

/// `POST /v3/deleteSubscriptionsforOffering`: `offeringId`, `templateId` (the
/// templateNameID); the template is virtually deleted (no longer sent, listed or counted as
/// the offering's; the e-signature template can be added again). Answers
/// `document_details` = `Template deleted successfully`; fires
/// `deleteSubscriptionsforOffering` with `offeringId`, `templateId`.
pub async fn delete(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let (offering_id, id) = ids(&p)?;
    ctx.transact(async move |ctx, _| {
        let before = existing(&ctx, &offering_id, &id).await?;
        let mut after = before.rec.clone();
        after.deleted = true;
        after.stamps.change(ctx.now(), ctx.ip.to_string());
        let event = view_event(
            "deleteSubscriptionsforOffering",
            &DeletedEvent {
                offering_id: &after.offering_id,
                template_id: &after.id,
            },
        );
        let reply = Reply::ok().with_value("document_details", Value::from(DELETED));
        change_plan(&ctx, &before, &after, reply, event)
    })
    .await
}

/// `POST /v3/fetchSubscriptionDocuments`: no parameters; `document_details`, the templates
/// of the connected e-signature account (`templateId`, `name`, `shared`, `description`,
/// `created`, `lastModified`, `pageCount`, `uri`, `folderName`, `owner`), an empty array
/// when it holds none; `106` when no account is connected. Fires
/// `fetchSubscriptionDocuments` with `templateIds`.
pub async fn fetch(ctx: Ctx, _p: Params) -> Result<Reply, ApiError> {
    ctx.transact(async move |ctx, _| {
        let templates = esign::provider(&ctx)
            .templates(ctx.client_id())
            .await?
            .ok_or(ESignError::NoAccount)?;
        let ids: Vec<&str> = templates.iter().map(|t| t.id.as_str()).collect();
        let event = view_event(
            "fetchSubscriptionDocuments",
            &FetchedEvent {
                template_ids: ids.join(","),
            },
        );
        let list =
            serde_json::to_value(&templates).map_err(|e| ApiError::internal_from("templates do not serialize", e))?;
        Ok(Plan::answer(Reply::ok().with_value("document_details", list)).event(event))
    })
    .await
}

/// The subscription routes.
pub fn routes() -> Routes {
    Routes::new()
        .op("addSubscriptionsforOffering", op!(add))
        .op("getSubscriptionsforOffering", op!(get))
        .op("updateSubscriptionsforOffering", op!(update))
        .op("deleteSubscriptionsforOffering", op!(delete))
        .op("fetchSubscriptionDocuments", op!(fetch))
}
