//! Custody: the agreement on file (an attested document fetched once, or an agreement
//! e-signed through the sandbox), custody account requests under their four names with the
//! webhook fan-out, the operator's review and the daily processing, the custody account and
//! its positions, supplements, custody fund moves through the ACH batch and the bank, and
//! disbursements that never overdraw. Webhooks are checked at a real listener; every
//! refusal writes nothing. Each case runs on both backends.

use api_tests::{both, Creds, Listener, Resp, TestApp};
use http::Method;
use serde_json::{json, Value};

use crate::fixtures::{code, hook};
use crate::trades::investor;

const ROUTING: &str = "021000021";

async fn attest(t: &TestApp, account: &str, url: &str) -> Resp {
    t.post(
        "createCustodyAgreementAttestation",
        &[("accountId", account), ("isAttested", "true"), ("documentUrl", url)],
    )
    .await
}

/// An investor whose custody agreement is attested: (accountId, partyId).
async fn attested(t: &TestApp, doc: &Listener) -> (String, String) {
    let (a, p) = investor(t).await;
    code(&attest(t, &a, &doc.url).await, "101");
    (a, p)
}

/// A new custody request of `account`: its ID.
async fn request(t: &TestApp, account: &str) -> String {
    let r = t.post("createCustodyAccountRequest", &[("accountId", account)]).await;
    code(&r, "101");
    r.json["custodialAccountDetails"][0]["custAccRequestID"]
        .as_str()
        .unwrap()
        .to_owned()
}

async fn review(t: &TestApp, id: &str, status: &str) -> Resp {
    let path = format!("/operator/clients/{}/custody-requests/{id}/review", t.client_id);
    t.operator(Method::POST, &path, json!({"status": status, "notes": "checked"}))
        .await
}

/// An account with an approved custody account and an external account nicknamed
/// `nickname`.
async fn custody_open(t: &TestApp, doc: &Listener, nickname: &str) -> String {
    let (a, _) = attested(t, doc).await;
    let id = request(t, &a).await;
    assert_eq!(review(t, &id, "Approved").await.status, 200);
    let ext = [
        ("types", "Account"),
        ("accountId", a.as_str()),
        ("ExtAccountfullname", "Ada Stone"),
        ("Extnickname", nickname),
        ("ExtRoutingnumber", ROUTING),
        ("ExtAccountnumber", "000123456789"),
        ("ExtBankname", "First Bank"),
    ];
    code(&t.post("createExternalAccount", &ext).await, "101");
    a
}

both!(
    an_attestation_needs_a_document_that_answers_200_directly,
    |t: TestApp| async move {
        let mut doc = Listener::start(200).await;
        let (a, _) = investor(&t).await;
        // Parameters first, then the account, then the attestation's own rules.
        code(
            &t.post(
                "createCustodyAgreementAttestation",
                &[("accountId", &a), ("isAttested", "true")],
            )
            .await,
            "106",
        );
        code(
            &t.post(
                "createCustodyAgreementAttestation",
                &[("accountId", &a), ("documentUrl", &doc.url)],
            )
            .await,
            "106",
        );
        code(&attest(&t, "A9999999", &doc.url).await, "148");
        let r = t
            .post(
                "createCustodyAgreementAttestation",
                &[("accountId", &a), ("isAttested", "false"), ("documentUrl", &doc.url)],
            )
            .await;
        assert_eq!((r.status, r.code()), (422, "1422"), "{:?}", r.json);
        let not_found = Listener::start(404).await;
        let redirect = Listener::start(302).await;
        let stalled = Listener::start(200).await;
        stalled.set_stalled(true);
        for url in [
            not_found.url.as_str(),
            redirect.url.as_str(),
            "not a url",
            "ftp://127.0.0.1/agreement.pdf",
            stalled.url.as_str(),
        ] {
            let r = attest(&t, &a, url).await;
            assert_eq!((r.status, r.code()), (422, "1422"), "{url}: {:?}", r.json);
        }
        assert!(doc.next(0).await.is_none(), "refused before any fetch of the good URL");
        let r = t.post("createCustodyAccountRequest", &[("accountId", &a)]).await;
        assert_eq!(
            (r.status, r.code()),
            (422, "1422"),
            "nothing on file after the refusals"
        );

        let r = attest(&t, &a, &doc.url).await;
        code(&r, "101");
        let got = r.json["attestation"].clone();
        assert_eq!(
            got.as_object().unwrap().keys().collect::<Vec<_>>(),
            ["accountId", "isAttested", "documentUrl", "createdDate"]
        );
        assert_eq!(
            (got["accountId"].as_str(), got["isAttested"].as_i64()),
            (Some(a.as_str()), Some(1))
        );
        assert_eq!(got["documentUrl"], doc.url.as_str());
        let fetched = doc.next(5).await.expect("the document fetched");
        assert_eq!(fetched.method, Method::GET);
        assert!(doc.next(1).await.is_none(), "fetched once");
        // `1` is not `true`; JSON bodies take a boolean.
        let r = t
            .post(
                "createCustodyAgreementAttestation",
                &[("accountId", &a), ("isAttested", "1"), ("documentUrl", &doc.url)],
            )
            .await;
        assert_eq!((r.status, r.code()), (422, "1422"), "{:?}", r.json);
        let r = t
            .json_as(
                &t.creds(),
                Method::POST,
                "/v3/createCustodyAgreementAttestation",
                &json!({"accountId": a, "isAttested": true, "documentUrl": doc.url}),
            )
            .await;
        code(&r, "101");

        // In production a refusal tells nothing of the network: an internal address and a
        // name that does not resolve read the same.
        let prod = TestApp::with_env(t.backend, shared::Environment::Production).await;
        let (a, _) = investor(&prod).await;
        let mut said = Vec::new();
        for url in ["https://127.0.0.1/a.pdf", "https://no-such-host.invalid/a.pdf"] {
            let r = attest(&prod, &a, url).await;
            assert_eq!((r.status, r.code()), (422, "1422"), "{url}: {:?}", r.json);
            said.push(r.desc().to_owned());
        }
        assert_eq!(said[0], said[1]);
        assert!(
            !said[0].contains("127.0.0.1") && !said[0].contains("resolve"),
            "{}",
            said[0]
        );
    }
);

