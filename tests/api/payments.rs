//! Payments: external bank accounts (create, update, get, delete, one per owner), ACH fund
//! moves with every rule of part 3 in CONTRACT's order, voids, the reads, the sandbox
//! nicknames that settle or return inside the call, the operator's payment settings and ACH
//! block, and one fund move per trade under 20 concurrent calls. Webhooks are checked at a
//! real listener; every refusal writes nothing. Each case runs on both backends.

use api_tests::{both, Resp, TestApp};
use http::Method;
use serde_json::{json, Value};

use crate::fixtures::create_account;
use crate::fixtures::{code, hook};
use crate::trades::{investor, offering};

/// A valid ABA routing number (its 3-7-1 check digit holds).
const ROUTING: &str = "021000021";
/// The sandbox's cards (CONTRACT).
const APPROVES: &str = "4111111111111111";
const DECLINES: &str = "4000000000000002";

fn external<'a>(account: &'a str, nickname: &'a str) -> Vec<(&'a str, &'a str)> {
    vec![
        ("types", "Account"),
        ("accountId", account),
        ("ExtAccountfullname", "Ada Stone"),
        ("Extnickname", nickname),
        ("ExtRoutingnumber", ROUTING),
        ("ExtAccountnumber", "000123456789"),
        ("ExtBankname", "First Bank"),
    ]
}

/// A `CREATED` trade of 5 units at 10.00 (`transactionType`), on a fresh investor and
/// offering: (accountId, offeringId, tradeId).
async fn trade_of_type(t: &TestApp, transaction_type: &str) -> (String, String, String) {
    let (account, _) = investor(t).await;
    let o = offering(t, "1000").await;
    let r = t
        .post(
            "createTrade",
            &[
                ("accountId", &account),
                ("offeringId", &o),
                ("transactionType", transaction_type),
                ("transactionUnits", "5"),
            ],
        )
        .await;
    code(&r, "101");
    let id = r.inserted("purchaseDetails")["tradeId"].as_str().unwrap().to_owned();
    (account, o, id)
}

/// An ACH trade whose account has an external account nicknamed `nickname`.
async fn funded_setup(t: &TestApp, nickname: &str) -> (String, String, String) {
    let (a, o, id) = trade_of_type(t, "ACH").await;
    code(&t.post("createExternalAccount", &external(&a, nickname)).await, "101");
    (a, o, id)
}

fn move_params<'a>(a: &'a str, o: &'a str, id: &'a str, amount: &'a str) -> Vec<(&'a str, &'a str)> {
    vec![
        ("accountId", a),
        ("offeringId", o),
        ("tradeId", id),
        ("amount", amount),
        ("description", "Subscription"),
        ("checkNumber", id),
    ]
}

/// The `RefNum` an externalFundMove answered.
fn ref_num_of(r: &Resp) -> String {
    r.json["TradeFinancialDetails"][0]["RefNum"]
        .as_str()
        .unwrap()
        .to_owned()
}

async fn fund(t: &TestApp, a: &str, o: &str, id: &str, amount: &str) -> Resp {
    t.post("externalFundMove", &move_params(a, o, id, amount)).await
}

async fn trade_status(t: &TestApp, id: &str) -> String {
    let r = t.post("getTradeStatus", &[("tradeId", id)]).await;
    code(&r, "101");
    r.json["tradeDetails"][0]["orderStatus"].as_str().unwrap().to_owned()
}

async fn settings(t: &TestApp, body: Value) {
    let path = format!("/operator/clients/{}/payment-settings", t.client_id);
    let r = t.operator(Method::PUT, &path, body).await;
    assert_eq!(r.status, 200, "{:?}", r.json);
}

both!(external_accounts_round_trip, |t: TestApp| async move {
    let mut created = hook(&t, "createExternalAccount").await;
    let mut updated = hook(&t, "updateExternalAccount").await;
    let mut deleted = hook(&t, "deleteExternalAccount").await;
    let a = create_account(&t).await;
    let r = t.post("createExternalAccount", &external(&a, "Main checking")).await;
    code(&r, "101");
    let record = json!({
        "accountId": a, "ExtAccountfullname": "Ada Stone", "Extnickname": "Main checking",
        "ExtRoutingnumber": "MDIxMDAwMDIx", "ExtAccountnumber": "MDAwMTIzNDU2Nzg5",
        "types": "Account", "accountType": "Checking"
    });
    assert_eq!(r.json["External Account Details"], json!([true, [record.clone()]]));
    // The webhook's numbers are base64 (part 1) of the numbers masked but the last four
    // (CONTRACT: bank numbers in webhooks).
    let mut sent = record.clone();
    sent["ExtRoutingnumber"] = shared::mask::b64("XXXXX0021").into();
    sent["ExtAccountnumber"] = shared::mask::b64("XXXXXXXX6789").into();
    let got = created.next(5).await.expect("createExternalAccount webhook");
    assert_eq!(got.pairs(), api_tests::record_pairs(&sent));
    // One per account.
    code(&t.post("createExternalAccount", &external(&a, "Second")).await, "116");
    // Parameters before existence (CONTRACT): a missing one is 106 even beside an ID that
    // names nothing.
    let mut incomplete = external("1", "Third");
    incomplete.retain(|(k, _)| *k != "ExtAccountfullname");
    let r = t.post("createExternalAccount", &incomplete).await;
    assert_eq!(
        (r.code(), r.desc().contains("ExtAccountfullname")),
        ("106", true),
        "{:?}",
        r.json
    );
    code(&t.post("createExternalAccount", &external("1", "Third")).await, "148");

    let r = t.post("getExternalAccount", &[("accountId", &a)]).await;
    code(&r, "101");
    let d = &r.json["statusDesc"];
    assert_eq!(
        (
            &d["AccountName"],
            &d["AccountNickName"],
            &d["AccountNumber"],
            &d["AccountRoutingNumber"],
            &d["accountType"]
        ),
        (
            &json!("Ada Stone"),
            &json!("Main checking"),
            &json!("MDAwMTIzNDU2Nzg5"),
            &json!("MDIxMDAwMDIx"),
            &json!("Checking")
        )
    );

    let mut change = external(&a, "Test ACH Settled");
    change.push(("accountType", "savings"));
    let r = t.post("updateExternalAccount", &change).await;
    code(&r, "101");
    let after = &r.json["Account External Account Details"][1][0];
    assert_eq!(
        (&after["Extnickname"], &after["accountType"]),
        (&json!("Test ACH Settled"), &json!("savings")),
        "stored as sent"
    );
    let got = updated.next(5).await.expect("update webhook").pairs();
    assert_eq!(got[2].1, "Test ACH Settled");
    assert_eq!(got[4].1, shared::mask::b64("XXXXXXXX6789"));

    let r = t
        .post("deleteExternalAccount", &[("types", "Account"), ("accountId", &a)])
        .await;
    code(&r, "101");
    assert_eq!(
        r.json["Account External Account Details"],
        json!([true, [{"accountId": a, "Ext_status": "Deleted"}]])
    );
    let got = deleted.next(5).await.expect("delete webhook");
    assert_eq!(
        got.pairs(),
        [
            ("accountId".to_owned(), a.clone()),
            ("Ext_status".into(), "Deleted".into())
        ]
    );
    code(&t.post("getExternalAccount", &[("accountId", &a)]).await, "149");
    code(
        &t.post("deleteExternalAccount", &[("types", "Account"), ("accountId", &a)])
            .await,
        "149",
    );
    code(&t.post("updateExternalAccount", &external(&a, "x")).await, "149");
    // Created again once deleted.
    code(&t.post("createExternalAccount", &external(&a, "Again")).await, "101");

    // An issuer's, under its own key.
    let r = t.put("createIssuer", crate::fixtures::ISSUER).await;
    let issuer = r.inserted("issuerDetails")["issuerId"].as_str().unwrap().to_owned();
    let mut params = external(&a, "Operating");
    params.retain(|(k, _)| *k != "accountId" && *k != "types");
    params.extend([("types", "Issuer"), ("issuerId", issuer.as_str())]);
    let r = t.post("createExternalAccount", &params).await;
    code(&r, "101");
    assert_eq!(
        r.json["Issuer External Account Details"][1][0]["issuerId"],
        issuer.as_str()
    );
    let r = t
        .post("getExternalAccount", &[("types", "Issuer"), ("issuerId", &issuer)])
        .await;
    assert_eq!(r.json["statusDesc"]["AccountNickName"], "Operating");
    // Its ACH history (OBSERVED-MORE: accountId or issuerId) is empty: moves debit investors.
    let r = t.post("getExternalFundMoveHistory", &[("issuerId", &issuer)]).await;
    code(&r, "101");
    assert_eq!(r.json["accountDetails"], json!([]));
    for unknown in ["999999", "x"] {
        code(
            &t.post("getExternalFundMoveHistory", &[("issuerId", unknown)]).await,
            "136",
        );
    }
});

