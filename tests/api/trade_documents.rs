//! Trade documents (uploads, reads with their bytes fetched back, archive flags, virtual
//! deletes) and the e-signature of trades and NDAs: subscription documents sent, resent and
//! embedded, their status changes reported by the operator's sandbox (sign, decline, void)
//! and by clients, every webhook checked field by field at a real listener, and every error
//! code checked to write nothing. Each case runs on the embedded store with a local blob
//! directory and on DynamoDB with S3 (moto).

use api_tests::{both, Creds, Listener, Resp, TestApp};
use http::Method;
use serde_json::{json, Value};
use shared::documents::{self, Owner};
use shared::records::trade as trade_model;
use shared::store::{Index, Item, Query, SkRange};

use crate::fixtures::{code, hook};
use crate::fixtures::{create_account, create_account_as, create_party, create_party_as, link, with, ISSUER, OFFERING};

const UPLOADED: &str = "Document has been uploaded Successfully";
const DELETED: &str = "Document deleted successfully";
const SIZE: &str = "Document File Size Must Be Greater Than 1 kb";
const NO_ACCOUNT: &str = "No e-signature account is connected for this client";

// ---------------------------------------------------------------- fixtures

async fn offering_as(t: &TestApp, c: &Creds) -> String {
    let r = t.form_as(c, Method::PUT, "createIssuer", ISSUER).await;
    code(&r, "101");
    let issuer = r.inserted("issuerDetails")["issuerId"].as_str().unwrap().to_owned();
    let r = t
        .form_as(
            c,
            Method::PUT,
            "createOffering",
            &with(OFFERING, &[("issuerId", &issuer), ("totalShares", "1000")]),
        )
        .await;
    code(&r, "101");
    r.inserted("offeringDetails")["offeringId"].as_str().unwrap().to_owned()
}

async fn offering(t: &TestApp) -> String {
    offering_as(t, &t.creds()).await
}

/// An account with a primary party: (accountId, partyId, linkId).
async fn investor(t: &TestApp) -> (String, String, String) {
    let a = create_account(t).await;
    let p = create_party(t).await;
    let r = link(t, &a, "IndivACParty", &p, "1").await;
    code(&r, "101");
    let l = r.inserted("linkDetails")["id"].as_str().unwrap().to_owned();
    (a, p, l)
}

async fn investor_as(t: &TestApp, c: &Creds) -> String {
    let a = create_account_as(t, c, &[]).await;
    let p = create_party_as(t, c).await;
    let r = t
        .form_as(
            c,
            Method::PUT,
            "createLink",
            &[
                ("firstEntryType", "Account"),
                ("firstEntry", &a),
                ("relatedEntryType", "IndivACParty"),
                ("relatedEntry", &p),
                ("linkType", "owner"),
                ("primary_value", "1"),
            ],
        )
        .await;
    code(&r, "101");
    a
}

async fn trade_as(t: &TestApp, c: &Creds, account: &str, offering: &str) -> String {
    let r = t
        .form_as(
            c,
            Method::POST,
            "createTrade",
            &[
                ("accountId", account),
                ("offeringId", offering),
                ("transactionType", "ACH"),
                ("transactionUnits", "5"),
            ],
        )
        .await;
    code(&r, "101");
    r.inserted("purchaseDetails")["tradeId"].as_str().unwrap().to_owned()
}

async fn trade(t: &TestApp, account: &str, offering: &str) -> String {
    trade_as(t, &t.creds(), account, offering).await
}

/// A file of `len` bytes that differs by `seed`.
fn file(len: usize, seed: u8) -> Vec<u8> {
    let mut v = b"%PDF-1.4\n".to_vec();
    v.extend((0..len.saturating_sub(9)).map(|i| b'a' + ((i as u8).wrapping_add(seed) % 26)));
    v.truncate(len);
    v
}

fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
    v.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
}

fn keys(v: &Value) -> Vec<&str> {
    v.as_object().unwrap().keys().map(String::as_str).collect()
}

fn s(v: &Value) -> String {
    v.as_str().unwrap_or_else(|| panic!("a string: {v}")).to_owned()
}

/// The next `n` webhooks at `l` (any order, sorted), and no further one.
async fn webhooks(l: &mut Listener, n: usize) -> Vec<Vec<(String, String)>> {
    let mut out = Vec::new();
    for i in 0..n {
        let got = l
            .next(5)
            .await
            .unwrap_or_else(|| panic!("webhook {i} of {n} delivered"));
        assert_eq!(got.method, Method::POST);
        out.push(got.pairs());
    }
    assert!(l.next(1).await.is_none(), "exactly {n} webhooks");
    out.sort();
    out
}

async fn once(l: &mut Listener, expected: &[(&str, &str)]) {
    assert_eq!(webhooks(l, 1).await, vec![pairs(expected)]);
}

async fn none(l: &mut Listener) {
    assert!(l.next(1).await.is_none(), "no webhook");
}

/// Every item of a partition, as stored.
async fn items(t: &TestApp, pk: &str) -> Vec<Item> {
    let mut q = Query::new(Index::Table, pk);
    q.sk = SkRange::All;
    t.store().query(&q).await.unwrap().items
}

fn docs_pk(t: &TestApp, trade: &str) -> String {
    documents::partition(
        &t.client_id,
        Owner {
            kind: "TRADE",
            id: trade,
        },
    )
}

fn sign_pk(t: &TestApp, trade: &str) -> String {
    format!("{}#SIGNDOC#{trade}", t.client_id)
}

/// What an e-signature call may change: the trade's record and copies, its documents,
/// its subscription documents, the client's envelopes and their references, its NDAs.
async fn esign_state(t: &TestApp, trade: &str) -> Vec<Vec<Item>> {
    let c = &t.client_id;
    let record = t.store().get(&trade_model::trade_key(c, trade)).await.unwrap();
    let tr = trade_model::load(t.store(), c, trade).await.unwrap().unwrap().rec;
    let mut out = vec![record.into_iter().collect::<Vec<_>>()];
    for pk in [
        sign_pk(t, trade),
        trade_model::by_account_pk(c, &tr.account_id),
        trade_model::by_offering_pk(c, &tr.offering_id),
        format!("{c}#ESIGNENV"),
        format!("{c}#ESIGNREF"),
        format!("{c}#NDA"),
        format!("{c}#NDAFOR"),
    ] {
        out.push(items(t, &pk).await);
    }
    out
}

async fn get_trade(t: &TestApp, account: &str, id: &str) -> Value {
    let r = t.post("getTrade", &[("accountId", account), ("tradeId", id)]).await;
    code(&r, "101");
    r.json["partyDetails"][0].clone()
}

async fn get_documents(t: &TestApp, trade: &str) -> Vec<Value> {
    let r = t.post("getTradeDocument", &[("tradeId", trade)]).await;
    code(&r, "101");
    r.json["document_details"].as_array().unwrap().clone()
}

async fn fetch_ok(t: &TestApp, url: &str, bytes: &[u8]) {
    let (status, body) = t.fetch(url).await;
    assert_eq!(status, 200, "{url}");
    assert_eq!(body.as_ref(), bytes);
}

/// The sandbox account's templates (fetchSubscriptionDocuments).
async fn account_templates(t: &TestApp) -> Vec<Value> {
    let r = t.post("fetchSubscriptionDocuments", &[]).await;
    code(&r, "101");
    r.json["document_details"].as_array().unwrap().clone()
}

/// Attaches a template of the account to the offering; answers its `templateNameID`.
async fn attach(t: &TestApp, offering: &str, template: &Value) -> String {
    let file_name = format!("{}--{}", s(&template["templateId"]), s(&template["name"]));
    let r = t
        .post(
            "addSubscriptionsforOffering",
            &[("offeringId", offering), ("file_name", &file_name)],
        )
        .await;
    code(&r, "101");
    r.json["document_details"][0]["templateNameID"].to_string()
}

fn envelope_path(t: &TestApp, key: &str) -> String {
    format!("/operator/clients/{}/esign/envelopes/{key}", t.client_id)
}

