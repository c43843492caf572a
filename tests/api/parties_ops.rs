//! Party and entity operations beyond the first slice: updates, reads, searches, archive
//! status, entity supplements, and the operator's flag lists (`775`, `776`).

use api_tests::{both, Creds, Listener, Resp, TestApp};
use http::Method;
use serde_json::{json, Value};

use crate::fixtures::*;

fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
    v.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
}

fn names(got: &[(String, String)]) -> Vec<&str> {
    got.iter().map(|(k, _)| k.as_str()).collect()
}

/// Replaces an operator flag list.
pub(crate) async fn set_flags(t: &TestApp, kind: &str, values: &[&str]) {
    let r = t
        .operator(
            Method::PUT,
            &format!("/operator/flags/{kind}"),
            json!({ "values": values }),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.json);
}

/// The stored party as `GET /v3/parties/{id}` shows it.
async fn party_record(t: &TestApp, id: &str) -> Value {
    t.get(&format!("/v3/parties/{id}")).await.json["party"].clone()
}

/// The stored entity as `GET /v3/entities?deleted=true` shows it.
async fn entity_record(t: &TestApp, id: &str) -> Value {
    let r = t.get("/v3/entities?deleted=true&limit=500").await;
    r.json["entities"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["partyId"] == id)
        .cloned()
        .unwrap_or(Value::Null)
}

async fn total_parties(t: &TestApp) -> u64 {
    let r = t.get("/v3/parties?deleted=true").await;
    r.json["pagination"]["totalRecords"].as_u64().unwrap_or(0)
}

async fn total_entities(t: &TestApp) -> u64 {
    let r = t.get("/v3/entities?deleted=true").await;
    r.json["pagination"]["totalRecords"].as_u64().unwrap_or(0)
}

async fn other_client(t: &TestApp) -> Creds {
    t.new_client(json!({"scopes": ["*"]})).await
}

/// Request parameters.
type Pairs<'a> = Vec<(&'a str, &'a str)>;

fn code(r: &Resp) -> &str {
    r.code()
}

// ---------------------------------------------------------------- updateParty

both!(
    update_party_rewrites_the_sent_fields_and_fires_on_every_call,
    |t: TestApp| async move {
        let mut hook = Listener::start(200).await;
        t.register_webhook("updateParty", &[&hook.url]).await;
        let r = t
            .put(
                "createParty",
                &with(
                    PARTY,
                    &[
                        ("KYCstatus", "Pending"),
                        ("phone", "555-0100"),
                        ("currentAnnIncome", "100"),
                    ],
                ),
            )
            .await;
        let id = r.inserted("partyDetails")["partyId"].as_str().unwrap().to_owned();
        let update = [
            ("partyId", id.as_str()),
            ("lastName", "Li"),
            ("KYCstatus", "manually approved"),
            ("AMLstatus", "Whatever Text"),
            ("currentAnnIncome", ""),
            ("socialSecurityNumber", "123456789"),
        ];
        let r = t.post("updateParty", &update).await;
        assert_eq!((r.status, r.code(), r.desc()), (200, "101", "Ok"), "{:?}", r.json);
        assert_eq!(r.json["partyDetails"][0], json!(true));
        assert_eq!(
            r.inserted("partyDetails"),
            &json!({"partyId": id, "KYCstatus": "manually approved", "AMLstatus": "Whatever Text"})
        );
        let got = hook.next(5).await.expect("updateParty webhook");
        assert_eq!(
            got.pairs(),
            pairs(&[
                ("partyId", &id),
                ("KYCstatus", "manually approved"),
                ("AMLstatus", "Whatever Text")
            ])
        );
        let p = party_record(&t, &id).await;
        assert_eq!(
            (p["firstName"].as_str(), p["lastName"].as_str(), p["phone"].as_str()),
            (Some("Ann"), Some("Li"), Some("555-0100")),
            "omitted fields keep their values"
        );
        assert_eq!(p["kycStatus"], "manually approved", "stored verbatim");
        assert!(p["currentAnnIncome"].is_null(), "a blank integer clears it");
        assert_eq!(p["socialSecurityNumber"], "REDACTED");
        // A replay converges on the same row and fires again.
        let r = t.put("updateParty", &update).await;
        assert_eq!(r.code(), "101");
        assert_eq!(hook.next(5).await.expect("fires again").pairs().len(), 3);
        // A non-resident may clear primState.
        let r = t
            .post(
                "updateParty",
                &[("partyId", &id), ("domicile", "non-resident"), ("primState", "")],
            )
            .await;
        assert_eq!(r.code(), "101", "{:?}", r.json);
        assert!(hook.next(5).await.is_some());
    }
);