both!(external_account_refusals_write_nothing, |t: TestApp| async move {
    let a = create_account(&t).await;
    let other = t.new_client(json!({"scopes": ["*"]})).await;
    let theirs = crate::fixtures::create_account_as(&t, &other, &[]).await;
    let swap = |k: &'static str, v: &'static str| {
        let mut p = external("A-PLACEHOLDER", "Main");
        p.retain(|(name, _)| *name != k);
        p.push((k, v));
        p
    };
    let cases: Vec<(Vec<(&str, &str)>, &str)> = vec![
        (swap("types", "Savings"), "106"),
        (swap("Extnickname", "a.b"), "106"),
        (swap("Extnickname", "Łódź"), "106"),
        (swap("ExtRoutingnumber", "12345678"), "106"),
        (swap("ExtRoutingnumber", "02100002x"), "106"),
        (swap("ExtAccountnumber", "12-34"), "106"),
        (swap("ExtAccountfullname", ""), "106"),
    ];
    for (params, expected) in cases {
        let params: Vec<(&str, &str)> = params
            .into_iter()
            .map(|(k, v)| (k, if v == "A-PLACEHOLDER" { a.as_str() } else { v }))
            .collect();
        code(&t.post("createExternalAccount", &params).await, expected);
    }
    code(
        &t.post("createExternalAccount", &external("A9999999", "Main")).await,
        "148",
    );
    code(
        &t.post("createExternalAccount", &external(&theirs, "Main")).await,
        "148",
    );
    let mut issuer = external(&a, "Main");
    issuer.retain(|(k, _)| *k != "types" && *k != "accountId");
    issuer.extend([("types", "Issuer"), ("issuerId", "999999")]);
    code(&t.post("createExternalAccount", &issuer).await, "136");
    code(&t.post("getExternalAccount", &[("accountId", &a)]).await, "149");
});

both!(fund_moves_follow_every_rule_in_order, |t: TestApp| async move {
    let mut moves = hook(&t, "externalFundMove").await;
    let (a, o, id) = trade_of_type(&t, "ACH").await;
    // Parameters first (106, 732), then existence (148, 138, 188), then the rules.
    let mut no_check = move_params(&a, &o, &id, "50");
    no_check.retain(|(k, _)| *k != "checkNumber");
    code(&t.post("externalFundMove", &no_check).await, "106");
    for bad in ["1e3", "10.001", "-5", "ten"] {
        code(&fund(&t, &a, &o, &id, bad).await, "732");
    }
    // A JSON boolean is no amount and no ID (it once read as 1).
    let json_move = |amount: Value, offering: Value| {
        json!({"accountId": a, "offeringId": offering, "tradeId": id, "amount": amount,
               "description": "Subscription", "checkNumber": id})
    };
    for (body, want) in [
        (json_move(json!(true), json!(o)), "732"),
        (json_move(json!("50"), json!(true)), "106"),
    ] {
        let r = t.json_as(&t.creds(), Method::POST, "/v3/externalFundMove", &body).await;
        code(&r, want);
    }
    code(&fund(&t, "A9999999", &o, &id, "50").await, "148");
    code(&fund(&t, &a, "999999", &id, "50").await, "138");
    code(&fund(&t, &a, &o, "999999", "50").await, "188");
    // A trade whose account lost its primary party since.
    let la = create_account(&t).await;
    let party = crate::fixtures::create_party(&t).await;
    let r = crate::fixtures::link(&t, &la, "IndivACParty", &party, "1").await;
    let link_id = r.inserted("linkDetails")["id"].as_str().unwrap().to_owned();
    let trade = [
        ("accountId", la.as_str()),
        ("offeringId", o.as_str()),
        ("transactionType", "ACH"),
        ("transactionUnits", "1"),
    ];
    let r = t.post("createTrade", &trade).await;
    let lone = r.inserted("purchaseDetails")["tradeId"].as_str().unwrap().to_owned();
    code(&t.post("deleteLink", &[("id", &link_id)]).await, "101");
    code(&fund(&t, &la, &o, &lone, "10").await, "135");
    let (wa, wo, wire) = trade_of_type(&t, "WIRE").await;
    code(&fund(&t, &wa, &wo, &wire, "50").await, "194");
    code(&fund(&t, &a, &o, &id, "50").await, "149");
    code(&t.post("createExternalAccount", &external(&a, "Main")).await, "101");

    let block = format!("/operator/clients/{}/accounts/{a}/ach", t.client_id);
    assert_eq!(
        t.operator(Method::PUT, &block, json!({"blocked": true})).await.status,
        200
    );
    code(&fund(&t, &a, &o, &id, "50").await, "773");
    assert_eq!(
        t.operator(Method::PUT, &block, json!({"blocked": false})).await.status,
        200
    );

    let mut bad_routing = external(&a, "Main");
    bad_routing.retain(|(k, _)| *k != "ExtRoutingnumber");
    bad_routing.push(("ExtRoutingnumber", "021000022"));
    code(&t.post("updateExternalAccount", &bad_routing).await, "101");
    code(&fund(&t, &a, &o, &id, "50").await, "215");
    code(&t.post("updateExternalAccount", &external(&a, "Main")).await, "101");

    settings(&t, json!({"maxSingleAch": "40.00"})).await;
    code(&fund(&t, &a, &o, &id, "50").await, "234");
    settings(&t, json!({"maxSingleAch": "100000.00", "achProvider": null})).await;
    code(&fund(&t, &a, &o, &id, "50").await, "211");
    settings(&t, json!({"achProvider": "sandbox"})).await;
    // The trade total is 50.00: up to 7 % more is accepted.
    code(&fund(&t, &a, &o, &id, "53.51").await, "721");
    // Less than the total would fund the trade with money that never came.
    let r = fund(&t, &a, &o, &id, "49.99").await;
    code(&r, "106");
    assert!(r.desc().contains("amount"), "{:?}", r.json);
    let r = t.post("getAchPendingId", &[("accountId", &a)]).await;
    code(&r, "212");
    assert!(
        r.json.get("investorExternalAccountDetails").is_none(),
        "no array with 212"
    );
    assert!(moves.next(1).await.is_none(), "no refusal fired a webhook");

    let r = fund(&t, &a, &o, &id, "53.50").await;
    code(&r, "101");
    let m = &r.json["TradeFinancialDetails"][0];
    let ref_num = m["RefNum"].as_str().unwrap().to_owned();
    assert_eq!(
        m,
        &json!({"accountId": a, "tradeId": id, "offeringId": o, "totalAmount": "53.50", "RefNum": ref_num,
                "fundStatus": "Pending", "transactionstatus": "Pending", "notes": "Subscription"})
    );
    let got = moves.next(5).await.expect("externalFundMove webhook");
    assert_eq!(
        got.pairs(),
        [("tradeId".to_owned(), id.clone()), ("RefNum".into(), ref_num.clone())]
    );
    code(&fund(&t, &a, &o, &id, "50").await, "150");
    // The trade operations see the pending move.
    code(
        &t.post("deleteTrade", &[("accountId", &a), ("tradeId", &id)]).await,
        "150",
    );

    let r = t.post("getAchPendingId", &[("accountId", &a)]).await;
    code(&r, "101");
    let pending = &r.json["investorExternalAccountDetails"][0];
    let keys: Vec<&str> = pending.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "accountId",
            "tradeId",
            "offeringId",
            "Bankname",
            "totalAmount",
            "Accountnumber",
            "Routingnumber",
            "Accountfullname",
            "transactionstatus",
            "routingNumberStatus",
            "fundStatus",
            "type",
            "createdDate"
        ]
    );
    let r = t
        .post("getExternalFundMove", &[("accountId", &a), ("RefNum", &ref_num)])
        .await;
    code(&r, "101");
    assert_eq!(
        r.json["investorExternalAccountDetails"][0]["Accountnumber"],
        "MDAwMTIzNDU2Nzg5"
    );
    code(
        &t.post("getExternalFundMove", &[("accountId", &a), ("RefNum", "1")])
            .await,
        "212",
    );
    let r = t
        .post("getExternalFundMoveInfo", &[("accountId", &a), ("RefNum", &ref_num)])
        .await;
    code(&r, "101");
    assert_eq!(
        r.json["investorExternalAccountDetails"],
        json!({"fundStatus": "Pending", "error": ""})
    );
    assert_eq!(r.json["ACHDetails"]["issueName"], "Acme Series A");
    for masked in ["clientId", "clientName", "developerAPIKey"] {
        assert_eq!(r.json["ACHDetails"][masked], "XXXXXXXXXXXXXXX", "{masked}");
    }

    // A client approves the transaction; fundStatus and the trade stay.
    let approve = [
        ("accountId", a.as_str()),
        ("RefNum", ref_num.as_str()),
        ("transactionstatus", "Approved"),
    ];
    let r = t.post("updateExternalFundMoveApprovedStatus", &approve).await;
    code(&r, "101");
    let after = &r.json["investorExternalAccountDetails"][0];
    assert_eq!(
        (&after["transactionstatus"], &after["fundStatus"]),
        (&json!("Approved"), &json!("Pending"))
    );
    let r = t
        .post(
            "updateExternalFundMoveStatus",
            &[("accountId", &a), ("RefNum", &ref_num)],
        )
        .await;
    assert_eq!(r.json["investorExternalAccountDetails"][0]["fundStatus"], "Pending");

    // Voided while pending: no status webhook, and the trade can be funded again.
    let mut status = hook(&t, "updateExternalFundMoveStatus").await;
    let mut voided = hook(&t, "requestForVoidACH").await;
    let void = [("accountId", a.as_str()), ("RefNum", ref_num.as_str())];
    // Lookalikes of the credential name are not identifiers.
    let lookalikes = [("client_id", "zzz"), ("ClientID", "q"), ("client-id", "h")];
    let sent = [&void[..], &lookalikes].concat();
    let r = t.post("requestForVoidACH", &sent).await;
    code(&r, "101");
    assert_eq!(r.json["investorExternalAccountDetails"], "Status Updated Successfully");
    // Its webhook (part 1 lists none) is the message, led by what it was about.
    let got = voided.next(5).await.expect("requestForVoidACH webhook").pairs();
    let message = ("investorExternalAccountDetails", "Status Updated Successfully");
    let expected: Vec<(String, String)> = [("accountId", a.as_str()), ("RefNum", ref_num.as_str()), message]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    assert_eq!(got, expected);
    code(&t.post("requestForVoidACH", &void).await, "224");
    assert!(status.next(1).await.is_none(), "no status webhook on a void");
    code(&t.post("getAchPendingId", &[("accountId", &a)]).await, "212");
    code(&fund(&t, &a, &o, &id, "50").await, "101");
    let r = t.post("getExternalFundMoveHistory", &[("accountId", &a)]).await;
    code(&r, "101");
    let states: Vec<&Value> = r.json["accountDetails"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| &m["fundStatus"])
        .collect();
    assert_eq!(states, [&json!("Voided"), &json!("Pending")]);
});

