//! The slice's parties, entities and accounts.

use api_tests::{both, TestApp};
use http::Method;
use serde_json::json;

use crate::fixtures::*;

both!(
    create_party_answers_the_insert_array_with_echoed_statuses,
    |t: TestApp| async move {
        let r = t
            .put(
                "createParty",
                &with(PARTY, &[("KYCstatus", "Pending"), ("createdIpAddress", "1.2.3.4")]),
            )
            .await;
        assert_eq!((r.status, r.code(), r.desc()), (200, "101", "Ok"));
        assert_eq!(r.json["partyDetails"][0], json!(true));
        let rec = r.inserted("partyDetails");
        assert_eq!(
            rec.as_object().unwrap().keys().collect::<Vec<_>>(),
            ["partyId", "KYCstatus", "AMLstatus"]
        );
        assert!(rec["partyId"].as_str().unwrap().starts_with('P'));
        assert_eq!(rec["KYCstatus"], "Pending");
        assert_eq!(rec["AMLstatus"], "");
    }
);

both!(create_party_ids_are_sequential_per_type, |t: TestApp| async move {
    let a = create_party(&t).await;
    let b = create_party(&t).await;
    let e = create_entity(&t).await;
    let n = |s: &str| s[1..].parse::<u64>().unwrap();
    assert_eq!(n(&b), n(&a) + 1);
    assert!(e.starts_with('E'));
    assert_eq!(a.len(), 8);
});

both!(create_party_checks_every_required_parameter, |t: TestApp| async move {
    for (name, _) in PARTY {
        let r = t.put("createParty", &without(PARTY, &[name])).await;
        assert_eq!(r.code(), "106", "{name}");
        assert!(r.desc().contains(name), "{name}: {}", r.desc());
    }
    let r = t
        .put(
            "createParty",
            &with(&without(PARTY, &["primState"]), &[("domicile", "non-resident")]),
        )
        .await;
    assert_eq!(r.code(), "101", "primState is optional for non-residents");
});

both!(create_party_rejects_malformed_values, |t: TestApp| async move {
    for (name, value) in [
        ("dob", "1980/01/02"),
        ("currentAnnIncome", "lots"),
        ("socialSecurityNumber", "12-34"),
        ("tags", "a,b,c,d,e,f,g,h,i,j,k"),
    ] {
        let r = t.put("createParty", &with(PARTY, &[(name, value)])).await;
        assert_eq!(r.code(), "106", "{name}={value}");
        assert!(r.desc().contains(name));
    }
    let r = t
        .put(
            "createParty",
            &with(
                PARTY,
                &[("socialSecurityNumber", "123-45-6789"), ("householdNetworth", "250000")],
            ),
        )
        .await;
    assert_eq!(r.code(), "101");
});

both!(
    party_read_redacts_ssn_and_dob_and_uses_lower_case_statuses,
    |t: TestApp| async move {
        let r = t
            .put(
                "createParty",
                &with(
                    PARTY,
                    &[
                        ("socialSecurityNumber", "123-45-6789"),
                        ("KYCstatus", "Auto Approved"),
                        ("householdNetworth", "5"),
                    ],
                ),
            )
            .await;
        let id = r.inserted("partyDetails")["partyId"].as_str().unwrap().to_owned();
        let r = t.get(&format!("/v3/parties/{id}")).await;
        assert_eq!(r.code(), "101");
        let p = &r.json["party"];
        assert_eq!(
            (p["socialSecurityNumber"].as_str(), p["dob"].as_str()),
            (Some("REDACTED"), Some("REDACTED"))
        );
        assert_eq!(p["kycStatus"], "Auto Approved");
        assert_eq!(p["householdNetworth"], 5);
        assert!(p["avgAnnIncome"].is_null());
        assert_eq!(p["partystatus"], "Active");
        assert!(p.get("KYCstatus").is_none() && p.get("createdIpAddress").is_none());
        let r = t.get("/v3/parties/P9999999").await;
        assert_eq!((r.status, r.code()), (404, "1404"));
    }
);

