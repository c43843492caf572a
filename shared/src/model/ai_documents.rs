//! Accreditation documents of an account: the evidence the investor uploads
//! (uploadVerificationDocument) and the accreditation letters the review issues, each kept as
//! a [`Document`] of the account in its own owner partition, so that either kind is one
//! query. Letters are generated here: a deterministic one-page PDF (the sandbox's letter).

use bytes::Bytes;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::app::Ctx;
use crate::blobs::{content_type, safe_name};
use crate::documents::{self, Document, Owner, DOCUMENT};
use crate::error::ApiError;
use crate::model::Account;
use crate::records;
use crate::store::{Cond, Write};

/// Owner kind of the verification documents an investor uploads.
pub const EVIDENCE: &str = "AIDOC";
/// Owner kind of issued accreditation letters.
pub const LETTERS: &str = "AILETTER";

/// The `extra` key of a verification document's review status.
pub const STATUS: &str = "status";
/// The status of an uploaded verification document until the review sets another.
pub const PENDING: &str = "Pending";
/// The `extra` key of a letter's accreditation request.
pub const REQUEST: &str = "airequestId";

/// How many of an account's newest verification documents [`set_documents_status`] moves
/// at most, so that its writes fit one transaction beside the request's own.
pub const STATUS_BATCH: usize = 50;

/// The title every letter carries.
pub const LETTER_TITLE: &str = "Accredited Investor Verification Letter";

/// The verification documents of an account.
pub fn evidence(account_id: &str) -> Owner<'_> {
    Owner {
        kind: EVIDENCE,
        id: account_id,
    }
}

/// The letters of an account.
pub fn letters(account_id: &str) -> Owner<'_> {
    Owner {
        kind: LETTERS,
        id: account_id,
    }
}

/// A verification document's review status (`Pending` when never set).
pub fn status(doc: &Document) -> &str {
    doc.extra.get(STATUS).and_then(Value::as_str).unwrap_or(PENDING)
}

/// The `documents` array elements of getAiRequest, oldest first: `id`, `documentid`,
/// `documentTitle`, `documentFileName`, `documentFileReferenceCode`, `status` and a signed
/// `documentUrl` valid for 15 minutes. Empty when the account has none (the caller leaves
/// the key out then). The account itself is not checked here.
pub async fn ai_documents_view(ctx: &Ctx, account_id: &str) -> Result<Vec<AiDocumentView>, ApiError> {
    let docs = documents::list(ctx, evidence(account_id)).await?;
    let mut out = Vec::with_capacity(docs.len());
    for d in docs {
        let url = d.url(ctx).await?;
        out.push(AiDocumentView {
            status: status(&d).to_owned(),
            id: d.id,
            documentid: d.documentid,
            document_title: d.document_title,
            document_file_name: d.document_file_name,
            document_file_reference_code: d.document_file_reference_code,
            document_url: url,
        });
    }
    Ok(out)
}

/// A verification document as getAiRequest lists it.
#[derive(Serialize)]
pub struct AiDocumentView {
    id: String,
    documentid: String,
    #[serde(rename = "documentTitle")]
    document_title: String,
    #[serde(rename = "documentFileName")]
    document_file_name: String,
    #[serde(rename = "documentFileReferenceCode")]
    document_file_reference_code: String,
    status: String,
    #[serde(rename = "documentUrl")]
    document_url: String,
}

/// getAiLetter's record of the latest letter.
#[derive(Serialize)]
pub struct LetterView<'a> {
    #[serde(rename = "accountId")]
    pub account_id: &'a str,
    #[serde(rename = "documentFileName")]
    pub document_file_name: &'a str,
    #[serde(rename = "createdDate")]
    pub created_date: &'a str,
    #[serde(rename = "documentUrl")]
    pub document_url: String,
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

/// Text as a PDF string literal: `\`, `(` and `)` escaped, anything outside printable
/// ASCII as `?` (the standard Helvetica font has no other glyphs in this encoding).
fn pdf_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('(');
    for c in s.chars() {
        match c {
            '\\' | '(' | ')' => {
                out.push('\\');
                out.push(c);
            }
            ' '..='~' => out.push(c),
            _ => out.push('?'),
        }
    }
    out.push(')');
    out
}

