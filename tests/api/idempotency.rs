//! Idempotency keys (beyond the spec, opt-in): the first answer to a key replays to every
//! retry of the same request for 24 hours, running nothing again (no write, no webhook); the
//! same key with another request is 422 `1422`; a twin still running is 409 `1409`. Each
//! case runs on both backends.

use api_tests::{both, Creds, Resp, TestApp};
use bytes::Bytes;
use http::Method;
use serde_json::json;

use crate::fixtures::{code, hook, PARTY};

async fn create_party_with_key(t: &TestApp, creds: &Creds, key: &str, pairs: &[(&str, &str)]) -> Resp {
    let body = serde_urlencoded::to_string(pairs).unwrap();
    let auth = creds.bearer();
    let headers = [
        ("authorization", auth.as_str()),
        ("content-type", "application/x-www-form-urlencoded"),
        ("idempotency-key", key),
    ];
    t.raw(Method::PUT, "/v3/createParty", &headers, Ok(Bytes::from(body)))
        .await
}

fn party_id(r: &Resp) -> String {
    r.inserted("partyDetails")["partyId"].as_str().unwrap().to_owned()
}

both!(
    a_retry_replays_the_first_answer_and_runs_nothing,
    |t: TestApp| async move {
        let mut created = hook(&t, "createParty").await;
        let first = create_party_with_key(&t, &t.creds(), "order-42", PARTY).await;
        code(&first, "101");
        assert!(first.headers.get("idempotent-replayed").is_none());
        created.next(5).await.expect("the first run's webhook");
        for _ in 0..3 {
            let again = create_party_with_key(&t, &t.creds(), "order-42", PARTY).await;
            assert_eq!(
                (again.status, &again.json),
                (first.status, &first.json),
                "the same answer"
            );
            assert_eq!(again.headers["idempotent-replayed"], "true");
        }
        assert!(created.next(1).await.is_none(), "a replay fires no webhook");
        let r = t.get("/v3/parties").await;
        assert_eq!(r.json["pagination"]["totalRecords"], 1, "one party: {:?}", r.json);

        // The same key with another request: 422, and nothing runs.
        let other = [PARTY, &[("occupation", "Pilot")][..]].concat();
        let r = create_party_with_key(&t, &t.creds(), "order-42", &other).await;
        assert_eq!((r.status, r.code()), (422, "1422"), "{:?}", r.json);
        assert_eq!(t.get("/v3/parties").await.json["pagination"]["totalRecords"], 1);

        // Keys are the client's own; without a key nothing is remembered.
        let c = t.new_client(json!({"scopes": ["*"]})).await;
        code(&create_party_with_key(&t, &c, "order-42", PARTY).await, "101");
        let plain = t.put("createParty", PARTY).await;
        assert_ne!(party_id(&plain), party_id(&first));

        // After 24 hours the key is free again.
        t.clock.set(chrono::Utc::now() + chrono::Duration::hours(25));
        let later = create_party_with_key(&t, &t.creds(), "order-42", &other).await;
        code(&later, "101");
        assert_ne!(party_id(&later), party_id(&first));
    }
);

both!(twins_run_once_and_the_others_wait_or_replay, |t: TestApp| async move {
    let mut created = hook(&t, "createParty").await;
    let calls = (0..8).map(|_| {
        let t = &t;
        async move { create_party_with_key(t, &t.creds(), "twins", PARTY).await }
    });
    let answers = futures_util::future::join_all(calls).await;
    let ok: Vec<&Resp> = answers.iter().filter(|r| r.code() == "101").collect();
    for r in &answers {
        assert!(
            r.code() == "101" || (r.status, r.code()) == (409, "1409"),
            "{:?}",
            r.json
        );
    }
    assert!(!ok.is_empty());
    assert!(ok.iter().all(|r| r.json == ok[0].json), "one answer");
    created.next(5).await.expect("one run's webhook");
    assert!(created.next(1).await.is_none(), "one webhook in all");
    assert_eq!(t.get("/v3/parties").await.json["pagination"]["totalRecords"], 1);
});

both!(refusals_replay_too_and_bad_keys_are_106, |t: TestApp| async move {
    let missing = [("firstName", "Ada")];
    let r = create_party_with_key(&t, &t.creds(), "refused", &missing).await;
    code(&r, "106");
    let again = create_party_with_key(&t, &t.creds(), "refused", &missing).await;
    assert_eq!(again.json, r.json);
    assert_eq!(again.headers["idempotent-replayed"], "true");
    let long = "k".repeat(256);
    code(&create_party_with_key(&t, &t.creds(), &long, PARTY).await, "106");
    // Reads by GET take no key.
    let auth = t.creds().bearer();
    let r = t
        .raw(
            Method::GET,
            "/v3/parties",
            &[("authorization", &auth), ("idempotency-key", "read")],
            Ok(Bytes::new()),
        )
        .await;
    assert!(r.headers.get("idempotent-replayed").is_none());
});

