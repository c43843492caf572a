//! Investor documents: uploadAccountDocument, getAccountDocument, deleteAccountDocument,
//! uploadPartyDocument, getPartyDocument, deletePartyDocument, uploadEntityDocument,
//! getEntityDocument, deleteEntityDocument, requestUploadPartyDocument and
//! getuploadPartyDocument. The bytes live in the blob store, one record per document in its
//! owner's partition (`shared::documents`); reads hand out signed URLs valid for 15 minutes.
//! Shapes and decisions: `docs/investors-documents.md`.

use http::Method;
use serde_json::{Map, Value};
use shared::auth::PiiLevel;
use shared::documents::{self, Document, NewFile, Owner, ENTITY_FILES, INVESTOR_FILES};
use shared::http::router::ScopeReq;
use shared::model::account::AccountRef;
use shared::model::kyc::KycRequest;
use shared::model::party::PartyRef;
use shared::records;
use shared::reviews::no_request;
use shared::store::Write;
use shared::webhooks::{view_event, Event};
use shared::{op, Routes};
use shared::{ApiError, Ctx, Params, Plan, Reply};

use crate::accounts::{existing_account, live_account};
use crate::entities::live_entity;
use crate::parties::live_party;

/// The answer of every upload (OBSERVED-MORE: uploadPartyDocument, uploadTradeDocument,
/// uploadVerificationDocument).
pub const UPLOADED: &str = "Document has been uploaded Successfully";
/// The answer of every delete (OPERATIONS: deletePartyDocument).
pub const DELETED: &str = "Document deleted successfully";

const ACCOUNT: &str = "ACCOUNT";
const PARTY: &str = "PARTY";
const ENTITY: &str = "ENTITY";
/// Documents sent through requestUploadPartyDocument, under the investor they are for.
const REQUESTED: &str = "KYCDOC";

/// `106` for a `documentId` that names no document of the owner (unknown, another owner's,
/// another client's, deleted, or malformed).
fn no_document() -> ApiError {
    ApiError::invalid("documentId", "Document does not exist")
}

/// The `documentId` of a read: optional, blank counts as absent.
fn document_id(p: &Params) -> Result<Option<String>, ApiError> {
    Ok(p.opt(&["documentId", "documentid"])?.filter(|v| !v.trim().is_empty()))
}

/// The `createdIpAddress` a client may send with an upload, kept with each document.
fn upload_extra(p: &Params) -> Result<Map<String, Value>, ApiError> {
    let mut extra = Map::new();
    if let Some(ip) = p.opt(&["createdIpAddress"])?.filter(|v| !v.is_empty()) {
        extra.insert("createdIpAddress".into(), Value::from(ip));
    }
    Ok(extra)
}

/// Stores the files of an upload and commits their records with `more` writes, `events`
/// and the check that the owner is still as `holder` finds it (a concurrent delete, or a
/// change of the owner, is read again; an owner gone meanwhile fails the upload with its
/// code). On any failure the stored bytes are removed again: a rejected upload leaves nothing.
pub(crate) async fn commit_upload(
    ctx: &Ctx,
    owner: Owner<'_>,
    files: Vec<NewFile>,
    extra: &Map<String, Value>,
    more: Vec<Write>,
    events: Vec<Event>,
    holder: Holder,
) -> Result<Vec<Document>, ApiError> {
    // The owner is checked before any byte is stored; the first attempt commits that check.
    let mut checked = Some(holder.check(ctx).await?);
    let (docs, mut writes) = documents::store_with(ctx, owner, files, extra).await?;
    writes.extend(more);
    let committed = ctx
        .transact(async move |ctx, _| {
            let check = match checked.take() {
                Some(check) => check,
                None => holder.check(&ctx).await?,
            };
            Ok(Plan::new(writes.clone(), ()).write(check).events(events.clone()))
        })
        .await;
    if let Err(e) = committed {
        documents::discard(ctx, &docs).await;
        return Err(e);
    }
    Ok(docs)
}

/// The record an upload's documents belong to, checked unchanged in their transaction.
pub(crate) enum Holder {
    /// A live, active account (`148` otherwise).
    Account(String),
    /// An individual party (`198` otherwise).
    Party(String),
    /// An entity (`198` otherwise).
    Entity(String),
    /// requestUploadPartyDocument's investor, its manual request still the one named (`152`).
    Request { investor: String, request_id: String },
}

