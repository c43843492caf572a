//! What clients written for the incumbent send and read (CONTRACT, "What clients written for
//! the incumbent rely on"): each case sends exactly what such a client sends.

use api_tests::{both, Listener, Resp, TestApp};
use bytes::Bytes;
use http::Method;

use crate::fixtures::*;
use crate::trades::{investor, offering, set_status};

/// A JSON body as a client writes it, byte for byte (`2e0` stays `2e0`).
async fn json_text(t: &TestApp, op: &str, body: String) -> Resp {
    let auth = t.creds().bearer();
    let headers = [("authorization", auth.as_str()), ("content-type", "application/json")];
    t.raw(Method::POST, &format!("/v3/{op}"), &headers, Ok(Bytes::from(body)))
        .await
}

/// A document of `len` bytes.
fn document(len: usize) -> Vec<u8> {
    let mut v = b"%PDF-1.4\n".to_vec();
    v.resize(len, b'x');
    v
}

both!(
    create_account_answers_the_one_record_in_an_array,
    |t: TestApp| async move {
        let r = t.put("createAccount", ACCOUNT).await;
        assert_eq!(r.code(), "101", "{:?}", r.json);
        let details = r.json["accountDetails"].as_array().expect("an array");
        assert_eq!(details.len(), 1, "{details:?}");
        let record = &details[0];
        for field in [
            "accountId",
            "kycStatus",
            "amlStatus",
            "accreditedStatus",
            "approvalStatus",
        ] {
            assert!(record.get(field).is_some(), "{field} in {record}");
        }
        // The client reads accountDetails[0].accountId and uses it.
        let id = r.json["accountDetails"][0]["accountId"].as_str().unwrap();
        let got = t.post("getAccount", &[("accountId", id)]).await;
        assert_eq!(got.code(), "101", "{:?}", got.json);
        assert_eq!(got.json["accountDetails"]["accountId"], id);
    }
);

