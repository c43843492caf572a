//! The offerings group: issuers, issuer financial accounts, offerings and their lifecycle,
//! funding reads, the operator's offering endpoints, webhooks at a real listener, and the
//! share reservation the trades group builds on (never oversold under concurrency).

use std::sync::Arc;

use api_tests::{both, Creds, Listener, Resp, TestApp};
use http::Method;
use rust_decimal::Decimal;
use serde_json::{json, Value};
use shared::model::issuer::CustodianRecord;
use shared::model::offering::{OfferingChange, PurchaseEntry};
use shared::records::issuer::custodian_write;
use shared::records::offering::{self as model, change_write, purchase_write, release_shares, reserve_shares};
use shared::store::{Store, StoreError};

use crate::fixtures::{with, without, ISSUER, ISSUER_ACCOUNT, OFFERING};

fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
    v.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
}

fn keys(v: &Value) -> Vec<String> {
    v.as_object().unwrap().keys().cloned().collect()
}

async fn issuer_as(t: &TestApp, c: &Creds) -> String {
    let r = t.form_as(c, Method::PUT, "createIssuer", ISSUER).await;
    assert_eq!(r.code(), "101", "{:?}", r.json);
    r.inserted("issuerDetails")["issuerId"].as_str().unwrap().to_owned()
}

async fn issuer(t: &TestApp) -> String {
    issuer_as(t, &t.creds()).await
}

async fn offering_as(t: &TestApp, c: &Creds, extra: &[(&str, &str)]) -> String {
    let i = issuer_as(t, c).await;
    let mut params = with(OFFERING, extra);
    params.push(("issuerId", i.as_str()));
    let r = t.form_as(c, Method::PUT, "createOffering", &params).await;
    assert_eq!(r.code(), "101", "{:?}", r.json);
    r.inserted("offeringDetails")["offeringId"].as_str().unwrap().to_owned()
}

async fn offering(t: &TestApp, extra: &[(&str, &str)]) -> String {
    offering_as(t, &t.creds(), extra).await
}

async fn get_offering(t: &TestApp, id: &str) -> Value {
    let r = t.post("getOffering", &[("offeringId", id)]).await;
    assert_eq!(r.code(), "101", "{:?}", r.json);
    r.json["offeringDetails"][0].clone()
}