both!(
    sandbox_nicknames_settle_or_return_inside_the_call,
    |t: TestApp| async move {
        let mut status = hook(&t, "updateExternalFundMoveStatus").await;
        let (a, o, id) = funded_setup(&t, "Test ACH Settled").await;
        let r = fund(&t, &a, &o, &id, "50").await;
        code(&r, "101");
        let m = &r.json["TradeFinancialDetails"][0];
        assert_eq!(
            (&m["fundStatus"], &m["transactionstatus"]),
            (&json!("Settled"), &json!("Approved"))
        );
        let ref_num = m["RefNum"].as_str().unwrap().to_owned();
        // Each step's webhook (delivered concurrently: in either order).
        let mut steps = Vec::new();
        for _ in 0..2 {
            let got = status.next(5).await.expect("status webhook").pairs();
            let fields: Vec<&str> = got.iter().map(|(k, _)| k.as_str()).collect();
            assert_eq!(
                fields,
                [
                    "accountId",
                    "tradeId",
                    "transactionstatus",
                    "fundStatus",
                    "RefNum",
                    "errors"
                ]
            );
            assert_eq!((&got[0].1, &got[1].1, &got[4].1), (&a, &id, &ref_num));
            steps.push(got[3].1.clone());
        }
        steps.sort();
        assert_eq!(steps, ["Settled", "Submitted"]);
        assert_eq!(trade_status(&t, &id).await, "FUNDED");
        code(&fund(&t, &a, &o, &id, "50").await, "210");

        let (a, o, id) = funded_setup(&t, "Test ACH R01").await;
        let r = fund(&t, &a, &o, &id, "50").await;
        code(&r, "101");
        let ref_num = ref_num_of(&r);
        assert_eq!(r.json["TradeFinancialDetails"][0]["fundStatus"], "Returned");
        let r = t
            .post("getExternalFundMove", &[("accountId", &a), ("RefNum", &ref_num)])
            .await;
        assert_eq!(
            r.json["investorExternalAccountDetails"][0]["errors"],
            "R01 - Insufficient funds"
        );
        let r = t
            .post("getExternalFundMoveInfo", &[("accountId", &a), ("RefNum", &ref_num)])
            .await;
        assert_eq!(
            r.json["investorExternalAccountDetails"]["error"],
            "R01 - Insufficient funds"
        );
        assert_eq!(trade_status(&t, &id).await, "CREATED");
        // Returned: the trade may be funded again.
        code(&fund(&t, &a, &o, &id, "50").await, "101");
    }
);

both!(
    twenty_concurrent_fund_moves_fund_a_trade_once,
    |t: TestApp| async move {
        let (a, o, id) = funded_setup(&t, "Main").await;
        let calls = (0..20).map(|_| fund(&t, &a, &o, &id, "50"));
        let answers = futures_util::future::join_all(calls).await;
        let accepted = answers.iter().filter(|r| r.code() == "101").count();
        let refused = answers.iter().filter(|r| r.code() == "150").count();
        assert_eq!(
            (accepted, refused),
            (1, 19),
            "{:?}",
            answers.iter().map(Resp::code).collect::<Vec<_>>()
        );
        let r = t.post("getExternalFundMoveHistory", &[("accountId", &a)]).await;
        assert_eq!(r.json["accountDetails"].as_array().unwrap().len(), 1);
    }
);

both!(payment_settings_through_the_operator, |t: TestApp| async move {
    let path = format!("/operator/clients/{}/payment-settings", t.client_id);
    let r = t.operator(Method::GET, &path, json!({})).await;
    assert_eq!(
        r.json,
        json!({"clientId": t.client_id, "achProvider": "sandbox", "cardProvider": "sandbox",
               "maxSingleAch": "100000.00", "cardLimit": "5000.00", "custodyRiskLimit": "100000.00"})
    );
    let r = t
        .operator(Method::PUT, &path, json!({"cardLimit": "2500.5", "cardProvider": null}))
        .await;
    assert_eq!(
        (r.status, &r.json["cardLimit"], &r.json["cardProvider"]),
        (200, &json!("2500.50"), &json!(null))
    );
    assert_eq!(r.json["maxSingleAch"], "100000.00", "omitted keys unchanged");
    for bad in [
        json!({"cardLimit": "-1"}),
        json!({"achProvider": "acme"}),
        json!({"limit": "1"}),
        json!([]),
    ] {
        assert_eq!(t.operator(Method::PUT, &path, bad.clone()).await.status, 400, "{bad}");
    }
    let r = t
        .operator(Method::PUT, "/operator/clients/nobody/payment-settings", json!({}))
        .await;
    assert_eq!(r.status, 404);
    let block = format!("/operator/clients/{}/accounts/A9999999/ach", t.client_id);
    assert_eq!(
        t.operator(Method::PUT, &block, json!({"blocked": true})).await.status,
        404
    );
    for bad in [json!({"blocked": "yes"}), json!({"blocked": false, "zz": 1}), json!({})] {
        assert_eq!(t.operator(Method::PUT, &block, bad.clone()).await.status, 400, "{bad}");
    }
});

fn ach() -> shared::batches::Batch {
    service::BATCHES
        .into_iter()
        .find(|b| b.name == "ach")
        .expect("the ACH batch")
}

fn at(t: &TestApp, utc: &str) {
    t.clock.set(utc.parse().expect("an RFC 3339 instant"));
}

/// A pending move on a fresh trade: (accountId, tradeId, RefNum).
async fn pending_move(t: &TestApp) -> (String, String, String) {
    let (a, o, id) = funded_setup(t, "Main").await;
    let r = fund(t, &a, &o, &id, "50").await;
    code(&r, "101");
    let ref_num = ref_num_of(&r);
    (a, id, ref_num)
}

async fn offering_of(t: &TestApp, trade: &str) -> String {
    let r = t.post("getTradeStatus", &[("tradeId", trade)]).await;
    r.json["tradeDetails"][0]["offeringId"].as_str().unwrap().to_owned()
}

async fn fund_status(t: &TestApp, account: &str, ref_num: &str) -> String {
    let r = t
        .post("getExternalFundMove", &[("accountId", account), ("RefNum", ref_num)])
        .await;
    code(&r, "101");
    r.json["investorExternalAccountDetails"][0]["fundStatus"]
        .as_str()
        .unwrap()
        .to_owned()
}

both!(the_ach_batch_submits_each_pending_move_once, |t: TestApp| async move {
    let mut status = hook(&t, "updateExternalFundMoveStatus").await;
    let ports = t.app.ports.clone();
    let (a1, id1, ref1) = pending_move(&t).await;
    let (a2, id2, ref2) = pending_move(&t).await;
    let (a3, _, ref3) = pending_move(&t).await;
    code(
        &t.post("requestForVoidACH", &[("accountId", &a3), ("RefNum", &ref3)])
            .await,
        "101",
    );

    // Thanksgiving, 6:00 PM Eastern: the schedule enqueues nothing.
    at(&t, "2026-11-26T23:00:00Z");
    assert!(ach().scheduled(&ports).await.unwrap().is_empty());
    // The next day, a business day: the two pending moves, the voided one not.
    at(&t, "2026-11-27T23:00:00Z");
    let due = ach().scheduled(&ports).await.unwrap();
    let mut ids: Vec<&str> = due.iter().map(|d| d.id.as_str()).collect();
    ids.sort_unstable();
    assert_eq!(ids, [ref1.as_str(), ref2.as_str()]);
    assert!(due.iter().all(|d| d.client_id == t.client_id));
    // Every message delivered twice: each move submitted once, one webhook each.
    let mut changed = 0;
    for d in due.iter().chain(due.iter()) {
        if ach().process_one(&ports, d).await.unwrap() {
            changed += 1;
        }
    }
    assert_eq!(changed, 2);
    let mut submitted = Vec::new();
    for _ in 0..2 {
        let got = status.next(5).await.expect("a status webhook").pairs();
        assert_eq!((got[2].1.as_str(), got[3].1.as_str()), ("Approved", "Submitted"));
        submitted.push(got[4].1.clone());
    }
    submitted.sort();
    assert_eq!(submitted, [ref1.clone(), ref2.clone()]);
    assert!(status.next(1).await.is_none(), "submitted once");
    assert_eq!(fund_status(&t, &a1, &ref1).await, "Submitted");
    code(
        &t.post("requestForVoidACH", &[("accountId", &a1), ("RefNum", &ref1)])
            .await,
        "224",
    );
    code(&t.post("getAchPendingId", &[("accountId", &a1)]).await, "212");
    let o1 = offering_of(&t, &id1).await;
    code(&fund(&t, &a1, &o1, &id1, "50").await, "210");

    // The operator's run-now, on a Saturday: whatever is due, nothing twice.
    at(&t, "2026-11-28T15:00:00Z");
    let r = t.operator(Method::POST, "/operator/batches/ach/run", json!({})).await;
    assert_eq!((r.status, &r.json), (200, &json!({"batch": "ach", "processed": 0})));
    let (a4, _, ref4) = pending_move(&t).await;
    let r = t.operator(Method::POST, "/operator/batches/ach/run", json!({})).await;
    assert_eq!(r.json["processed"], 1);
    assert_eq!(fund_status(&t, &a4, &ref4).await, "Submitted");
    let got = status.next(5).await.expect("the run's status webhook").pairs();
    assert_eq!((got[3].1.as_str(), got[4].1.as_str()), ("Submitted", ref4.as_str()));

    // The bank's answers, through the operator: settled funds the trade; returned frees it.
    let bank = |a: &str, r: &str| format!("/operator/clients/{}/accounts/{a}/fund-moves/{r}/status", t.client_id);
    let r = t
        .operator(Method::POST, &bank(&a1, &ref1), json!({"status": "Settled"}))
        .await;
    assert_eq!(
        (r.status, &r.json["fundStatus"], &r.json["clientId"]),
        (200, &json!("Settled"), &json!(t.client_id))
    );
    assert_eq!(trade_status(&t, &id1).await, "FUNDED");
    let r = t
        .operator(
            Method::POST,
            &bank(&a2, &ref2),
            json!({"status": "Returned", "error": "R01 - Insufficient funds"}),
        )
        .await;
    assert_eq!((r.status, &r.json["errors"]), (200, &json!("R01 - Insufficient funds")));
    assert_eq!(trade_status(&t, &id2).await, "CREATED");
    let o2 = offering_of(&t, &id2).await;
    code(&fund(&t, &a2, &o2, &id2, "50").await, "101");
    for _ in 0..2 {
        let got = status.next(5).await.expect("the bank's status webhook").pairs();
        assert!(["Settled", "Returned"].contains(&got[3].1.as_str()), "{got:?}");
    }
    // Only a Submitted move answers to the bank.
    let refusals = [
        (&a1, ref1.as_str(), "Returned", 409),
        (&a1, "1", "Settled", 404),
        (&a2, ref1.as_str(), "Settled", 404),
        (&a4, ref4.as_str(), "Paid", 400),
    ];
    for (account, ref_num, to, expected) in refusals {
        let r = t
            .operator(Method::POST, &bank(account, ref_num), json!({"status": to}))
            .await;
        assert_eq!(r.status, expected, "{ref_num} to {to}: {:?}", r.json);
    }
});

