//! Investor documents (account, party, entity, requested uploads) and accreditation
//! documents: uploads with indexed titles, the webhook once per request at a real listener,
//! the handed-out URLs read back byte for byte, tampering refused, deletes, and every error
//! code writing nothing. Each case runs on the embedded store with a local blob directory
//! and on DynamoDB with S3 (moto).

use api_tests::{both, Backend, Listener, TestApp};
use http::Method;
use serde_json::{json, Value};
use shared::model::kyc::BillingEntry;
use shared::records;
use shared::Environment;

use crate::fixtures::*;
use crate::fixtures::{code, hook};

const UPLOADED: &str = "Document has been uploaded Successfully";
const DELETED: &str = "Document deleted successfully";
const SIZE: &str = "Document File Size Must Be Greater Than 1 kb";

/// A file of `len` bytes that differs by `seed`.
fn file(len: usize, seed: u8) -> Vec<u8> {
    let mut v = b"%PDF-1.4\n".to_vec();
    v.extend((0..len.saturating_sub(9)).map(|i| b'a' + ((i as u8).wrapping_add(seed) % 26)));
    v.truncate(len);
    v
}

/// A multipart request (fields, files) and the statusCode it gets.
type Case<'a> = (Vec<(&'a str, &'a str)>, Vec<(&'a str, &'a str, &'a [u8])>, &'a str);
type SliceCase<'a> = (Vec<(&'a str, &'a str)>, &'a [(&'a str, &'a str, &'a [u8])], &'a str);

fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
    v.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
}

fn keys(v: &Value) -> Vec<&str> {
    v.as_object().unwrap().keys().map(String::as_str).collect()
}

fn url(v: &Value) -> &str {
    v["documentUrl"].as_str().expect("documentUrl")
}

/// The URL with its signature changed (the local store's `signature`, S3's
/// `X-Amz-Signature`).
fn tampered(url: &str) -> String {
    let at = url.find("ignature=").expect("a signed URL") + "ignature=".len();
    let mut out = url.to_owned();
    let c = if &url[at..at + 1] == "0" { "1" } else { "0" };
    out.replace_range(at..at + 1, c);
    out
}

/// The one webhook of a request: exactly these fields, and no second delivery.
async fn once(l: &mut Listener, expected: &[(&str, &str)]) {
    let got = l.next(5).await.expect("webhook delivered");
    assert_eq!(got.method, Method::POST);
    assert_eq!(got.pairs(), pairs(expected));
    assert!(l.next(1).await.is_none(), "one webhook per request");
}

async fn fetch_ok(t: &TestApp, url: &str, bytes: &[u8]) {
    let (status, body) = t.fetch(url).await;
    assert_eq!(status, 200, "{url}");
    assert_eq!(body.as_ref(), bytes);
}

