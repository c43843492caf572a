//! Accreditation documents of an account: the evidence the investor uploads
//! (uploadVerificationDocument) and the accreditation letters the review issues, each kept as
//! a [`Document`] of the account in its own owner partition, so that either kind is one
//! query. Letters are generated here: a deterministic one-page PDF (the sandbox's letter).

use serde::Serialize;
use serde_json::Value;

use crate::documents::{Document, Owner};
use crate::model::Account;

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

/// How many of an account's newest verification documents
/// [`crate::records::ai_documents::set_documents_status`] moves at most, so that its writes
/// fit one transaction beside the request's own.
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

/// A verification document as getAiRequest lists it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AiDocumentView {
    id: String,
    documentid: String,
    document_title: String,
    document_file_name: String,
    document_file_reference_code: String,
    status: String,
    document_url: String,
}

impl AiDocumentView {
    /// A verification document with its signed URL.
    pub fn of(d: Document, document_url: String) -> Self {
        AiDocumentView {
            status: status(&d).to_owned(),
            id: d.id,
            documentid: d.documentid,
            document_title: d.document_title,
            document_file_name: d.document_file_name,
            document_file_reference_code: d.document_file_reference_code,
            document_url,
        }
    }
}

/// getAiLetter's record of the latest letter.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LetterView<'a> {
    pub account_id: &'a str,
    pub document_file_name: &'a str,
    pub created_date: &'a str,
    pub document_url: String,
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
        format!(
            "This verification is valid for {} days from the date above. An issuer may",
            super::accreditation::VALID_DAYS
        ),
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
    use serde_json::Map;

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