both!(
    update_party_rejections_are_106_or_198_and_change_nothing,
    |t: TestApp| async move {
        let mut hook = Listener::start(200).await;
        t.register_webhook("updateParty", &[&hook.url]).await;
        let id = create_party(&t).await;
        let other = other_client(&t).await;
        let theirs = create_party_as(&t, &other).await;
        let entity = create_entity(&t).await;
        let gone = create_party(&t).await;
        assert_eq!(t.post("deleteParty", &[("partyId", &gone)]).await.code(), "101");
        let before = party_record(&t, &id).await;
        let cases: Vec<(Pairs, &str, &str)> = vec![
            (vec![("lastName", "X")], "106", "partyId"),
            (vec![("partyId", &id), ("firstName", " ")], "106", "firstName"),
            (vec![("partyId", &id), ("dob", "1980/01/02")], "106", "dob"),
            (
                vec![("partyId", &id), ("socialSecurityNumber", "12-34")],
                "106",
                "socialSecurityNumber",
            ),
            (
                vec![("partyId", &id), ("householdNetworth", "lots")],
                "106",
                "householdNetworth",
            ),
            (vec![("partyId", &id), ("tags", "a,b,c,d,e,f,g,h,i,j,k")], "106", "tags"),
            (vec![("partyId", &id), ("primState", "")], "106", "primState"),
            (vec![("partyId", "P0000001"), ("lastName", "X")], "198", ""),
            (vec![("partyId", &theirs), ("lastName", "X")], "198", ""),
            (vec![("partyId", &entity), ("lastName", "X")], "198", ""),
            (vec![("partyId", &gone), ("lastName", "X")], "198", ""),
            // Parameter checks come before existence.
            (vec![("partyId", "P0000001"), ("dob", "bad")], "106", "dob"),
        ];
        for (params, want, named) in &cases {
            let r = t.post("updateParty", params).await;
            assert_eq!(code(&r), *want, "{params:?}: {:?}", r.json);
            assert_eq!(r.status, 404);
            assert!(r.desc().contains(named), "{params:?}: {}", r.desc());
        }
        assert_eq!(party_record(&t, &id).await, before, "rejected updates change nothing");
        assert!(hook.next(2).await.is_none(), "and send no webhook");
        let r = t.get_as(&other, &format!("/v3/parties/{theirs}")).await;
        assert_eq!(
            r.json["party"]["lastName"], "Lee",
            "another client's party is untouched"
        );
    }
);

// ---------------------------------------------------------------- flags (775, 776)

both!(
    flagged_ssns_and_emails_are_775_and_776_after_106_and_write_nothing,
    |t: TestApp| async move {
        let id = create_party(&t).await;
        let entity = create_entity(&t).await;
        let mut hook = Listener::start(200).await;
        for m in ["createParty", "updateParty", "updateEntity"] {
            t.register_webhook(m, &[&hook.url]).await;
        }
        set_flags(&t, "ssn", &["123-45-6789"]).await;
        set_flags(&t, "email", &["Bad@Example.com"]).await;
        let (parties, entities) = (total_parties(&t).await, total_entities(&t).await);
        let before = (party_record(&t, &id).await, entity_record(&t, &entity).await);
        let flagged_ssn = ("socialSecurityNumber", "123456789");
        let flagged_email = ("emailAddress", " bad@EXAMPLE.com");
        let cases: Vec<(&str, Pairs, &str)> = vec![
            ("createParty", with(PARTY, &[flagged_ssn]), "775"),
            (
                "createParty",
                with(PARTY, &[("socialSecurityNumber", "123-45-6789")]),
                "775",
            ),
            ("createParty", with(PARTY, &[flagged_email]), "776"),
            (
                "createParty",
                with(PARTY, &[("emailAddress2", "BAD@example.com")]),
                "776",
            ),
            ("createParty", with(PARTY, &[flagged_ssn, flagged_email]), "775"),
            (
                "createParty",
                with(&without(PARTY, &["lastName"]), &[flagged_ssn]),
                "106",
            ),
            ("updateParty", vec![("partyId", &id), flagged_ssn], "775"),
            (
                "updateParty",
                vec![("partyId", &id), ("emailAddress2", "bad@example.com")],
                "776",
            ),
            ("updateParty", vec![("partyId", &id), ("dob", "x"), flagged_ssn], "106"),
            ("updateParty", vec![("partyId", "P0000001"), flagged_ssn], "198"),
            ("createEntity", with(ENTITY, &[flagged_email]), "776"),
            ("updateEntity", vec![("partyId", &entity), flagged_email], "776"),
            (
                "updateEntity",
                vec![("partyId", &entity), ("emailAddress2", "Bad@example.com")],
                "776",
            ),
        ];
        for (op, params, want) in &cases {
            let r = t.put(op, params).await;
            assert_eq!(r.code(), *want, "{op} {params:?}: {:?}", r.json);
        }
        assert_eq!(
            (total_parties(&t).await, total_entities(&t).await),
            (parties, entities),
            "nothing created"
        );
        assert_eq!(
            (party_record(&t, &id).await, entity_record(&t, &entity).await),
            before,
            "nothing changed"
        );
        assert!(hook.next(2).await.is_none(), "no webhook for a flagged value");
        // Unflagged values pass; removing a flag makes its value usable again.
        assert_eq!(
            t.put("createParty", &with(PARTY, &[("socialSecurityNumber", "123-45-6780")]))
                .await
                .code(),
            "101"
        );
        assert!(hook.next(5).await.is_some());
        let r = t
            .operator(Method::DELETE, "/operator/flags/ssn", json!({"values": ["123456789"]}))
            .await;
        assert_eq!(r.status, 200);
        let r = t.post("updateParty", &[("partyId", &id), flagged_ssn]).await;
        assert_eq!(r.code(), "101", "{:?}", r.json);
    }
);

