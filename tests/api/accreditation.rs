//! Accreditation verification: requests, the status rules of part 2 (the account's
//! `accreditedStatus`), the reviewer's change (updateAiVerification and the operator's
//! review), webhooks at a real listener, every error code, and billing in production only.

use api_tests::{both, Listener, TestApp};
use http::Method;
use serde_json::{json, Value};
use shared::model::accreditation::AiRequest;
use shared::model::kyc::BillingEntry;
use shared::model::Account;
use shared::records::{self, Stored};
use shared::Environment;

use crate::fixtures::*;

fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
    v.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
}

/// An account whose `accreditedStatus` is stored as `status`.
async fn account_with(t: &TestApp, status: &str) -> String {
    create_account_as(t, &t.creds(), &[("AccreditedStatus", status)]).await
}

async fn account(t: &TestApp, id: &str) -> Stored<Account> {
    records::load::<Account>(t.store(), &t.client_id, id)
        .await
        .unwrap()
        .expect("account stored")
}

async fn ai_request(t: &TestApp, id: &str) -> Option<Stored<AiRequest>> {
    records::load::<AiRequest>(t.store(), &t.client_id, id).await.unwrap()
}

/// requestAiVerification for `account`: answers the new `airequestId`.
async fn request(t: &TestApp, account: &str, notes: &str) -> String {
    let r = t
        .post(
            "requestAiVerification",
            &[("accountId", account), ("aiMethod", "Upload"), ("notes", notes)],
        )
        .await;
    assert_eq!(r.code(), "101", "{:?}", r.json);
    r.json["accreditedDetails"][0]["airequestId"]
        .as_str()
        .unwrap()
        .to_owned()
}

async fn get_requests(t: &TestApp, account: &str) -> Value {
    let r = t.post("getAiRequest", &[("accountId", account)]).await;
    assert_eq!(r.code(), "101", "{:?}", r.json);
    r.json["accreditedDetails"]["request"].clone()
}

