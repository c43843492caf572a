//! Account operations beyond the first slice: notes, archive status, suitability, reads and updates.

use std::collections::HashMap;

use api_tests::{both, Creds, Listener, Received, Resp, TestApp};
use http::Method;
use serde_json::{json, Value};

use crate::fixtures::*;

/// The webhook's field names, in order.
fn names(r: &Received) -> Vec<String> {
    r.pairs().into_iter().map(|(k, _)| k).collect()
}

fn fields(r: &Received) -> HashMap<String, String> {
    r.pairs().into_iter().collect()
}

fn split(s: &str) -> Vec<String> {
    s.split(' ').map(str::to_owned).collect()
}

/// A listener registered for each of `methods`.
async fn hook(t: &TestApp, methods: &[&str]) -> Listener {
    let l = Listener::start(200).await;
    for m in methods {
        t.register_webhook(m, &[&l.url]).await;
    }
    l
}

/// The account as `GET /v3/accounts/{id}` shows it (whole body: a rejected call must leave
/// it byte for byte the same).
async fn snapshot(t: &TestApp, id: &str) -> Value {
    t.get(&format!("/v3/accounts/{id}")).await.json
}

/// Another client with every method and scope.
async fn other_client(t: &TestApp) -> Creds {
    t.new_client(json!({"scopes": ["*"]})).await
}

fn ok(r: &Resp) {
    assert_eq!((r.status, r.code()), (200, "101"), "{:?}", r.json);
}