async fn envelope(t: &TestApp, key: &str) -> Value {
    let r = t.operator(Method::GET, &envelope_path(t, key), Value::Null).await;
    assert_eq!(r.status, 200, "{:?}", r.json);
    r.json
}

/// The operator's sandbox action on an envelope (`sign`, `decline`, `void`, `send`).
async fn act(t: &TestApp, key: &str, action: &str) -> Resp {
    let r = t
        .operator(
            Method::POST,
            &format!("{}/{action}", envelope_path(t, key)),
            json!({"reason": "sandbox"}),
        )
        .await;
    assert_eq!(r.status, 200, "{action}: {:?}", r.json);
    r
}

/// updateDocuSignStatus as the client.
async fn client_status(t: &TestApp, trade: &str, key: &str, status: &str) -> Resp {
    t.post(
        "updateDocuSignStatus",
        &[("tradeId", trade), ("documentKey", key), ("esignStatus", status)],
    )
    .await
}

/// The client's NDAs, their pointers and its envelopes, as stored.
async fn nda_state(t: &TestApp) -> Vec<Vec<Item>> {
    let c = &t.client_id;
    let mut out = Vec::new();
    for pk in [format!("{c}#NDA"), format!("{c}#NDAFOR"), format!("{c}#ESIGNENV")] {
        out.push(items(t, &pk).await);
    }
    out
}

fn subscription_params<'a>(offering: &'a str, account: &'a str, trade: &'a str) -> Vec<(&'a str, &'a str)> {
    vec![("offeringId", offering), ("accountId", account), ("tradeId", trade)]
}

/// An offering with the account's first `n` templates attached, an investor and a trade:
/// (offeringId, accountId, partyId, tradeId, the attached templates).
async fn subscription_setup(t: &TestApp, n: usize) -> (String, String, String, String, Vec<Value>) {
    let o = offering(t).await;
    let tpls: Vec<Value> = account_templates(t).await.into_iter().take(n).collect();
    for tpl in &tpls {
        attach(t, &o, tpl).await;
    }
    let (a, p, _) = investor(t).await;
    let id = trade(t, &a, &o).await;
    (o, a, p, id, tpls)
}

// ---------------------------------------------------------------- trade documents

both!(trade_documents_from_an_upload, |t: TestApp| async move {
    let o = offering(&t).await;
    let (a, _, _) = investor(&t).await;
    let id = trade(&t, &a, &o).await;
    let receipt = file(4096, 9);
    let upload = t.upload_file("receipt.pdf", receipt.clone()).await;
    let r = t
        .post(
            "uploadTradeDocument",
            &[
                ("tradeId", &id),
                ("documentTitle", "Wire receipt"),
                ("uploadId0", &upload),
            ],
        )
        .await;
    code(&r, "101");
    let docs = get_documents(&t, &id).await;
    assert_eq!(docs.len(), 1);
    assert_eq!(docs[0]["documentFileName"], "receipt.pdf");
    let (status, body) = t.fetch(docs[0]["documentUrl"].as_str().unwrap()).await;
    assert_eq!((status, body.to_vec()), (200, receipt));
});

both!(trade_documents_round_trip, |t: TestApp| async move {
    let mut up = hook(&t, "uploadTradeDocument").await;
    let mut reads = hook(&t, "getTradeDocument").await;
    let mut archives = hook(&t, "updateTradeDocArchivestatus").await;
    let mut deletes = hook(&t, "deleteTradeDocument").await;
    let o = offering(&t).await;
    let (a, _, _) = investor(&t).await;
    let id = trade(&t, &a, &o).await;
    assert!(get_documents(&t, &id).await.is_empty());
    once(&mut reads, &[("tradeId", &id), ("documentIds", "")]).await;

    let (pdf, txt) = (file(2048, 1), file(1024, 2));
    let r = t
        .multipart(
            "uploadTradeDocument",
            &[
                ("tradeId", &id),
                (
                    "documentTitle",
                    "documentTitle0=Subscription & wire receipt&documentTitle1=Notes",
                ),
                ("file_name", "filename0=receipt.pdf&filename1=notes.txt"),
                ("createdIpAddress", "10.0.0.9"),
            ],
            &[("userfile0", "scan.pdf", &pdf), ("userfile1", "n.txt", &txt)],
        )
        .await;
    code(&r, "101");
    assert_eq!(r.json["document_details"], UPLOADED);
    once(&mut up, &[("tradeId", &id)]).await;

    let docs = get_documents(&t, &id).await;
    assert_eq!(docs.len(), 2);
    assert_eq!(
        keys(&docs[0]),
        [
            "id",
            "tradeId",
            "documentid",
            "documentTitle",
            "documentFileName",
            "documentFileReferenceCode",
            "documentUrl",
            "createdDate",
            "archive_status",
            "virtualStatus"
        ]
    );
    let first = &docs[0];
    assert_eq!(
        (
            &first["tradeId"],
            &first["documentTitle"],
            &first["documentFileName"],
            &first["archive_status"],
            &first["virtualStatus"]
        ),
        (
            &json!(id),
            &json!("Subscription & wire receipt"),
            &json!("receipt.pdf"),
            &json!("0"),
            &json!("ACTIVE")
        )
    );
    assert_eq!(docs[1]["documentFileName"], "notes.txt");
    let ref0 = s(&first["documentFileReferenceCode"]);
    assert_eq!(ref0.len(), 12);
    assert!(ref0.bytes().all(|b| b.is_ascii_digit()));
    assert_eq!(s(&first["createdDate"]).len(), 19);
    let ids = format!("{},{}", s(&docs[0]["id"]), s(&docs[1]["id"]));
    once(&mut reads, &[("tradeId", &id), ("documentIds", &ids)]).await;
    fetch_ok(&t, &s(&docs[0]["documentUrl"]), &pdf).await;
    fetch_ok(&t, &s(&docs[1]["documentUrl"]), &txt).await;

    // Archive, then unarchive, by reference code.
    let expected = |archive: &str, virtual_status: &str| {
        pairs(&[
            ("tradeId", &id),
            ("documentid", &s(&first["documentid"])),
            ("documentTitle", "Subscription & wire receipt"),
            ("documentFileName", "receipt.pdf"),
            ("documentFileReferenceCode", &ref0),
            ("virtualStatus", virtual_status),
            ("createdDate", &s(&first["createdDate"])),
            ("archiveStatus", archive),
        ])
    };
    let r = t
        .post(
            "updateTradeDocArchivestatus",
            &[
                ("tradeId", &id),
                ("documentFileReferenceCode", &ref0),
                ("archiveStatus", "1"),
            ],
        )
        .await;
    code(&r, "101");
    let record: Vec<(String, String)> = r.json["document_details"][0]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), s(v)))
        .collect();
    assert_eq!(record, expected("1", "ACTIVE"));
    assert_eq!(webhooks(&mut archives, 1).await, vec![expected("1", "ACTIVE")]);
    let docs = get_documents(&t, &id).await;
    webhooks(&mut reads, 1).await;
    assert_eq!(
        (&docs[0]["archive_status"], &docs[1]["archive_status"]),
        (&json!("1"), &json!("0"))
    );
    fetch_ok(&t, &s(&docs[0]["documentUrl"]), &pdf).await;
    let r = t
        .post(
            "updateTradeDocArchivestatus",
            &[
                ("tradeId", &id),
                ("documentFileReferenceCode", &ref0),
                ("archiveStatus", "0"),
            ],
        )
        .await;
    code(&r, "101");
    assert_eq!(webhooks(&mut archives, 1).await, vec![expected("0", "ACTIVE")]);
    assert_eq!(get_documents(&t, &id).await[0]["archive_status"], "0");
    webhooks(&mut reads, 1).await;

    // Delete by document ID (virtual: the record stays, the bytes go).
    let old_url = s(&first["documentUrl"]);
    let r = t
        .post(
            "deleteTradeDocument",
            &[("tradeId", &id), ("documentId", &s(&first["documentid"]))],
        )
        .await;
    code(&r, "101");
    assert_eq!(r.json["document_details"], DELETED);
    assert_eq!(webhooks(&mut deletes, 1).await, vec![expected("0", "DELETED")]);
    let docs = get_documents(&t, &id).await;
    webhooks(&mut reads, 1).await;
    assert_eq!(docs.len(), 1);
    assert_eq!(docs[0]["documentFileName"], "notes.txt");
    assert_eq!(t.fetch(&old_url).await.0, 404, "the bytes are gone");
    assert_eq!(items(&t, &docs_pk(&t, &id)).await.len(), 2, "a virtual delete");
    // The deleted document can no more be named.
    for (op, extra) in [
        ("deleteTradeDocument", vec![("documentId", s(&first["id"]))]),
        (
            "updateTradeDocArchivestatus",
            vec![
                ("documentFileReferenceCode", ref0.clone()),
                ("archiveStatus", "1".to_owned()),
            ],
        ),
    ] {
        let mut params = vec![("tradeId", id.as_str())];
        params.extend(extra.iter().map(|(k, v)| (*k, v.as_str())));
        code(&t.post(op, &params).await, "106");
    }
    // Delete by reference code.
    let ref1 = s(&docs[0]["documentFileReferenceCode"]);
    let r = t
        .post(
            "deleteTradeDocument",
            &[("tradeId", &id), ("documentFileReferenceCode", &ref1)],
        )
        .await;
    code(&r, "101");
    webhooks(&mut deletes, 1).await;
    assert!(get_documents(&t, &id).await.is_empty());
    none(&mut up).await;
    none(&mut archives).await;
});