/// The lines of a letter.
fn letter_lines(account: &Account, airequest_id: &str, issued: &str) -> Vec<String> {
    let date = issued.split(' ').next().unwrap_or(issued);
    let name = if account.account_name.trim().is_empty() {
        account.id.as_str()
    } else {
        account.account_name.as_str()
    };
    vec![
        LETTER_TITLE.to_owned(),
        "SANDBOX - generated for testing, not a legal opinion".to_owned(),
        String::new(),
        format!("Date: {date}"),
        format!("Account: {} ({})", name, account.id),
        format!("Account type: {}", account.kind),
        format!("Accreditation request: {airequest_id}"),
        String::new(),
        "To whom it may concern,".to_owned(),
        String::new(),
        "We have reviewed the evidence submitted for the account named above under".to_owned(),
        "Rule 506(c) of Regulation D and have taken reasonable steps to verify that".to_owned(),
        "the investor is an accredited investor as defined in Rule 501(a).".to_owned(),
        String::new(),
        "The review relied on the documents uploaded with the request: income records".to_owned(),
        "for the two most recent years, asset statements, or a professional's written".to_owned(),
        "confirmation, the last two dated within three months of this letter.".to_owned(),
        String::new(),
        "This verification is valid for 90 days from the date above. An issuer may".to_owned(),
        "rely on it for investments made by this account within that period unless".to_owned(),
        "it learns of facts that indicate the investor is no longer accredited.".to_owned(),
        String::new(),
        "Sincerely,".to_owned(),
        "Accreditation Review (sandbox)".to_owned(),
    ]
}

