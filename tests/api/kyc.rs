//! KYC/AML: the sandbox provider's rules, status updates, webhooks at a real listener, the
//! error codes of every operation, and billing in production only.

use api_tests::{both, Creds, Listener, TestApp};
use http::Method;
use serde_json::{json, Value};
use shared::model::kyc::{BillingEntry, KycRecord};
use shared::providers::kyc::QUESTIONS;
use shared::records;
use shared::Environment;

use crate::fixtures::*;

fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
    v.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
}

async fn party_named(t: &TestApp, last: &str, extra: &[(&str, &str)]) -> String {
    let mut fields = with(PARTY, &[("lastName", last)]);
    fields.extend_from_slice(extra);
    let r = t.put("createParty", &fields).await;
    assert_eq!(r.code(), "101", "{:?}", r.json);
    r.inserted("partyDetails")["partyId"].as_str().unwrap().to_owned()
}

async fn party_record(t: &TestApp, id: &str) -> Value {
    t.get(&format!("/v3/parties/{id}")).await.json["party"].clone()
}

async fn entity_record(t: &TestApp, id: &str) -> Value {
    let r = t.post("getEntity", &[("partyId", id)]).await;
    r.json["entityDetails"][0].clone()
}

async fn kyc_response(t: &TestApp, id: &str, kind: &str) -> Value {
    let r = t.post("getKycAmlResponse", &[("partyId", id), ("type", kind)]).await;
    assert_eq!(r.code(), "101", "{:?}", r.json);
    r.json
}

/// The answers form: `right` correct answers first, the rest wrong.
fn answers(id: &str, id_number: &str, right: usize) -> Vec<(String, String)> {
    let mut out = vec![
        ("partyId".to_owned(), id.to_owned()),
        ("noOfqns".to_owned(), "5".to_owned()),
        ("idNumber".to_owned(), id_number.to_owned()),
    ];
    for (i, (qtype, _, choices)) in QUESTIONS.iter().enumerate() {
        out.push((format!("type{}", i + 1), (*qtype).to_owned()));
        let a = if i < right { choices[0] } else { choices[1] };
        out.push((format!("qns{}", i + 1), a.to_owned()));
    }
    out
}

fn refs(v: &[(String, String)]) -> Vec<(&str, &str)> {
    v.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect()
}

async fn perform(t: &TestApp, id: &str) -> String {
    let r = t.post("performKycAml", &[("partyId", id)]).await;
    assert_eq!(r.code(), "101", "{:?}", r.json);
    r.json["kyc"]["response"]["id-number"].as_str().unwrap().to_owned()
}

async fn other_client(t: &TestApp) -> Creds {
    t.new_client(json!({"scopes": ["*"]})).await
}

both!(perform_kyc_aml_gives_questions_and_fires, |t: TestApp| async move {
    let mut hook = Listener::start(200).await;
    t.register_webhook("performKycAml", &[&hook.url]).await;
    let id = party_named(&t, "Lee", &[]).await;
    let r = t.post("performKycAml", &[("partyId", &id)]).await;
    assert_eq!((r.status, r.code()), (200, "101"), "{:?}", r.json);
    let kyc = &r.json["kyc"];
    assert_eq!(
        kyc.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["response", "kycstatus", "amlstatus"]
    );
    assert_eq!(
        (kyc["kycstatus"].as_str(), kyc["amlstatus"].as_str()),
        (Some("Pending"), Some("Auto Approved"))
    );
    assert_eq!(r.json.get("kycstatus"), None, "inside kyc only");
    let resp = &kyc["response"];
    assert_eq!(resp["results"]["key"], "result.match");
    assert_eq!(resp["qualifiers"]["qualifier"][0]["message"], "SSN Not Provided");
    let qs = resp["questions"]["question"].as_array().unwrap();
    assert_eq!(qs.len(), 5);
    assert_eq!(qs[0]["type"], QUESTIONS[0].0);
    assert!(r.json.get("AML SCORE").is_none());
    let got = hook.next(5).await.expect("performKycAml webhook");
    assert_eq!(
        got.pairs(),
        pairs(&[
            ("partyId", &id),
            ("kycstatus", "Pending"),
            ("amlstatus", "Auto Approved")
        ])
    );
    let p = party_record(&t, &id).await;
    assert_eq!(
        (p["kycStatus"].as_str(), p["amlStatus"].as_str()),
        (Some("Pending"), Some("Auto Approved"))
    );
    assert_eq!(p["amlDate"].as_str().unwrap().len(), 10, "MM-DD-YYYY");
    // The retry baseline: createdAt and the report ID, read-only.
    let base = kyc_response(&t, &id, "Enhanced").await;
    assert_eq!(base["reportId"], resp["id-number"]);
    assert!(base["createdAt"].is_string());
    assert_eq!(base["kycamlDetails"]["kyc"]["response"]["id-number"], resp["id-number"]);
    assert_eq!(kyc_response(&t, &id, "Enhanced").await, base, "reading changes nothing");
    assert!(kyc_response(&t, &id, "basic").await["createdAt"].is_null());
});