both!(
    trade_documents_of_a_cancelled_trade_and_one_file,
    |t: TestApp| async move {
        let o = offering(&t).await;
        let (a, _, _) = investor(&t).await;
        let id = trade(&t, &a, &o).await;
        code(
            &t.post("deleteTrade", &[("accountId", &a), ("tradeId", &id)]).await,
            "101",
        );
        // One file: the title prefix is optional, the file keeps its own name.
        let png = file(1500, 7);
        let r = t
            .multipart(
                "uploadTradeDocument",
                &[("tradeId", &id), ("documentTitle", "Wire confirmation")],
                &[("userfile0", "wire.PNG", &png)],
            )
            .await;
        code(&r, "101");
        let docs = get_documents(&t, &id).await;
        assert_eq!(
            (&docs[0]["documentTitle"], &docs[0]["documentFileName"]),
            (&json!("Wire confirmation"), &json!("wire.PNG"))
        );
        fetch_ok(&t, &s(&docs[0]["documentUrl"]), &png).await;
    }
);

both!(trade_document_errors_write_nothing, |t: TestApp| async move {
    let mut up = hook(&t, "uploadTradeDocument").await;
    let mut archives = hook(&t, "updateTradeDocArchivestatus").await;
    let mut deletes = hook(&t, "deleteTradeDocument").await;
    let o = offering(&t).await;
    let (a, _, _) = investor(&t).await;
    let id = trade(&t, &a, &o).await;
    let second = trade(&t, &a, &o).await;
    let other = t.new_client(json!({"scopes": ["*"]})).await;
    let theirs = {
        let o = offering_as(&t, &other).await;
        let a = investor_as(&t, &other).await;
        trade_as(&t, &other, &a, &o).await
    };
    let ok = file(1500, 3);
    let small = file(999, 3);
    let title = ("documentTitle", "documentTitle0=Receipt");
    type Case<'a> = (Vec<(&'a str, &'a str)>, Vec<(&'a str, &'a str, &'a [u8])>, &'a str);
    let cases: Vec<Case> = vec![
        (vec![title], vec![("userfile0", "a.pdf", &ok)], "106"),
        (
            vec![("tradeId", "12x"), title],
            vec![("userfile0", "a.pdf", &ok)],
            "106",
        ),
        (vec![("tradeId", &id)], vec![("userfile0", "a.pdf", &ok)], "106"),
        (vec![("tradeId", &id), title], vec![], "106"),
        (vec![("tradeId", &id), title], vec![("userfile0", "a.exe", &ok)], "106"),
        (
            vec![("tradeId", &id), title, ("file_name", "filename0=a.docx")],
            vec![("userfile0", "a.pdf", &ok)],
            "106",
        ),
        (
            vec![("tradeId", &id), title],
            vec![("userfile0", "a.pdf", &small)],
            "106",
        ),
        // A good file and a small one: the whole request is refused.
        (
            vec![("tradeId", &id), ("documentTitle", "documentTitle0=a&documentTitle1=b")],
            vec![("userfile0", "a.pdf", &ok), ("userfile1", "b.pdf", &small)],
            "106",
        ),
        (
            vec![("tradeId", "999999"), title],
            vec![("userfile0", "a.pdf", &ok)],
            "188",
        ),
        (
            vec![("tradeId", &theirs), title],
            vec![("userfile0", "a.pdf", &ok)],
            "188",
        ),
    ];
    for (fields, files, expected) in &cases {
        let r = t.multipart("uploadTradeDocument", fields, files).await;
        assert_eq!((r.status, r.code()), (404, *expected), "{fields:?}: {:?}", r.json);
    }
    let r = t
        .multipart(
            "uploadTradeDocument",
            &[("tradeId", &id), title],
            &[("userfile0", "a.pdf", &small)],
        )
        .await;
    assert_eq!(r.json["Error(s)"], SIZE);
    assert!(items(&t, &docs_pk(&t, &id)).await.is_empty(), "no record");
    none(&mut up).await;

    // Reads.
    code(&t.post("getTradeDocument", &[]).await, "106");
    code(&t.post("getTradeDocument", &[("tradeId", "abc")]).await, "106");
    code(&t.post("getTradeDocument", &[("tradeId", "999999")]).await, "188");
    code(&t.post("getTradeDocument", &[("tradeId", &theirs)]).await, "188");

    // Archive and delete: a document of the trade to aim at.
    let r = t
        .multipart(
            "uploadTradeDocument",
            &[("tradeId", &id), title],
            &[("userfile0", "a.pdf", &ok)],
        )
        .await;
    code(&r, "101");
    webhooks(&mut up, 1).await;
    let doc = get_documents(&t, &id).await[0].clone();
    let (doc_id, reference) = (s(&doc["id"]), s(&doc["documentFileReferenceCode"]));
    let before = items(&t, &docs_pk(&t, &id)).await;
    let archive_cases: Vec<(Vec<(&str, &str)>, &str)> = vec![
        (
            vec![("documentFileReferenceCode", &reference), ("archiveStatus", "1")],
            "106",
        ),
        (vec![("tradeId", &id), ("archiveStatus", "1")], "106"),
        (vec![("tradeId", &id), ("documentFileReferenceCode", &reference)], "106"),
        (
            vec![
                ("tradeId", &id),
                ("documentFileReferenceCode", &reference),
                ("archiveStatus", "2"),
            ],
            "106",
        ),
        (
            vec![
                ("tradeId", "x1"),
                ("documentFileReferenceCode", &reference),
                ("archiveStatus", "1"),
            ],
            "106",
        ),
        (
            vec![
                ("tradeId", &id),
                ("documentFileReferenceCode", "000000000000"),
                ("archiveStatus", "1"),
            ],
            "106",
        ),
        // The document of another trade.
        (
            vec![
                ("tradeId", &second),
                ("documentFileReferenceCode", &reference),
                ("archiveStatus", "1"),
            ],
            "106",
        ),
        (
            vec![
                ("tradeId", "999999"),
                ("documentFileReferenceCode", &reference),
                ("archiveStatus", "1"),
            ],
            "188",
        ),
        (
            vec![
                ("tradeId", &theirs),
                ("documentFileReferenceCode", &reference),
                ("archiveStatus", "1"),
            ],
            "188",
        ),
    ];
    for (params, expected) in &archive_cases {
        let r = t.post("updateTradeDocArchivestatus", params).await;
        assert_eq!(r.code(), *expected, "{params:?}: {:?}", r.json);
    }
    let delete_cases: Vec<(Vec<(&str, &str)>, &str)> = vec![
        (vec![("documentId", &doc_id)], "106"),
        (vec![("tradeId", &id)], "106"),
        (vec![("tradeId", &id), ("documentId", "999999")], "106"),
        (vec![("tradeId", &id), ("documentId", "../x")], "106"),
        (vec![("tradeId", &id), ("documentFileReferenceCode", "123")], "106"),
        // ID and reference code naming different documents (or none).
        (
            vec![
                ("tradeId", &id),
                ("documentId", &doc_id),
                ("documentFileReferenceCode", "000000000000"),
            ],
            "106",
        ),
        (vec![("tradeId", &second), ("documentId", &doc_id)], "106"),
        (vec![("tradeId", "999999"), ("documentId", &doc_id)], "188"),
        (vec![("tradeId", &theirs), ("documentId", &doc_id)], "188"),
    ];
    for (params, expected) in &delete_cases {
        let r = t.post("deleteTradeDocument", params).await;
        assert_eq!(r.code(), *expected, "{params:?}: {:?}", r.json);
    }
    assert_eq!(items(&t, &docs_pk(&t, &id)).await, before, "nothing changed");
    assert!(items(&t, &docs_pk(&t, &second)).await.is_empty());
    none(&mut archives).await;
    none(&mut deletes).await;
    fetch_ok(&t, &s(&doc["documentUrl"]), &ok).await;
});

