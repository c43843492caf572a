//! Offering documents: addDocumentsforOffering, getDocumentsforOffering,
//! updateOfferingDocument (updateDocumentforOffering is the same operation under the other
//! name) and deleteDocumentsforOffering. Bytes in the blob store, one record per document
//! in the offering's partition (`shared::documents`, owner kind `OFFERING`), and a pointer
//! from each document ID to its offering (updateOfferingDocument takes the document ID
//! alone). PDFs are watermarked on upload with the offering's `stampingText`, or the upload's
//! own (see `watermark.rs`).
//! Shapes and decisions: `docs/offerings-documents.md`.

use serde::Serialize;
use serde_json::{Map, Value};
use shared::documents::{self, Document, NewFile, Owner, OFFERING_FILES};
use shared::ids::sortable;
use shared::model::ids::{no_offering, OfferingId};
use shared::model::offering::Offering;
use shared::model::validate;
use shared::records::Stored;
use shared::store::{Cond, Key, Val, Write};
use shared::webhooks::view_event;
use shared::{op, ApiError, Ctx, Params, Plan, Reply, Routes};

use crate::support::{live_offering, offering_id, offering_live_check};
use crate::watermark;

/// The owner kind of offering documents.
pub const KIND: &str = "OFFERING";
/// The answer of deleteDocumentsforOffering (as the other document deletes answer).
pub const DELETED: &str = "Document deleted successfully";
/// What getDocumentsforOffering answers, with body statusCode `404`, for an offering without
/// documents (observed).
pub const NONE_DESC: &str = "error in opening document";
/// The longest `documentFileReferenceCode`.
const MAX_REFERENCE: usize = 100;

fn owner(offering_id: &str) -> Owner<'_> {
    Owner {
        kind: KIND,
        id: offering_id,
    }
}

/// `106` for a `documentId` that names no document of the offering (unknown, deleted,
/// another offering's or another client's, or malformed); the observed code.
fn no_document() -> ApiError {
    ApiError::invalid("documentId", "Document does not exist")
}

/// Body statusCode `404` `error in opening document` (HTTP 404): the offering exists and
/// has no document.
fn no_documents() -> ApiError {
    ApiError::coded("404", NONE_DESC)
}

/// Where a document's offering is found from its ID: `<client>#OFFERINGDOC` / sortable ID,
/// attribute `o` = the offering ID.
fn pointer_key(client: &str, document_id: &str) -> Key {
    Key::new(format!("{client}#OFFERINGDOC"), sortable(document_id))
}

fn pointer_write(client: &str, document_id: &str, offering_id: &str) -> Write {
    let mut item = pointer_key(client, document_id).item();
    item.insert("o".into(), Val::S(offering_id.to_owned()));
    Write::Put {
        item,
        cond: Some(Cond::NotExists),
    }
}

/// The offering of a document of the caller, by the document's number.
async fn offering_of(ctx: &Ctx, number: u64) -> Result<Option<String>, ApiError> {
    let item = ctx
        .store()
        .get(&pointer_key(ctx.client_id(), &number.to_string()))
        .await?;
    Ok(item.and_then(|i| i.get("o").and_then(Val::as_str).map(str::to_owned)))
}

/// A file name without special characters: ASCII letters, digits, spaces, `-`, `_` and `.`
/// (part 2: "no special characters").
fn check_name(field: &str, name: &str) -> Result<(), ApiError> {
    let plain = name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, ' ' | '-' | '_' | '.'));
    if plain && name.chars().count() <= 200 {
        Ok(())
    } else {
        Err(ApiError::invalid(
            field,
            format!("{name}: no special characters (letters, digits, spaces, '-', '_' and '.' only)"),
        ))
    }
}