both!(
    custody_requests_move_through_their_table_and_fan_out,
    |t: TestApp| async move {
        let doc = Listener::start(200).await;
        let mut created = hook(&t, "createCustodyAccountRequest").await;
        let mut old_create = hook(&t, "requestCustodialAccount").await;
        let mut updates = Vec::new();
        for name in [
            "updateCustodyAccountRequest",
            "updateCustodialAccountRequest",
            "approveCustodyAccountRequest",
            "approveCustodialAccountRequest",
        ] {
            updates.push(hook(&t, name).await);
        }
        let (a, _) = attested(&t, &doc).await;
        code(&t.post("createCustodyAccountRequest", &[]).await, "106");
        code(
            &t.post("createCustodyAccountRequest", &[("accountId", "A9999999")])
                .await,
            "148",
        );
        let r = t.post("createCustodyAccountRequest", &[("accountId", &a)]).await;
        code(&r, "101");
        let d = r.json["custodialAccountDetails"].clone();
        assert_eq!(d.as_array().unwrap().len(), 1);
        let id = d[0]["custAccRequestID"].as_str().unwrap().to_owned();
        assert_eq!(
            d[0].as_object().unwrap().keys().collect::<Vec<_>>(),
            [
                "accountId",
                "custAccStatus",
                "accountStatus",
                "custAccRequestID",
                "createdDate",
                "approvalStatus"
            ]
        );
        assert_eq!(
            (d[0]["custAccStatus"].as_str(), d[0]["accountStatus"].as_str()),
            (Some("Pending"), Some("Pending"))
        );
        assert!(id.parse::<u64>().unwrap() >= 100_000);
        let event = |status: &str, account: &str| {
            vec![
                ("accountId".to_owned(), account.to_owned()),
                ("custAccRequestID".to_owned(), id.clone()),
                ("custAccStatus".to_owned(), status.to_owned()),
                (
                    "accountStatus".to_owned(),
                    if status == "Approved" { "Open" } else { "Pending" }.to_owned(),
                ),
            ]
        };
        assert_eq!(
            created.next(5).await.expect("createCustodyAccountRequest").pairs(),
            event("Pending", &a)
        );
        assert!(
            old_create.next(1).await.is_none(),
            "the current name fires the current name"
        );
        code(
            &t.post("createCustodyAccountRequest", &[("accountId", &a)]).await,
            "227",
        );
        code(&t.post("requestCustodialAccount", &[("accountId", &a)]).await, "227");

        // Client updates: parameters, the ID, then the table.
        let update = |id: &str, status: &str| {
            vec![
                ("custAccRequestID".to_owned(), id.to_owned()),
                ("custAccRequestStatus".to_owned(), status.to_owned()),
            ]
        };
        let send = |name: &'static str, form: Vec<(String, String)>| {
            let t = &t;
            async move {
                let refs: Vec<(&str, &str)> = form.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
                t.post(name, &refs).await
            }
        };
        code(
            &t.post("updateCustodyAccountRequest", &[("custAccRequestID", &id)])
                .await,
            "106",
        );
        code(
            &send("updateCustodyAccountRequest", update(&id, "Approved")).await,
            "106",
        );
        code(
            &send("updateCustodyAccountRequest", update("99999999", "Pending")).await,
            "228",
        );
        code(
            &send("updateCustodyAccountRequest", update("abc", "Pending")).await,
            "228",
        );
        code(
            &send("approveCustodyAccountRequest", update("99999999", "Pending")).await,
            "228",
        );
        code(
            &send("updateCustodyAccountRequest", update(&id, "New Info Added")).await,
            "106",
        );
        for l in updates.iter_mut() {
            assert!(l.next(0).await.is_none(), "refusals fire nothing");
        }

        // The operator asks for more; the client adds it under an older name; every change
        // reaches all four names.
        let r = review(&t, &id, "Need More Info").await;
        assert_eq!(
            (r.status, r.json["custAccStatus"].as_str()),
            (200, Some("Need More Info")),
            "{:?}",
            r.json
        );
        for l in updates.iter_mut() {
            assert_eq!(
                l.next(5).await.expect("a status change").pairs(),
                event("Need More Info", &a)
            );
        }
        assert_eq!(review(&t, &id, "Approved").await.status, 409, "not awaiting review");
        let r = send("approveCustodialAccountRequest", update(&id, "new info added")).await;
        code(&r, "101");
        assert_eq!(
            r.json["custodialAccountDetails"][0]
                .as_object()
                .unwrap()
                .keys()
                .collect::<Vec<_>>(),
            [
                "accountId",
                "custAccStatus",
                "accountStatus",
                "custAccRequestID",
                "createdDate"
            ]
        );
        assert_eq!(r.json["custodialAccountDetails"][0]["custAccStatus"], "New Info Added");
        for l in updates.iter_mut() {
            assert_eq!(
                l.next(5).await.expect("a status change").pairs(),
                event("New Info Added", &a)
            );
        }
        let r = review(&t, &id, "Approved").await;
        assert_eq!(
            (r.status, r.json["accountStatus"].as_str()),
            (200, Some("Open")),
            "{:?}",
            r.json
        );
        for l in updates.iter_mut() {
            assert_eq!(l.next(5).await.expect("a status change").pairs(), event("Approved", &a));
            assert!(l.next(1).await.is_none(), "once per name");
        }
        let c = t.get(&format!("/v3/custody/accounts/{a}")).await;
        assert_eq!((c.status, c.code()), (200, "101"), "{:?}", c.json);
        let account = &c.json["custody_account"];
        assert_eq!(
            account.as_object().unwrap().keys().collect::<Vec<_>>(),
            [
                "accountId",
                "requestId",
                "status",
                "restrictedStatus",
                "restrictedReason",
                "approvalDate",
                "notes",
                "createdDate",
                "updatedDate"
            ]
        );
        assert_eq!(
            (
                account["requestId"].as_str(),
                account["status"].as_str(),
                account["restrictedStatus"].as_str()
            ),
            (Some(id.as_str()), Some("Open"), Some("No"))
        );
        assert_eq!(
            (account["restrictedReason"].clone(), account["notes"].as_str()),
            (Value::Null, Some("checked"))
        );
        assert!(account["approvalDate"].is_string());

        // A client may always set Pending again (part 3's table), which the review decides
        // anew; the same status set again (under another of the four names) fires as every
        // successful call does (part 1).
        code(
            &send("updateCustodialAccountRequest", update(&id, "Pending")).await,
            "101",
        );
        for l in updates.iter_mut() {
            assert_eq!(l.next(5).await.expect("a status change").pairs(), event("Pending", &a));
        }
        for name in ["updateCustodyAccountRequest", "approveCustodyAccountRequest"] {
            code(&send(name, update(&id, "Pending")).await, "101");
        }
        for l in updates.iter_mut() {
            for _ in 0..2 {
                assert_eq!(l.next(5).await.expect("Pending again").pairs(), event("Pending", &a));
            }
        }
        assert_eq!(review(&t, &id, "Rejected").await.json["accountStatus"], "Closed");
        let bad = review(&t, &id, "Open").await;
        assert_eq!(bad.status, 400);
        assert_eq!(review(&t, "99999999", "Approved").await.status, 404);

        // The older create name fires both create names.
        let (b, _) = attested(&t, &doc).await;
        code(&t.post("requestCustodialAccount", &[("accountId", &b)]).await, "101");
        assert_eq!(
            created.next(5).await.expect("createCustodyAccountRequest").pairs()[0].1,
            b
        );
        assert_eq!(
            old_create.next(5).await.expect("requestCustodialAccount").pairs()[0].1,
            b
        );
    }
);