both!(lower_pii_levels_see_base_fields_only, |t: TestApp| async move {
    create_party(&t).await;
    create_account(&t).await;
    let low = t
        .new_client(json!({"scopes": ["party.read.pii_low", "account.read.pii_medium"]}))
        .await;
    // Another client's records are invisible: give this client its own.
    create_party_as(&t, &low).await;
    create_account_as(&t, &low, &[("email", "x@example.com")]).await;
    let r = t.get_as(&low, "/v3/parties").await;
    let p = &r.json["parties"][0];
    assert_eq!(p["firstName"], "REDACTED");
    assert!(p["partyId"].as_str().unwrap().starts_with('P'));
    // The status fields stay in clear (CONTRACT's account rule; part 2's status-like fields).
    for status in ["domicile", "esignStatus", "kycStatus", "partystatus"] {
        assert_ne!(p[status], "REDACTED", "{status}: {p}");
    }
    assert_eq!(p["esignStatus"], "NOTSIGNED");
    let r = t.get_as(&low, "/v3/accounts").await;
    let a = &r.json["accounts"][0];
    assert_eq!(
        (a["email"].as_str(), a["accountName"].as_str()),
        (Some("REDACTED"), Some("Ann Lee"))
    );
    // Empty or not: whether a sensitive field is filled in is not shown either.
    assert_eq!((&a["address2"], &a["field2"]), (&json!("REDACTED"), &json!("REDACTED")));
    assert_eq!(r.json["pagination"]["totalRecords"], 1);
});

both!(delete_party_is_virtual_and_unknown_is_198, |t: TestApp| async move {
    let id = create_party(&t).await;
    let r = t.post("deleteParty", &[("partyId", &id)]).await;
    assert_eq!((r.code(), r.desc()), ("101", "Party deleted successfully!"));
    assert_eq!(r.json.as_object().unwrap().len(), 2, "envelope only");
    assert_eq!(t.post("deleteParty", &[("partyId", &id)]).await.code(), "198");
    assert_eq!(t.post("deleteParty", &[("partyId", "P0")]).await.code(), "198");
    assert_eq!(t.post("deleteParty", &[]).await.code(), "106");
    assert_eq!(t.get("/v3/parties").await.code(), "239", "deleted records are omitted");
    let r = t.get("/v3/parties?deleted=true").await;
    assert_eq!(r.json["parties"][0]["partyId"], id.as_str());
    assert_eq!(
        r.json["parties"][0]["partystatus"], "Archived",
        "as deleted accounts list"
    );
});

both!(
    create_entity_answers_an_e_id_and_lists_with_upper_case_statuses,
    |t: TestApp| async move {
        let r = t
            .put(
                "createEntity",
                &with(ENTITY, &[("KYCstatus", "Pending"), ("totalAssets", "1000")]),
            )
            .await;
        assert_eq!(r.code(), "101");
        let rec = r.inserted("entityDetails");
        assert_eq!(rec.as_object().unwrap().len(), 1);
        let id = rec["partyId"].as_str().unwrap();
        assert!(id.starts_with('E'));
        let r = t.get("/v3/entities").await;
        let e = &r.json["entities"][0];
        assert_eq!(
            (e["partyId"].as_str(), e["KYCstatus"].as_str()),
            (Some(id), Some("Pending"))
        );
        for k in ["domicile", "entityName", "entityType"] {
            assert!(e.get(k).is_some(), "{k}");
        }
        assert_eq!(
            t.put("createEntity", &without(ENTITY, &["entityName"])).await.code(),
            "106"
        );
        assert_eq!(
            t.put("createEntity", &with(ENTITY, &[("totalAssets", "x")]))
                .await
                .code(),
            "106"
        );
    }
);

both!(
    create_account_takes_the_observed_parameters_and_answers_its_shape,
    |t: TestApp| async move {
        let r = t
            .put(
                "createAccount",
                &with(
                    ACCOUNT,
                    &[
                        ("KYCstatus", "Pending"),
                        ("AMLstatus", "Auto Approved"),
                        ("AccreditedStatus", "Self Accredited"),
                        ("approvalStatus", "Pending"),
                        ("streetAddress2", "Apt 2"),
                    ],
                ),
            )
            .await;
        assert_eq!(r.code(), "101", "{:?}", r.json);
        let records = r.json["accountDetails"].as_array().unwrap();
        assert_eq!(records.len(), 1, "{records:?}");
        let rec = &records[0];
        assert_eq!(
            rec.as_object().unwrap().keys().collect::<Vec<_>>(),
            [
                "accountId",
                "kycStatus",
                "amlStatus",
                "accreditedStatus",
                "approvalStatus"
            ]
        );
        assert_eq!(
            (rec["kycStatus"].as_str(), rec["accreditedStatus"].as_str()),
            (Some("Pending"), Some("Self Accredited"))
        );
        let id = rec["accountId"].as_str().unwrap();
        assert!(id.starts_with('A') && id.len() == 8);
        let a = &t.get(&format!("/v3/accounts/{id}")).await.json["account"];
        assert_eq!(
            (
                a["accountName"].as_str(),
                a["residentType"].as_str(),
                a["address1"].as_str(),
                a["address2"].as_str()
            ),
            (
                Some("Ann Lee"),
                Some("domestic_account"),
                Some("1 Main St"),
                Some("Apt 2")
            )
        );
        assert_eq!(a["accountstatus"], "Active");
    }
);

