//! Trade notes: addTradeNote, getTradeNote, updateTradeNote, deleteTradeNote.
//!
//! A note is stored under `<client>#TRADENOTE#<tradeId>` / sortable note ID (one query reads
//! a trade's notes in the order they were added), JSON in `d` and a version `v`; a pointer
//! `<client>#TRADENOTEID` / note ID holds its `tradeId`, so that the operations that take a
//! `noteId` alone find it. Deletes are virtual.

use serde::{Deserialize, Serialize};
use shared::ids::sortable;
use shared::model::ids::numeric_id;
use shared::records;
use shared::store::{CmpOp, Cond, Index, Item, Key, Query, Val, Write};
use shared::webhooks::{view_event, Event};
use shared::{insert_array, op, ApiError, Ctx, Params, Plan, Reply, Routes};

use crate::support::{trade_id, trade_of};
use shared::webhooks::ids_event;

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
struct TradeNote {
    #[serde(rename = "noteId")]
    id: String,
    #[serde(rename = "tradeId")]
    trade_id: String,
    authorname: String,
    note: String,
    deleted: bool,
    #[serde(rename = "createdDate")]
    created: String,
    #[serde(rename = "updatedDate")]
    updated: String,
}

/// The note record: `noteId`, `tradeId`, `authorname`, `note`, `createdDate`,
/// `updatedDate` (part 2's note record with the IDs the other note operations take), also
/// the webhook of addTradeNote and updateTradeNote.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct NoteView<'a> {
    note_id: &'a str,
    trade_id: &'a str,
    authorname: &'a str,
    note: &'a str,
    created_date: &'a str,
    updated_date: &'a str,
}

/// deleteTradeNote's webhook.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct NoteRefView<'a> {
    note_id: &'a str,
    trade_id: &'a str,
}

impl TradeNote {
    fn view(&self) -> NoteView<'_> {
        NoteView {
            note_id: &self.id,
            trade_id: &self.trade_id,
            authorname: &self.authorname,
            note: &self.note,
            created_date: &self.created,
            updated_date: &self.updated,
        }
    }
}

fn note_pk(client: &str, trade_id: &str) -> String {
    format!("{client}#TRADENOTE#{trade_id}")
}

fn note_key(client: &str, trade_id: &str, note_id: &str) -> Key {
    Key::new(note_pk(client, trade_id), sortable(note_id))
}

fn pointer_key(client: &str, note_id: &str) -> Key {
    Key::new(format!("{client}#TRADENOTEID"), note_id)
}

/// `106`: no live note of the caller has this ID (as unknown document IDs).
fn no_note() -> ApiError {
    ApiError::invalid("noteId", "Note does not exist")
}

fn decode(item: &Item) -> Result<records::Stored<TradeNote>, ApiError> {
    records::decode(item, "corrupt trade note")
}

/// The put of a note at version `v`, conditioned by `cond`.
fn note_write(client: &str, n: &TradeNote, v: i64, cond: Cond) -> Result<Write, ApiError> {
    let mut item = note_key(client, &n.trade_id, &n.id).item();
    let json = serde_json::to_string(n).map_err(|e| ApiError::internal_from("note does not serialize", e))?;
    item.insert("d".into(), Val::S(json));
    item.insert("v".into(), Val::from(v));
    Ok(Write::Put { item, cond: Some(cond) })
}

/// The live note named by the `noteId` parameter (numeric, `106` otherwise) and its version;
/// `106` when unknown or deleted, or (when `tradeId` is sent) another trade's.
async fn live_note(ctx: &Ctx, p: &Params) -> Result<(TradeNote, i64), ApiError> {
    let id = numeric_id("noteId", &p.req(&["noteId"])?)?;
    let client = ctx.client_id();
    let Some(pointer) = ctx.store().get(&pointer_key(client, &id)).await? else {
        return Err(no_note());
    };
    let trade_id = pointer.get("tradeId").and_then(Val::as_str).unwrap_or("").to_owned();
    if let Some(sent) = p.opt(&["tradeId"])?.filter(|t| !t.trim().is_empty()) {
        if numeric_id("tradeId", &sent)? != trade_id {
            return Err(no_note());
        }
    }
    let item = ctx.store().get(&note_key(client, &trade_id, &id)).await?;
    match item.map(|i| decode(&i)).transpose()? {
        Some(s) if !s.rec.deleted => Ok((s.rec, s.version)),
        _ => Err(no_note()),
    }
}