both!(a_void_racing_the_batch_ends_one_way, |t: TestApp| async move {
    let mut status = hook(&t, "updateExternalFundMoveStatus").await;
    let ports = t.app.ports.clone();
    let mut submitted = 0;
    for _ in 0..5 {
        let (a, _, ref_num) = pending_move(&t).await;
        let due = shared::batches::Due {
            client_id: t.client_id.clone(),
            id: ref_num.clone(),
        };
        let void = [("accountId", a.as_str()), ("RefNum", ref_num.as_str())];
        let batch = ach();
        let (voided, processed) = tokio::join!(t.post("requestForVoidACH", &void), batch.process_one(&ports, &due));
        let processed = processed.unwrap();
        let end = fund_status(&t, &a, &ref_num).await;
        match end.as_str() {
            "Voided" => assert!(voided.code() == "101" && !processed, "{:?} {processed}", voided.json),
            "Submitted" => {
                assert!(voided.code() == "224" && processed, "{:?} {processed}", voided.json);
                submitted += 1;
            }
            other => panic!("ended {other}"),
        }
    }
    let mut webhooks = 0;
    while status.next(1).await.is_some() {
        webhooks += 1;
    }
    assert_eq!(webhooks, submitted, "one webhook per submitted move, none for a void");
});

async fn cancel_investment(t: &TestApp, trade: &str) -> Resp {
    t.post(
        "cancelInvestment",
        &[
            ("tradeId", trade),
            ("requestedBy", "Investor"),
            ("reason", "Changed mind"),
        ],
    )
    .await
}

async fn history(t: &TestApp, account: &str) -> Vec<Value> {
    let r = t.post("getExternalFundMoveHistory", &[("accountId", account)]).await;
    code(&r, "101");
    r.json["accountDetails"].as_array().unwrap().clone()
}

/// The account's moves, oldest first, as (`type`, `fundStatus`).
async fn moves_of(t: &TestApp, account: &str) -> Vec<(Value, Value)> {
    history(t, account)
        .await
        .iter()
        .map(|m| (m["type"].clone(), m["fundStatus"].clone()))
        .collect()
}

/// The operator's path that gives the bank's answer to move `ref_num`.
fn bank_status(t: &TestApp, account: &str, ref_num: &str) -> String {
    format!(
        "/operator/clients/{}/accounts/{account}/fund-moves/{ref_num}/status",
        t.client_id
    )
}

async fn run_ach(t: &TestApp) -> u64 {
    let r = t.operator(Method::POST, "/operator/batches/ach/run", json!({})).await;
    assert_eq!(r.status, 200, "{:?}", r.json);
    r.json["processed"].as_u64().unwrap()
}

both!(
    cancelling_an_investment_voids_refuses_or_refunds_its_money,
    |t: TestApp| async move {
        let mut status = hook(&t, "updateExternalFundMoveStatus").await;
        // Pending: voided with the trade, without a status webhook; the units go back.
        let (a, id, ref_num) = pending_move(&t).await;
        code(&cancel_investment(&t, &id).await, "101");
        assert_eq!(fund_status(&t, &a, &ref_num).await, "Voided");
        assert_eq!(trade_status(&t, &id).await, "CANCELED");
        code(&t.post("getAchPendingId", &[("accountId", &a)]).await, "212");
        assert!(status.next(1).await.is_none(), "a void sends no status webhook");

        // Submitted: with the bank, so the cancellation waits (150) and changes nothing.
        let (a, id, ref_num) = pending_move(&t).await;
        assert_eq!(run_ach(&t).await, 1);
        status.next(5).await.expect("Submitted");
        code(&cancel_investment(&t, &id).await, "150");
        assert_eq!(
            (trade_status(&t, &id).await, fund_status(&t, &a, &ref_num).await),
            ("CREATED".into(), "Submitted".into())
        );

        // Settled: the trade is cancelled and the money refunded by a credit move.
        let (a, o, id) = funded_setup(&t, "Test ACH Settled").await;
        code(&fund(&t, &a, &o, &id, "52.25").await, "101");
        for _ in 0..2 {
            status.next(5).await.expect("sandbox step");
        }
        code(&cancel_investment(&t, &id).await, "101");
        assert_eq!(trade_status(&t, &id).await, "CANCELED");
        let moves = history(&t, &a).await;
        let kinds: Vec<(&Value, &Value, &Value)> = moves
            .iter()
            .map(|m| (&m["type"], &m["fundStatus"], &m["totalAmount"]))
            .collect();
        assert_eq!(
            kinds,
            [
                (&json!("debit"), &json!("Settled"), &json!("52.25")),
                (&json!("refund"), &json!("Pending"), &json!("52.25"))
            ]
        );
        assert_eq!(moves[1]["Accountnumber"], "MDAwMTIzNDU2Nzg5");
        assert_eq!(run_ach(&t).await, 1);
        assert_eq!(history(&t, &a).await[1]["fundStatus"], "Submitted");
        let got = status.next(5).await.expect("the refund's status webhook").pairs();
        assert_eq!(got[3].1, "Submitted");

        // Settled, no external account left: the refund waits, and goes once there is one.
        let (a, o, id) = funded_setup(&t, "Test ACH Settled").await;
        code(&fund(&t, &a, &o, &id, "50").await, "101");
        for _ in 0..2 {
            status.next(5).await.expect("sandbox step");
        }
        code(
            &t.post("deleteExternalAccount", &[("types", "Account"), ("accountId", &a)])
                .await,
            "101",
        );
        code(&cancel_investment(&t, &id).await, "101");
        let refund = history(&t, &a).await[1].clone();
        assert_eq!(
            (&refund["fundStatus"], &refund["errors"], &refund["Accountnumber"]),
            (&json!("Pending"), &json!("no external account"), &json!(""))
        );
        assert_eq!(run_ach(&t).await, 0);
        code(&t.post("createExternalAccount", &external(&a, "New bank")).await, "101");
        assert_eq!(run_ach(&t).await, 1);
        let refund = history(&t, &a).await[1].clone();
        assert_eq!(
            (&refund["fundStatus"], &refund["errors"], &refund["Accountfullname"]),
            (&json!("Submitted"), &json!(""), &json!("Ada Stone"))
        );

        // The account deleted after the refund was made: the batch keeps it waiting, and it
        // says so instead of showing the deleted account's numbers.
        let (a, o, id) = funded_setup(&t, "Test ACH Settled").await;
        code(&fund(&t, &a, &o, &id, "50").await, "101");
        for _ in 0..2 {
            status.next(5).await.expect("sandbox step");
        }
        code(&cancel_investment(&t, &id).await, "101");
        assert_ne!(history(&t, &a).await[1]["Accountnumber"], "");
        code(
            &t.post("deleteExternalAccount", &[("types", "Account"), ("accountId", &a)])
                .await,
            "101",
        );
        assert_eq!(run_ach(&t).await, 0);
        let refund = history(&t, &a).await[1].clone();
        assert_eq!(
            (&refund["fundStatus"], &refund["errors"], &refund["Accountnumber"]),
            (&json!("Pending"), &json!("no external account"), &json!(""))
        );
    }
);

/// Starts a link (`op`) for `account`: its URL is answered.
async fn start_link(t: &TestApp, op: &str, account: &str) {
    let r = t.post(op, &[("accountId", account)]).await;
    code(&r, "101");
    let url = r.json["accountDetails"].as_str().unwrap_or_default();
    assert!(url.starts_with("https://"), "{:?}", r.json);
}

/// Each body sent to the operator endpoint `path` answers `status`.
async fn refused(t: &TestApp, path: &str, bodies: &[Value], status: u16) {
    for body in bodies {
        let r = t.operator(Method::POST, path, body.clone()).await;
        assert_eq!(r.status, status, "{body}: {:?}", r.json);
    }
}

