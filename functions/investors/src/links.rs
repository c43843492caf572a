//! Links: createLink, getLink, deleteLink, getAllLinks (deprecated) and `GET /v3/links`.
//!
//! Two marker items make the link rules hold under concurrency, written in the link's own
//! transaction: one per (account, related entry) pair (a second link between them is a
//! duplicate) and one per account with a primary party (at most one).

use serde_json::Value;
use shared::list::ListSpec;
use shared::model::link::{AccountLinks, LinkRef, LINK_TYPES, RELATED_TYPES};
use shared::model::Link;
use shared::records::link::{account_link_ids, pair_key, primary_key};
use shared::records::{self, Record};
use shared::store::{Cond, Val, Write};
use shared::webhooks::view_event;
use shared::{insert_array, ApiError, Ctx, Params, Plan, Reply};

use crate::accounts::{existing_account, live_account};
use crate::parties::live_party;
use http::Method;
use shared::auth::PiiLevel;
use shared::http::router::{Handler, ScopeReq};
use shared::{list_op, op, Routes};

/// The canonical spelling of `v` among `allowed` (matched case-insensitively), or `106`.
fn one_of(name: &str, v: &str, allowed: &[&'static str]) -> Result<&'static str, ApiError> {
    allowed
        .iter()
        .find(|a| a.eq_ignore_ascii_case(v.trim()))
        .copied()
        .ok_or_else(|| ApiError::invalid(name, format!("must be one of {}", allowed.join(", "))))
}

/// `PUT /v3/createLink`.
pub async fn create(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let first_type = one_of("firstEntryType", &p.req(&["firstEntryType"])?, &["Account"])?;
    let first = p.req(&["firstEntry"])?;
    let related_type = one_of("relatedEntryType", &p.req(&["relatedEntryType"])?, RELATED_TYPES)?;
    let related = p.req(&["relatedEntry"])?;
    let link_type = one_of("linkType", &p.req(&["linkType"])?, LINK_TYPES)?;
    let notes = p.text(&["notes"])?;
    let primary = match p.int("primary_value")? {
        None | Some(0) => false,
        Some(1) => true,
        Some(_) => return Err(ApiError::invalid("primary_value", "must be 1 or 0")),
    };

    live_account(&ctx, &first).await?;
    match related_type {
        "Account" => live_account(&ctx, &related).await.map(drop)?,
        "IndivACParty" => live_party(&ctx, &related).await.map(drop)?,
        _ => crate::entities::live_entity(&ctx, &related).await.map(drop)?,
    }
    if first == related {
        return Err(ApiError::coded_http(
            "1400",
            400,
            "An account cannot be linked to itself",
        ));
    }
    if primary && related_type != "IndivACParty" {
        return Err(ApiError::coded_http(
            "1422",
            422,
            "A primary party must be an individual party (IndivACParty)",
        ));
    }

    let mut link = Link {
        id: ctx.next_id(shared::ids::LINK).await?,
        first_entry_type: first_type.into(),
        first_entry: first.clone(),
        related_entry_type: related_type.into(),
        related_entry: related.clone(),
        link_type: link_type.into(),
        notes,
        primary: if primary { "1" } else { "0" }.into(),
        ..Link::default()
    };
    link.created = ctx.now();
    link.updated = link.created.clone();

    let client = ctx.client_id();
    let marker = |key: shared::store::Key| {
        let mut item = key.item();
        item.insert("linkId".into(), Val::S(link.id.clone()));
        item.insert("relatedEntry".into(), Val::S(link.related_entry.clone()));
        Write::Put {
            item,
            cond: Some(Cond::NotExists),
        }
    };
    let writes = records::insert(client, &link)?;
    let pair = marker(pair_key(client, &first, &related));
    let primary_slot = primary.then(|| marker(primary_key(client, &first)));
    let event = view_event("createLink", &link.event_view());
    let account = first.clone();
    ctx.transact(async move |ctx, _| {
        let mut plan = Plan::new(writes.clone(), ())
            .check(
                pair.clone(),
                ApiError::coded_http("1400", 400, "The link already exists"),
            )
            .event(event.clone());
        if let Some(slot) = &primary_slot {
            let mut slot = slot.clone();
            // A primary whose party was deleted or archived no longer counts (a trade would
            // find no active primary party, `135`): the new link takes its slot and the old link
            // stops being primary.
            if let Some(old) = inactive_primary(&ctx, &account).await? {
                let mut demoted = old.rec.clone();
                demoted.primary = "0".into();
                demoted.updated = ctx.now();
                plan = plan.writes(records::replace(ctx.client_id(), &old, &demoted)?);
                if let Write::Put { cond, .. } = &mut slot {
                    *cond = Some(Cond::Cmp(
                        "linkId".into(),
                        shared::store::CmpOp::Eq,
                        Val::S(old.rec.id.clone()),
                    ));
                }
            }
            plan = plan.check(
                slot,
                ApiError::coded_http("1422", 422, "The account already has a primary party"),
            );
        }
        Ok(plan)
    })
    .await?;
    Ok(Reply::ok().with("linkDetails", insert_array(LinkRef { id: &link.id })))
}

/// The account's primary link when its party has been deleted or archived since (one read of
/// the slot, then of its link and party only when there is one).
async fn inactive_primary(ctx: &Ctx, account: &str) -> Result<Option<records::Stored<Link>>, ApiError> {
    let (store, client) = (ctx.store(), ctx.client_id());
    let Some(slot) = store.get(&primary_key(client, account)).await? else {
        return Ok(None);
    };
    let Some(link_id) = slot.get("linkId").and_then(Val::as_str) else {
        return Ok(None);
    };
    let Some(old) = records::load::<Link>(store, client, link_id).await? else {
        return Ok(None);
    };
    let party = records::load::<shared::model::Party>(store, client, &old.rec.related_entry).await?;
    Ok(party.is_none_or(|p| p.rec.deleted || p.rec.archived).then_some(old))
}

/// A live link of the caller by its numeric `id`: `106` when not numeric, `404` when unknown.
async fn live_link(ctx: &Ctx, p: &Params) -> Result<records::Stored<Link>, ApiError> {
    let id = p.req(&["id"])?;
    if id.trim().parse::<u64>().is_err() {
        return Err(ApiError::invalid("id", "Numeric values only"));
    }
    records::live::<Link>(ctx, id.trim(), || ApiError::coded("404", "Link does not exist")).await
}

/// `POST /v3/getLink`.
pub async fn get(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let s = live_link(&ctx, &p).await?;
    Ok(Reply::ok().with("linkDetails", [s.rec.view()]))
}

/// `POST /v3/deleteLink`: a virtual delete that frees the pair and the primary slot.
pub async fn delete(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let stored = live_link(&ctx, &p).await?;
    let mut link = stored.rec.clone();
    link.deleted = true;
    link.updated = ctx.now();
    let client = ctx.client_id();
    let mine = |key| Write::Delete {
        key,
        cond: Some(Cond::Cmp(
            "linkId".into(),
            shared::store::CmpOp::Eq,
            Val::S(link.id.clone()),
        )),
    };
    let mut writes = records::replace(client, &stored, &link)?;
    writes.push(mine(pair_key(client, &link.first_entry, &link.related_entry)));
    if link.primary == "1" {
        writes.push(mine(primary_key(client, &link.first_entry)));
    }
    let event = view_event("deleteLink", &link.event_view());
    // A concurrent delete of the same link fails any of these conditions: it is gone.
    let gone = ApiError::coded("404", "Link does not exist");
    ctx.transact(async move |_, _| {
        Ok(writes
            .iter()
            .fold(Plan::answer(()), |plan, w| plan.check(w.clone(), gone.clone()))
            .event(event.clone()))
    })
    .await?;
    Ok(Reply::ok().desc("Link has been deleted successfully!"))
}

/// `POST /v3/getAllLinks` (deprecated; `GET /v3/links` replaces it): `accountId` required
/// (`106`), unknown account `148`; `linkDetails`, an array of the account's live link records
/// (where it is the `firstEntry`), oldest first. The webhook carries `accountId` and
/// `linkIds` (comma separated).
pub async fn get_all(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let account = p.req(&["accountId"])?;
    let a = existing_account(&ctx, &account).await?.rec;
    let ids = account_link_ids(ctx.store(), ctx.client_id(), &a.id).await?;
    let mut links = Vec::with_capacity(ids.len());
    for id in &ids {
        if let Some(s) = records::load::<Link>(ctx.store(), ctx.client_id(), id).await? {
            if !s.rec.deleted() {
                links.push(Value::Object(s.rec.view()));
            }
        }
    }
    let link_ids = ids.join(",");
    let event = view_event(
        "getAllLinks",
        &AccountLinks {
            account_id: &a.id,
            link_ids: &link_ids,
        },
    );
    ctx.transact(async move |_, _| Ok(Plan::answer(()).event(event.clone())))
        .await?;
    Ok(Reply::ok().with_value("linkDetails", Value::Array(links)))
}

const LIST: ListSpec = ListSpec::newest_first("id").numbers(&["primary_value"]).texts(&[
    "firstEntryType",
    "firstEntry",
    "relatedEntryType",
    "relatedEntry",
    "linkType",
    "notes",
]);

/// `GET /v3/links`: scope `link.read`, newest first.
const LIST_OP: Handler = list_op!(Link, LIST, "links", |l, _ctx| l.view());

/// The link routes.
pub fn routes() -> Routes {
    const READ: ScopeReq = ScopeReq::new("link.read", PiiLevel::High, "link.read");
    Routes::new()
        .op("createLink", op!(create))
        .op("getLink", op!(get))
        .op("deleteLink", op!(delete))
        .op("getAllLinks", op!(get_all))
        .resource(Method::GET, "/v3/links", READ, LIST_OP)
}