both!(update_kyc_aml_passes_with_three_of_five, |t: TestApp| async move {
    let mut hook = Listener::start(200).await;
    t.register_webhook("updateKycAml", &[&hook.url]).await;
    let id = party_named(&t, "Lee", &[("socialSecurityNumber", "123-45-6789")]).await;
    let n = perform(&t, &id).await;
    let form = answers(&id, &n, 3);
    let r = t.put("updateKycAml", &refs(&form)).await;
    assert_eq!((r.status, r.code()), (200, "101"), "{:?}", r.json);
    assert_eq!(
        r.json["Financial investor details"],
        json!({"partyId": id, "kycStatus": "Auto Approved"})
    );
    let got = hook.next(5).await.expect("updateKycAml webhook");
    assert_eq!(got.pairs(), pairs(&[("partyId", &id), ("kycStatus", "Auto Approved")]));
    assert_eq!(party_record(&t, &id).await["kycStatus"], "Auto Approved");
    let g = t.post("getKycAml", &[("partyId", &id)]).await;
    assert_eq!(g.json["KYC Status"], "Auto Approved");
    assert_eq!(g.json["Party Status"]["PartyID"], id.as_str());
    assert_eq!(g.json["Party Status"]["AML status"], "Auto Approved");
    // The question set is used up.
    let r = t.put("updateKycAml", &refs(&form)).await;
    assert_eq!((r.status, r.code()), (404, "1404"));
});

both!(update_kyc_aml_wrong_answers_are_145, |t: TestApp| async move {
    let mut hook = Listener::start(200).await;
    t.register_webhook("updateKycAml", &[&hook.url]).await;
    let id = party_named(&t, "Lee", &[]).await;
    let n = perform(&t, &id).await;
    let r = t.put("updateKycAml", &refs(&answers(&id, &n, 2))).await;
    assert_eq!((r.status, r.code()), (200, "145"), "{:?}", r.json);
    assert!(r.desc().contains("2 of 5"), "{}", r.desc());
    assert_eq!(r.json["verificationResponse"]["result"], "Failed");
    assert_eq!(r.json["verificationResponse"]["message"], r.desc());
    assert!(hook.next(2).await.is_none());
    assert_eq!(party_record(&t, &id).await["kycStatus"], "Pending");
    // A failed set is used up: the right answers now reach the 404 path.
    let r = t.put("updateKycAml", &refs(&answers(&id, &n, 5))).await;
    assert_eq!((r.status, r.code()), (404, "1404"));
});

both!(
    update_kyc_aml_unknown_or_expired_id_number_is_404,
    |t: TestApp| async move {
        let id = party_named(&t, "Lee", &[]).await;
        let n = perform(&t, &id).await;
        let before = party_record(&t, &id).await;
        let r = t.put("updateKycAml", &refs(&answers(&id, "12345", 5))).await;
        assert_eq!((r.status, r.code()), (404, "1404"), "{:?}", r.json);
        // Expire the question set (as if 600 s had passed).
        let stored = records::load::<KycRecord>(t.store(), &t.client_id, &id)
            .await
            .unwrap()
            .unwrap();
        let mut rec = stored.rec.clone();
        rec.session.as_mut().unwrap().expires -= 601_000;
        t.store()
            .write(records::replace(&t.client_id, &stored, &rec).unwrap())
            .await
            .unwrap();
        let r = t.put("updateKycAml", &refs(&answers(&id, &n, 5))).await;
        assert_eq!((r.status, r.code()), (404, "1404"));
        assert_eq!(party_record(&t, &id).await, before, "nothing changed");
    }
);

