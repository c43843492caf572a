//! Trade documents: uploadTradeDocument, getTradeDocument, deleteTradeDocument and
//! updateTradeDocArchivestatus. The party-document rules apply (CONTRACT.md: PDF, JPG, JPEG,
//! PNG or TXT, at least 1 kB; the indexed multipart convention of `shared::documents`); the
//! bytes live in the blob store, one record per document in the trade's partition
//! (`<client>#DOCS#TRADE#<tradeId>`), reads hand out signed URLs valid for 15 minutes.
//!
//! Each record carries, in its `extra` values, `archiveStatus` (`0`/`1`, set by
//! updateTradeDocArchivestatus) and `virtualStatus` (`ACTIVE`, or `DELETED` once
//! deleteTradeDocument deleted it: deletes are virtual, part 1 Conventions 9; the bytes are
//! removed). Changes of a record are conditioned on its stored JSON being the one read, so a
//! concurrent change or delete is read again. Shapes and decisions: `docs/trades-documents.md`.

use serde::Serialize;
use serde_json::{Map, Value};
use shared::documents::{self, Document, Owner, INVESTOR_FILES};
use shared::records;
use shared::store::{CmpOp, Cond, Index, Query, Val, Write};
use shared::webhooks::view_event;
use shared::{op, ApiError, Ctx, Params, Plan, Reply, Routes};

use crate::support::{trade_id, trade_of};
use shared::webhooks::ids_event;

/// The answer of an upload (OBSERVED-MORE: uploadTradeDocument).
pub const UPLOADED: &str = "Document has been uploaded Successfully";
/// The answer of a delete (as every document delete of the service).
pub const DELETED: &str = "Document deleted successfully";

/// The documents' owner kind (blob keys `{client}/TRADE/{tradeId}/...`).
const TRADE: &str = "TRADE";
const ARCHIVE: &str = "archiveStatus";
const VIRTUAL: &str = "virtualStatus";
const ACTIVE: &str = "ACTIVE";
const GONE: &str = "DELETED";

fn owner(trade: &str) -> Owner<'_> {
    Owner { kind: TRADE, id: trade }
}

/// `106` for a document the parameter names that is not a live document of the trade
/// (unknown, deleted, another trade's or another client's, malformed).
fn no_document(name: &str) -> ApiError {
    ApiError::invalid(name, "Document does not exist")
}

fn extra_text<'a>(d: &'a Document, name: &str, default: &'a str) -> &'a str {
    d.extra.get(name).and_then(Value::as_str).unwrap_or(default)
}

fn archive_status(d: &Document) -> &str {
    extra_text(d, ARCHIVE, "0")
}

fn virtual_status(d: &Document) -> &str {
    extra_text(d, VIRTUAL, ACTIVE)
}

fn is_live(d: &Document) -> bool {
    virtual_status(d) != GONE
}

/// A document as stored: the record and its JSON (what a change is conditioned on).
struct Raw {
    doc: Document,
    json: String,
}

/// Every document record of a trade, deleted ones included, oldest first (one query).
async fn raw_documents(ctx: &Ctx, trade: &str) -> Result<Vec<Raw>, ApiError> {
    let q = Query::new(Index::Table, documents::partition(ctx.client_id(), owner(trade)));
    let mut out = Vec::new();
    for item in &records::query_all(ctx.store(), q).await? {
        let json = item.get("d").and_then(Val::as_str).unwrap_or("").to_owned();
        let doc: Document =
            serde_json::from_str(&json).map_err(|e| ApiError::internal_from("corrupt trade document record", e))?;
        out.push(Raw { doc, json });
    }
    Ok(out)
}

/// The names a document is known by.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct NamesView<'a> {
    #[serde(rename = "documentid")]
    documentid: &'a str,
    document_title: &'a str,
    document_file_name: &'a str,
    document_file_reference_code: &'a str,
}

fn names(d: &Document) -> NamesView<'_> {
    NamesView {
        documentid: &d.documentid,
        document_title: &d.document_title,
        document_file_name: &d.document_file_name,
        document_file_reference_code: &d.document_file_reference_code,
    }
}

/// getTradeDocument's element (OBSERVED-MORE, in its order): `id`, `tradeId`, `documentid`,
/// `documentTitle`, `documentFileName`, `documentFileReferenceCode`, `documentUrl`,
/// `createdDate`, `archive_status`, `virtualStatus`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ListedView<'a> {
    id: &'a str,
    trade_id: &'a str,
    #[serde(flatten)]
    names: NamesView<'a>,
    document_url: &'a str,
    created_date: &'a str,
    #[serde(rename = "archive_status")]
    archive_status: &'a str,
    virtual_status: &'a str,
}