fn card_link_path(t: &TestApp, account: &str) -> String {
    format!("/operator/clients/{}/accounts/{account}/card-link", t.client_id)
}

async fn link_card(t: &TestApp, account: &str, number: &str) {
    code(&t.post("linkCreditCard", &[("accountId", account)]).await, "101");
    let r = t
        .operator(
            Method::POST,
            &card_link_path(t, account),
            json!({"cardNumber": number, "expiry": "12/30"}),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.json);
}

async fn run_cards(t: &TestApp) -> u64 {
    let r = t.operator(Method::POST, "/operator/batches/card/run", json!({})).await;
    assert_eq!(r.status, 200, "{:?}", r.json);
    r.json["processed"].as_u64().unwrap()
}

async fn card_history(t: &TestApp, account: &str) -> Vec<Value> {
    let r = t.post("getCCFundMoveHistory", &[("accountId", account)]).await;
    code(&r, "101");
    r.json["creditcardDetails"].as_array().unwrap().clone()
}

both!(
    cards_are_linked_charged_once_and_captured_by_the_batch,
    |t: TestApp| async move {
        let (a, _, id) = trade_of_type(&t, "CREDITCARD").await;
        let charge = [
            ("accountId", a.as_str()),
            ("tradeId", id.as_str()),
            ("createdIpAddress", "10.0.0.1"),
        ];
        code(&t.post("ccFundMove", &charge).await, "149");
        code(&t.post("getLinkedCreditCard", &[("accountId", &a)]).await, "149");
        code(&t.post("deleteCreditCard", &[("accountId", &a)]).await, "149");
        code(&t.post("addCreditCard", &[("accountId", &a)]).await, "999");
        code(&t.post("getCreditCard", &[("accountId", &a)]).await, "999");

        // The investor's link, completed by the operator in the sandbox.
        start_link(&t, "linkCreditCard", &a).await;
        let bad = [
            json!({"cardNumber": "4242424242424242", "expiry": "12/30"}),
            json!({"cardNumber": APPROVES, "expiry": "13/30"}),
            json!({}),
        ];
        refused(&t, &card_link_path(&t, &a), &bad, 400).await;
        let good = json!({"cardNumber": APPROVES, "expiry": "12/30"});
        refused(&t, &card_link_path(&t, "A9999999"), &[good], 404).await;
        let r = t
            .operator(
                Method::POST,
                &card_link_path(&t, &a),
                json!({"cardNumber": APPROVES, "expiry": "12/30"}),
            )
            .await;
        assert_eq!(
            (r.status, &r.json["creditCardNumber"]),
            (200, &json!("XXXXXXXXXXXX1111"))
        );
        code(&t.post("linkCreditCard", &[("accountId", &a)]).await, "710");
        let r = t.post("getLinkedCreditCard", &[("accountId", &a)]).await;
        code(&r, "101");
        let card = &r.json["creditcardDetails"];
        assert_eq!(
            (&card["cardType"], &card["expirationDate"]),
            (&json!("VI"), &json!("1230"))
        );

        // The rules: an ACH trade (194), the card limit (106 naming amount), no provider (211).
        let (ach_a, _, ach_trade) = trade_of_type(&t, "ACH").await;
        link_card(&t, &ach_a, APPROVES).await;
        let on_ach = [
            ("accountId", ach_a.as_str()),
            ("tradeId", ach_trade.as_str()),
            ("createdIpAddress", "10.0.0.1"),
        ];
        code(&t.post("ccFundMove", &on_ach).await, "194");
        settings(&t, json!({"cardLimit": "40.00"})).await;
        let r = t.post("ccFundMove", &charge).await;
        assert_eq!((r.code(), r.desc().contains("amount")), ("106", true), "{:?}", r.json);
        settings(&t, json!({"cardLimit": "5000.00", "cardProvider": null})).await;
        code(&t.post("ccFundMove", &charge).await, "211");
        settings(&t, json!({"cardProvider": "sandbox"})).await;
        let mut with_amount = charge.to_vec();
        with_amount.push(("amount", "1e2"));
        code(&t.post("ccFundMovement", &with_amount).await, "732");

        let r = t.post("ccFundMove", &charge).await;
        code(&r, "101");
        let created = &r.json["transactionDetails"][0];
        let keys: Vec<&str> = created.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "accountId",
                "tradeId",
                "offeringId",
                "totalAmount",
                "ccreferencenumber",
                "fundStatus",
                "transactionstatus"
            ]
        );
        assert_eq!(
            (&created["totalAmount"], &created["fundStatus"]),
            (&json!("50.00"), &json!("Pending"))
        );
        code(&t.post("ccFundMove", &charge).await, "150");
        let moves = card_history(&t, &a).await;
        let ref_num = moves[0]["RefNum"].as_str().unwrap().to_owned();
        let r = t
            .post("getCCFundMoveInfo", &[("accountId", &a), ("RefNum", &ref_num)])
            .await;
        assert_eq!(
            r.json["creditcardDetails"][0]["ccreferencenumber"],
            created["ccreferencenumber"]
        );
        // The charge's own reference finds it too.
        let cc_ref = created["ccreferencenumber"].as_str().unwrap();
        let r = t
            .post("getCCFundMoveInfo", &[("accountId", &a), ("RefNum", cc_ref)])
            .await;
        assert_eq!(
            r.json["creditcardDetails"][0]["RefNum"],
            ref_num.as_str(),
            "{:?}",
            r.json
        );
        code(
            &t.post("getCCFundMoveInfo", &[("accountId", &a), ("RefNum", "1")]).await,
            "106",
        );
        code(
            &t.post("getExternalFundMove", &[("accountId", &a), ("RefNum", &ref_num)])
                .await,
            "212",
        );
        code(&t.post("getAchPendingId", &[("accountId", &a)]).await, "212");

        // The card batch captures it: settled, the trade funded, a second charge refused.
        assert_eq!(run_cards(&t).await, 1);
        assert_eq!(run_cards(&t).await, 0);
        let settled = &card_history(&t, &a).await[0];
        assert_eq!(
            (&settled["fundStatus"], &settled["transactionstatus"]),
            (&json!("Settled"), &json!("Approved"))
        );
        assert_eq!(settled["processorTransactionId"], format!("sbx-{ref_num}"));
        for (neutral, named) in [
            ("processorTransactionId", "vantivTransactionId"),
            ("processorTransactionMessage", "vantivTransactionMessage"),
            ("processorTokenMessage", "vantivTokenMessage"),
        ] {
            assert_eq!(
                settled[neutral], settled[named],
                "{named}, as the incumbent's clients read it"
            );
        }
        assert_eq!(trade_status(&t, &id).await, "FUNDED");
        code(&t.post("ccFundMove", &charge).await, "210");

        // A declining card: declined, the trade free to be charged again.
        let (d, _, did) = trade_of_type(&t, "CREDITCARD").await;
        link_card(&t, &d, DECLINES).await;
        let declined = [
            ("accountId", d.as_str()),
            ("tradeId", did.as_str()),
            ("amount", "30"),
            ("createdIpAddress", "10.0.0.2"),
        ];
        let r = t.post("ccFundMovement", &declined).await;
        assert_eq!(r.json["transactionDetails"][0]["totalAmount"], "30.00");
        assert_eq!(run_cards(&t).await, 1);
        let m = &card_history(&t, &d).await[0];
        assert_eq!(
            (&m["fundStatus"], &m["transactionstatus"], &m["errors"]),
            (&json!("Declined"), &json!("Declined"), &json!("Declined: do not honor"))
        );
        assert_eq!(trade_status(&t, &did).await, "CREATED");
        code(&t.post("ccFundMovement", &declined).await, "101");

        let r = t.post("deleteCreditCard", &[("accountId", &a)]).await;
        assert_eq!(r.json["creditcardDetails"], "Credit card deleted successfully");
        code(&t.post("getLinkedCreditCard", &[("accountId", &a)]).await, "149");
    }
);

fn bank_link_path(t: &TestApp, account: &str) -> String {
    format!("/operator/clients/{}/accounts/{account}/bank-link", t.client_id)
}

fn decrypt(key: &[u8; 32], sealed_b64: &str) -> String {
    use aes_gcm::aead::Aead;
    use aes_gcm::{Aes256Gcm, KeyInit, Nonce};
    use base64::Engine;
    let raw = base64::engine::general_purpose::STANDARD
        .decode(sealed_b64)
        .unwrap_or_else(|e| panic!("{e}: {sealed_b64:?}"));
    let (nonce, sealed) = raw.split_at(12);
    let plain = Aes256Gcm::new(key.into())
        .decrypt(Nonce::from_slice(nonce), sealed)
        .expect("decrypts");
    String::from_utf8(plain).unwrap()
}