both!(
    operator_flag_lists_are_replaced_added_to_removed_and_checked,
    |t: TestApp| async move {
        let r = t.operator(Method::GET, "/operator/flags/ssn", json!({})).await;
        assert_eq!((r.status, &r.json), (200, &json!({"kind": "ssn", "values": []})));
        set_flags(&t, "ssn", &["111-22-3333", "444556666"]).await;
        let r = t
            .operator(
                Method::POST,
                "/operator/flags/ssn",
                json!({"values": ["777-88-9999", "111223333"]}),
            )
            .await;
        assert_eq!(r.json["values"], json!(["111223333", "444556666", "777889999"]));
        let r = t
            .operator(
                Method::DELETE,
                "/operator/flags/ssn",
                json!({"values": ["444-55-6666"]}),
            )
            .await;
        assert_eq!(r.json["values"], json!(["111223333", "777889999"]));
        set_flags(&t, "ssn", &["777889999"]).await;
        let r = t.operator(Method::GET, "/operator/flags/ssn", json!({})).await;
        assert_eq!(r.json["values"], json!(["777889999"]), "PUT replaces the list");
        set_flags(&t, "email", &[" A@B.example "]).await;
        let r = t.operator(Method::GET, "/operator/flags/email", json!({})).await;
        assert_eq!(r.json["values"], json!(["a@b.example"]));
        // Bad values are 400 and write nothing.
        let r = t
            .operator(
                Method::PUT,
                "/operator/flags/ssn",
                json!({"values": ["123", "888-77-6666"]}),
            )
            .await;
        assert_eq!(r.status, 400, "{:?}", r.json);
        let r = t
            .operator(Method::POST, "/operator/flags/email", json!({"values": ["no-at-sign"]}))
            .await;
        assert_eq!(r.status, 400);
        let r = t
            .operator(Method::PUT, "/operator/flags/ssn", json!({"vals": []}))
            .await;
        assert_eq!(r.status, 400);
        let r = t.operator(Method::GET, "/operator/flags/ssn", json!({})).await;
        assert_eq!(r.json["values"], json!(["777889999"]));
        assert_eq!(
            t.operator(Method::GET, "/operator/flags/phone", json!({})).await.status,
            404
        );
        let r = t
            .raw(Method::GET, "/operator/flags/ssn", &[], Ok(bytes::Bytes::new()))
            .await;
        assert_eq!(r.status, 401, "the operator token is required");
        // The lists are service-wide: another client is refused too.
        let other = other_client(&t).await;
        let r = t
            .form_as(
                &other,
                Method::PUT,
                "createParty",
                &with(PARTY, &[("socialSecurityNumber", "777889999")]),
            )
            .await;
        assert_eq!(r.code(), "775");
    }
);

// ---------------------------------------------------------------- getParty

both!(
    get_party_answers_one_redacted_record_and_sends_it_as_webhook,
    |t: TestApp| async move {
        let mut hook = Listener::start(200).await;
        t.register_webhook("getParty", &[&hook.url]).await;
        let r = t
            .put(
                "createParty",
                &with(
                    PARTY,
                    &[
                        ("socialSecurityNumber", "123-45-6789"),
                        ("KYCstatus", "Auto Approved"),
                        ("householdNetworth", "250000"),
                    ],
                ),
            )
            .await;
        let id = r.inserted("partyDetails")["partyId"].as_str().unwrap().to_owned();
        let r = t.post("getParty", &[("partyId", &id)]).await;
        assert_eq!(r.code(), "101", "{:?}", r.json);
        let list = r.json["partyDetails"].as_array().unwrap();
        assert_eq!(list.len(), 1);
        let rec = list[0].as_object().unwrap();
        assert_eq!(rec["partyId"], id.as_str());
        assert_eq!(
            (rec["socialSecurityNumber"].as_str(), rec["dob"].as_str()),
            (Some("REDACTED"), Some("REDACTED"))
        );
        assert_eq!(rec["kycStatus"], "Auto Approved");
        assert_eq!(rec["esignStatus"], "NOTSIGNED");
        assert_eq!(rec["householdNetworth"], 250000);
        for absent in ["KYCstatus", "partystatus", "createdIpAddress", "archived", "deleted"] {
            assert!(!rec.contains_key(absent), "{absent}");
        }
        for present in [
            "firstName",
            "primZip",
            "invest_to",
            "amlDate",
            "documentKey",
            "field3",
            "createdDate",
            "updatedDate",
        ] {
            assert!(rec.contains_key(present), "{present}");
        }
        let got = hook.next(5).await.expect("getParty webhook").pairs();
        let keys: Vec<&str> = rec
            .iter()
            .filter(|(_, v)| !v.is_null())
            .map(|(k, _)| k.as_str())
            .collect();
        assert_eq!(
            names(&got),
            keys,
            "the response record's fields, in order, nulls omitted"
        );
        let map: std::collections::HashMap<_, _> = got.into_iter().collect();
        assert_eq!(
            (map["socialSecurityNumber"].as_str(), map["householdNetworth"].as_str()),
            ("REDACTED", "250000")
        );
        // Errors.
        let other = other_client(&t).await;
        let theirs = create_party_as(&t, &other).await;
        let entity = create_entity(&t).await;
        assert_eq!(t.post("getParty", &[]).await.code(), "106");
        for unknown in ["P0000001", "garbage", theirs.as_str(), entity.as_str()] {
            assert_eq!(
                t.post("getParty", &[("partyId", unknown)]).await.code(),
                "198",
                "{unknown}"
            );
        }
        t.post("deleteParty", &[("partyId", &id)]).await;
        assert_eq!(t.post("getParty", &[("partyId", &id)]).await.code(), "198");
        assert!(hook.next(2).await.is_none(), "failed reads send nothing");
    }
);

