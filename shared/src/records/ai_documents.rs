//! How an account's accreditation documents are read and written: the verification
//! documents getAiRequest lists, their review status, and the letters the review issues.

use bytes::Bytes;
use serde_json::{Map, Value};

use crate::blobs::{content_type, safe_name};
use crate::ctx::Ctx;
use crate::documents::{self, Document, DOCUMENT};
use crate::error::ApiError;
use crate::model::ai_documents::{
    evidence, letter_pdf, letters, status, AiDocumentView, LETTER_TITLE, REQUEST, STATUS, STATUS_BATCH,
};
use crate::model::Account;
use crate::records;
use crate::store::{Cond, Write};

/// The `documents` array elements of getAiRequest, oldest first: `id`, `documentid`,
/// `documentTitle`, `documentFileName`, `documentFileReferenceCode`, `status` and a signed
/// `documentUrl` valid for 15 minutes. Empty when the account has none (the caller leaves
/// the key out then). The account itself is not checked here.
pub async fn ai_documents_view(ctx: &Ctx, account_id: &str) -> Result<Vec<AiDocumentView>, ApiError> {
    let docs = documents::list(ctx, evidence(account_id)).await?;
    let mut out = Vec::with_capacity(docs.len());
    for d in docs {
        let url = d.url(ctx).await?;
        out.push(AiDocumentView::of(d, url));
    }
    Ok(out)
}

/// The writes that give the account's verification documents the review status `status`
/// (the newest [`STATUS_BATCH`] whose status differs), conditioned on each still existing:
/// for the transaction that decides an accreditation request.
pub async fn set_documents_status(ctx: &Ctx, account_id: &str, status_value: &str) -> Result<Vec<Write>, ApiError> {
    let docs = documents::list(ctx, evidence(account_id)).await?;
    let mut writes = Vec::new();
    for d in docs
        .iter()
        .rev()
        .filter(|d| status(d) != status_value)
        .take(STATUS_BATCH)
    {
        let mut after = d.clone();
        after.extra.insert(STATUS.into(), Value::from(status_value));
        writes.push(after.write(ctx.client_id(), evidence(account_id), Some(Cond::Exists))?);
    }
    Ok(writes)
}

/// The newest letter of an account, if any.
pub async fn latest_letter(ctx: &Ctx, account_id: &str) -> Result<Option<Document>, ApiError> {
    Ok(documents::list(ctx, letters(account_id)).await?.pop())
}

/// Issues the sandbox accreditation letter of an approved request: generates the PDF
/// ([`letter_pdf`]), stores its bytes, and answers its record and the write the caller
/// commits with the approval (then call [`documents::discard`] with the document should
/// that commit fail). `148` when the account does not exist (or is deleted).
pub async fn issue_letter(ctx: &Ctx, account_id: &str, airequest_id: &str) -> Result<(Document, Vec<Write>), ApiError> {
    let account = records::live::<Account>(ctx, account_id, || {
        ApiError::coded("148", "Account is not exist/active.")
    })
    .await?
    .rec;
    let issued = ctx.now();
    let bytes = letter_pdf(&account, airequest_id, &issued);
    let id = ctx.next_id(DOCUMENT).await?;
    let file_name = format!("accreditation-letter-{}.pdf", safe_name(airequest_id));
    let owner = letters(account_id);
    let blob_key = documents::blob_key(ctx.client_id(), owner, &id, &file_name);
    ctx.blobs()?
        .put(&blob_key, Bytes::from(bytes), content_type(&file_name))
        .await
        .map_err(|e| ApiError::internal_from("letter not stored", e))?;
    let mut extra = Map::new();
    extra.insert(REQUEST.into(), Value::from(airequest_id));
    let doc = Document {
        documentid: documents::short_code(&id),
        id,
        owner: account_id.to_owned(),
        document_title: LETTER_TITLE.into(),
        document_file_name: file_name,
        document_file_reference_code: documents::reference_code(),
        blob_key,
        created_date: issued,
        extra,
    };
    let write = doc.write(ctx.client_id(), owner, Some(Cond::NotExists))?;
    Ok((doc, vec![write]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tx::Plan;

    #[tokio::test]
    async fn issued_letters_are_stored_listed_and_served() {
        let (ctx, dir) = crate::ctx::test_ctx().await;
        let err = issue_letter(&ctx, "A1000001", "100007").await.unwrap_err();
        assert_eq!(err.code(), "148");
        let mut a = Account {
            id: "A1000001".into(),
            ..Account::default()
        };
        a.created = ctx.now();
        let writes = records::insert("c1", &a).unwrap();
        ctx.transact(async move |_, _| Ok(Plan::new(writes.clone(), ())))
            .await
            .unwrap();
        assert_eq!(latest_letter(&ctx, &a.id).await.unwrap(), None);

        let (first, writes) = issue_letter(&ctx, &a.id, "100007").await.unwrap();
        ctx.transact(async move |_, _| Ok(Plan::new(writes.clone(), ())))
            .await
            .unwrap();
        let (second, writes) = issue_letter(&ctx, &a.id, "100008").await.unwrap();
        ctx.transact(async move |_, _| Ok(Plan::new(writes.clone(), ())))
            .await
            .unwrap();
        assert_eq!(latest_letter(&ctx, &a.id).await.unwrap().as_ref(), Some(&second));
        assert_ne!(first.id, second.id);
        assert_eq!(second.document_file_name, "accreditation-letter-100008.pdf");
        assert_eq!(second.extra.get(REQUEST), Some(&Value::from("100008")));

        let url = second.url(&ctx).await.unwrap();
        let (path, query) = url.strip_prefix("http://local.test").unwrap().split_once('?').unwrap();
        let served = ctx.blobs().unwrap().serve(path, Some(query)).await;
        let Some(crate::blobs::Served::Found {
            mut file,
            content_type: "application/pdf",
            ..
        }) = served
        else {
            panic!("the letter is not served as a PDF: {served:?}");
        };
        let mut bytes = Vec::new();
        tokio::io::AsyncReadExt::read_to_end(&mut file, &mut bytes)
            .await
            .unwrap();
        assert_eq!(bytes, letter_pdf(&a, "100008", &second.created_date));
        // Letters are not verification documents.
        assert!(ai_documents_view(&ctx, &a.id).await.unwrap().is_empty());
        assert!(set_documents_status(&ctx, &a.id, "Approved").await.unwrap().is_empty());
        std::fs::remove_dir_all(dir).ok();
    }
}