both!(
    bank_links_are_completed_by_the_operator_with_part_1s_webhook,
    |t: TestApp| async move {
        let mut linked = hook(&t, "linkExternalAccount").await;
        let mut relinked = hook(&t, "updateLinkExternalAccount").await;
        let a = create_account(&t).await;
        let body = json!({"routingNumber": ROUTING, "accountNumber": "000987654321", "accountType": "savings"});
        // Nothing started: the operator has nothing to complete.
        assert_eq!(
            t.operator(Method::POST, &bank_link_path(&t, &a), body.clone())
                .await
                .status,
            409
        );
        start_link(&t, "linkExternalAccount", &a).await;
        let bad = [
            json!({"routingNumber": "12345", "accountNumber": "1"}),
            json!({"routingNumber": ROUTING, "accountNumber": "12a"}),
            json!({"routingNumber": ROUTING, "accountNumber": "1", "accountType": "brokerage"}),
        ];
        refused(&t, &bank_link_path(&t, &a), &bad, 400).await;
        refused(&t, &bank_link_path(&t, "A9999999"), std::slice::from_ref(&body), 404).await;
        let r = t.operator(Method::POST, &bank_link_path(&t, &a), body.clone()).await;
        assert_eq!(
            (r.status, &r.json["Extnickname"], &r.json["accountType"]),
            (200, &json!("Linked bank"), &json!("Savings"))
        );
        let got = linked.next(5).await.expect("linkExternalAccount webhook").pairs();
        let names: Vec<&str> = got.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(
            names,
            [
                "id",
                "accountId",
                "refNum",
                "institutionId",
                "institution_name",
                "account_number",
                "account_name",
                "account_subtype",
                "account_mask",
                "account_id",
                "account_plaidId",
                "routing_number",
                "wire_routing",
                "account_type",
                "externalAccount",
                "createdDate",
                "createdIpAddress",
                "updatedDate",
                "updatedIpAddress"
            ]
        );
        let field = |name: &str| got.iter().find(|(k, _)| k == name).unwrap().1.clone();
        assert_eq!(
            (field("accountId"), field("account_number"), field("account_mask")),
            (a.clone(), "XXXXXXXX4321".into(), "4321".into())
        );
        assert_eq!(field("routing_number"), "XXXXX0021");
        assert_eq!(
            field("updatedIpAddress"),
            field("createdIpAddress"),
            "the investor's, for whom the operator completes the link"
        );
        // The linked account is the external account fund moves debit.
        let r = t.post("getExternalAccount", &[("accountId", &a)]).await;
        assert_eq!(r.json["statusDesc"]["AccountNumber"], "MDAwOTg3NjU0MzIx");
        code(&t.post("linkExternalAccount", &[("accountId", &a)]).await, "715");

        // A replacement fires updateLinkExternalAccount, its numbers encrypted with the client's key.
        let key = [7u8; 32];
        let setting = format!("/operator/clients/{}/webhook-encryption", t.client_id);
        use base64::Engine;
        let encoded = base64::engine::general_purpose::STANDARD.encode(key);
        assert_eq!(
            t.operator(Method::PUT, &setting, json!({"key": encoded})).await.status,
            200
        );
        code(&t.post("updateLinkExternalAccount", &[("accountId", &a)]).await, "101");
        let r = t
            .operator(
                Method::POST,
                &bank_link_path(&t, &a),
                json!({"routingNumber": ROUTING, "accountNumber": "5550001"}),
            )
            .await;
        assert_eq!(r.status, 200);
        let got = relinked
            .next(5)
            .await
            .expect("updateLinkExternalAccount webhook")
            .pairs();
        assert_eq!(got[0].0, "params");
        let inner: Vec<(String, String)> = serde_urlencoded::from_str(&decrypt(&key, &got[0].1)).unwrap();
        let field = |name: &str| inner.iter().find(|(k, _)| k == name).unwrap().1.clone();
        assert_eq!(decrypt(&key, &field("account_number")), "5550001");
        assert_eq!(decrypt(&key, &field("routing_number")), ROUTING);
        assert!(
            linked.next(1).await.is_none(),
            "the replacement fires its own webhook only"
        );

        // A first link is a link, whichever call started it.
        assert_eq!(
            t.operator(Method::PUT, &setting, json!({"key": null})).await.status,
            200
        );
        let fresh = create_account(&t).await;
        code(
            &t.post("updateLinkExternalAccount", &[("accountId", &fresh)]).await,
            "101",
        );
        let r = t.operator(Method::POST, &bank_link_path(&t, &fresh), body).await;
        assert_eq!(r.status, 200);
        let got = linked.next(5).await.expect("linkExternalAccount webhook").pairs();
        assert!(got.contains(&("accountId".to_owned(), fresh.clone())), "{got:?}");
        assert!(relinked.next(1).await.is_none(), "nothing was replaced");
    }
);

/// Links offering `o` to escrow account `number`.
async fn escrowed(t: &TestApp, o: &str, number: &str) {
    let path = format!("/operator/clients/{}/offerings/{o}/escrow-account", t.client_id);
    let r = t
        .operator(Method::PUT, &path, json!({"escrowAccountNumber": number}))
        .await;
    assert_eq!(r.status, 200, "{:?}", r.json);
}

both!(
    the_escrow_ledger_follows_every_fund_move_through_every_state,
    |t: TestApp| async move {
        const ESCROW: &str = "ESC-1";
        let mut accounts = Vec::new();
        let mut offerings = Vec::new();
        // Voided.
        let (a, o, id) = funded_setup(&t, "Main").await;
        escrowed(&t, &o, ESCROW).await;
        let r = fund(&t, &a, &o, &id, "50").await;
        let ref_num = ref_num_of(&r);
        code(
            &t.post("requestForVoidACH", &[("accountId", &a), ("RefNum", &ref_num)])
                .await,
            "101",
        );
        accounts.push(a);
        // Submitted, settled by the bank, cancelled: refunded, the refund submitted too.
        let (a, o, id) = funded_setup(&t, "Main").await;
        escrowed(&t, &o, ESCROW).await;
        let r = fund(&t, &a, &o, &id, "50.10").await;
        let ref_num = ref_num_of(&r);
        assert_eq!(run_ach(&t).await, 1);
        let bank = format!(
            "/operator/clients/{}/accounts/{a}/fund-moves/{ref_num}/status",
            t.client_id
        );
        assert_eq!(
            t.operator(Method::POST, &bank, json!({"status": "Settled"}))
                .await
                .status,
            200
        );
        code(&cancel_investment(&t, &id).await, "101");
        assert_eq!(run_ach(&t).await, 1);
        accounts.push(a);
        // Returned by the sandbox nickname, on a second offering of the same escrow account.
        let (a, o, id) = funded_setup(&t, "Test ACH R01").await;
        escrowed(&t, &o, ESCROW).await;
        code(&fund(&t, &a, &o, &id, "50").await, "101");
        accounts.push(a);
        offerings.push(o);
        // Cards: one settled, one declined, one still pending.
        for (card, captured) in [(APPROVES, true), (DECLINES, true), (APPROVES, false)] {
            let (a, o, id) = trade_of_type(&t, "CREDITCARD").await;
            escrowed(&t, &o, ESCROW).await;
            link_card(&t, &a, card).await;
            let charge = [
                ("accountId", a.as_str()),
                ("tradeId", id.as_str()),
                ("createdIpAddress", "10.0.0.3"),
            ];
            code(&t.post("ccFundMove", &charge).await, "101");
            if captured {
                assert_eq!(run_cards(&t).await, 1);
            }
            accounts.push(a);
            offerings.push(o);
        }
        // A move on an offering without an escrow account stays out of the ledger.
        let (a, o, id) = funded_setup(&t, "Main").await;
        code(&fund(&t, &a, &o, &id, "50").await, "101");

        let mut expected: Vec<(String, String, i64)> = Vec::new();
        for a in &accounts {
            let ach = history(&t, a).await;
            let cards = card_history(&t, a).await;
            for m in ach.iter().chain(cards.iter()) {
                let cents = (m["totalAmount"].as_str().unwrap().parse::<f64>().unwrap() * 100.0).round() as i64;
                let sign = if m.get("type") == Some(&json!("refund")) { -1 } else { 1 };
                expected.push((
                    m["RefNum"].as_str().unwrap().to_owned(),
                    m["fundStatus"].as_str().unwrap().to_owned(),
                    sign * cents,
                ));
            }
        }
        expected.sort();
        let ledger = shared::records::payments::ledger(t.store(), &t.client_id, ESCROW)
            .await
            .unwrap();
        let mut got: Vec<(String, String, i64)> = ledger
            .iter()
            .map(|e| (e.ref_num.clone(), e.fund_status.name().to_owned(), e.amount_cents))
            .collect();
        got.sort();
        assert_eq!(got, expected);
        let states: std::collections::BTreeSet<&str> = got.iter().map(|(_, s, _)| s.as_str()).collect();
        assert_eq!(
            states.into_iter().collect::<Vec<_>>(),
            ["Declined", "Pending", "Returned", "Settled", "Submitted", "Voided"]
        );
        assert!(
            got.iter().any(|(_, s, c)| s == "Submitted" && *c == -5010),
            "the refund, negative"
        );
        let settled: i64 = got.iter().filter(|(_, s, _)| s == "Settled").map(|(_, _, c)| c).sum();
        assert_eq!(settled, 5010 + 5000, "the settled ACH debit and card charge");

        // Escrow balances: the account-level figure from every offering sharing it, equal to
        // the moves the API reports (available: Settled and Returned; total: every one).
        let available: i64 = expected
            .iter()
            .filter(|(_, s, _)| s == "Settled" || s == "Returned")
            .map(|(_, _, c)| c)
            .sum();
        let total: i64 = expected.iter().map(|(_, _, c)| c).sum();
        for o in &offerings {
            let r = t.get(&format!("/v3/offerings/{o}/escrow/balances")).await;
            assert_eq!((r.status, r.code()), (200, "101"), "{:?}", r.json);
            let b = &r.json["balances"];
            assert_eq!(b["escrowAccountNumber"], ESCROW);
            assert_eq!(
                (b["availableBalanceCents"].as_i64(), b["totalBalanceCents"].as_i64()),
                (Some(available), Some(total)),
                "{b}"
            );
            assert_eq!(b["dealStatus"], Value::Null, "a shared account");
        }
    }
);

/// The trade's cancellation, one of the three ways a client ends a `CREATED` trade.
async fn end_trade(t: &TestApp, how: usize, account: &str, trade: &str) -> Resp {
    match how % 3 {
        0 => cancel_investment(t, trade).await,
        1 => {
            t.post("deleteTrade", &[("accountId", account), ("tradeId", trade)])
                .await
        }
        _ => {
            let status = [("accountId", account), ("tradeId", trade), ("tradeStatus", "CANCELED")];
            t.post("updateTradeStatus", &status).await
        }
    }
}