both!(one_request_per_account_under_concurrency, |t: TestApp| async move {
    let doc = Listener::start(200).await;
    let (a, _) = attested(&t, &doc).await;
    let calls = (0..12).map(|i| {
        let name = if i % 2 == 0 {
            "createCustodyAccountRequest"
        } else {
            "requestCustodialAccount"
        };
        let t = &t;
        let a = a.clone();
        async move { t.post(name, &[("accountId", &a)]).await.code().to_owned() }
    });
    let codes = futures_util::future::join_all(calls).await;
    assert_eq!(codes.iter().filter(|c| *c == "101").count(), 1, "{codes:?}");
    assert_eq!(codes.iter().filter(|c| *c == "227").count(), 11, "{codes:?}");
});

both!(
    the_custody_account_read_checks_scope_then_ownership,
    |t: TestApp| async move {
        let doc = Listener::start(200).await;
        let (a, _) = attested(&t, &doc).await;
        let narrow = t.new_client(json!({"scopes": ["account.read"]})).await;
        for uri in [
            format!("/v3/custody/accounts/{a}"),
            format!("/v3/custody/accounts/{a}/positions"),
        ] {
            let r = t.get_as(&narrow, &uri).await;
            assert_eq!((r.status, r.code()), (403, "1403"), "{uri}");
            let r = t.get(&uri).await;
            assert_eq!((r.status, r.code()), (404, "1404"), "no request yet: {uri}");
        }
        request(&t, &a).await;
        let other: Creds = t.new_client(json!({"scopes": ["*"]})).await;
        let r = t.get_as(&other, &format!("/v3/custody/accounts/{a}")).await;
        assert_eq!((r.status, r.code()), (404, "1404"));
        let reader = t.new_client(json!({"scopes": ["custody_account.read"]})).await;
        let r = t.get_as(&reader, &format!("/v3/custody/accounts/{a}")).await;
        assert_eq!(r.status, 404, "the scope reads only the caller's accounts");
        let r = t.get(&format!("/v3/custody/accounts/{a}")).await;
        assert_eq!(r.json["custody_account"]["status"], "Pending");
        assert_eq!(r.json["custody_account"]["approvalDate"], Value::Null);
    }
);