// ---------------------------------------------------------------- searchParty / getAllParties

both!(
    search_party_matches_ids_names_emails_and_phones,
    |t: TestApp| async move {
        let ann = create_party(&t).await;
        let r = t
            .put(
                "createParty",
                &with(
                    PARTY,
                    &[
                        ("firstName", "Bob"),
                        ("lastName", "Stone"),
                        ("emailAddress", "Bob@Rock.example"),
                        ("phone", "555-0199"),
                    ],
                ),
            )
            .await;
        let bob = r.inserted("partyDetails")["partyId"].as_str().unwrap().to_owned();
        let gone = create_party(&t).await;
        t.post("deleteParty", &[("partyId", &gone)]).await;
        let other = other_client(&t).await;
        create_party_as(&t, &other).await;
        let ids = |r: &Resp| -> Vec<String> {
            r.json["partyDetails"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p["partyId"].as_str().unwrap().to_owned())
                .collect()
        };
        let r = t.post("searchParty", &[("searchKeyword", "LEE")]).await;
        assert_eq!(r.code(), "101");
        assert_eq!(
            ids(&r),
            vec![ann.clone()],
            "deleted and other clients' parties are not found"
        );
        let rec = &r.json["partyDetails"][0];
        assert_eq!(rec["socialSecurityNumber"], "");
        assert_eq!(rec["dob"], "REDACTED");
        assert!(rec.get("partystatus").is_none() && rec.get("kycStatus").is_some());
        for kw in ["rock.EXAMPLE", "bob stone", "0199", bob.as_str()] {
            assert_eq!(
                ids(&t.post("searchParty", &[("searchKeyword", kw)]).await),
                vec![bob.clone()],
                "{kw}"
            );
        }
        let r = t.post("searchParty", &[("searchKeyword", "example.com")]).await;
        assert_eq!(ids(&r), vec![ann.clone()]);
        let mut sent = hook(&t, "searchParty").await;
        let r = t.post("searchParty", &[("searchKeyword", "P")]).await;
        assert_eq!(ids(&r), vec![bob.clone(), ann.clone()], "newest first");
        // The webhook names the parties answered, as searchAccount's accountIds.
        let got = sent.next(5).await.expect("searchParty webhook").pairs();
        assert_eq!(got, [("partyIds".to_owned(), format!("{bob},{ann}"))]);
        let r = t.post("searchParty", &[("searchKeyword", "nobody")]).await;
        assert_eq!((r.code(), &r.json["partyDetails"]), ("101", &json!([])));
        assert_eq!(t.post("searchParty", &[]).await.code(), "106");
        assert_eq!(t.post("searchParty", &[("searchKeyword", "  ")]).await.code(), "106");
    }
);

both!(
    get_all_parties_mixes_individuals_and_entities_with_their_status,
    |t: TestApp| async move {
        let p1 = create_party(&t).await;
        let e1 = create_entity(&t).await;
        let p2 = create_party(&t).await;
        let gone = create_party(&t).await;
        t.post("deleteParty", &[("partyId", &gone)]).await;
        let r = t
            .post(
                "updatePartyEntityArchivestatus",
                &[("partyId", &e1), ("archiveStatus", "1")],
            )
            .await;
        assert_eq!(r.code(), "101");
        let ids = |r: &Resp| -> Vec<String> {
            r.json["partyDetails"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p["partyId"].as_str().unwrap().to_owned())
                .collect()
        };
        let mut sent = hook(&t, "getAllParties").await;
        let r = t.post("getAllParties", &[]).await;
        assert_eq!(r.code(), "101", "{:?}", r.json);
        let all = ids(&r);
        assert_eq!(all.len(), 3);
        let got = sent.next(5).await.expect("getAllParties webhook").pairs();
        assert_eq!(got, [("partyIds".to_owned(), all.join(","))], "entities too");
        assert!(all.contains(&p1) && all.contains(&p2) && all.contains(&e1));
        assert_eq!(all[0], p2, "newest first");
        let list = r.json["partyDetails"].as_array().unwrap();
        let e = list.iter().find(|x| x["partyId"] == e1.as_str()).unwrap();
        assert_eq!(
            (e["partystatus"].as_str(), e["entityName"].as_str()),
            (Some("Archived"), Some("Lee Holdings LLC"))
        );
        assert!(e.get("KYCstatus").is_some());
        let p = list.iter().find(|x| x["partyId"] == p1.as_str()).unwrap();
        assert_eq!(
            (p["partystatus"].as_str(), p["dob"].as_str()),
            (Some("Active"), Some("REDACTED"))
        );
        assert_eq!(ids(&t.post("getAllParties", &[("limit", "1")]).await), vec![p2.clone()]);
        assert_eq!(
            ids(&t.post("getAllParties", &[("limit", "1"), ("offset", "1")]).await).len(),
            1
        );
        assert_eq!(ids(&t.post("getAllParties", &[("offset", "10")]).await).len(), 0);
        let r = t.post("getAllParties", &[("deleted", "true")]).await;
        assert!(ids(&r).contains(&gone));
        for (k, v) in [("limit", "0"), ("limit", "x"), ("offset", "-1"), ("deleted", "maybe")] {
            let r = t.post("getAllParties", &[(k, v)]).await;
            assert_eq!(r.code(), "106", "{k}={v}");
            assert!(r.desc().contains(k));
        }
        let other = other_client(&t).await;
        let r = t.form_as(&other, Method::POST, "getAllParties", &[]).await;
        assert_eq!((r.code(), &r.json["partyDetails"]), ("101", &json!([])));
    }
);