both!(
    a_payment_racing_a_cancellation_never_pays_a_cancelled_trade,
    |t: TestApp| async move {
        for round in 0..6 {
            // ACH: the debit and the cancellation at once.
            let (a, o, id) = funded_setup(&t, "Main").await;
            let (paid, ended) = tokio::join!(fund(&t, &a, &o, &id, "50"), end_trade(&t, round, &a, &id));
            let status = trade_status(&t, &id).await;
            let live: Vec<Value> = history(&t, &a)
                .await
                .into_iter()
                .filter(|m| m["fundStatus"] != "Voided")
                .collect();
            assert!(
                status != "CANCELED" || live.is_empty(),
                "round {round}: {status} with {live:?} (debit {}, end {})",
                paid.code(),
                ended.code()
            );
            assert_eq!(live.len(), usize::from(paid.code() == "101" && status != "CANCELED"));

            // Card: the charge and the cancellation at once.
            let (a, _, id) = trade_of_type(&t, "CREDITCARD").await;
            link_card(&t, &a, APPROVES).await;
            let charge = [("accountId", a.as_str()), ("tradeId", id.as_str())];
            let (paid, ended) = tokio::join!(t.post("ccFundMove", &charge), end_trade(&t, round, &a, &id));
            run_cards(&t).await;
            let status = trade_status(&t, &id).await;
            let captured = card_history(&t, &a)
                .await
                .into_iter()
                .filter(|m| m["fundStatus"] == "Settled")
                .count();
            assert!(
                status != "CANCELED" || captured == 0,
                "round {round}: card captured on a {status} trade (charge {}, end {})",
                paid.code(),
                ended.code()
            );
        }
    }
);

both!(
    a_trade_paying_by_ach_cannot_be_edited_until_the_move_ends,
    |t: TestApp| async move {
        let (a, o, id) = funded_setup(&t, "Main").await;
        let r = fund(&t, &a, &o, &id, "50").await;
        code(&r, "101");
        let ref_num = ref_num_of(&r);
        let edit = [
            ("accountId", a.as_str()),
            ("offeringId", &o),
            ("tradeId", &id),
            ("shares", "1"),
        ];
        let units = [
            ("accountId", a.as_str()),
            ("tradeId", &id),
            ("unitPrice", "10"),
            ("totalShares", "1"),
        ];
        for batch in [1, 0] {
            code(&t.put("editTrade", &edit).await, "150");
            code(&t.post("editTradeUnits", &units).await, "150");
            // Pending, then submitted: in flight both times.
            assert_eq!(run_ach(&t).await, batch);
        }
        // Returned by the bank, the trade is free again.
        let bank = format!(
            "/operator/clients/{}/accounts/{a}/fund-moves/{ref_num}/status",
            t.client_id
        );
        let r = t
            .operator(Method::POST, &bank, json!({"status": "Returned", "error": "R01"}))
            .await;
        assert_eq!(r.status, 200, "{:?}", r.json);
        code(&t.put("editTrade", &edit).await, "101");
        code(&t.post("editTradeUnits", &units).await, "101");
    }
);

both!(
    the_sandbox_sends_submitted_and_then_the_final_status,
    |t: TestApp| async move {
        let mut status = hook(&t, "updateExternalFundMoveStatus").await;
        for (nickname, last) in [("Test ACH R01", "Returned"), ("Test ACH Settled", "Settled")] {
            for _ in 0..4 {
                let (a, o, id) = funded_setup(&t, nickname).await;
                code(&fund(&t, &a, &o, &id, "50").await, "101");
                let mut got = Vec::new();
                for _ in 0..2 {
                    let sent = status.next(5).await.expect("a status webhook").pairs();
                    got.extend(sent.into_iter().filter(|(k, _)| k == "fundStatus").map(|(_, v)| v));
                }
                assert_eq!(got, ["Submitted", last], "{nickname}");
            }
        }
    }
);

both!(
    read_webhooks_never_carry_a_bank_number_in_clear,
    |t: TestApp| async move {
        use base64::Engine as _;
        let (a, o, first) = funded_setup(&t, "Main").await;
        let second = {
            let r = t
                .post(
                    "createTrade",
                    &[
                        ("accountId", &a),
                        ("offeringId", &o),
                        ("transactionType", "ACH"),
                        ("transactionUnits", "5"),
                    ],
                )
                .await;
            code(&r, "101");
            r.inserted("purchaseDetails")["tradeId"].as_str().unwrap().to_owned()
        };
        for id in [&first, &second] {
            code(&fund(&t, &a, &o, id, "50").await, "101");
        }
        let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
        let clear = [
            "000123456789".to_owned(),
            ROUTING.to_owned(),
            b64("000123456789"),
            b64(ROUTING),
        ];
        // Lists of two records (a form field of JSON text) and the external account itself.
        let account = [("accountId", a.as_str())];
        let reads: [(&str, &[(&str, &str)]); 3] = [
            ("getAchPendingId", &account),
            ("getExternalFundMoveHistory", &account),
            ("getExternalAccount", &[("accountId", &a), ("types", "Account")]),
        ];
        for (method, params) in reads {
            let mut l = hook(&t, method).await;
            code(&t.post(method, params).await, "101");
            let sent = l.next(5).await.expect(method).pairs();
            let body: String = sent.iter().map(|(k, v)| format!("{k}={v}&")).collect();
            for number in &clear {
                assert!(!body.contains(number), "{method}: {number} in {body}");
            }
            // Masked, and in the response's form (base64).
            assert!(
                body.contains(&b64("XXXXXXXX6789")) && body.contains(&b64("XXXXX0021")),
                "{method}: {body}"
            );
            t.register_webhook(method, &[]).await;
        }
    }
);

