//! Offering documents (uploads with watermarks, reads, updates, deletes), subscription
//! templates from the sandbox e-signature account, and the operator's e-signature sandbox
//! (templates, envelopes signed, declined and voided). Bytes are read back through the
//! URLs handed out; every error code is checked to write nothing. Each case runs on the
//! embedded store with a local blob directory and on DynamoDB with S3 (moto).

use std::collections::BTreeSet;

use api_tests::{both, Backend, Creds, Resp, TestApp};
use http::Method;
use lopdf::content::{Content, Operation};
use lopdf::{dictionary, Document, Object, Stream};
use serde_json::{json, Value};
use shared::records::subscription;

use crate::fixtures::{code, hook};
use crate::fixtures::{ISSUER, OFFERING};

const DELETED: &str = "Document deleted successfully";
const NONE_DESC: &str = "error in opening document";
const NO_TEMPLATES: &str = "Template details does not exist.";
const NO_ACCOUNT: &str = "No e-signature account is connected for this client";

async fn offering_as(t: &TestApp, c: &Creds) -> String {
    let r = t.form_as(c, Method::PUT, "createIssuer", ISSUER).await;
    assert_eq!(r.code(), "101", "{:?}", r.json);
    let issuer = r.inserted("issuerDetails")["issuerId"].as_str().unwrap().to_owned();
    let mut params = OFFERING.to_vec();
    params.push(("issuerId", issuer.as_str()));
    let r = t.form_as(c, Method::PUT, "createOffering", &params).await;
    assert_eq!(r.code(), "101", "{:?}", r.json);
    r.inserted("offeringDetails")["offeringId"].as_str().unwrap().to_owned()
}

async fn offering(t: &TestApp) -> String {
    offering_as(t, &t.creds()).await
}

/// A PDF of `pages` pages saying "Page n" (classic cross-reference table).
fn pdf(pages: usize) -> Vec<u8> {
    let mut doc = Document::with_version("1.4");
    let pages_id = doc.new_object_id();
    let font = doc.add_object(dictionary! {"Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Courier"});
    let mut kids = Vec::new();
    for n in 1..=pages {
        let content = Content {
            operations: vec![
                Operation::new("BT", vec![]),
                Operation::new("Tf", vec!["F1".into(), 20.into()]),
                Operation::new("Td", vec![72.into(), 700.into()]),
                Operation::new("Tj", vec![Object::string_literal(format!("Page {n}"))]),
                Operation::new("ET", vec![]),
            ],
        };
        let c = doc.add_object(Stream::new(dictionary! {}, content.encode().unwrap()));
        let page = doc.add_object(dictionary! {
            "Type" => "Page", "Parent" => pages_id, "Contents" => c,
            "Resources" => dictionary! {"Font" => dictionary! {"F1" => font}},
            "MediaBox" => vec![0.into(), 0.into(), 612.into(), 792.into()],
        });
        kids.push(Object::Reference(page));
    }
    let count = kids.len() as i64;
    doc.objects.insert(
        pages_id,
        Object::Dictionary(dictionary! {"Type" => "Pages", "Kids" => kids, "Count" => count}),
    );
    let catalog = doc.add_object(dictionary! {"Type" => "Catalog", "Pages" => pages_id});
    doc.trailer.set("Root", catalog);
    doc.reference_table.cross_reference_type = lopdf::xref::XrefType::CrossReferenceTable;
    let mut out = Vec::new();
    doc.save_to(&mut out).unwrap();
    out
}

/// Bytes that are not a PDF, of `len` bytes, differing by `seed`.
fn blob(len: usize, seed: u8) -> Vec<u8> {
    (0..len).map(|i| b'a' + ((i as u8).wrapping_add(seed) % 26)).collect()
}

fn keys(v: &Value) -> Vec<&str> {
    v.as_object().unwrap().keys().map(String::as_str).collect()
}

fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
    v.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
}

async fn fetch_ok(t: &TestApp, url: &str) -> Vec<u8> {
    let (status, body) = t.fetch(url).await;
    assert_eq!(status, 200, "{url}");
    body.to_vec()
}

/// Asserts `stored` is `original` stamped with `text` on every page: an incremental update.
fn assert_stamped(stored: &[u8], original: &[u8], text: &str) {
    assert!(
        stored.starts_with(original) && stored.len() > original.len(),
        "an incremental update"
    );
    let doc = Document::load_mem(stored).expect("a readable PDF");
    for n in doc.get_pages().keys() {
        let found = doc.extract_text(&[*n]).unwrap();
        assert!(found.contains(text), "page {n}: {found:?}");
    }
}

/// The offering's documents (asserting the call succeeded).
async fn documents(t: &TestApp, offering: &str) -> Vec<Value> {
    let r = t.post("getDocumentsforOffering", &[("offeringId", offering)]).await;
    code(&r, "101");
    r.json["document_details"].as_array().unwrap().clone()
}

/// getDocumentsforOffering of an offering without documents.
async fn assert_no_documents(t: &TestApp, offering: &str) {
    let r = t.post("getDocumentsforOffering", &[("offeringId", offering)]).await;
    assert_eq!((r.status, r.code(), r.desc()), (404, "404", NONE_DESC), "{:?}", r.json);
}

/// Uploads one file with the usual fields plus `extra`.
async fn upload(t: &TestApp, offering: &str, name: &str, bytes: &[u8], extra: &[(&str, &str)]) -> Resp {
    let file_name = format!("filename0={name}");
    let mut fields = vec![
        ("offeringId", offering),
        ("documentTitle", "documentTitle0=Private placement memorandum"),
        ("documentFileReferenceCode", "TRK-1"),
        ("file_name", file_name.as_str()),
    ];
    fields.retain(|(k, _)| !extra.iter().any(|(e, _)| e == k));
    fields.extend_from_slice(extra);
    t.multipart("addDocumentsforOffering", &fields, &[("userfile0", name, bytes)])
        .await
}