fn listed_view<'a>(d: &'a Document, url: &'a str) -> ListedView<'a> {
    ListedView {
        id: &d.id,
        trade_id: &d.owner,
        names: names(d),
        document_url: url,
        created_date: &d.created_date,
        archive_status: archive_status(d),
        virtual_status: virtual_status(d),
    }
}

/// The record of updateTradeDocArchivestatus and deleteTradeDocument, also their webhooks'
/// fields (part 1's updateTradeDocArchivestatus payload): `tradeId`, `documentid`,
/// `documentTitle`, `documentFileName`, `documentFileReferenceCode`, `virtualStatus`,
/// `createdDate`, `archiveStatus`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RecordView<'a> {
    trade_id: &'a str,
    #[serde(flatten)]
    names: NamesView<'a>,
    virtual_status: &'a str,
    created_date: &'a str,
    archive_status: &'a str,
}

fn record(d: &Document) -> RecordView<'_> {
    RecordView {
        trade_id: &d.owner,
        names: names(d),
        virtual_status: virtual_status(d),
        created_date: &d.created_date,
        archive_status: archive_status(d),
    }
}

/// `POST /v3/uploadTradeDocument` (multipart): `tradeId`, `documentTitle`
/// (`documentTitle0=a&documentTitle1=b`), `file_name` (`filename0=...`; optional, the file's
/// own name otherwise), `userfile0`..; optional `createdIpAddress`. PDF, JPG, JPEG, PNG or
/// TXT of at least 1 kB. Any trade of the caller, cancelled and deleted ones included
/// (`188` for an unknown one). `document_details` = the upload message; webhook
/// `uploadTradeDocument` once per request, `tradeId`.
pub async fn upload(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let id = trade_id(&p)?;
    let files = documents::indexed_files(&ctx, &p, &INVESTOR_FILES).await?;
    // The trade first: no byte is stored for an unknown one.
    let trade = trade_of(&ctx, &id).await?.rec;
    let mut extra = Map::new();
    extra.insert(ARCHIVE.into(), Value::from("0"));
    extra.insert(VIRTUAL.into(), Value::from(ACTIVE));
    if let Some(ip) = p.opt(&["createdIpAddress"])?.filter(|v| !v.trim().is_empty()) {
        extra.insert("createdIpAddress".into(), Value::from(ip));
    }
    let (docs, writes) = documents::store_with(&ctx, owner(&trade.id), files, &extra).await?;
    let event = view_event("uploadTradeDocument", &trade.reference());
    let committed = ctx
        .transact(async move |_, _| Ok(Plan::new(writes.clone(), ()).event(event.clone())))
        .await;
    if let Err(e) = committed {
        documents::discard(&ctx, &docs).await;
        return Err(e);
    }
    Ok(Reply::ok().with_value("document_details", Value::from(UPLOADED)))
}

/// `POST /v3/getTradeDocument`: `tradeId`; `document_details` = the trade's documents that
/// are not deleted, oldest first (archived ones included, `archive_status` `1`), each as
/// OBSERVED-MORE shows it with a fresh signed `documentUrl`; `[]` when none. Webhook
/// `getTradeDocument`: `tradeId`, `documentIds` (comma separated).
pub async fn get(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let id = trade_id(&p)?;
    let (docs, urls) = ctx
        .transact(async move |ctx, _| {
            let trade = trade_of(&ctx, &id).await?.rec;
            let docs: Vec<Document> = documents::list(&ctx, owner(&trade.id))
                .await?
                .into_iter()
                .filter(is_live)
                .collect();
            let mut urls = Vec::with_capacity(docs.len());
            for d in &docs {
                urls.push(d.url(&ctx).await?);
            }
            let event = ids_event(
                "getTradeDocument",
                Some(("tradeId", &trade.id)),
                "documentIds",
                docs.iter().map(|d| d.id.clone()),
            );
            Ok(Plan::answer((docs, urls)).event(event))
        })
        .await?;
    let out: Vec<_> = docs.iter().zip(&urls).map(|(d, url)| listed_view(d, url)).collect();
    Ok(Reply::ok().with("document_details", out))
}

/// How a request names one document: its ID or short code (`documentId`), its reference
/// code (`documentFileReferenceCode`), or both (then they must name the same document).
struct Named {
    id: Option<String>,
    reference: Option<String>,
}