/// A deterministic one-page PDF letter: the same account, request and issue time always
/// give the same bytes (well over 1 kB).
pub fn letter_pdf(account: &Account, airequest_id: &str, issued: &str) -> Vec<u8> {
    let mut content = String::from("BT\n/F1 11 Tf\n14 TL\n72 720 Td\n");
    for (i, line) in letter_lines(account, airequest_id, issued).iter().enumerate() {
        if i == 0 {
            content.push_str("/F1 14 Tf\n");
        } else if i == 1 {
            content.push_str("/F1 11 Tf\n");
        }
        content.push_str(&pdf_text(line));
        content.push_str(" Tj T*\n");
    }
    content.push_str("ET\n");
    let objects = [
        "<< /Type /Catalog /Pages 2 0 R >>".to_owned(),
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_owned(),
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>"
            .to_owned(),
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>".to_owned(),
        format!("<< /Length {} >>\nstream\n{content}endstream", content.len()),
    ];
    let mut pdf = String::from("%PDF-1.4\n");
    let mut offsets = Vec::with_capacity(objects.len());
    for (i, body) in objects.iter().enumerate() {
        offsets.push(pdf.len());
        pdf.push_str(&format!("{} 0 obj\n{body}\nendobj\n", i + 1));
    }
    let xref = pdf.len();
    pdf.push_str(&format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1));
    for off in offsets {
        pdf.push_str(&format!("{off:010} 00000 n \n"));
    }
    pdf.push_str(&format!(
        "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
        objects.len() + 1
    ));
    pdf.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn account() -> Account {
        Account {
            id: "A1000001".into(),
            account_name: "Ann (Lee) \\ Trust".into(),
            kind: "Individual".into(),
            ..Account::default()
        }
    }

    #[test]
    fn letters_are_deterministic_pdfs_over_1_kb() {
        let a = letter_pdf(&account(), "100004", "2024-05-06 07:08:09");
        let b = letter_pdf(&account(), "100004", "2024-05-06 07:08:09");
        assert_eq!(a, b);
        assert!(a.len() >= 1024, "{}", a.len());
        let text = String::from_utf8(a).unwrap();
        assert!(text.starts_with("%PDF-1.4\n") && text.ends_with("%%EOF\n"));
        assert!(text.contains("(Account: Ann \\(Lee\\) \\\\ Trust \\(A1000001\\)) Tj"));
        assert!(text.contains("(Date: 2024-05-06) Tj"));
        // The cross-reference table points at each object.
        let xref_at: usize = text
            .rsplit("startxref\n")
            .next()
            .unwrap()
            .lines()
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert!(text[xref_at..].starts_with("xref\n0 6\n"));
        for (i, line) in text[xref_at..].lines().skip(3).take(5).enumerate() {
            let off: usize = line[..10].parse().unwrap();
            assert!(text[off..].starts_with(&format!("{} 0 obj", i + 1)), "{line}");
        }
        let other = letter_pdf(&account(), "100005", "2024-05-06 07:08:09");
        assert_ne!(text.into_bytes(), other);
    }

    /// A context of client `c1` over an embedded store and a local blob directory.
    async fn ctx() -> (Ctx, std::path::PathBuf) {
        use std::sync::Arc;
        let dir = std::env::temp_dir().join(format!("ips-letters-{}", crate::ids::unique()));
        let blobs = crate::blobs::DirBlobs::open(dir.clone(), "http://letters.test").unwrap();
        let store: Arc<dyn crate::store::Store> = Arc::new(crate::store::embedded::EmbeddedStore::in_memory());
        let app = crate::App::new(
            store.clone(),
            Arc::new(crate::queue::embedded::EmbeddedQueue::default()),
            Arc::new(crate::clock::SystemClock),
            crate::Environment::Sandbox,
            crate::Routes::new(),
        )
        .with_blobs(Arc::new(blobs));
        let app = Arc::new(app);
        crate::operator::ensure_dev_client(&app, "c1", "k").await.unwrap();
        let client = crate::auth::load_client(store.as_ref(), "c1").await.unwrap().unwrap();
        let ctx = Ctx {
            app,
            client: Arc::new(client),
            ip: std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST),
            request_id: "t".into(),
            operation: "test".into(),
            pii: crate::auth::PiiLevel::High,
            committed: Arc::default(),
        };
        (ctx, dir)
    }

    #[tokio::test]
    async fn issued_letters_are_stored_listed_and_served() {
        let (ctx, dir) = ctx().await;
        let err = issue_letter(&ctx, "A1000001", "100007").await.unwrap_err();
        assert_eq!(err.code(), "148");
        let mut a = account();
        a.created = ctx.now();
        ctx.commit(records::insert("c1", &a).unwrap(), Vec::new())
            .await
            .unwrap();
        assert_eq!(latest_letter(&ctx, &a.id).await.unwrap(), None);

        let (first, writes) = issue_letter(&ctx, &a.id, "100007").await.unwrap();
        ctx.commit(writes, Vec::new()).await.unwrap();
        let (second, writes) = issue_letter(&ctx, &a.id, "100008").await.unwrap();
        ctx.commit(writes, Vec::new()).await.unwrap();
        assert_eq!(latest_letter(&ctx, &a.id).await.unwrap().as_ref(), Some(&second));
        assert_ne!(first.id, second.id);
        assert_eq!(second.document_file_name, "accreditation-letter-100008.pdf");
        assert_eq!(second.extra.get(REQUEST), Some(&Value::from("100008")));

        let url = second.url(&ctx).await.unwrap();
        let (path, query) = url
            .strip_prefix("http://letters.test")
            .unwrap()
            .split_once('?')
            .unwrap();
        let served = ctx.blobs().unwrap().serve(path, Some(query)).await;
        let expected = letter_pdf(&a, "100008", &second.created_date);
        assert_eq!(
            served,
            Some(crate::blobs::Served::Found {
                bytes: Bytes::from(expected),
                content_type: "application/pdf"
            })
        );
        // Letters are not verification documents.
        assert!(ai_documents_view(&ctx, &a.id).await.unwrap().is_empty());
        assert!(set_documents_status(&ctx, &a.id, "Approved").await.unwrap().is_empty());
        std::fs::remove_dir_all(dir).ok();
    }

    #[test]
    fn text_outside_ascii_is_replaced() {
        assert_eq!(pdf_text("Zoë (x)"), "(Zo? \\(x\\))");
    }

    #[test]
    fn status_defaults_to_pending() {
        let mut d = Document {
            id: "100000".into(),
            documentid: "255S".into(),
            owner: "A1".into(),
            document_title: String::new(),
            document_file_name: String::new(),
            document_file_reference_code: String::new(),
            blob_key: String::new(),
            created_date: String::new(),
            extra: Map::new(),
        };
        assert_eq!(status(&d), PENDING);
        d.extra.insert(STATUS.into(), Value::from("Approved"));
        assert_eq!(status(&d), "Approved");
    }
}
