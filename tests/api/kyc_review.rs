//! The manual KYC/AML review: updateKycAmlStatus (also without `/v3`), updateKycAmlRequest and
//! the operator's review of a manual request, with their webhooks at a real listener, every
//! error code, and nothing written by a rejected call.

use api_tests::{both, record_pairs, Listener, Resp, TestApp};
use bytes::Bytes;
use http::Method;
use serde_json::json;
use shared::model::kyc::KycRequest;
use shared::model::{Account, Entity, Party};
use shared::records::{self, Stored};

use crate::fixtures::*;

fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
    v.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
}

/// requestKycAml for `investor`: answers the `requestId`.
async fn manual_request(t: &TestApp, investor: &str) -> String {
    let r = t.post("requestKycAml", &[("investorId", investor)]).await;
    assert_eq!(r.code(), "101", "{:?}", r.json);
    r.json["requestDetails"][0]["requestId"].as_str().unwrap().to_owned()
}

async fn party(t: &TestApp, id: &str) -> Stored<Party> {
    records::load::<Party>(t.store(), &t.client_id, id)
        .await
        .unwrap()
        .unwrap()
}

async fn stored_request(t: &TestApp, investor: &str) -> Stored<KycRequest> {
    records::load::<KycRequest>(t.store(), &t.client_id, investor)
        .await
        .unwrap()
        .unwrap()
}

/// `POST /updateKycAmlStatus`, the path as part 2 writes it (no `/v3`).
async fn unprefixed(t: &TestApp, form: &[(&str, &str)]) -> Resp {
    let body = serde_urlencoded::to_string(form).unwrap();
    let auth = t.creds().bearer();
    let headers = [
        ("authorization", auth.as_str()),
        ("content-type", "application/x-www-form-urlencoded"),
    ];
    t.raw(Method::POST, "/updateKycAmlStatus", &headers, Ok(Bytes::from(body)))
        .await
}

fn today() -> String {
    chrono::Utc::now().format("%m-%d-%Y").to_string()
}

both!(
    update_kyc_aml_status_decides_a_manual_request,
    |t: TestApp| async move {
        let mut hook = Listener::start(200).await;
        t.register_webhook("updateKycAmlStatus", &[&hook.url]).await;
        let id = create_party(&t).await;
        let request_id = manual_request(&t, &id).await;
        let r = t
            .post(
                "updateKycAmlStatus",
                &[
                    ("partyId", &id),
                    ("kycStatus", "Manually Approved"),
                    ("amlStatus", "Manually Approved"),
                    ("notes", "passport checked"),
                ],
            )
            .await;
        assert_eq!((r.status, r.code()), (200, "101"), "{:?}", r.json);
        let rec = r.json["requestDetails"][0].clone();
        assert_eq!(r.json["requestDetails"].as_array().unwrap().len(), 1);
        assert_eq!(
            rec.as_object().unwrap().keys().map(String::as_str).collect::<Vec<_>>(),
            [
                "investorId",
                "requestId",
                "requestStatus",
                "kycStatus",
                "amlStatus",
                "notes",
                "createdDate",
                "updatedDate"
            ]
        );
        assert_eq!(rec["investorId"], id.as_str());
        assert_eq!(rec["requestId"], request_id.as_str());
        assert_eq!(rec["requestStatus"], "Pending");
        assert_eq!(rec["kycStatus"], "Manually Approved");
        assert_eq!(rec["amlStatus"], "Manually Approved");
        assert_eq!(rec["notes"], "passport checked");
        let got = hook.next(5).await.expect("updateKycAmlStatus webhook");
        assert_eq!(
            got.pairs(),
            pairs(&[
                ("investorId", &id),
                ("requestId", &request_id),
                ("requestStatus", "Pending"),
                ("kycStatus", "Manually Approved"),
                ("amlStatus", "Manually Approved"),
                ("notes", "passport checked"),
                ("createdDate", rec["createdDate"].as_str().unwrap()),
                ("updatedDate", rec["updatedDate"].as_str().unwrap()),
            ]),
            "the response record's fields"
        );
        let p = party(&t, &id).await.rec;
        assert_eq!(
            (p.kyc_status.as_str(), p.aml_status.as_str(), p.aml_date.as_str()),
            ("Manually Approved", "Manually Approved", today().as_str())
        );
        let g = t.post("getKycAml", &[("partyId", &id)]).await;
        assert_eq!(g.json["KYC Status"], "Manually Approved");
    }
);