async fn status_of(t: &TestApp, id: &str) -> String {
    let r = t.post("getOfferingStatus", &[("offeringId", id)]).await;
    assert_eq!(r.code(), "101", "{:?}", r.json);
    r.json["offeringDetails"][0]["offeringStatus"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// A client limited to `fields`, through the operator API.
async fn limited_client(t: &TestApp, fields: &[&str]) -> Creds {
    let c = t.new_client(json!({"scopes": ["*"]})).await;
    let path = format!("/operator/clients/{}/field-permissions", c.id);
    let r = t.operator(Method::PUT, &path, json!({ "fields": fields })).await;
    assert_eq!(r.status, 200, "{:?}", r.json);
    c
}

async fn remaining(t: &TestApp, id: &str) -> i64 {
    model::load(t.store(), &t.client_id, id)
        .await
        .unwrap()
        .unwrap()
        .rec
        .remaining_shares
}

fn assert_codes(cases: &[(&str, &Resp, &str)]) {
    for (label, r, want) in cases {
        assert_eq!(r.code(), *want, "{label}: {:?}", r.json);
    }
}

// ---------------------------------------------------------------- issuers

both!(create_issuer_answers_pending_and_fires, |t: TestApp| async move {
    let mut hook = Listener::start(200).await;
    t.register_webhook("createIssuer", &[&hook.url]).await;
    let r = t
        .put("createIssuer", &with(ISSUER, &[("phoneNumber", "5125550100")]))
        .await;
    assert_eq!((r.status, r.code()), (200, "101"), "{:?}", r.json);
    assert_eq!(r.json["issuerDetails"][0], json!(true));
    let rec = r.inserted("issuerDetails");
    let id = rec["issuerId"].as_str().unwrap().to_owned();
    assert!(id.parse::<u64>().unwrap() >= 100_000);
    assert_eq!(rec, &json!({"issuerId": id, "issuerStatus": "Pending"}));
    let got = hook.next(5).await.expect("createIssuer webhook");
    assert_eq!(got.pairs(), pairs(&[("issuerId", &id), ("issuerStatus", "Pending")]));

    let mut hook = Listener::start(200).await;
    t.register_webhook("getIssuer", &[&hook.url]).await;
    let r = t.post("getIssuer", &[("issuerId", &id)]).await;
    assert_eq!(r.code(), "101", "{:?}", r.json);
    assert_eq!(
        r.json["issuerDetails"],
        json!([{
            "issuerId": id, "issuerName": "Acme Capital", "firstName": "Ada", "lastName": "Stone",
            "email": "ada@acme.example", "phoneNumber": "5125550100", "issuerStatus": "Pending"
        }])
    );
    let got = hook.next(5).await.expect("getIssuer webhook");
    assert_eq!(
        got.pairs(),
        pairs(&[
            ("issuerId", &id),
            ("issuerName", "Acme Capital"),
            ("firstName", "Ada"),
            ("lastName", "Stone"),
            ("email", "ada@acme.example"),
            ("phoneNumber", "5125550100"),
            ("issuerStatus", "Pending"),
        ])
    );
    let other = issuer(&t).await;
    let r = t.post("getIssuer", &[("issuerId", &other)]).await;
    assert_eq!(r.json["issuerDetails"][0]["phoneNumber"], Value::Null, "no phone: null");
});

both!(create_issuer_rejections_write_nothing, |t: TestApp| async move {
    for (name, _) in ISSUER {
        let r = t.put("createIssuer", &without(ISSUER, &[*name])).await;
        assert_eq!(r.code(), "106", "{name}: {:?}", r.json);
        let r = t.put("createIssuer", &with(ISSUER, &[(*name, " ")])).await;
        assert_eq!(r.code(), "106", "blank {name}");
    }
    let r = t
        .put("createIssuer", &with(ISSUER, &[("phoneNumber", "512-555")]))
        .await;
    assert_eq!(r.code(), "106", "phoneNumber is an integer");
    let r = t.post("getAllIssuers", &[]).await;
    assert_eq!(r.json["issuerDetails"], json!([]), "nothing written");
    let r = t.get("/v3/issuers").await;
    assert_eq!((r.status, r.code()), (422, "239"), "empty list");
});

both!(
    issuer_required_fields_follow_the_field_permissions,
    |t: TestApp| async move {
        let c = limited_client(&t, &["firstName", "lastName", "email"]).await;
        let r = t
            .form_as(&c, Method::PUT, "createIssuer", &without(ISSUER, &["issuerName"]))
            .await;
        assert_eq!(
            r.code(),
            "101",
            "issuerName not enforced without its permission: {:?}",
            r.json
        );
        let r = t.form_as(&c, Method::PUT, "createIssuer", ISSUER).await;
        assert_eq!(r.code(), "110", "setting issuerName: {:?}", r.json);
        let r = t
            .form_as(
                &c,
                Method::PUT,
                "createIssuer",
                &without(ISSUER, &["issuerName", "email"]),
            )
            .await;
        assert_eq!(r.code(), "106", "email is still enforced");
        let i = issuer_as(&t, &t.creds()).await;
        let r = t
            .form_as(
                &c,
                Method::POST,
                "updateIssuer",
                &[("issuerId", &i), ("issuerStatus", "Active")],
            )
            .await;
        assert_eq!(r.code(), "110", "issuerStatus needs its permission");
        let r = t
            .form_as(
                &c,
                Method::PUT,
                "createIssuerAccount",
                &[("issuerId", i.as_str()), ("companyName", "X")],
            )
            .await;
        assert_eq!(r.code(), "110");
        let c = limited_client(&t, &["companyState"]).await;
        let r = t.form_as(&c, Method::PUT, "createIssuer", &[]).await;
        assert_eq!(r.code(), "101", "no required field is enforced: {:?}", r.json);
        assert_eq!(r.inserted("issuerDetails")["issuerStatus"], "Pending");
        let own = r.inserted("issuerDetails")["issuerId"].as_str().unwrap().to_owned();
        let r = t
            .form_as(
                &c,
                Method::PUT,
                "createIssuerAccount",
                &[("issuerId", own.as_str()), ("companyState", "TX")],
            )
            .await;
        assert_eq!(r.code(), "101", "only companyState is enforced: {:?}", r.json);
        let r = t
            .form_as(&c, Method::PUT, "createIssuerAccount", &[("issuerId", own.as_str())])
            .await;
        assert_eq!(r.code(), "106", "companyState missing");
    }
);

both!(update_issuer_stores_free_text_status, |t: TestApp| async move {
    let mut hook = Listener::start(200).await;
    t.register_webhook("updateIssuer", &[&hook.url]).await;
    let id = issuer(&t).await;
    let r = t
        .post(
            "updateIssuer",
            &[
                ("issuerId", &id),
                ("issuerStatus", "under review (q3)"),
                ("lastName", "Stone-Ng"),
            ],
        )
        .await;
    assert_eq!(r.code(), "101", "{:?}", r.json);
    assert_eq!(
        r.json["issuerDetails"],
        json!([true, [{"issuerId": id, "issuerStatus": "under review (q3)"}]])
    );
    let got = hook.next(5).await.expect("updateIssuer webhook");
    assert_eq!(
        got.pairs(),
        pairs(&[("issuerId", &id), ("issuerStatus", "under review (q3)")])
    );
    let g = t.post("getIssuer", &[("issuerId", &id)]).await;
    assert_eq!(g.json["issuerDetails"][0]["lastName"], "Stone-Ng");
    assert_eq!(
        g.json["issuerDetails"][0]["issuerName"], "Acme Capital",
        "unsent fields kept"
    );
    assert_codes(&[
        (
            "missing",
            &t.post("updateIssuer", &[("issuerStatus", "x")]).await,
            "106",
        ),
        (
            "malformed",
            &t.post("updateIssuer", &[("issuerId", "abc")]).await,
            "136",
        ),
        (
            "unknown",
            &t.post("updateIssuer", &[("issuerId", "999999")]).await,
            "136",
        ),
        (
            "blank name",
            &t.post("updateIssuer", &[("issuerId", &id), ("issuerName", "")]).await,
            "106",
        ),
        (
            "bad phone",
            &t.post("updateIssuer", &[("issuerId", &id), ("phoneNumber", "n/a")])
                .await,
            "106",
        ),
    ]);
    let g = t.post("getIssuer", &[("issuerId", &id)]).await;
    assert_eq!(
        g.json["issuerDetails"][0]["issuerStatus"], "under review (q3)",
        "rejections change nothing"
    );
});

both!(get_and_delete_issuer_errors, |t: TestApp| async move {
    let mut hook = Listener::start(200).await;
    t.register_webhook("deleteIssuer", &[&hook.url]).await;
    let id = issuer(&t).await;
    let r = t
        .put(
            "createIssuerAccount",
            &with(ISSUER_ACCOUNT, &[("issuerId", id.as_str())]),
        )
        .await;
    assert_eq!(r.code(), "101");
    let r = t.post("deleteIssuer", &[("issuerId", &id)]).await;
    assert_eq!((r.code(), r.desc()), ("101", "Issuer deleted successfully!"));
    let got = hook.next(5).await.expect("deleteIssuer webhook");
    assert_eq!(got.pairs(), pairs(&[("issuerId", &id)]));
    let other = t.new_client(json!({"scopes": ["*"]})).await;
    let theirs = issuer_as(&t, &other).await;
    assert_codes(&[
        ("get deleted", &t.post("getIssuer", &[("issuerId", &id)]).await, "136"),
        (
            "delete twice",
            &t.post("deleteIssuer", &[("issuerId", &id)]).await,
            "136",
        ),
        ("get missing", &t.post("getIssuer", &[]).await, "106"),
        (
            "get non-numeric",
            &t.post("getIssuer", &[("issuerId", "x1")]).await,
            "106",
        ),
        ("delete missing", &t.post("deleteIssuer", &[]).await, "106"),
        (
            "delete non-numeric",
            &t.post("deleteIssuer", &[("issuerId", "x1")]).await,
            "106",
        ),
        ("get unknown", &t.post("getIssuer", &[("issuerId", "100")]).await, "136"),
        (
            "another client's",
            &t.post("getIssuer", &[("issuerId", &theirs)]).await,
            "136",
        ),
        (
            "its account went with it",
            &t.post("getIssuerAccount", &[("issuerId", &id)]).await,
            "136",
        ),
    ]);
    let mut params = OFFERING.to_vec();
    params.push(("issuerId", id.as_str()));
    assert_eq!(t.put("createOffering", &params).await.code(), "136", "deleted issuer");
});

both!(issuer_lists_newest_first_with_their_scope, |t: TestApp| async move {
    let a = issuer(&t).await;
    let b = issuer(&t).await;
    let c = issuer(&t).await;
    t.post("deleteIssuer", &[("issuerId", &b)]).await;
    let r = t.post("getAllIssuers", &[]).await;
    assert_eq!(r.code(), "101");
    let ids: Vec<&str> = r.json["issuerDetails"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["issuerId"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [c.as_str(), a.as_str()]);
    assert_eq!(
        keys(&r.json["issuerDetails"][0]),
        [
            "issuerId",
            "issuerName",
            "firstName",
            "lastName",
            "email",
            "phoneNumber",
            "issuerStatus"
        ]
    );
    let r = t.get("/v3/issuers?limit=1").await;
    assert_eq!(r.code(), "101", "{:?}", r.json);
    assert_eq!(r.json["issuers"][0]["issuerId"], c.as_str());
    assert_eq!(
        r.json["pagination"],
        json!({"totalRecords": 2, "startIndex": 0, "endIndex": 0})
    );
    let r = t.get("/v3/issuers?deleted=true").await;
    assert_eq!(r.json["pagination"]["totalRecords"], json!(3));
    let r = t.get(&format!("/v3/issuers?filter[issuerId]={a}")).await;
    assert_eq!(r.json["issuers"].as_array().unwrap().len(), 1);
    let r = t.get("/v3/issuers?filter[nope]=1").await;
    assert_eq!((r.status, r.code()), (422, "1422"));
    let r = t.get("/v3/issuers?filter=%7Bbad").await;
    assert_eq!((r.status, r.code()), (400, "1400"));
    let r = t.get("/v3/issuers?limit=many").await;
    assert_eq!((r.status, r.code()), (422, "1422"));
    let medium = t.new_client(json!({"scopes": ["issuer.read.pii_medium"]})).await;
    assert_eq!(
        t.get_as(&medium, "/v3/issuers").await.code(),
        "239",
        "no issuers of its own"
    );
    let low = t
        .new_client(json!({"scopes": ["issuer.read.pii_low", "offering.read"]}))
        .await;
    let r = t.get_as(&low, "/v3/issuers").await;
    assert_eq!((r.status, r.code()), (403, "1403"));
});

// ---------------------------------------------------------------- issuer financial accounts

both!(
    create_issuer_account_inserts_then_updates_with_key_1,
    |t: TestApp| async move {
        let mut hook = Listener::start(200).await;
        t.register_webhook("createIssuerAccount", &[&hook.url]).await;
        let id = issuer(&t).await;
        let mut params = with(
            ISSUER_ACCOUNT,
            &[
                ("socialSecurityNumber", "123-45-6789"),
                ("dob", "01-02-1980"),
                ("companyTaxID", "123456789"),
                ("addressline1", "1 Main St"),
                ("residentUS", "Yes"),
            ],
        );
        params.push(("issuerId", id.as_str()));
        let r = t.put("createIssuerAccount", &params).await;
        assert_eq!(r.code(), "101", "{:?}", r.json);
        assert_eq!(r.json["Financial issuer details"][0], json!(true));
        let rec = r.inserted("Financial issuer details");
        assert_eq!(
            keys(rec),
            [
                "issuerId",
                "companyName",
                "companyState",
                "companyTaxID",
                "entityType",
                "issuingCountry",
                "accountType",
                "accountMiddleInitial",
                "socialSecurityNumber",
                "dob",
                "residentUS",
                "citizenUS",
                "addressLine1",
                "addressLine2",
                "city",
                "zip",
                "country",
                "additionalInfo",
                "issuerStatus",
                "createdDate",
                "createdIpAddress"
            ]
        );
        assert_eq!(rec["socialSecurityNumber"], "MTIzLTQ1LTY3ODk=", "base64");
        assert_eq!(rec["dob"], "MDEtMDItMTk4MA==");
        assert_eq!(rec["addressLine1"], "1 Main St");
        assert_eq!(rec["issuerStatus"], "Pending");
        assert_eq!(rec["createdIpAddress"], "10.0.0.1");
        let got = hook.next(5).await.expect("createIssuerAccount webhook");
        let created = rec["createdDate"].as_str().unwrap();
        assert_eq!(
            got.pairs(),
            pairs(&[
                ("issuerId", &id),
                ("companyName", "Acme Capital LLC"),
                ("companyState", "TX"),
                ("companyTaxID", "123456789"),
                ("entityType", ""),
                ("issuingCountry", "USA"),
                ("accountType", ""),
                ("accountMiddleInitial", ""),
                ("socialSecurityNumber", "REDACTED"),
                ("dob", "REDACTED"),
                ("residentUS", "Yes"),
                ("citizenUS", ""),
                ("addressLine1", "1 Main St"),
                ("addressLine2", ""),
                ("city", ""),
                ("zip", ""),
                ("country", ""),
                ("additionalInfo", ""),
                ("issuerStatus", "Pending"),
                ("createdDate", created),
                ("createdIpAddress", "10.0.0.1"),
            ])
        );

        let mut again = with(&params, &[("companyName", "Acme Capital II")]);
        again.retain(|(k, _)| *k != "dob");
        let r = t.put("createIssuerAccount", &again).await;
        assert_eq!(r.code(), "101", "{:?}", r.json);
        assert_eq!(
            keys(&r.json["Financial issuer details"]),
            ["1"],
            "an update holds key 1 only"
        );
        let rec = &r.json["Financial issuer details"]["1"][0];
        assert_eq!(rec["companyName"], "Acme Capital II");
        assert_eq!(rec["dob"], "", "a rewrite from the parameters");
        hook.next(5).await.expect("second createIssuerAccount webhook");

        let r = t.post("getIssuerAccount", &[("issuerId", &id)]).await;
        assert_eq!(r.code(), "101", "{:?}", r.json);
        assert_eq!(
            keys(&r.json),
            ["statusCode", "statusDesc", "issuerId", "Financial issuer details"]
        );
        let desc = &r.json["statusDesc"];
        assert_eq!(
            keys(desc),
            [
                "issuerId",
                "accountfirstName",
                "accountlastName",
                "accountType",
                "companyName",
                "companyState",
                "entityType",
                "companyTaxID",
                "accountMiddleInitial",
                "socialSecurityNumber",
                "dob",
                "residentUS",
                "citizenUS",
                "addressLine1",
                "addressLine2",
                "city",
                "state",
                "zip",
                "country",
                "issuingCountry",
                "additionalInfo",
                "issuerAccountStatus"
            ]
        );
        assert_eq!(desc["socialSecurityNumber"], "123-45-6789", "decoded");
        assert_eq!(desc["companyName"], "Acme Capital II");
        assert_eq!(desc["issuerAccountStatus"], "Active");
        assert_eq!(r.json["Financial issuer details"], json!([]));
    }
);

both!(create_issuer_account_rejections, |t: TestApp| async move {
    let id = issuer(&t).await;
    let base = with(ISSUER_ACCOUNT, &[("issuerId", id.as_str())]);
    for name in [
        "issuerId",
        "companyName",
        "companyState",
        "createdIpAddress",
        "issuingCountry",
    ] {
        let r = t.put("createIssuerAccount", &without(&base, &[name])).await;
        assert_eq!(r.code(), "106", "{name}: {:?}", r.json);
    }
    for (name, bad) in [
        ("issuerId", "12a"),
        ("companyState", "Texas"),
        ("companyTaxID", "12-3456789"),
        ("companyTaxID", "12345"),
        ("socialSecurityNumber", "123456"),
        ("dob", "1980/01/02"),
    ] {
        let r = t.put("createIssuerAccount", &with(&base, &[(name, bad)])).await;
        assert_eq!(r.code(), "106", "{name}={bad}: {:?}", r.json);
    }
    let r = t
        .put("createIssuerAccount", &with(&base, &[("issuerId", "999999")]))
        .await;
    assert_eq!(r.code(), "136");
    let r = t.post("getIssuerAccount", &[("issuerId", &id)]).await;
    assert_eq!(r.code(), "136", "nothing was written");
    assert_codes(&[
        ("get missing", &t.post("getIssuerAccount", &[]).await, "106"),
        (
            "get non-numeric",
            &t.post("getIssuerAccount", &[("issuerId", "a")]).await,
            "106",
        ),
        (
            "get unknown issuer",
            &t.post("getIssuerAccount", &[("issuerId", "999999")]).await,
            "136",
        ),
    ]);
});

both!(
    issuer_custodian_records_are_listed_and_deleted_by_provider,
    |t: TestApp| async move {
        let mut hook = Listener::start(200).await;
        t.register_webhook("deleteIssuerAccount", &[&hook.url]).await;
        let id = issuer(&t).await;
        let r = t
            .put(
                "createIssuerAccount",
                &with(ISSUER_ACCOUNT, &[("issuerId", id.as_str())]),
            )
            .await;
        assert_eq!(r.code(), "101");
        for (provider, name) in [("7", "First Custody"), ("12", "Second Custody")] {
            let rec = CustodianRecord {
                providerid: provider.into(),
                custodian_name: name.into(),
                custodian_account_number: "5550001".into(),
                routing_number: "021000021".into(),
                account_number: "000123".into(),
                account_name: "Acme".into(),
                funds: "10.000000".into(),
            };
            t.store()
                .write(vec![custodian_write(&t.client_id, &id, &rec)])
                .await
                .unwrap();
        }
        let r = t.post("getIssuerAccount", &[("issuerId", &id)]).await;
        let recs = r.json["Financial issuer details"].as_array().unwrap().clone();
        assert_eq!(recs.len(), 2);
        assert_eq!(
            recs[0],
            json!({"providerid": "7", "CustodianName": "First Custody", "CustodianAccountNumber": "NTU1MDAwMQ==",
                   "RoutingNumber": "MDIxMDAwMDIx", "AccountNumber": "MDAwMTIz", "AccountName": "Acme", "funds": "10.000000"})
        );
        assert_codes(&[
            (
                "unknown provider",
                &t.post("deleteIssuerAccount", &[("issuerId", &id), ("providerid", "8")])
                    .await,
                "136",
            ),
            (
                "bad provider",
                &t.post("deleteIssuerAccount", &[("issuerId", &id), ("providerid", "x")])
                    .await,
                "106",
            ),
            ("missing issuer", &t.post("deleteIssuerAccount", &[]).await, "106"),
            (
                "unknown issuer",
                &t.post("deleteIssuerAccount", &[("issuerId", "999999")]).await,
                "136",
            ),
        ]);
        let r = t
            .post("deleteIssuerAccount", &[("issuerId", &id), ("providerid", "12")])
            .await;
        assert_eq!(
            (r.code(), r.desc()),
            ("101", "Issuer Financial Account deleted successfully!")
        );
        let got = hook.next(5).await.expect("deleteIssuerAccount webhook");
        assert_eq!(got.pairs(), pairs(&[("issuerId", &id), ("providerid", "12")]));
        let r = t.post("getIssuerAccount", &[("issuerId", &id)]).await;
        assert_eq!(r.json["Financial issuer details"].as_array().unwrap().len(), 1);
        let r = t.post("deleteIssuerAccount", &[("issuerId", &id)]).await;
        assert_eq!(r.code(), "101");
        let got = hook.next(5).await.expect("deleteIssuerAccount webhook");
        assert_eq!(got.pairs(), pairs(&[("issuerId", &id)]));
        assert_eq!(t.post("getIssuerAccount", &[("issuerId", &id)]).await.code(), "136");
        assert_eq!(t.post("deleteIssuerAccount", &[("issuerId", &id)]).await.code(), "136");
        let r = t
            .put(
                "createIssuerAccount",
                &with(ISSUER_ACCOUNT, &[("issuerId", id.as_str())]),
            )
            .await;
        assert_eq!(
            r.json["Financial issuer details"][0],
            json!(true),
            "a new account after a delete"
        );
        let r = t.post("getIssuerAccount", &[("issuerId", &id)]).await;
        assert_eq!(
            r.json["Financial issuer details"],
            json!([]),
            "custodian records went with it"
        );
    }
);

// ---------------------------------------------------------------- offerings

both!(create_offering_derives_total_shares, |t: TestApp| async move {
    let mut hook = Listener::start(200).await;
    t.register_webhook("createOffering", &[&hook.url]).await;
    let i = issuer(&t).await;
    let mut params = with(
        OFFERING,
        &[
            ("issueType", "collectibles"),
            ("escrowAccountNumber", "999"),
            ("maxAmount", "1005.5"),
            ("unitPrice", "2.5"),
            ("targetAmount", "900"),
            ("field2", "x"),
        ],
    );
    params.push(("issuerId", i.as_str()));
    let r = t.put("createOffering", &params).await;
    assert_eq!(r.code(), "101", "{:?}", r.json);
    let id = r.inserted("offeringDetails")["offeringId"].as_str().unwrap().to_owned();
    assert!(id.parse::<u64>().unwrap() >= 100_000);
    assert_eq!(
        r.json["offeringDetails"],
        json!([true, [{"offeringId": id, "offeringStatus": "Pending"}]])
    );
    let got = hook.next(5).await.expect("createOffering webhook");
    assert_eq!(
        got.pairs(),
        pairs(&[("offeringId", &id), ("offeringStatus", "Pending")])
    );
    let o = get_offering(&t, &id).await;
    assert_eq!(
        o,
        json!({
            "issuerId": i, "offeringId": id, "issueName": "Acme Series A", "issueType": "collectibles",
            "targetAmount": "900.000000", "minAmount": "1000.000000", "maxAmount": "1005.500000",
            "unitPrice": "2.500000", "totalShares": "402", "remainingShares": "402",
            "startDate": "01-01-2026", "endDate": "12-31-2026", "offeringStatus": "Pending",
            "offeringText": "Shares of Acme", "stampingText": "CONFIDENTIAL", "escrowAccountNumber": "",
            "field1": "", "field2": "x", "field3": ""
        })
    );
    let id2 = offering(&t, &[("totalShares", "250")]).await;
    let o = get_offering(&t, &id2).await;
    assert_eq!(
        (o["totalShares"].as_str(), o["remainingShares"].as_str()),
        (Some("250"), Some("250"))
    );
    let id3 = offering(&t, &[]).await;
    assert_eq!(get_offering(&t, &id3).await["totalShares"], "10000", "100000 / 10");
});

both!(create_offering_rejections_write_nothing, |t: TestApp| async move {
    let i = issuer(&t).await;
    let base = with(OFFERING, &[("issuerId", i.as_str())]);
    for (name, _) in &base {
        let r = t.put("createOffering", &without(&base, &[*name])).await;
        assert_eq!(r.code(), "106", "{name}: {:?}", r.json);
    }
    for (name, bad) in [
        ("issuerId", "abc"),
        ("targetAmount", "lots"),
        ("minAmount", "-5"),
        ("maxAmount", "1e6"),
        ("unitPrice", "1.1234567"),
        ("unitPrice", "0"),
        ("targetAmount", "100001"),
        ("minAmount", "200000"),
        ("startDate", "2026/01/01"),
        ("endDate", "13-45-2026"),
        ("totalShares", "1.5"),
        ("totalShares", "-3"),
    ] {
        let r = t.put("createOffering", &with(&base, &[(name, bad)])).await;
        assert_eq!(r.code(), "106", "{name}={bad}: {:?}", r.json);
    }
    let r = t.put("createOffering", &with(&base, &[("issuerId", "424242")])).await;
    assert_eq!(r.code(), "136", "unknown issuer");
    let r = t.post("getAllOffers", &[]).await;
    assert_eq!(r.json["offeringDetails"], json!([]), "nothing was written");
});

both!(update_offering_enforces_issue_type_and_fires, |t: TestApp| async move {
    let mut hook = Listener::start(200).await;
    t.register_webhook("updateOffering", &[&hook.url]).await;
    let id = offering(&t, &[("field1", "a")]).await;
    let before = get_offering(&t, &id).await;
    let r = t
        .post(
            "updateOffering",
            &[
                ("offeringId", &id),
                ("issueType", "debt"),
                ("unitPrice", "20"),
                ("offeringStatus", "Denied"),
                ("escrowAccountNumber", "ignored"),
            ],
        )
        .await;
    assert_eq!(r.code(), "101", "{:?}", r.json);
    assert_eq!(r.json["offeringDetails"][0], json!(true));
    let after = r.inserted("offeringDetails").clone();
    assert_eq!(after["issueType"], "debt");
    assert_eq!(after["unitPrice"], "20.000000");
    assert_eq!(after["totalShares"], "5000", "derived again from maxAmount / unitPrice");
    assert_eq!(after["remainingShares"], "5000");
    assert_eq!(after["offeringStatus"], "Denied");
    assert_eq!(after["escrowAccountNumber"], "", "set only by the operator");
    assert_eq!(get_offering(&t, &id).await, after);
    let got = hook.next(5).await.expect("updateOffering webhook");
    let created = t.get(&format!("/v3/offerings?filter[offeringId]={id}")).await;
    let created = &created.json["offerings"][0];
    let i = before["issuerId"].as_str().unwrap();
    assert_eq!(
        got.pairs(),
        pairs(&[
            ("issuerId", i),
            ("offeringId", &id),
            ("issueName", "Acme Series A"),
            ("issueType", "debt"),
            ("targetAmount", "50000.000000"),
            ("minAmount", "1000.000000"),
            ("maxAmount", "100000.000000"),
            ("unitPrice", "20.000000"),
            ("totalShares", "5000"),
            ("remainingShares", "5000"),
            ("startDate", "01-01-2026"),
            ("endDate", "12-31-2026"),
            ("offeringStatus", "Denied"),
            ("offeringText", "Shares of Acme"),
            ("stampingText", "CONFIDENTIAL"),
            ("escrowAccountNumber", ""),
            ("field1", "a"),
            ("field2", ""),
            ("field3", ""),
            ("createdDate", created["createdDate"].as_str().unwrap()),
            ("createdIPAddress", "127.0.0.1"),
        ])
    );
    let other = t.new_client(json!({"scopes": ["*"]})).await;
    let theirs = offering_as(&t, &other, &[]).await;
    assert_codes(&[
        (
            "stray issueType",
            &t.post("updateOffering", &[("offeringId", &id), ("issueType", "Stuff")])
                .await,
            "106",
        ),
        (
            "approval is the operator's",
            &t.post("updateOffering", &[("offeringId", &id), ("offeringStatus", "Approved")])
                .await,
            "106",
        ),
        (
            "closed is closeOffering's",
            &t.post("updateOffering", &[("offeringId", &id), ("offeringStatus", "closed")])
                .await,
            "106",
        ),
        (
            "blank name",
            &t.post("updateOffering", &[("offeringId", &id), ("issueName", "")])
                .await,
            "106",
        ),
        (
            "target above max",
            &t.post("updateOffering", &[("offeringId", &id), ("targetAmount", "100000.01")])
                .await,
            "106",
        ),
        (
            "bad amount",
            &t.post("updateOffering", &[("offeringId", &id), ("maxAmount", "x")])
                .await,
            "106",
        ),
        (
            "missing id",
            &t.post("updateOffering", &[("issueName", "x")]).await,
            "106",
        ),
        (
            "non-numeric id",
            &t.post("updateOffering", &[("offeringId", "o1")]).await,
            "106",
        ),
        (
            "unknown",
            &t.post("updateOffering", &[("offeringId", "999999")]).await,
            "138",
        ),
        (
            "another client's",
            &t.post("updateOffering", &[("offeringId", &theirs)]).await,
            "138",
        ),
    ]);
    assert_eq!(get_offering(&t, &id).await, after, "rejections change nothing");
});

both!(
    update_offering_cannot_take_back_reserved_shares,
    |t: TestApp| async move {
        let id = offering(&t, &[("totalShares", "10")]).await;
        t.store()
            .write(vec![reserve_shares(&t.client_id, &id, 8)])
            .await
            .unwrap();
        let r = t
            .post("updateOffering", &[("offeringId", &id), ("totalShares", "7")])
            .await;
        assert_eq!(r.code(), "106", "{:?}", r.json);
        let r = t
            .post("updateOffering", &[("offeringId", &id), ("totalShares", "8")])
            .await;
        assert_eq!(r.code(), "101", "{:?}", r.json);
        let o = get_offering(&t, &id).await;
        assert_eq!(
            (o["totalShares"].as_str(), o["remainingShares"].as_str()),
            (Some("8"), Some("0"))
        );
        let r = t
            .post("updateOffering", &[("offeringId", &id), ("totalShares", "15")])
            .await;
        assert_eq!(r.inserted("offeringDetails")["remainingShares"], "7");
        assert_eq!(remaining(&t, &id).await, 7);
    }
);

both!(get_offering_errors, |t: TestApp| async move {
    let other = t.new_client(json!({"scopes": ["*"]})).await;
    let theirs = offering_as(&t, &other, &[]).await;
    for op in [
        "getOffering",
        "getOfferingStatus",
        "getOfferingDetails",
        "getOfferingPurchaseHistory",
        "getCustodianDetailsforOffering",
        "deleteOffering",
        "cancelOffering",
        "closeOffering",
        "reopenOffering",
    ] {
        assert_codes(&[
            (op, &t.post(op, &[]).await, "106"),
            (op, &t.post(op, &[("offeringId", "12x")]).await, "106"),
            (op, &t.post(op, &[("offeringId", "999999")]).await, "138"),
            (op, &t.post(op, &[("offeringId", &theirs)]).await, "138"),
        ]);
    }
});

both!(offering_lists_search_and_get_all, |t: TestApp| async move {
    let a = offering(&t, &[("issueName", "Alpha Fund")]).await;
    let b = offering(&t, &[("issueName", "Beta Notes"), ("issueType", "Debt")]).await;
    let c = offering(&t, &[("issueName", "Gamma")]).await;
    assert_eq!(t.post("deleteOffering", &[("offeringId", &c)]).await.code(), "101");
    let r = t.post("getAllOffers", &[]).await;
    let all = r.json["offeringDetails"].as_array().unwrap();
    assert_eq!(all.len(), 2);
    assert_eq!(all[0]["offeringId"], b.as_str(), "newest first");
    assert_eq!(
        keys(&all[0]),
        [
            "issuerId",
            "offeringId",
            "issueName",
            "issueType",
            "targetAmount",
            "minAmount",
            "maxAmount",
            "unitPrice",
            "totalShares",
            "remainingShares",
            "startDate",
            "endDate",
            "offeringStatus",
            "offeringText",
            "stampingText",
            "createdDate",
            "createdIPAddress"
        ]
    );
    let r = t.get("/v3/offerings").await;
    assert_eq!(r.code(), "101", "{:?}", r.json);
    assert_eq!(r.json["pagination"]["totalRecords"], json!(2));
    assert_eq!(r.json["offerings"][0]["virtualStatus"], "ACTIVE");
    let r = t.get("/v3/offerings?deleted=true&filter[virtualStatus]=DELETED").await;
    assert_eq!(r.json["offerings"][0]["offeringId"], c.as_str());
    let r = t
        .get("/v3/offerings?filter=%7B%22issueType%22%3A%22Debt%22%7D&sort=offeringId:asc")
        .await;
    assert_eq!(r.json["offerings"].as_array().unwrap().len(), 1);
    assert_eq!(r.json["offerings"][0]["offeringId"], b.as_str());
    let r = t
        .get("/v3/offerings?filter[remainingShares][min]=10000&sort=createdDate:asc")
        .await;
    assert_eq!(r.json["offerings"][0]["offeringId"], a.as_str());
    let r = t.get("/v3/offerings?offset=5").await;
    assert_eq!((r.status, r.code()), (422, "239"));
    let r = t.get("/v3/offerings?sort=bogus:asc").await;
    assert_eq!((r.status, r.code()), (422, "1422"));
    let no_scope = t.new_client(json!({"scopes": ["issuer.read"]})).await;
    let r = t.get_as(&no_scope, "/v3/offerings").await;
    assert_eq!((r.status, r.code()), (403, "1403"));

    let r = t.post("searchOffering", &[("searchKeyword", "alpha")]).await;
    assert_eq!(r.code(), "101");
    let found = r.json["offeringDetails"].as_array().unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(found[0]["offeringId"], a.as_str());
    assert_eq!(found[0]["escrowAccountNumber"], "", "getOffering objects");
    let r = t.post("searchOffering", &[("searchKeyword", "gamma")]).await;
    assert_eq!(r.json["offeringDetails"], json!([]), "deleted offerings are not found");
    assert_eq!(t.post("searchOffering", &[]).await.code(), "106");
});

// ---------------------------------------------------------------- lifecycle

both!(delete_offering_is_virtual_and_fires_deleted, |t: TestApp| async move {
    let mut hook = Listener::start(200).await;
    t.register_webhook("deleteOffering", &[&hook.url]).await;
    let id = offering(&t, &[]).await;
    let r = t.post("deleteOffering", &[("offeringId", &id)]).await;
    assert_eq!(r.code(), "101");
    assert_eq!(r.json["offeringDetails"], "Offer deleted successfully!");
    let got = hook.next(5).await.expect("deleteOffering webhook");
    assert_eq!(
        got.pairs(),
        pairs(&[("offeringId", &id), ("offeringStatus", "DELETED")])
    );
    assert_eq!(t.post("getOffering", &[("offeringId", &id)]).await.code(), "138");
    assert_eq!(t.post("deleteOffering", &[("offeringId", &id)]).await.code(), "138");
    let r = t.get("/v3/offerings?deleted=true").await;
    assert_eq!(r.json["offerings"][0]["virtualStatus"], "DELETED");
    let err = t.store().write(vec![reserve_shares(&t.client_id, &id, 1)]).await;
    assert!(matches!(err, Err(StoreError::ConditionFailed { .. })), "{err:?}");
});

both!(
    cancel_offering_stores_cancelled_and_fires_canceled,
    |t: TestApp| async move {
        let mut hook = Listener::start(200).await;
        t.register_webhook("cancelOffering", &[&hook.url]).await;
        let id = offering(&t, &[]).await;
        let r = t.post("cancelOffering", &[("offeringId", &id)]).await;
        assert_eq!(r.code(), "101", "{:?}", r.json);
        assert_eq!(r.json["Financial offering details"], id.as_str());
        let got = hook.next(5).await.expect("cancelOffering webhook");
        assert_eq!(
            got.pairs(),
            pairs(&[("offeringId", &id), ("offeringStatus", "CANCELED")])
        );
        assert_eq!(status_of(&t, &id).await, "cancelled");
        let err = t.store().write(vec![reserve_shares(&t.client_id, &id, 1)]).await;
        assert!(
            matches!(err, Err(StoreError::ConditionFailed { .. })),
            "no investments: {err:?}"
        );
        assert_eq!(
            t.post("reopenOffering", &[("offeringId", &id)]).await.code(),
            "106",
            "only closed offerings reopen"
        );
        // Closed after its cancellation, it still does not come back.
        assert_eq!(t.post("closeOffering", &[("offeringId", &id)]).await.code(), "101");
        let r = t.post("reopenOffering", &[("offeringId", &id)]).await;
        assert_eq!(r.code(), "106", "{:?}", r.json);
        assert_eq!(status_of(&t, &id).await, "closed");
    }
);

both!(close_offering_waits_for_every_trade_to_close, |t: TestApp| async move {
    let mut hook = Listener::start(200).await;
    t.register_webhook("closeOffering", &[&hook.url]).await;
    let id = offering(&t, &[("totalShares", "100")]).await;
    let open = change_write(&t.client_id, &id, &OfferingChange::new_trade(5, Decimal::new(50, 0)));
    t.store().write(vec![open]).await.unwrap();
    let r = t.post("closeOffering", &[("offeringId", &id)]).await;
    assert_eq!(r.code(), "106", "a CREATED trade keeps it open: {:?}", r.json);
    assert_eq!(status_of(&t, &id).await, "Pending");
    // The trade is funded: it enters a closing state.
    let funded = OfferingChange {
        open_trades: -1,
        pending: Decimal::new(-50, 0),
        funded: Decimal::new(50, 0),
        ..OfferingChange::default()
    };
    t.store()
        .write(vec![change_write(&t.client_id, &id, &funded)])
        .await
        .unwrap();
    let r = t.post("closeOffering", &[("offeringId", &id)]).await;
    assert_eq!(r.code(), "101", "{:?}", r.json);
    assert_eq!(r.json["OfferID"], id.as_str());
    let got = hook.next(5).await.expect("closeOffering webhook");
    assert_eq!(got.pairs(), pairs(&[("offeringId", &id), ("offeringStatus", "CLOSED")]));
    assert_eq!(status_of(&t, &id).await, "closed");
    let err = t.store().write(vec![reserve_shares(&t.client_id, &id, 1)]).await;
    assert!(
        matches!(err, Err(StoreError::ConditionFailed { .. })),
        "closed: {err:?}"
    );
    assert_eq!(remaining(&t, &id).await, 95);
    let empty = offering(&t, &[]).await;
    assert_eq!(
        t.post("closeOffering", &[("offeringId", &empty)]).await.code(),
        "101",
        "no trades: closes"
    );
});

both!(
    reopen_offering_restores_the_status_before_close,
    |t: TestApp| async move {
        let mut hook = Listener::start(200).await;
        t.register_webhook("reopenOffering", &[&hook.url]).await;
        let id = offering(&t, &[]).await;
        let path = format!("/operator/clients/{}/offerings/{id}/approve", t.client_id);
        assert_eq!(t.operator(Method::POST, &path, json!({})).await.status, 200);
        assert_eq!(
            t.post("reopenOffering", &[("offeringId", &id)]).await.code(),
            "106",
            "not closed"
        );
        assert_eq!(t.post("closeOffering", &[("offeringId", &id)]).await.code(), "101");
        let r = t.post("reopenOffering", &[("offeringId", &id)]).await;
        assert_eq!(r.code(), "101", "{:?}", r.json);
        assert_eq!(
            r.json["offeringDetails"],
            json!([{"offeringId": id, "offeringStatus": "Approved"}])
        );
        let got = hook.next(5).await.expect("reopenOffering webhook");
        assert_eq!(
            got.pairs(),
            pairs(&[("offeringId", &id), ("offeringStatus", "REOPENED")])
        );
        assert_eq!(status_of(&t, &id).await, "Approved");
        t.store()
            .write(vec![reserve_shares(&t.client_id, &id, 1)])
            .await
            .expect("a reopened offering accepts investments again");
    }
);

// ---------------------------------------------------------------- funding reads

both!(offering_details_show_totals_and_escrow, |t: TestApp| async move {
    let mut hook = Listener::start(200).await;
    t.register_webhook("getOfferingDetails", &[&hook.url]).await;
    let id = offering(&t, &[]).await;
    let r = t.post("getOfferingDetails", &[("offeringId", &id)]).await;
    assert_eq!(
        r.json["Offering purchased details"],
        json!([{"escrowAccountNumber": "", "pendingAmount": "0.000000", "fundedAmount": "0.000000", "committedAmount": "0.000000"}])
    );
    hook.next(5).await.expect("getOfferingDetails webhook");
    let path = format!("/operator/clients/{}/offerings/{id}/escrow-account", t.client_id);
    let r = t
        .operator(
            Method::PUT,
            &path,
            json!({"escrowAccountNumber": "ESC-100", "escrowBank": "First Bank", "escrowAccountStatus": "open",
                   "openDate": "2026-01-02", "expirationDate": null, "closeDate": null}),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.json);
    let change = OfferingChange::new_trade(3, Decimal::new(30125, 2));
    t.store()
        .write(vec![change_write(&t.client_id, &id, &change)])
        .await
        .unwrap();
    let r = t.post("getOfferingDetails", &[("offeringId", &id)]).await;
    assert_eq!(
        r.json["Offering purchased details"],
        json!([{"escrowAccountNumber": "ESC-100", "pendingAmount": "301.250000", "fundedAmount": "0.000000", "committedAmount": "301.250000"}])
    );
    let got = hook.next(5).await.expect("getOfferingDetails webhook");
    assert_eq!(
        got.pairs(),
        pairs(&[
            ("offeringId", &id),
            ("escrowAccountNumber", "ESC-100"),
            ("pendingAmount", "301.250000"),
            ("fundedAmount", "0.000000"),
            ("committedAmount", "301.250000"),
        ])
    );
    assert_eq!(get_offering(&t, &id).await["escrowAccountNumber"], "ESC-100");
});

both!(purchase_history_reads_the_trades_index, |t: TestApp| async move {
    let mut hook = Listener::start(200).await;
    t.register_webhook("getOfferingPurchaseHistory", &[&hook.url]).await;
    let id = offering(&t, &[]).await;
    let r = t.post("getOfferingPurchaseHistory", &[("offeringId", &id)]).await;
    assert_eq!(r.code(), "101");
    assert_eq!(
        r.json["Offering purchased details"],
        json!({"offering_purchase_history": []})
    );
    hook.next(5).await.expect("webhook");
    let entry = |trade: &str, deleted: bool| PurchaseEntry {
        trade_id: trade.into(),
        account_id: "A1000001".into(),
        offering_id: id.clone(),
        total_amount: Decimal::new(2500, 1),
        total_shares: 25,
        purchase_date: "2026-02-03 04:05:06".into(),
        account_name: "Ann Lee".into(),
        order_status: "CREATED".into(),
        deleted,
    };
    let writes = vec![
        purchase_write(&t.client_id, &entry("100010", false)),
        purchase_write(&t.client_id, &entry("100002", false)),
        purchase_write(&t.client_id, &entry("100003", true)),
        reserve_shares(&t.client_id, &id, 50),
    ];
    t.store().write(writes).await.unwrap();
    let r = t.post("getOfferingPurchaseHistory", &[("offeringId", &id)]).await;
    let history = r.json["Offering purchased details"]["offering_purchase_history"]
        .as_array()
        .unwrap();
    assert_eq!(history.len(), 2, "deleted entries are left out");
    assert_eq!(
        history[0],
        json!({"tradeId": "100002", "accountId": "A1000001", "offeringId": id, "totalAmount": "250.000000",
               "totalShares": "25", "purchaseDate": "2026-02-03 04:05:06", "accountName": "Ann Lee",
               "offeringTotalShares": "10000", "targetAmount": "50000.000000", "remainingShares": "9950"})
    );
    assert_eq!(history[1]["tradeId"], "100010", "in trade ID order");
    let got = hook.next(5).await.expect("webhook");
    assert_eq!(
        got.pairs(),
        pairs(&[("offeringId", &id), ("tradeIds", "100002,100010")])
    );
});

both!(
    custodian_details_have_every_key_from_the_settings,
    |t: TestApp| async move {
        let id = offering(&t, &[]).await;
        let r = t.post("getCustodianDetailsforOffering", &[("offeringId", &id)]).await;
        assert_eq!(r.code(), "101", "{:?}", r.json);
        let d = &r.json["custodianDetails"];
        assert_eq!(keys(d), ["name", "additionaldescription", "wire", "check"]);
        assert_eq!(d["wire"].as_object().unwrap().len(), 15);
        assert_eq!(d["check"].as_object().unwrap().len(), 14);
        assert!(d["wire"].as_object().unwrap().values().all(|v| v == ""));
        assert_eq!(d["name"], "");
        let path = format!("/operator/clients/{}/custodian-settings", t.client_id);
        let body = json!({"name": "Example Custody", "wire": {"receivingbank": "First Bank", "routingnumber": "021000021"},
                          "check": {"mailto": "Example Custody", "postalzip": "10001"}});
        let r = t.operator(Method::PUT, &path, body).await;
        assert_eq!(r.status, 200, "{:?}", r.json);
        let r = t.post("getCustodianDetailsforOffering", &[("offeringId", &id)]).await;
        let d = &r.json["custodianDetails"];
        assert_eq!(d["name"], "Example Custody");
        assert_eq!(d["additionaldescription"], "");
        assert_eq!(d["wire"]["receivingbank"], "First Bank");
        assert_eq!(d["wire"]["routingnumber"], "021000021");
        assert_eq!(d["wire"]["swiftcode"], "");
        assert_eq!(d["check"]["postalzip"], "10001");
        assert_eq!(keys(&d["wire"])[0], "description", "part 2's order");
        let r = t.operator(Method::PUT, &path, json!({"wire": {"ach": "no"}})).await;
        assert_eq!(r.status, 400, "wire and check only");
        let r = t
            .operator(Method::PUT, "/operator/clients/nobody/custodian-settings", json!({}))
            .await;
        assert_eq!(r.status, 404);
    }
);

// ---------------------------------------------------------------- operator

both!(operator_approves_and_links_escrow_accounts, |t: TestApp| async move {
    let a = offering(&t, &[]).await;
    let b = offering(&t, &[]).await;
    let approve = |id: &str| format!("/operator/clients/{}/offerings/{id}/approve", t.client_id);
    let escrow = |id: &str| format!("/operator/clients/{}/offerings/{id}/escrow-account", t.client_id);
    let r = t.operator(Method::POST, &approve(&a), json!({})).await;
    assert_eq!(r.status, 200, "{:?}", r.json);
    assert_eq!(r.json["offeringStatus"], "Approved");
    assert_eq!(status_of(&t, &a).await, "Approved");
    assert_eq!(
        t.operator(Method::POST, &approve(&a), json!({})).await.status,
        200,
        "again"
    );
    assert_eq!(t.post("cancelOffering", &[("offeringId", &b)]).await.code(), "101");
    assert_eq!(t.operator(Method::POST, &approve(&b), json!({})).await.status, 409);
    assert_eq!(
        t.operator(Method::POST, &approve("999999"), json!({})).await.status,
        404
    );
    assert_eq!(t.operator(Method::POST, &approve("x1"), json!({})).await.status, 404);
    let c = offering(&t, &[]).await;
    assert_eq!(t.post("deleteOffering", &[("offeringId", &c)]).await.code(), "101");
    assert_eq!(
        t.operator(Method::POST, &approve(&c), json!({})).await.status,
        404,
        "a deleted offering"
    );
    let r = t
        .operator(
            Method::POST,
            &format!("/operator/clients/nobody/offerings/{a}/approve"),
            json!({}),
        )
        .await;
    assert_eq!(r.status, 404);

    let account = json!({"escrowAccountNumber": "ESC-7", "escrowBank": "Bank", "escrowAccountStatus": "open"});
    for id in [&a, &b] {
        let r = t.operator(Method::PUT, &escrow(id), account.clone()).await;
        assert_eq!(r.status, 200, "{:?}", r.json);
        assert_eq!(r.json["escrowAccountNumber"], "ESC-7");
        assert_eq!(
            get_offering(&t, id).await["escrowAccountNumber"],
            "ESC-7",
            "shared account"
        );
    }
    let stored = model::escrow_account(t.store(), &t.client_id, "ESC-7")
        .await
        .unwrap()
        .unwrap();
    assert_eq!((stored.bank.as_str(), stored.status.as_str()), ("Bank", "open"));
    for bad in [
        json!({"escrowBank": "Bank"}),
        json!({"escrowAccountNumber": "ESC-7", "escrowAccountStatus": "frozen"}),
        json!({"escrowAccountNumber": "ESC-7", "openDate": "01-02-2026"}),
        json!({"escrowAccountNumber": "ESC 7"}),
        json!({"escrowAccountNumber": "ESC-7", "extra": 1}),
    ] {
        let r = t.operator(Method::PUT, &escrow(&a), bad.clone()).await;
        assert_eq!(r.status, 400, "{bad}: {:?}", r.json);
    }
    assert_eq!(t.operator(Method::PUT, &escrow("999999"), account).await.status, 404);
});

// ---------------------------------------------------------------- shares reservation

/// Runs `n` concurrent reservations of `units` each, as single writes or inside a
/// transaction with another item (as createTrade will); answers how many succeeded.
async fn concurrent_reservations(store: Arc<dyn Store>, client: &str, id: &str, n: usize, units: u64) -> usize {
    let tasks: Vec<_> = (0..n)
        .map(|k| {
            let (store, client, id) = (store.clone(), client.to_owned(), id.to_owned());
            tokio::spawn(async move {
                let mut writes = vec![reserve_shares(&client, &id, units)];
                if k % 2 == 1 {
                    let entry = PurchaseEntry {
                        trade_id: format!("{}", 500_000 + k),
                        offering_id: id.clone(),
                        ..PurchaseEntry::default()
                    };
                    writes.push(purchase_write(&client, &entry));
                }
                store.write(writes).await.is_ok()
            })
        })
        .collect();
    let mut won = 0;
    for task in tasks {
        if task.await.unwrap() {
            won += 1;
        }
    }
    won
}

both!(concurrent_reservations_never_oversell, |t: TestApp| async move {
    let store = t.app.store.clone();
    let id = offering(&t, &[("totalShares", "10")]).await;
    let won = concurrent_reservations(store.clone(), &t.client_id, &id, 30, 1).await;
    assert!(won <= 10, "{won} winners");
    assert_eq!(remaining(&t, &id).await, 10 - won as i64);
    while t
        .store()
        .write(vec![reserve_shares(&t.client_id, &id, 1)])
        .await
        .is_ok()
    {}
    assert_eq!(remaining(&t, &id).await, 0, "never below zero");
    let err = t.store().write(vec![reserve_shares(&t.client_id, &id, 1)]).await;
    assert!(matches!(err, Err(StoreError::ConditionFailed { .. })), "{err:?}");

    let id = offering(&t, &[("totalShares", "10")]).await;
    let won = concurrent_reservations(store, &t.client_id, &id, 12, 3).await;
    assert!(won <= 3, "{won} winners of 3 units out of 10");
    let left = remaining(&t, &id).await;
    assert_eq!(left, 10 - 3 * won as i64);
    assert!(left >= 0);
    let o = model::load(t.store(), &t.client_id, &id).await.unwrap().unwrap().rec;
    assert_eq!(o.open_trades, won as i64, "each reservation counts an open trade");

    t.store()
        .write(vec![release_shares(&t.client_id, &id, 3)])
        .await
        .unwrap();
    assert_eq!(remaining(&t, &id).await, left + 3);
    let err = t.store().write(vec![release_shares(&t.client_id, "999999", 3)]).await;
    assert!(
        matches!(err, Err(StoreError::ConditionFailed { .. })),
        "an unknown offering is never created by a release: {err:?}"
    );
    assert!(model::load(t.store(), &t.client_id, "999999").await.unwrap().is_none());
});

// ---------------------------------------------------------------- costs

both!(offering_operations_stay_within_the_budget, |t: TestApp| async move {
    use crate::costs::cost;
    let warm = offering(&t, &[]).await;
    let i = issuer(&t).await;
    let mut params = with(OFFERING, &[("issuerId", i.as_str())]);
    assert_eq!(
        cost(&t, Method::PUT, "/v3/createOffering", &params).await,
        3,
        "the issuer read, a registration read and one transaction"
    );
    params.retain(|(k, _)| *k == "issuerId");
    assert_eq!(cost(&t, Method::PUT, "/v3/createIssuer", ISSUER).await, 2);
    let id = [("offeringId", warm.as_str())];
    assert_eq!(cost(&t, Method::POST, "/v3/getOffering", &id).await, 2);
    assert_eq!(cost(&t, Method::POST, "/v3/closeOffering", &id).await, 3);
    let acct = with(ISSUER_ACCOUNT, &[("issuerId", i.as_str())]);
    assert_eq!(cost(&t, Method::PUT, "/v3/createIssuerAccount", &acct).await, 4);
    assert_eq!(
        cost(&t, Method::POST, "/v3/getIssuerAccount", &params).await,
        3,
        "the account, its custodian records, a registration read"
    );
    assert_eq!(cost(&t, Method::GET, "/v3/offerings?limit=5", &[]).await, 2);
});

// ---------------------------------------------------------------- more webhooks, permissions, races

both!(reads_fire_their_response_records, |t: TestApp| async move {
    let mut hook = Listener::start(200).await;
    for method in [
        "getIssuerAccount",
        "getAllIssuers",
        "getOffering",
        "getAllOffers",
        "searchOffering",
        "getOfferingStatus",
        "getCustodianDetailsforOffering",
    ] {
        t.register_webhook(method, &[&hook.url]).await;
    }
    let id = offering(&t, &[("issueName", "Delta")]).await;
    let i = get_offering(&t, &id).await["issuerId"].as_str().unwrap().to_owned();
    let got = hook.next(5).await.expect("getOffering webhook");
    let o = get_offering(&t, &id).await;
    hook.next(5).await.expect("getOffering webhook");
    assert_eq!(got.pairs(), api_tests::record_pairs(&o));
    assert_eq!(got.pairs()[0], ("issuerId".to_owned(), i.clone()));

    t.post("getOfferingStatus", &[("offeringId", &id)]).await;
    let got = hook.next(5).await.expect("getOfferingStatus webhook");
    assert_eq!(
        got.pairs(),
        pairs(&[("offeringId", &id), ("offeringStatus", "Pending")])
    );

    t.post("getAllOffers", &[]).await;
    let got = hook.next(5).await.expect("getAllOffers webhook");
    assert_eq!(got.pairs(), pairs(&[("offeringIds", &id)]));
    t.post("searchOffering", &[("searchKeyword", "delta")]).await;
    let got = hook.next(5).await.expect("searchOffering webhook");
    assert_eq!(got.pairs(), pairs(&[("offeringIds", &id)]));
    t.post("getAllIssuers", &[]).await;
    let got = hook.next(5).await.expect("getAllIssuers webhook");
    assert_eq!(got.pairs(), pairs(&[("issuerIds", &i)]));

    let path = format!("/operator/clients/{}/custodian-settings", t.client_id);
    t.operator(
        Method::PUT,
        &path,
        json!({"name": "Custody Co", "additionaldescription": "Wire first"}),
    )
    .await;
    t.post("getCustodianDetailsforOffering", &[("offeringId", &id)]).await;
    let got = hook.next(5).await.expect("getCustodianDetailsforOffering webhook");
    assert_eq!(
        got.pairs(),
        pairs(&[
            ("offeringId", &id),
            ("name", "Custody Co"),
            ("additionaldescription", "Wire first")
        ])
    );

    let r = t
        .put(
            "createIssuerAccount",
            &with(ISSUER_ACCOUNT, &[("issuerId", i.as_str()), ("dob", "02-03-1990")]),
        )
        .await;
    assert_eq!(r.code(), "101");
    t.post("getIssuerAccount", &[("issuerId", &i)]).await;
    let got = hook.next(5).await.expect("getIssuerAccount webhook");
    let sent = got.pairs();
    assert_eq!(sent.len(), 22, "the statusDesc object's fields: {sent:?}");
    assert_eq!(sent[0], ("issuerId".to_owned(), i.clone()));
    assert_eq!(sent[4], ("companyName".to_owned(), "Acme Capital LLC".to_owned()));
    assert_eq!(
        sent[9],
        ("socialSecurityNumber".to_owned(), String::new()),
        "empty stays empty"
    );
    assert_eq!(sent[10], ("dob".to_owned(), "REDACTED".to_owned()), "never in clear");
    assert_eq!(sent[21], ("issuerAccountStatus".to_owned(), "Active".to_owned()));
    assert!(hook.next(1).await.is_none(), "one webhook per call");
});

both!(offering_fields_need_their_permissions, |t: TestApp| async move {
    let c = limited_client(&t, &["issueName"]).await;
    let id = offering(&t, &[]).await;
    let r = t
        .form_as(
            &c,
            Method::POST,
            "updateOffering",
            &[("offeringId", id.as_str()), ("issueType", "Debt")],
        )
        .await;
    assert_eq!(r.code(), "110", "{:?}", r.json);
    let r = t
        .form_as(
            &c,
            Method::PUT,
            "createOffering",
            &with(OFFERING, &[("issuerId", "100000")]),
        )
        .await;
    assert_eq!(r.code(), "110", "{:?}", r.json);
    let r = t
        .form_as(
            &c,
            Method::POST,
            "updateOffering",
            &[("offeringId", id.as_str()), ("issueName", "X")],
        )
        .await;
    assert_eq!(
        r.code(),
        "138",
        "permitted, but another client's offering: {:?}",
        r.json
    );
});

both!(
    close_and_a_concurrent_trade_never_both_succeed,
    |t: TestApp| async move {
        let t = Arc::new(t);
        for _ in 0..6 {
            let id = offering(&t, &[("totalShares", "5")]).await;
            let (t1, id1) = (t.clone(), id.clone());
            let close = tokio::spawn(async move {
                t1.post("closeOffering", &[("offeringId", &id1)])
                    .await
                    .code()
                    .to_owned()
            });
            let (t2, id2) = (t.clone(), id.clone());
            let trade = tokio::spawn(async move {
                t2.store()
                    .write(vec![reserve_shares(&t2.client_id, &id2, 1)])
                    .await
                    .is_ok()
            });
            let (closed, reserved) = (close.await.unwrap(), trade.await.unwrap());
            assert!(
                (closed == "101") != reserved,
                "exactly one wins: close {closed}, reservation {reserved}"
            );
            let o = model::load(t.store(), &t.client_id, &id).await.unwrap().unwrap().rec;
            if reserved {
                assert_eq!(
                    (o.status.as_str(), o.remaining_shares, o.open_trades),
                    ("Pending", 4, 1)
                );
            } else {
                assert_eq!((o.status.as_str(), o.remaining_shares, o.open_trades), ("closed", 5, 0));
            }
        }
    }
);