both!(a_request_of_a_deleted_account_opens_nothing, |t: TestApp| async move {
    let doc = Listener::start(200).await;
    let (a, party) = attested(&t, &doc).await;
    let kyc = [("partyId", party.as_str()), ("KYCstatus", "Manually Approved")];
    code(&t.post("updateParty", &kyc).await, "101");
    let id = request(&t, &a).await;
    code(&t.post("deleteAccount", &[("accountId", &a)]).await, "101");
    let mut updated = hook(&t, "updateCustodyAccountRequest").await;
    let pending = [("custAccRequestID", id.as_str()), ("custAccRequestStatus", "Pending")];
    code(&t.post("updateCustodyAccountRequest", &pending).await, "148");
    let run = t
        .operator(Method::POST, "/operator/batches/custody/run", json!({}))
        .await;
    assert_eq!(run.json["processed"], 0, "{:?}", run.json);
    assert_eq!(review(&t, &id, "Approved").await.status, 409);
    assert!(
        updated.next(1).await.is_none(),
        "no webhook for an account that is gone"
    );
});

both!(
    the_daily_processing_approves_requests_of_kyc_approved_parties,
    |t: TestApp| async move {
        let doc = Listener::start(200).await;
        let mut updated = hook(&t, "updateCustodyAccountRequest").await;
        let (approved, party) = attested(&t, &doc).await;
        code(
            &t.post(
                "updateParty",
                &[("partyId", &party), ("KYCstatus", "Manually Approved")],
            )
            .await,
            "101",
        );
        let (waiting, _) = attested(&t, &doc).await;
        request(&t, &approved).await;
        request(&t, &waiting).await;
        let run = t
            .operator(Method::POST, "/operator/batches/custody/run", json!({}))
            .await;
        assert_eq!(run.json, json!({"batch": "custody", "processed": 1}));
        let status = |a: &str| {
            let t = &t;
            let uri = format!("/v3/custody/accounts/{a}");
            async move {
                t.get(&uri).await.json["custody_account"]["status"]
                    .as_str()
                    .unwrap()
                    .to_owned()
            }
        };
        assert_eq!(status(&approved).await, "Open");
        assert_eq!(status(&waiting).await, "Pending");
        let got = updated.next(5).await.expect("the approval's webhook");
        assert_eq!(got.pairs()[2], ("custAccStatus".to_owned(), "Approved".to_owned()));
        let run = t
            .operator(Method::POST, "/operator/batches/custody/run", json!({}))
            .await;
        assert_eq!(run.json["processed"], 0, "nothing changes twice");

        let batch = service::BATCHES
            .into_iter()
            .find(|b| b.name == "custody")
            .expect("the custody batch");
        let at = |s: &str| s.parse::<chrono::DateTime<chrono::Utc>>().unwrap();
        assert_eq!(batch.runs_due(at("2026-03-02T14:59:00Z")), 0, "7:59 Mountain");
        assert_eq!(batch.runs_due(at("2026-03-02T15:00:00Z")), 1, "8:00 Mountain");
    }
);

both!(
    a_signed_custody_agreement_counts_as_the_attestation,
    |t: TestApp| async move {
        let doc = Listener::start(200).await;
        let mut sent = hook(&t, "createCustodyAgreementEsign").await;
        let (a, p) = investor(&t).await;
        code(&t.post("createCustodyAgreementEsign", &[]).await, "106");
        code(
            &t.post("createCustodyAgreementEsign", &[("accountId", "A9999999")])
                .await,
            "148",
        );
        let lonely = crate::fixtures::create_account(&t).await;
        code(
            &t.post("createCustodyAgreementEsign", &[("accountId", &lonely)]).await,
            "135",
        );
        code(
            &t.post(
                "createCustodyAgreementEsign",
                &[("accountId", &a), ("templateId", "nope")],
            )
            .await,
            "106",
        );
        let r = t.post("createCustodyAgreementEsign", &[("accountId", &a)]).await;
        code(&r, "101");
        let d = r.json["document_details"][0].clone();
        assert_eq!(
            (d["partyId"].as_str(), d["esignStatus"].as_str()),
            (Some(p.as_str()), Some("NOTSIGNED"))
        );
        let key = d["documentKey"].as_str().unwrap().to_owned();
        let got = sent.next(5).await.expect("the send's webhook").pairs();
        assert!(got.contains(&("documentKey".to_owned(), key.clone())), "{got:?}");
        assert!(got.contains(&("partyId".to_owned(), p.clone())), "{got:?}");
        let again = t.post("createCustodyAgreementEsign", &[("accountId", &a)]).await;
        assert_eq!(
            again.json["document_details"][0]["documentKey"],
            key.as_str(),
            "out already"
        );
        let r = t.post("createCustodyAccountRequest", &[("accountId", &a)]).await;
        assert_eq!((r.status, r.code()), (422, "1422"), "sent is not signed");

        // Signed an hour later: the agreement's createdDate stays the time it was sent.
        t.clock.set(chrono::Utc::now() + chrono::Duration::hours(1));
        let envelopes = format!("/operator/clients/{}/esign/envelopes/{key}", t.client_id);
        let r = t.operator(Method::POST, &format!("{envelopes}/sign"), json!({})).await;
        assert_eq!(r.status, 200, "{:?}", r.json);
        // Attesting afterwards adds the document and keeps the signed agreement.
        code(&attest(&t, &a, &doc.url).await, "101");
        let again = t.post("createCustodyAgreementEsign", &[("accountId", &a)]).await;
        assert_eq!(
            (
                again.json["document_details"][0]["esignStatus"].as_str(),
                again.json["document_details"][0]["isAttested"].as_i64(),
                &again.json["document_details"][0]["createdDate"],
            ),
            (Some("SIGNED"), Some(1), &d["createdDate"])
        );
        request(&t, &a).await;

        // A declined agreement is sent anew; signed alone, it is on file.
        let (b, _) = investor(&t).await;
        let first = t.post("createCustodyAgreementEsign", &[("accountId", &b)]).await;
        let k1 = first.json["document_details"][0]["documentKey"]
            .as_str()
            .unwrap()
            .to_owned();
        let path = format!("/operator/clients/{}/esign/envelopes/{k1}/decline", t.client_id);
        assert_eq!(
            t.operator(Method::POST, &path, json!({"reason": "no"})).await.status,
            200
        );
        let second = t.post("createCustodyAgreementEsign", &[("accountId", &b)]).await;
        let k2 = second.json["document_details"][0]["documentKey"]
            .as_str()
            .unwrap()
            .to_owned();
        assert_ne!(k1, k2, "a new envelope");
        let path = format!("/operator/clients/{}/esign/envelopes/{k2}/sign", t.client_id);
        assert_eq!(t.operator(Method::POST, &path, json!({})).await.status, 200);
        request(&t, &b).await;
    }
);