impl Named {
    fn parse(p: &Params, reference_required: bool) -> Result<Named, ApiError> {
        let non_blank = |v: Option<String>| v.map(|s| s.trim().to_owned()).filter(|s| !s.is_empty());
        let reference = non_blank(p.opt(&["documentFileReferenceCode"])?);
        if reference_required && reference.is_none() {
            return Err(ApiError::missing("documentFileReferenceCode"));
        }
        let id = non_blank(p.opt(&["documentId", "documentid"])?);
        if id.is_none() && reference.is_none() {
            return Err(ApiError::missing("documentId"));
        }
        Ok(Named { id, reference })
    }

    fn field(&self) -> &'static str {
        if self.reference.is_some() {
            "documentFileReferenceCode"
        } else {
            "documentId"
        }
    }

    fn matches(&self, d: &Document) -> bool {
        self.id.as_deref().is_none_or(|id| d.is(id))
            && self
                .reference
                .as_deref()
                .is_none_or(|r| d.document_file_reference_code == r)
    }

    /// The live document of the trade it names, as stored, or `106`.
    async fn find(&self, ctx: &Ctx, trade: &str) -> Result<Raw, ApiError> {
        raw_documents(ctx, trade)
            .await?
            .into_iter()
            .find(|r| is_live(&r.doc) && self.matches(&r.doc))
            .ok_or_else(|| no_document(self.field()))
    }
}

/// The write of `after` in place of the record read as `before`, conditioned on it being
/// unchanged (a concurrent change makes the operation read again).
fn replace(ctx: &Ctx, before: &Raw, after: &Document) -> Result<Write, ApiError> {
    let cond = Cond::Cmp("d".into(), CmpOp::Eq, Val::S(before.json.clone()));
    after.write(ctx.client_id(), owner(&after.owner), Some(cond))
}

/// `POST /v3/updateTradeDocArchivestatus`: `tradeId`, `documentFileReferenceCode` and
/// `archiveStatus` (`1`/`true` archives, `0`/`false` unarchives) required. An archived
/// document stays listed (`archive_status` `1`). Answers `document_details` = `[record]`
/// (the webhook's fields) and fires `updateTradeDocArchivestatus` with part 1's fields on
/// every successful call.
pub async fn update_archive_status(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let id = trade_id(&p)?;
    let named = Named::parse(&p, true)?;
    let archived = p.archive_status()?;
    let trade = trade_of(&ctx, &id).await?.rec;
    let after = ctx
        .transact(async move |ctx, _| {
            let before = named.find(&ctx, &trade.id).await?;
            let mut after = before.doc.clone();
            after
                .extra
                .insert(ARCHIVE.into(), Value::from(if archived { "1" } else { "0" }));
            let event = view_event("updateTradeDocArchivestatus", &record(&after));
            // Unchanged: nothing to write, the webhook still fires.
            let writes = if after == before.doc {
                Vec::new()
            } else {
                vec![replace(&ctx, &before, &after)?]
            };
            Ok(Plan::new(writes, after).event(event))
        })
        .await?;
    Ok(Reply::ok().with("document_details", [record(&after)]))
}

/// `POST /v3/deleteTradeDocument` (designed): `tradeId` and the document, by `documentId`
/// (ID or short code) or `documentFileReferenceCode` (both: the same document). A virtual
/// delete: the record stays with `virtualStatus` `DELETED` and leaves getTradeDocument; the
/// bytes are removed, so URLs handed out before read 404. Answers `document_details` =
/// `Document deleted successfully`; fires `deleteTradeDocument` with the archive record's
/// fields (`virtualStatus` `DELETED`).
pub async fn delete(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let id = trade_id(&p)?;
    let named = Named::parse(&p, false)?;
    let trade = trade_of(&ctx, &id).await?.rec;
    let after = ctx
        .transact(async move |ctx, _| {
            let before = named.find(&ctx, &trade.id).await?;
            let mut after = before.doc.clone();
            after.extra.insert(VIRTUAL.into(), Value::from(GONE));
            let event = view_event("deleteTradeDocument", &record(&after));
            Ok(Plan::new(vec![replace(&ctx, &before, &after)?], after).event(event))
        })
        .await?;
    documents::discard(&ctx, std::slice::from_ref(&after)).await;
    Ok(Reply::ok().with_value("document_details", Value::from(DELETED)))
}

/// The trade document routes.
pub fn routes() -> Routes {
    Routes::new()
        .upload("uploadTradeDocument", op!(upload))
        .op("getTradeDocument", op!(get))
        .op("deleteTradeDocument", op!(delete))
        .op("updateTradeDocArchivestatus", op!(update_archive_status))
}