// ---------------------------------------------------------------- entities

both!(
    update_entity_rewrites_the_sent_fields_and_fires_its_webhook,
    |t: TestApp| async move {
        let mut hook = Listener::start(200).await;
        t.register_webhook("updateEntity", &[&hook.url]).await;
        let id = create_entity(&t).await;
        let r = t
            .post(
                "updateEntity",
                &[
                    ("partyId", &id),
                    ("entityName", "Lee Holdings II"),
                    ("AMLstatus", "Disapproved"),
                    ("totalAssets", "5000"),
                    ("formationDate", "03-04-2001"),
                ],
            )
            .await;
        assert_eq!(r.code(), "101", "{:?}", r.json);
        assert_eq!(
            r.inserted("entityDetails"),
            &json!({"partyId": id, "KYCstatus": "", "AMLstatus": "Disapproved"})
        );
        let got = hook.next(5).await.expect("updateEntity webhook");
        assert_eq!(
            got.pairs(),
            pairs(&[("partyId", &id), ("KYCstatus", ""), ("AMLstatus", "Disapproved")])
        );
        let e = entity_record(&t, &id).await;
        assert_eq!(
            (
                e["entityName"].as_str(),
                e["primCity"].as_str(),
                e["totalAssets"].as_i64()
            ),
            (Some("Lee Holdings II"), Some("Austin"), Some(5000))
        );
        assert_eq!(e["formationDate"], "03-04-2001");
    }
);

both!(
    update_entity_rejections_are_106_or_198_and_change_nothing,
    |t: TestApp| async move {
        let mut hook = Listener::start(200).await;
        t.register_webhook("updateEntity", &[&hook.url]).await;
        let id = create_entity(&t).await;
        let party = create_party(&t).await;
        let other = other_client(&t).await;
        let r = t.form_as(&other, Method::PUT, "createEntity", ENTITY).await;
        let theirs = r.inserted("entityDetails")["partyId"].as_str().unwrap().to_owned();
        let gone = create_entity(&t).await;
        assert_eq!(t.post("deleteEntity", &[("partyId", &gone)]).await.code(), "101");
        let before = entity_record(&t, &id).await;
        let cases: Vec<(Pairs, &str)> = vec![
            (vec![("entityName", "X")], "106"),
            (vec![("partyId", &id), ("entityName", "")], "106"),
            (vec![("partyId", &id), ("totalAssets", "many")], "106"),
            (vec![("partyId", &id), ("formationDate", "2001/03/04")], "106"),
            // Part 2: two letters, NOUS outside the US.
            (vec![("partyId", &id), ("primState", "Texas")], "106"),
            (vec![("partyId", &id), ("primState", "T1")], "106"),
            (vec![("partyId", "E0000001"), ("entityName", "X")], "198"),
            (vec![("partyId", &party), ("entityName", "X")], "198"),
            (vec![("partyId", &theirs), ("entityName", "X")], "198"),
            (vec![("partyId", &gone), ("entityName", "X")], "198"),
        ];
        for (params, want) in &cases {
            let r = t.post("updateEntity", params).await;
            assert_eq!(r.code(), *want, "{params:?}: {:?}", r.json);
        }
        assert_eq!(entity_record(&t, &id).await, before);
        assert!(hook.next(2).await.is_none());
    }
);

both!(
    get_entity_answers_one_record_with_upper_case_statuses,
    |t: TestApp| async move {
        let mut hook = Listener::start(200).await;
        t.register_webhook("getEntity", &[&hook.url]).await;
        let r = t
            .put(
                "createEntity",
                &with(ENTITY, &[("KYCstatus", "Pending"), ("ein", "12-3456789")]),
            )
            .await;
        let id = r.inserted("entityDetails")["partyId"].as_str().unwrap().to_owned();
        let r = t.post("getEntity", &[("partyId", &id)]).await;
        assert_eq!(r.code(), "101", "{:?}", r.json);
        let list = r.json["entityDetails"].as_array().unwrap();
        assert_eq!(list.len(), 1);
        let rec = list[0].as_object().unwrap();
        assert_eq!(
            (
                rec["KYCstatus"].as_str(),
                rec["AMLstatus"].as_str(),
                rec["ein"].as_str()
            ),
            (Some("Pending"), Some(""), Some("12-3456789"))
        );
        assert!(!rec.contains_key("kycStatus") && !rec.contains_key("partystatus"));
        let got = hook.next(5).await.expect("getEntity webhook").pairs();
        let keys: Vec<&str> = rec
            .iter()
            .filter(|(_, v)| !v.is_null())
            .map(|(k, _)| k.as_str())
            .collect();
        assert_eq!(names(&got), keys);
        assert_eq!(got[0], ("partyId".to_owned(), id.clone()));
        let party = create_party(&t).await;
        assert_eq!(t.post("getEntity", &[]).await.code(), "106");
        for unknown in ["E0000001", party.as_str()] {
            assert_eq!(t.post("getEntity", &[("partyId", unknown)]).await.code(), "198");
        }
        let other = other_client(&t).await;
        let r = t.form_as(&other, Method::POST, "getEntity", &[("partyId", &id)]).await;
        assert_eq!(r.code(), "198", "another client's ID");
        assert!(hook.next(2).await.is_none());
    }
);

