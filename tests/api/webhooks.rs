//! Webhooks at a real listener: exact form bodies and headers, only after success.

use api_tests::{both, Listener, TestApp};
use http::Method;
use serde_json::json;

use crate::fixtures::*;

fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
    v.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
}

both!(
    create_party_webhook_arrives_with_exact_body_and_headers,
    |t: TestApp| async move {
        let mut hook = Listener::start(200).await;
        let mut second = Listener::start(204).await;
        t.register_webhook("createParty", &[&hook.url, &second.url]).await;
        let r = t.put("createParty", &with(PARTY, &[("KYCstatus", "Pending")])).await;
        let id = r.inserted("partyDetails")["partyId"].as_str().unwrap().to_owned();
        let got = hook.next(5).await.expect("webhook delivered");
        assert_eq!(got.method, Method::POST);
        assert_eq!(got.path, "/hook");
        assert_eq!(got.headers["content-type"], "application/x-www-form-urlencoded");
        assert!(got.headers["user-agent"].to_str().unwrap().ends_with("/1.0"));
        assert!(got.headers.get("x-webhook-token").is_none(), "no token generated yet");
        assert_eq!(
            got.pairs(),
            pairs(&[("partyId", &id), ("KYCstatus", "Pending"), ("AMLstatus", "")])
        );
        assert_eq!(got.body, format!("partyId={id}&KYCstatus=Pending&AMLstatus="));
        assert!(second.next(5).await.is_some(), "every registered URL gets it");
    }
);

both!(
    webhook_tokens_are_sent_comma_separated_and_shared_with_children,
    |t: TestApp| async move {
        let child = t.new_client(json!({"parentClientId": t.client_id})).await;
        let path = format!("/operator/clients/{}/webhook-tokens", t.client_id);
        let t1 = t.operator(Method::POST, &path, json!({})).await.json["token"]
            .as_str()
            .unwrap()
            .to_owned();
        let path = format!("/operator/clients/{}/webhook-tokens", child.id);
        let t2 = t.operator(Method::POST, &path, json!({})).await.json["token"]
            .as_str()
            .unwrap()
            .to_owned();
        let mut hook = Listener::start(200).await;
        let reg = format!("/operator/clients/{}/webhooks/createParty", child.id);
        assert_eq!(
            t.operator(Method::PUT, &reg, json!({"urls": [hook.url]})).await.status,
            200
        );
        create_party_as(&t, &child).await;
        let got = hook.next(5).await.expect("delivered");
        assert_eq!(got.headers["x-webhook-token"].to_str().unwrap(), format!("{t1},{t2}"));
        // One level of parents: a child of the child would share neither's tokens.
        let r = t
            .operator(Method::POST, "/operator/clients", json!({"parentClientId": child.id}))
            .await;
        assert_eq!(r.status, 400, "{:?}", r.json);
    }
);

both!(
    failed_calls_send_no_webhook_and_unregistering_stops_them,
    |t: TestApp| async move {
        let mut hook = Listener::start(200).await;
        t.register_webhook("createParty", &[&hook.url]).await;
        assert_eq!(t.put("createParty", &without(PARTY, &["dob"])).await.code(), "106");
        assert!(hook.next(2).await.is_none());
        t.register_webhook("createParty", &[]).await;
        create_party(&t).await;
        assert!(hook.next(2).await.is_none());
    }
);

both!(
    create_account_webhook_carries_the_table_fields_in_order,
    |t: TestApp| async move {
        let mut hook = Listener::start(200).await;
        t.register_webhook("createAccount", &[&hook.url]).await;
        let id = create_account_as(&t, &t.creds(), &[("KYCstatus", "Pending")]).await;
        let got = hook.next(5).await.expect("delivered");
        let names: Vec<String> = got.pairs().into_iter().map(|(k, _)| k).collect();
        let expected = "accountId providerid status developerAPIKey accountName type entityType residentType socialSecurityNumber dateOfBirth address1 address2 city state zip country email phone taxID kycStatus amlStatus amlDate suitabilityScore suitabilityDate suitabilityApprover accreditedStatus accreditedInvestor accreditedInvestorDate 506cLimit accountTotalLimit singleInvestmentLimit associatedAC syndicate tags notes approvalStatus approvalPrincipal approvalLastReview virtualStatus field1 field2 field3 createdIpAddress client_id";
        assert_eq!(names, expected.split(' ').collect::<Vec<_>>());
        let map: std::collections::HashMap<_, _> = got.pairs().into_iter().collect();
        assert_eq!(map["accountId"], id);
        assert_eq!(map["developerAPIKey"], "XXXXXXXXXXXXXXX");
        assert_eq!(map["client_id"], t.client_id);
        assert_eq!(
            (map["socialSecurityNumber"].as_str(), map["dateOfBirth"].as_str()),
            ("", "")
        );
        assert_eq!(map["kycStatus"], "Pending");
        assert_eq!(map["createdIpAddress"], "127.0.0.1");
    }
);

