//! The list-resource rules of part 1 through the real endpoints.

use api_tests::{both, Resp, TestApp};
use serde_json::{json, Value};

use crate::fixtures::*;

async fn accounts(t: &TestApp, n: usize) -> Vec<String> {
    let mut ids = Vec::new();
    for i in 0..n {
        let name = format!("Holder {i}");
        let city = if i % 2 == 0 { "Austin" } else { "Boston" };
        ids.push(create_account_as(t, &t.creds(), &[("accountRegistration", &name), ("city", city)]).await);
    }
    ids
}

fn ids(r: &Value, key: &str, id: &str) -> Vec<String> {
    r[key]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x[id].as_str().unwrap().to_owned())
        .collect()
}

both!(
    default_page_is_ten_newest_first_with_pagination,
    |t: TestApp| async move {
        let made = accounts(&t, 12).await;
        let r = t.get("/v3/accounts").await;
        assert_eq!(r.code(), "101");
        let got = ids(&r.json, "accounts", "accountId");
        let mut expected: Vec<_> = made.iter().rev().take(10).cloned().collect();
        expected.truncate(10);
        assert_eq!(got, expected, "createdDate desc, ties by ID desc");
        assert_eq!(
            r.json["pagination"],
            json!({"totalRecords": 12, "startIndex": 0, "endIndex": 9})
        );
        let r = t.get("/v3/accounts?offset=10&limit=5").await;
        assert_eq!(
            ids(&r.json, "accounts", "accountId"),
            vec![made[1].clone(), made[0].clone()]
        );
        assert_eq!(
            r.json["pagination"],
            json!({"totalRecords": 12, "startIndex": 10, "endIndex": 11})
        );
    }
);

both!(limit_and_offset_errors, |t: TestApp| async move {
    accounts(&t, 2).await;
    for (q, status, code) in [
        ("limit=abc", 422, "1422"),
        ("offset=1.5", 422, "1422"),
        ("limit=0", 422, "239"),
        ("limit=501", 422, "239"),
        ("offset=-1", 422, "239"),
        ("offset=2", 422, "239"),
    ] {
        let r = t.get(&format!("/v3/accounts?{q}")).await;
        assert_eq!((r.status, r.code()), (status, code), "{q}");
        // With an empty array under the key, as the incumbent's clients read it.
        assert_eq!(r.json["accounts"], json!([]), "{q}");
    }
    assert_eq!(t.get("/v3/accounts?limit=500&offset=1").await.code(), "101");
    let r = t.get("/v3/accounts?filter=%7B").await;
    assert_eq!((r.status, r.code(), r.json.get("accounts")), (400, "1400", None));
});

both!(an_empty_set_rejects_even_offset_zero, |t: TestApp| async move {
    for uri in ["/v3/accounts", "/v3/parties", "/v3/entities", "/v3/links"] {
        let r = t.get(uri).await;
        assert_eq!((r.status, r.code()), (422, "239"), "{uri}");
        let key = uri.trim_start_matches("/v3/");
        assert_eq!(r.json[key], json!([]), "{uri}");
    }
});

both!(
    accounts_take_equality_filters_in_both_syntaxes,
    |t: TestApp| async move {
        let made = accounts(&t, 5).await;
        let r = t.get("/v3/accounts?filter[city]=Boston").await;
        assert_eq!(
            ids(&r.json, "accounts", "accountId"),
            vec![made[3].clone(), made[1].clone()]
        );
        assert_eq!(r.json["pagination"]["totalRecords"], 2);
        let q = format!(
            "/v3/accounts?filter={}",
            urlencode(&json!({"accountName": ["Holder 0", "Holder 4"]}).to_string())
        );
        assert_eq!(
            ids(&t.get(&q).await.json, "accounts", "accountId"),
            vec![made[4].clone(), made[0].clone()]
        );
        let r = t
            .get("/v3/accounts?filter[accountName][]=Holder%201&filter[accountName][]=Holder%202")
            .await;
        assert_eq!(r.json["pagination"]["totalRecords"], 2);
        let r = t
            .get("/v3/accounts?filter[accountName]=Holder%201&filter[accountName]=Holder%202")
            .await;
        assert_eq!(r.json["pagination"]["totalRecords"], 2, "repeated exact match is IN");
    }
);

