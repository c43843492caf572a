//! Accreditation documents: uploadVerificationDocument, getAiDocument and getAiLetter. The
//! evidence an investor uploads and the letters the review issues are documents of the
//! account (`shared::model::ai_documents`). Shapes: `docs/investors-documents.md`.

use serde_json::{Map, Value};
use shared::documents::{self, Document, INVESTOR_FILES};
use shared::model::account::AccountRef;
use shared::model::ai_documents::{self as ai, evidence, letters, LetterView};
use shared::records;
use shared::webhooks::view_event;
use shared::{op, Routes};
use shared::{ApiError, Ctx, Params, Reply};

use crate::accounts::existing_account;
use crate::documents::{commit_upload, Holder, UPLOADED};

/// `233` for a `documentId` that names none of the account's verification documents or
/// letters.
fn no_ai_document() -> ApiError {
    ApiError::coded("233", "No AI document found for this account")
}

/// `POST /v3/uploadVerificationDocument` (multipart): `accountId`, `documentTitle` (stored
/// verbatim), `userfile` (PDF, JPG, JPEG, PNG or TXT of at least 1 kB), optional
/// `createdIpAddress`. The document's review status starts `Pending`. `document_details` =
/// the upload message; webhook `uploadVerificationDocument` (`accountId`).
pub async fn upload(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let id = p.req(&["accountId"])?;
    let file = documents::single_file(&ctx, &p, &INVESTOR_FILES).await?;
    let mut extra = Map::new();
    extra.insert(ai::STATUS.into(), Value::from(ai::PENDING));
    if let Some(ip) = p.opt(&["createdIpAddress"])?.filter(|v| !v.is_empty()) {
        extra.insert("createdIpAddress".into(), Value::from(ip));
    }
    let event = view_event("uploadVerificationDocument", &AccountRef { id: &id });
    let holder = Holder::Account(id.clone());
    commit_upload(&ctx, evidence(&id), vec![file], &extra, Vec::new(), vec![event], holder).await?;
    Ok(Reply::ok().with_value("document_details", Value::from(UPLOADED)))
}

async fn views(ctx: &Ctx, docs: &[Document]) -> Result<Value, ApiError> {
    let mut out = Vec::with_capacity(docs.len());
    for d in docs {
        out.push(Value::Object(d.view(ctx, "accountId").await?));
    }
    Ok(Value::Array(out))
}

/// `POST /v3/getAiDocument`: `accountId`, optional `documentId` (ID or short code);
/// `document_details` (the verification documents) and `letter_details` (the letters),
/// oldest first, each element {`id`, `documentid`, `accountId`, `documentTitle`,
/// `documentFileName`, `documentFileReferenceCode`, `documentUrl` (15 minutes),
/// `createdDate`}. With `documentId`, the one document in whichever array holds it (the
/// other empty); `233` when neither does.
pub async fn get_document(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let id = p.req(&["accountId"])?;
    let wanted = p.opt(&["documentId", "documentid"])?.filter(|v| !v.trim().is_empty());
    existing_account(&ctx, &id).await?;
    let (docs, issued) = match wanted {
        Some(w) => {
            let doc = documents::find(&ctx, evidence(&id), &w).await?;
            let letter = match doc {
                Some(_) => None,
                None => documents::find(&ctx, letters(&id), &w).await?,
            };
            if doc.is_none() && letter.is_none() {
                return Err(no_ai_document());
            }
            (doc.into_iter().collect(), letter.into_iter().collect())
        }
        None => (
            documents::list(&ctx, evidence(&id)).await?,
            documents::list(&ctx, letters(&id)).await?,
        ),
    };
    Ok(Reply::ok()
        .with_value("document_details", views(&ctx, &docs).await?)
        .with_value("letter_details", views(&ctx, &issued).await?))
}

/// `POST /v3/getAiLetter`: `accountId`; `document_details` = an array of the latest letter
/// {`accountId`, `documentFileName`, `createdDate`, `documentUrl`}, empty when none was
/// issued.
pub async fn get_letter(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let id = p.req(&["accountId"])?;
    existing_account(&ctx, &id).await?;
    let letter = records::ai_documents::latest_letter(&ctx, &id).await?;
    let mut out = Vec::new();
    if let Some(l) = &letter {
        out.push(LetterView {
            account_id: &id,
            document_file_name: &l.document_file_name,
            created_date: &l.created_date,
            document_url: l.url(&ctx).await?,
        });
    }
    Ok(Reply::ok().with("document_details", out))
}

/// The accreditation document routes.
pub fn routes() -> Routes {
    Routes::new()
        .upload("uploadVerificationDocument", op!(upload))
        .op("getAiDocument", op!(get_document))
        .op("getAiLetter", op!(get_letter))
}