/// The optional values kept with each uploaded document: `templateName`, `approval`
/// (verbatim), `supervisorname`, `date` (`MM-DD-YYYY` or `YYYY-MM-DD`), `createdIpAddress`.
fn upload_extra(p: &Params) -> Result<Map<String, Value>, ApiError> {
    let mut extra = Map::new();
    for name in ["templateName", "approval", "supervisorname", "createdIpAddress"] {
        if let Some(v) = p.opt(&[name])?.filter(|v| !v.trim().is_empty()) {
            extra.insert(name.into(), Value::from(v));
        }
    }
    if let Some(v) = p.opt(&["date"])?.filter(|v| !v.trim().is_empty()) {
        extra.insert("date".into(), Value::from(validate::date("date", v.trim())?));
    }
    Ok(extra)
}

/// `stampingText` when sent (not blank): at most [`watermark::MAX_TEXT`] characters.
fn stamping_text(p: &Params) -> Result<Option<String>, ApiError> {
    match p.opt(&["stampingText"])? {
        Some(v) if !v.trim().is_empty() => {
            let v = v.trim().to_owned();
            if v.chars().count() > watermark::MAX_TEXT {
                return Err(ApiError::invalid(
                    "stampingText",
                    format!("at most {} characters", watermark::MAX_TEXT),
                ));
            }
            Ok(Some(v))
        }
        _ => Ok(None),
    }
}

fn is_pdf(name: &str) -> bool {
    name.rsplit_once('.')
        .is_some_and(|(_, e)| e.eq_ignore_ascii_case("pdf"))
}

/// Stamps `text` on every file (each must be a PDF that can be stamped: `106` naming its
/// field otherwise). The work runs off the request threads; a file that makes the PDF
/// reader fail in any way is refused like an unreadable one.
async fn watermark_files(files: &mut [NewFile], text: &str) -> Result<(), ApiError> {
    for f in files.iter() {
        if !is_pdf(&f.file_name) {
            return Err(ApiError::invalid(
                &f.upload.field,
                format!("only PDF files can be watermarked ({})", f.file_name),
            ));
        }
    }
    for f in files.iter_mut() {
        stamp(f, text)
            .await
            .map_err(|why| ApiError::invalid(&f.upload.field, format!("{}: {why}", f.file_name)))?;
    }
    Ok(())
}

/// Stamps `text` on file `f`, off the request threads; why not, when it cannot be (a reader
/// failure of any kind is an unreadable PDF, never the service's).
async fn stamp(f: &mut NewFile, text: &str) -> Result<(), String> {
    let (bytes, owned) = (f.upload.bytes.clone(), text.to_owned());
    match tokio::task::spawn_blocking(move || watermark::stamp(&bytes, &owned)).await {
        Ok(Ok(out)) => {
            f.upload.bytes = bytes::Bytes::from(out);
            Ok(())
        }
        Ok(Err(e)) => Err(e.message()),
        Err(e) => {
            tracing::warn!(error = %e, "PDF reader failed on an upload");
            Err("not a readable PDF".into())
        }
    }
}

/// The offering's own watermark (createOffering's `stampingText`, "watermark text") on each
/// upload that is a PDF it can be stamped on; other files, which part 1 says cannot be
/// watermarked, and PDFs the stamp cannot read are stored as sent. A blank text stamps
/// nothing; a text longer than a stamp takes is cut to its first [`watermark::MAX_TEXT`]
/// characters.
async fn stamp_pdfs(files: &mut [NewFile], text: &str) {
    let text: String = text.trim().chars().take(watermark::MAX_TEXT).collect();
    if text.is_empty() {
        return;
    }
    for f in files.iter_mut().filter(|f| is_pdf(&f.file_name)) {
        if let Err(why) = stamp(f, &text).await {
            tracing::info!(file = %f.file_name, why = %why, "PDF stored unstamped");
        }
    }
}

/// The addDocumentsforOffering record and webhook of a document.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Added {
    offering_id: String,
    document_reference_code: String,
    document_id: String,
    #[serde(rename = "documentURL")]
    document_url: String,
}