both!(account_documents_round_trip, |t: TestApp| async move {
    let mut l = hook(&t, "uploadAccountDocument").await;
    let id = create_account(&t).await;
    let (a, b) = (file(2048, 1), file(1024, 2));
    let r = t
        .multipart(
            "uploadAccountDocument",
            &[
                ("accountId", &id),
                (
                    "documentTitle",
                    "documentTitle0=W-2 2023&documentTitle1=Bank & Trust statement",
                ),
                ("file_name", "filename0=w2.pdf&filename1=bank.txt"),
                ("createdIpAddress", "10.0.0.1"),
            ],
            &[("userfile0", "scan0.pdf", &a), ("userfile1", "scan1.txt", &b)],
        )
        .await;
    code(&r, "101");
    assert_eq!(r.json["document_details"], UPLOADED);
    once(&mut l, &[("accountId", &id)]).await;

    let r = t.post("getAccountDocument", &[("accountId", &id)]).await;
    code(&r, "101");
    let docs = r.json["accountDocumentDetails"].as_array().unwrap().clone();
    assert_eq!(docs.len(), 2);
    assert_eq!(
        keys(&docs[0]),
        [
            "id",
            "documentid",
            "accountId",
            "documentTitle",
            "documentFileName",
            "documentFileReferenceCode",
            "documentUrl",
            "createdDate"
        ]
    );
    assert_eq!(
        (
            &docs[0]["documentTitle"],
            &docs[0]["documentFileName"],
            &docs[0]["accountId"]
        ),
        (&json!("W-2 2023"), &json!("w2.pdf"), &json!(id))
    );
    assert_eq!(
        (&docs[1]["documentTitle"], &docs[1]["documentFileName"]),
        (&json!("Bank & Trust statement"), &json!("bank.txt"))
    );
    for d in &docs {
        let reference = d["documentFileReferenceCode"].as_str().unwrap();
        assert!(reference.len() == 12 && reference.bytes().all(|c| c.is_ascii_digit()));
        assert!(d["id"].as_str().unwrap().parse::<u64>().unwrap() >= 100_000);
    }
    fetch_ok(&t, url(&docs[0]), &a).await;
    fetch_ok(&t, url(&docs[1]), &b).await;
    let (status, _) = t.fetch(&tampered(url(&docs[0]))).await;
    if t.backend == Backend::Embedded {
        // moto does not check S3 signatures; S3 itself answers 403 as the local store does.
        assert_eq!(status, 403);
    }

    // One document by its ID or by its short code.
    let second = docs[1]["id"].as_str().unwrap();
    let short = docs[1]["documentid"].as_str().unwrap();
    for name in [second, short] {
        let r = t
            .post("getAccountDocument", &[("accountId", &id), ("documentId", name)])
            .await;
        code(&r, "101");
        let one = r.json["accountDocumentDetails"].as_array().unwrap();
        assert_eq!((one.len(), &one[0]["id"]), (1, &json!(second)));
    }

    let r = t
        .post("deleteAccountDocument", &[("accountId", &id), ("documentId", second)])
        .await;
    code(&r, "101");
    assert_eq!(r.json["accountDocumentDetails"], DELETED);
    let r = t.post("getAccountDocument", &[("accountId", &id)]).await;
    let left = r.json["accountDocumentDetails"].as_array().unwrap();
    assert_eq!((left.len(), &left[0]["id"]), (1, &docs[0]["id"]));
    // The deleted document's URL reads nothing any more; the other still reads.
    let (status, _) = t.fetch(url(&docs[1])).await;
    assert_eq!(status, 404);
    fetch_ok(&t, url(&docs[0]), &a).await;
    for op in ["getAccountDocument", "deleteAccountDocument"] {
        let r = t.post(op, &[("accountId", &id), ("documentId", second)]).await;
        code(&r, "106");
    }
    // Reads of an archived account's documents still work; uploads and deletes do not.
    code(
        &t.post(
            "updateAccountArchivestatus",
            &[("accountId", &id), ("archiveStatus", "1")],
        )
        .await,
        "101",
    );
    code(&t.post("getAccountDocument", &[("accountId", &id)]).await, "101");
    let first = docs[0]["id"].as_str().unwrap();
    code(
        &t.post("deleteAccountDocument", &[("accountId", &id), ("documentId", first)])
            .await,
        "148",
    );
    let r = t
        .multipart(
            "uploadAccountDocument",
            &[("accountId", &id), ("documentTitle", "x")],
            &[("userfile0", "a.pdf", &a)],
        )
        .await;
    code(&r, "148");
    assert!(l.next(1).await.is_none());
});