impl Holder {
    async fn check(&self, ctx: &Ctx) -> Result<Write, ApiError> {
        match self {
            Holder::Account(id) => account_check(ctx, id).await,
            Holder::Party(id) => party_check(ctx, id).await,
            Holder::Entity(id) => entity_check(ctx, id).await,
            Holder::Request { investor, request_id } => {
                let check = investor_check(ctx, investor).await?;
                let now = records::load::<KycRequest>(ctx.store(), ctx.client_id(), investor).await?;
                match now {
                    Some(r) if !r.rec.deleted && r.rec.request_id == *request_id => Ok(check),
                    _ => Err(no_request()),
                }
            }
        }
    }
}

/// The check that a live, active account is unchanged (`148` otherwise).
async fn account_check(ctx: &Ctx, id: &str) -> Result<Write, ApiError> {
    Ok(records::unchanged(ctx.client_id(), &live_account(ctx, id).await?))
}

/// The check that an individual party exists unchanged (`198` otherwise).
async fn party_check(ctx: &Ctx, id: &str) -> Result<Write, ApiError> {
    Ok(records::unchanged(ctx.client_id(), &live_party(ctx, id).await?))
}

/// The check that an entity exists unchanged (`198` otherwise).
async fn entity_check(ctx: &Ctx, id: &str) -> Result<Write, ApiError> {
    Ok(records::unchanged(ctx.client_id(), &live_entity(ctx, id).await?))
}

/// An investor ID of requestKycAml: an account (`A…`, `148`), an entity (`E…`) or an
/// individual party (anything else), `198` for those two.
async fn investor_check(ctx: &Ctx, id: &str) -> Result<Write, ApiError> {
    if id.starts_with('A') {
        account_check(ctx, id).await
    } else if id.starts_with('E') {
        entity_check(ctx, id).await
    } else {
        party_check(ctx, id).await
    }
}

/// The views of an owner's documents (all of them, oldest first, or the one `documentId`
/// names: `106` when it names none), the owner's ID under `owner_field`.
async fn views(ctx: &Ctx, owner: Owner<'_>, id: Option<&str>, owner_field: &str) -> Result<Value, ApiError> {
    let docs = match id {
        Some(id) => vec![documents::find(ctx, owner, id).await?.ok_or_else(no_document)?],
        None => documents::list(ctx, owner).await?,
    };
    let mut out = Vec::with_capacity(docs.len());
    for d in &docs {
        out.push(Value::Object(d.view(ctx, owner_field).await?));
    }
    Ok(Value::Array(out))
}

/// Removes one document of an owner: its record, then its bytes (a signed URL handed out
/// before reads nothing afterwards). `106` when `documentId` names none.
async fn remove(ctx: &Ctx, owner: Owner<'_>, id: &str, key: &str) -> Result<Reply, ApiError> {
    let doc = documents::find(ctx, owner, id).await?.ok_or_else(no_document)?;
    let delete = doc.delete(ctx.client_id(), owner);
    // A failed condition: deleted by a concurrent call in between.
    ctx.transact(async move |_, _| Ok(Plan::answer(()).check(delete.clone(), no_document())))
        .await?;
    documents::discard(ctx, std::slice::from_ref(&doc)).await;
    Ok(Reply::ok().with_value(key, Value::from(DELETED)))
}

fn uploaded() -> Reply {
    Reply::ok().with_value("document_details", Value::from(UPLOADED))
}

/// `POST /v3/uploadAccountDocument` (multipart): `accountId`, `documentTitle`
/// (`documentTitle0=a&documentTitle1=b`), `file_name` (`filename0=...`, optional: the
/// file's own name otherwise), `userfile0`..; PDF, JPG, JPEG, PNG or TXT of at least 1 kB.
/// `document_details` = the upload message; webhook `uploadAccountDocument` once, `accountId`.
pub async fn upload_account(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let id = p.req(&["accountId"])?;
    let files = documents::indexed_files(&ctx, &p, &INVESTOR_FILES).await?;
    let owner = Owner { kind: ACCOUNT, id: &id };
    let event = view_event("uploadAccountDocument", &AccountRef { id: &id });
    let holder = Holder::Account(id.clone());
    commit_upload(&ctx, owner, files, &upload_extra(&p)?, Vec::new(), vec![event], holder).await?;
    Ok(uploaded())
}

/// `POST /v3/getAccountDocument`: `accountId`, optional `documentId` (ID or short code);
/// `accountDocumentDetails` array of {`id`, `documentid`, `accountId`, `documentTitle`,
/// `documentFileName`, `documentFileReferenceCode`, `documentUrl`, `createdDate`}. An
/// archived account's documents are readable.
pub async fn get_account(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let id = p.req(&["accountId"])?;
    let doc = document_id(&p)?;
    existing_account(&ctx, &id).await?;
    let owner = Owner { kind: ACCOUNT, id: &id };
    let list = views(&ctx, owner, doc.as_deref(), "accountId").await?;
    Ok(Reply::ok().with_value("accountDocumentDetails", list))
}