both!(delete_entity_is_virtual_and_unknown_is_198, |t: TestApp| async move {
    let mut hook = Listener::start(200).await;
    t.register_webhook("deleteEntity", &[&hook.url]).await;
    let id = create_entity(&t).await;
    let party = create_party(&t).await;
    assert_eq!(t.post("deleteEntity", &[]).await.code(), "106");
    assert_eq!(t.post("deleteEntity", &[("partyId", &party)]).await.code(), "198");
    assert_eq!(t.post("deleteEntity", &[("partyId", "E0000001")]).await.code(), "198");
    let other = other_client(&t).await;
    let r = t
        .form_as(&other, Method::POST, "deleteEntity", &[("partyId", &id)])
        .await;
    assert_eq!(r.code(), "198");
    assert_eq!(entity_record(&t, &id).await["partystatus"], "Active", "still there");
    let r = t.post("deleteEntity", &[("partyId", &id)]).await;
    assert_eq!((r.code(), r.desc()), ("101", "Party deleted successfully!"));
    assert_eq!(r.json.as_object().unwrap().len(), 2, "envelope only");
    assert_eq!(
        hook.next(5).await.expect("deleteEntity webhook").pairs(),
        pairs(&[("partyId", &id)])
    );
    assert_eq!(t.post("deleteEntity", &[("partyId", &id)]).await.code(), "198");
    assert_eq!(
        t.get("/v3/entities").await.code(),
        "239",
        "deleted entities are omitted"
    );
    assert_eq!(t.post("getEntity", &[("partyId", &id)]).await.code(), "198");
    assert_eq!(
        entity_record(&t, &id).await["partystatus"],
        "Archived",
        "listed as archived"
    );
    assert_eq!(
        party_record(&t, &party).await["partyId"],
        party.as_str(),
        "the party is untouched"
    );
});

both!(
    search_entity_matches_ids_names_eins_and_emails,
    |t: TestApp| async move {
        let a = create_entity(&t).await;
        let r = t
            .put(
                "createEntity",
                &with(
                    ENTITY,
                    &[
                        ("entityName", "Acme Trust"),
                        ("ein", "98-7654321"),
                        ("emailAddress", "Ops@Acme.example"),
                    ],
                ),
            )
            .await;
        let b = r.inserted("entityDetails")["partyId"].as_str().unwrap().to_owned();
        create_party(&t).await;
        let ids = |r: &Resp| -> Vec<String> {
            r.json["entityDetails"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p["partyId"].as_str().unwrap().to_owned())
                .collect()
        };
        for kw in ["acme", "7654", "OPS@acme", b.as_str()] {
            let r = t.post("searchEntity", &[("searchKeyword", kw)]).await;
            assert_eq!(r.code(), "101");
            assert_eq!(ids(&r), vec![b.clone()], "{kw}");
        }
        let r = t.post("searchEntity", &[("searchKeyword", "holdings")]).await;
        assert_eq!(ids(&r), vec![a.clone()]);
        assert_eq!(r.json["entityDetails"][0]["KYCstatus"], "");
        let r = t.post("searchEntity", &[("searchKeyword", "E")]).await;
        assert_eq!(ids(&r), vec![b.clone(), a.clone()], "entities only, newest first");
        t.post("deleteEntity", &[("partyId", &a)]).await;
        let r = t.post("searchEntity", &[("searchKeyword", "holdings")]).await;
        assert_eq!((r.code(), &r.json["entityDetails"]), ("101", &json!([])));
        assert_eq!(t.post("searchEntity", &[]).await.code(), "106");
    }
);

// ---------------------------------------------------------------- updatePartyEntityArchivestatus

both!(
    archive_status_archives_parties_and_entities_and_shows_in_lists,
    |t: TestApp| async move {
        let mut hook = Listener::start(200).await;
        t.register_webhook("updatePartyEntityArchivestatus", &[&hook.url]).await;
        let p = create_party(&t).await;
        let e = create_entity(&t).await;
        let r = t
            .post(
                "updatePartyEntityArchivestatus",
                &[("partyId", &p), ("archiveStatus", "1")],
            )
            .await;
        assert_eq!(r.code(), "101", "{:?}", r.json);
        assert_eq!(r.inserted("partyDetails"), &json!({"partyId": p, "archiveStatus": "1"}));
        assert_eq!(
            hook.next(5).await.expect("webhook").pairs(),
            pairs(&[("partyId", &p), ("archiveStatus", "1")])
        );
        assert_eq!(t.get("/v3/parties").await.json["parties"][0]["partystatus"], "Archived");
        assert_eq!(
            t.post("getParty", &[("partyId", &p)]).await.code(),
            "101",
            "archived is not deleted"
        );
        let r = t
            .post(
                "updatePartyEntityArchivestatus",
                &[("partyId", &e), ("archiveStatus", "true")],
            )
            .await;
        assert_eq!(r.inserted("partyDetails")["archiveStatus"], "1");
        assert_eq!(
            hook.next(5).await.expect("webhook").pairs(),
            pairs(&[("partyId", &e), ("archiveStatus", "1")])
        );
        assert_eq!(entity_record(&t, &e).await["partystatus"], "Archived");
        let r = t
            .post(
                "updatePartyEntityArchivestatus",
                &[("partyId", &p), ("archiveStatus", "0")],
            )
            .await;
        assert_eq!(r.code(), "101");
        assert_eq!(
            hook.next(5).await.expect("webhook").pairs(),
            pairs(&[("partyId", &p), ("archiveStatus", "0")])
        );
        assert_eq!(party_record(&t, &p).await["partystatus"], "Active");
    }
);

