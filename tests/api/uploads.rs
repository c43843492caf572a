//! Large documents (beyond the spec, opt-in): `POST /v3/documents/uploads` hands out a URL
//! that takes the file with one `PUT` (S3 presigned on moto, the local API's own signed URL
//! on the embedded store), and every upload operation takes `uploadId<n>` in place of
//! `userfile<n>`, checking the stored file by its own rules. Files larger than a Lambda
//! request may carry (about 6 MB) round-trip byte for byte; every refusal writes nothing.

use api_tests::{both, Backend, Creds, TestApp};
use http::Method;
use serde_json::{json, Value};

use crate::fixtures::code;
use crate::fixtures::{create_account, create_entity, create_party, with, ISSUER, OFFERING};

const UPLOADS: &str = "/v3/documents/uploads";
const SIZE: &str = "Document File Size Must Be Greater Than 1 kb";

/// `len` bytes differing by `seed`.
fn bytes(len: usize, seed: u8) -> Vec<u8> {
    (0..len).map(|i| b'a' + ((i as u8).wrapping_add(seed) % 26)).collect()
}

/// A new upload of `file_name` as `c`: its details.
async fn slot_as(t: &TestApp, c: &Creds, file_name: &str) -> Value {
    let r = t
        .json_as(c, Method::POST, UPLOADS, &json!({ "fileName": file_name }))
        .await;
    assert_eq!((r.status, r.code()), (200, "101"), "{:?}", r.json);
    r.json["uploadDetails"].clone()
}

async fn offering(t: &TestApp) -> String {
    let r = t.put("createIssuer", ISSUER).await;
    code(&r, "101");
    let issuer = r.inserted("issuerDetails")["issuerId"].as_str().unwrap().to_owned();
    let r = t.put("createOffering", &with(OFFERING, &[("issuerId", &issuer)])).await;
    code(&r, "101");
    r.inserted("offeringDetails")["offeringId"].as_str().unwrap().to_owned()
}

async fn offering_documents(t: &TestApp, offering: &str) -> Vec<Value> {
    let r = t.post("getDocumentsforOffering", &[("offeringId", offering)]).await;
    if r.code() == "404" {
        return Vec::new();
    }
    code(&r, "101");
    r.json["document_details"].as_array().unwrap().clone()
}

async fn fetched(t: &TestApp, url: &Value) -> Vec<u8> {
    let (status, body) = t.fetch(url.as_str().expect("a URL")).await;
    assert_eq!(status, 200);
    body.to_vec()
}

both!(
    large_offering_documents_arrive_through_an_upload,
    |t: TestApp| async move {
        let o = offering(&t).await;
        let slot = slot_as(&t, &t.creds(), "model.xls").await;
        let mut shape: Vec<&str> = slot.as_object().unwrap().keys().map(String::as_str).collect();
        shape.sort_unstable();
        assert_eq!(
            shape,
            [
                "expiresDate",
                "fileName",
                "maxBytes",
                "method",
                "uploadId",
                "uploadUrl",
                "urlExpiresDate"
            ]
        );
        assert_eq!(
            (&slot["method"], &slot["maxBytes"]),
            (&json!("PUT"), &json!(50_000_000))
        );
        // Larger than any request through API Gateway and Lambda may be.
        let model = bytes(7_000_000, 3);
        assert_eq!(t.put_url(slot["uploadUrl"].as_str().unwrap(), model.clone()).await, 200);
        let id = slot["uploadId"].as_str().unwrap();
        let r = t
            .post(
                "addDocumentsforOffering",
                &[
                    ("offeringId", &o),
                    ("documentTitle", "Financial model"),
                    ("documentFileReferenceCode", "TRK-1"),
                    ("file_name", "filename0=model.xls"),
                    ("uploadId0", id),
                ],
            )
            .await;
        code(&r, "101");
        let docs = offering_documents(&t, &o).await;
        assert_eq!(docs.len(), 1);
        assert_eq!(
            (&docs[0]["documentName"], &docs[0]["documentTitle"]),
            (&json!("model.xls"), &json!("Financial model"))
        );
        assert!(
            fetched(&t, &docs[0]["url"]).await == model,
            "the stored document is the file sent"
        );

        // Over the offering documents' 50 MB: refused when used, and nothing is written.
        let big = t.upload_file("big.pdf", bytes(50_000_001, 1)).await;
        let r = t
            .post(
                "addDocumentsforOffering",
                &[
                    ("offeringId", &o),
                    ("documentTitle", "Too big"),
                    ("documentFileReferenceCode", "TRK-2"),
                    ("file_name", "filename0=big.pdf"),
                    ("uploadId0", &big),
                ],
            )
            .await;
        code(&r, "106");
        assert!(r.desc().contains("larger than 50000000 bytes"), "{}", r.desc());
        assert_eq!(offering_documents(&t, &o).await.len(), 1);
    }
);