impl Added {
    async fn of(ctx: &Ctx, d: &Document) -> Result<Added, ApiError> {
        Ok(Added {
            offering_id: d.owner.clone(),
            document_reference_code: d.document_file_reference_code.clone(),
            document_id: d.id.clone(),
            document_url: d.url(ctx).await?,
        })
    }
}

/// The getDocumentsforOffering element: `templateName` null when none was sent.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Listed {
    created_date: String,
    document_file_reference_code: String,
    document_id: String,
    document_name: String,
    document_title: String,
    template_name: Value,
    url: String,
}

impl Listed {
    async fn of(ctx: &Ctx, d: &Document) -> Result<Listed, ApiError> {
        Ok(Listed {
            created_date: d.created_date.clone(),
            document_file_reference_code: d.document_file_reference_code.clone(),
            document_id: d.id.clone(),
            document_name: d.document_file_name.clone(),
            document_title: d.document_title.clone(),
            template_name: d.extra.get("templateName").cloned().unwrap_or(Value::Null),
            url: d.url(ctx).await?,
        })
    }
}

/// The updateOfferingDocument record and webhook.
#[derive(Clone, Serialize)]
#[serde(rename_all = "camelCase")]
struct Updated {
    document_id: String,
    document_title: String,
    #[serde(rename = "documentURL")]
    document_url: String,
    offering_id: String,
}

/// getDocumentsforOffering's webhook: the documents answered.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ListedEvent<'a> {
    offering_id: &'a str,
    document_ids: String,
}

/// deleteDocumentsforOffering's webhook.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct DeletedEvent<'a> {
    offering_id: &'a str,
    document_id: &'a str,
}

/// `POST /v3/addDocumentsforOffering` (multipart): `offeringId`, `documentTitle`
/// (`documentTitle0=a&documentTitle1=b`), `documentFileReferenceCode` (the client's tracking
/// number, kept on every file of the request), `file_name` (`filename0=...`, no special
/// characters), `userfile0`..; optional `templateName`, `approval`, `supervisorname`,
/// `date`, `createdIpAddress`, and `stampingText` (every file a PDF, stamped with it; without
/// it, the PDFs are stamped with the offering's own `stampingText` where they can be).
/// `.pdf`, `.xls`, `.docx` of at most 50 MB. Answers `document_details`, one
/// `{offeringId, documentReferenceCode, documentId, documentURL}` per file; fires
/// `addDocumentsforOffering` once per document with those fields.
pub async fn add(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let offering_id = offering_id(&p)?;
    let reference = p.req(&["documentFileReferenceCode"])?.trim().to_owned();
    if reference.chars().count() > MAX_REFERENCE {
        return Err(ApiError::invalid(
            "documentFileReferenceCode",
            format!("at most {MAX_REFERENCE} characters"),
        ));
    }
    p.req(&["file_name"])?;
    let mut files = documents::indexed_files(&ctx, &p, &OFFERING_FILES).await?;
    for f in &files {
        check_name("file_name", &f.file_name)?;
    }
    let mut extra = upload_extra(&p)?;
    let sent = stamping_text(&p)?;
    if let Some(text) = &sent {
        watermark_files(&mut files, text).await?;
        extra.insert("stampingText".into(), Value::from(text.as_str()));
    }
    let offering = live_offering(&ctx, &offering_id).await?;
    if sent.is_none() {
        stamp_pdfs(&mut files, &offering.rec.stamping_text).await;
    }
    let id = offering.rec.id.as_str();
    let client = ctx.client_id().to_owned();
    let (mut docs, _) = documents::store_with(&ctx, owner(id), files, &extra).await?;
    for d in docs.iter_mut() {
        d.document_file_reference_code.clone_from(&reference);
    }
    let result = commit_new(&ctx, client, id.to_owned(), docs.clone()).await;
    match result {
        Ok(records) => Ok(Reply::ok().with("document_details", records)),
        Err(e) => {
            documents::discard(&ctx, &docs).await;
            Err(e)
        }
    }
}

