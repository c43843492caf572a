//! The client lifecycle through the operator API (CONTRACT's operator table): what a client
//! may call, its keys, its webhook tokens and the encryption of its webhooks.

use aes_gcm::aead::Aead;
use aes_gcm::{Aes256Gcm, KeyInit, Nonce};
use api_tests::{both, Creds, Listener, TestApp};
use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use http::Method;
use serde_json::json;

use crate::fixtures::*;

fn path(c: &Creds, rest: &str) -> String {
    format!("/operator/clients/{}{rest}", c.id)
}

both!(
    patch_changes_only_what_it_names_and_takes_effect_at_once,
    |t: TestApp| async move {
        let c = t
            .new_client(json!({"methods": ["getLink"], "scopes": ["account.read"]}))
            .await;
        let r = t.form_as(&c, Method::PUT, "createParty", PARTY).await;
        assert_eq!(r.code(), "111");
        let r = t
            .operator(Method::PATCH, &path(&c, ""), json!({"methods": ["createParty"]}))
            .await;
        assert_eq!(r.status, 200, "{:?}", r.json);
        assert_eq!(r.json["methods"], json!(["createParty"]));
        assert_eq!(r.json["scopes"], json!(["account.read"]), "omitted keys unchanged");
        assert!(r.json.get("keys").is_none() && !r.json.to_string().contains("hash"));
        let r = t.form_as(&c, Method::PUT, "createParty", PARTY).await;
        assert_eq!(r.code(), "101", "the new permission applies to the next request");

        let r = t
            .operator(Method::PATCH, &path(&c, ""), json!({"ipAllowlist": ["192.0.2.1"]}))
            .await;
        assert_eq!(r.json["methods"], json!(["createParty"]));
        assert_eq!(t.form_as(&c, Method::PUT, "createParty", PARTY).await.code(), "111");

        for (body, status) in [
            (json!({"ipAllowlist": ["not an address"]}), 400),
            (json!({"methods": "createParty"}), 400),
            (json!({"apiKey": "x"}), 400),
            // A grant names what exists: a misspelt one would match nothing, quietly.
            (json!({"methods": ["createPary"]}), 400),
            (json!({"scopes": ["acount.read"]}), 400),
            (json!({"scopes": ["account.read.pii_top"]}), 400),
        ] {
            let r = t.operator(Method::PATCH, &path(&c, ""), body.clone()).await;
            assert_eq!(r.status, status, "{body}");
        }
        let r = t.operator(Method::PATCH, &path(&c, ""), json!({})).await;
        assert_eq!(
            r.json["methods"],
            json!(["createParty"]),
            "a refused patch changes nothing"
        );
        assert_eq!(r.json["scopes"], json!(["account.read"]));
        for grants in [json!({"methods": ["getLnk"]}), json!({"scopes": ["party.raed"]})] {
            let r = t.operator(Method::POST, "/operator/clients", grants.clone()).await;
            assert_eq!(r.status, 400, "{grants}: {:?}", r.json);
            assert!(r.json["error"].as_str().unwrap().contains("no "), "{:?}", r.json);
        }
        let granted = json!({"methods": ["*"], "scopes": ["party.read.pii_low", "ats.read", "escrow_account.read"]});
        assert_eq!(t.operator(Method::PATCH, &path(&c, ""), granted).await.status, 200);
        let r = t.operator(Method::PATCH, "/operator/clients/nobody", json!({})).await;
        assert_eq!(r.status, 404);
    }
);