/// `POST /v3/addTradeNote`: `tradeId` (`106` not numeric, `188` unknown), `authorName`,
/// `notes` required. Answers `notesDetails` = `[true, [note record]]`; fires `addTradeNote`
/// with the record's fields.
pub async fn add(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    ctx.check_fields(&p, &["authorName", "notes"])?;
    let id = trade_id(&p)?;
    let author = p.req(&["authorName"])?;
    let text = p.req(&["notes"])?;
    // Allocated on the first attempt, and kept by re-planned ones.
    let mut note_id: Option<String> = None;
    let note = ctx
        .transact(async move |ctx, _| {
            let t = trade_of(&ctx, &id).await?.rec;
            let now = ctx.now();
            let note = TradeNote {
                id: match &note_id {
                    Some(id) => id.clone(),
                    None => note_id.insert(ctx.next_id(shared::ids::NOTE).await?).clone(),
                },
                trade_id: t.id.clone(),
                authorname: author.clone(),
                note: text.clone(),
                deleted: false,
                created: now.clone(),
                updated: now,
            };
            let client = ctx.client_id();
            let mut pointer = pointer_key(client, &note.id).item();
            pointer.insert("tradeId".into(), Val::S(t.id.clone()));
            let writes = vec![
                note_write(client, &note, 1, Cond::NotExists)?,
                Write::Put {
                    item: pointer,
                    cond: Some(Cond::NotExists),
                },
            ];
            let event = view_event("addTradeNote", &note.view());
            Ok(Plan::new(writes, note).event(event))
        })
        .await?;
    Ok(Reply::ok().with_value("notesDetails", insert_array(note.view())))
}

/// `POST /v3/getTradeNote`: `tradeId` required (`188` unknown); `noteId` optional (only that
/// note; `106` when it is not a live note of the trade). Answers `notesDetails` = the live
/// note records, oldest first (empty array when none). Fires `getTradeNote` with `tradeId`
/// and `noteIds`.
pub async fn get(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let id = trade_id(&p)?;
    let notes = ctx
        .transact(async move |ctx, _| {
            let t = trade_of(&ctx, &id).await?.rec;
            let only = match p.opt(&["noteId"])?.filter(|n| !n.trim().is_empty()) {
                Some(n) => Some(numeric_id("noteId", &n)?),
                None => None,
            };
            let q = Query::new(Index::Table, note_pk(ctx.client_id(), &t.id));
            let mut notes = Vec::new();
            for item in &records::query_all(ctx.store(), q).await? {
                let n = decode(item)?.rec;
                if !n.deleted && only.as_ref().is_none_or(|o| *o == n.id) {
                    notes.push(n);
                }
            }
            if only.is_some() && notes.is_empty() {
                return Err(no_note());
            }
            let event = ids_event(
                "getTradeNote",
                Some(("tradeId", &t.id)),
                "noteIds",
                notes.iter().map(|n| n.id.clone()),
            );
            Ok(Plan::answer(notes).event(event))
        })
        .await?;
    let records: Vec<_> = notes.iter().map(TradeNote::view).collect();
    Ok(Reply::ok().with("notesDetails", records))
}

/// Writes `change` of the note named by `noteId`, conditioned on the version read.
async fn change(
    ctx: &Ctx,
    p: Params,
    change: impl Fn(&mut TradeNote) + Send,
    event: impl Fn(&TradeNote) -> Event + Send,
) -> Result<TradeNote, ApiError> {
    ctx.transact(async move |ctx, _| {
        let (before, v) = live_note(&ctx, &p).await?;
        let mut after = before.clone();
        change(&mut after);
        after.updated = ctx.now();
        let cond = Cond::Cmp("v".into(), CmpOp::Eq, Val::from(v));
        let write = note_write(ctx.client_id(), &after, v + 1, cond)?;
        let event = event(&after);
        Ok(Plan::new(vec![write], after).event(event))
    })
    .await
}

/// `POST /v3/updateTradeNote`: `noteId` and `notes` required; `authorName` optional (kept when
/// not sent); `tradeId` optional (when sent the note must be that trade's). Answers
/// `notesDetails` = `[note record]`; fires `updateTradeNote` with its fields.
pub async fn update(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    ctx.check_fields(&p, &["authorName", "notes"])?;
    let text = p.req(&["notes"])?;
    let author = p.opt(&["authorName"])?.filter(|a| !a.trim().is_empty());
    let after = change(
        &ctx,
        p,
        move |n| {
            n.note.clone_from(&text);
            if let Some(a) = &author {
                n.authorname.clone_from(a);
            }
        },
        |n| view_event("updateTradeNote", &n.view()),
    )
    .await?;
    Ok(Reply::ok().with("notesDetails", [after.view()]))
}

/// `POST /v3/deleteTradeNote`: `noteId` required; a virtual delete (the note leaves
/// getTradeNote). Answers `notesDetails` = `Trade notes deleted successfully`; fires
/// `deleteTradeNote` with `noteId` and `tradeId`.
pub async fn delete(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    change(
        &ctx,
        p,
        |n| n.deleted = true,
        |n| {
            let view = NoteRefView {
                note_id: &n.id,
                trade_id: &n.trade_id,
            };
            view_event("deleteTradeNote", &view)
        },
    )
    .await?;
    Ok(Reply::ok().with("notesDetails", "Trade notes deleted successfully"))
}

/// The note routes.
pub fn routes() -> Routes {
    Routes::new()
        .op("addTradeNote", op!(add))
        .op("getTradeNote", op!(get))
        .op("updateTradeNote", op!(update))
        .op("deleteTradeNote", op!(delete))
}