both!(
    update_kyc_aml_status_without_v3_on_entities_and_accounts,
    |t: TestApp| async move {
        let entity = create_entity(&t).await;
        manual_request(&t, &entity).await;
        let r = unprefixed(&t, &[("partyId", &entity), ("AMLstatus", "Disapproved")]).await;
        assert_eq!((r.status, r.code()), (200, "101"), "{:?}", r.json);
        assert_eq!(r.json["requestDetails"][0]["amlStatus"], "Disapproved");
        assert_eq!(r.json["requestDetails"][0]["kycStatus"], "", "only what was decided");
        let e = records::load::<Entity>(t.store(), &t.client_id, &entity)
            .await
            .unwrap()
            .unwrap()
            .rec;
        assert_eq!((e.kyc_status.as_str(), e.aml_status.as_str()), ("", "Disapproved"));
        let account = create_account(&t).await;
        manual_request(&t, &account).await;
        let r = t
            .post(
                "updateKycAmlStatus",
                &[("investorId", &account), ("KYCstatus", "Needs More Info")],
            )
            .await;
        assert_eq!(r.code(), "101", "{:?}", r.json);
        let a = records::load::<Account>(t.store(), &t.client_id, &account)
            .await
            .unwrap()
            .unwrap()
            .rec;
        assert_eq!(
            (a.kyc_status.as_str(), a.kyc_date.as_str(), a.aml_status.as_str()),
            ("Needs More Info", today().as_str(), "")
        );
        // Only this path goes without /v3.
        let body = serde_urlencoded::to_string([("partyId", entity.as_str())]).unwrap();
        let auth = t.creds().bearer();
        let r = t
            .raw(
                Method::POST,
                "/getKycAml",
                &[
                    ("authorization", &auth),
                    ("content-type", "application/x-www-form-urlencoded"),
                ],
                Ok(Bytes::from(body)),
            )
            .await;
        assert_eq!((r.status, r.code()), (404, "1404"));
    }
);

both!(update_kyc_aml_status_errors_write_nothing, |t: TestApp| async move {
    let mut hook = Listener::start(200).await;
    t.register_webhook("updateKycAmlStatus", &[&hook.url]).await;
    let with_request = create_party(&t).await;
    manual_request(&t, &with_request).await;
    let without = create_party(&t).await;
    let other = t.new_client(json!({"scopes": ["*"]})).await;
    let theirs = create_party_as(&t, &other).await;
    let cases: Vec<(Vec<(&str, &str)>, &str)> = vec![
        (vec![("kycStatus", "Manually Approved")], "106"),
        (vec![("partyId", &with_request)], "106"),
        (
            vec![("partyId", &with_request), ("kycStatus", " "), ("notes", "x")],
            "106",
        ),
        (vec![("partyId", &without), ("kycStatus", "Manually Approved")], "106"),
        (vec![("partyId", &theirs), ("kycStatus", "Manually Approved")], "198"),
        (vec![("partyId", "P9999999"), ("kycStatus", "Manually Approved")], "198"),
        (vec![("partyId", "E9999999"), ("amlStatus", "Disapproved")], "198"),
        (vec![("partyId", "A9999999"), ("amlStatus", "Disapproved")], "148"),
    ];
    let (party_before, request_before) = (party(&t, &with_request).await, stored_request(&t, &with_request).await);
    let without_before = party(&t, &without).await;
    for (form, code) in cases {
        let r = t.post("updateKycAmlStatus", &form).await;
        assert_eq!((r.status, r.code()), (404, code), "{form:?} {:?}", r.json);
    }
    assert!(hook.next(2).await.is_none(), "no webhook for rejected calls");
    assert_eq!(party(&t, &with_request).await, party_before, "nothing written");
    assert_eq!(stored_request(&t, &with_request).await, request_before);
    assert_eq!(party(&t, &without).await, without_before);
});