both!(
    create_account_accepts_aliases_and_checks_required_and_state,
    |t: TestApp| async move {
        let aliased = [
            ("accountName", "X"),
            ("type", "Entity"),
            ("residentType", "international_account"),
            ("address1", "1 Rue"),
            ("city", "Paris"),
            ("state", "NOUS"),
            ("zip", "75001"),
            ("country", "FR"),
        ];
        assert_eq!(t.put("createAccount", &aliased).await.code(), "101");
        for (name, _) in ACCOUNT {
            let r = t.put("createAccount", &without(ACCOUNT, &[name])).await;
            assert_eq!(r.code(), "106", "{name}");
        }
        let r = t.put("createAccount", &with(ACCOUNT, &[("state", "asdf")])).await;
        assert_eq!(r.code(), "106");
    }
);

both!(
    account_read_is_1404_for_unknown_and_redacts_nothing_at_full_scope,
    |t: TestApp| async move {
        let r = t.get("/v3/accounts/A0000001").await;
        assert_eq!((r.status, r.code()), (404, "1404"));
    }
);

both!(
    patch_account_changes_fields_and_answers_304_on_no_op,
    |t: TestApp| async move {
        let id = create_account(&t).await;
        let uri = format!("/v3/accounts/{id}");
        let c = t.creds();
        let r = t
            .json_as(
                &c,
                Method::PATCH,
                &uri,
                &json!({"account": {"city": "Dallas", "accreditedStatus": "Verified Accredited", "accountId": "A1"}}),
            )
            .await;
        assert_eq!((r.status, r.code()), (200, "101"), "{:?}", r.json);
        let a = t.get(&uri).await.json["account"].clone();
        assert_eq!(
            (
                a["city"].as_str(),
                a["accreditedStatus"].as_str(),
                a["accountId"].as_str()
            ),
            (Some("Dallas"), Some(""), Some(id.as_str()))
        );
        let r = t
            .json_as(&c, Method::PATCH, &uri, &json!({"account": {"city": "Dallas"}}))
            .await;
        assert_eq!((r.status, r.code()), (304, "101"));
        // Fields the API never sets (part 2: empty for accounts made through it) are known,
        // and ignored like the ones part 2 says cannot be set.
        let never = json!({"account": {"socialSecurityNumber": "123-45-6789", "dateOfBirth": "01-01-1980"}});
        let r = t.json_as(&c, Method::PATCH, &uri, &never).await;
        assert_eq!((r.status, r.code()), (304, "101"), "{:?}", r.json);
        let r = t
            .json_as(&c, Method::PATCH, &uri, &json!({"account": {"color": "red"}}))
            .await;
        assert_eq!((r.status, r.code()), (400, "1400"));
        let r = t.json_as(&c, Method::PATCH, &uri, &json!({"city": "Houston"})).await;
        assert_eq!((r.status, r.code()), (400, "1400"));
        let r = t
            .json_as(
                &c,
                Method::PATCH,
                "/v3/accounts/A0000009",
                &json!({"account": {"city": "X"}}),
            )
            .await;
        assert_eq!((r.status, r.code()), (404, "1404"));
        assert_eq!(
            t.get(&uri).await.json["account"]["city"],
            "Dallas",
            "rejected patches change nothing"
        );
    }
);

both!(
    patch_takes_body_credentials_beside_the_wrapper,
    |t: TestApp| async move {
        let id = create_account(&t).await;
        let body = json!({"clientID": t.client_id, "developerAPIKey": t.api_key, "account": {"zip": "73301"}});
        let r = t
            .raw(
                Method::PATCH,
                &format!("/v3/accounts/{id}"),
                &[("content-type", "application/json")],
                Ok(bytes::Bytes::from(body.to_string())),
            )
            .await;
        assert_eq!(r.code(), "101", "{:?}", r.json);
    }
);