both!(link_webhooks_fire_on_create_and_delete, |t: TestApp| async move {
    let mut hook = Listener::start(200).await;
    t.register_webhook("createLink", &[&hook.url]).await;
    t.register_webhook("deleteLink", &[&hook.url]).await;
    let a = create_account(&t).await;
    let p = create_party(&t).await;
    let id = link(&t, &a, "IndivACParty", &p, "0").await.inserted("linkDetails")["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let expected = pairs(&[
        ("id", &id),
        ("firstEntryType", "Account"),
        ("firstEntry", &a),
        ("relatedEntry", &p),
        ("relatedEntryType", "IndivACParty"),
        ("linkType", "owner"),
        ("notes", ""),
    ]);
    assert_eq!(hook.next(5).await.expect("createLink").pairs(), expected);
    assert_eq!(t.post("deleteLink", &[("id", &id)]).await.code(), "101");
    assert_eq!(hook.next(5).await.expect("deleteLink").pairs(), expected);
});

both!(
    a_webhook_is_never_left_in_the_outbox_after_101,
    |t: TestApp| async move {
        let mut hook = Listener::start(500).await;
        t.register_webhook("createParty", &[&hook.url]).await;
        create_party(&t).await;
        assert!(
            hook.next(5).await.is_some(),
            "one attempt, even when the endpoint fails"
        );
        assert!(outbox_drains(&t).await, "the attempt clears the outbox entry");
    }
);