// ---------------------------------------------------------------- documents

both!(add_and_get_offering_documents, |t: TestApp| async move {
    let mut l = hook(&t, "addDocumentsforOffering").await;
    let id = offering(&t).await;
    let (memo, sheet) = (pdf(2), blob(3000, 1));
    let r = t
        .multipart(
            "addDocumentsforOffering",
            &[
                ("offeringId", &id),
                (
                    "documentTitle",
                    "documentTitle0=Memorandum&documentTitle1=Cap table & terms",
                ),
                ("documentFileReferenceCode", "TRK-2026-001"),
                ("file_name", "filename0=memo 2026.pdf&filename1=cap_table.xls"),
                ("templateName", "PPM"),
                ("approval", "Yes"),
                ("supervisorname", "Sam Supervisor"),
                ("date", "01-15-2026"),
                ("createdIpAddress", "10.0.0.9"),
            ],
            &[("userfile0", "a.pdf", &memo), ("userfile1", "b.xls", &sheet)],
        )
        .await;
    code(&r, "101");
    let added = r.json["document_details"].as_array().unwrap().clone();
    assert_eq!(added.len(), 2);
    for a in &added {
        assert_eq!(
            keys(a),
            ["offeringId", "documentReferenceCode", "documentId", "documentURL"]
        );
        assert_eq!(
            (&a["offeringId"], &a["documentReferenceCode"]),
            (&json!(id), &json!("TRK-2026-001"))
        );
        assert!(a["documentId"].as_str().unwrap().parse::<u64>().unwrap() >= 100_000);
    }
    // The PDF carries the offering's watermark (createOffering's stampingText); the sheet,
    // which cannot be watermarked (part 1), is kept as sent.
    let stored = fetch_ok(&t, added[0]["documentURL"].as_str().unwrap()).await;
    assert_stamped(&stored, &memo, "CONFIDENTIAL");
    assert_eq!(fetch_ok(&t, added[1]["documentURL"].as_str().unwrap()).await, sheet);
    // One webhook per document, with its record's fields.
    let mut got = BTreeSet::new();
    for _ in 0..2 {
        let w = l.next(5).await.expect("addDocumentsforOffering webhook");
        let p = w.pairs();
        let names: Vec<&str> = p.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(
            names,
            ["offeringId", "documentReferenceCode", "documentId", "documentURL"]
        );
        got.insert(p[2].1.clone());
    }
    let ids: BTreeSet<String> = added
        .iter()
        .map(|a| a["documentId"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(got, ids);
    assert!(l.next(1).await.is_none(), "one webhook per document");

    let docs = documents(&t, &id).await;
    assert_eq!(docs.len(), 2);
    assert_eq!(
        keys(&docs[0]),
        [
            "createdDate",
            "documentFileReferenceCode",
            "documentId",
            "documentName",
            "documentTitle",
            "templateName",
            "url"
        ]
    );
    assert_eq!(
        (
            &docs[0]["documentTitle"],
            &docs[0]["documentName"],
            &docs[0]["templateName"]
        ),
        (&json!("Memorandum"), &json!("memo 2026.pdf"), &json!("PPM"))
    );
    assert_eq!(
        (&docs[1]["documentTitle"], &docs[1]["documentName"]),
        (&json!("Cap table & terms"), &json!("cap_table.xls"))
    );
    assert_eq!(docs[0]["documentId"], added[0]["documentId"], "upload order");
    assert_eq!(docs[1]["documentFileReferenceCode"], "TRK-2026-001");
    assert_eq!(fetch_ok(&t, docs[1]["url"].as_str().unwrap()).await, sheet);
    // Without templateName a document's templateName is null; a .docx is accepted as sent.
    let word = blob(500, 2);
    code(&upload(&t, &id, "terms.docx", &word, &[]).await, "101");
    let docs = documents(&t, &id).await;
    assert_eq!(docs.len(), 3);
    assert_eq!(docs[2]["templateName"], Value::Null);
    assert_eq!(fetch_ok(&t, docs[2]["url"].as_str().unwrap()).await, word);
});

both!(stamping_text_watermarks_pdfs, |t: TestApp| async move {
    let id = offering(&t).await;
    let original = pdf(3);
    let r = upload(
        &t,
        &id,
        "memo.pdf",
        &original,
        &[("stampingText", "CONFIDENTIAL - ACME")],
    )
    .await;
    code(&r, "101");
    let url = r.json["document_details"][0]["documentURL"]
        .as_str()
        .unwrap()
        .to_owned();
    let stamped = fetch_ok(&t, &url).await;
    assert!(stamped.starts_with(&original), "an incremental update of the upload");
    assert!(stamped.len() > original.len());
    let doc = Document::load_mem(&stamped).expect("a readable PDF");
    assert_eq!(doc.get_pages().len(), 3);
    for n in 1..=3 {
        let text = doc.extract_text(&[n]).unwrap();
        assert!(text.contains(&format!("Page {n}")), "{text:?}");
        assert!(text.contains("CONFIDENTIAL - ACME"), "page {n}: {text:?}");
    }
    // Deterministic: the same file and text give the same bytes.
    let again = upload(
        &t,
        &id,
        "memo.pdf",
        &original,
        &[("stampingText", "CONFIDENTIAL - ACME")],
    )
    .await;
    let url2 = again.json["document_details"][0]["documentURL"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(fetch_ok(&t, &url2).await, stamped);
    // Without stampingText (or blank) the offering's own stampingText stamps it.
    let r = upload(&t, &id, "plain.pdf", &original, &[("stampingText", " ")]).await;
    let url3 = r.json["document_details"][0]["documentURL"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_stamped(&fetch_ok(&t, &url3).await, &original, "CONFIDENTIAL");
    assert_eq!(documents(&t, &id).await.len(), 3);
    // A PDF the offering's stamp cannot read is stored as sent, not refused: only the
    // upload's own stampingText asks that every file be stamped.
    let broken = [b"%PDF-1.4\n".as_slice(), &blob(2000, 9)].concat();
    let r = upload(&t, &id, "scan.pdf", &broken, &[]).await;
    code(&r, "101");
    let url4 = r.json["document_details"][0]["documentURL"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(fetch_ok(&t, &url4).await, broken);

    // Only PDFs can be watermarked; an unreadable PDF cannot be; nothing is written.
    let other = offering(&t).await;
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("terms.docx", blob(800, 3)),
        ("sheet.xls", blob(800, 4)),
        ("broken.pdf", blob(800, 5)),
        ("half.pdf", original[..original.len() / 2].to_vec()),
    ];
    for (name, bytes) in &cases {
        let r = upload(&t, &other, name, bytes, &[("stampingText", "DRAFT")]).await;
        assert_eq!((r.status, r.code()), (404, "106"), "{name}: {:?}", r.json);
    }
    let long = "x".repeat(201);
    code(
        &upload(&t, &other, "memo.pdf", &original, &[("stampingText", &long)]).await,
        "106",
    );
    // Two files, the second not a PDF: the whole request is refused.
    let r = t
        .multipart(
            "addDocumentsforOffering",
            &[
                ("offeringId", &other),
                ("documentTitle", "documentTitle0=a&documentTitle1=b"),
                ("documentFileReferenceCode", "TRK"),
                ("file_name", "filename0=a.pdf&filename1=b.docx"),
                ("stampingText", "DRAFT"),
            ],
            &[("userfile0", "a.pdf", &original), ("userfile1", "b.docx", &blob(10, 1))],
        )
        .await;
    code(&r, "106");
    assert_no_documents(&t, &other).await;
});

both!(add_document_rejections_write_nothing, |t: TestApp| async move {
    let mut l = hook(&t, "addDocumentsforOffering").await;
    let id = offering(&t).await;
    let other = t.new_client(json!({"scopes": ["*"]})).await;
    let theirs = offering_as(&t, &other).await;
    let gone = offering(&t).await;
    code(&t.post("deleteOffering", &[("offeringId", &gone)]).await, "101");
    let ok = pdf(1);
    let title = ("documentTitle", "documentTitle0=Memo");
    let reference = ("documentFileReferenceCode", "TRK-9");
    let name = ("file_name", "filename0=memo.pdf");
    type Case<'a> = (Vec<(&'a str, &'a str)>, Vec<(&'a str, &'a str, Vec<u8>)>, &'a str);
    let file = |n: &'static str, b: Vec<u8>| ("userfile0", n, b);
    let cases: Vec<Case> = vec![
        (vec![title, reference, name], vec![file("memo.pdf", ok.clone())], "106"),
        (
            vec![("offeringId", "abc"), title, reference, name],
            vec![file("memo.pdf", ok.clone())],
            "106",
        ),
        (
            vec![("offeringId", &id), reference, name],
            vec![file("memo.pdf", ok.clone())],
            "106",
        ),
        (
            vec![("offeringId", &id), title, name],
            vec![file("memo.pdf", ok.clone())],
            "106",
        ),
        (
            vec![("offeringId", &id), title, reference],
            vec![file("memo.pdf", ok.clone())],
            "106",
        ),
        (vec![("offeringId", &id), title, reference, name], vec![], "106"),
        (
            vec![
                ("offeringId", &id),
                title,
                reference,
                ("file_name", "filename0=memo$1.pdf"),
            ],
            vec![file("memo.pdf", ok.clone())],
            "106",
        ),
        (
            vec![
                ("offeringId", &id),
                title,
                reference,
                ("file_name", "filename0=../memo.pdf"),
            ],
            vec![file("memo.pdf", ok.clone())],
            "106",
        ),
        (
            vec![
                ("offeringId", &id),
                title,
                reference,
                ("file_name", "filename0=photo.png"),
            ],
            vec![file("photo.png", blob(2000, 1))],
            "106",
        ),
        (
            vec![
                ("offeringId", &id),
                title,
                reference,
                ("file_name", "filename0=notes.txt"),
            ],
            vec![file("notes.txt", blob(2000, 1))],
            "106",
        ),
        (
            vec![
                ("offeringId", &id),
                title,
                reference,
                ("file_name", "filename0=book.xlsx"),
            ],
            vec![file("book.xlsx", blob(2000, 1))],
            "106",
        ),
        (
            vec![
                ("offeringId", &id),
                title,
                reference,
                ("file_name", "filename0=empty.pdf"),
            ],
            vec![file("empty.pdf", Vec::new())],
            "106",
        ),
        (
            vec![("offeringId", &id), title, reference, name, ("date", "2026-13-45")],
            vec![file("memo.pdf", ok.clone())],
            "106",
        ),
        // Over 50 MB.
        (
            vec![("offeringId", &id), title, reference, name],
            vec![file("memo.pdf", vec![b'%'; 50_000_001])],
            "106",
        ),
        (
            vec![("offeringId", "999999"), title, reference, name],
            vec![file("memo.pdf", ok.clone())],
            "138",
        ),
        (
            vec![("offeringId", &theirs), title, reference, name],
            vec![file("memo.pdf", ok.clone())],
            "138",
        ),
        (
            vec![("offeringId", &gone), title, reference, name],
            vec![file("memo.pdf", ok.clone())],
            "138",
        ),
    ];
    for (fields, files, expected) in &cases {
        let files: Vec<(&str, &str, &[u8])> = files.iter().map(|(f, n, b)| (*f, *n, b.as_slice())).collect();
        let r = t.multipart("addDocumentsforOffering", fields, &files).await;
        assert_eq!((r.status, r.code()), (404, *expected), "{fields:?}: {:?}", r.json);
    }
    assert_no_documents(&t, &id).await;
    assert!(l.next(1).await.is_none(), "no webhook for refused uploads");
    let r = t
        .form_as(
            &other,
            Method::POST,
            "getDocumentsforOffering",
            &[("offeringId", &theirs)],
        )
        .await;
    code(&r, "404");
    // Exactly 50 MB is accepted (the local store only: moto would hold it in memory).
    if t.backend == Backend::Embedded {
        let mut big = ok.clone();
        big.resize(50_000_000, b' ');
        code(&upload(&t, &id, "big.pdf", &big, &[]).await, "101");
        let docs = documents(&t, &id).await;
        let stored = fetch_ok(&t, docs[0]["url"].as_str().unwrap()).await;
        assert_stamped(&stored, &big, "CONFIDENTIAL");
    }
});

both!(get_documents_errors, |t: TestApp| async move {
    let id = offering(&t).await;
    let other = t.new_client(json!({"scopes": ["*"]})).await;
    let theirs = offering_as(&t, &other).await;
    code(&t.post("getDocumentsforOffering", &[]).await, "106");
    code(
        &t.post("getDocumentsforOffering", &[("offeringId", "12a")]).await,
        "106",
    );
    code(
        &t.post("getDocumentsforOffering", &[("offeringId", "999999")]).await,
        "138",
    );
    code(
        &t.post("getDocumentsforOffering", &[("offeringId", &theirs)]).await,
        "138",
    );
    assert_no_documents(&t, &id).await;
    code(&upload(&t, &id, "memo.pdf", &pdf(1), &[]).await, "101");
    assert_eq!(documents(&t, &id).await.len(), 1);
    code(&t.post("deleteOffering", &[("offeringId", &id)]).await, "101");
    code(&t.post("getDocumentsforOffering", &[("offeringId", &id)]).await, "138");
});

both!(update_offering_document_and_its_alias, |t: TestApp| async move {
    let mut l = hook(&t, "updateOfferingDocument").await;
    let mut alias = hook(&t, "updateDocumentforOffering").await;
    let id = offering(&t).await;
    let second = offering(&t).await;
    let bytes = pdf(1);
    let r = upload(&t, &id, "memo.pdf", &bytes, &[("templateName", "PPM")]).await;
    let doc = r.json["document_details"][0]["documentId"].as_str().unwrap().to_owned();
    let r = t
        .post(
            "updateOfferingDocument",
            &[("documentId", &doc), ("documentTitle", "Memorandum v2")],
        )
        .await;
    code(&r, "101");
    let rec = &r.json["document_details"][0];
    assert_eq!(keys(rec), ["documentId", "documentTitle", "documentURL", "offeringId"]);
    assert_eq!(
        (&rec["documentId"], &rec["documentTitle"], &rec["offeringId"]),
        (&json!(doc), &json!("Memorandum v2"), &json!(id))
    );
    assert_stamped(
        &fetch_ok(&t, rec["documentURL"].as_str().unwrap()).await,
        &bytes,
        "CONFIDENTIAL",
    );
    let w = l.next(5).await.expect("updateOfferingDocument webhook");
    let names: Vec<String> = w.pairs().into_iter().map(|(k, _)| k).collect();
    assert_eq!(names, ["documentId", "documentTitle", "documentURL", "offeringId"]);

    let r = t
        .post(
            "updateDocumentforOffering",
            &[
                ("documentId", &doc),
                ("offeringId", &id),
                ("documentFileReferenceCode", "TRK-NEW"),
                ("templateName", ""),
            ],
        )
        .await;
    code(&r, "101");
    let w = alias.next(5).await.expect("the alias fires its own name");
    assert_eq!(w.pairs()[0], ("documentId".to_owned(), doc.clone()));
    assert!(l.next(1).await.is_none());
    let d = &documents(&t, &id).await[0];
    assert_eq!(
        (&d["documentTitle"], &d["documentFileReferenceCode"], &d["templateName"]),
        (&json!("Memorandum v2"), &json!("TRK-NEW"), &Value::Null)
    );

    let other = t.new_client(json!({"scopes": ["*"]})).await;
    let theirs = offering_as(&t, &other).await;
    let r = t
        .multipart_as(
            &other,
            "addDocumentsforOffering",
            &[
                ("offeringId", &theirs),
                ("documentTitle", "x"),
                ("documentFileReferenceCode", "T"),
                ("file_name", "x.pdf"),
            ],
            &[("userfile0", "x.pdf", &bytes)],
        )
        .await;
    code(&r, "101");
    let their_doc = r.json["document_details"][0]["documentId"].as_str().unwrap().to_owned();
    let t1 = ("documentTitle", "T");
    let cases: Vec<(Vec<(&str, &str)>, &str)> = vec![
        (vec![t1], "106"),
        (vec![("documentId", &doc)], "106"),
        (vec![("documentId", &doc), ("documentTitle", " ")], "106"),
        (vec![("documentId", &doc), ("documentFileReferenceCode", "")], "106"),
        (vec![("documentId", "999999"), t1], "106"),
        (vec![("documentId", "../x"), t1], "106"),
        (vec![("documentId", &their_doc), t1], "106"),
        (vec![("documentId", &doc), ("offeringId", "x1"), t1], "106"),
        (vec![("documentId", &doc), ("offeringId", &second), t1], "106"),
        (vec![("documentId", &doc), ("offeringId", "999999"), t1], "138"),
        (vec![("documentId", &doc), ("offeringId", &theirs), t1], "138"),
    ];
    for (params, expected) in &cases {
        let r = t.post("updateOfferingDocument", params).await;
        assert_eq!(r.code(), *expected, "{params:?}: {:?}", r.json);
    }
    assert_eq!(documents(&t, &id).await[0]["documentTitle"], "Memorandum v2");
    assert!(l.next(1).await.is_none(), "no webhook for refused updates");
    code(&t.post("deleteOffering", &[("offeringId", &id)]).await, "101");
    code(
        &t.post("updateOfferingDocument", &[("documentId", &doc), t1]).await,
        "138",
    );
});

both!(delete_offering_documents, |t: TestApp| async move {
    let mut l = hook(&t, "deleteDocumentsforOffering").await;
    let id = offering(&t).await;
    let (a, b) = (pdf(1), blob(100, 9));
    let first = upload(&t, &id, "a.pdf", &a, &[]).await.json["document_details"][0].clone();
    let second = upload(&t, &id, "b.docx", &b, &[]).await.json["document_details"][0].clone();
    let doc = first["documentId"].as_str().unwrap();
    let other = t.new_client(json!({"scopes": ["*"]})).await;
    let theirs = offering_as(&t, &other).await;
    let cases: Vec<(Vec<(&str, &str)>, &str)> = vec![
        (vec![("documentId", doc)], "106"),
        (vec![("offeringId", &id)], "106"),
        (vec![("offeringId", "a"), ("documentId", doc)], "106"),
        (vec![("offeringId", &id), ("documentId", "999999")], "106"),
        (vec![("offeringId", "999999"), ("documentId", doc)], "138"),
        (vec![("offeringId", &theirs), ("documentId", doc)], "138"),
    ];
    for (params, expected) in &cases {
        let r = t.post("deleteDocumentsforOffering", params).await;
        assert_eq!(r.code(), *expected, "{params:?}: {:?}", r.json);
    }
    assert_eq!(documents(&t, &id).await.len(), 2, "refused deletes delete nothing");
    let r = t
        .post(
            "deleteDocumentsforOffering",
            &[("offeringId", &id), ("documentId", doc)],
        )
        .await;
    code(&r, "101");
    assert_eq!(r.json["document_details"], DELETED);
    let w = l.next(5).await.expect("deleteDocumentsforOffering webhook");
    assert_eq!(w.pairs(), pairs(&[("offeringId", &id), ("documentId", doc)]));
    assert_eq!(t.fetch(first["documentURL"].as_str().unwrap()).await.0, 404);
    let left = documents(&t, &id).await;
    assert_eq!((left.len(), &left[0]["documentId"]), (1, &second["documentId"]));
    let r = t
        .post(
            "deleteDocumentsforOffering",
            &[("offeringId", &id), ("documentId", doc)],
        )
        .await;
    code(&r, "106");
    code(
        &t.post("updateOfferingDocument", &[("documentId", doc), ("documentTitle", "x")])
            .await,
        "106",
    );
    let last = second["documentId"].as_str().unwrap();
    code(
        &t.post(
            "deleteDocumentsforOffering",
            &[("offeringId", &id), ("documentId", last)],
        )
        .await,
        "101",
    );
    assert_no_documents(&t, &id).await;
});

// ---------------------------------------------------------------- e-signature account

fn account_path(t: &TestApp) -> String {
    format!("/operator/clients/{}/esign-templates", t.client_id)
}

async fn fetch_templates(t: &TestApp) -> Vec<Value> {
    let r = t.post("fetchSubscriptionDocuments", &[]).await;
    code(&r, "101");
    r.json["document_details"].as_array().unwrap().clone()
}

both!(
    fetch_subscription_documents_lists_the_account,
    |t: TestApp| async move {
        let mut l = hook(&t, "fetchSubscriptionDocuments").await;
        let defaults = fetch_templates(&t).await;
        let names: Vec<&str> = defaults.iter().map(|d| d["name"].as_str().unwrap()).collect();
        assert_eq!(
            names,
            [
                "Subscription Agreement",
                "Investor Questionnaire",
                "Non-Disclosure Agreement",
                "Custody Agreement"
            ]
        );
        assert_eq!(
            keys(&defaults[0]),
            [
                "templateId",
                "name",
                "shared",
                "description",
                "created",
                "lastModified",
                "pageCount",
                "uri",
                "folderName",
                "owner"
            ]
        );
        let ids: Vec<&str> = defaults.iter().map(|d| d["templateId"].as_str().unwrap()).collect();
        let w = l.next(5).await.expect("fetchSubscriptionDocuments webhook");
        assert_eq!(w.pairs(), pairs(&[("templateIds", &ids.join(","))]));
        // Another client's account holds other templates.
        let other = t.new_client(json!({"scopes": ["*"]})).await;
        let r = t.form_as(&other, Method::POST, "fetchSubscriptionDocuments", &[]).await;
        let theirs = r.json["document_details"].as_array().unwrap();
        assert!(theirs.iter().all(|x| !ids.contains(&x["templateId"].as_str().unwrap())));

        let r = t
        .operator(
            Method::PUT,
            &account_path(&t),
            json!({"templates": [
                {"templateId": "tpl-sub-1", "name": "Series A Subscription", "pageCount": 9, "folderName": "Acme", "shared": true},
                {"name": "Side Letter", "description": "optional"}
            ]}),
        )
        .await;
        assert_eq!(r.status, 200, "{:?}", r.json);
        assert_eq!(r.json["connected"], true);
        let list = fetch_templates(&t).await;
        assert_eq!(list.len(), 2);
        assert_eq!(
            (
                &list[0]["templateId"],
                &list[0]["pageCount"],
                &list[0]["shared"],
                &list[0]["uri"]
            ),
            (
                &json!("tpl-sub-1"),
                &json!(9),
                &json!("true"),
                &json!("/templates/tpl-sub-1")
            )
        );
        assert_eq!(list[1]["templateId"].as_str().unwrap().len(), 36);
        let r = t.operator(Method::GET, &account_path(&t), Value::Null).await;
        assert_eq!(r.json["templates"].as_array().unwrap().len(), 2);
        // Refused bodies change nothing.
        for body in [
            json!({"templates": [{"templateId": "a--b", "name": "x"}]}),
            json!({"templates": [{"templateId": "bad id", "name": "x"}]}),
            json!({"templates": [{"name": " "}]}),
            json!({"templates": [{"templateId": "d", "name": "x"}, {"templateId": "d", "name": "y"}]}),
            json!({"templates": [{"name": "x", "pageCount": 0}]}),
            json!({"templates": [{"name": "x", "colour": "red"}]}),
            json!({"nope": []}),
        ] {
            let r = t.operator(Method::PUT, &account_path(&t), body.clone()).await;
            assert_eq!(r.status, 400, "{body}: {:?}", r.json);
        }
        assert_eq!(fetch_templates(&t).await.len(), 2);
        let r = t
            .operator(
                Method::PUT,
                "/operator/clients/nobody/esign-templates",
                json!({"templates": []}),
            )
            .await;
        assert_eq!(r.status, 404);

        let r = t
            .operator(Method::PUT, &account_path(&t), json!({"templates": []}))
            .await;
        assert_eq!(r.status, 200);
        assert_eq!(fetch_templates(&t).await, Vec::<Value>::new());
        let r = t.operator(Method::DELETE, &account_path(&t), Value::Null).await;
        assert_eq!((r.status, &r.json["connected"]), (200, &json!(false)));
        let r = t.post("fetchSubscriptionDocuments", &[]).await;
        assert_eq!((r.code(), r.desc()), ("106", NO_ACCOUNT));
    }
);

// ---------------------------------------------------------------- subscriptions

/// The `file_name` of an account template.
fn file_name(t: &Value) -> String {
    format!("{}--{}", t["templateId"].as_str().unwrap(), t["name"].as_str().unwrap())
}

both!(subscription_templates_round_trip, |t: TestApp| async move {
    let mut l = hook(&t, "addSubscriptionsforOffering").await;
    let id = offering(&t).await;
    let account = fetch_templates(&t).await;
    let (agreement, questionnaire) = (file_name(&account[0]), file_name(&account[1]));
    let r = t
        .post(
            "addSubscriptionsforOffering",
            &[
                ("offeringId", &id),
                ("templatename", "Acme subscription agreement"),
                ("file_name", &agreement),
            ],
        )
        .await;
    code(&r, "101");
    let first = r.json["document_details"][0].clone();
    assert_eq!(keys(&first), ["offeringId", "templateName", "templateNameID"]);
    assert_eq!(
        (&first["offeringId"], &first["templateName"]),
        (&json!(id), &json!("Acme subscription agreement"))
    );
    let first_id = first["templateNameID"].as_u64().expect("a JSON number");
    let w = l.next(5).await.expect("addSubscriptionsforOffering webhook");
    assert_eq!(
        w.pairs(),
        pairs(&[
            ("offeringId", &id),
            ("templateName", "Acme subscription agreement"),
            ("templateNameID", &first_id.to_string())
        ])
    );
    // The name after `--` when templatename carries the `<templateId>--<name>` form itself.
    let r = t
        .post(
            "addSubscriptionsforOffering",
            &[("offeringId", &id), ("templatename", &questionnaire)],
        )
        .await;
    code(&r, "101");
    assert_eq!(r.json["document_details"][0]["templateName"], "Investor Questionnaire");
    let second_id = r.json["document_details"][0]["templateNameID"].as_u64().unwrap();

    let r = t.post("getSubscriptionsforOffering", &[("offeringId", &id)]).await;
    code(&r, "101");
    let list = r.json["document_details"].as_array().unwrap().clone();
    assert_eq!(
        keys(&list[0]),
        [
            "createdDate",
            "offeringId",
            "templateId",
            "templateKey",
            "templateName",
            "templateUrl"
        ]
    );
    let listed: Vec<&str> = list.iter().map(|x| x["templateId"].as_str().unwrap()).collect();
    assert_eq!(listed, [second_id.to_string(), first_id.to_string()], "newest first");
    assert_eq!(list[1]["templateKey"], account[0]["templateId"]);
    assert_eq!(list[1]["templateUrl"], account[0]["uri"]);
    // What the trades group reads: the offering's active templates.
    let active = subscription::active(t.store(), &t.client_id, &id).await.unwrap();
    let keys_active: Vec<&str> = active.iter().map(|a| a.template_key.as_str()).collect();
    assert_eq!(
        keys_active,
        [
            account[1]["templateId"].as_str().unwrap(),
            account[0]["templateId"].as_str().unwrap()
        ]
    );

    // updateSubscriptionsforOffering (deprecated): a new name, and another template.
    let nda = file_name(&account[2]);
    let sid = second_id.to_string();
    let r = t
        .post(
            "updateSubscriptionsforOffering",
            &[
                ("offeringId", &id),
                ("templateId", &sid),
                ("templatename", "NDA for Acme"),
                ("file_name", &nda),
                ("updatedIpAddress", "10.1.1.1"),
            ],
        )
        .await;
    code(&r, "101");
    assert_eq!(
        r.json["document_details"],
        json!([{"offeringId": id, "templateName": "NDA for Acme", "templateNameID": second_id}])
    );
    let r = t.post("getSubscriptionsforOffering", &[("offeringId", &id)]).await;
    assert_eq!(r.json["document_details"][0]["templateKey"], account[2]["templateId"]);
    // The questionnaire is free again; the agreement is not.
    let r = t
        .post(
            "addSubscriptionsforOffering",
            &[
                ("offeringId", &id),
                ("templatename", "Q"),
                ("file_name", &questionnaire),
            ],
        )
        .await;
    code(&r, "101");
    let third = r.json["document_details"][0]["templateNameID"]
        .as_u64()
        .unwrap()
        .to_string();

    // deleteSubscriptionsforOffering.
    let fid = first_id.to_string();
    let r = t
        .post(
            "deleteSubscriptionsforOffering",
            &[("offeringId", &id), ("templateId", &fid)],
        )
        .await;
    code(&r, "101");
    assert_eq!(r.json["document_details"], "Template deleted successfully");
    let r = t.post("getSubscriptionsforOffering", &[("offeringId", &id)]).await;
    let listed: Vec<&str> = r.json["document_details"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["templateId"].as_str().unwrap())
        .collect();
    assert_eq!(listed, [third.as_str(), sid.as_str()]);
    for x in [&fid, &third] {
        let r = t
            .post(
                "deleteSubscriptionsforOffering",
                &[("offeringId", &id), ("templateId", x)],
            )
            .await;
        let expected = if x == &fid { "106" } else { "101" };
        code(&r, expected);
    }
    code(
        &t.post(
            "deleteSubscriptionsforOffering",
            &[("offeringId", &id), ("templateId", &sid)],
        )
        .await,
        "101",
    );
    let r = t.post("getSubscriptionsforOffering", &[("offeringId", &id)]).await;
    assert_eq!(
        (r.status, r.code(), r.desc(), &r.json["document_details"]),
        (404, "404", "Error(s)", &json!(NO_TEMPLATES))
    );
    assert!(subscription::active(t.store(), &t.client_id, &id)
        .await
        .unwrap()
        .is_empty());
});

both!(subscription_errors_write_nothing, |t: TestApp| async move {
    let mut l = hook(&t, "addSubscriptionsforOffering").await;
    let id = offering(&t).await;
    let account = fetch_templates(&t).await;
    let agreement = file_name(&account[0]);
    let other = t.new_client(json!({"scopes": ["*"]})).await;
    let theirs = offering_as(&t, &other).await;
    let r = t.form_as(&other, Method::POST, "fetchSubscriptionDocuments", &[]).await;
    let their_template = file_name(&r.json["document_details"][0]);
    let gone = offering(&t).await;
    code(&t.post("deleteOffering", &[("offeringId", &gone)]).await, "101");
    let name = ("templatename", "Agreement");
    let cases: Vec<(Vec<(&str, &str)>, &str)> = vec![
        (vec![name, ("file_name", &agreement)], "106"),
        (vec![("offeringId", "x"), name, ("file_name", &agreement)], "106"),
        (vec![("offeringId", &id), name], "106"),
        (vec![("offeringId", &id), name, ("file_name", "no-separator")], "106"),
        (vec![("offeringId", &id), name, ("file_name", "--name only")], "106"),
        (
            vec![("offeringId", &id), name, ("file_name", "unknown-template--X")],
            "106",
        ),
        (vec![("offeringId", &id), name, ("file_name", &their_template)], "106"),
        (vec![("offeringId", "999999"), name, ("file_name", &agreement)], "138"),
        (vec![("offeringId", &theirs), name, ("file_name", &agreement)], "138"),
        (vec![("offeringId", &gone), name, ("file_name", &agreement)], "138"),
    ];
    for (params, expected) in &cases {
        let r = t.post("addSubscriptionsforOffering", params).await;
        assert_eq!((r.status, r.code()), (404, *expected), "{params:?}: {:?}", r.json);
    }
    let r = t.post("getSubscriptionsforOffering", &[("offeringId", &id)]).await;
    code(&r, "404");
    assert!(l.next(1).await.is_none(), "no webhook for refused adds");
    // The same template twice on one offering.
    let ok = [("offeringId", id.as_str()), name, ("file_name", agreement.as_str())];
    code(&t.post("addSubscriptionsforOffering", &ok).await, "101");
    code(&t.post("addSubscriptionsforOffering", &ok).await, "106");
    let r = t.post("getSubscriptionsforOffering", &[("offeringId", &id)]).await;
    assert_eq!(r.json["document_details"].as_array().unwrap().len(), 1);
    let tid = r.json["document_details"][0]["templateId"].as_str().unwrap().to_owned();

    // Reads, updates and deletes.
    code(&t.post("getSubscriptionsforOffering", &[]).await, "106");
    code(
        &t.post("getSubscriptionsforOffering", &[("offeringId", "1x")]).await,
        "106",
    );
    code(
        &t.post("getSubscriptionsforOffering", &[("offeringId", "999999")]).await,
        "138",
    );
    code(
        &t.post("getSubscriptionsforOffering", &[("offeringId", &theirs)]).await,
        "138",
    );
    let rename = ("templatename", "New");
    let update_cases: Vec<(Vec<(&str, &str)>, &str)> = vec![
        (vec![("templateId", &tid), rename], "106"),
        (vec![("offeringId", &id), rename], "106"),
        (vec![("offeringId", &id), ("templateId", &tid)], "106"),
        (vec![("offeringId", &id), ("templateId", "abc"), rename], "106"),
        (vec![("offeringId", &id), ("templateId", "999999"), rename], "106"),
        (
            vec![
                ("offeringId", &id),
                ("templateId", &tid),
                rename,
                ("file_name", "zz--Z"),
            ],
            "106",
        ),
        (vec![("offeringId", "999999"), ("templateId", &tid), rename], "138"),
        (vec![("offeringId", &theirs), ("templateId", &tid), rename], "138"),
    ];
    for (params, expected) in &update_cases {
        let r = t.post("updateSubscriptionsforOffering", params).await;
        assert_eq!(r.code(), *expected, "update {params:?}: {:?}", r.json);
    }
    let delete_cases: Vec<(Vec<(&str, &str)>, &str)> = vec![
        (vec![("templateId", &tid)], "106"),
        (vec![("offeringId", &id)], "106"),
        (vec![("offeringId", &id), ("templateId", "abc")], "106"),
        (vec![("offeringId", &id), ("templateId", "999999")], "106"),
        (vec![("offeringId", "999999"), ("templateId", &tid)], "138"),
        (vec![("offeringId", &theirs), ("templateId", &tid)], "138"),
    ];
    for (params, expected) in &delete_cases {
        let r = t.post("deleteSubscriptionsforOffering", params).await;
        assert_eq!(r.code(), *expected, "delete {params:?}: {:?}", r.json);
    }
    let r = t.post("getSubscriptionsforOffering", &[("offeringId", &id)]).await;
    assert_eq!(r.json["document_details"][0]["templateName"], "Agreement");

    // Without a connected account: fetching and adding are refused.
    let path = account_path(&t);
    assert_eq!(t.operator(Method::DELETE, &path, Value::Null).await.status, 200);
    let second = offering(&t).await;
    let r = t
        .post(
            "addSubscriptionsforOffering",
            &[("offeringId", &second), name, ("file_name", &agreement)],
        )
        .await;
    assert_eq!((r.code(), r.desc()), ("106", NO_ACCOUNT));
    code(
        &t.post("getSubscriptionsforOffering", &[("offeringId", &second)]).await,
        "404",
    );
    // The templates already attached stay (the trades group decides what sending needs).
    code(
        &t.post("getSubscriptionsforOffering", &[("offeringId", &id)]).await,
        "101",
    );
});

// ---------------------------------------------------------------- envelopes (operator)

fn envelopes(t: &TestApp) -> String {
    format!("/operator/clients/{}/esign/envelopes", t.client_id)
}

async fn new_envelope(t: &TestApp, templates: &[&str], reference: &str, send: bool) -> Resp {
    t.operator(
        Method::POST,
        &envelopes(t),
        json!({
            "templateIds": templates,
            "signers": [{"name": "Ann Lee", "email": "ann@example.com", "role": "Investor"}],
            "reference": reference,
            "send": send,
        }),
    )
    .await
}

async fn act(t: &TestApp, key: &str, action: &str) -> Resp {
    t.operator(
        Method::POST,
        &format!("{}/{key}/{action}", envelopes(t)),
        json!({"reason": "sandbox"}),
    )
    .await
}

both!(operator_signs_declines_and_voids_envelopes, |t: TestApp| async move {
    let account = fetch_templates(&t).await;
    let agreement = account[0]["templateId"].as_str().unwrap().to_owned();
    let r = new_envelope(&t, &[&agreement], "trial-1", true).await;
    assert_eq!(r.status, 201, "{:?}", r.json);
    assert_eq!(r.json["status"], "NOTSIGNED");
    let key = r.json["documentKey"].as_str().unwrap().to_owned();
    assert_eq!(key.len(), 36);
    // The same reference names the same envelope.
    let again = new_envelope(&t, &[&agreement], "trial-1", true).await;
    assert_eq!((again.status, &again.json["documentKey"]), (200, &json!(key)));
    let r = t
        .operator(Method::GET, &format!("{}/{key}", envelopes(&t)), Value::Null)
        .await;
    assert_eq!((r.status, &r.json["templateIds"]), (200, &json!([agreement])));

    let r = act(&t, &key, "sign").await;
    assert_eq!(r.status, 200, "{:?}", r.json);
    assert_eq!(
        (&r.json["status"], &r.json["previousStatus"], &r.json["changed"]),
        (&json!("SIGNED"), &json!("NOTSIGNED"), &json!(true))
    );
    let r = act(&t, &key, "sign").await;
    assert_eq!((r.status, &r.json["changed"]), (200, &json!(false)));
    for action in ["decline", "void", "send"] {
        assert_eq!(act(&t, &key, action).await.status, 409, "{action} a signed envelope");
    }

    let declined = new_envelope(&t, &[&agreement], "trial-2", true).await.json["documentKey"]
        .as_str()
        .unwrap()
        .to_owned();
    let r = act(&t, &declined, "decline").await;
    assert_eq!(
        (&r.json["status"], &r.json["reason"]),
        (&json!("DECLINED"), &json!("sandbox"))
    );
    assert_eq!(act(&t, &declined, "sign").await.status, 409);

    let draft = new_envelope(&t, &[&agreement], "trial-3", false).await;
    assert_eq!(draft.json["status"], "CREATED");
    let draft = draft.json["documentKey"].as_str().unwrap().to_owned();
    assert_eq!(act(&t, &draft, "sign").await.status, 409, "a draft is not signed");
    assert_eq!(act(&t, &draft, "send").await.json["status"], "NOTSIGNED");
    assert_eq!(act(&t, &draft, "void").await.json["status"], "VOIDED");
    assert_eq!(act(&t, &draft, "sign").await.status, 409);

    assert_eq!(act(&t, &key, "approve").await.status, 404);
    assert_eq!(act(&t, "no-such-envelope", "sign").await.status, 404);
    let other = t.new_client(json!({"scopes": ["*"]})).await;
    let r = t
        .operator(
            Method::POST,
            &format!("/operator/clients/{}/esign/envelopes/{key}/void", other.id),
            json!({}),
        )
        .await;
    assert_eq!(r.status, 404, "another client's envelope");
    assert_eq!(new_envelope(&t, &["not-a-template"], "x", true).await.status, 400);
    let r = t
        .operator(
            Method::POST,
            &envelopes(&t),
            json!({"templateIds": [agreement], "signers": []}),
        )
        .await;
    assert_eq!(r.status, 400);
    assert_eq!(
        t.operator(Method::DELETE, &account_path(&t), Value::Null).await.status,
        200
    );
    assert_eq!(new_envelope(&t, &[&agreement], "trial-4", true).await.status, 409);
});