// ---------------------------------------------------------------- subscription documents

both!(
    subscription_documents_are_sent_signed_and_reported,
    |t: TestApp| async move {
        let mut sent_hook = hook(&t, "sendSubscriptionDocument").await;
        let mut status_hook = hook(&t, "updateDocuSignStatus").await;
        let mut signed_hook = hook(&t, "getTradeSignedDocument").await;
        let (o, a, p, id, tpls) = subscription_setup(&t, 2).await;
        let params = subscription_params(&o, &a, &id);
        let r = t.post("sendSubscriptionDocument", &params).await;
        code(&r, "101");
        let docs = r.json["document_details"].as_array().unwrap().clone();
        assert_eq!(docs.len(), 2);
        assert_eq!(keys(&docs[0]), ["documentKey", "esignStatus", "accountId"]);
        let (k0, k1) = (s(&docs[0]["documentKey"]), s(&docs[1]["documentKey"]));
        assert_ne!(k0, k1);
        for d in &docs {
            assert_eq!((&d["esignStatus"], &d["accountId"]), (&json!("NOTSIGNED"), &json!(a)));
        }
        let mut expected: Vec<Vec<(String, String)>> = [&k0, &k1]
            .iter()
            .map(|k| pairs(&[("documentKey", k), ("esignStatus", "NOTSIGNED"), ("accountId", &a)]))
            .collect();
        expected.sort();
        assert_eq!(webhooks(&mut sent_hook, 2).await, expected);
        // The trade lists the keys; each envelope holds one template, to the primary party.
        let tr = get_trade(&t, &a, &id).await;
        assert_eq!(
            (&tr["esignStatus"], &tr["documentKey"]),
            (&json!("NOTSIGNED"), &json!(format!("{k0},{k1}")))
        );
        for (k, tpl) in [(&k0, &tpls[0]), (&k1, &tpls[1])] {
            let e = envelope(&t, k).await;
            assert_eq!(e["status"], "NOTSIGNED");
            assert_eq!(e["templateIds"], json!([tpl["templateId"]]));
            assert_eq!(
                e["signers"],
                json!([{"name": "Ann Lee", "email": "ann@example.com", "role": "Investor"}])
            );
            assert_eq!(e["purpose"], json!({"kind": "subscription", "id": id}));
        }
        // Called again: nothing new is sent, the same documents are answered.
        let before = esign_state(&t, &id).await;
        let r = t.post("sendSubscriptionDocument", &params).await;
        code(&r, "101");
        assert_eq!(r.json["document_details"], json!(docs));
        assert_eq!(esign_state(&t, &id).await, before, "nothing written");
        webhooks(&mut sent_hook, 2).await;

        // The signer signs the first document: the trade waits for the second.
        let signed = act(&t, &k0, "sign").await;
        assert_eq!(signed.json["changed"], true);
        let updated = s(&signed.json["updatedDate"]);
        let hooks = webhooks(&mut status_hook, 1).await;
        let doc_id = hooks[0][1].1.clone();
        assert_eq!(
            hooks[0],
            pairs(&[
                ("tradeId", &id),
                ("id", &doc_id),
                ("documentId", &k0),
                ("templateId", &s(&tpls[0]["templateId"])),
                ("esignstatus", "SIGNED"),
                ("updatedDate", &updated),
                ("updatedIpAddress", ""),
            ])
        );
        assert_eq!(get_trade(&t, &a, &id).await["esignStatus"], "NOTSIGNED");
        let r = t.post("getTradeSignedDocument", &[("tradeId", &id)]).await;
        code(&r, "101");
        let view = r.json["SignedDocumentDetails"].clone();
        assert_eq!(
            keys(&view),
            [
                "orderId",
                "id",
                "documentId",
                "esignstatus",
                "templateName",
                "widgetTemplate",
                "docsId",
                "developerAPIKey",
                "offeringId",
                "accountId",
                "partyId",
                "party_type",
                "escrowId",
                "transactionType",
                "totalAmount",
                "totalShares",
                "orderStatus",
                "createdDate",
                "createdIpAddress",
                "errors",
                "documentKey",
                "esignStatus",
                "users",
                "field1",
                "field2",
                "field3",
                "archived_status"
            ]
        );
        let label = format!("{}--{}", s(&tpls[0]["templateId"]), s(&tpls[0]["name"]));
        assert_eq!(
            (
                &view["orderId"],
                &view["id"],
                &view["documentId"],
                &view["esignstatus"],
                &view["templateName"],
                &view["widgetTemplate"],
                &view["developerAPIKey"],
                &view["partyId"],
                &view["esignStatus"],
                &view["totalAmount"],
            ),
            (
                &json!(id),
                &json!(doc_id),
                &json!(k0),
                &json!("SIGNED"),
                &json!(label),
                &json!("0"),
                &json!("XXXXXXXXXXXXXXX"),
                &json!(p),
                &json!("NOTSIGNED"),
                &json!("50.000000"),
            )
        );
        let r = t.post("getSubscriptionsforOffering", &[("offeringId", &o)]).await;
        let attached: Vec<String> = r.json["document_details"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| s(&x["templateId"]))
            .collect();
        assert!(
            attached.contains(&s(&view["docsId"])),
            "docsId is the offering template"
        );
        let fields = webhooks(&mut signed_hook, 1).await;
        assert_eq!(fields[0].len(), 27);
        assert_eq!(fields[0][3], ("esignstatus".to_owned(), "SIGNED".to_owned()));

        // The second: the trade is signed.
        act(&t, &k1, "sign").await;
        let hooks = webhooks(&mut status_hook, 1).await;
        assert_eq!(hooks[0][2], ("documentId".to_owned(), k1.clone()));
        assert_eq!(get_trade(&t, &a, &id).await["esignStatus"], "SIGNED");
        let r = t.post("getTradeSignedDocument", &[("tradeId", &id)]).await;
        assert_eq!(
            (
                &r.json["SignedDocumentDetails"]["documentId"],
                &r.json["SignedDocumentDetails"]["esignStatus"]
            ),
            (&json!(k1), &json!("SIGNED")),
            "the most recently signed"
        );
        webhooks(&mut signed_hook, 1).await;
        // Signing again changes nothing and fires nothing.
        assert_eq!(act(&t, &k1, "sign").await.json["changed"], false);
        none(&mut status_hook).await;

        // Every signed document of the client, filtered.
        let r = t.post("getAllSignedDocument", &[]).await;
        code(&r, "101");
        let all = r.json["SignedDocumentDetails"].as_array().unwrap().clone();
        let keys_all: Vec<String> = all.iter().map(|v| s(&v["documentId"])).collect();
        assert_eq!(keys_all, [k1.clone(), k0.clone()], "most recently signed first");
        assert_eq!(all[0], r.json["SignedDocumentDetails"][0]);
        for filter in [("tradeId", id.as_str()), ("accountId", &a), ("offeringId", &o)] {
            let r = t.post("getAllSignedDocument", &[filter]).await;
            code(&r, "101");
            assert_eq!(
                r.json["SignedDocumentDetails"].as_array().unwrap().len(),
                2,
                "{filter:?}"
            );
        }
        let other_offering = offering(&t).await;
        let r = t.post("getAllSignedDocument", &[("offeringId", &other_offering)]).await;
        assert_eq!(r.json["SignedDocumentDetails"], json!([]));
        // A signed trade is not sent again.
        let before = esign_state(&t, &id).await;
        code(&t.post("resendSubscriptionDocuments", &params).await, "106");
        assert_eq!(esign_state(&t, &id).await, before);
    }
);