both!(every_upload_operation_takes_an_upload_id, |t: TestApp| async move {
    let scan = bytes(3000, 7);
    let id = t.upload_file("scan.pdf", scan.clone()).await;
    let (account, party, entity) = (
        create_account(&t).await,
        create_party(&t).await,
        create_entity(&t).await,
    );
    let cases: [(&str, &str, &str, &str, &str, &str); 4] = [
        (
            "uploadAccountDocument",
            "accountId",
            &account,
            "uploadId0",
            "getAccountDocument",
            "accountDocumentDetails",
        ),
        (
            "uploadPartyDocument",
            "partyId",
            &party,
            "uploadId0",
            "getPartyDocument",
            "partyDocumentDetails",
        ),
        (
            "uploadEntityDocument",
            "partyId",
            &entity,
            "uploadId0",
            "getEntityDocument",
            "partyDocumentDetails",
        ),
        (
            "uploadVerificationDocument",
            "accountId",
            &account,
            "uploadId",
            "getAiDocument",
            "document_details",
        ),
    ];
    // One upload serves several operations until it expires.
    for (op, owner, owner_id, field, get, list) in cases {
        let r = t
            .post(op, &[(owner, owner_id), ("documentTitle", "ID scan"), (field, &id)])
            .await;
        code(&r, "101");
        let r = t.post(get, &[(owner, owner_id)]).await;
        code(&r, "101");
        let docs = r.json[list].as_array().unwrap();
        assert_eq!(docs.len(), 1, "{op}");
        assert_eq!(docs[0]["documentFileName"], "scan.pdf", "{op}");
        assert!(fetched(&t, &docs[0]["documentUrl"]).await == scan, "{op}");
    }
    // A file sent and an upload in one request, renamed by `file_name`.
    let r = t
        .multipart(
            "uploadPartyDocument",
            &[
                ("partyId", &party),
                ("documentTitle", "documentTitle0=Sent&documentTitle1=Uploaded"),
                ("file_name", "filename1=renamed.pdf"),
                ("uploadId1", &id),
            ],
            &[("userfile0", "sent.pdf", &bytes(1500, 1))],
        )
        .await;
    code(&r, "101");
    let r = t.post("getPartyDocument", &[("partyId", &party)]).await;
    let names: Vec<&Value> = r.json["partyDocumentDetails"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| &d["documentFileName"])
        .collect();
    assert_eq!(names, [&json!("scan.pdf"), &json!("sent.pdf"), &json!("renamed.pdf")]);
});

both!(upload_refusals_write_nothing, |t: TestApp| async move {
    let party = create_party(&t).await;
    let entity = create_entity(&t).await;
    let other = t.new_client(json!({"scopes": ["*"]})).await;
    let theirs = slot_as(&t, &other, "theirs.pdf").await;
    assert_eq!(
        t.put_url(theirs["uploadUrl"].as_str().unwrap(), bytes(2000, 1)).await,
        200
    );
    let unsent = slot_as(&t, &t.creds(), "unsent.pdf").await;
    let small = t.upload_file("small.pdf", bytes(999, 2)).await;
    let notes = t.upload_file("notes.txt", bytes(2000, 3)).await;
    let cases: Vec<(&str, &str, &str, &str)> = vec![
        ("uploadPartyDocument", &party, "uploadId0", "no-such-upload"),
        ("uploadPartyDocument", &party, "uploadId0", "../../etc/passwd"),
        (
            "uploadPartyDocument",
            &party,
            "uploadId0",
            theirs["uploadId"].as_str().unwrap(),
        ),
        (
            "uploadPartyDocument",
            &party,
            "uploadId0",
            unsent["uploadId"].as_str().unwrap(),
        ),
        ("uploadPartyDocument", &party, "uploadId0", &small),
        // Entity documents take no TXT.
        ("uploadEntityDocument", &entity, "uploadId0", &notes),
    ];
    for (op, owner, field, id) in cases {
        let r = t
            .post(op, &[("partyId", owner), ("documentTitle", "x"), (field, id)])
            .await;
        code(&r, "106");
        let get = op.replace("upload", "get");
        let r = t.post(&get, &[("partyId", owner)]).await;
        assert_eq!(r.json["partyDocumentDetails"], json!([]), "{op} {id}: nothing written");
    }
    let r = t
        .post(
            "uploadPartyDocument",
            &[("partyId", &party), ("documentTitle", "x"), ("uploadId0", &small)],
        )
        .await;
    assert!(r.desc().starts_with(SIZE), "{}", r.desc());

    // The endpoint's own refusals: resource-style.
    let creds = t.creds();
    for body in [json!({}), json!({"fileName": "run.exe"}), json!({"fileName": "noext"})] {
        let r = t.json_as(&creds, Method::POST, UPLOADS, &body).await;
        assert_eq!((r.status, r.code()), (400, "1400"), "{body}");
    }
    let reader = t.new_client(json!({"scopes": ["party.read"]})).await;
    let r = t
        .json_as(&reader, Method::POST, UPLOADS, &json!({"fileName": "a.pdf"}))
        .await;
    assert_eq!((r.status, r.code()), (403, "1403"));
    let r = t
        .json_as(
            &Creds {
                id: creds.id.clone(),
                key: "wrong".into(),
            },
            Method::POST,
            UPLOADS,
            &json!({"fileName": "a.pdf"}),
        )
        .await;
    assert_eq!(r.status, 401);

    // The local store checks its signatures (moto's S3 does not check presigned ones).
    if t.backend == Backend::Embedded {
        let url = unsent["uploadUrl"].as_str().unwrap();
        let at = url.find("signature=").unwrap() + "signature=".len();
        let mut forged = url.to_owned();
        forged.replace_range(at..at + 1, if &url[at..at + 1] == "0" { "1" } else { "0" });
        assert_eq!(t.put_url(&forged, bytes(2000, 4)).await, 403);
        let r = t
            .post(
                "uploadPartyDocument",
                &[
                    ("partyId", &party),
                    ("documentTitle", "x"),
                    ("uploadId0", unsent["uploadId"].as_str().unwrap()),
                ],
            )
            .await;
        code(&r, "106");
    }
});