both!(
    update_kyc_aml_parameters_are_106_and_parties_198,
    |t: TestApp| async move {
        let id = party_named(&t, "Lee", &[]).await;
        let n = perform(&t, &id).await;
        let good = answers(&id, &n, 5);
        let other = other_client(&t).await;
        let theirs = create_party_as(&t, &other).await;
        let cases: Vec<(Vec<(String, String)>, &str)> = vec![
            (good.iter().filter(|(k, _)| k != "qns4").cloned().collect(), "106"),
            (good.iter().filter(|(k, _)| k != "type1").cloned().collect(), "106"),
            (good.iter().filter(|(k, _)| k != "partyId").cloned().collect(), "106"),
            (
                good.iter()
                    .map(|(k, v)| {
                        if k == "idNumber" {
                            (k.clone(), "abc".into())
                        } else {
                            (k.clone(), v.clone())
                        }
                    })
                    .collect(),
                "106",
            ),
            (
                good.iter()
                    .map(|(k, v)| {
                        if k == "noOfqns" {
                            (k.clone(), "4".into())
                        } else {
                            (k.clone(), v.clone())
                        }
                    })
                    .collect(),
                "106",
            ),
            (
                good.iter()
                    .map(|(k, v)| {
                        if k == "partyId" {
                            (k.clone(), theirs.clone())
                        } else {
                            (k.clone(), v.clone())
                        }
                    })
                    .collect(),
                "198",
            ),
            (
                good.iter()
                    .map(|(k, v)| {
                        if k == "partyId" {
                            (k.clone(), "P999999999".into())
                        } else {
                            (k.clone(), v.clone())
                        }
                    })
                    .collect(),
                "198",
            ),
        ];
        for (form, code) in cases {
            let r = t.put("updateKycAml", &refs(&form)).await;
            assert_eq!((r.status, r.code()), (404, code), "{form:?} {:?}", r.json);
        }
        // None of them used up the question set.
        assert_eq!(t.put("updateKycAml", &refs(&good)).await.code(), "101");
    }
);