/// `POST /v3/deleteAccountDocument`: `accountId`, `documentId`; `accountDocumentDetails` =
/// `Document deleted successfully`.
pub async fn delete_account(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let id = p.req(&["accountId"])?;
    let doc = p.req(&["documentId", "documentid"])?;
    live_account(&ctx, &id).await?;
    remove(&ctx, Owner { kind: ACCOUNT, id: &id }, &doc, "accountDocumentDetails").await
}

/// `POST /v3/uploadPartyDocument` (multipart): `partyId` of an individual, then as
/// uploadAccountDocument; webhook `uploadPartyDocument` once, `partyId`.
pub async fn upload_party(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let id = p.req(&["partyId"])?;
    let files = documents::indexed_files(&ctx, &p, &INVESTOR_FILES).await?;
    let owner = Owner { kind: PARTY, id: &id };
    let event = view_event("uploadPartyDocument", &PartyRef { id: &id });
    let holder = Holder::Party(id.clone());
    commit_upload(&ctx, owner, files, &upload_extra(&p)?, Vec::new(), vec![event], holder).await?;
    Ok(uploaded())
}

/// `POST /v3/getPartyDocument`: `partyId`, optional `documentId`; `partyDocumentDetails`
/// array of {`id`, `documentid`, `partyid`, `documentTitle`, `documentFileName`,
/// `documentFileReferenceCode`, `documentUrl`, `createdDate`}.
pub async fn get_party(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let id = p.req(&["partyId"])?;
    let doc = document_id(&p)?;
    live_party(&ctx, &id).await?;
    let list = views(&ctx, Owner { kind: PARTY, id: &id }, doc.as_deref(), "partyid").await?;
    Ok(Reply::ok().with_value("partyDocumentDetails", list))
}

/// `POST /v3/deletePartyDocument`: `partyId`, `documentId`; `partyDocumentDetails` =
/// `Document deleted successfully`.
pub async fn delete_party(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let id = p.req(&["partyId"])?;
    let doc = p.req(&["documentId", "documentid"])?;
    live_party(&ctx, &id).await?;
    remove(&ctx, Owner { kind: PARTY, id: &id }, &doc, "partyDocumentDetails").await
}

/// `POST /v3/uploadEntityDocument` (multipart): the entity ID in `partyId` (`entityId`
/// accepted too), then as uploadPartyDocument with PDF, JPG, JPEG or PNG only; no webhook.
pub async fn upload_entity(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let id = p.req(&["partyId", "entityId"])?;
    let files = documents::indexed_files(&ctx, &p, &ENTITY_FILES).await?;
    let owner = Owner { kind: ENTITY, id: &id };
    let holder = Holder::Entity(id.clone());
    commit_upload(&ctx, owner, files, &upload_extra(&p)?, Vec::new(), Vec::new(), holder).await?;
    Ok(uploaded())
}

/// `POST /v3/getEntityDocument`: as getPartyDocument for an entity (`partyid` holds its ID).
pub async fn get_entity(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let id = p.req(&["partyId", "entityId"])?;
    let doc = document_id(&p)?;
    live_entity(&ctx, &id).await?;
    let list = views(&ctx, Owner { kind: ENTITY, id: &id }, doc.as_deref(), "partyid").await?;
    Ok(Reply::ok().with_value("partyDocumentDetails", list))
}

/// `POST /v3/deleteEntityDocument`: as deletePartyDocument.
pub async fn delete_entity(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let id = p.req(&["partyId", "entityId"])?;
    let doc = p.req(&["documentId", "documentid"])?;
    live_entity(&ctx, &id).await?;
    remove(&ctx, Owner { kind: ENTITY, id: &id }, &doc, "partyDocumentDetails").await
}

