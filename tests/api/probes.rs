//! Regression tests of the failures found by probing the local API (issue 11), each the
//! probe that found it. Those that need real HTTP (body limits, timeouts) are in
//! `functions/local/tests/local_api.rs`.

use api_tests::{both, TestApp};
use bytes::Bytes;
use http::Method;
use serde_json::json;

use crate::fixtures::*;

fn form_bytes(pairs: &[(&str, &str)]) -> Bytes {
    Bytes::from(serde_urlencoded::to_string(pairs).unwrap())
}

const FORM: (&str, &str) = ("content-type", "application/x-www-form-urlencoded");

both!(
    a_nul_byte_in_a_client_id_is_103_and_in_a_parameter_106,
    |t: TestApp| async move {
        let r = t
            .raw(
                Method::POST,
                "/v3/getParty",
                &[FORM],
                Ok(Bytes::from_static(b"clientID=a%00b&developerAPIKey=x&partyId=P1")),
            )
            .await;
        assert_eq!((r.status, r.code()), (404, "103"), "{:?}", r.json);
        let r = t.post("getParty", &[("partyId", "P1\0")]).await;
        assert_eq!((r.status, r.code()), (404, "106"), "{:?}", r.json);
        let r = t.put("createParty", &with(PARTY, &[("firstName", "A\0n")])).await;
        assert_eq!(r.code(), "106", "{:?}", r.json);
        let r = t.get("/v3/parties?limit=5&partyId=P%001").await;
        assert_ne!(r.status, 500, "{:?}", r.json);
    }
);

both!(credentials_in_the_query_string_are_not_taken, |t: TestApp| async move {
    let creds = t.creds();
    let uri = format!("/v3/createParty?clientID={}&developerAPIKey={}", creds.id, creds.key);
    let r = t.raw(Method::POST, &uri, &[FORM], Ok(form_bytes(PARTY))).await;
    assert_eq!(r.code(), "103", "{:?}", r.json);
    let mut body = PARTY.to_vec();
    body.extend([("clientID", creds.id.as_str()), ("developerAPIKey", creds.key.as_str())]);
    let r = t
        .raw(Method::POST, "/v3/createParty", &[FORM], Ok(form_bytes(&body)))
        .await;
    assert_eq!(r.code(), "101", "the body still carries credentials: {:?}", r.json);
});

both!(ping_and_status_apply_the_ip_allowlist, |t: TestApp| async move {
    let fenced = t.new_client(json!({"ipAllowlist": ["10.0.0.0/8"]})).await;
    let auth = fenced.bearer();
    for uri in ["/v3/ping", "/v3/status"] {
        let r = t.get_as(&fenced, uri).await;
        assert_eq!(r.code(), "111", "{uri} from a blocked address: {:?}", r.json);
        let r = t
            .raw_from(
                Method::GET,
                uri,
                &[("authorization", &auth)],
                Ok(Bytes::new()),
                "10.9.8.7".parse().unwrap(),
            )
            .await;
        assert_eq!(r.code(), "101", "{uri} from an allowed address");
    }
});

both!(the_method_allowlist_names_methods_exactly, |t: TestApp| async move {
    let a = create_account(&t).await;
    let c = t.new_client(json!({"methods": ["updateAccountArchivestatus"]})).await;
    let pairs = [("accountId", a.as_str()), ("archiveStatus", "1")];
    let r = t.form_as(&c, Method::POST, "updateAccountArchiveStatus", &pairs).await;
    assert_eq!(r.code(), "111", "another alias than the one listed: {:?}", r.json);
    // Case-sensitive: another spelling of the listed name routes, but is not the name listed.
    let r = t.form_as(&c, Method::POST, "UPDATEACCOUNTARCHIVESTATUS", &pairs).await;
    assert_eq!(r.code(), "111", "another casing: {:?}", r.json);
    let r = t.form_as(&c, Method::POST, "updateAccountArchivestatus", &pairs).await;
    assert_eq!(
        r.code(),
        "148",
        "past the allow-list (to another client's account): {:?}",
        r.json
    );
});

both!(a_new_dev_key_revokes_the_old_one, |t: TestApp| async move {
    let old = t.creds();
    t.app.ensure_dev_client(&old.id, "a-new-dev-key").await.unwrap();
    t.app.clients.invalidate(&old.id);
    let r = t.get_as(&old, "/v3/parties?limit=1").await;
    assert_eq!(r.code(), "103", "the old key: {:?}", r.json);
    let new = api_tests::Creds {
        id: old.id.clone(),
        key: "a-new-dev-key".into(),
    };
    assert_eq!(t.get_as(&new, "/v3/ping").await.code(), "101");
});

both!(concurrent_webhook_tokens_all_survive, |t: TestApp| async move {
    let path = format!("/operator/clients/{}/webhook-tokens", t.client_id);
    let calls = (0..20).map(|_| t.operator(Method::POST, &path, json!({})));
    let tokens: Vec<String> = futures_util::future::join_all(calls)
        .await
        .into_iter()
        .map(|r| {
            assert_eq!(r.status, 201, "{:?}", r.json);
            r.json["token"].as_str().unwrap().to_owned()
        })
        .collect();
    let kept = shared::webhooks::load_tokens(t.store(), &t.client_id).await.unwrap();
    for token in &tokens {
        assert!(kept.contains(token), "token lost");
    }
    assert_eq!(kept.len(), 20);
});

both!(loose_units_and_dates_are_106, |t: TestApp| async move {
    let r = t.put("createIssuer", ISSUER).await;
    let issuer = r.inserted("issuerDetails")["issuerId"].as_str().unwrap().to_owned();
    let r = t
        .put("createOffering", &with(OFFERING, &[("issuerId", issuer.as_str())]))
        .await;
    let offering = r.inserted("offeringDetails")["offeringId"].as_str().unwrap().to_owned();
    let account = create_account(&t).await;
    let party = create_party(&t).await;
    assert_eq!(link(&t, &account, "IndivACParty", &party, "1").await.code(), "101");
    let body = json!({
        "accountId": account, "offeringId": offering, "transactionType": "ACH", "transactionUnits": true
    });
    let r = t.json_as(&t.creds(), Method::POST, "/v3/createTrade", &body).await;
    assert_eq!(r.code(), "106", "true is not one unit: {:?}", r.json);
    let trade = |units: &'static str| {
        vec![
            ("accountId", account.as_str()),
            ("offeringId", offering.as_str()),
            ("transactionType", "ACH"),
            ("transactionUnits", units),
        ]
    };
    assert_eq!(t.post("createTrade", &trade("+5")).await.code(), "106");
    assert_eq!(t.post("createTrade", &trade("5")).await.code(), "101");

    for dob in ["1-2-1980", "01-2-1980", "1980-1-02", "01-02-80"] {
        let r = t.put("createParty", &with(PARTY, &[("dob", dob)])).await;
        assert_eq!(r.code(), "106", "dob {dob}: {:?}", r.json);
    }
    assert_eq!(
        t.put("createParty", &with(PARTY, &[("dob", "01-02-1980")]))
            .await
            .code(),
        "101"
    );
});