both!(
    documents_signed_at_once_leave_the_trade_signed,
    |t: TestApp| async move {
        for round in 0..4 {
            let (o, a, _, id, _) = subscription_setup(&t, 2).await;
            let r = t
                .post("sendSubscriptionDocument", &subscription_params(&o, &a, &id))
                .await;
            code(&r, "101");
            let docs = r.json["document_details"].as_array().unwrap().clone();
            let (k0, k1) = (s(&docs[0]["documentKey"]), s(&docs[1]["documentKey"]));
            tokio::join!(act(&t, &k0, "sign"), act(&t, &k1, "sign"));
            let tr = get_trade(&t, &a, &id).await;
            assert_eq!(tr["esignStatus"], "SIGNED", "round {round}");
        }
    }
);

both!(declines_voids_and_resends, |t: TestApp| async move {
    let mut resent_hook = hook(&t, "resendSubscriptionDocuments").await;
    let mut status_hook = hook(&t, "updateDocuSignStatus").await;
    let (o, a, _, id, tpls) = subscription_setup(&t, 1).await;
    let params = subscription_params(&o, &a, &id);
    let r = t.post("sendSubscriptionDocument", &params).await;
    code(&r, "101");
    let first = s(&r.json["document_details"][0]["documentKey"]);
    let r = act(&t, &first, "decline").await;
    assert_eq!(
        (&r.json["status"], &r.json["reason"]),
        (&json!("DECLINED"), &json!("sandbox"))
    );
    let hooks = webhooks(&mut status_hook, 1).await;
    assert_eq!(hooks[0][4], ("esignstatus".to_owned(), "DECLINED".to_owned()));
    assert_eq!(get_trade(&t, &a, &id).await["esignStatus"], "DECLINED");

    // A resend after a decline: a new document; the declined one is final, nothing voided.
    let r = t.post("resendSubscriptionDocuments", &params).await;
    code(&r, "101");
    let second = s(&r.json["document_details"][0]["documentKey"]);
    assert_ne!(second, first);
    assert_eq!(
        r.json["document_details"],
        json!([{"documentKey": second, "esignStatus": "NOTSIGNED", "accountId": a}])
    );
    once(
        &mut resent_hook,
        &[
            ("documentKey", &second),
            ("esignStatus", "NOTSIGNED"),
            ("accountId", &a),
        ],
    )
    .await;
    none(&mut status_hook).await;
    let tr = get_trade(&t, &a, &id).await;
    assert_eq!(
        (&tr["esignStatus"], &tr["documentKey"]),
        (&json!("NOTSIGNED"), &json!(second))
    );
    assert_eq!(envelope(&t, &first).await["status"], "DECLINED");
    // The trade's signed document, while none is signed: the current one.
    let r = t.post("getTradeSignedDocument", &[("tradeId", &id)]).await;
    assert_eq!(
        (
            &r.json["SignedDocumentDetails"]["documentId"],
            &r.json["SignedDocumentDetails"]["esignstatus"]
        ),
        (&json!(second), &json!("NOTSIGNED"))
    );

    // A resend while one is out: it is voided (with its webhook, the caller's address).
    let r = t.post("resendSubscriptionDocuments", &params).await;
    code(&r, "101");
    let third = s(&r.json["document_details"][0]["documentKey"]);
    let hooks = webhooks(&mut status_hook, 1).await;
    let voided = envelope(&t, &second).await;
    assert_eq!(voided["status"], "VOIDED");
    assert_eq!(
        hooks[0],
        pairs(&[
            ("tradeId", &id),
            ("id", &hooks[0][1].1),
            ("documentId", &second),
            ("templateId", &s(&tpls[0]["templateId"])),
            ("esignstatus", "VOIDED"),
            ("updatedDate", &s(&voided["updatedDate"])),
            ("updatedIpAddress", "127.0.0.1"),
        ])
    );
    webhooks(&mut resent_hook, 1).await;
    // A voided document can no more be signed.
    let r = t
        .operator(Method::POST, &format!("{}/sign", envelope_path(&t, &second)), json!({}))
        .await;
    assert_eq!(r.status, 409);
    // The operator voids the current one: the trade is voided.
    act(&t, &third, "void").await;
    let hooks = webhooks(&mut status_hook, 1).await;
    assert_eq!(hooks[0][4], ("esignstatus".to_owned(), "VOIDED".to_owned()));
    assert_eq!(hooks[0][6], ("updatedIpAddress".to_owned(), String::new()));
    assert_eq!(get_trade(&t, &a, &id).await["esignStatus"], "VOIDED");
    // Three sendings, one document each.
    assert_eq!(items(&t, &sign_pk(&t, &id)).await.len(), 3);
    let r = t.post("getAllSignedDocument", &[("tradeId", &id)]).await;
    assert_eq!(r.json["SignedDocumentDetails"], json!([]));
});

both!(
    client_presented_documents_and_client_status_changes,
    |t: TestApp| async move {
        let mut client_hook = hook(&t, "sendSubscriptionDocumentClient").await;
        let mut status_hook = hook(&t, "updateDocuSignStatus").await;
        let (o, a, _, id, _) = subscription_setup(&t, 1).await;
        let params = subscription_params(&o, &a, &id);
        let r = t.post("sendSubscriptionDocumentClient", &params).await;
        code(&r, "101");
        assert_eq!(r.desc(), "Ok");
        assert_eq!(keys(&r.json), ["statusCode", "statusDesc"]);
        let tr = get_trade(&t, &a, &id).await;
        let key = s(&tr["documentKey"]);
        assert_eq!(tr["esignStatus"], "CREATED");
        assert_eq!(
            envelope(&t, &key).await["status"],
            "CREATED",
            "a draft: nobody is emailed"
        );
        once(
            &mut client_hook,
            &[
                ("tradeId", &id),
                ("accountId", &a),
                ("documentKey", &key),
                ("esignStatus", "CREATED"),
            ],
        )
        .await;
        let r = t.post("getTradeSignedDocument", &[("tradeId", &id)]).await;
        assert_eq!(
            (
                &r.json["SignedDocumentDetails"]["widgetTemplate"],
                &r.json["SignedDocumentDetails"]["esignstatus"]
            ),
            (&json!("1"), &json!("CREATED"))
        );
        // sendSubscriptionDocument now answers the draft as it stands.
        let r = t.post("sendSubscriptionDocument", &params).await;
        assert_eq!(
            r.json["document_details"],
            json!([{"documentKey": key, "esignStatus": "CREATED", "accountId": a}])
        );

        // The client reports its documents: sent, then withdrawn.
        let update = |status: &'static str| client_status(&t, &id, &key, status);
        let r = update("NOTSIGNED").await;
        code(&r, "101");
        let rec = r.json["document_details"][0].clone();
        assert_eq!(
            keys(&rec),
            [
                "tradeId",
                "id",
                "documentId",
                "templateId",
                "esignstatus",
                "updatedDate",
                "updatedIpAddress"
            ]
        );
        assert_eq!(
            (&rec["documentId"], &rec["esignstatus"], &rec["updatedIpAddress"]),
            (&json!(key), &json!("NOTSIGNED"), &json!("127.0.0.1"))
        );
        let expected: Vec<(String, String)> = rec
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), s(v)))
            .collect();
        assert_eq!(webhooks(&mut status_hook, 1).await, vec![expected]);
        assert_eq!(get_trade(&t, &a, &id).await["esignStatus"], "NOTSIGNED");
        // The same status again: nothing changes, no webhook.
        code(&update("notsigned").await, "101");
        none(&mut status_hook).await;
        // Signing and declining are the signer's.
        let before = esign_state(&t, &id).await;
        for status in ["SIGNED", "DECLINED", "DONE"] {
            code(&update(status).await, "106");
        }
        assert_eq!(esign_state(&t, &id).await, before);
        let r = update("VOIDED").await;
        code(&r, "101");
        assert_eq!(r.json["document_details"][0]["esignstatus"], "VOIDED");
        assert_eq!(webhooks(&mut status_hook, 1).await[0][4].1, "VOIDED");
        assert_eq!(get_trade(&t, &a, &id).await["esignStatus"], "VOIDED");
        // A voided document never moves again.
        let before = esign_state(&t, &id).await;
        code(&update("NOTSIGNED").await, "106");
        code(&update("VOIDED").await, "101");
        assert_eq!(esign_state(&t, &id).await, before);
        none(&mut status_hook).await;
        none(&mut client_hook).await;
    }
);