both!(
    the_sandbox_client_keeps_every_right_and_a_restart_restores_them,
    |t: TestApp| async move {
        let dev = t.creds();
        for (method, rest, body) in [
            (Method::PATCH, "", json!({"methods": ["getLink"]})),
            (Method::PATCH, "", json!({"scopes": []})),
            (Method::PATCH, "", json!({"ipAllowlist": ["192.0.2.1"]})),
            (Method::PUT, "/field-permissions", json!({"fields": ["partyId"]})),
        ] {
            let r = t.operator(method, &path(&dev, rest), body.clone()).await;
            assert_eq!(r.status, 409, "{body}: {:?}", r.json);
        }
        let r = t
            .put("createParty", &[PARTY, &[("occupation", "Pilot")]].concat())
            .await;
        assert_eq!(r.code(), "101", "{:?}", r.json);
        // What leaves it every right is no narrowing.
        assert_eq!(t.operator(Method::PATCH, &path(&dev, ""), json!({})).await.status, 200);
        let all = json!({"fields": ["*"]});
        assert_eq!(
            t.operator(Method::PUT, &path(&dev, "/field-permissions"), all)
                .await
                .status,
            200
        );

        // A store narrowed before the refusal existed: the next start restores every right.
        let mut rec = shared::auth::load_client(t.store(), &dev.id).await.unwrap().unwrap();
        (rec.methods, rec.field_permissions) = (vec!["getLink".into()], Some(vec!["partyId".into()]));
        assert!(t.app.ports.save_client(&rec).await.unwrap());
        assert_eq!(t.put("createParty", PARTY).await.code(), "111");
        t.app.ensure_dev_client(&dev.id, &dev.key).await.unwrap();
        let r = t
            .put("createParty", &[PARTY, &[("occupation", "Pilot")]].concat())
            .await;
        assert_eq!(r.code(), "101", "{:?}", r.json);

        // Its key deactivated, the next start makes the key it prints work again.
        let r = t.operator(Method::DELETE, &path(&dev, "/keys/dev"), json!(null)).await;
        assert_eq!(r.status, 200, "{:?}", r.json);
        assert_eq!(t.get("/v3/ping").await.code(), "103");
        t.app.ensure_dev_client(&dev.id, &dev.key).await.unwrap();
        assert_eq!(t.get("/v3/ping").await.code(), "101");
    }
);

both!(keys_are_added_listed_and_deactivated, |t: TestApp| async move {
    let first = t.new_client(json!({})).await;
    let r = t.operator(Method::POST, &path(&first, "/keys"), json!({})).await;
    assert_eq!(r.status, 201, "{:?}", r.json);
    let second = Creds {
        id: first.id.clone(),
        key: r.json["apiKey"].as_str().unwrap().to_owned(),
    };
    let second_id = r.json["keyId"].as_str().unwrap().to_owned();
    assert_eq!(t.get_as(&first, "/v3/ping").await.code(), "101");
    assert_eq!(
        t.get_as(&second, "/v3/ping").await.code(),
        "101",
        "several keys are active"
    );

    let r = t.operator(Method::GET, &path(&first, "/keys"), json!({})).await;
    let keys = r.json["keys"].as_array().unwrap().clone();
    assert_eq!(keys.len(), 2);
    assert!(keys.iter().all(|k| k["active"] == true && k["createdDate"].is_string()));
    assert!(!r.json.to_string().contains(&second.key), "secrets are shown once");
    let first_id = keys[0]["keyId"].as_str().unwrap().to_owned();
    assert_eq!(keys[1]["keyId"], second_id.as_str());

    let r = t
        .operator(Method::DELETE, &path(&first, &format!("/keys/{first_id}")), json!({}))
        .await;
    assert_eq!((r.status, &r.json["active"]), (200, &json!(false)));
    let r = t.get_as(&first, "/v3/ping").await;
    assert_eq!(
        (r.status, r.code()),
        (401, "103"),
        "a deactivated key is refused at once"
    );
    assert_eq!(t.get_as(&second, "/v3/ping").await.code(), "101");
    let r = t.operator(Method::GET, &path(&first, "/keys"), json!({})).await;
    assert_eq!(r.json["keys"][0]["active"], false);

    let r = t
        .operator(Method::DELETE, &path(&first, "/keys/k-none"), json!({}))
        .await;
    assert_eq!(r.status, 404);
    let r = t
        .operator(Method::POST, "/operator/clients/nobody/keys", json!({}))
        .await;
    assert_eq!(r.status, 404);
});