both!(
    archive_status_rejections_are_106_or_198_and_change_nothing,
    |t: TestApp| async move {
        let mut hook = Listener::start(200).await;
        t.register_webhook("updatePartyEntityArchivestatus", &[&hook.url]).await;
        let p = create_party(&t).await;
        let gone = create_entity(&t).await;
        t.post("deleteEntity", &[("partyId", &gone)]).await;
        let other = other_client(&t).await;
        let theirs = create_party_as(&t, &other).await;
        let gone_before = entity_record(&t, &gone).await;
        let cases: Vec<(Pairs, &str)> = vec![
            (vec![("archiveStatus", "1")], "106"),
            (vec![("partyId", &p)], "106"),
            (vec![("partyId", &p), ("archiveStatus", "2")], "106"),
            (vec![("partyId", &p), ("archiveStatus", "Archived")], "106"),
            (vec![("partyId", "P0000001"), ("archiveStatus", "1")], "198"),
            (vec![("partyId", "E0000001"), ("archiveStatus", "1")], "198"),
            (vec![("partyId", "X1"), ("archiveStatus", "1")], "198"),
            (vec![("partyId", &gone), ("archiveStatus", "1")], "198"),
            (vec![("partyId", &theirs), ("archiveStatus", "1")], "198"),
        ];
        for (params, want) in &cases {
            let r = t.post("updatePartyEntityArchivestatus", params).await;
            assert_eq!(r.code(), *want, "{params:?}: {:?}", r.json);
        }
        assert_eq!(party_record(&t, &p).await["partystatus"], "Active");
        assert_eq!(entity_record(&t, &gone).await, gone_before);
        let r = t.get_as(&other, &format!("/v3/parties/{theirs}")).await;
        assert_eq!(r.json["party"]["partystatus"], "Active");
        assert!(hook.next(2).await.is_none());
    }
);

// ---------------------------------------------------------------- entity supplements

const SUPP_FIELDS: &str = "entityID poliCont poliContDate CFTC CFTCrole boName boSSN planassetLimit insassetLimit notes TaxYEmonth USPerson BPpurchaser BPemployers BPaffiliates BPsponsor BankHoldingCo InvCompanyAct InvCompanyAct_individualowners InvCompanyAct_entityowners CFIUS PurchaserRep OtherOccupations";

both!(
    entity_supplements_are_created_once_updated_and_sent_in_order,
    |t: TestApp| async move {
        let mut hook = Listener::start(200).await;
        t.register_webhook("createEntitySupp", &[&hook.url]).await;
        t.register_webhook("updateEntitySupp", &[&hook.url]).await;
        let e = create_entity(&t).await;
        let r = t
            .post(
                "createEntitySupp",
                &[
                    ("entityID", &e),
                    ("poliCont", "No"),
                    ("CFTC", "yes-ish"),
                    ("boName", "Ann Lee"),
                    ("boSSN", "123-45-6789"),
                    ("OtherOccupations", "none"),
                ],
            )
            .await;
        assert_eq!(r.code(), "101", "{:?}", r.json);
        let rec = r.inserted("entityDetails").as_object().unwrap().clone();
        let mut expected: Vec<&str> = SUPP_FIELDS.split(' ').collect();
        expected.extend(["createdDate", "createdIpAddress"]);
        assert_eq!(rec.keys().map(String::as_str).collect::<Vec<_>>(), expected);
        assert_eq!(
            (
                rec["entityID"].as_str(),
                rec["boSSN"].as_str(),
                rec["CFTC"].as_str(),
                rec["USPerson"].as_str()
            ),
            (Some(e.as_str()), Some("REDACTED"), Some("yes-ish"), Some(""))
        );
        let got = hook.next(5).await.expect("createEntitySupp webhook").pairs();
        assert_eq!(names(&got), expected);
        let map: std::collections::HashMap<_, _> = got.into_iter().collect();
        assert_eq!(
            (
                map["boName"].as_str(),
                map["boSSN"].as_str(),
                map["createdIpAddress"].as_str()
            ),
            ("Ann Lee", "REDACTED", "127.0.0.1")
        );
        let created = map["createdDate"].clone();
        // A second supplement for the same entity is refused.
        let r = t
            .post("createEntitySupp", &[("entityID", &e), ("poliCont", "Yes")])
            .await;
        assert_eq!(r.code(), "106");
        // The update changes the fields it sends and keeps the rest.
        let r = t
            .post(
                "updateEntitySupp",
                &[("partyId", &e), ("poliCont", "Yes"), ("boSSN", "")],
            )
            .await;
        assert_eq!(r.code(), "101", "{:?}", r.json);
        let mut expected: Vec<&str> = SUPP_FIELDS.split(' ').collect();
        expected.extend(["createdDate", "updatedDate"]);
        let got = hook.next(5).await.expect("updateEntitySupp webhook").pairs();
        assert_eq!(names(&got), expected);
        let map: std::collections::HashMap<_, _> = got.into_iter().collect();
        assert_eq!(
            (
                map["poliCont"].as_str(),
                map["boName"].as_str(),
                map["boSSN"].as_str(),
                map["CFTC"].as_str()
            ),
            ("Yes", "Ann Lee", "", "yes-ish"),
            "the second create changed nothing"
        );
        assert_eq!(map["createdDate"], created);
        assert_eq!(r.inserted("entityDetails")["poliCont"], "Yes");
    }
);