/// `POST /v3/requestUploadPartyDocument` (multipart, reviewing fee in production):
/// `investorId` (party, entity or account), `requestId` (its requestKycAml request),
/// `documentTitle` (prefix optional for one file, required for several), `userfile0`..,
/// optional `file_name` and `createdIpAddress`; PDF, JPG, JPEG, PNG or (not for an entity)
/// TXT of at least 1 kB. A `requestId` that is not the investor's live request is `152`. `document_details` = the
/// upload message; no webhook.
pub async fn request_upload(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let investor = p.req(&["investorId"])?;
    let request_id = p.req(&["requestId"])?;
    // An entity's documents are PDF, JPG, JPEG or PNG (part 1: TXT for accounts, parties and
    // verification only), whichever operation sends them.
    let rules = if investor.trim().starts_with('E') {
        &ENTITY_FILES
    } else {
        &INVESTOR_FILES
    };
    let files = documents::indexed_files(&ctx, &p, rules).await?;
    // The investor first (148/198), then its request (152), then any byte is stored.
    investor_check(&ctx, &investor).await?;
    let request = records::load::<KycRequest>(ctx.store(), ctx.client_id(), &investor).await?;
    let request = match request {
        Some(r) if !r.rec.deleted && r.rec.request_id == request_id.trim() => r,
        _ => return Err(no_request()),
    };
    let mut extra = upload_extra(&p)?;
    extra.insert("requestId".into(), Value::from(request.rec.request_id.as_str()));
    let fee = shared::billing::billing(&ctx, "requestUploadPartyDocument", &investor, &request.rec.request_id)?;
    let owner = Owner {
        kind: REQUESTED,
        id: &investor,
    };
    let holder = Holder::Request {
        investor: investor.clone(),
        request_id: request.rec.request_id.clone(),
    };
    // The fee is written with the documents: a failed upload is never billed.
    commit_upload(&ctx, owner, files, &extra, fee, Vec::new(), holder).await?;
    Ok(uploaded())
}

/// `POST /v3/getuploadPartyDocument`: `partyId` (the `investorId` requestUploadPartyDocument
/// takes: a party, entity or account), optional `documentId`; `partyDocumentDetails` array of
/// the investor's documents, oldest first, each as getPartyDocument's plus `requestId`: its
/// own uploads (uploadPartyDocument, uploadEntityDocument, uploadAccountDocument; `requestId`
/// empty), where RV's client looks for what it uploaded (OBSERVED-MORE), and those sent
/// through requestUploadPartyDocument.
pub async fn get_requested(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let id = p.req(&["partyId", "investorId"])?;
    let doc = document_id(&p)?;
    let own = if id.starts_with('A') {
        existing_account(&ctx, &id).await?;
        ACCOUNT
    } else if id.starts_with('E') {
        live_entity(&ctx, &id).await?;
        ENTITY
    } else {
        live_party(&ctx, &id).await?;
        PARTY
    };
    let owners = [own, REQUESTED].map(|kind| Owner { kind, id: &id });
    let mut docs = Vec::new();
    for owner in owners {
        match &doc {
            Some(d) => docs.extend(documents::find(&ctx, owner, d).await?),
            None => docs.extend(documents::list(&ctx, owner).await?),
        }
    }
    if doc.is_some() && docs.is_empty() {
        return Err(no_document());
    }
    docs.sort_by_key(|d| d.id.parse::<u64>().unwrap_or(u64::MAX));
    let mut out = Vec::with_capacity(docs.len());
    for d in &docs {
        let mut m = d.view(&ctx, "partyid").await?;
        let request = d.extra.get("requestId").cloned().unwrap_or_else(|| Value::from(""));
        m.insert("requestId".into(), request);
        out.push(Value::Object(m));
    }
    Ok(Reply::ok().with_value("partyDocumentDetails", Value::Array(out)))
}

/// `POST /v3/documents/uploads` (beyond the spec, for files larger than a request may carry
/// in AWS): `fileName` (its extension is the file's type). Answers `uploadDetails`
/// {`uploadId`, `uploadUrl`, `method`, `fileName`, `urlExpiresDate`, `expiresDate`,
/// `maxBytes`}: the file goes to `uploadUrl` with one `PUT` within 15 minutes; for 24 hours
/// every upload operation then takes `uploadId<n>` (`uploadId` for uploadVerificationDocument)
/// in place of `userfile<n>`, and checks the stored file by its own rules. Scope
/// `document.write`. Shapes: `docs/investors-documents.md`.
pub async fn new_upload(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let slot = documents::new_upload(&ctx, &p.req(&["fileName"])?).await?;
    Ok(Reply::ok().with("uploadDetails", &slot))
}

/// The document routes.
pub fn routes() -> Routes {
    const UPLOAD: ScopeReq = ScopeReq::new("document.write", PiiLevel::High, "document.write");
    Routes::new()
        .resource(Method::POST, "/v3/documents/uploads", UPLOAD, op!(new_upload))
        .upload("uploadAccountDocument", op!(upload_account))
        .op("getAccountDocument", op!(get_account))
        .op("deleteAccountDocument", op!(delete_account))
        .upload("uploadPartyDocument", op!(upload_party))
        .op("getPartyDocument", op!(get_party))
        .op("deletePartyDocument", op!(delete_party))
        .upload("uploadEntityDocument", op!(upload_entity))
        .op("getEntityDocument", op!(get_entity))
        .op("deleteEntityDocument", op!(delete_entity))
        .upload("requestUploadPartyDocument", op!(request_upload))
        .op("getuploadPartyDocument", op!(get_requested))
}