/// Commits the new documents, their pointers and the check that the offering is still live
/// (`138`), with one webhook per document; answers their records.
async fn commit_new(
    ctx: &Ctx,
    client: String,
    offering_id: String,
    docs: Vec<Document>,
) -> Result<Vec<Added>, ApiError> {
    ctx.transact(async move |ctx, _| {
        let mut writes = Vec::with_capacity(docs.len() * 2);
        let mut records = Vec::with_capacity(docs.len());
        let mut events = Vec::with_capacity(docs.len());
        for d in &docs {
            writes.push(d.write(&client, owner(&offering_id), Some(Cond::NotExists))?);
            writes.push(pointer_write(&client, &d.id, &offering_id));
            let r = Added::of(&ctx, d).await?;
            events.push(view_event("addDocumentsforOffering", &r));
            records.push(r);
        }
        Ok(Plan::new(writes, records)
            .check(offering_live_check(&client, &offering_id), no_offering())
            .events(events))
    })
    .await
}

/// `POST /v3/getDocumentsforOffering`: `offeringId`; `document_details`, the offering's
/// documents in upload order, each `{createdDate, documentFileReferenceCode, documentId,
/// documentName, documentTitle, templateName, url}` (`templateName` null when none was
/// sent; `url` signed, 15 minutes). No document: body statusCode `404` `error in opening
/// document` (observed). Unknown offering `138`, non-numeric `106` (CONTRACT's order).
pub async fn get(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let id = offering_id(&p)?;
    ctx.transact(async move |ctx, _| {
        let s = live_offering(&ctx, &id).await?;
        let docs = documents::list(&ctx, owner(&s.rec.id)).await?;
        if docs.is_empty() {
            return Err(no_documents());
        }
        let mut out = Vec::with_capacity(docs.len());
        for d in &docs {
            out.push(Listed::of(&ctx, d).await?);
        }
        let ids: Vec<&str> = docs.iter().map(|d| d.id.as_str()).collect();
        let event = view_event(
            "getDocumentsforOffering",
            &ListedEvent {
                offering_id: &s.rec.id,
                document_ids: ids.join(","),
            },
        );
        Ok(Plan::answer(Reply::ok().with("document_details", out)).event(event))
    })
    .await
}

/// A value updateOfferingDocument may change: `None` when not sent, `106` when sent blank.
fn changed(p: &Params, name: &str) -> Result<Option<String>, ApiError> {
    match p.opt(&[name])? {
        Some(v) if v.trim().is_empty() => Err(ApiError::missing(name)),
        Some(v) => Ok(Some(v.trim().to_owned())),
        None => Ok(None),
    }
}

/// The document an update names, with its live offering: the offering named by `offeringId`
/// when sent (`138` when unknown), then the document (`106` when unknown or another
/// offering's), then the document's own offering (`138` when deleted since).
async fn named_document(
    ctx: &Ctx,
    document_id: &str,
    offering_id: Option<&OfferingId>,
) -> Result<(Stored<Offering>, Document), ApiError> {
    let sent = match offering_id {
        Some(id) => Some(live_offering(ctx, id).await?),
        None => None,
    };
    let number = documents::document_number(document_id).ok_or_else(no_document)?;
    let of = offering_of(ctx, number).await?.ok_or_else(no_document)?;
    let offering = match sent {
        Some(s) if s.rec.id == of => s,
        Some(_) => return Err(no_document()),
        None => live_offering(ctx, &OfferingId::stored(of.clone())).await?,
    };
    let doc = documents::find(ctx, owner(&of), document_id)
        .await?
        .ok_or_else(no_document)?;
    Ok((offering, doc))
}