/// The full createAccount parameter set with one city.
fn full_row(id: &str, city: &'static str) -> Vec<(&'static str, String)> {
    let mut v: Vec<(&'static str, String)> = ACCOUNT.iter().map(|(k, v)| (*k, (*v).to_owned())).collect();
    v.retain(|(k, _)| *k != "city");
    v.push(("city", city.to_owned()));
    v.push(("accountId", id.to_owned()));
    v
}

async fn update(t: &TestApp, pairs: &[(&str, String)]) -> Resp {
    let p: Vec<(&str, &str)> = pairs.iter().map(|(k, v)| (*k, v.as_str())).collect();
    t.put("updateAccount", &p).await
}

both!(
    update_account_rewrites_the_whole_row_and_answers_the_record,
    |t: TestApp| async move {
        let id = create_account_as(
            &t,
            &t.creds(),
            &[("email", "ann@example.com"), ("tags", "a,b"), ("KYCstatus", "Pending")],
        )
        .await;
        let before = snapshot(&t, &id).await["account"].clone();
        let mut row = full_row(&id, "Dallas");
        row.push(("approvalStatus", "Approved".into()));
        let r = update(&t, &row).await;
        ok(&r);
        let d = &r.json["accountDetails"];
        assert!(d.is_object(), "one object: {:?}", r.json);
        assert_eq!(d["accountId"], id.as_str());
        assert_eq!(
            (d["city"].as_str(), d["approvalStatus"].as_str()),
            (Some("Dallas"), Some("Approved"))
        );
        assert_eq!(
            (d["email"].as_str(), d["tags"].as_str(), d["kycStatus"].as_str()),
            (Some(""), Some(""), Some("Pending")),
            "optional fields not sent are cleared (full-row rewrite), the reviews' results kept"
        );
        let mut cleared = row.clone();
        cleared.push(("KYCstatus", String::new()));
        let mut dated = row.clone();
        dated.push(("accreditedInvestorDate", "02-25-2027".into()));
        ok(&update(&t, &dated).await);
        ok(&update(&t, &row).await);
        let a = snapshot(&t, &id).await["account"].clone();
        assert_eq!(a["accreditedInvestorDate"], "02-25-2027", "kept when not sent");
        ok(&update(&t, &cleared).await);
        assert_eq!(
            snapshot(&t, &id).await["account"]["kycStatus"],
            "",
            "a result sent empty"
        );
        assert_eq!(d["syndicate"], "", "no key enables syndicate yet");
        let after = snapshot(&t, &id).await["account"].clone();
        assert_eq!(after["city"], "Dallas");
        assert_eq!(after["createdDate"], before["createdDate"]);
        assert_eq!(after["accountstatus"], "Active");
        // Aliases of createAccount are accepted on update too.
        let aliased = [
            ("accountId", id.as_str()),
            ("accountName", "Ann Lee Trust"),
            ("type", "Entity"),
            ("residentType", "international_account"),
            ("address1", "1 Rue"),
            ("city", "Paris"),
            ("state", "NOUS"),
            ("zip", "75001"),
            ("country", "FR"),
        ];
        ok(&t.put("updateAccount", &aliased).await);
        let a = snapshot(&t, &id).await["account"].clone();
        assert_eq!(
            (
                a["accountName"].as_str(),
                a["residentType"].as_str(),
                a["address1"].as_str()
            ),
            (Some("Ann Lee Trust"), Some("international_account"), Some("1 Rue"))
        );
    }
);

both!(
    update_account_rejections_are_106_110_and_148_and_change_nothing,
    |t: TestApp| async move {
        let t = t.as_new_client().await;
        let id = create_account_as(&t, &t.creds(), &[("email", "ann@example.com")]).await;
        let before = snapshot(&t, &id).await;
        let row = full_row(&id, "Dallas");
        let mut cases: Vec<(Vec<(&str, String)>, &str)> = Vec::new();
        cases.push((row.iter().filter(|(k, _)| *k != "accountId").cloned().collect(), "106"));
        for (name, _) in ACCOUNT {
            cases.push((row.iter().filter(|(k, _)| k != name).cloned().collect(), "106"));
        }
        let with_pair = |k: &'static str, v: &str| {
            let mut r: Vec<(&str, String)> = row.iter().filter(|(n, _)| *n != k).cloned().collect();
            r.push((k, v.to_owned()));
            r
        };
        cases.push((with_pair("state", "asdf"), "106"));
        cases.push((with_pair("tags", "a,b,c,d,e,f,g,h,i,j,k"), "106"));
        cases.push((with_pair("accountId", "A0000001"), "148"));
        for (pairs, code) in &cases {
            let r = update(&t, pairs).await;
            assert_eq!(r.code(), *code, "{pairs:?}: {:?}", r.json);
            assert_eq!(r.status, 404);
        }
        let other = other_client(&t).await;
        let p: Vec<(&str, &str)> = row.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let r = t.form_as(&other, Method::PUT, "updateAccount", &p).await;
        assert_eq!(r.code(), "148", "another client's account");
        // 110: a field the key may not set.
        let path = format!("/operator/clients/{}/field-permissions", t.client_id);
        let allowed = json!({"fields": ["accountRegistration", "type", "domesticYN", "streetAddress1", "city", "state", "zip", "country"]});
        assert_eq!(t.operator(Method::PUT, &path, allowed).await.status, 200);
        let r = update(&t, &with_pair("email", "x@example.com")).await;
        assert_eq!(r.code(), "110", "{:?}", r.json);
        assert_eq!(snapshot(&t, &id).await, before, "rejected updates change nothing");
        ok(&update(&t, &row).await);
        // Clearing a field is setting it: the fields the key may not set keep their values.
        assert_eq!(snapshot(&t, &id).await["account"]["email"], "ann@example.com");
        // A permission under a field's name covers its aliases (accountName, address1, ...).
        let aliased: Vec<(&str, String)> = row
            .iter()
            .map(|(k, v)| match *k {
                "accountRegistration" => ("accountName", v.clone()),
                "streetAddress1" => ("address1", v.clone()),
                _ => (*k, v.clone()),
            })
            .collect();
        ok(&update(&t, &aliased).await);
        let r = update(&t, &with_pair("kycStatus", "Approved")).await;
        assert_eq!(r.code(), "110", "an alias needs the field's permission: {:?}", r.json);
        // PATCH checks the same permissions, by the record's names.
        let current = snapshot(&t, &id).await;
        for refused in [
            json!({"email": "x@example.com"}),
            json!({"city": "Waco", "kycStatus": "Approved"}),
        ] {
            let r = patch_account(&t, &id, refused.clone()).await;
            assert_eq!((r.status, r.code()), (403, "110"), "{refused}: {:?}", r.json);
        }
        assert_eq!(snapshot(&t, &id).await, current, "refused patches change nothing");
        // A known field with a value its rules refuse: an invalid request, nothing written.
        for refused in [
            json!({"state": "Texas"}),
            json!({"tags": "a,b,c,d,e,f,g,h,i,j,k"}),
            // createAccount's required fields stay set (updateAccount keeps them too).
            json!({"accountName": " "}),
            json!({"address1": "2 Elm St", "accountName": ""}),
        ] {
            let r = patch_account(&t, &id, refused).await;
            assert_eq!((r.status, r.code()), (422, "1422"), "{:?}", r.json);
        }
        // A malformed body is malformed whatever its keys' order.
        for body in [
            r#"{"account":{"foo":"x","state":"ZZ"}}"#,
            r#"{"account":{"state":"ZZ","foo":"x"}}"#,
        ] {
            let body: Value = serde_json::from_str(body).unwrap();
            let uri = format!("/v3/accounts/{id}");
            let r = t.json_as(&t.creds(), Method::PATCH, &uri, &body).await;
            assert_eq!((r.status, r.code()), (400, "1400"), "{body}: {:?}", r.json);
        }
        let r = patch_account(&t, &id, json!({"accountName": "Ann B. Lee", "address1": "2 Elm St"})).await;
        assert_eq!(
            (r.status, r.code()),
            (200, "101"),
            "permitted under its alias: {:?}",
            r.json
        );
        assert_eq!(
            t.operator(Method::PUT, &path, json!({"fields": ["*"]})).await.status,
            200
        );
        // Archived and deleted accounts are not active: 148.
        ok(&t
            .post(
                "updateAccountArchivestatus",
                &[("accountId", &id), ("archiveStatus", "1")],
            )
            .await);
        let archived = snapshot(&t, &id).await;
        assert_eq!(update(&t, &full_row(&id, "Houston")).await.code(), "148");
        let r = patch_account(&t, &id, json!({"city": "Houston"})).await;
        assert_eq!((r.status, r.code()), (404, "1404"), "{:?}", r.json);
        assert_eq!(snapshot(&t, &id).await, archived);
        ok(&t.post("deleteAccount", &[("accountId", &id)]).await);
        assert_eq!(update(&t, &full_row(&id, "Houston")).await.code(), "148");
    }
);