both!(supplements_store_part_3s_fields_and_aliases, |t: TestApp| async move {
    let (a, p) = investor(&t).await;
    let mailing = [
        ("mailingAddressLine1", "1 Main St"),
        ("mailingCity", "Denver"),
        ("mailingState", "CO"),
        ("mailingZipCode", "80202"),
        ("mailingCountry", "USA"),
    ];
    let with = |extra: &[(&'static str, &'static str)]| {
        let mut v: Vec<(&str, &str)> = vec![("accountId", a.as_str())];
        v.extend_from_slice(&mailing);
        v.extend_from_slice(extra);
        v
    };
    // Updating before any supplement: 200, naming the old alias.
    let r = t
        .post(
            "updateCustodyAccountSupplement",
            &[("accountId", &a), ("mailingCity", "Boulder")],
        )
        .await;
    code(&r, "200");
    assert!(r.json["Error(s)"]
        .as_str()
        .unwrap()
        .contains("addCustodyAccountSupplement"));
    code(
        &t.post("updateCustodyAccountSupplement", &[("accountId", "A9999999")])
            .await,
        "148",
    );
    let bad_value = [("accountId", "A9999999"), ("maritalStatus", "9")];
    code(&t.post("updateCustodyAccountSupplement", &bad_value).await, "106");
    code(
        &t.post("createCustodyAccountSupplement", &[("accountId", &a)]).await,
        "106",
    );
    code(
        &t.post("createCustodyAccountSupplement", &with(&[("maritalStatus", "3")]))
            .await,
        "106",
    );
    code(
        &t.post(
            "createCustodyAccountSupplement",
            &with(&[("methodOfContributionOrFunding", "2")]),
        )
        .await,
        "106",
    );
    code(
        &t.post(
            "createCustodyAccountSupplement",
            &with(&[
                ("methodOfContributionOrFunding", "2"),
                ("methodOfContributionTaxYear", "26"),
            ]),
        )
        .await,
        "106",
    );
    let mut unknown = with(&[]);
    unknown[0] = ("accountId", "A9999999");
    code(&t.post("createCustodyAccountSupplement", &unknown).await, "148");
    let mut created = hook(&t, "createCustodyAccountSupplement").await;
    let r = t
        .post(
            "createCustodyAccountSupplement",
            &with(&[
                ("methodOfContributionOrFunding", "2"),
                ("methodOfContributionTaxYear", "2026"),
                ("maritalStatus", "2"),
                ("bankAccountNumber1", "55512345678"),
                ("internationalAccountNumber", "333444555666"),
            ]),
        )
        .await;
    code(&r, "101");
    assert_eq!(r.desc(), "Account added successfully.");
    // Its webhook (the response record) masks the bank numbers but their last four digits,
    // in the response's form: the answer shows them base64-encoded (part 1, Conventions 8).
    use base64::Engine;
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    let sent = created.next(5).await.expect("createCustodyAccountSupplement").pairs();
    let field = |name: &str| sent.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str().to_owned());
    assert_eq!(
        (field("bankAccountNumber1"), field("internationalAccountNumber")),
        (Some(b64("XXXXXXX5678")), Some(b64("XXXXXXXX5666")))
    );
    let d = &r.json["accountDetails"];
    assert_eq!(
        (&d["bankAccountNumber1"], &d["internationalAccountNumber"]),
        (&json!(b64("55512345678")), &json!(b64("333444555666")))
    );
    assert_eq!(
        (
            d["accountId"].as_str(),
            d["mailingCity"].as_str(),
            d["maritalStatus"].as_str()
        ),
        (Some(a.as_str()), Some("Denver"), Some("2"))
    );
    assert_eq!(d["bankFirmName1"], "");
    let r = t
        .post(
            "updateCustodyAccountSupplement",
            &[
                ("accountId", &a),
                ("mailingCity", "Boulder"),
                ("proxyVotingPreferences", "3"),
            ],
        )
        .await;
    code(&r, "101");
    assert_eq!(r.desc(), "Account updated successfully.");
    let d = &r.json["accountDetails"];
    assert_eq!(
        (
            d["mailingCity"].as_str(),
            d["mailingState"].as_str(),
            d["proxyVotingPreferences"].as_str(),
            d["methodOfContributionTaxYear"].as_str()
        ),
        (Some("Boulder"), Some("CO"), Some("3"), Some("2026")),
        "omitted fields keep their values"
    );
    code(
        &t.post(
            "updateCustodyAccountSupplement",
            &[("accountId", &a), ("proxyVotingPreferences", "9")],
        )
        .await,
        "106",
    );
    // The deprecated create takes the mailing address as optional.
    let (b, _) = investor(&t).await;
    code(
        &t.post("addCustodyAccountSupplement", &[("accountId", &b)]).await,
        "101",
    );

    // Party supplements, under both names.
    code(&t.post("createCustodyPartySupplement", &[]).await, "106");
    code(
        &t.post("addCustodyPartySupplement", &[("partyId", "P9999999")]).await,
        "198",
    );
    code(
        &t.post(
            "createCustodyPartySupplement",
            &[("partyId", &p), ("politicallyExposedPerson", "1")],
        )
        .await,
        "106",
    );
    let r = t
        .post(
            "addCustodyPartySupplement",
            &[
                ("partyId", &p),
                ("relationship", "owner"),
                ("salutation", "4"),
                ("beneficiaryType", "2"),
                ("publicCompany", "NO"),
                ("controlPerson", "perhaps"),
                ("politicallyExposedPerson", "yes"),
                ("politicallyExposedPersonDetails", "Council member"),
                ("companyTicker", "ABC"),
            ],
        )
        .await;
    code(&r, "101");
    assert_eq!(r.desc(), "Party added successfully.");
    let d = &r.json["party details"];
    assert_eq!(
        (
            d["partyId"].as_str(),
            d["salutation"].as_str(),
            d["beneficiaryType"].as_str(),
            d["publicCompany"].as_str(),
            d["controlPerson"].as_str(),
            d["politicallyExposedPerson"].as_str()
        ),
        (
            Some(p.as_str()),
            Some("Dr."),
            Some("Non-Spouse"),
            Some("No"),
            Some(""),
            Some("Yes")
        )
    );
    code(
        &t.post(
            "createCustodyPartySupplement",
            &[("partyId", &p), ("salutation", "Prof.")],
        )
        .await,
        "101",
    );
});