both!(integral_json_numbers_are_integers, |t: TestApp| async move {
    let o = offering(&t, "100").await;
    let (a, _) = investor(&t).await;
    let body = |units: &str| {
        format!(r#"{{"accountId":"{a}","offeringId":"{o}","transactionType":"ACH","transactionUnits":{units}}}"#)
    };
    for units in ["2.0", "2e0"] {
        let r = json_text(&t, "createTrade", body(units)).await;
        assert_eq!(r.code(), "101", "{units}: {:?}", r.json);
        let id = r.inserted("purchaseDetails")["tradeId"].as_str().unwrap();
        let stored = shared::records::trade::load(t.store(), &t.client_id, id)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(stored.rec.units, 2, "{units}");
    }
    for units in ["2.5", "true", "\"+5\""] {
        let r = json_text(&t, "createTrade", body(units)).await;
        assert_eq!(r.code(), "106", "{units}: {:?}", r.json);
    }
    // Numeric IDs too (part 2 types offeringId and tradeId as integers).
    let trade = format!(r#"{{"accountId":"{a}","offeringId":"{o}","transactionType":"ACH","transactionUnits":1}}"#);
    let r = json_text(&t, "createTrade", trade).await;
    let id = r.inserted("purchaseDetails")["tradeId"].as_str().unwrap().to_owned();
    for (offering, trade) in [(format!("{o}.0"), format!("{id}e0")), (o.clone(), format!("{id}.00"))] {
        let body = format!(r#"{{"offeringId":{offering},"tradeId":{trade}}}"#);
        let r = json_text(&t, "getTradeStatus", body).await;
        assert_eq!(r.code(), "101", "{offering} {trade}: {:?}", r.json);
        assert_eq!(r.json["tradeDetails"].as_array().map(Vec::len), Some(1));
    }
    let r = json_text(&t, "getTradeStatus", format!(r#"{{"tradeId":{id}.5}}"#)).await;
    assert_eq!(r.code(), "106", "{:?}", r.json);
});

both!(kyc_statuses_sit_inside_kyc, |t: TestApp| async move {
    let party = create_party(&t).await;
    for op in ["performKycAml", "performKycAmlBasic"] {
        let r = t.post(op, &[("partyId", &party)]).await;
        assert_eq!(r.code(), "101", "{op}: {:?}", r.json);
        let kyc = &r.json["kyc"];
        assert_eq!(
            kyc.as_object().unwrap().keys().collect::<Vec<_>>(),
            ["response", "kycstatus", "amlstatus"],
            "{op}"
        );
        assert_eq!(
            (kyc["kycstatus"].as_str(), kyc["amlstatus"].as_str()),
            (Some("Pending"), Some("Auto Approved")),
            "{op}"
        );
        assert!(
            r.json.get("kycstatus").is_none() && r.json.get("amlstatus").is_none(),
            "{op}"
        );
    }
});

/// uploadAccountDocument of one file, `id.pdf`.
async fn upload(t: &TestApp, account: &str, bytes: &[u8]) -> Resp {
    t.multipart(
        "uploadAccountDocument",
        &[("accountId", account), ("documentTitle", "documentTitle0=ID")],
        &[("userfile0", "id.pdf", bytes)],
    )
    .await
}

both!(one_kb_is_1000_bytes, |t: TestApp| async move {
    let id = create_account(&t).await;
    let r = upload(&t, &id, &document(1000)).await;
    assert_eq!(r.code(), "101", "{:?}", r.json);
    let r = upload(&t, &id, &document(999)).await;
    assert_eq!(
        (r.code(), r.json["Error(s)"].as_str()),
        ("106", Some("Document File Size Must Be Greater Than 1 kb"))
    );
});

both!(
    quoted_titles_and_file_names_lose_their_quotes,
    |t: TestApp| async move {
        let id = create_account(&t).await;
        let deck = document(2000);
        let r = t
            .multipart(
                "uploadAccountDocument",
                &[
                    ("accountId", &id),
                    ("documentTitle", r#"documentTitle0="Pitch deck""#),
                    ("file_name", r#"filename0="deck.pdf""#),
                ],
                &[("userfile0", "deck.pdf", &deck)],
            )
            .await;
        assert_eq!(r.code(), "101", "{:?}", r.json);
        let r = t.post("getAccountDocument", &[("accountId", &id)]).await;
        let doc = &r.json["accountDocumentDetails"][0];
        assert_eq!(
            (doc["documentTitle"].as_str(), doc["documentFileName"].as_str()),
            (Some("Pitch deck"), Some("deck.pdf"))
        );
    }
);

both!(
    a_status_in_another_spelling_is_stored_as_sent,
    |t: TestApp| async move {
        let o = offering(&t, "100").await;
        let (a, _) = investor(&t).await;
        let r = t
            .post(
                "createTrade",
                &[
                    ("accountId", a.as_str()),
                    ("offeringId", o.as_str()),
                    ("transactionType", "ACH"),
                    ("transactionUnits", "3"),
                ],
            )
            .await;
        let id = r.inserted("purchaseDetails")["tradeId"].as_str().unwrap().to_owned();
        let mut hook = Listener::start(200).await;
        t.register_webhook("updateTradeStatus", &[&hook.url]).await;
        for s in ["FUNDED", "SETTLED", "UNWIND PENDING"] {
            assert_eq!(set_status(&t, &a, &id, s).await.code(), "101", "to {s}");
            assert!(hook.next(5).await.is_some(), "to {s}: webhook");
        }
        let r = set_status(&t, &a, &id, "UNWIND_PENDING").await;
        assert_eq!(r.code(), "101", "{:?}", r.json);
        assert_eq!(r.json["tradeDetails"][0]["orderStatus"], "UNWIND_PENDING");
        let r = t
            .post("getTrade", &[("accountId", a.as_str()), ("tradeId", id.as_str())])
            .await;
        assert_eq!(r.json["partyDetails"][0]["orderStatus"], "UNWIND_PENDING");
        assert!(hook.next(2).await.is_none(), "the status did not change: no webhook");
    }
);