both!(subscription_errors_write_nothing, |t: TestApp| async move {
    let mut sent_hook = hook(&t, "sendSubscriptionDocument").await;
    let mut status_hook = hook(&t, "updateDocuSignStatus").await;
    let (o, a, _, id, _) = subscription_setup(&t, 1).await;
    let bare = offering(&t).await;
    let (b, _, b_link) = investor(&t).await;
    let no_templates = trade(&t, &b, &bare).await;
    let other_account_trade = trade(&t, &b, &o).await;
    let other = t.new_client(json!({"scopes": ["*"]})).await;
    let theirs = {
        let o = offering_as(&t, &other).await;
        let a = investor_as(&t, &other).await;
        trade_as(&t, &other, &a, &o).await
    };
    let before = esign_state(&t, &id).await;
    let cases: Vec<(Vec<(&str, &str)>, &str)> = vec![
        (vec![("accountId", &a), ("tradeId", &id)], "106"),
        (vec![("offeringId", &o), ("tradeId", &id)], "106"),
        (vec![("offeringId", &o), ("accountId", &a)], "106"),
        (subscription_params("1x", &a, &id), "106"),
        (subscription_params(&o, &a, "abc"), "106"),
        (subscription_params(&o, "A9999999", &id), "148"),
        (subscription_params("999999", &a, &id), "138"),
        (subscription_params(&o, &a, "999999"), "188"),
        (subscription_params(&o, &a, &theirs), "188"),
        // Not that account's trade, not that offering's.
        (subscription_params(&o, &a, &other_account_trade), "188"),
        (subscription_params(&bare, &a, &id), "188"),
        // The offering has no subscription template.
        (subscription_params(&bare, &b, &no_templates), "106"),
    ];
    for op in [
        "sendSubscriptionDocument",
        "sendSubscriptionDocumentClient",
        "resendSubscriptionDocuments",
    ] {
        for (params, expected) in &cases {
            let r = t.post(op, params).await;
            assert_eq!(r.code(), *expected, "{op} {params:?}: {:?}", r.json);
        }
    }
    assert_eq!(esign_state(&t, &id).await, before, "nothing written");
    assert!(items(&t, &sign_pk(&t, &no_templates)).await.is_empty());

    // The account lost its primary party: 135.
    code(&t.post("deleteLink", &[("id", &b_link)]).await, "101");
    let mut with_templates = account_templates(&t).await;
    attach(&t, &bare, &with_templates.remove(0)).await;
    let r = t
        .post(
            "sendSubscriptionDocument",
            &subscription_params(&bare, &b, &no_templates),
        )
        .await;
    code(&r, "135");
    assert!(items(&t, &sign_pk(&t, &no_templates)).await.is_empty());

    // A deleted (cancelled) trade: 190.
    let cancelled = trade(&t, &a, &o).await;
    code(
        &t.post("deleteTrade", &[("accountId", &a), ("tradeId", &cancelled)])
            .await,
        "101",
    );
    let r = t
        .post("sendSubscriptionDocument", &subscription_params(&o, &a, &cancelled))
        .await;
    code(&r, "190");
    assert!(items(&t, &sign_pk(&t, &cancelled)).await.is_empty());

    // No connected e-signature account: 106.
    let before = esign_state(&t, &id).await;
    let account_path = format!("/operator/clients/{}/esign-templates", t.client_id);
    assert_eq!(t.operator(Method::DELETE, &account_path, Value::Null).await.status, 200);
    let r = t
        .post("sendSubscriptionDocument", &subscription_params(&o, &a, &id))
        .await;
    assert_eq!((r.code(), r.desc()), ("106", NO_ACCOUNT));
    assert_eq!(esign_state(&t, &id).await, before);
    none(&mut sent_hook).await;

    // Reads and client status changes.
    code(&t.post("getTradeSignedDocument", &[]).await, "106");
    code(&t.post("getTradeSignedDocument", &[("tradeId", "x")]).await, "106");
    code(&t.post("getTradeSignedDocument", &[("tradeId", "999999")]).await, "188");
    code(&t.post("getTradeSignedDocument", &[("tradeId", &theirs)]).await, "188");
    let r = t.post("getTradeSignedDocument", &[("tradeId", &id)]).await;
    assert_eq!(
        (r.code(), r.desc()),
        ("404", "No subscription document has been sent for this trade")
    );
    for (params, expected) in [
        (vec![("tradeId", "x")], "106"),
        (vec![("offeringId", "x")], "106"),
        (vec![("tradeId", "999999")], "188"),
        (vec![("tradeId", theirs.as_str())], "188"),
        (vec![("accountId", "A9999999")], "148"),
        (vec![("offeringId", "999999")], "138"),
    ] {
        let r = t.post("getAllSignedDocument", &params).await;
        assert_eq!(r.code(), expected, "{params:?}: {:?}", r.json);
    }
    let update_cases: Vec<(Vec<(&str, &str)>, &str)> = vec![
        (vec![("documentKey", "k"), ("esignStatus", "VOIDED")], "106"),
        (vec![("tradeId", &id), ("esignStatus", "VOIDED")], "106"),
        (vec![("tradeId", &id), ("documentKey", "k")], "106"),
        (
            vec![("tradeId", &id), ("documentKey", "k"), ("esignStatus", "LOST")],
            "106",
        ),
        (
            vec![
                ("tradeId", &id),
                ("documentKey", "no-such-key"),
                ("esignStatus", "VOIDED"),
            ],
            "106",
        ),
        (
            vec![("tradeId", "999999"), ("documentKey", "k"), ("esignStatus", "VOIDED")],
            "188",
        ),
    ];
    for (params, expected) in &update_cases {
        let r = t.post("updateDocuSignStatus", params).await;
        assert_eq!(r.code(), *expected, "{params:?}: {:?}", r.json);
    }
    assert_eq!(esign_state(&t, &id).await, before);
    none(&mut status_hook).await;
});

both!(a_trade_cannot_void_another_trades_document, |t: TestApp| async move {
    let mut status_hook = hook(&t, "updateDocuSignStatus").await;
    let (o, a, _, id, _) = subscription_setup(&t, 1).await;
    let second = trade(&t, &a, &o).await;
    let r = t
        .post("sendSubscriptionDocument", &subscription_params(&o, &a, &id))
        .await;
    code(&r, "101");
    let key = s(&r.json["document_details"][0]["documentKey"]);
    let before = esign_state(&t, &id).await;
    let r = t
        .post(
            "updateDocuSignStatus",
            &[("tradeId", &second), ("documentKey", &key), ("esignStatus", "VOIDED")],
        )
        .await;
    code(&r, "106");
    assert_eq!(esign_state(&t, &id).await, before);
    assert_eq!(envelope(&t, &key).await["status"], "NOTSIGNED");
    none(&mut status_hook).await;
});

// ---------------------------------------------------------------- NDAs