async fn move_of(t: &TestApp, account: &str, amount: &str) -> Resp {
    t.post(
        "createCustodyFundMove",
        &[("accountId", account), ("amount", amount), ("description", "Funding")],
    )
    .await
}

async fn run_ach(t: &TestApp) -> u64 {
    let r = t.operator(Method::POST, "/operator/batches/ach/run", json!({})).await;
    assert_eq!(r.status, 200, "{:?}", r.json);
    r.json["processed"].as_u64().unwrap()
}

async fn bank(t: &TestApp, account: &str, ref_num: &str, status: &str) -> Resp {
    let path = format!(
        "/operator/clients/{}/accounts/{account}/fund-moves/{ref_num}/status",
        t.client_id
    );
    t.operator(Method::POST, &path, json!({"status": status})).await
}

both!(
    custody_fund_moves_follow_the_ach_batch_and_the_bank,
    |t: TestApp| async move {
        let doc = Listener::start(200).await;
        let mut ach_status = hook(&t, "updateExternalFundMoveStatus").await;
        // No approved custody account, then no external account.
        let (a, _) = attested(&t, &doc).await;
        code(&move_of(&t, &a, "10").await, "148");
        let id = request(&t, &a).await;
        code(&move_of(&t, &a, "10").await, "148");
        assert_eq!(review(&t, &id, "Approved").await.status, 200);
        code(&move_of(&t, &a, "10").await, "149");
        code(&t.post("createCustodyFundMove", &[("accountId", &a)]).await, "106");
        code(&move_of(&t, "A9999999", "10").await, "148");

        let a = custody_open(&t, &doc, "Main").await;
        code(&move_of(&t, &a, "ten").await, "732");
        // An ACH debit or payout to a routing number that fails the ABA check digit: `215`.
        let external = |routing: &'static str| {
            [
                ("types", "Account"),
                ("accountId", a.as_str()),
                ("ExtAccountfullname", "Ada Stone"),
                ("Extnickname", "Main"),
                ("ExtRoutingnumber", routing),
                ("ExtAccountnumber", "000123456789"),
            ]
        };
        code(&t.post("updateExternalAccount", &external("123456789")).await, "101");
        code(&move_of(&t, &a, "10").await, "215");
        let payout = [("accountId", a.as_str()), ("amount", "1.00"), ("type", "ach")];
        code(&t.post("createCustodyFundDisbursement", &payout).await, "215");
        code(&t.post("updateExternalAccount", &external(ROUTING)).await, "101");
        let r = move_of(&t, &a, "100000.01").await;
        code(&r, "106");
        assert!(
            r.json["Error(s)"].as_str().unwrap().starts_with("amount"),
            "{:?}",
            r.json
        );
        let settings = format!("/operator/clients/{}/payment-settings", t.client_id);
        t.operator(Method::PUT, &settings, json!({"custodyRiskLimit": "500.00"}))
            .await;
        code(&move_of(&t, &a, "500.01").await, "106");
        let mut created = hook(&t, "createCustodyFundMove").await;
        let r = move_of(&t, &a, "500").await;
        code(&r, "101");
        let m = r.json["custodyTransaction"].clone();
        // Its webhook, the response record (CONTRACT), masks the bank numbers but their last
        // four digits.
        let sent = created.next(5).await.expect("createCustodyFundMove").pairs();
        let field = |name: &str| sent.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
        let routing = m["routingNumber"].as_str().unwrap();
        let masked_routing = format!("{}{}", "X".repeat(routing.len() - 4), &routing[routing.len() - 4..]);
        assert_eq!(
            (field("accountNumber"), field("routingNumber")),
            (Some("XXXXXXXX6789".to_owned()), Some(masked_routing))
        );
        t.register_webhook("createCustodyFundMove", &[]).await;
        assert_eq!(
            m.as_object().unwrap().keys().collect::<Vec<_>>(),
            [
                "accountId",
                "bankName",
                "amount",
                "accountNumber",
                "routingNumber",
                "accountName",
                "referenceNumber",
                "description",
                "approvalStatus",
                "status",
                "routingNumberStatus",
                "errors",
                "createdDate",
                "updatedDate"
            ]
        );
        assert_eq!(
            (
                m["amount"].as_str(),
                m["status"].as_str(),
                m["approvalStatus"].as_str(),
                m["accountNumber"].as_str()
            ),
            (Some("500.00"), Some("Pending"), Some("Pending"), Some("000123456789"))
        );
        let first = m["referenceNumber"].as_str().unwrap().to_owned();
        let second = move_of(&t, &a, "20").await.json["custodyTransaction"]["referenceNumber"]
            .as_str()
            .unwrap()
            .to_owned();

        // Void while pending, once.
        code(&t.post("updateCustodyFundMove", &[("accountId", &a)]).await, "106");
        code(
            &t.post(
                "updateCustodyFundMove",
                &[("accountId", &a), ("referenceNumber", "999999999")],
            )
            .await,
            "106",
        );
        let r = t
            .post(
                "updateCustodyFundMove",
                &[("accountId", &a), ("referenceNumber", &second)],
            )
            .await;
        code(&r, "101");
        assert_eq!(r.json["custodyTransaction"]["status"], "Voided");
        code(
            &t.post(
                "updateCustodyFundMove",
                &[("accountId", &a), ("referenceNumber", &second)],
            )
            .await,
            "224",
        );
        // ACH's own operations do not see custody moves.
        code(
            &t.post("requestForVoidACH", &[("accountId", &a), ("RefNum", &first)])
                .await,
            "212",
        );

        // The ACH batch submits it; the bank settles it; no ACH status webhook for custody.
        assert_eq!(run_ach(&t).await, 1);
        assert_eq!(bank(&t, &a, &first, "Settled").await.status, 200);
        assert!(ach_status.next(1).await.is_none(), "custody moves fire no ACH webhook");
        code(
            &t.post(
                "updateCustodyFundMove",
                &[("accountId", &a), ("referenceNumber", &first)],
            )
            .await,
            "224",
        );

        // A test nickname marks the entry.
        let b = custody_open(&t, &doc, "Test ACH Settled").await;
        let r = move_of(&t, &b, "15").await;
        assert_eq!(r.json["custodyTransaction"]["approvalStatus"], "TEST ENTRY");

        let r = t.post("getCustodyFundMoves", &[("accountId", &a)]).await;
        code(&r, "101");
        let list = r.json["custodyTransactions"].as_array().unwrap().clone();
        let statuses: Vec<(&str, &str)> = list
            .iter()
            .map(|m| (m["referenceNumber"].as_str().unwrap(), m["status"].as_str().unwrap()))
            .collect();
        assert_eq!(statuses, [(first.as_str(), "Settled"), (second.as_str(), "Voided")]);
        assert_eq!(r.json["pagination"]["totalRecords"], 2);
        let all = t.post("getCustodyFundMoves", &[]).await;
        assert_eq!(all.json["custodyTransactions"].as_array().unwrap().len(), 3);
        code(
            &t.post("getCustodyFundMoves", &[("accountId", "A9999999")]).await,
            "148",
        );

        // The settled money is the account's cash.
        let r = t.get(&format!("/v3/custody/accounts/{a}/positions")).await;
        assert_eq!((r.status, r.code()), (200, "101"), "{:?}", r.json);
        assert_eq!(
            r.json["positions"]["cash"],
            json!({"settledAmount": "500.00", "pendingAmount": "0.00", "disbursedAmount": "0.00", "availableAmount": "500.00"})
        );
        assert_eq!(r.json["positions"]["securities"], json!([]));
    }
);