both!(account_document_errors_write_nothing, |t: TestApp| async move {
    let mut l = hook(&t, "uploadAccountDocument").await;
    let id = create_account(&t).await;
    let other = t.new_client(json!({"scopes": ["*"]})).await;
    let theirs = create_account_as(&t, &other, &[]).await;
    let ok = file(1500, 3);
    let small = file(999, 3);
    let title = ("documentTitle", "documentTitle0=ID");
    let cases: Vec<Case> = vec![
        (vec![title], vec![("userfile0", "a.pdf", &ok)], "106"),
        (vec![("accountId", &id)], vec![("userfile0", "a.pdf", &ok)], "106"),
        (vec![("accountId", &id), title], vec![], "106"),
        (
            vec![("accountId", &id), title],
            vec![("userfile0", "a.exe", &ok)],
            "106",
        ),
        (vec![("accountId", &id), title], vec![("userfile0", "a", &ok)], "106"),
        (
            vec![("accountId", &id), title],
            vec![("userfile0", "a.pdf", &small)],
            "106",
        ),
        // Two files, the second without its title.
        (
            vec![("accountId", &id), title],
            vec![("userfile0", "a.pdf", &ok), ("userfile1", "b.pdf", &ok)],
            "106",
        ),
        // A good file and a small one: the whole request is refused.
        (
            vec![
                ("accountId", &id),
                ("documentTitle", "documentTitle0=a&documentTitle1=b"),
            ],
            vec![("userfile0", "a.pdf", &ok), ("userfile1", "b.pdf", &small)],
            "106",
        ),
        (
            vec![("accountId", "A9999999"), title],
            vec![("userfile0", "a.pdf", &ok)],
            "148",
        ),
        (
            vec![("accountId", "nonsense"), title],
            vec![("userfile0", "a.pdf", &ok)],
            "148",
        ),
        (
            vec![("accountId", &theirs), title],
            vec![("userfile0", "a.pdf", &ok)],
            "148",
        ),
    ];
    for (fields, files, expected) in &cases {
        let r = t.multipart("uploadAccountDocument", fields, files).await;
        assert_eq!((r.status, r.code()), (404, *expected), "{fields:?}: {:?}", r.json);
    }
    let r = t
        .multipart(
            "uploadAccountDocument",
            &[("accountId", &id), title],
            &[("userfile0", "a.pdf", &small)],
        )
        .await;
    assert_eq!(r.json["Error(s)"], SIZE);
    assert!(r.desc().starts_with(SIZE), "{}", r.desc());
    let r = t.post("getAccountDocument", &[("accountId", &id)]).await;
    assert_eq!(
        r.json["accountDocumentDetails"],
        json!([]),
        "a rejected upload writes nothing"
    );
    assert!(l.next(1).await.is_none(), "no webhook for rejected uploads");
    // The other client's documents are theirs alone.
    let r = t
        .form_as(&other, Method::POST, "getAccountDocument", &[("accountId", &theirs)])
        .await;
    assert_eq!(r.json["accountDocumentDetails"], json!([]));

    // Reads and deletes.
    code(&t.post("getAccountDocument", &[]).await, "106");
    code(&t.post("getAccountDocument", &[("accountId", "A9999999")]).await, "148");
    code(&t.post("getAccountDocument", &[("accountId", &theirs)]).await, "148");
    for bad in ["999999", "ZZZZ", "../x"] {
        let r = t
            .post("getAccountDocument", &[("accountId", &id), ("documentId", bad)])
            .await;
        code(&r, "106");
    }
    code(&t.post("deleteAccountDocument", &[("accountId", &id)]).await, "106");
    code(
        &t.post("deleteAccountDocument", &[("documentId", "999999")]).await,
        "106",
    );
    code(
        &t.post(
            "deleteAccountDocument",
            &[("accountId", "A9999999"), ("documentId", "999999")],
        )
        .await,
        "148",
    );
    code(
        &t.post("deleteAccountDocument", &[("accountId", &id), ("documentId", "999999")])
            .await,
        "106",
    );
    // Another client's document cannot be read or deleted through one's own account.
    let r = t
        .multipart_as(
            &other,
            "uploadAccountDocument",
            &[("accountId", &theirs), title],
            &[("userfile0", "a.pdf", &ok)],
        )
        .await;
    code(&r, "101");
    let r = t
        .form_as(&other, Method::POST, "getAccountDocument", &[("accountId", &theirs)])
        .await;
    let doc = r.json["accountDocumentDetails"][0]["id"].as_str().unwrap().to_owned();
    for op in ["getAccountDocument", "deleteAccountDocument"] {
        code(&t.post(op, &[("accountId", &id), ("documentId", &doc)]).await, "106");
        code(
            &t.post(op, &[("accountId", &theirs), ("documentId", &doc)]).await,
            "148",
        );
    }
});

both!(party_documents_round_trip, |t: TestApp| async move {
    let mut l = hook(&t, "uploadPartyDocument").await;
    let id = create_party(&t).await;
    let (a, b, c) = (file(4096, 4), file(1024, 5), file(3000, 6));
    let r = t
        .multipart(
            "uploadPartyDocument",
            &[
                ("partyId", &id),
                (
                    "documentTitle",
                    "documentTitle0=Passport&documentTitle1=Utility bill&documentTitle2=Selfie",
                ),
                (
                    "file_name",
                    "filename0=passport.pdf&filename1=bill.txt&filename2=me.png",
                ),
            ],
            &[
                ("userfile0", "0.pdf", &a),
                ("userfile1", "1.txt", &b),
                ("userfile2", "2.png", &c),
            ],
        )
        .await;
    code(&r, "101");
    assert_eq!(r.json["document_details"], UPLOADED);
    once(&mut l, &[("partyId", &id)]).await;

    let r = t.post("getPartyDocument", &[("partyId", &id)]).await;
    code(&r, "101");
    let docs = r.json["partyDocumentDetails"].as_array().unwrap().clone();
    assert_eq!(docs.len(), 3);
    assert_eq!(
        keys(&docs[0]),
        [
            "id",
            "documentid",
            "partyid",
            "documentTitle",
            "documentFileName",
            "documentFileReferenceCode",
            "documentUrl",
            "createdDate"
        ]
    );
    let titles: Vec<&Value> = docs.iter().map(|d| &d["documentTitle"]).collect();
    assert_eq!(titles, [&json!("Passport"), &json!("Utility bill"), &json!("Selfie")]);
    assert!(docs.iter().all(|d| d["partyid"] == json!(id)));
    let short = docs[2]["documentid"].as_str().unwrap();
    assert!((4..=5).contains(&short.len()));
    for (d, bytes) in docs.iter().zip([&a, &b, &c]) {
        fetch_ok(&t, url(d), bytes).await;
    }
    let (status, _) = t.fetch(&tampered(url(&docs[0]))).await;
    if t.backend == Backend::Embedded {
        assert_eq!(status, 403);
    }
    // A URL of another document's key with this one's signature is refused too.
    if t.backend == Backend::Embedded {
        let first = url(&docs[0]);
        let swapped = first.replace(docs[0]["id"].as_str().unwrap(), docs[1]["id"].as_str().unwrap());
        assert_eq!(t.fetch(&swapped).await.0, 403);
    }

    let r = t
        .post("getPartyDocument", &[("partyId", &id), ("documentId", short)])
        .await;
    assert_eq!(r.json["partyDocumentDetails"][0]["id"], docs[2]["id"]);
    let r = t
        .post("deletePartyDocument", &[("partyId", &id), ("documentId", short)])
        .await;
    code(&r, "101");
    assert_eq!(r.json["partyDocumentDetails"], DELETED);
    assert_eq!(t.fetch(url(&docs[2])).await.0, 404);
    let r = t.post("getPartyDocument", &[("partyId", &id)]).await;
    assert_eq!(r.json["partyDocumentDetails"].as_array().unwrap().len(), 2);
    let r = t
        .post("getPartyDocument", &[("partyId", &id), ("documentId", short)])
        .await;
    code(&r, "106");
});