both!(
    update_account_webhook_fires_every_call_with_the_table_fields,
    |t: TestApp| async move {
        let mut h = hook(&t, &["updateAccount"]).await;
        let id = create_account(&t).await;
        let mut row = full_row(&id, "Dallas");
        row.push(("email", "ann@example.com".into()));
        row.push(("506cLimit", "5000".into()));
        row.push(("createdIpAddress", "9.9.9.9".into()));
        ok(&update(&t, &row).await);
        let got = h.next(5).await.expect("updateAccount webhook");
        let expected = "accountId accountName type entityType residentType socialSecurityNumber dateOfBirth address1 address2 city state zip country email phone taxID kycStatus amlStatus amlDate suitabilityScore suitabilityDate suitabilityApprover accreditedStatus accreditedInvestor accreditedInvestorDate 506cLimit accountTotalLimit singleInvestmentLimit associatedAC syndicate tags notes approvalStatus approvalPrincipal approvalLastReview virtualStatus field1 field2 field3 updatedIpAddress";
        assert_eq!(names(&got), split(expected));
        let f = fields(&got);
        assert_eq!(f["accountId"], id);
        assert_eq!(f["accountName"], "Ann Lee");
        assert_eq!(f["city"], "Dallas");
        assert_eq!(f["email"], "ann@example.com");
        assert_eq!(f["506cLimit"], "5000");
        assert_eq!(f["residentType"], "domestic_account");
        assert_eq!(
            (f["socialSecurityNumber"].as_str(), f["dateOfBirth"].as_str()),
            ("", "")
        );
        assert_eq!(f["virtualStatus"], "0");
        assert_eq!(f["updatedIpAddress"], "127.0.0.1");
        ok(&update(&t, &row).await);
        assert!(h.next(5).await.is_some(), "a replay fires again");
        assert_eq!(update(&t, &full_row("A0000001", "X")).await.code(), "148");
        assert!(h.next(2).await.is_none(), "no webhook after a rejection");
    }
);

both!(
    get_account_answers_one_object_and_fires_every_call,
    |t: TestApp| async move {
        let mut h = hook(&t, &["getAccount"]).await;
        let id = create_account_as(&t, &t.creds(), &[("506cLimit", "100"), ("KYCstatus", "Pending")]).await;
        let r = t.post("getAccount", &[("accountId", &id)]).await;
        ok(&r);
        let d = &r.json["accountDetails"];
        assert!(d.is_object(), "{:?}", r.json);
        let keys: Vec<&str> = d.as_object().unwrap().keys().map(String::as_str).collect();
        for k in [
            "accountId",
            "accountName",
            "type",
            "entityType",
            "residentType",
            "socialSecurityNumber",
            "address1",
            "address2",
            "city",
            "state",
            "zip",
            "country",
            "phone",
            "taxID",
            "kycStatus",
            "kycDate",
            "amlStatus",
            "amlDate",
            "suitabilityScore",
            "suitabilityDate",
            "suitabilityApprover",
            "accreditedStatus",
            "accreditedInvestor",
            "accreditedInvestorDate",
            "506cLimit",
            "accountTotalLimit",
            "singleInvestmentLimit",
            "associatedAC",
            "syndicate",
            "tags",
            "notes",
            "approvalStatus",
            "approvalPrincipal",
            "approvalLastReview",
            "field1",
            "field2",
            "field3",
            "accountstatus",
            "createdDate",
            "updatedDate",
        ] {
            assert!(keys.contains(&k), "{k} in {keys:?}");
        }
        for internal in ["archived", "deleted", "createdIpAddress", "updatedIpAddress"] {
            assert!(!keys.contains(&internal), "{internal}");
        }
        assert_eq!(
            (d["accountId"].as_str(), d["accountstatus"].as_str()),
            (Some(id.as_str()), Some("Active"))
        );
        let got = h.next(5).await.expect("getAccount webhook");
        let n = names(&got);
        assert_eq!(n[0], "accountId");
        assert_eq!(&n[n.len() - 3..], ["archived_status", "createdDate", "updatedDate"]);
        assert!(n.contains(&"kycDate".to_owned()) && !n.contains(&"accountstatus".to_owned()));
        let f = fields(&got);
        assert_eq!(
            (
                f["accountId"].as_str(),
                f["archived_status"].as_str(),
                f["506cLimit"].as_str(),
                f["kycStatus"].as_str()
            ),
            (id.as_str(), "0", "100", "Pending")
        );
        assert_eq!(f["createdDate"], d["createdDate"].as_str().unwrap());
        ok(&t.post("getAccount", &[("accountId", &id)]).await);
        assert!(h.next(5).await.is_some(), "fires on every call");
        // The legacy prefix reaches it too.
        let auth = t.creds().bearer();
        let r = t
            .raw(
                Method::POST,
                "/tapiv3/index.php/v3/getAccount",
                &[("authorization", auth.as_str()), ("content-type", "application/json")],
                Ok(bytes::Bytes::from(json!({"accountId": id}).to_string())),
            )
            .await;
        ok(&r);
        assert!(h.next(5).await.is_some());
    }
);

both!(get_account_errors_are_106_and_148, |t: TestApp| async move {
    let mut h = hook(&t, &["getAccount"]).await;
    let id = create_account(&t).await;
    assert_eq!(t.post("getAccount", &[]).await.code(), "106");
    assert_eq!(t.post("getAccount", &[("accountId", "")]).await.code(), "106");
    assert_eq!(t.post("getAccount", &[("accountId", "A0000001")]).await.code(), "148");
    assert_eq!(t.post("getAccount", &[("accountId", "not-an-id")]).await.code(), "148");
    let other = other_client(&t).await;
    let r = t
        .form_as(&other, Method::POST, "getAccount", &[("accountId", &id)])
        .await;
    assert_eq!(
        (r.status, r.code(), r.desc()),
        (404, "148", "Account is not exist/active.")
    );
    assert!(h.next(2).await.is_none(), "no webhook for rejected reads");
    // Archived accounts are read with accountstatus Archived; deleted ones are 148.
    ok(&t
        .post(
            "updateAccountArchiveStatus",
            &[("accountId", &id), ("archiveStatus", "1")],
        )
        .await);
    let r = t.post("getAccount", &[("accountId", &id)]).await;
    assert_eq!(r.json["accountDetails"]["accountstatus"], "Archived");
    assert_eq!(fields(&h.next(5).await.unwrap())["archived_status"], "1");
    ok(&t.post("deleteAccount", &[("accountId", &id)]).await);
    assert_eq!(t.post("getAccount", &[("accountId", &id)]).await.code(), "148");
});