/// Whether the outbox empties within a few seconds: with an in-memory queue an entry goes
/// only once its delivery attempt is made, just after the receiver got the request.
async fn outbox_drains(t: &TestApp) -> bool {
    let q = shared::store::Query::new(shared::store::Index::Table, shared::webhooks::OUTBOX_PK);
    for _ in 0..50 {
        if t.store().query(&q).await.unwrap().items.is_empty() {
            return true;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    false
}

/// A `createParty` webhook for `party` left in the outbox as a crash leaves one (committed,
/// never handed over), with a listener registered for it.
async fn left_in_outbox(t: &TestApp, party: &str) -> Listener {
    let hook = Listener::start(200).await;
    t.register_webhook("createParty", &[&hook.url]).await;
    let event = shared::webhooks::Event::new("createParty").field("partyId", party.to_owned());
    let env = shared::webhooks::Envelope::new(&t.client_id, event, 0);
    t.store().write(vec![env.outbox_write()]).await.unwrap();
    hook
}

both!(
    the_outbox_sweep_resends_entries_a_crash_left_behind,
    |t: TestApp| async move {
        let mut hook = left_in_outbox(&t, "P1234567").await;
        assert_eq!(t.app.sweep_outbox(std::time::Duration::from_secs(30)).await.unwrap(), 1);
        assert_eq!(hook.next(5).await.expect("re-sent").body, "partyId=P1234567");
        assert!(outbox_drains(&t).await, "cleared once sent");
        assert_eq!(t.app.sweep_outbox(std::time::Duration::ZERO).await.unwrap(), 0);
    }
);

both!(
    a_copy_the_sweep_queued_again_is_never_sent_twice,
    |t: TestApp| async move {
        let mut hook = left_in_outbox(&t, "P7654321").await;
        // Two sweeps before the first copy is sent: a backlog's entries are queued again
        // while they still wait (with an in-memory queue, their entries stay until then).
        let age = std::time::Duration::from_secs(30);
        assert_eq!(t.app.sweep_outbox(age).await.unwrap(), 1);
        t.app.sweep_outbox(age).await.unwrap();
        assert_eq!(hook.next(5).await.expect("sent").body, "partyId=P7654321");
        assert!(hook.next(2).await.is_none(), "one attempt (part 1), not one per copy");
        assert!(outbox_drains(&t).await);
    }
);

both!(
    production_refuses_plain_http_and_loopback_targets,
    |t: TestApp| async move {
        let t = TestApp::with_env(t.backend, shared::Environment::Production).await;
        let mut hook = Listener::start(200).await;
        let urls = [hook.url.clone(), hook.url.replace("http://", "https://")];
        let path = format!("/operator/clients/{}/webhooks/createParty", t.client_id);
        for url in &urls {
            let r = t.operator(Method::PUT, &path, json!({ "urls": [url] })).await;
            assert_eq!(r.status, 400, "refused at registration: {:?}", r.json);
        }
        // Part 1: a webhook carries the name of the endpoint called; no other is heard.
        let misspelt = format!("/operator/clients/{}/webhooks/createPary", t.client_id);
        let r = t
            .operator(Method::PUT, &misspelt, json!({ "urls": ["https://example.com/h"] }))
            .await;
        assert_eq!(r.status, 400, "{:?}", r.json);
        assert!(r.json["error"].as_str().unwrap().contains("createPary"));
        let key = shared::webhooks::registration_key(&t.client_id, "createPary");
        assert!(t.store().get(&key).await.unwrap().is_none(), "nothing written");
        // A registration made before that rule is still refused at delivery.
        let mut item = shared::webhooks::registration_key(&t.client_id, "createParty").item();
        item.insert("d".into(), shared::store::Val::S(serde_json::to_string(&urls).unwrap()));
        t.store()
            .write(vec![shared::store::Write::Put { item, cond: None }])
            .await
            .unwrap();
        create_party(&t).await;
        assert!(
            hook.next(3).await.is_none(),
            "no request reaches a loopback listener in production"
        );
    }
);

both!(
    the_delivery_function_reports_unreadable_messages_as_failed_and_delivers_the_rest,
    |t: TestApp| async move {
        let mut hook = Listener::start(200).await;
        t.register_webhook("createParty", &[&hook.url]).await;
        let event = shared::webhooks::Event::new("createParty").field("partyId", "P7654321".to_owned());
        let good = shared::webhooks::Envelope::new(&t.client_id, event, 0).to_json();
        let batch = json!({"Records": [
            {"messageId": "m1", "body": good},
            {"messageId": "m2", "body": "not an envelope"}
        ]});
        let deliverer =
            shared::webhooks::Deliverer::new(t.app.store.clone(), shared::Environment::Sandbox.url_policy());
        let out = shared::lambda::deliver_batch(&deliverer, serde_json::from_value(batch).unwrap()).await;
        let failed: Vec<_> = out
            .batch_item_failures
            .iter()
            .map(|f| f.item_identifier.as_str())
            .collect();
        assert_eq!(
            failed,
            ["m2"],
            "an unreadable message is reported failed, so that it reaches the dead-letter queue"
        );
        assert_eq!(hook.next(5).await.expect("delivered").body, "partyId=P7654321");
    }
);

both!(
    a_method_the_table_does_not_list_sends_its_response_record,
    |t: TestApp| async move {
        // getMarketHours fires nothing of its own: the response record goes, field by field.
        let mut hook = Listener::start(200).await;
        t.register_webhook("getMarketHours", &[&hook.url]).await;
        let r = t.post("getMarketHours", &[]).await;
        assert_eq!(r.code(), "101", "{:?}", r.json);
        let record = r.json["globalMarketHours"].as_object().expect("a record").clone();
        let want: Vec<(String, String)> = record
            .iter()
            .filter_map(|(k, v)| shared::webhooks::value_text(v).map(|v| (k.clone(), v)))
            .collect();
        let got = hook.next(5).await.expect("the response record's webhook");
        assert_eq!(got.pairs(), want);
        // A method part 1 describes fires as described: createEntity sends none.
        let mut entity = Listener::start(200).await;
        t.register_webhook("createEntity", &[&entity.url]).await;
        let r = t.put("createEntity", ENTITY).await;
        assert_eq!(r.code(), "101", "{:?}", r.json);
        assert!(entity.next(1).await.is_none(), "createEntity sends no webhook");
    }
);

both!(
    one_clients_hanging_receiver_holds_up_no_other_clients_webhooks,
    |t: TestApp| async move {
        // Client A's receiver hangs, with more of A's POSTs to it than one lane holds.
        let hanging = Listener::start(200).await;
        hanging.set_stalled(true);
        let urls: Vec<String> = (0..10).map(|i| format!("{}?n={i}", hanging.url)).collect();
        let urls: Vec<&str> = urls.iter().map(String::as_str).collect();
        t.register_webhook("createParty", &urls).await;
        create_party(&t).await;
        // Client B's receiver, on the same host, gets its webhook at once.
        let b = t.new_client(json!({"scopes": ["*"]})).await;
        let mut fast = Listener::start(200).await;
        let path = format!("/operator/clients/{}/webhooks/createParty", b.id);
        let r = t.operator(Method::PUT, &path, json!({ "urls": [fast.url] })).await;
        assert_eq!(r.status, 200);
        create_party_as(&t, &b).await;
        assert!(fast.next(2).await.is_some(), "B's webhook waited for A's receiver");
    }
);