both!(
    disbursements_never_overdraw_and_move_only_by_the_operator,
    |t: TestApp| async move {
        let doc = Listener::start(200).await;
        let a = custody_open(&t, &doc, "Main").await;
        let r = move_of(&t, &a, "300").await;
        let ref_num = r.json["custodyTransaction"]["referenceNumber"]
            .as_str()
            .unwrap()
            .to_owned();
        run_ach(&t).await;
        let disburse = |amount: &'static str, kind: &'static str, extra: &'static [(&'static str, &'static str)]| {
            let t = &t;
            let a = a.clone();
            async move {
                let mut form = vec![("accountId", a.as_str()), ("amount", amount), ("type", kind)];
                form.extend_from_slice(extra);
                t.post("createCustodyFundDisbursement", &form).await
            }
        };
        code(&disburse("10", "ach", &[]).await, "106"); // nothing settled yet
        assert_eq!(bank(&t, &a, &ref_num, "Settled").await.status, 200);
        code(&disburse("10", "cheque", &[]).await, "106");
        code(&disburse("10", "wire_domestic", &[("bankId", "B1")]).await, "106");
        code(&disburse("300.01", "ach", &[]).await, "106");
        // Far past any balance (and past what cents can hold): refused, not a crash.
        code(&disburse("1000000000000000000000000000", "ach", &[]).await, "106");
        let r = disburse("100", "ach", &[]).await;
        code(&r, "101");
        let d = r.json["custodyFundDisbursement"].clone();
        assert_eq!(
            d.as_object().unwrap().keys().collect::<Vec<_>>(),
            [
                "requestId",
                "accountId",
                "amount",
                "type",
                "bankId",
                "bankAccountId",
                "additionalDetails",
                "status",
                "createdDate",
                "updatedDate"
            ]
        );
        assert_eq!(
            (d["amount"].as_str(), d["status"].as_str(), d["bankId"].clone()),
            (Some("100.00"), Some("pending"), Value::Null)
        );
        let first = d["requestId"].as_str().unwrap().to_owned();
        assert_eq!(first.len(), 36, "a UUID");
        let wire = disburse(
            "150",
            "wire_international",
            &[
                ("bankId", "B1"),
                ("bankAccountId", "BA9"),
                ("additionalDetails", "SWIFT"),
            ],
        )
        .await;
        code(&wire, "101");
        assert_eq!(wire.json["custodyFundDisbursement"]["bankAccountId"], "BA9");
        // 300 settled, 250 held: 50 left, and concurrent calls never take more.
        let calls = (0..6).map(|_| disburse("20", "ach", &[]));
        let codes: Vec<String> = futures_util::future::join_all(calls)
            .await
            .iter()
            .map(|r| r.code().to_owned())
            .collect();
        assert_eq!(codes.iter().filter(|c| *c == "101").count(), 2, "{codes:?}");
        let r = t.get(&format!("/v3/custody/accounts/{a}/positions")).await;
        assert_eq!(r.json["positions"]["cash"]["availableAmount"], "10.00");
        assert_eq!(r.json["positions"]["cash"]["disbursedAmount"], "290.00");

        // The list: the caller's own, newest first, with part 1's filter and paging.
        let r = t.post("getCustodyFundDisbursements", &[]).await;
        code(&r, "101");
        assert_eq!(r.json["custodyFundDisbursements"].as_array().unwrap().len(), 4);
        assert_eq!(r.json["pagination"]["totalRecords"], 4);
        let r = t
            .post("getCustodyFundDisbursements", &[("filter[requestId]", &first)])
            .await;
        let got = r.json["custodyFundDisbursements"].as_array().unwrap().clone();
        assert_eq!((got.len(), got[0]["requestId"].as_str()), (1, Some(first.as_str())));
        let r = t
            .post(
                "getCustodyFundDisbursements",
                &[("filter", &json!({"type": "wire_international"}).to_string())],
            )
            .await;
        assert_eq!(
            r.json["custodyFundDisbursements"].as_array().unwrap().len(),
            1,
            "{:?}",
            r.json
        );
        let r = t
            .post("getCustodyFundDisbursements", &[("offset", "1"), ("limit", "2")])
            .await;
        assert_eq!(r.json["custodyFundDisbursements"].as_array().unwrap().len(), 2);
        assert_eq!(
            r.json["pagination"],
            json!({"totalRecords": 4, "startIndex": 1, "endIndex": 2})
        );
        // JSON numbers with an integral value are those integers (CONTRACT).
        let body = json!({"offset": 1.0, "limit": 2e0});
        let json_page = t
            .json_as(&t.creds(), Method::POST, "/v3/getCustodyFundDisbursements", &body)
            .await;
        assert_eq!(
            json_page.json["pagination"], r.json["pagination"],
            "{:?}",
            json_page.json
        );
        let other = t.new_client(json!({"scopes": ["*"]})).await;
        let r = t
            .form_as(&other, Method::POST, "getCustodyFundDisbursements", &[])
            .await;
        // Part 1: an offset at the total count (none of this client's) is 239.
        assert_eq!(r.code(), "239", "only the caller's: {:?}", r.json);

        // The operator moves it; a refusal releases the money, a final status is final.
        let path = |id: &str| format!("/operator/clients/{}/custody-disbursements/{id}", t.client_id);
        let put = |id: String, status: &'static str| {
            let t = &t;
            let p = path(&id);
            async move { t.operator(Method::PUT, &p, json!({"status": status})).await }
        };
        assert_eq!(put(first.clone(), "lost").await.status, 400);
        assert_eq!(
            put("00000000-0000-0000-0000-000000000000".into(), "approved")
                .await
                .status,
            404
        );
        let r = put(first.clone(), "rejected").await;
        assert_eq!(
            (r.status, r.json["status"].as_str()),
            (200, Some("rejected")),
            "{:?}",
            r.json
        );
        code(&disburse("110", "ach", &[]).await, "101");
        assert_eq!(
            put(first.clone(), "reopened").await.status,
            409,
            "the money is gone again"
        );
        let wire_id = wire.json["custodyFundDisbursement"]["requestId"]
            .as_str()
            .unwrap()
            .to_owned();
        assert_eq!(put(wire_id.clone(), "completed").await.status, 200);
        assert_eq!(put(wire_id.clone(), "reopened").await.status, 409, "completed is final");
        assert_eq!(
            put(first.clone(), "terminated").await.status,
            200,
            "rejected to terminated holds nothing"
        );
        assert_eq!(put(first, "in_review").await.status, 409, "terminated is final");
    }
);