both!(
    delete_account_is_virtual_envelope_only_and_fires_with_the_id,
    |t: TestApp| async move {
        let mut h = hook(&t, &["deleteAccount"]).await;
        let keep = create_account(&t).await;
        let id = create_account(&t).await;
        assert_eq!(t.post("deleteAccount", &[]).await.code(), "106");
        assert_eq!(
            t.post("deleteAccount", &[("accountId", "A0000001")]).await.code(),
            "148"
        );
        let other = other_client(&t).await;
        let r = t
            .form_as(&other, Method::POST, "deleteAccount", &[("accountId", &id)])
            .await;
        assert_eq!(r.code(), "148");
        assert!(h.next(2).await.is_none());
        let r = t.post("deleteAccount", &[("accountId", &id)]).await;
        assert_eq!((r.status, r.code(), r.desc()), (200, "101", "Ok"));
        assert_eq!(r.json.as_object().unwrap().len(), 2, "envelope only");
        assert_eq!(
            h.next(5).await.expect("deleteAccount").pairs(),
            vec![("accountId".to_owned(), id.clone())]
        );
        assert_eq!(t.post("deleteAccount", &[("accountId", &id)]).await.code(), "148");
        let r = t.get("/v3/accounts").await;
        assert_eq!(r.json["pagination"]["totalRecords"], 1);
        assert_eq!(r.json["accounts"][0]["accountId"], keep.as_str());
        let r = t.get("/v3/accounts?deleted=true").await;
        let deleted: Vec<&Value> = r.json["accounts"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|a| a["accountId"] == id.as_str())
            .collect();
        assert_eq!(deleted[0]["accountstatus"], "Archived");
        assert_eq!(snapshot(&t, &id).await["statusCode"], "1404");
    }
);

both!(
    legacy_get_account_path_resolves_and_the_retired_paths_do_not,
    |t: TestApp| async move {
        let id = create_account(&t).await;
        let auth = t.creds().bearer();
        let body = bytes::Bytes::from(format!("accountId={id}"));
        let headers = [
            ("authorization", auth.as_str()),
            ("content-type", "application/x-www-form-urlencoded"),
        ];
        let r = t.raw(Method::POST, "/getAccount", &headers, Ok(body.clone())).await;
        assert_eq!(r.code(), "101", "{:?}", r.json);
        assert_eq!(r.json["accountDetails"]["accountId"], id.as_str());
        let r = t.raw(Method::POST, "/createParty", &headers, Ok(body)).await;
        assert_eq!((r.status, r.code()), (404, "1404"));
        // Part 3's retired legacy endpoints, called as their clients did (body credentials,
        // no /v3): 404 on the primary host.
        let form = [("content-type", "application/x-www-form-urlencoded")];
        for (path, params) in [
            ("/getLinkedAccounts", "partyId=P1000000"),
            ("/getTradeStatusesForOffering", "offeringId=100000"),
            ("/getApiCount", ""),
            ("/recordAttestation", "accountId=A1000000"),
        ] {
            let body = format!("clientID={}&developerAPIKey={}&{params}", t.client_id, t.api_key);
            let r = t.raw(Method::POST, path, &form, Ok(body.into())).await;
            assert_eq!((r.status, r.code()), (404, "1404"), "{path}");
        }
    }
);

both!(
    archive_status_under_both_spellings_with_its_webhook,
    |t: TestApp| async move {
        let mut lower = hook(&t, &["updateAccountArchivestatus"]).await;
        let mut upper = hook(&t, &["updateAccountArchiveStatus"]).await;
        let id = create_account(&t).await;
        let p = create_party(&t).await;
        let r = t
            .post(
                "updateAccountArchivestatus",
                &[("accountId", &id), ("archiveStatus", "1")],
            )
            .await;
        ok(&r);
        assert_eq!(r.json["accountDetails"], json!({"accountId": id, "archiveStatus": "1"}));
        let expected = vec![
            ("accountId".to_owned(), id.clone()),
            ("archiveStatus".to_owned(), "1".to_owned()),
        ];
        assert_eq!(lower.next(5).await.expect("lower").pairs(), expected);
        assert!(
            upper.next(2).await.is_none(),
            "a webhook goes to the name the integration called"
        );
        assert_eq!(snapshot(&t, &id).await["account"]["accountstatus"], "Archived");
        assert_eq!(link(&t, &id, "IndivACParty", &p, "0").await.code(), "148", "not active");
        // Again: nothing changes, and the call still fires (part 1: no de-duplication).
        let before = snapshot(&t, &id).await;
        ok(&t
            .post(
                "updateAccountArchiveStatus",
                &[("accountId", &id), ("archiveStatus", "1")],
            )
            .await);
        assert_eq!(upper.next(5).await.expect("a repeat fires").pairs(), expected);
        assert!(lower.next(2).await.is_none());
        assert_eq!(snapshot(&t, &id).await, before);
        // Rejections.
        for (pairs, code) in [
            (vec![("archiveStatus", "1")], "106"),
            (vec![("accountId", id.as_str())], "106"),
            (vec![("accountId", id.as_str()), ("archiveStatus", "yes")], "106"),
            (vec![("accountId", "A0000001"), ("archiveStatus", "0")], "148"),
        ] {
            assert_eq!(
                t.post("updateAccountArchiveStatus", &pairs).await.code(),
                code,
                "{pairs:?}"
            );
        }
        let other = other_client(&t).await;
        let r = t
            .form_as(
                &other,
                Method::POST,
                "updateAccountArchivestatus",
                &[("accountId", &id), ("archiveStatus", "0")],
            )
            .await;
        assert_eq!(r.code(), "148");
        assert_eq!(snapshot(&t, &id).await, before, "rejections change nothing");
        assert!(upper.next(2).await.is_none());
        // A JSON boolean is the flag's word.
        let body = json!({"accountId": id, "archiveStatus": false});
        ok(&t
            .json_as(&t.creds(), Method::POST, "/v3/updateAccountArchiveStatus", &body)
            .await);
        assert_eq!(fields(&upper.next(5).await.expect("unarchived"))["archiveStatus"], "0");
        assert_eq!(snapshot(&t, &id).await["account"]["accountstatus"], "Active");
        assert_eq!(link(&t, &id, "IndivACParty", &p, "0").await.code(), "101");
    }
);