both!(
    update_kyc_aml_request_moves_the_request_status,
    |t: TestApp| async move {
        let mut hook = Listener::start(200).await;
        t.register_webhook("updateKycAmlRequest", &[&hook.url]).await;
        let id = create_party(&t).await;
        let request_id = manual_request(&t, &id).await;
        let party_before = party(&t, &id).await;
        let r = t
            .post(
                "updateKycAmlRequest",
                &[
                    ("requestId", &request_id),
                    ("requestStatus", "Need More Info"),
                    ("notes", "ID expired"),
                ],
            )
            .await;
        assert_eq!((r.status, r.code()), (200, "101"), "{:?}", r.json);
        let rec = r.json["requestDetails"][0].clone();
        assert_eq!(rec["investorId"], id.as_str());
        assert_eq!(rec["requestId"], request_id.as_str());
        assert_eq!(rec["requestStatus"], "Need More Info");
        assert_eq!(rec["notes"], "ID expired");
        assert_eq!(
            (rec["kycStatus"].as_str(), rec["amlStatus"].as_str()),
            (Some(""), Some(""))
        );
        let got = hook.next(5).await.expect("updateKycAmlRequest webhook");
        assert_eq!(
            got.pairs(),
            pairs(&[
                ("investorId", &id),
                ("requestId", &request_id),
                ("requestStatus", "Need More Info"),
                ("kycStatus", ""),
                ("amlStatus", ""),
                ("notes", "ID expired"),
                ("createdDate", rec["createdDate"].as_str().unwrap()),
                ("updatedDate", rec["updatedDate"].as_str().unwrap()),
            ])
        );
        assert_eq!(party(&t, &id).await, party_before, "the investor's statuses stay");
        let r = t
            .post(
                "updateKycAmlRequest",
                &[("requestId", &request_id), ("status", "New Info Added")],
            )
            .await;
        assert_eq!(r.code(), "101", "{:?}", r.json);
        assert_eq!(r.json["requestDetails"][0]["requestStatus"], "New Info Added");
        assert_eq!(r.json["requestDetails"][0]["notes"], "ID expired", "kept when not sent");
    }
);

both!(update_kyc_aml_request_errors_write_nothing, |t: TestApp| async move {
    let mut hook = Listener::start(200).await;
    t.register_webhook("updateKycAmlRequest", &[&hook.url]).await;
    let id = create_party(&t).await;
    let request_id = manual_request(&t, &id).await;
    let other = t.new_client(json!({"scopes": ["*"]})).await;
    let their_party = create_party_as(&t, &other).await;
    let r = t
        .form_as(&other, Method::POST, "requestKycAml", &[("investorId", &their_party)])
        .await;
    let theirs = r.json["requestDetails"][0]["requestId"].as_str().unwrap().to_owned();
    let before = stored_request(&t, &id).await;
    let cases: Vec<(Vec<(&str, &str)>, &str)> = vec![
        (vec![("requestStatus", "Approved")], "106"),
        (vec![("requestId", &request_id)], "106"),
        (vec![("requestId", "R1"), ("requestStatus", "Approved")], "106"),
        (vec![("requestId", "999999999"), ("requestStatus", "Approved")], "152"),
        (vec![("requestId", &theirs), ("requestStatus", "Approved")], "152"),
    ];
    for (form, code) in cases {
        let r = t.post("updateKycAmlRequest", &form).await;
        assert_eq!((r.status, r.code()), (404, code), "{form:?} {:?}", r.json);
    }
    assert!(hook.next(2).await.is_none(), "no webhook for rejected calls");
    assert_eq!(stored_request(&t, &id).await, before, "nothing written");
    // The request of a deleted party is not moved, as updateKycAmlStatus does not decide it.
    assert_eq!(t.post("deleteParty", &[("partyId", &id)]).await.code(), "101");
    let r = t
        .post(
            "updateKycAmlRequest",
            &[("requestId", &request_id), ("requestStatus", "Approved")],
        )
        .await;
    assert_eq!(r.code(), "198", "{:?}", r.json);
    assert!(hook.next(2).await.is_none(), "no webhook");
});