both!(
    accounts_reject_other_filter_forms_and_unknown_fields,
    |t: TestApp| async move {
        accounts(&t, 2).await;
        for q in ["filter[createdDate][min]=2020-01-01", "filter[color]=red"] {
            let r = t.get(&format!("/v3/accounts?{q}")).await;
            assert_eq!((r.status, r.code()), (422, "1422"), "{q}");
            assert!(r.desc().to_lowercase().contains("invalid filter"));
        }
        let q = format!("/v3/accounts?filter={}", urlencode(r#"{"city":{"like":"B%"}}"#));
        assert_eq!(t.get(&q).await.code(), "1422");
        let q = format!("/v3/accounts?filter={}", urlencode("{not json"));
        let r = t.get(&q).await;
        assert_eq!((r.status, r.code()), (400, "1400"));
    }
);

both!(invalid_filter_wins_over_an_empty_set, |t: TestApp| async move {
    let r = t.get("/v3/parties?filter[nope]=1").await;
    assert_eq!((r.status, r.code()), (422, "1422"));
});

both!(parties_take_ranges_operators_and_sort, |t: TestApp| async move {
    let mut made = Vec::new();
    for (name, worth) in [("Ann", "100"), ("Bob", "250"), ("Cy", "900")] {
        let r = t
            .put(
                "createParty",
                &with(PARTY, &[("firstName", name), ("householdNetworth", worth)]),
            )
            .await;
        made.push(r.inserted("partyDetails")["partyId"].as_str().unwrap().to_owned());
    }
    let r = t
        .get("/v3/parties?filter[householdNetworth][min]=250&sort=firstName:asc")
        .await;
    assert_eq!(
        ids(&r.json, "parties", "partyId"),
        vec![made[1].clone(), made[2].clone()]
    );
    let r = t
        .get("/v3/parties?filter[householdNetworth][min]=250&filter[householdNetworth][min_inclusive]=false")
        .await;
    assert_eq!(ids(&r.json, "parties", "partyId"), vec![made[2].clone()]);
    let q = format!(
        "/v3/parties?sort=firstName:desc&filter={}",
        urlencode(r#"{"householdNetworth":{"lt":900},"firstName":{"like":"%n%"}}"#)
    );
    assert_eq!(ids(&t.get(&q).await.json, "parties", "partyId"), vec![made[0].clone()]);
    let q = format!(
        "/v3/parties?filter={}",
        urlencode(&format!(r#"{{"partyId":{{"nin":["{}"]}}}}"#, made[0]))
    );
    assert_eq!(t.get(&q).await.json["pagination"]["totalRecords"], 2);
    let q = format!(
        "/v3/parties?filter={}",
        urlencode(r#"{"householdNetworth":{"between":[100,250]}}"#)
    );
    assert_eq!(t.get(&q).await.json["pagination"]["totalRecords"], 2);
    assert_eq!(t.get("/v3/parties?sort=shoeSize:asc").await.code(), "1422");
});

both!(
    unknown_sort_on_accounts_falls_back_to_default,
    |t: TestApp| async move {
        let made = accounts(&t, 3).await;
        let r = t.get("/v3/accounts?sort=shoeSize:asc").await;
        assert_eq!(
            ids(&r.json, "accounts", "accountId"),
            made.iter().rev().cloned().collect::<Vec<_>>()
        );
        let r = t.get("/v3/accounts?sort=accountName:asc").await;
        assert_eq!(ids(&r.json, "accounts", "accountId"), made);
        let r = t.get("/v3/accounts?sort=createdDate:asc").await;
        assert_eq!(
            ids(&r.json, "accounts", "accountId"),
            made,
            "ties broken by ID in the sort's direction"
        );
    }
);

both!(
    a_default_page_reads_the_index_not_the_partition,
    |t: TestApp| async move {
        accounts(&t, 25).await;
        t.get("/v3/accounts?limit=5").await;
        let before = t.store().requests();
        let r = t.get("/v3/accounts?limit=5&offset=5").await;
        assert_eq!(r.json["accounts"].as_array().unwrap().len(), 5);
        let used = t.store().requests() - before;
        assert!(used <= 2, "one counter read and one index query, got {used}");
    }
);

both!(
    parties_take_a_type_as_the_incumbents_clients_send,
    |t: TestApp| async move {
        let party = create_party(&t).await;
        let entity = create_entity(&t).await;
        let r = t.get("/v3/parties?type=entity").await;
        assert_eq!(r.code(), "101", "{:?}", r.json);
        assert_eq!(ids(&r.json, "parties", "partyId"), vec![entity.clone()]);
        for q in ["", "?type=individual", "?type=Individual"] {
            let r = t.get(&format!("/v3/parties{q}")).await;
            assert_eq!(ids(&r.json, "parties", "partyId"), vec![party.clone()], "{q}");
        }
        let r = t.get("/v3/parties?type=trust").await;
        assert_eq!((r.status, r.code(), &r.json["parties"]), (422, "1422", &json!([])));
        // Entities need GET /v3/entities's scope.
        let low = t.new_client(json!({"scopes": ["party.read.pii_low"]})).await;
        let r = t.get_as(&low, "/v3/parties?type=entity").await;
        assert_eq!((r.status, r.code()), (403, "1403"), "{:?}", r.json);
    }
);

both!(every_field_of_every_list_filters_and_sorts, |t: TestApp| async move {
    let account = create_account(&t).await;
    let party = create_party(&t).await;
    create_entity(&t).await;
    let (offering, _) = approved_offering_as(&t, &t.creds()).await;
    link(&t, &account, "IndivACParty", &party, "1").await;
    create_trade(&t, &account, &offering, "2").await;
    for (path, key, id) in [
        ("/v3/accounts", "accounts", "accountId"),
        ("/v3/parties", "parties", "partyId"),
        ("/v3/entities", "entities", "partyId"),
        ("/v3/issuers", "issuers", "issuerId"),
        ("/v3/offerings", "offerings", "offeringId"),
        ("/v3/trades", "trades", "tradeId"),
        ("/v3/links", "links", "id"),
    ] {
        every_field_filters_and_sorts(&t, path, key, id).await;
    }
});

both!(
    a_date_bound_keeps_its_time_and_an_id_its_number,
    |t: TestApp| async move {
        let account = create_account(&t).await;
        let party = create_party(&t).await;
        link(&t, &account, "IndivACParty", &party, "1").await;
        let (offering, _) = approved_offering_as(&t, &t.creds()).await;
        let trade = create_trade(&t, &account, &offering, "2").await;
        let created = t.get("/v3/trades").await.json["trades"][0]["createdDate"]
            .as_str()
            .unwrap()
            .to_owned();
        let iso = created.replace(' ', "T");
        let get = |filter: Value| trades_where(&t, filter, "");
        // Numeric IDs compare as numbers, an integral decimal included.
        for id in [
            json!(format!("{trade}.0")),
            json!(format!("0{trade}")),
            format!("{trade}.0").parse::<Value>().unwrap(),
        ] {
            let r = get(json!({"tradeId": id})).await;
            assert_eq!(ids(&r.json, "trades", "tradeId"), std::slice::from_ref(&trade), "{id}");
        }
        // ISO 8601 bounds are times, with or without an offset.
        let r = get(json!({"createdDate": {"gte": format!("{iso}Z")}})).await;
        assert_eq!(ids(&r.json, "trades", "tradeId"), std::slice::from_ref(&trade));
        let r = get(json!({"createdDate": {"gt": format!("{iso}.5Z")}})).await;
        assert_eq!(r.code(), "239", "half a second later: {:?}", r.json);
        let r = get(json!({"createdDate": {"lt": format!("{iso}.5+00:00")}})).await;
        assert_eq!(ids(&r.json, "trades", "tradeId"), std::slice::from_ref(&trade));
        let r = get(json!({"createdDate": {"gt": "soon"}})).await;
        assert_eq!((r.status, r.code()), (422, "1422"), "{:?}", r.json);
        // The keyset page is the ATS lists' own: elsewhere a bound is a filter, counted exactly.
        let ascending = "&sort=createdDate:asc";
        let r = trades_where(&t, json!({"createdDate": {"gt": format!("{iso}.5Z")}}), ascending).await;
        assert_eq!(r.code(), "239", "{:?}", r.json);
        let r = trades_where(&t, json!({"createdDate": {"gte": iso}}), ascending).await;
        assert_eq!(r.json["pagination"]["totalRecords"], 1);
    }
);

async fn trades_where(t: &TestApp, filter: Value, more: &str) -> Resp {
    t.get(&format!("/v3/trades?filter={}{more}", urlencode(&filter.to_string())))
        .await
}