both!(party_and_entity_document_errors, |t: TestApp| async move {
    let mut l = hook(&t, "uploadPartyDocument").await;
    let party = create_party(&t).await;
    let entity = create_entity(&t).await;
    let other = t.new_client(json!({"scopes": ["*"]})).await;
    let theirs = create_party_as(&t, &other).await;
    let ok = file(1024, 7);
    let small = file(100, 7);
    let title = ("documentTitle", "documentTitle0=ID");
    for (op, owner, wrong) in [
        ("uploadPartyDocument", &party, &entity),
        ("uploadEntityDocument", &entity, &party),
    ] {
        let cases: Vec<Case> = vec![
            (vec![title], vec![("userfile0", "a.pdf", &ok)], "106"),
            (vec![("partyId", owner)], vec![("userfile0", "a.pdf", &ok)], "106"),
            (vec![("partyId", owner), title], vec![], "106"),
            (
                vec![("partyId", owner), title],
                vec![("userfile0", "a.gif", &ok)],
                "106",
            ),
            (
                vec![("partyId", owner), title],
                vec![("userfile0", "a.pdf", &small)],
                "106",
            ),
            (
                vec![("partyId", "P9999999"), title],
                vec![("userfile0", "a.pdf", &ok)],
                "198",
            ),
            (
                vec![("partyId", wrong), title],
                vec![("userfile0", "a.pdf", &ok)],
                "198",
            ),
            (
                vec![("partyId", &theirs), title],
                vec![("userfile0", "a.pdf", &ok)],
                "198",
            ),
        ];
        for (fields, files, expected) in &cases {
            let r = t.multipart(op, fields, files).await;
            assert_eq!(r.code(), *expected, "{op} {fields:?}: {:?}", r.json);
        }
    }
    // Entities take no TXT; parties do.
    let r = t
        .multipart(
            "uploadEntityDocument",
            &[("partyId", &entity), title],
            &[("userfile0", "a.txt", &ok)],
        )
        .await;
    code(&r, "106");
    for (get, owner) in [("getPartyDocument", &party), ("getEntityDocument", &entity)] {
        let r = t.post(get, &[("partyId", owner)]).await;
        code(&r, "101");
        assert_eq!(r.json["partyDocumentDetails"], json!([]), "{get}: nothing written");
    }
    assert!(l.next(1).await.is_none());
    for (get, del, owner, wrong) in [
        ("getPartyDocument", "deletePartyDocument", &party, &entity),
        ("getEntityDocument", "deleteEntityDocument", &entity, &party),
    ] {
        code(&t.post(get, &[]).await, "106");
        code(&t.post(get, &[("partyId", wrong)]).await, "198");
        code(&t.post(get, &[("partyId", &theirs)]).await, "198");
        code(
            &t.post(get, &[("partyId", owner), ("documentId", "999999")]).await,
            "106",
        );
        code(&t.post(del, &[("partyId", owner)]).await, "106");
        code(&t.post(del, &[("documentId", "999999")]).await, "106");
        code(
            &t.post(del, &[("partyId", "P9999999"), ("documentId", "999999")]).await,
            "198",
        );
        code(
            &t.post(del, &[("partyId", owner), ("documentId", "999999")]).await,
            "106",
        );
    }
    // A document of one party is not another's.
    let r = t
        .multipart(
            "uploadPartyDocument",
            &[("partyId", &party), title],
            &[("userfile0", "a.pdf", &ok)],
        )
        .await;
    code(&r, "101");
    let second = create_party(&t).await;
    let doc = t.post("getPartyDocument", &[("partyId", &party)]).await.json["partyDocumentDetails"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    code(
        &t.post("deletePartyDocument", &[("partyId", &second), ("documentId", &doc)])
            .await,
        "106",
    );
    code(
        &t.post("getEntityDocument", &[("partyId", &entity), ("documentId", &doc)])
            .await,
        "106",
    );
    // A deleted party's documents are gone with it (198).
    code(&t.post("deleteParty", &[("partyId", &party)]).await, "101");
    code(&t.post("getPartyDocument", &[("partyId", &party)]).await, "198");
});

both!(entity_documents_round_trip, |t: TestApp| async move {
    let mut l = hook(&t, "uploadEntityDocument").await;
    let id = create_entity(&t).await;
    let (a, b) = (file(1024, 8), file(5000, 9));
    let r = t
        .multipart(
            "uploadEntityDocument",
            &[
                ("partyId", &id),
                ("documentTitle", "documentTitle0=Articles&documentTitle1=EIN letter"),
            ],
            &[("userfile0", "articles.PDF", &a), ("userfile1", "ein.jpeg", &b)],
        )
        .await;
    code(&r, "101");
    assert_eq!(r.json["document_details"], UPLOADED);
    // Part 1 lists no uploadEntityDocument payload: the response record goes (CONTRACT), led
    // by the request's identifiers, since a message names nothing.
    let got = l.next(5).await.expect("uploadEntityDocument's webhook").pairs();
    assert_eq!(
        got,
        [
            ("partyId".to_owned(), id.clone()),
            ("document_details".to_owned(), UPLOADED.to_owned())
        ]
    );
    let r = t.post("getEntityDocument", &[("partyId", &id)]).await;
    let docs = r.json["partyDocumentDetails"].as_array().unwrap().clone();
    assert_eq!(docs.len(), 2);
    assert_eq!(
        (
            &docs[0]["partyid"],
            &docs[0]["documentFileName"],
            &docs[1]["documentFileName"]
        ),
        (&json!(id), &json!("articles.PDF"), &json!("ein.jpeg"))
    );
    fetch_ok(&t, url(&docs[0]), &a).await;
    fetch_ok(&t, url(&docs[1]), &b).await;
    let first = docs[0]["documentid"].as_str().unwrap();
    let r = t
        .post("deleteEntityDocument", &[("partyId", &id), ("documentId", first)])
        .await;
    code(&r, "101");
    assert_eq!(r.json["partyDocumentDetails"], DELETED);
    assert_eq!(t.fetch(url(&docs[0])).await.0, 404);
    let r = t.post("getEntityDocument", &[("partyId", &id)]).await;
    assert_eq!(r.json["partyDocumentDetails"].as_array().unwrap().len(), 1);
});

async fn request_id(t: &TestApp, investor: &str) -> String {
    let r = t.post("requestKycAml", &[("investorId", investor)]).await;
    code(&r, "101");
    r.json["requestDetails"][0]["requestId"].as_str().unwrap().to_owned()
}

both!(requested_uploads, |t: TestApp| async move {
    let party = create_party(&t).await;
    let account = create_account(&t).await;
    let req = request_id(&t, &party).await;
    let (a, b, c) = (file(1024, 10), file(2048, 11), file(1100, 12));
    // One file: the title needs no prefix.
    let r = t
        .multipart(
            "requestUploadPartyDocument",
            &[
                ("investorId", &party),
                ("requestId", &req),
                ("documentTitle", "Driver license"),
                ("createdIpAddress", "10.1.1.1"),
            ],
            &[("userfile0", "dl.jpg", &a)],
        )
        .await;
    code(&r, "101");
    assert_eq!(r.json["document_details"], UPLOADED);
    // Several files: each title by its index.
    let r = t
        .multipart(
            "requestUploadPartyDocument",
            &[
                ("investorId", &party),
                ("requestId", &req),
                ("documentTitle", "documentTitle0=Statement&documentTitle1=Lease"),
            ],
            &[("userfile0", "s.pdf", &b), ("userfile1", "l.txt", &c)],
        )
        .await;
    code(&r, "101");
    let r = t.post("getuploadPartyDocument", &[("partyId", &party)]).await;
    code(&r, "101");
    let docs = r.json["partyDocumentDetails"].as_array().unwrap().clone();
    assert_eq!(docs.len(), 3);
    assert_eq!(
        keys(&docs[0]),
        [
            "id",
            "documentid",
            "partyid",
            "documentTitle",
            "documentFileName",
            "documentFileReferenceCode",
            "documentUrl",
            "createdDate",
            "requestId"
        ]
    );
    let titles: Vec<&Value> = docs.iter().map(|d| &d["documentTitle"]).collect();
    assert_eq!(titles, [&json!("Driver license"), &json!("Statement"), &json!("Lease")]);
    assert!(docs
        .iter()
        .all(|d| d["requestId"] == json!(req) && d["partyid"] == json!(party)));
    for (d, bytes) in docs.iter().zip([&a, &b, &c]) {
        fetch_ok(&t, url(d), bytes).await;
    }
    // They are not the party's own documents.
    let r = t.post("getPartyDocument", &[("partyId", &party)]).await;
    assert_eq!(r.json["partyDocumentDetails"], json!([]));

    // Errors, each writing nothing.
    let other_party = create_party(&t).await;
    let other_req = request_id(&t, &other_party).await;
    let ok: &[u8] = &a;
    let file0 = [("userfile0", "a.pdf", ok)];
    let two = [("userfile0", "a.pdf", ok), ("userfile1", "b.pdf", ok)];
    let short = [("userfile0", "a.pdf", &ok[..999])];
    let cases: Vec<SliceCase> = vec![
        (vec![("requestId", &req), ("documentTitle", "x")], &file0, "106"),
        (vec![("investorId", &party), ("documentTitle", "x")], &file0, "106"),
        (vec![("investorId", &party), ("requestId", &req)], &file0, "106"),
        (
            vec![("investorId", &party), ("requestId", &req), ("documentTitle", "x")],
            &[],
            "106",
        ),
        // Several files need indexed titles.
        (
            vec![("investorId", &party), ("requestId", &req), ("documentTitle", "x")],
            &two,
            "106",
        ),
        (
            vec![("investorId", &party), ("requestId", &req), ("documentTitle", "x")],
            &short,
            "106",
        ),
        (
            vec![("investorId", "P9999999"), ("requestId", &req), ("documentTitle", "x")],
            &file0,
            "198",
        ),
        (
            vec![("investorId", "A9999999"), ("requestId", &req), ("documentTitle", "x")],
            &file0,
            "148",
        ),
        // Another investor's request, an unknown one, and an investor without any.
        (
            vec![
                ("investorId", &party),
                ("requestId", &other_req),
                ("documentTitle", "x"),
            ],
            &file0,
            "152",
        ),
        (
            vec![
                ("investorId", &party),
                ("requestId", "999999999"),
                ("documentTitle", "x"),
            ],
            &file0,
            "152",
        ),
        (
            vec![("investorId", &account), ("requestId", &req), ("documentTitle", "x")],
            &file0,
            "152",
        ),
    ];
    for (fields, files, expected) in &cases {
        let r = t.multipart("requestUploadPartyDocument", fields, files).await;
        assert_eq!(r.code(), *expected, "{fields:?}: {:?}", r.json);
    }
    let r = t.post("getuploadPartyDocument", &[("partyId", &party)]).await;
    assert_eq!(r.json["partyDocumentDetails"].as_array().unwrap().len(), 3);
    for id in [&other_party, &account] {
        let r = t.post("getuploadPartyDocument", &[("partyId", id)]).await;
        code(&r, "101");
        assert_eq!(r.json["partyDocumentDetails"], json!([]));
    }
    code(&t.post("getuploadPartyDocument", &[]).await, "106");
    code(
        &t.post("getuploadPartyDocument", &[("partyId", "P9999999")]).await,
        "198",
    );
    code(
        &t.post("getuploadPartyDocument", &[("partyId", "A9999999")]).await,
        "148",
    );
    // The party's own uploads are listed too (RV's client looks for what it uploaded there),
    // in order, without a request.
    let r = t
        .multipart(
            "uploadPartyDocument",
            &[("partyId", &party), ("documentTitle", "Passport [id: 7]")],
            &file0,
        )
        .await;
    code(&r, "101");
    let r = t.post("getuploadPartyDocument", &[("partyId", &party)]).await;
    let docs = r.json["partyDocumentDetails"].as_array().unwrap();
    assert_eq!(docs.len(), 4);
    assert_eq!(
        (&docs[3]["documentTitle"], &docs[3]["requestId"]),
        (&json!("Passport [id: 7]"), &json!(""))
    );
    let own = docs[3]["documentid"].as_str().unwrap();
    let r = t
        .post("getuploadPartyDocument", &[("partyId", &party), ("documentId", own)])
        .await;
    assert_eq!(r.json["partyDocumentDetails"][0]["documentTitle"], "Passport [id: 7]");

    // An account and an entity investor.
    let account_req = request_id(&t, &account).await;
    let r = t
        .multipart(
            "requestUploadPartyDocument",
            &[
                ("investorId", &account),
                ("requestId", &account_req),
                ("documentTitle", "Trust deed"),
            ],
            &file0,
        )
        .await;
    code(&r, "101");
    let r = t.post("getuploadPartyDocument", &[("partyId", &account)]).await;
    assert_eq!(r.json["partyDocumentDetails"][0]["requestId"], json!(account_req));
    let entity = create_entity(&t).await;
    let entity_req = request_id(&t, &entity).await;
    let r = t
        .multipart(
            "requestUploadPartyDocument",
            &[
                ("investorId", &entity),
                ("requestId", &entity_req),
                ("documentTitle", "Articles"),
            ],
            &file0,
        )
        .await;
    code(&r, "101");
    // An entity's documents are never TXT, whichever operation sends them.
    let fields = [
        ("investorId", entity.as_str()),
        ("requestId", &entity_req),
        ("documentTitle", "Notes"),
    ];
    let r = t
        .multipart("requestUploadPartyDocument", &fields, &[("userfile0", "a.txt", ok)])
        .await;
    code(&r, "106");
});

async fn billed(t: &TestApp) -> u64 {
    records::count::<BillingEntry>(t.store(), &t.client_id, true)
        .await
        .unwrap()
}

both!(requested_upload_billed_in_production_only, |t: TestApp| async move {
    let party = create_party(&t).await;
    let req = request_id(&t, &party).await;
    let a = file(1024, 13);
    let fields = [
        ("investorId", party.as_str()),
        ("requestId", &req),
        ("documentTitle", "x"),
    ];
    code(
        &t.multipart("requestUploadPartyDocument", &fields, &[("userfile0", "a.pdf", &a)])
            .await,
        "101",
    );
    assert_eq!(billed(&t).await, 0, "sandbox calls are not billed");

    let prod = TestApp::with_env(t.backend, Environment::Production).await;
    let party = create_party(&prod).await;
    let req = request_id(&prod, &party).await;
    assert_eq!(billed(&prod).await, 1, "requestKycAml");
    let fields = [
        ("investorId", party.as_str()),
        ("requestId", &req),
        ("documentTitle", "documentTitle0=a&documentTitle1=b"),
    ];
    code(
        &prod
            .multipart(
                "requestUploadPartyDocument",
                &fields,
                &[("userfile0", "a.pdf", &a), ("userfile1", "b.pdf", &a)],
            )
            .await,
        "101",
    );
    assert_eq!(
        billed(&prod).await,
        2,
        "one fee per request, whatever the number of files"
    );
    // A refused upload is not billed.
    let bad = [
        ("investorId", party.as_str()),
        ("requestId", "1"),
        ("documentTitle", "x"),
    ];
    code(
        &prod
            .multipart("requestUploadPartyDocument", &bad, &[("userfile0", "a.pdf", &a)])
            .await,
        "152",
    );
    code(
        &prod
            .multipart(
                "requestUploadPartyDocument",
                &fields[..2],
                &[("userfile0", "a.pdf", &a)],
            )
            .await,
        "106",
    );
    assert_eq!(billed(&prod).await, 2);
});

both!(verification_documents, |t: TestApp| async move {
    let mut l = hook(&t, "uploadVerificationDocument").await;
    let id = create_account(&t).await;
    let (a, b) = (file(1024, 14), file(7000, 15));
    let r = t
        .multipart(
            "uploadVerificationDocument",
            &[("accountId", &id), ("documentTitle", "documentTitle0=W-2 2022")],
            &[("userfile", "w2.pdf", &a)],
        )
        .await;
    code(&r, "101");
    assert_eq!(r.json["document_details"], UPLOADED);
    once(&mut l, &[("accountId", &id)]).await;
    let r = t
        .multipart(
            "uploadVerificationDocument",
            &[("accountId", &id), ("documentTitle", "Brokerage statement")],
            &[("userfile", "statement.png", &b)],
        )
        .await;
    code(&r, "101");
    once(&mut l, &[("accountId", &id)]).await;

    let r = t.post("getAiDocument", &[("accountId", &id)]).await;
    code(&r, "101");
    assert_eq!(r.json["letter_details"], json!([]));
    let docs = r.json["document_details"].as_array().unwrap().clone();
    assert_eq!(docs.len(), 2);
    assert_eq!(
        keys(&docs[0]),
        [
            "id",
            "documentid",
            "accountId",
            "documentTitle",
            "documentFileName",
            "documentFileReferenceCode",
            "documentUrl",
            "createdDate"
        ]
    );
    assert_eq!(docs[0]["documentTitle"], "documentTitle0=W-2 2022", "stored verbatim");
    assert_eq!(
        (
            &docs[1]["documentTitle"],
            &docs[1]["documentFileName"],
            &docs[1]["accountId"]
        ),
        (&json!("Brokerage statement"), &json!("statement.png"), &json!(id))
    );
    fetch_ok(&t, url(&docs[0]), &a).await;
    fetch_ok(&t, url(&docs[1]), &b).await;
    if t.backend == Backend::Embedded {
        assert_eq!(t.fetch(&tampered(url(&docs[1]))).await.0, 403);
    }
    let second = docs[1]["documentid"].as_str().unwrap();
    let r = t
        .post("getAiDocument", &[("accountId", &id), ("documentId", second)])
        .await;
    code(&r, "101");
    assert_eq!(r.json["document_details"].as_array().unwrap().len(), 1);
    assert_eq!(r.json["document_details"][0]["id"], docs[1]["id"]);
    assert_eq!(r.json["letter_details"], json!([]));

    // No letter issued yet: an empty array.
    let r = t.post("getAiLetter", &[("accountId", &id)]).await;
    code(&r, "101");
    assert_eq!(r.json["document_details"], json!([]));

    // Errors.
    for bad in ["999999", "zz", "!"] {
        let r = t
            .post("getAiDocument", &[("accountId", &id), ("documentId", bad)])
            .await;
        code(&r, "233");
        assert_eq!(r.desc(), "No AI document found for this account");
    }
    code(&t.post("getAiDocument", &[]).await, "106");
    code(&t.post("getAiDocument", &[("accountId", "A9999999")]).await, "148");
    code(&t.post("getAiLetter", &[]).await, "106");
    code(&t.post("getAiLetter", &[("accountId", "A9999999")]).await, "148");
    let other = t.new_client(json!({"scopes": ["*"]})).await;
    let theirs = create_account_as(&t, &other, &[]).await;
    code(&t.post("getAiDocument", &[("accountId", &theirs)]).await, "148");
    code(&t.post("getAiLetter", &[("accountId", &theirs)]).await, "148");
    // Another account's document is not this one's.
    let mine2 = create_account(&t).await;
    let r = t
        .post("getAiDocument", &[("accountId", &mine2), ("documentId", second)])
        .await;
    code(&r, "233");
});

both!(verification_document_errors_write_nothing, |t: TestApp| async move {
    let mut l = hook(&t, "uploadVerificationDocument").await;
    let id = create_account(&t).await;
    let other = t.new_client(json!({"scopes": ["*"]})).await;
    let theirs = create_account_as(&t, &other, &[]).await;
    let ok = file(2000, 16);
    let small = file(999, 16);
    let title = ("documentTitle", "Tax return");
    let cases: Vec<Case> = vec![
        (vec![title], vec![("userfile", "a.pdf", &ok)], "106"),
        (vec![("accountId", &id)], vec![("userfile", "a.pdf", &ok)], "106"),
        (vec![("accountId", &id), title], vec![], "106"),
        (
            vec![("accountId", &id), title],
            vec![("userfile", "a.docx", &ok)],
            "106",
        ),
        (
            vec![("accountId", &id), title],
            vec![("userfile", "a.pdf", &small)],
            "106",
        ),
        (
            vec![("accountId", "A9999999"), title],
            vec![("userfile", "a.pdf", &ok)],
            "148",
        ),
        (
            vec![("accountId", &theirs), title],
            vec![("userfile", "a.pdf", &ok)],
            "148",
        ),
    ];
    for (fields, files, expected) in &cases {
        let r = t.multipart("uploadVerificationDocument", fields, files).await;
        assert_eq!(r.code(), *expected, "{fields:?}: {:?}", r.json);
    }
    let r = t
        .multipart(
            "uploadVerificationDocument",
            &[("accountId", &id), title],
            &[("userfile", "a.pdf", &small)],
        )
        .await;
    assert_eq!(r.json["Error(s)"], SIZE);
    let r = t.post("getAiDocument", &[("accountId", &id)]).await;
    assert_eq!(
        r.json["document_details"],
        json!([]),
        "a rejected upload writes nothing"
    );
    assert!(l.next(1).await.is_none(), "no webhook for rejected uploads");
    // `userfile0` is accepted for the single file too.
    let r = t
        .multipart(
            "uploadVerificationDocument",
            &[("accountId", &id), title],
            &[("userfile0", "a.txt", &ok)],
        )
        .await;
    code(&r, "101");
    once(&mut l, &[("accountId", &id)]).await;
});