both!(
    a_claim_its_process_never_finished_says_so_and_runs_nothing,
    |t: TestApp| async move {
        // A process stopped while running the first request: its claim stands, unanswered.
        let body = serde_urlencoded::to_string(PARTY).unwrap();
        let fp = shared::http::idempotency::fingerprint(&Method::PUT, "/v3/createParty", None, body.as_bytes());
        let now = chrono::Utc::now().timestamp();
        let claimed = shared::http::idempotency::claim(t.store(), &t.client_id, "lost-1", &fp, now).await;
        assert!(claimed.is_ok());
        let r = create_party_with_key(&t, &t.creds(), "lost-1", PARTY).await;
        assert_eq!((r.status, r.code()), (409, "1409"));
        assert!(r.desc().contains("still being processed"), "{:?}", r.json);
        // Past any request's time, it says the first run never finished, and still runs nothing.
        t.clock.set(chrono::Utc::now() + chrono::Duration::seconds(91));
        let r = create_party_with_key(&t, &t.creds(), "lost-1", PARTY).await;
        assert_eq!((r.status, r.code()), (409, "1409"));
        assert!(r.desc().contains("never finished"), "{:?}", r.json);
        assert_eq!(t.get("/v3/parties").await.code(), "239", "nothing ran");
    }
);

/// `request` sent as `creds` with an `Idempotency-Key`.
async fn keyed(t: &TestApp, method: Method, uri: &str, key: &str, content_type: &str, body: Bytes) -> Resp {
    let auth = t.creds().bearer();
    let headers = [
        ("authorization", auth.as_str()),
        ("content-type", content_type),
        ("idempotency-key", key),
    ];
    t.raw(method, uri, &headers, Ok(body)).await
}

both!(
    a_key_holds_for_writes_by_get_and_for_uploads_sent_again,
    |t: TestApp| async move {
        // A method-style operation writes whatever its verb: a GET keeps its key too.
        let uri = format!("/v3/createParty?{}", serde_urlencoded::to_string(PARTY).unwrap());
        let first = keyed(&t, Method::GET, &uri, "by-get", "text/plain", Bytes::new()).await;
        code(&first, "101");
        let again = keyed(&t, Method::GET, &uri, "by-get", "text/plain", Bytes::new()).await;
        assert_eq!(again.json, first.json);
        assert_eq!(again.headers["idempotent-replayed"], "true");
        assert_eq!(t.get("/v3/parties").await.json["pagination"]["totalRecords"], 1);

        // An upload sent again carries a new multipart boundary: the same parts replay.
        let party = party_id(&first);
        let file = vec![b'a'; 2048];
        let fields = [
            ("partyId", party.as_str()),
            ("documentTitle", "documentTitle0=Passport"),
        ];
        let (content_type, body) = api_tests::multipart_body(&fields, &[("userfile0", "id.txt", &file)]);
        let uri = "/v3/uploadPartyDocument";
        let first = keyed(&t, Method::POST, uri, "upload-1", &content_type, body.clone()).await;
        code(&first, "101");
        let boundary = content_type.rsplit('=').next().unwrap().to_owned();
        let renamed = |b: &Bytes| Bytes::from(String::from_utf8_lossy(b).replace(&boundary, "another-boundary-42"));
        let other_type = content_type.replace(&boundary, "another-boundary-42");
        let again = keyed(&t, Method::POST, uri, "upload-1", &other_type, renamed(&body)).await;
        assert_eq!(again.json, first.json, "{:?}", again.json);
        assert_eq!(again.headers["idempotent-replayed"], "true");
        let r = t.post("getPartyDocument", &[("partyId", &party)]).await;
        assert_eq!(
            r.json["partyDocumentDetails"].as_array().map(Vec::len),
            Some(1),
            "one document: {:?}",
            r.json
        );
        // Other parts are another request.
        let (ct, changed) = api_tests::multipart_body(&fields, &[("userfile0", "id.txt", &vec![b'b'; 2048])]);
        let r = keyed(&t, Method::POST, uri, "upload-1", &ct, changed).await;
        assert_eq!((r.status, r.code()), (422, "1422"));
    }
);

both!(an_answer_too_large_to_keep_releases_its_key, |t: TestApp| async move {
    // Two accounts of about 250 kB each: a list of both is larger than any record.
    let notes = "n".repeat(250_000);
    for _ in 0..2 {
        let account = [crate::fixtures::ACCOUNT, &[("notes", notes.as_str())][..]].concat();
        code(&t.put("createAccount", &account).await, "101");
    }
    let list = || {
        keyed(
            &t,
            Method::POST,
            "/v3/getAllAccounts",
            "big-list",
            "application/x-www-form-urlencoded",
            Bytes::new(),
        )
    };
    let first = list().await;
    code(&first, "101");
    assert!(first.json.to_string().len() > 400_000);
    // Not kept, so not replayed: the retry runs again, never a 409.
    let again = list().await;
    code(&again, "101");
    assert!(again.headers.get("idempotent-replayed").is_none());
});