both!(ndas_are_sent_signed_and_reported, |t: TestApp| async move {
    let mut sent_hook = hook(&t, "sendNda").await;
    let mut signed_hook = hook(&t, "updateNdaDocuSignStatus").await;
    let o = offering(&t).await;
    let (a, p, _) = investor(&t).await;
    let tpls = account_templates(&t).await;
    let nda_template = tpls.iter().find(|x| x["folderName"] == "NDA").unwrap().clone();
    let r = t
        .post(
            "sendNda",
            &[("accountId", &a), ("offeringId", &o), ("maasuserId", "user-42")],
        )
        .await;
    code(&r, "101");
    let rec = r.json["document_details"][0].clone();
    assert_eq!(
        keys(&rec),
        [
            "refNum",
            "documentKey",
            "esignStatus",
            "accountId",
            "partyId",
            "offeringId",
            "maasuserId"
        ]
    );
    let (ref_num, key) = (s(&rec["refNum"]), s(&rec["documentKey"]));
    assert_eq!(
        (
            &rec["esignStatus"],
            &rec["accountId"],
            &rec["partyId"],
            &rec["offeringId"],
            &rec["maasuserId"]
        ),
        (&json!("NOTSIGNED"), &json!(a), &json!(p), &json!(o), &json!("user-42"))
    );
    let expected: Vec<(String, String)> = rec
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), s(v)))
        .collect();
    assert_eq!(webhooks(&mut sent_hook, 1).await, vec![expected.clone()]);
    let e = envelope(&t, &key).await;
    assert_eq!(e["templateIds"], json!([nda_template["templateId"]]));
    assert_eq!(e["purpose"], json!({"kind": "nda", "id": ref_num}));
    assert_eq!(e["signers"][0]["email"], "ann@example.com");
    // Again while it is out: the same NDA.
    let r = t.post("sendNda", &[("accountId", &a), ("offeringId", &o)]).await;
    assert_eq!(r.json["document_details"][0], rec);
    webhooks(&mut sent_hook, 1).await;

    let signed = act(&t, &key, "sign").await;
    once(
        &mut signed_hook,
        &[
            ("refNum", &ref_num),
            ("maasuserId", "user-42"),
            ("accountId", &a),
            ("partyId", &p),
            ("offeringId", &o),
            ("eSignedStatus", "SIGNED"),
        ],
    )
    .await;
    assert_eq!(signed.json["status"], "SIGNED");
    let r = t.post("sendNda", &[("accountId", &a), ("offeringId", &o)]).await;
    assert_eq!(
        (
            &r.json["document_details"][0]["refNum"],
            &r.json["document_details"][0]["esignStatus"]
        ),
        (&json!(ref_num), &json!("SIGNED"))
    );
    webhooks(&mut sent_hook, 1).await;

    // Another offering, a chosen template; voided by the client, declined by the signer:
    // no NDA webhook, and a new NDA after each.
    let o2 = offering(&t).await;
    let chosen = s(&tpls[0]["templateId"]);
    let r = t
        .post(
            "sendNda",
            &[("accountId", &a), ("offeringId", &o2), ("templateId", &chosen)],
        )
        .await;
    code(&r, "101");
    let (ref2, key2) = (
        s(&r.json["document_details"][0]["refNum"]),
        s(&r.json["document_details"][0]["documentKey"]),
    );
    assert_ne!(ref2, ref_num);
    assert_eq!(envelope(&t, &key2).await["templateIds"], json!([chosen]));
    webhooks(&mut sent_hook, 1).await;
    let r = t
        .post(
            "updateNdaDocuSignStatus",
            &[("refNum", &ref2), ("esignStatus", "VOIDED")],
        )
        .await;
    code(&r, "101");
    assert_eq!(r.json["document_details"][0]["esignStatus"], "VOIDED");
    assert_eq!(envelope(&t, &key2).await["status"], "VOIDED");
    // Refused, the error names the parameter sent.
    let again = [("refNum", ref2.as_str()), ("esignStatus", "NOTSIGNED")];
    let r = t.post("updateNdaDocuSignStatus", &again).await;
    code(&r, "106");
    assert!(r.desc().contains("refNum"), "{:?}", r.json);
    let r = t.post("sendNda", &[("accountId", &a), ("offeringId", &o2)]).await;
    let (ref3, key3) = (
        s(&r.json["document_details"][0]["refNum"]),
        s(&r.json["document_details"][0]["documentKey"]),
    );
    assert!(ref3 != ref2 && key3 != key2, "a new NDA after a void");
    webhooks(&mut sent_hook, 1).await;
    act(&t, &key3, "decline").await;
    none(&mut signed_hook).await;
    let r = t.post("sendNda", &[("accountId", &a), ("offeringId", &o2)]).await;
    assert_ne!(s(&r.json["document_details"][0]["refNum"]), ref3);
    webhooks(&mut sent_hook, 1).await;
});

both!(nda_errors_write_nothing, |t: TestApp| async move {
    let mut sent_hook = hook(&t, "sendNda").await;
    let o = offering(&t).await;
    let (a, _, l) = investor(&t).await;
    let other = t.new_client(json!({"scopes": ["*"]})).await;
    let their_account = investor_as(&t, &other).await;
    let their_offering = offering_as(&t, &other).await;
    let c = t.client_id.clone();
    let before = nda_state(&t).await;
    let cases: Vec<(Vec<(&str, &str)>, &str)> = vec![
        (vec![("offeringId", &o)], "106"),
        (vec![("accountId", &a)], "106"),
        (vec![("accountId", &a), ("offeringId", "x")], "106"),
        (vec![("accountId", "A9999999"), ("offeringId", &o)], "148"),
        (vec![("accountId", &their_account), ("offeringId", &o)], "148"),
        (vec![("accountId", &a), ("offeringId", "999999")], "138"),
        (vec![("accountId", &a), ("offeringId", &their_offering)], "138"),
        (
            vec![("accountId", &a), ("offeringId", &o), ("templateId", "not-a-template")],
            "106",
        ),
    ];
    for (params, expected) in &cases {
        let r = t.post("sendNda", params).await;
        assert_eq!(r.code(), *expected, "{params:?}: {:?}", r.json);
    }
    // An account without a template in the NDA folder.
    let path = format!("/operator/clients/{c}/esign-templates");
    let r = t
        .operator(Method::PUT, &path, json!({"templates": [{"name": "Side letter"}]}))
        .await;
    assert_eq!(r.status, 200);
    code(
        &t.post("sendNda", &[("accountId", &a), ("offeringId", &o)]).await,
        "106",
    );
    assert_eq!(t.operator(Method::DELETE, &path, Value::Null).await.status, 200);
    let r = t.post("sendNda", &[("accountId", &a), ("offeringId", &o)]).await;
    assert_eq!((r.code(), r.desc()), ("106", NO_ACCOUNT));
    code(&t.post("deleteLink", &[("id", &l)]).await, "101");
    code(
        &t.post("sendNda", &[("accountId", &a), ("offeringId", &o)]).await,
        "135",
    );
    assert_eq!(nda_state(&t).await, before, "nothing written");
    none(&mut sent_hook).await;

    for (params, expected) in [
        (vec![("esignStatus", "VOIDED")], "106"),
        (vec![("refNum", "x"), ("esignStatus", "VOIDED")], "106"),
        (vec![("refNum", "999999")], "106"),
        (vec![("refNum", "999999"), ("esignStatus", "VOIDED")], "106"),
        (vec![("refNum", "999999"), ("esignStatus", "SIGNED")], "106"),
    ] {
        let r = t.post("updateNdaDocuSignStatus", &params).await;
        assert_eq!(r.code(), expected, "{params:?}: {:?}", r.json);
    }
    assert_eq!(nda_state(&t).await, before);
});

// ---------------------------------------------------------------- cancelled trades

/// A way of cancelling a trade: its operation and parameters.
fn cancellation<'a>(how: &str, account: &'a str, trade: &'a str) -> (&'static str, Vec<(&'a str, &'a str)>) {
    match how {
        "deleteTrade" => ("deleteTrade", vec![("accountId", account), ("tradeId", trade)]),
        "cancelInvestment" | "fundReturnRequest" => (
            if how == "cancelInvestment" {
                "cancelInvestment"
            } else {
                "fundReturnRequest"
            },
            vec![
                ("tradeId", trade),
                ("requestedBy", "investor"),
                ("reason", "changed mind"),
            ],
        ),
        "CANCELED" | "Rejected" => (
            "updateTradeStatus",
            vec![
                ("accountId", account),
                ("tradeId", trade),
                ("tradeStatus", if how == "CANCELED" { "CANCELED" } else { "Rejected" }),
            ],
        ),
        _ => unreachable!("{how}"),
    }
}