both!(watch_list_match_is_disapproved_with_101, |t: TestApp| async move {
    let mut hook = Listener::start(200).await;
    t.register_webhook("performAml", &[&hook.url]).await;
    let id = party_named(&t, "Watchlist", &[]).await;
    // A request field named as a result field is not sent: each name once, the service's.
    // A key-named request field goes masked (part 1, Conventions 8).
    let sent = [
        ("partyId", id.as_str()),
        ("field1", "x"),
        ("trade_developerAPIKey", "secret2"),
        ("amlStatus", "Auto Approved"),
        ("expected_id", "1"),
    ];
    let r = t.post("performAml", &sent).await;
    assert_eq!((r.status, r.code()), (200, "101"), "{:?}", r.json);
    assert_eq!(r.json["partyDetails"]["amlStatus"], "Disapproved");
    let report = r.json["partyDetails"]["response"]["id-number"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(r.json["partyDetails"]["response"]["results"]["key"], "result.match");
    let got = hook.next(5).await.expect("performAml webhook");
    assert_eq!(
        got.pairs(),
        pairs(&[
            ("partyId", &id),
            ("field1", "x"),
            ("trade_developerAPIKey", "XXXXXXXXXXXXXXX"),
            ("apiMethodName", "performAml"),
            ("tblFields", "amlStatus,amlDate"),
            ("devPerms", "1"),
            ("amlStatus", "Disapproved"),
            ("amlList", "OFAC SDN"),
            ("amlScore", "95"),
            ("expected_id", &report),
            ("verificationResponse", "Watch List Match"),
        ])
    );
    assert_eq!(party_record(&t, &id).await["amlStatus"], "Disapproved");
    assert_eq!(kyc_response(&t, &id, "AML Only").await["reportId"], report.as_str());
    let r = t.post("performKycAml", &[("partyId", &id)]).await;
    assert_eq!(r.code(), "101");
    assert_eq!(
        (r.json["kyc"]["kycstatus"].as_str(), r.json["kyc"]["amlstatus"].as_str()),
        (Some("Disapproved"), Some("Disapproved"))
    );
    assert!(r.json["kyc"]["response"].get("questions").is_none());
    let clean = party_named(&t, "Lee", &[]).await;
    let r = t.post("performAml", &[("partyId", &clean)]).await;
    assert_eq!(r.json["partyDetails"]["amlStatus"], "Auto Approved");
});

both!(basic_check_and_entities, |t: TestApp| async move {
    let mut hook = Listener::start(200).await;
    t.register_webhook("performKycAmlBasic", &[&hook.url]).await;
    let id = party_named(&t, "Lee", &[("socialSecurityNumber", "123456789")]).await;
    let r = t.post("performKycAmlBasic", &[("partyId", &id)]).await;
    assert_eq!(r.code(), "101", "{:?}", r.json);
    assert_eq!(r.json["kyc"]["kycstatus"], "Auto Approved");
    assert!(r.json["kyc"]["response"]["id-number"].is_string());
    assert!(r.json["kyc"]["response"].get("questions").is_none());
    assert_eq!(
        hook.next(5).await.expect("basic webhook").pairs(),
        pairs(&[
            ("partyId", &id),
            ("kycstatus", "Auto Approved"),
            ("amlstatus", "Auto Approved")
        ])
    );
    let e = t.put("createEntity", &with(ENTITY, &[("ein", "12-3456789")])).await;
    let eid = e.inserted("entityDetails")["partyId"].as_str().unwrap().to_owned();
    let r = t.post("performKycAml", &[("partyId", &eid)]).await;
    assert_eq!(r.code(), "101", "{:?}", r.json);
    assert!(r.json.get("kyc").is_none());
    assert_eq!(r.json["AML SCORE"], json!(0));
    assert_eq!(r.json["kycstatus"], "Auto Approved");
    let rec = entity_record(&t, &eid).await;
    assert_eq!(
        (rec["KYCstatus"].as_str(), rec["AMLstatus"].as_str()),
        (Some("Auto Approved"), Some("Auto Approved"))
    );
    let e = t
        .put("createEntity", &with(ENTITY, &[("entityName", "Sanctioned Corp")]))
        .await;
    let bad = e.inserted("entityDetails")["partyId"].as_str().unwrap().to_owned();
    let r = t.post("performKycAmlBasic", &[("partyId", &bad)]).await;
    assert_eq!(r.code(), "101");
    assert_eq!(r.json["AML SCORE"], json!({"OFAC": 95}));
    assert_eq!(r.json["amlstatus"], "Disapproved");
    let g = t.post("getKycAml", &[("partyId", &bad)]).await;
    assert_eq!(g.json["Party Status"]["AML status"], "Disapproved");
});

both!(errors_are_106_and_198_and_change_nothing, |t: TestApp| async move {
    let mut hook = Listener::start(200).await;
    for m in ["performKycAml", "performKycAmlBasic", "performAml"] {
        t.register_webhook(m, &[&hook.url]).await;
    }
    let other = other_client(&t).await;
    let theirs = create_party_as(&t, &other).await;
    let gone = party_named(&t, "Lee", &[]).await;
    assert_eq!(t.post("deleteParty", &[("partyId", &gone)]).await.code(), "101");
    let ops = [
        "performKycAml",
        "performKycAmlBasic",
        "performAml",
        "getKycAml",
        "deleteKycAml",
    ];
    for op in ops {
        let r = t.post(op, &[]).await;
        assert_eq!((r.status, r.code()), (404, "106"), "{op}");
        for id in [theirs.as_str(), gone.as_str(), "P9999999", "E9999999", "junk"] {
            let r = t.post(op, &[("partyId", id)]).await;
            assert_eq!((r.status, r.code()), (404, "198"), "{op} {id}");
        }
    }
    let r = t
        .post("getKycAmlResponse", &[("partyId", &theirs), ("type", "Basic")])
        .await;
    assert_eq!(r.code(), "198");
    let r = t
        .post("getKycAmlResponse", &[("partyId", &gone), ("type", "Nope")])
        .await;
    assert_eq!(r.code(), "106");
    let r = t.post("getKycAmlResponse", &[("partyId", &gone)]).await;
    assert_eq!(r.code(), "106");
    assert!(hook.next(2).await.is_none(), "no webhook for rejected calls");
    let r = t
        .form_as(&other, Method::POST, "getParty", &[("partyId", &theirs)])
        .await;
    assert_eq!(
        r.json["partyDetails"][0]["kycStatus"], "",
        "the other client's party untouched"
    );
    assert!(records::load::<KycRecord>(t.store(), &t.client_id, &gone)
        .await
        .unwrap()
        .is_none());
});

both!(request_kyc_aml_once_per_investor, |t: TestApp| async move {
    let id = party_named(&t, "Lee", &[]).await;
    let account = create_account(&t).await;
    let r = t.post("requestKycAml", &[("investorId", &id)]).await;
    assert_eq!(r.code(), "101", "{:?}", r.json);
    assert_eq!(r.json["requestDetails"][0]["investorId"], id.as_str());
    assert!(r.json["requestDetails"][0]["requestId"].is_string());
    let r = t.post("requestKycAml", &[("investorId", &id)]).await;
    assert_eq!((r.status, r.code()), (400, "1400"));
    assert_eq!(t.post("requestKycAml", &[("investorId", &account)]).await.code(), "101");
    assert_eq!(
        t.post("requestKycAml", &[("investorId", "A9999999")]).await.code(),
        "148"
    );
    assert_eq!(
        t.post("requestKycAml", &[("investorId", "P9999999")]).await.code(),
        "198"
    );
    assert_eq!(t.post("requestKycAml", &[]).await.code(), "106");
});

both!(delete_kyc_aml_hides_the_responses, |t: TestApp| async move {
    let id = party_named(&t, "Lee", &[]).await;
    let n = perform(&t, &id).await;
    let mut deleted = crate::fixtures::hook(&t, "deleteKycAml").await;
    let r = t.post("deleteKycAml", &[("partyId", &id)]).await;
    assert_eq!(r.code(), "101", "{:?}", r.json);
    let sent = deleted.next(5).await.expect("deleteKycAml webhook").pairs();
    assert_eq!(sent, [("partyId".to_owned(), id.clone())]);
    assert!(kyc_response(&t, &id, "Enhanced").await["createdAt"].is_null());
    let r = t.put("updateKycAml", &refs(&answers(&id, &n, 5))).await;
    assert_eq!(r.code(), "1404", "the question set went with it");
    assert_eq!(
        t.post("deleteKycAml", &[("partyId", &id)]).await.code(),
        "101",
        "replay"
    );
    assert_eq!(party_record(&t, &id).await["kycStatus"], "Pending", "statuses stay");
    // A new check revives the record.
    perform(&t, &id).await;
    assert!(kyc_response(&t, &id, "Enhanced").await["createdAt"].is_string());
});

both!(billing_only_in_production, |t: TestApp| async move {
    let id = party_named(&t, "Lee", &[]).await;
    perform(&t, &id).await;
    assert_eq!(t.post("performAml", &[("partyId", &id)]).await.code(), "101");
    assert_eq!(
        records::count::<BillingEntry>(t.store(), &t.client_id, true)
            .await
            .unwrap(),
        0
    );
    let prod = TestApp::with_env(t.backend, Environment::Production).await;
    let id = party_named(&prod, "Lee", &[]).await;
    for op in ["performKycAml", "performKycAmlBasic", "performAml"] {
        assert_eq!(prod.post(op, &[("partyId", &id)]).await.code(), "101");
    }
    assert_eq!(prod.post("requestKycAml", &[("investorId", &id)]).await.code(), "101");
    assert_eq!(
        prod.post("getKycAmlResponse", &[("partyId", &id), ("type", "Basic")])
            .await
            .code(),
        "101"
    );
    assert_eq!(prod.post("getKycAml", &[("partyId", &id)]).await.code(), "101");
    assert_eq!(
        records::count::<BillingEntry>(prod.store(), &prod.client_id, true)
            .await
            .unwrap(),
        4
    );
});