both!(
    entity_supplement_rejections_are_106_or_198_and_change_nothing,
    |t: TestApp| async move {
        let mut hook = Listener::start(200).await;
        t.register_webhook("createEntitySupp", &[&hook.url]).await;
        t.register_webhook("updateEntitySupp", &[&hook.url]).await;
        let e = create_entity(&t).await;
        let bare = create_entity(&t).await;
        let party = create_party(&t).await;
        let other = other_client(&t).await;
        let r = t.form_as(&other, Method::PUT, "createEntity", ENTITY).await;
        let theirs = r.inserted("entityDetails")["partyId"].as_str().unwrap().to_owned();
        for op in ["createEntitySupp", "updateEntitySupp"] {
            let cases: Vec<(Pairs, &str)> = vec![
                (vec![("poliCont", "No")], "106"),
                (vec![("entityID", &e), ("boSSN", "12-3")], "106"),
                (vec![("entityID", "E0000001")], "198"),
                (vec![("entityID", &party)], "198"),
                (vec![("entityID", &theirs)], "198"),
            ];
            for (params, want) in &cases {
                let r = t.post(op, params).await;
                assert_eq!(r.code(), *want, "{op} {params:?}: {:?}", r.json);
            }
        }
        let r = t
            .post("updateEntitySupp", &[("entityID", &bare), ("poliCont", "No")])
            .await;
        assert_eq!(r.code(), "106", "no supplement yet");
        assert!(hook.next(2).await.is_none());
        let r = t.post("createEntitySupp", &[("entityID", &bare)]).await;
        assert_eq!(r.code(), "101", "the refused update created nothing");
        let rec = r.inserted("entityDetails");
        assert_eq!(rec["poliCont"], "");
    }
);

// ---------------------------------------------------------------- field permissions

both!(
    updates_need_the_field_permissions_of_what_they_set,
    |t: TestApp| async move {
        let limited = t.new_client(json!({"scopes": ["*"]})).await;
        let p = create_party_as(&t, &limited).await;
        let r = t.form_as(&limited, Method::PUT, "createEntity", ENTITY).await;
        let e = r.inserted("entityDetails")["partyId"].as_str().unwrap().to_owned();
        let path = format!("/operator/clients/{}/field-permissions", limited.id);
        let r = t.operator(Method::PUT, &path, json!({"fields": ["firstName"]})).await;
        assert_eq!(r.status, 200);
        let (p, e) = (p.as_str(), e.as_str());
        let cases: [(&str, Pairs, &str); 4] = [
            ("updateParty", vec![("partyId", p), ("lastName", "X")], "110"),
            ("updateParty", vec![("partyId", p), ("firstName", "Anna")], "101"),
            ("updateEntity", vec![("partyId", e), ("entityName", "X")], "110"),
            ("createEntitySupp", vec![("entityID", e), ("poliCont", "No")], "110"),
        ];
        for (op, params, want) in &cases {
            let r = t.form_as(&limited, Method::POST, op, params).await;
            assert_eq!(r.code(), *want, "{op} {params:?}: {:?}", r.json);
        }
        let r = t.get_as(&limited, &format!("/v3/parties/{p}")).await;
        assert_eq!(
            (
                r.json["party"]["firstName"].as_str(),
                r.json["party"]["lastName"].as_str()
            ),
            (Some("Anna"), Some("Lee"))
        );
    }
);

// ---------------------------------------------------------------- costs

both!(
    concurrent_updates_of_one_party_all_succeed_and_the_last_writer_wins,
    |t: TestApp| async move {
        // Part 1, Retry behaviour 4: concurrent calls on one ID are not ordered; each succeeds
        // and the last writer's snapshot stands.
        let t = std::sync::Arc::new(t);
        let id = create_party(&t).await;
        let names: Vec<String> = (0..100).map(|i| format!("Name{i}")).collect();
        let calls = names.iter().cloned().map(|name| {
            let (t, id) = (t.clone(), id.clone());
            tokio::spawn(async move { t.post("updateParty", &[("partyId", &id), ("firstName", &name)]).await })
        });
        for call in futures_util::future::join_all(calls).await {
            let r = call.unwrap();
            assert_eq!(r.code(), "101", "{:?}", r.json);
        }
        let r = t.post("getParty", &[("partyId", &id)]).await;
        let first = r.json["partyDetails"][0]["firstName"].as_str().unwrap();
        assert!(names.iter().any(|n| n == first), "{first}");
    }
);