both!(request_ai_verification_is_pending_and_fires, |t: TestApp| async move {
    let mut hook = Listener::start(200).await;
    t.register_webhook("requestAiVerification", &[&hook.url]).await;
    let acc = account_with(&t, "pending").await;
    let before = account(&t, &acc).await;
    let r = t
        .post(
            "requestAiVerification",
            &[
                ("accountId", &acc),
                ("aiMethod", "Upload"),
                ("notes", "two years of W-2s"),
            ],
        )
        .await;
    assert_eq!((r.status, r.code()), (200, "101"), "{:?}", r.json);
    let id = r.json["accreditedDetails"][0]["airequestId"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(id.parse::<u64>().unwrap() >= 100_000, "{id}");
    assert_eq!(
        r.json["accreditedDetails"],
        json!([{
            "accountId": acc,
            "aiRequestStatus": "Pending",
            "airequestId": id,
            "notes": "two years of W-2s",
            "accreditedStatus": "pending",
        }]),
        "the account's status echoed as stored"
    );
    let got = hook.next(5).await.expect("requestAiVerification webhook");
    assert_eq!(
        got.pairs(),
        pairs(&[
            ("accountId", &acc),
            ("aiRequestStatus", "Pending"),
            ("airequestId", &id),
            ("notes", "two years of W-2s"),
            ("accreditedStatus", "pending"),
        ])
    );
    assert_eq!(account(&t, &acc).await, before, "the account is not changed");
    let stored = ai_request(&t, &id).await.expect("request stored").rec;
    assert_eq!(
        (
            stored.account_id.as_str(),
            stored.ai_method.as_str(),
            stored.status.as_str()
        ),
        (acc.as_str(), "Upload", "Pending")
    );
    // A second request for the same account is a new one.
    let second = request(&t, &acc, "").await;
    assert_ne!(second, id);
});

both!(request_ai_verification_errors_write_nothing, |t: TestApp| async move {
    let mut hook = Listener::start(200).await;
    t.register_webhook("requestAiVerification", &[&hook.url]).await;
    let other = t.new_client(json!({"scopes": ["*"]})).await;
    let theirs = create_account_as(&t, &other, &[]).await;
    let gone = create_account(&t).await;
    assert_eq!(t.post("deleteAccount", &[("accountId", &gone)]).await.code(), "101");
    let archived = create_account(&t).await;
    let r = t
        .post(
            "updateAccountArchivestatus",
            &[("accountId", &archived), ("archiveStatus", "1")],
        )
        .await;
    assert_eq!(r.code(), "101", "{:?}", r.json);
    let r = t.post("requestAiVerification", &[("aiMethod", "Upload")]).await;
    assert_eq!((r.status, r.code()), (404, "106"), "{:?}", r.json);
    let r = t.post("requestAiVerification", &[("accountId", " ")]).await;
    assert_eq!((r.status, r.code()), (404, "106"));
    for id in [theirs.as_str(), gone.as_str(), archived.as_str(), "A9999999", "junk"] {
        let r = t.post("requestAiVerification", &[("accountId", id)]).await;
        assert_eq!((r.status, r.code()), (404, "148"), "{id} {:?}", r.json);
    }
    assert!(hook.next(2).await.is_none(), "no webhook for rejected calls");
    assert_eq!(
        records::count::<AiRequest>(t.store(), &t.client_id, true)
            .await
            .unwrap(),
        0,
        "no request written"
    );
    assert_eq!(get_requests(&t, &archived).await, json!([]));
});

both!(
    update_ai_request_approved_verifies_the_account,
    |t: TestApp| async move {
        let mut hook = Listener::start(200).await;
        t.register_webhook("updateAiRequest", &[&hook.url]).await;
        let acc = account_with(&t, "Pending").await;
        let id = request(&t, &acc, "letter").await;
        let r = t
            .post(
                "updateAiRequest",
                &[("airequestId", &id), ("aiRequestStatus", "Approved")],
            )
            .await;
        assert_eq!((r.status, r.code()), (200, "101"), "{:?}", r.json);
        assert_eq!(
            r.json["accreditedDetails"],
            json!([{
                "accountId": acc,
                "aiRequestStatus": "Approved",
                "airequestId": id,
                "accreditedStatus": "Verified Accredited",
            }])
        );
        let got = hook.next(5).await.expect("updateAiRequest webhook");
        assert_eq!(
            got.pairs(),
            pairs(&[
                ("accountId", &acc),
                ("aiRequestStatus", "Approved"),
                ("airequestId", &id),
                ("accreditedStatus", "Verified Accredited"),
            ])
        );
        let a = account(&t, &acc).await.rec;
        assert_eq!(a.accredited_status, "Verified Accredited");
        // accreditedInvestorDate: when the review expires, 90 days on (the letter's term).
        let approved = chrono::NaiveDateTime::parse_from_str(&a.updated, "%Y-%m-%d %H:%M:%S").unwrap();
        let expires = approved.date() + chrono::Days::new(90);
        assert_eq!(a.accredited_investor_date, expires.format("%m-%d-%Y").to_string());
        let listed = get_requests(&t, &acc).await;
        assert_eq!(listed[0]["aiRequestStatus"], "Approved");
        assert_eq!(listed[0]["accreditedStatus"], "Verified Accredited");
        assert_eq!(listed[0]["notes"], "letter", "updateAiRequest keeps the notes");
        assert_eq!(listed[0]["aiDate"], a.updated.as_str(), "a decision is dated");
    }
);

both!(update_ai_request_rejected_and_other_values, |t: TestApp| async move {
    let acc = account_with(&t, "Self Accredited").await;
    let id = request(&t, &acc, "").await;
    let before = account(&t, &acc).await;
    for status in ["Need More Info", "New Info Added", "Updated Letter Requested"] {
        let r = t
            .post("updateAiRequest", &[("airequestId", &id), ("aiRequestStatus", status)])
            .await;
        assert_eq!(r.code(), "101", "{:?}", r.json);
        assert_eq!(r.json["accreditedDetails"][0]["aiRequestStatus"], status);
        assert_eq!(r.json["accreditedDetails"][0]["accreditedStatus"], "Self Accredited");
        assert_eq!(ai_request(&t, &id).await.unwrap().rec.status, status, "stored as sent");
    }
    assert_eq!(account(&t, &acc).await, before, "other values are only stored");
    assert_eq!(get_requests(&t, &acc).await[0]["aiDate"], "", "no decision yet");
    let r = t
        .post(
            "updateAiRequest",
            &[("airequestId", &id), ("aiRequestStatus", "REJECTED")],
        )
        .await;
    assert_eq!(r.code(), "101", "{:?}", r.json);
    assert_eq!(r.json["accreditedDetails"][0]["aiRequestStatus"], "REJECTED");
    assert_eq!(r.json["accreditedDetails"][0]["accreditedStatus"], "Not Accredited");
    assert_eq!(account(&t, &acc).await.rec.accredited_status, "Not Accredited");
    let r = t
        .post(
            "updateAiRequest",
            &[("airequestId", &id), ("aiRequestStatus", "approved")],
        )
        .await;
    assert_eq!(
        r.json["accreditedDetails"][0]["accreditedStatus"],
        "Verified Accredited"
    );
});

both!(update_ai_request_errors_write_nothing, |t: TestApp| async move {
    let mut hook = Listener::start(200).await;
    t.register_webhook("updateAiRequest", &[&hook.url]).await;
    let acc = account_with(&t, "Pending").await;
    let id = request(&t, &acc, "").await;
    let other = t.new_client(json!({"scopes": ["*"]})).await;
    let their_account = create_account_as(&t, &other, &[]).await;
    let r = t
        .form_as(
            &other,
            Method::POST,
            "requestAiVerification",
            &[("accountId", &their_account)],
        )
        .await;
    assert_eq!(r.code(), "101", "{:?}", r.json);
    let theirs = r.json["accreditedDetails"][0]["airequestId"]
        .as_str()
        .unwrap()
        .to_owned();
    let gone_account = create_account(&t).await;
    let gone = request(&t, &gone_account, "").await;
    assert_eq!(
        t.post("deleteAccount", &[("accountId", &gone_account)]).await.code(),
        "101"
    );
    let (req_before, acc_before) = (ai_request(&t, &id).await, account(&t, &acc).await);
    let cases: Vec<(Vec<(&str, &str)>, &str)> = vec![
        (vec![("aiRequestStatus", "Approved")], "106"),
        (vec![("airequestId", &id)], "106"),
        (vec![("airequestId", &id), ("aiRequestStatus", "  ")], "106"),
        (vec![("airequestId", "abc"), ("aiRequestStatus", "Approved")], "106"),
        (
            vec![("airequestId", "999999999"), ("aiRequestStatus", "Approved")],
            "152",
        ),
        (vec![("airequestId", &theirs), ("aiRequestStatus", "Approved")], "152"),
        (vec![("airequestId", &gone), ("aiRequestStatus", "Approved")], "148"),
    ];
    for (form, code) in cases {
        let r = t.post("updateAiRequest", &form).await;
        assert_eq!((r.status, r.code()), (404, code), "{form:?} {:?}", r.json);
    }
    assert_eq!(
        t.post(
            "updateAiRequest",
            &[("airequestId", "999999999"), ("aiRequestStatus", "x")]
        )
        .await
        .desc(),
        "Request Id not exits."
    );
    assert!(hook.next(2).await.is_none(), "no webhook for rejected calls");
    assert_eq!(ai_request(&t, &id).await, req_before, "nothing written");
    assert_eq!(account(&t, &acc).await, acc_before);
    assert_eq!(ai_request(&t, &gone).await.unwrap().rec.status, "Pending");
});

both!(
    update_ai_verification_reviews_with_notes_and_fires,
    |t: TestApp| async move {
        let mut hook = Listener::start(200).await;
        t.register_webhook("updateAiVerification", &[&hook.url]).await;
        let acc = account_with(&t, "Pending").await;
        let id = request(&t, &acc, "asset statements").await;
        let r = t
            .post(
                "updateAiVerification",
                &[
                    ("airequestId", &id),
                    ("aiRequestStatus", "Need More Info"),
                    ("reviewedBy", "R. Viewer"),
                ],
            )
            .await;
        assert_eq!((r.status, r.code()), (200, "101"), "{:?}", r.json);
        assert_eq!(
            r.json["accreditedDetails"],
            json!([{
                "accountId": acc,
                "aiRequestStatus": "Need More Info",
                "airequestId": id,
                "notes": "asset statements",
                "accreditedStatus": "Pending",
            }]),
            "notes kept when not sent"
        );
        let got = hook.next(5).await.expect("updateAiVerification webhook");
        assert_eq!(
            got.pairs(),
            pairs(&[
                ("accountId", &acc),
                ("aiRequestStatus", "Need More Info"),
                ("airequestId", &id),
                ("notes", "asset statements"),
                ("accreditedStatus", "Pending"),
            ])
        );
        let r = t
            .post(
                "updateAiVerification",
                &[
                    ("airequestId", &id),
                    ("aiRequestStatus", "Approved"),
                    ("notes", "verified by letter"),
                ],
            )
            .await;
        assert_eq!(r.code(), "101", "{:?}", r.json);
        let got = hook.next(5).await.expect("second webhook");
        assert_eq!(
            got.pairs(),
            pairs(&[
                ("accountId", &acc),
                ("aiRequestStatus", "Approved"),
                ("airequestId", &id),
                ("notes", "verified by letter"),
                ("accreditedStatus", "Verified Accredited"),
            ])
        );
        assert_eq!(account(&t, &acc).await.rec.accredited_status, "Verified Accredited");
        let listed = get_requests(&t, &acc).await;
        assert_eq!(listed[0]["reviewedBy"], "R. Viewer", "kept when not sent");
        assert_eq!(listed[0]["notes"], "verified by letter");
    }
);

both!(update_ai_verification_errors_write_nothing, |t: TestApp| async move {
    let mut hook = Listener::start(200).await;
    t.register_webhook("updateAiVerification", &[&hook.url]).await;
    let acc = account_with(&t, "Pending").await;
    let id = request(&t, &acc, "n").await;
    let archived = create_account(&t).await;
    let on_archived = request(&t, &archived, "").await;
    let r = t
        .post(
            "updateAccountArchivestatus",
            &[("accountId", &archived), ("archiveStatus", "1")],
        )
        .await;
    assert_eq!(r.code(), "101");
    let (req_before, acc_before) = (ai_request(&t, &id).await, account(&t, &acc).await);
    let cases: Vec<(Vec<(&str, &str)>, &str)> = vec![
        (vec![("aiRequestStatus", "Approved"), ("notes", "x")], "106"),
        (vec![("airequestId", &id), ("notes", "x")], "106"),
        (vec![("airequestId", "1e5"), ("aiRequestStatus", "Approved")], "106"),
        (vec![("airequestId", "100"), ("aiRequestStatus", "Approved")], "152"),
        (
            vec![("airequestId", &on_archived), ("aiRequestStatus", "Approved")],
            "148",
        ),
    ];
    for (form, code) in cases {
        let r = t.post("updateAiVerification", &form).await;
        assert_eq!((r.status, r.code()), (404, code), "{form:?} {:?}", r.json);
    }
    assert!(hook.next(2).await.is_none(), "no webhook for rejected calls");
    assert_eq!(ai_request(&t, &id).await, req_before, "nothing written");
    assert_eq!(account(&t, &acc).await, acc_before);
});

both!(get_ai_request_lists_the_account_requests, |t: TestApp| async move {
    let acc = account_with(&t, "pending").await;
    let first = request(&t, &acc, "first").await;
    let second = request(&t, &acc, "second").await;
    let elsewhere = create_account(&t).await;
    request(&t, &elsewhere, "other account").await;
    let r = t.post("getAiRequest", &[("accountId", &acc)]).await;
    assert_eq!((r.status, r.code()), (200, "101"), "{:?}", r.json);
    let details = r.json["accreditedDetails"].as_object().unwrap();
    assert_eq!(details.keys().collect::<Vec<_>>(), ["request"], "no documents key yet");
    let list = details["request"].as_array().unwrap();
    assert_eq!(list.len(), 2);
    assert_eq!(
        (list[0]["airequestId"].as_str(), list[1]["airequestId"].as_str()),
        (Some(second.as_str()), Some(first.as_str())),
        "newest first"
    );
    let rec = list[1].as_object().unwrap();
    assert_eq!(
        rec.keys().map(String::as_str).collect::<Vec<_>>(),
        [
            "airequestId",
            "accountId",
            "aiMethod",
            "allow",
            "aiDate",
            "reviewedBy",
            "notes",
            "aiRequestStatus",
            "createdDate",
            "accountName",
            "accreditedStatus",
            "clientId",
            "developerAPIKey",
        ]
    );
    assert_eq!(rec["accountId"], acc.as_str());
    assert_eq!(rec["aiMethod"], "Upload");
    assert_eq!(rec["notes"], "first");
    assert_eq!(rec["aiRequestStatus"], "Pending");
    assert_eq!(rec["accountName"], "Ann Lee");
    assert_eq!(rec["accreditedStatus"], "pending");
    assert_eq!(rec["clientId"], "XXXXXXXXXXXXXXX");
    assert_eq!(rec["developerAPIKey"], "XXXXXXXXXXXXXXX");
    assert_eq!(rec["createdDate"].as_str().unwrap().len(), 19);
    let none = create_account(&t).await;
    assert_eq!(get_requests(&t, &none).await, json!([]));
    let r = t.post("getAiRequest", &[]).await;
    assert_eq!((r.status, r.code()), (404, "106"));
    let other = t.new_client(json!({"scopes": ["*"]})).await;
    let theirs = create_account_as(&t, &other, &[]).await;
    for id in [theirs.as_str(), "A9999999"] {
        let r = t.post("getAiRequest", &[("accountId", id)]).await;
        assert_eq!((r.status, r.code()), (404, "148"), "{id}");
    }
});

both!(
    operator_review_applies_update_ai_verification,
    |t: TestApp| async move {
        let mut hook = Listener::start(200).await;
        t.register_webhook("updateAiVerification", &[&hook.url]).await;
        let acc = account_with(&t, "Pending").await;
        let id = request(&t, &acc, "letter").await;
        let path = format!("/operator/clients/{}/ai-requests/{id}/review", t.client_id);
        let r = t
            .operator(
                Method::POST,
                &path,
                json!({"status": "Approved", "notes": "CPA letter checked"}),
            )
            .await;
        assert_eq!(r.status, 200, "{:?}", r.json);
        assert_eq!(
            r.json,
            json!({
                "clientId": t.client_id,
                "accountId": acc,
                "aiRequestStatus": "Approved",
                "airequestId": id,
                "notes": "CPA letter checked",
                "accreditedStatus": "Verified Accredited",
            })
        );
        let got = hook.next(5).await.expect("updateAiVerification webhook");
        assert_eq!(
            got.pairs(),
            pairs(&[
                ("accountId", &acc),
                ("aiRequestStatus", "Approved"),
                ("airequestId", &id),
                ("notes", "CPA letter checked"),
                ("accreditedStatus", "Verified Accredited"),
            ])
        );
        assert_eq!(account(&t, &acc).await.rec.accredited_status, "Verified Accredited");
        assert_eq!(get_requests(&t, &acc).await[0]["reviewedBy"], "operator");

        let before = (ai_request(&t, &id).await, account(&t, &acc).await);
        let rejected = json!({"status": "rejected"});
        let cases = [
            (
                format!("/operator/clients/no-such-client/ai-requests/{id}/review"),
                rejected.clone(),
                404,
            ),
            (
                format!("/operator/clients/{}/ai-requests/999999999/review", t.client_id),
                rejected.clone(),
                404,
            ),
            (
                format!("/operator/clients/{}/ai-requests/abc/review", t.client_id),
                rejected.clone(),
                400,
            ),
            (path.clone(), json!({"notes": "no status"}), 400),
            (path.clone(), json!({"status": " "}), 400),
            (path.clone(), json!({"status": "rejected", "colour": "red"}), 400),
        ];
        for (p, body, status) in cases {
            let r = t.operator(Method::POST, &p, body.clone()).await;
            assert_eq!(r.status, status, "{p} {body} {:?}", r.json);
            assert!(r.json["error"].is_string());
        }
        assert!(hook.next(2).await.is_none(), "no webhook for rejected reviews");
        assert_eq!(
            (ai_request(&t, &id).await, account(&t, &acc).await),
            before,
            "nothing written"
        );
    }
);

both!(billing_only_in_production, |t: TestApp| async move {
    let acc = create_account(&t).await;
    let id = request(&t, &acc, "").await;
    let r = t
        .post(
            "updateAiRequest",
            &[("airequestId", &id), ("aiRequestStatus", "Approved")],
        )
        .await;
    assert_eq!(r.code(), "101");
    assert_eq!(
        records::count::<BillingEntry>(t.store(), &t.client_id, true)
            .await
            .unwrap(),
        0,
        "sandbox calls are not billed"
    );
    let prod = TestApp::with_env(t.backend, Environment::Production).await;
    let acc = create_account(&prod).await;
    assert_eq!(
        prod.post("requestAiVerification", &[("accountId", "A9999999")])
            .await
            .code(),
        "148"
    );
    let id = request(&prod, &acc, "").await;
    for op in ["updateAiRequest", "updateAiVerification"] {
        let r = prod
            .post(op, &[("airequestId", &id), ("aiRequestStatus", "Need More Info")])
            .await;
        assert_eq!(r.code(), "101");
    }
    assert_eq!(prod.post("getAiRequest", &[("accountId", &acc)]).await.code(), "101");
    assert_eq!(
        records::count::<BillingEntry>(prod.store(), &prod.client_id, true)
            .await
            .unwrap(),
        1,
        "only the verification request is billed"
    );
    let entry = billing_entry(&prod).await;
    assert_eq!(
        (
            entry.operation.as_str(),
            entry.subject_id.as_str(),
            entry.reference.as_str()
        ),
        ("requestAiVerification", acc.as_str(), id.as_str())
    );
});

/// The one billing entry of a client.
async fn billing_entry(t: &TestApp) -> BillingEntry {
    use shared::store::{Index, Query};
    let q = Query::new(Index::Table, records::partition::<BillingEntry>(&t.client_id));
    let page = t.store().query(&q).await.unwrap();
    assert_eq!(page.items.len(), 1);
    records::from_item::<BillingEntry>(&page.items[0]).unwrap().rec
}

both!(fields_the_key_may_not_set_are_110, |t: TestApp| async move {
    let t = t.as_new_client().await;
    let mut hook = Listener::start(200).await;
    for m in ["requestAiVerification", "updateAiRequest", "updateAiVerification"] {
        t.register_webhook(m, &[&hook.url]).await;
    }
    let acc = create_account(&t).await;
    let id = request(&t, &acc, "n").await;
    hook.next(5).await.expect("the setup's webhook");
    let path = format!("/operator/clients/{}/field-permissions", t.client_id);
    let r = t.operator(Method::PUT, &path, json!({"fields": ["accountId"]})).await;
    assert_eq!(r.status, 200, "{:?}", r.json);
    let before = (ai_request(&t, &id).await, account(&t, &acc).await);
    let cases: [(&str, Vec<(&str, &str)>); 3] = [
        (
            "requestAiVerification",
            vec![("accountId", &acc), ("aiMethod", "Upload")],
        ),
        (
            "updateAiRequest",
            vec![("airequestId", &id), ("aiRequestStatus", "Approved")],
        ),
        (
            "updateAiVerification",
            vec![("airequestId", &id), ("aiRequestStatus", "Approved")],
        ),
    ];
    for (op, form) in &cases {
        let r = t.post(op, form).await;
        assert_eq!((r.status, r.code()), (404, "110"), "{op} {:?}", r.json);
    }
    assert!(hook.next(2).await.is_none(), "no webhook for rejected calls");
    assert_eq!(
        (ai_request(&t, &id).await, account(&t, &acc).await),
        before,
        "nothing written"
    );
    assert_eq!(
        records::count::<AiRequest>(t.store(), &t.client_id, true)
            .await
            .unwrap(),
        1
    );
    // Reads set nothing: getAiRequest still answers.
    assert_eq!(t.post("getAiRequest", &[("accountId", &acc)]).await.code(), "101");
});

both!(
    approval_issues_a_letter_and_marks_the_evidence,
    |t: TestApp| async move {
        let acc = account_with(&t, "pending").await;
        let evidence = vec![b'%'; 2048];
        let r = t
            .multipart(
                "uploadVerificationDocument",
                &[("accountId", &acc), ("documentTitle", "W-2 2025")],
                &[("userfile", "w2.pdf", &evidence)],
            )
            .await;
        assert_eq!(r.code(), "101", "{:?}", r.json);
        let id = request(&t, &acc, "income").await;

        // Not decided yet: the evidence is pending and no letter exists.
        let r = t.post("getAiRequest", &[("accountId", &acc)]).await;
        let docs = r.json["accreditedDetails"]["documents"].clone();
        assert_eq!(docs.as_array().unwrap().len(), 1, "{docs}");
        assert_eq!(docs[0]["status"], "Pending");
        assert_eq!(docs[0]["documentTitle"], "W-2 2025");
        let (status, bytes) = t.fetch(docs[0]["documentUrl"].as_str().unwrap()).await;
        assert_eq!((status, bytes.as_ref()), (200, evidence.as_slice()));
        let r = t.post("getAiLetter", &[("accountId", &acc)]).await;
        assert_eq!(r.json["document_details"], json!([]), "{:?}", r.json);

        let r = t
            .post(
                "updateAiRequest",
                &[("airequestId", &id), ("aiRequestStatus", "Approved")],
            )
            .await;
        assert_eq!(r.code(), "101", "{:?}", r.json);
        let r = t.post("getAiRequest", &[("accountId", &acc)]).await;
        assert_eq!(r.json["accreditedDetails"]["documents"][0]["status"], "Approved");
        let r = t.post("getAiLetter", &[("accountId", &acc)]).await;
        let letters = r.json["document_details"].as_array().unwrap().clone();
        assert_eq!(letters.len(), 1, "{:?}", r.json);
        assert_eq!(letters[0]["accountId"], acc.as_str());
        assert_eq!(
            letters[0]["documentFileName"],
            format!("accreditation-letter-{id}.pdf").as_str()
        );
        let (status, pdf) = t.fetch(letters[0]["documentUrl"].as_str().unwrap()).await;
        assert_eq!(status, 200);
        assert!(pdf.starts_with(b"%PDF-") && pdf.len() >= 1024, "{} bytes", pdf.len());

        // Approving the same request again issues no second letter.
        let r = t
            .post(
                "updateAiVerification",
                &[("airequestId", &id), ("aiRequestStatus", "approved")],
            )
            .await;
        assert_eq!(r.code(), "101", "{:?}", r.json);
        let r = t.post("getAiDocument", &[("accountId", &acc)]).await;
        assert_eq!(r.json["letter_details"].as_array().unwrap().len(), 1, "{:?}", r.json);
    }
);

both!(
    rejection_marks_the_evidence_and_issues_no_letter,
    |t: TestApp| async move {
        let acc = account_with(&t, "pending").await;
        let r = t
            .multipart(
                "uploadVerificationDocument",
                &[("accountId", &acc), ("documentTitle", "statement")],
                &[("userfile", "s.png", &[7u8; 1500])],
            )
            .await;
        assert_eq!(r.code(), "101", "{:?}", r.json);
        let id = request(&t, &acc, "assets").await;
        let r = t
            .post(
                "updateAiRequest",
                &[("airequestId", &id), ("aiRequestStatus", "rejected")],
            )
            .await;
        assert_eq!(r.code(), "101", "{:?}", r.json);
        let r = t.post("getAiRequest", &[("accountId", &acc)]).await;
        assert_eq!(r.json["accreditedDetails"]["documents"][0]["status"], "rejected");
        let r = t.post("getAiLetter", &[("accountId", &acc)]).await;
        assert_eq!(r.json["document_details"], json!([]));
        assert_eq!(account(&t, &acc).await.rec.accredited_status, "Not Accredited");
    }
);