/// `updateOfferingDocument` (and `updateDocumentforOffering`, the same operation):
/// `documentId` (required), optional `offeringId` (must be the document's), and at least one
/// of `documentTitle`, `documentFileReferenceCode`, `templateName` (blank clears it). The
/// file itself is not replaced (delete and add again). Answers `document_details` =
/// `[{documentId, documentTitle, documentURL, offeringId}]` (observed); fires the name
/// called with those fields.
pub async fn update(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let document_id = p.req(&["documentId", "documentid"])?.trim().to_owned();
    let offering_id = match p.opt(&["offeringId"])? {
        Some(v) if !v.trim().is_empty() => Some(offering_id(&p)?),
        _ => None,
    };
    let title = changed(&p, "documentTitle")?;
    let reference = changed(&p, "documentFileReferenceCode")?;
    if reference.as_ref().is_some_and(|r| r.chars().count() > MAX_REFERENCE) {
        return Err(ApiError::invalid(
            "documentFileReferenceCode",
            format!("at most {MAX_REFERENCE} characters"),
        ));
    }
    let template = p.opt(&["templateName"])?.map(|v| v.trim().to_owned());
    if title.is_none() && reference.is_none() && template.is_none() {
        return Err(ApiError::missing("documentTitle"));
    }
    let (offering, mut doc) = named_document(&ctx, &document_id, offering_id.as_ref()).await?;
    if let Some(t) = title {
        doc.document_title = t;
    }
    if let Some(r) = reference {
        doc.document_file_reference_code = r;
    }
    match template {
        Some(t) if t.is_empty() => {
            doc.extra.shift_remove("templateName");
        }
        Some(t) => {
            doc.extra.insert("templateName".into(), Value::from(t));
        }
        None => {}
    }
    let client = ctx.client_id();
    let write = doc.write(client, owner(&offering.rec.id), Some(Cond::Exists))?;
    let live = offering_live_check(client, &offering.rec.id);
    let record = Updated {
        document_id: doc.id.clone(),
        document_title: doc.document_title.clone(),
        document_url: doc.url(&ctx).await?,
        offering_id: offering.rec.id.clone(),
    };
    let event = view_event(&ctx.operation, &record);
    let reply = Reply::ok().with("document_details", [record]);
    ctx.transact(async move |_, _| {
        Ok(Plan::answer(reply.clone())
            .check(write.clone(), no_document())
            .check(live.clone(), no_offering())
            .event(event.clone()))
    })
    .await
}

/// `POST /v3/deleteDocumentsforOffering`: `offeringId`, `documentId` (ID or short code);
/// removes the record and its pointer, then the bytes (a URL handed out before reads 404).
/// Answers `document_details` = `Document deleted successfully`; fires
/// `deleteDocumentsforOffering` with `offeringId`, `documentId`.
pub async fn delete(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let offering_id = offering_id(&p)?;
    let document_id = p.req(&["documentId", "documentid"])?.trim().to_owned();
    let s = live_offering(&ctx, &offering_id).await?;
    let doc = documents::find(&ctx, owner(&s.rec.id), &document_id)
        .await?
        .ok_or_else(no_document)?;
    let client = ctx.client_id();
    let delete = doc.delete(client, owner(&s.rec.id));
    let pointer = Write::Delete {
        key: pointer_key(client, &doc.id),
        cond: None,
    };
    let event = view_event(
        "deleteDocumentsforOffering",
        &DeletedEvent {
            offering_id: &s.rec.id,
            document_id: &doc.id,
        },
    );
    // A failed delete: deleted by a concurrent call in between.
    ctx.transact(async move |_, _| {
        Ok(Plan::answer(())
            .check(delete.clone(), no_document())
            .write(pointer.clone())
            .event(event.clone()))
    })
    .await?;
    documents::discard(&ctx, std::slice::from_ref(&doc)).await;
    Ok(Reply::ok().with_value("document_details", Value::from(DELETED)))
}

/// The offering-document routes.
pub fn routes() -> Routes {
    Routes::new()
        .upload("addDocumentsforOffering", op!(add))
        .op("getDocumentsforOffering", op!(get))
        .op("updateOfferingDocument", op!(update))
        .op("updateDocumentforOffering", op!(update))
        .op("deleteDocumentsforOffering", op!(delete))
}