both!(
    get_all_accounts_and_search_account_list_live_accounts,
    |t: TestApp| async move {
        let mut h = hook(&t, &["getAllAccounts", "searchAccount"]).await;
        let a = create_account_as(&t, &t.creds(), &[("accountRegistration", "Ann Lee")]).await;
        let b = create_account_as(&t, &t.creds(), &[("accountRegistration", "Bob Stone")]).await;
        let c = create_account_as(&t, &t.creds(), &[("accountRegistration", "Cy Lee")]).await;
        ok(&t.post("deleteAccount", &[("accountId", &c)]).await);
        let other = other_client(&t).await;
        create_account_as(&t, &other, &[]).await;
        let r = t.post("getAllAccounts", &[]).await;
        ok(&r);
        let ids: Vec<&str> = r.json["accountDetails"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["accountId"].as_str().unwrap())
            .collect();
        assert_eq!(ids, [b.as_str(), a.as_str()], "live accounts only, newest first");
        assert_eq!(r.json["accountDetails"][0]["accountstatus"], "Active");
        let got = h.next(5).await.expect("getAllAccounts");
        assert_eq!(names(&got), ["accountIds"]);
        assert_eq!(fields(&got)["accountIds"], ids.join(","));

        let r = t.post("searchAccount", &[("accountName", "lee")]).await;
        ok(&r);
        let found: Vec<&str> = r.json["accountDetails"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["accountId"].as_str().unwrap())
            .collect();
        assert_eq!(
            found,
            [a.as_str()],
            "case-insensitive name text; the deleted Cy Lee is left out"
        );
        assert_eq!(fields(&h.next(5).await.expect("searchAccount"))["accountIds"], a);
        let r = t.post("searchAccount", &[("accountId", &b)]).await;
        assert_eq!(r.json["accountDetails"][0]["accountName"], "Bob Stone");
        let r = t
            .post("searchAccount", &[("accountId", &b), ("accountName", "Lee")])
            .await;
        assert_eq!(r.json["accountDetails"], json!([]), "both must match");
        let r = t.post("searchAccount", &[("accountId", "A0000001")]).await;
        assert_eq!((r.code(), &r.json["accountDetails"]), ("101", &json!([])));
        let r = t.post("searchAccount", &[]).await;
        assert_eq!((r.status, r.code()), (404, "106"));
    }
);