both!(
    a_funded_trade_cancelled_rejected_or_sent_back_by_status_is_refunded,
    |t: TestApp| async move {
        for status in ["CANCELED", "Rejected", "CREATED"] {
            let (a, o, id) = funded_setup(&t, "Test ACH Settled").await;
            code(&fund(&t, &a, &o, &id, "50").await, "101");
            assert_eq!(trade_status(&t, &id).await, "FUNDED");
            let params = [
                ("accountId", a.as_str()),
                ("tradeId", id.as_str()),
                ("tradeStatus", status),
            ];
            code(&t.post("updateTradeStatus", &params).await, "101");
            assert_eq!(
                moves_of(&t, &a).await,
                [(json!("debit"), json!("Settled")), (json!("refund"), json!("Pending"))],
                "{status}"
            );
            // The refund is the service's to pay: the client cannot void it.
            let refund = history(&t, &a).await[1]["RefNum"].as_str().unwrap().to_owned();
            let r = t
                .post("requestForVoidACH", &[("accountId", &a), ("RefNum", &refund)])
                .await;
            code(&r, "224");
            assert_eq!(history(&t, &a).await[1]["fundStatus"], "Pending");
        }
        // Sent back to CREATED, the trade's money is on its way back: no new payment until
        // the refund is through (150).
        let (a, o, id) = funded_setup(&t, "Main").await;
        let first = ref_num_of(&fund(&t, &a, &o, &id, "50").await);
        let bank = |ref_num: &str| bank_status(&t, &a, ref_num);
        run_ach(&t).await; // the loop's refunds go too
        let settled = json!({"status": "Settled"});
        assert_eq!(
            t.operator(Method::POST, &bank(&first), settled.clone()).await.status,
            200
        );
        assert_eq!(trade_status(&t, &id).await, "FUNDED");
        let back = [
            ("accountId", a.as_str()),
            ("tradeId", id.as_str()),
            ("tradeStatus", "CREATED"),
        ];
        code(&t.post("updateTradeStatus", &back).await, "101");
        code(&fund(&t, &a, &o, &id, "50").await, "150");
        assert_eq!(history(&t, &a).await.len(), 2, "nothing paid");
        // Once the refund has settled, the trade may be funded again; deleting it then
        // refunds that payment only, and leaves its refund under way.
        run_ach(&t).await; // the loop's refunds go too
        let refund = history(&t, &a).await[1]["RefNum"].as_str().unwrap().to_owned();
        assert_eq!(t.operator(Method::POST, &bank(&refund), settled).await.status, 200);
        let second = ref_num_of(&fund(&t, &a, &o, &id, "50").await);
        run_ach(&t).await; // the loop's refunds go too
        let settled = json!({"status": "Settled"});
        assert_eq!(t.operator(Method::POST, &bank(&second), settled).await.status, 200);
        code(&t.post("updateTradeStatus", &back).await, "101");
        code(&t.post("deleteTrade", &back[..2]).await, "101");
        let mut kinds: Vec<String> = history(&t, &a).await.iter().map(|m| m["type"].to_string()).collect();
        kinds.sort();
        assert_eq!(kinds, [r#""debit""#, r#""debit""#, r#""refund""#, r#""refund""#]);
        assert_eq!(history(&t, &a).await[3]["fundStatus"], "Pending");
    }
);

both!(
    a_refund_that_does_not_reach_the_investor_holds_the_trade_again,
    |t: TestApp| async move {
        let (a, o, id) = funded_setup(&t, "Main").await;
        let debit = ref_num_of(&fund(&t, &a, &o, &id, "50").await);
        let bank = |ref_num: &str| bank_status(&t, &a, ref_num);
        assert_eq!(run_ach(&t).await, 1);
        let settle = json!({"status": "Settled"});
        assert_eq!(t.operator(Method::POST, &bank(&debit), settle).await.status, 200);
        let params = |status: &'static str| {
            [
                ("accountId", a.clone()),
                ("tradeId", id.clone()),
                ("tradeStatus", status.to_owned()),
            ]
        };
        let back = params("CREATED");
        let back: Vec<(&str, &str)> = back.iter().map(|(k, v)| (*k, v.as_str())).collect();
        code(&t.post("updateTradeStatus", &back).await, "101");
        // While the refund is under way the trade is not funded, by payment or by status.
        let funded = params("FUNDED");
        let funded: Vec<(&str, &str)> = funded.iter().map(|(k, v)| (*k, v.as_str())).collect();
        code(&t.post("updateTradeStatus", &funded).await, "150");
        assert_eq!(trade_status(&t, &id).await, "CREATED");
        // The bank returns the refund: the money never left escrow, so the debit holds the
        // trade again (no second payment: 210), and a cancellation refunds it anew.
        assert_eq!(run_ach(&t).await, 1);
        let refund = history(&t, &a).await[1]["RefNum"].as_str().unwrap().to_owned();
        let returned = json!({"status": "Returned", "error": "R02 - Account closed"});
        assert_eq!(t.operator(Method::POST, &bank(&refund), returned).await.status, 200);
        code(&fund(&t, &a, &o, &id, "50").await, "210");
        code(&cancel_investment(&t, &id).await, "101");
        assert_eq!(
            moves_of(&t, &a).await,
            [
                (json!("debit"), json!("Settled")),
                (json!("refund"), json!("Returned")),
                (json!("refund"), json!("Pending"))
            ]
        );
    }
);

/// A trade funded and settled, then sent back to CREATED, whose refund the bank returned: its
/// settled debit holds the trade again. Answers (account, trade).
async fn returned_refund_setup(t: &TestApp) -> (String, String) {
    let (a, o, id) = funded_setup(t, "Main").await;
    let debit = ref_num_of(&fund(t, &a, &o, &id, "50").await);
    run_ach(t).await;
    let settle = json!({"status": "Settled"});
    assert_eq!(
        t.operator(Method::POST, &bank_status(t, &a, &debit), settle)
            .await
            .status,
        200
    );
    let back = [
        ("accountId", a.as_str()),
        ("tradeId", id.as_str()),
        ("tradeStatus", "CREATED"),
    ];
    code(&t.post("updateTradeStatus", &back).await, "101");
    run_ach(t).await;
    let refund = history(t, &a).await[1]["RefNum"].as_str().unwrap().to_owned();
    let returned = json!({"status": "Returned", "error": "R02 - Account closed"});
    assert_eq!(
        t.operator(Method::POST, &bank_status(t, &a, &refund), returned)
            .await
            .status,
        200
    );
    (a, id)
}

both!(
    every_way_of_closing_a_trade_refunds_the_money_a_returned_refund_left,
    |t: TestApp| async move {
        let refunded_anew = [
            (json!("debit"), json!("Settled")),
            (json!("refund"), json!("Returned")),
            (json!("refund"), json!("Pending")),
        ];
        for close in ["deleteTrade", "CANCELED", "Rejected", "cancelInvestment"] {
            let (a, id) = returned_refund_setup(&t).await;
            let r = match close {
                "cancelInvestment" => cancel_investment(&t, &id).await,
                "deleteTrade" => t.post("deleteTrade", &[("accountId", &a), ("tradeId", &id)]).await,
                status => {
                    let params = [
                        ("accountId", a.as_str()),
                        ("tradeId", id.as_str()),
                        ("tradeStatus", status),
                    ];
                    t.post("updateTradeStatus", &params).await
                }
            };
            code(&r, "101");
            assert_eq!(moves_of(&t, &a).await, refunded_anew, "{close}");
        }
        // Closed, with its refund returned again: cancelling once more refunds the money anew
        // (the trade stays as it is), and only while no refund is under way.
        let (a, id) = returned_refund_setup(&t).await;
        code(&cancel_investment(&t, &id).await, "101");
        code(&cancel_investment(&t, &id).await, "190");
        run_ach(&t).await;
        let second = history(&t, &a).await[2]["RefNum"].as_str().unwrap().to_owned();
        let returned = json!({"status": "Returned", "error": "R03"});
        assert_eq!(
            t.operator(Method::POST, &bank_status(&t, &a, &second), returned)
                .await
                .status,
            200
        );
        let r = cancel_investment(&t, &id).await;
        code(&r, "101");
        assert_eq!(trade_status(&t, &id).await, "CANCELED");
        assert_eq!(
            moves_of(&t, &a).await,
            [
                (json!("debit"), json!("Settled")),
                (json!("refund"), json!("Returned")),
                (json!("refund"), json!("Returned")),
                (json!("refund"), json!("Pending"))
            ]
        );
        let r = t
            .post(
                "fundReturnRequest",
                &[("tradeId", id.as_str()), ("requestedBy", "Investor"), ("reason", "x")],
            )
            .await;
        code(&r, "190");
    }
);

both!(
    a_card_charge_of_a_sub_cent_total_rounds_up_to_the_cent,
    |t: TestApp| async move {
        use crate::fixtures::{with, ISSUER, OFFERING};
        let r = t.put("createIssuer", ISSUER).await;
        let issuer = r.inserted("issuerDetails")["issuerId"].as_str().unwrap().to_owned();
        let params = with(
            OFFERING,
            &[("issuerId", &issuer), ("unitPrice", "0.335"), ("totalShares", "1000")],
        );
        let r = t.put("createOffering", &params).await;
        let o = r.inserted("offeringDetails")["offeringId"].as_str().unwrap().to_owned();
        let (a, _) = investor(&t).await;
        link_card(&t, &a, APPROVES).await;
        // 7 x 0.335 = 2.345 and 5 x 0.335 = 1.675: a charge never leaves the trade short.
        for (units, charged) in [("7", "2.35"), ("5", "1.68")] {
            let trade = [
                ("accountId", a.as_str()),
                ("offeringId", o.as_str()),
                ("transactionType", "CREDITCARD"),
                ("transactionUnits", units),
            ];
            let r = t.post("createTrade", &trade).await;
            code(&r, "101");
            let id = r.inserted("purchaseDetails")["tradeId"].as_str().unwrap().to_owned();
            let charge = [
                ("accountId", a.as_str()),
                ("tradeId", id.as_str()),
                ("createdIpAddress", "10.0.0.1"),
            ];
            let r = t.post("ccFundMove", &charge).await;
            code(&r, "101");
            assert_eq!(
                r.json["transactionDetails"][0]["totalAmount"],
                json!(charged),
                "{units} units"
            );
        }
    }
);

both!(
    no_payment_goes_into_an_offering_that_takes_no_more_investments,
    |t: TestApp| async move {
        let (a, o, id) = funded_setup(&t, "Main").await;
        let (card_a, card_o, card_trade) = trade_of_type(&t, "CREDITCARD").await;
        link_card(&t, &card_a, APPROVES).await;
        // Payments made before the offering is cancelled are voided by their batch, not
        // collected.
        let (queued_a, queued_o, queued_trade) = funded_setup(&t, "Main").await;
        code(
            &t.post(
                "externalFundMove",
                &move_params(&queued_a, &queued_o, &queued_trade, "50.00"),
            )
            .await,
            "101",
        );
        let (queued_card_a, queued_card_o, queued_card_trade) = trade_of_type(&t, "CREDITCARD").await;
        link_card(&t, &queued_card_a, APPROVES).await;
        let queued_charge = [
            ("accountId", queued_card_a.as_str()),
            ("tradeId", queued_card_trade.as_str()),
            ("createdIpAddress", "10.0.0.1"),
        ];
        code(&t.post("ccFundMove", &queued_charge).await, "101");
        for offering in [&queued_o, &queued_card_o] {
            code(&t.post("cancelOffering", &[("offeringId", offering)]).await, "101");
        }
        let r = t.operator(Method::POST, "/operator/batches/ach/run", json!({})).await;
        assert_eq!(r.status, 200, "{:?}", r.json);
        run_cards(&t).await;
        let r = t.post("getExternalFundMoveHistory", &[("accountId", &queued_a)]).await;
        assert_eq!(r.json["accountDetails"][0]["fundStatus"], "Voided", "{:?}", r.json);
        assert_eq!(card_history(&t, &queued_card_a).await[0]["fundStatus"], "Voided");
        for trade in [&queued_trade, &queued_card_trade] {
            assert_eq!(trade_status(&t, trade).await, "CREATED");
        }
        for offering in [&o, &card_o] {
            code(&t.post("cancelOffering", &[("offeringId", offering)]).await, "101");
        }
        let r = t.post("externalFundMove", &move_params(&a, &o, &id, "50.00")).await;
        assert_eq!(
            (r.code(), r.desc().contains("offeringId")),
            ("106", true),
            "{:?}",
            r.json
        );
        let charge = [
            ("accountId", card_a.as_str()),
            ("tradeId", card_trade.as_str()),
            ("createdIpAddress", "10.0.0.1"),
        ];
        code(&t.post("ccFundMove", &charge).await, "106");
        let r = t.post("getExternalFundMoveHistory", &[("accountId", &a)]).await;
        assert_eq!(r.json["accountDetails"], json!([]), "nothing written: {:?}", r.json);
        // A deleted offering is 138, also where the charge names only the trade.
        let (deleted_a, deleted_o, deleted_trade) = trade_of_type(&t, "CREDITCARD").await;
        link_card(&t, &deleted_a, APPROVES).await;
        code(&t.post("deleteOffering", &[("offeringId", &deleted_o)]).await, "101");
        let charge = [
            ("accountId", deleted_a.as_str()),
            ("tradeId", deleted_trade.as_str()),
            ("createdIpAddress", "10.0.0.1"),
        ];
        code(&t.post("ccFundMove", &charge).await, "138");
    }
);
