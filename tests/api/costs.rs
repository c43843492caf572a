//! DynamoDB requests per operation (DESIGN.md budgets), counted by the store adapter.

use api_tests::{both, TestApp};
use bytes::Bytes;
use http::Method;
use shared::http::RawRequest;

use crate::fixtures::*;

/// Requests the kernel and the operation make, leaving out the post-response hand-over.
pub(crate) async fn cost(t: &TestApp, method: Method, uri: &str, body: &[(&str, &str)]) -> u64 {
    let (path, query) = match uri.split_once('?') {
        Some((p, q)) => (p.to_owned(), Some(q.to_owned())),
        None => (uri.to_owned(), None),
    };
    let mut headers = http::HeaderMap::new();
    headers.insert("authorization", t.creds().bearer().parse().unwrap());
    let body = Ok(Bytes::from(serde_urlencoded::to_string(body).unwrap()));
    let app = t.function_for(&method, &path).clone();
    let before = t.store().requests();
    let handled = app
        .handle(RawRequest {
            method,
            path,
            query,
            headers,
            body,
            ip: [127, 0, 0, 1].into(),
        })
        .await;
    let used = t.store().requests() - before;
    app.dispatch(handled.events).await;
    used
}

both!(
    create_party_is_one_write_once_ids_are_reserved,
    |t: TestApp| async move {
        create_party(&t).await;
        let expected =
            "a registration read, then one TransactWriteItems (party, counter, outbox entry when registered)";
        assert_eq!(cost(&t, Method::PUT, "/v3/createParty", PARTY).await, 2, "{expected}");
        t.register_webhook("createParty", &["http://127.0.0.1:9/hook"]).await;
        assert_eq!(cost(&t, Method::PUT, "/v3/createParty", PARTY).await, 2, "{expected}");
    }
);

both!(create_link_reads_its_entries_and_writes_once, |t: TestApp| async move {
    let a = create_account(&t).await;
    let p = create_party(&t).await;
    link(&t, &create_account(&t).await, "IndivACParty", &p, "0").await;
    let pairs = [
        ("firstEntryType", "Account"),
        ("firstEntry", a.as_str()),
        ("relatedEntryType", "IndivACParty"),
        ("relatedEntry", p.as_str()),
        ("linkType", "owner"),
    ];
    assert_eq!(
        cost(&t, Method::PUT, "/v3/createLink", &pairs).await,
        4,
        "two entry reads, a registration read and one transaction"
    );
});

both!(
    a_list_page_costs_one_counter_read_and_its_index_query,
    |t: TestApp| async move {
        for _ in 0..12 {
            create_account(&t).await;
        }
        assert_eq!(cost(&t, Method::GET, "/v3/accounts?limit=10", &[]).await, 2);
        assert_eq!(
            cost(&t, Method::GET, "/v3/accounts?limit=5&offset=5&deleted=true", &[]).await,
            2
        );
    }
);

both!(flag_checks_cost_no_request_of_their_own, |t: TestApp| async move {
    crate::parties_ops::set_flags(&t, "ssn", &["999-99-9999"]).await;
    crate::parties_ops::set_flags(&t, "email", &["x@example.com"]).await;
    create_party(&t).await;
    let with_values = with(
        PARTY,
        &[
            ("socialSecurityNumber", "123-45-6789"),
            ("emailAddress2", "b@example.com"),
        ],
    );
    assert_eq!(
        cost(&t, Method::PUT, "/v3/createParty", &with_values).await,
        2,
        "a registration read and one transaction, checks included"
    );
    let id = create_party(&t).await;
    let update = [
        ("partyId", id.as_str()),
        ("socialSecurityNumber", "123-45-6789"),
        ("emailAddress", "a@example.com"),
    ];
    assert_eq!(
        cost(&t, Method::POST, "/v3/updateParty", &update).await,
        3,
        "the party, a registration read, one transaction"
    );
    assert_eq!(
        cost(&t, Method::POST, "/v3/getParty", &[("partyId", id.as_str())]).await,
        2,
        "the party and a registration read; nothing to write when unregistered"
    );
});

both!(
    escrow_balances_read_the_ledger_once_and_never_write,
    |t: TestApp| async move {
        let o = crate::trades::offering(&t, "1000").await;
        let path = format!("/operator/clients/{}/offerings/{o}/escrow-account", t.client_id);
        let r = t
            .operator(Method::PUT, &path, serde_json::json!({"escrowAccountNumber": "ESC-C"}))
            .await;
        assert_eq!(r.status, 200);
        let uri = format!("/v3/offerings/{o}/escrow/balances");
        t.get(&uri).await;
        let expected = "GetItems of the offering, its account, the bank's state and the last \
                        reconciliation; Queries of the ledger and of the account's offerings";
        assert_eq!(cost(&t, Method::GET, &uri, &[]).await, 6, "{expected}");
    }
);

both!(a_custody_request_reads_then_writes_once, |t: TestApp| async move {
    let doc = api_tests::Listener::start(200).await;
    let mut accounts = Vec::new();
    for _ in 0..2 {
        let (a, _) = crate::trades::investor(&t).await;
        let attest = [
            ("accountId", a.as_str()),
            ("isAttested", "true"),
            ("documentUrl", doc.url.as_str()),
        ];
        code(&t.post("createCustodyAgreementAttestation", &attest).await, "101");
        accounts.push(a);
    }
    // The first request reserves a block of request IDs.
    code(
        &t.post("createCustodyAccountRequest", &[("accountId", &accounts[0])])
            .await,
        "101",
    );
    let a = &accounts[1];
    let expected = "GetItems of the account, the attestation, the account's request and the \
                    webhook's registration, then one TransactWriteItems (request, its ID, outbox entry)";
    assert_eq!(
        cost(
            &t,
            Method::POST,
            "/v3/createCustodyAccountRequest",
            &[("accountId", a.as_str())]
        )
        .await,
        5,
        "{expected}"
    );
});