async fn cancel_trade(t: &TestApp, how: &str, account: &str, trade: &str) -> Resp {
    let (method, params) = cancellation(how, account, trade);
    t.post(method, &params).await
}

/// The trade's subscription documents as stored: (documentKey, id) in sending order.
async fn sign_docs(t: &TestApp, trade: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String, String)> = items(t, &sign_pk(t, trade))
        .await
        .iter()
        .map(|i| {
            let d: Value = serde_json::from_str(i["d"].as_str().unwrap()).unwrap();
            (s(&d["documentKey"]), s(&d["id"]), s(&d["templateId"]))
        })
        .collect();
    out.sort_by_key(|(_, id, _)| (id.len(), id.clone()));
    out.into_iter().map(|(k, id, _)| (k, id)).collect()
}

both!(
    cancelling_a_trade_voids_its_documents_still_out,
    |t: TestApp| async move {
        let mut status_hook = hook(&t, "updateDocuSignStatus").await;
        // deleteTrade and cancelInvestment: two emailed documents, the first signed; the
        // others: two emailed documents (fundReturnRequest, Rejected) or one draft of the
        // embedded variant (updateTradeStatus CANCELED).
        for how in [
            "deleteTrade",
            "cancelInvestment",
            "CANCELED",
            "fundReturnRequest",
            "Rejected",
        ] {
            let embedded = how == "CANCELED";
            let sign_first = matches!(how, "deleteTrade" | "cancelInvestment");
            let (o, a, _, id, tpls) = subscription_setup(&t, if embedded { 1 } else { 2 }).await;
            let params = subscription_params(&o, &a, &id);
            let send = if embedded {
                "sendSubscriptionDocumentClient"
            } else {
                "sendSubscriptionDocument"
            };
            code(&t.post(send, &params).await, "101");
            let docs = sign_docs(&t, &id).await;
            assert_eq!(docs.len(), tpls.len(), "{how}");
            let signed = if sign_first {
                act(&t, &docs[0].0, "sign").await;
                assert_eq!(webhooks(&mut status_hook, 1).await[0][4].1, "SIGNED", "{how}");
                Some(docs[0].clone())
            } else {
                None
            };
            let out: Vec<(usize, &(String, String))> = docs
                .iter()
                .enumerate()
                .filter(|(i, _)| !(sign_first && *i == 0))
                .collect();

            let r = cancel_trade(&t, how, &a, &id).await;
            code(&r, "101");
            // Every document still out is voided, each with its webhook (the caller's address).
            let hooks = webhooks(&mut status_hook, out.len()).await;
            let mut expected = Vec::new();
            for (i, (key, doc_id)) in &out {
                let env = envelope(&t, key).await;
                assert_eq!(
                    (&env["status"], &env["reason"]),
                    (&json!("VOIDED"), &json!("Trade cancelled")),
                    "{how}"
                );
                expected.push(pairs(&[
                    ("tradeId", &id),
                    ("id", doc_id),
                    ("documentId", key),
                    ("templateId", &s(&tpls[*i]["templateId"])),
                    ("esignstatus", "VOIDED"),
                    ("updatedDate", &s(&env["updatedDate"])),
                    ("updatedIpAddress", "127.0.0.1"),
                ]));
            }
            expected.sort();
            assert_eq!(hooks, expected, "{how}");
            // The trade's esignStatus sums its documents: one voided.
            let tr = get_trade(&t, &a, &id).await;
            assert_eq!(
                (&tr["orderStatus"], &tr["esignStatus"]),
                (
                    &json!(if how == "Rejected" { "Rejected" } else { "CANCELED" }),
                    &json!("VOIDED")
                ),
                "{how}"
            );
            assert_eq!(
                s(&tr["documentKey"]),
                docs.iter().map(|d| d.0.as_str()).collect::<Vec<_>>().join(","),
                "{how}: the voided documents stay the trade's current sending"
            );
            let r = t.post("getTradeSignedDocument", &[("tradeId", &id)]).await;
            code(&r, "101");
            let shown = &r.json["SignedDocumentDetails"];
            match &signed {
                // A signed document stays signed, and is the one shown.
                Some((key, doc_id)) => {
                    assert_eq!(envelope(&t, key).await["status"], "SIGNED", "{how}");
                    assert_eq!(
                        (&shown["documentId"], &shown["id"], &shown["esignstatus"]),
                        (&json!(key), &json!(doc_id), &json!("SIGNED")),
                        "{how}"
                    );
                    let r = t.post("getAllSignedDocument", &[("tradeId", &id)]).await;
                    assert_eq!(r.json["SignedDocumentDetails"].as_array().unwrap().len(), 1);
                }
                None => assert_eq!(
                    (&shown["documentId"], &shown["esignstatus"], &shown["esignStatus"]),
                    (&json!(docs[0].0), &json!("VOIDED"), &json!("VOIDED")),
                    "{how}"
                ),
            }
            // Voided envelopes never move again; nothing more fires.
            let r = t
                .operator(
                    Method::POST,
                    &format!("{}/sign", envelope_path(&t, &out[0].1 .0)),
                    json!({}),
                )
                .await;
            assert_eq!(r.status, 409, "{how}");
            none(&mut status_hook).await;
        }
    }
);

both!(
    cancellations_without_documents_still_out_void_nothing,
    |t: TestApp| async move {
        let mut status_hook = hook(&t, "updateDocuSignStatus").await;
        // Nothing ever sent: nothing to void.
        let (_, a, _, id, _) = subscription_setup(&t, 1).await;
        code(&cancel_trade(&t, "cancelInvestment", &a, &id).await, "101");
        none(&mut status_hook).await;
        assert!(items(&t, &sign_pk(&t, &id)).await.is_empty());
        let tr = get_trade(&t, &a, &id).await;
        assert_eq!(
            (&tr["orderStatus"], &tr["esignStatus"], &tr["documentKey"]),
            (&json!("CANCELED"), &json!("NOTSIGNED"), &json!(""))
        );

        // Every document signed: they stay signed, the trade stays SIGNED.
        let (o, a, _, id, _) = subscription_setup(&t, 2).await;
        code(
            &t.post("sendSubscriptionDocument", &subscription_params(&o, &a, &id))
                .await,
            "101",
        );
        let docs = sign_docs(&t, &id).await;
        for (key, _) in &docs {
            act(&t, key, "sign").await;
        }
        webhooks(&mut status_hook, 2).await;
        let sign_items = items(&t, &sign_pk(&t, &id)).await;
        code(&cancel_trade(&t, "deleteTrade", &a, &id).await, "101");
        none(&mut status_hook).await;
        assert_eq!(items(&t, &sign_pk(&t, &id)).await, sign_items, "no document written");
        for (key, _) in &docs {
            assert_eq!(envelope(&t, key).await["status"], "SIGNED");
        }
        assert_eq!(get_trade(&t, &a, &id).await["esignStatus"], "SIGNED");

        // A cancellation refused (a pending ACH fund move: 150) voids nothing: one transaction.
        let (o, a, _, id, _) = subscription_setup(&t, 1).await;
        code(
            &t.post("sendSubscriptionDocument", &subscription_params(&o, &a, &id))
                .await,
            "101",
        );
        t.store()
            .write(vec![trade_model::pending_ach_put(&t.client_id, &id, "REF1")])
            .await
            .unwrap();
        let before = esign_state(&t, &id).await;
        for how in ["deleteTrade", "cancelInvestment", "CANCELED", "Rejected"] {
            code(&cancel_trade(&t, how, &a, &id).await, "150");
        }
        assert_eq!(esign_state(&t, &id).await, before);
        none(&mut status_hook).await;
        let key = &sign_docs(&t, &id).await[0].0;
        assert_eq!(envelope(&t, key).await["status"], "NOTSIGNED");
    }
);