both!(account_notes_are_added_and_read_in_order, |t: TestApp| async move {
    let mut h = hook(&t, &["addAccountNote", "getAccountNotes"]).await;
    let id = create_account(&t).await;
    let r = t
        .post(
            "addAccountNote",
            &[
                ("accountId", &id),
                ("authorName", "Rep One"),
                ("notes", "Called the investor"),
            ],
        )
        .await;
    ok(&r);
    assert_eq!(r.json["notesDetails"][0], json!(true));
    let rec = r.inserted("notesDetails");
    assert_eq!(
        rec.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["authorname", "note", "createdDate"]
    );
    assert_eq!(
        (rec["authorname"].as_str(), rec["note"].as_str()),
        (Some("Rep One"), Some("Called the investor"))
    );
    let created = rec["createdDate"].as_str().unwrap().to_owned();
    assert_eq!(created.len(), 19);
    let got = h.next(5).await.expect("addAccountNote");
    assert_eq!(
        got.pairs(),
        vec![
            ("authorname".to_owned(), "Rep One".to_owned()),
            ("note".to_owned(), "Called the investor".to_owned()),
            ("createdDate".to_owned(), created.clone()),
        ]
    );
    ok(&t
        .post(
            "addAccountNote",
            &[("accountId", &id), ("authorName", "Rep Two"), ("notes", "Second")],
        )
        .await);
    h.next(5).await.expect("second note");

    let base = [("accountId", id.as_str()), ("authorName", "X"), ("notes", "Y")];
    for name in ["accountId", "authorName", "notes"] {
        assert_eq!(
            t.post("addAccountNote", &without(&base, &[name])).await.code(),
            "106",
            "{name}"
        );
        assert_eq!(
            t.post("addAccountNote", &with(&base, &[(name, " ")])).await.code(),
            "106",
            "{name} blank"
        );
    }
    assert_eq!(
        t.post("addAccountNote", &with(&base, &[("accountId", "A0000001")]))
            .await
            .code(),
        "148"
    );
    let other = other_client(&t).await;
    assert_eq!(
        t.form_as(&other, Method::POST, "addAccountNote", &base).await.code(),
        "148"
    );
    assert!(h.next(2).await.is_none(), "no webhook after a rejection");

    let r = t.post("getAccountNotes", &[("accountId", &id)]).await;
    ok(&r);
    let notes = r.json["notesDetails"].as_array().unwrap();
    assert_eq!(notes.len(), 2, "rejected notes were not written: {notes:?}");
    assert_eq!(
        (notes[0]["note"].as_str(), notes[1]["note"].as_str()),
        (Some("Called the investor"), Some("Second"))
    );
    assert_eq!(
        notes[0],
        json!({"authorname": "Rep One", "note": "Called the investor", "createdDate": created})
    );
    let got = h.next(5).await.expect("getAccountNotes");
    assert_eq!(
        got.pairs(),
        vec![
            ("accountId".to_owned(), id.clone()),
            ("notesCount".to_owned(), "2".to_owned())
        ]
    );
    assert_eq!(t.post("getAccountNotes", &[]).await.code(), "106");
    assert_eq!(
        t.post("getAccountNotes", &[("accountId", "A0000001")]).await.code(),
        "148"
    );
    assert_eq!(
        t.form_as(&other, Method::POST, "getAccountNotes", &[("accountId", &id)])
            .await
            .code(),
        "148"
    );
    let fresh = create_account(&t).await;
    assert_eq!(
        t.post("getAccountNotes", &[("accountId", &fresh)]).await.json["notesDetails"],
        json!([])
    );
    // Archived: readable, not writable.
    ok(&t
        .post(
            "updateAccountArchivestatus",
            &[("accountId", &id), ("archiveStatus", "1")],
        )
        .await);
    assert_eq!(t.post("addAccountNote", &base).await.code(), "148");
    assert_eq!(
        t.post("getAccountNotes", &[("accountId", &id)]).await.json["notesDetails"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
});

both!(
    get_account_link_id_and_get_all_links_read_the_accounts_links,
    |t: TestApp| async move {
        let mut h = hook(&t, &["getAccountLinkId", "getAllLinks"]).await;
        let a = create_account_as(&t, &t.creds(), &[("506cLimit", "2500")]).await;
        let r = t.post("getAccountLinkId", &[("accountId", &a)]).await;
        ok(&r);
        assert_eq!(r.json["accountDetails"]["linkIds"], "");
        assert!(h.next(2).await.is_none(), "no webhook for an account without links");
        let r = t.post("getAllLinks", &[("accountId", &a)]).await;
        ok(&r);
        assert_eq!(r.json["linkDetails"], json!([]));
        h.next(5).await.expect("getAllLinks fires for every call");

        let p = create_party(&t).await;
        let e = create_entity(&t).await;
        let l1 = link(&t, &a, "IndivACParty", &p, "1").await.inserted("linkDetails")["id"]
            .as_str()
            .unwrap()
            .to_owned();
        let l2 = link(&t, &a, "EntityACParty", &e, "0").await.inserted("linkDetails")["id"]
            .as_str()
            .unwrap()
            .to_owned();
        let b = create_account(&t).await;
        let l3 = link(&t, &b, "Account", &a, "0").await.inserted("linkDetails")["id"]
            .as_str()
            .unwrap()
            .to_owned();
        let r = t.post("getAccountLinkId", &[("accountId", &a)]).await;
        ok(&r);
        let d = &r.json["accountDetails"];
        assert_eq!(d["linkIds"], format!("{l1},{l2}"));
        assert_eq!(d["fivenotsixcLimit"], "2500");
        assert!(d.get("506cLimit").is_none());
        assert_eq!(d["accountId"], a.as_str());
        let got = h.next(5).await.expect("getAccountLinkId");
        let n = names(&got);
        assert_eq!(n[0], "accountId");
        assert_eq!(
            &n[n.len() - 4..],
            ["archived_status", "createdDate", "updatedDate", "linkIds"]
        );
        assert!(!n.contains(&"506cLimit".to_owned()));
        let f = fields(&got);
        assert_eq!(
            (f["fivenotsixcLimit"].as_str(), f["linkIds"].as_str()),
            ("2500", format!("{l1},{l2}").as_str())
        );

        let r = t.post("getAllLinks", &[("accountId", &a)]).await;
        ok(&r);
        let links = r.json["linkDetails"].as_array().unwrap();
        assert_eq!(links.len(), 2);
        assert_eq!(links[0]["id"], l1.as_str());
        assert_eq!(
            (
                links[1]["relatedEntry"].as_str(),
                links[1]["relatedEntryType"].as_str(),
                links[1]["linkType"].as_str()
            ),
            (Some(e.as_str()), Some("EntityACParty"), Some("owner"))
        );
        for k in [
            "id",
            "firstEntryType",
            "firstEntry",
            "relatedEntry",
            "relatedEntryType",
            "linkType",
            "notes",
        ] {
            assert!(links[0].get(k).is_some(), "{k}");
        }
        assert_eq!(
            h.next(5).await.expect("getAllLinks").pairs(),
            vec![
                ("accountId".to_owned(), a.clone()),
                ("linkIds".to_owned(), format!("{l1},{l2}"))
            ]
        );
        ok(&t.post("deleteLink", &[("id", &l2)]).await);
        let r = t.post("getAllLinks", &[("accountId", &b)]).await;
        assert_eq!(r.json["linkDetails"][0]["id"], l3.as_str());
        let r = t.post("getAllLinks", &[("accountId", &a)]).await;
        assert_eq!(
            r.json["linkDetails"].as_array().unwrap().len(),
            1,
            "deleted links are left out"
        );
        assert_eq!(
            t.post("getAccountLinkId", &[("accountId", &a)]).await.json["accountDetails"]["linkIds"],
            l1
        );

        let other = other_client(&t).await;
        for op in ["getAccountLinkId", "getAllLinks"] {
            assert_eq!(t.post(op, &[]).await.code(), "106", "{op}");
            assert_eq!(t.post(op, &[("accountId", "A0000001")]).await.code(), "148", "{op}");
            assert_eq!(
                t.form_as(&other, Method::POST, op, &[("accountId", &a)]).await.code(),
                "148",
                "{op}"
            );
        }
    }
);

both!(
    primary_party_reads_the_marker_and_checks_the_party,
    |t: TestApp| async move {
        use shared::model::link::no_primary_party;
        use shared::records::link::primary_party;
        let a = create_account(&t).await;
        let store = t.store();
        assert_eq!(primary_party(store, &t.client_id, &a).await.unwrap(), None);
        let p = create_party(&t).await;
        let secondary = create_party(&t).await;
        ok(&link(&t, &a, "IndivACParty", &secondary, "0").await);
        assert_eq!(
            primary_party(store, &t.client_id, &a).await.unwrap(),
            None,
            "not primary"
        );
        let id = link(&t, &a, "IndivACParty", &p, "1").await.inserted("linkDetails")["id"]
            .as_str()
            .unwrap()
            .to_owned();
        assert_eq!(primary_party(store, &t.client_id, &a).await.unwrap(), Some(p.clone()));
        assert_eq!(primary_party(store, "another-client", &a).await.unwrap(), None);
        ok(&t.post("deleteLink", &[("id", &id)]).await);
        assert_eq!(
            primary_party(store, &t.client_id, &a).await.unwrap(),
            None,
            "link deleted"
        );
        ok(&link(&t, &a, "IndivACParty", &p, "1").await);
        assert_eq!(primary_party(store, &t.client_id, &a).await.unwrap(), Some(p.clone()));
        ok(&t.post("deleteParty", &[("partyId", &p)]).await);
        assert_eq!(
            primary_party(store, &t.client_id, &a).await.unwrap(),
            None,
            "party deleted"
        );
        let e = no_primary_party();
        assert_eq!((e.code(), e.http_status(shared::error::Style::Method)), ("135", 404));
    }
);

both!(
    calculate_suitability_stores_a_record_and_scores_it,
    |t: TestApp| async move {
        let mut h = hook(&t, &["calculateSuitability"]).await;
        let id = create_account(&t).await;
        let params = [
            ("accountId", id.as_str()),
            ("riskProfile", "4"),
            ("investmentExperience", "5"),
            ("privOffExperience", "2"),
            ("pctPrivSecurities", "10"),
            ("pctIlliquidSecurities", "5"),
            ("pctLiquidSecurities", "80"),
            ("pctRealEstate", "5"),
            ("timeHorizon", "7.5"),
            ("education", "Graduate Degree"),
            ("financialAdvisor", "Yes"),
            ("invesmentObjective", "Primarily Focused on growth"),
            ("notes", "n"),
            ("additionalnotes", "more"),
        ];
        let r = t.put("calculateSuitability", &params).await;
        ok(&r);
        assert_eq!(r.json["accountDetails"][0], json!(true));
        let rec = r.inserted("accountDetails").clone();
        let keys: Vec<&str> = rec.as_object().unwrap().keys().map(String::as_str).collect();
        let expected = "accountId suitabilityScore riskProfile investmentExperience privOffExperience pctPrivSecurities pctIlliquidSecurities pctLiquidSecurities pctRealEstate timeHorizon education financialAdvisor investmentObjective notes additionalnotes createdDate updatedDate";
        assert_eq!(keys, expected.split(' ').collect::<Vec<_>>());
        assert_eq!(rec["suitabilityScore"], "4", "mean of 4, 5 and 2 rounded");
        assert_eq!(
            (
                rec["investmentObjective"].as_str(),
                rec["timeHorizon"].as_str(),
                rec["pctRealEstate"].as_str()
            ),
            (Some("Primarily Focused on growth"), Some("7.5"), Some("5"))
        );
        let got = h.next(5).await.expect("calculateSuitability");
        assert_eq!(names(&got), split(expected));
        let f = fields(&got);
        assert_eq!(
            (
                f["accountId"].as_str(),
                f["suitabilityScore"].as_str(),
                f["education"].as_str()
            ),
            (id.as_str(), "4", "Graduate Degree")
        );
        // A new calculation replaces the previous one whole.
        let r = t
            .put(
                "calculateSuitability",
                &[("accountId", id.as_str()), ("riskProfile", "1")],
            )
            .await;
        let rec2 = r.inserted("accountDetails");
        assert_eq!(
            (rec2["suitabilityScore"].as_str(), rec2["education"].as_str()),
            (Some("1"), Some(""))
        );
        assert_eq!(rec2["createdDate"], rec["createdDate"]);
        let r = t.put("calculateSuitability", &[("accountId", id.as_str())]).await;
        assert_eq!(
            r.inserted("accountDetails")["suitabilityScore"],
            "",
            "no score without scores"
        );
    }
);

both!(
    calculate_suitability_rejections_are_106_and_148_and_write_nothing,
    |t: TestApp| async move {
        let mut h = hook(&t, &["calculateSuitability"]).await;
        let id = create_account(&t).await;
        let base = [("accountId", id.as_str()), ("riskProfile", "3")];
        let mut cases = vec![(without(&base, &["accountId"]), "106")];
        for (name, bad) in [
            ("riskProfile", "high"),
            ("investmentExperience", "3x"),
            ("privOffExperience", "1e3"),
            ("pctPrivSecurities", "10.5"),
            ("pctIlliquidSecurities", "ten"),
            ("pctLiquidSecurities", "1,000"),
            ("pctRealEstate", "5%"),
            ("timeHorizon", "soon"),
        ] {
            cases.push((with(&base, &[(name, bad)]), "106"));
        }
        cases.push((with(&base, &[("accountId", "A0000001")]), "148"));
        for (pairs, code) in &cases {
            let r = t.put("calculateSuitability", pairs).await;
            assert_eq!((r.status, r.code()), (404, *code), "{pairs:?}");
        }
        let other = other_client(&t).await;
        assert_eq!(
            t.form_as(&other, Method::PUT, "calculateSuitability", &base)
                .await
                .code(),
            "148"
        );
        assert!(h.next(2).await.is_none());
        assert_eq!(
            t.post("getSuitability", &[("accountId", &id)]).await.code(),
            "404",
            "nothing stored"
        );
        // Scores are checked for numeric format only, not range.
        ok(&t
            .put(
                "calculateSuitability",
                &with(&base, &[("riskProfile", "9"), ("investmentExperience", "-1.5")]),
            )
            .await);
        h.next(5).await.expect("fires on success");
        ok(&t.post("deleteAccount", &[("accountId", &id)]).await);
        assert_eq!(t.put("calculateSuitability", &base).await.code(), "148");
    }
);

both!(get_update_and_delete_suitability, |t: TestApp| async move {
    let mut h = hook(&t, &["getSuitability", "updateSuitability", "deleteSuitability"]).await;
    let id = create_account(&t).await;
    let acc = [("accountId", id.as_str())];
    assert_eq!(t.post("getSuitability", &acc).await.code(), "404", "none yet");
    assert_eq!(
        t.put("updateSuitability", &with(&acc, &[("riskProfile", "2")]))
            .await
            .code(),
        "404"
    );
    assert_eq!(t.post("deleteSuitability", &acc).await.code(), "404");
    assert!(h.next(2).await.is_none());
    ok(&t
        .put(
            "calculateSuitability",
            &[("accountId", &id), ("riskProfile", "2"), ("education", "Other")],
        )
        .await);

    let r = t.post("getSuitability", &acc).await;
    ok(&r);
    let rec = r.json["accountDetails"].clone();
    assert!(rec.is_object());
    assert_eq!(
        (rec["riskProfile"].as_str(), rec["suitabilityScore"].as_str()),
        (Some("2"), Some("2"))
    );
    let got = h.next(5).await.expect("getSuitability");
    assert_eq!(names(&got)[..2], ["accountId", "suitabilityScore"]);
    assert_eq!(fields(&got)["education"], "Other");

    let r = t
        .put(
            "updateSuitability",
            &[("accountId", &id), ("investmentExperience", "5"), ("notes", "reviewed")],
        )
        .await;
    ok(&r);
    let u = &r.json["accountDetails"];
    assert_eq!(
        (
            u["riskProfile"].as_str(),
            u["investmentExperience"].as_str(),
            u["education"].as_str(),
            u["suitabilityScore"].as_str()
        ),
        (Some("2"), Some("5"), Some("Other"), Some("4")),
        "fields not sent are kept; the score follows (2+5)/2 rounded half up"
    );
    let f = fields(&h.next(5).await.expect("updateSuitability"));
    assert_eq!(
        (f["investmentExperience"].as_str(), f["notes"].as_str()),
        ("5", "reviewed")
    );
    let before = t.post("getSuitability", &acc).await.json["accountDetails"].clone();
    h.next(5).await.unwrap();
    for (pairs, code) in [
        (vec![("riskProfile", "3")], "106"),
        (vec![("accountId", id.as_str()), ("riskProfile", "x")], "106"),
        (vec![("accountId", id.as_str()), ("pctRealEstate", "1.5")], "106"),
        (vec![("accountId", "A0000001"), ("riskProfile", "3")], "148"),
    ] {
        assert_eq!(t.put("updateSuitability", &pairs).await.code(), code, "{pairs:?}");
    }
    assert_eq!(t.post("getSuitability", &[]).await.code(), "106");
    assert_eq!(
        t.post("getSuitability", &[("accountId", "A0000001")]).await.code(),
        "148"
    );
    assert_eq!(t.post("deleteSuitability", &[]).await.code(), "106");
    assert_eq!(
        t.post("deleteSuitability", &[("accountId", "A0000001")]).await.code(),
        "148"
    );
    let other = other_client(&t).await;
    for op in ["getSuitability", "updateSuitability", "deleteSuitability"] {
        assert_eq!(t.form_as(&other, Method::POST, op, &acc).await.code(), "148", "{op}");
    }
    assert!(h.next(2).await.is_none(), "no webhook after rejections");
    assert_eq!(
        t.post("getSuitability", &acc).await.json["accountDetails"],
        before,
        "unchanged"
    );
    h.next(5).await.unwrap();

    let r = t.post("deleteSuitability", &acc).await;
    assert_eq!((r.code(), r.json.as_object().unwrap().len()), ("101", 2));
    assert_eq!(
        h.next(5).await.expect("deleteSuitability").pairs(),
        vec![("accountId".to_owned(), id.clone())]
    );
    assert_eq!(t.post("getSuitability", &acc).await.code(), "404");
    assert_eq!(t.post("deleteSuitability", &acc).await.code(), "404");
    let r = t
        .put("calculateSuitability", &[("accountId", &id), ("riskProfile", "5")])
        .await;
    assert_eq!(
        r.inserted("accountDetails")["suitabilityScore"],
        "5",
        "a new calculation after a delete"
    );
});

async fn patch_account(t: &TestApp, id: &str, fields: Value) -> Resp {
    let uri = format!("/v3/accounts/{id}");
    t.json_as(&t.creds(), Method::PATCH, &uri, &json!({"account": fields}))
        .await
}