both!(
    operator_kyc_review_applies_update_kyc_aml_status,
    |t: TestApp| async move {
        let mut hook = Listener::start(200).await;
        t.register_webhook("updateKycAmlStatus", &[&hook.url]).await;
        let id = create_party(&t).await;
        let request_id = manual_request(&t, &id).await;
        let path = format!("/operator/clients/{}/kyc-requests/{request_id}/review", t.client_id);
        let r = t
            .operator(
                Method::POST,
                &path,
                json!({"kycStatus": "Disapproved", "amlStatus": "Disapproved", "notes": "document forged"}),
            )
            .await;
        assert_eq!(r.status, 200, "{:?}", r.json);
        assert_eq!(r.json["clientId"], t.client_id.as_str());
        assert_eq!(r.json["investorId"], id.as_str());
        assert_eq!(r.json["requestId"], request_id.as_str());
        assert_eq!(r.json["kycStatus"], "Disapproved");
        assert_eq!(r.json["notes"], "document forged");
        let got = hook.next(5).await.expect("updateKycAmlStatus webhook");
        let mut record = r.json.clone();
        record.as_object_mut().unwrap().shift_remove("clientId");
        assert_eq!(got.pairs(), record_pairs(&record), "as updateKycAmlStatus sends it");
        let p = party(&t, &id).await.rec;
        assert_eq!(
            (p.kyc_status.as_str(), p.aml_status.as_str()),
            ("Disapproved", "Disapproved")
        );

        let before = (party(&t, &id).await, stored_request(&t, &id).await);
        let decided = json!({"kycStatus": "Manually Approved"});
        let cases = [
            (
                format!("/operator/clients/no-such-client/kyc-requests/{request_id}/review"),
                decided.clone(),
                404,
            ),
            (
                format!("/operator/clients/{}/kyc-requests/999999999/review", t.client_id),
                decided.clone(),
                404,
            ),
            (
                format!("/operator/clients/{}/kyc-requests/x1/review", t.client_id),
                decided.clone(),
                400,
            ),
            (path.clone(), json!({"notes": "no decision"}), 400),
            (path.clone(), json!({"kycStatus": "Manually Approved", "extra": 1}), 400),
        ];
        for (p, body, status) in cases {
            let r = t.operator(Method::POST, &p, body.clone()).await;
            assert_eq!(r.status, status, "{p} {body} {:?}", r.json);
            assert!(r.json["error"].is_string());
        }
        assert!(hook.next(2).await.is_none(), "no webhook for rejected reviews");
        assert_eq!(
            (party(&t, &id).await, stored_request(&t, &id).await),
            before,
            "nothing written"
        );
    }
);

both!(review_fields_the_key_may_not_set_are_110, |t: TestApp| async move {
    let t = t.as_new_client().await;
    let mut hook = Listener::start(200).await;
    for m in ["updateKycAmlStatus", "updateKycAmlRequest"] {
        t.register_webhook(m, &[&hook.url]).await;
    }
    let id = create_party(&t).await;
    let request_id = manual_request(&t, &id).await;
    let path = format!("/operator/clients/{}/field-permissions", t.client_id);
    let r = t.operator(Method::PUT, &path, json!({"fields": ["partyId"]})).await;
    assert_eq!(r.status, 200, "{:?}", r.json);
    let before = (party(&t, &id).await, stored_request(&t, &id).await);
    let r = t
        .post(
            "updateKycAmlStatus",
            &[("partyId", &id), ("kycStatus", "Manually Approved")],
        )
        .await;
    assert_eq!((r.status, r.code()), (404, "110"), "{:?}", r.json);
    let r = t
        .post(
            "updateKycAmlRequest",
            &[("requestId", &request_id), ("requestStatus", "Closed")],
        )
        .await;
    assert_eq!((r.status, r.code()), (404, "110"), "{:?}", r.json);
    assert!(hook.next(2).await.is_none(), "no webhook for rejected calls");
    assert_eq!(
        (party(&t, &id).await, stored_request(&t, &id).await),
        before,
        "nothing written"
    );
});