both!(concurrent_client_changes_are_never_lost, |t: TestApp| async move {
    let c = t.new_client(json!({})).await;
    let keys = path(&c, "/keys");
    let adds = (0..10).map(|_| t.operator(Method::POST, &keys, json!({})));
    let secrets: Vec<String> = futures_util::future::join_all(adds)
        .await
        .into_iter()
        .map(|r| {
            assert_eq!(r.status, 201, "{:?}", r.json);
            r.json["apiKey"].as_str().unwrap().to_owned()
        })
        .collect();
    let r = t.operator(Method::GET, &path(&c, "/keys"), json!({})).await;
    assert_eq!(r.json["keys"].as_array().unwrap().len(), 11);
    for key in secrets {
        let creds = Creds { id: c.id.clone(), key };
        assert_eq!(t.get_as(&creds, "/v3/ping").await.code(), "101");
    }
});

both!(a_retired_webhook_token_is_no_longer_sent, |t: TestApp| async move {
    let tokens = format!("/operator/clients/{}/webhook-tokens", t.client_id);
    let old = t.operator(Method::POST, &tokens, json!({})).await.json["token"]
        .as_str()
        .unwrap()
        .to_owned();
    let new = t.operator(Method::POST, &tokens, json!({})).await.json["token"]
        .as_str()
        .unwrap()
        .to_owned();
    let r = t.operator(Method::DELETE, &format!("{tokens}/{old}"), json!({})).await;
    assert_eq!(r.status, 200, "{:?}", r.json);
    let mut hook = Listener::start(200).await;
    t.register_webhook("createParty", &[&hook.url]).await;
    create_party(&t).await;
    let got = hook.next(5).await.expect("delivered");
    assert_eq!(got.headers["x-webhook-token"].to_str().unwrap(), new);
    let r = t.operator(Method::DELETE, &format!("{tokens}/{old}"), json!({})).await;
    assert_eq!(r.status, 404, "already retired");
});

both!(
    webhooks_are_encrypted_with_the_clients_key_until_it_is_cleared,
    |t: TestApp| async move {
        let key = [42u8; 32];
        let setting = format!("/operator/clients/{}/webhook-encryption", t.client_id);
        for bad in [
            json!({"key": "short"}),
            json!({"key": STANDARD.encode([1u8; 16])}),
            json!({}),
        ] {
            assert_eq!(
                t.operator(Method::PUT, &setting, bad.clone()).await.status,
                400,
                "{bad}"
            );
        }
        let r = t
            .operator(Method::PUT, &setting, json!({"key": STANDARD.encode(key)}))
            .await;
        assert_eq!((r.status, &r.json["webhookEncryption"]), (200, &json!(true)));
        let mut hook = Listener::start(200).await;
        t.register_webhook("createParty", &[&hook.url]).await;
        let id = create_party(&t).await;
        let got = hook.next(5).await.expect("delivered");
        let pairs = got.pairs();
        assert_eq!(pairs.len(), 1, "one field: {}", got.body);
        assert_eq!(pairs[0].0, "params");
        let raw = STANDARD.decode(&pairs[0].1).unwrap();
        let (nonce, sealed) = raw.split_at(12);
        let plain = Aes256Gcm::new((&key).into())
            .decrypt(Nonce::from_slice(nonce), sealed)
            .expect("decrypts with the client's key");
        assert_eq!(
            String::from_utf8(plain).unwrap(),
            format!("partyId={id}&KYCstatus=&AMLstatus=")
        );

        let r = t.operator(Method::PUT, &setting, json!({"key": null})).await;
        assert_eq!(r.json["webhookEncryption"], false);
        let id = create_party(&t).await;
        assert_eq!(
            hook.next(5).await.expect("delivered").body,
            format!("partyId={id}&KYCstatus=&AMLstatus=")
        );
    }
);
