//! createLink, getLink, deleteLink and their rules.

use api_tests::{both, TestApp};
use serde_json::json;

use crate::fixtures::*;

both!(
    create_link_answers_an_id_and_get_link_reads_it,
    |t: TestApp| async move {
        let a = create_account(&t).await;
        let p = create_party(&t).await;
        let r = link(&t, &a, "IndivACParty", &p, "1").await;
        assert_eq!(r.code(), "101", "{:?}", r.json);
        let id = r.inserted("linkDetails")["id"].as_str().unwrap().to_owned();
        assert!(id.parse::<u64>().is_ok());
        let r = t.post("getLink", &[("id", &id)]).await;
        assert_eq!(r.code(), "101");
        let l = &r.json["linkDetails"][0];
        assert_eq!(
            (
                l["firstEntryType"].as_str(),
                l["firstEntry"].as_str(),
                l["relatedEntryType"].as_str(),
                l["relatedEntry"].as_str(),
                l["linkType"].as_str()
            ),
            (
                Some("Account"),
                Some(a.as_str()),
                Some("IndivACParty"),
                Some(p.as_str()),
                Some("owner")
            )
        );
    }
);

both!(create_link_checks_parameters_with_106, |t: TestApp| async move {
    let a = create_account(&t).await;
    let p = create_party(&t).await;
    let base = [
        ("firstEntryType", "Account"),
        ("firstEntry", a.as_str()),
        ("relatedEntryType", "IndivACParty"),
        ("relatedEntry", p.as_str()),
        ("linkType", "owner"),
    ];
    for (name, _) in base {
        assert_eq!(
            t.put("createLink", &without(&base, &[name])).await.code(),
            "106",
            "{name}"
        );
    }
    for (name, bad) in [
        ("firstEntryType", "Party"),
        ("relatedEntryType", "Nope"),
        ("linkType", "friend"),
        ("primary_value", "2"),
    ] {
        assert_eq!(
            t.put("createLink", &with(&base, &[(name, bad)])).await.code(),
            "106",
            "{name}"
        );
    }
    let r = t
        .put(
            "createLink",
            &with(&base, &[("linkType", "OWNER"), ("relatedEntryType", "indivacparty")]),
        )
        .await;
    assert_eq!(r.code(), "101", "enumerations match case-insensitively");
});

both!(create_link_unknown_entries_are_148_and_198, |t: TestApp| async move {
    let a = create_account(&t).await;
    let p = create_party(&t).await;
    let e = create_entity(&t).await;
    assert_eq!(link(&t, "A0000001", "IndivACParty", &p, "0").await.code(), "148");
    assert_eq!(link(&t, &a, "IndivACParty", "P0000001", "0").await.code(), "198");
    assert_eq!(
        link(&t, &a, "IndivACParty", &e, "0").await.code(),
        "198",
        "an entity is not an individual"
    );
    assert_eq!(link(&t, &a, "Account", "A0000001", "0").await.code(), "148");
    assert_eq!(link(&t, &a, "EntityACParty", &e, "0").await.code(), "101");
});

both!(self_link_and_duplicate_are_http_400, |t: TestApp| async move {
    let a = create_account(&t).await;
    let p = create_party(&t).await;
    let r = link(&t, &a, "Account", &a, "0").await;
    assert_eq!(r.status, 400);
    assert_eq!(link(&t, &a, "IndivACParty", &p, "0").await.code(), "101");
    let r = link(&t, &a, "IndivACParty", &p, "0").await;
    assert_eq!((r.status, r.code()), (400, "1400"));
});

both!(bad_primary_is_http_422, |t: TestApp| async move {
    let a = create_account(&t).await;
    let e = create_entity(&t).await;
    let r = link(&t, &a, "EntityACParty", &e, "1").await;
    assert_eq!((r.status, r.code()), (422, "1422"));
    let p1 = create_party(&t).await;
    let p2 = create_party(&t).await;
    assert_eq!(link(&t, &a, "IndivACParty", &p1, "1").await.code(), "101");
    let r = link(&t, &a, "IndivACParty", &p2, "1").await;
    assert_eq!((r.status, r.code()), (422, "1422"), "one primary per account");
});

both!(
    a_primary_party_deleted_gives_its_place_to_a_new_one,
    |t: TestApp| async move {
        let a = create_account(&t).await;
        let (p1, p2) = (create_party(&t).await, create_party(&t).await);
        let old = link(&t, &a, "IndivACParty", &p1, "1").await.inserted("linkDetails")["id"]
            .as_str()
            .unwrap()
            .to_owned();
        assert_eq!(t.post("deleteParty", &[("partyId", &p1)]).await.code(), "101");
        let r = link(&t, &a, "IndivACParty", &p2, "1").await;
        assert_eq!(r.code(), "101", "{:?}", r.json);
        let r = t.post("getLink", &[("id", &old)]).await;
        assert_eq!(
            r.json["linkDetails"][0]["primary_value"], "0",
            "the old link is no longer primary"
        );
        // A live primary still holds its place; an archived one does not.
        let p3 = create_party(&t).await;
        let r = link(&t, &a, "IndivACParty", &p3, "1").await;
        assert_eq!((r.status, r.code()), (422, "1422"));
        let archive = [("partyId", p2.as_str()), ("archiveStatus", "1")];
        assert_eq!(t.post("updatePartyEntityArchivestatus", &archive).await.code(), "101");
        assert_eq!(link(&t, &a, "IndivACParty", &p3, "1").await.code(), "101");
    }
);

both!(concurrent_primaries_leave_exactly_one, |t: TestApp| async move {
    let a = create_account(&t).await;
    let mut parties = Vec::new();
    for _ in 0..8 {
        parties.push(create_party(&t).await);
    }
    let t = std::sync::Arc::new(t);
    let tasks: Vec<_> = parties
        .iter()
        .map(|p| {
            let (t, a, p) = (t.clone(), a.clone(), p.clone());
            tokio::spawn(async move { link(&t, &a, "IndivACParty", &p, "1").await.code().to_owned() })
        })
        .collect();
    let mut ok = 0;
    for task in tasks {
        if task.await.unwrap() == "101" {
            ok += 1;
        }
    }
    assert_eq!(ok, 1);
});

both!(
    delete_link_frees_the_primary_and_unknown_is_404,
    |t: TestApp| async move {
        let a = create_account(&t).await;
        let p = create_party(&t).await;
        let id = link(&t, &a, "IndivACParty", &p, "1").await.inserted("linkDetails")["id"]
            .as_str()
            .unwrap()
            .to_owned();
        let r = t.post("deleteLink", &[("id", &id)]).await;
        assert_eq!((r.code(), r.desc()), ("101", "Link has been deleted successfully!"));
        assert_eq!(t.post("getLink", &[("id", &id)]).await.code(), "404");
        assert_eq!(t.post("deleteLink", &[("id", &id)]).await.code(), "404");
        assert_eq!(t.post("deleteLink", &[("id", "abc")]).await.code(), "106");
        assert_eq!(t.post("getLink", &[]).await.code(), "106");
        assert_eq!(
            link(&t, &a, "IndivACParty", &p, "1").await.code(),
            "101",
            "pair and primary are free again"
        );
        let r = t.get("/v3/links?deleted=true").await;
        assert_eq!(r.json["pagination"]["totalRecords"], json!(2));
    }
);
