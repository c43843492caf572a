//! The trades group: createTrade in CONTRACT's order of checks, every read, edit and status
//! move with one case per error code, every webhook at a real listener field by field, the
//! state table (a rejected move changes nothing in the store), and the share invariants
//! under concurrency (never oversold; remainingShares = totalShares − units of live trades).

use std::sync::Arc;

use api_tests::{both, Resp, TestApp};
use http::Method;
use rust_decimal::Decimal;
use serde_json::{json, Value};
use shared::ids::sortable;
use shared::model::offering::Offering;
use shared::model::trade::{Trade, TradeStatus};
use shared::records;
use shared::records::offering::{self as offering_model, purchase_key};
use shared::records::trade as model;
use shared::store::{Item, Key};

use crate::fixtures::hook;
use crate::fixtures::{create_account, create_party, link, with, without, ISSUER, OFFERING};

// ---------------------------------------------------------------- fixtures

/// An offering of `total` units at 10.00 each.
pub(crate) async fn offering(t: &TestApp, total: &str) -> String {
    let r = t.put("createIssuer", ISSUER).await;
    assert_eq!(r.code(), "101", "{:?}", r.json);
    let issuer = r.inserted("issuerDetails")["issuerId"].as_str().unwrap().to_owned();
    let params = with(OFFERING, &[("issuerId", issuer.as_str()), ("totalShares", total)]);
    let r = t.put("createOffering", &params).await;
    assert_eq!(r.code(), "101", "{:?}", r.json);
    r.inserted("offeringDetails")["offeringId"].as_str().unwrap().to_owned()
}

/// An account with a primary party: (accountId, partyId).
pub(crate) async fn investor(t: &TestApp) -> (String, String) {
    let a = create_account(t).await;
    let p = create_party(t).await;
    let r = link(t, &a, "IndivACParty", &p, "1").await;
    assert_eq!(r.code(), "101", "{:?}", r.json);
    (a, p)
}

fn trade_params<'a>(account: &'a str, offering: &'a str, units: &'a str) -> Vec<(&'a str, &'a str)> {
    vec![
        ("accountId", account),
        ("offeringId", offering),
        ("transactionType", "ACH"),
        ("transactionUnits", units),
    ]
}

async fn create(t: &TestApp, account: &str, offering: &str, units: &str) -> Resp {
    t.post("createTrade", &trade_params(account, offering, units)).await
}

/// A `CREATED` trade of `units` units.
async fn trade(t: &TestApp, account: &str, offering: &str, units: &str) -> String {
    let r = create(t, account, offering, units).await;
    assert_eq!(r.code(), "101", "{:?}", r.json);
    r.inserted("purchaseDetails")["tradeId"].as_str().unwrap().to_owned()
}

pub(crate) async fn set_status(t: &TestApp, account: &str, id: &str, status: &str) -> Resp {
    t.post(
        "updateTradeStatus",
        &[("accountId", account), ("tradeId", id), ("tradeStatus", status)],
    )
    .await
}

/// Moves a trade along a path of statuses, each step `101`.
async fn walk(t: &TestApp, account: &str, id: &str, path: &[&str]) {
    for s in path {
        let r = set_status(t, account, id, s).await;
        assert_eq!(r.code(), "101", "to {s}: {:?}", r.json);
    }
}

async fn stored(t: &TestApp, id: &str) -> Trade {
    model::load(t.store(), &t.client_id, id).await.unwrap().unwrap().rec
}

async fn offering_state(t: &TestApp, id: &str) -> Offering {
    offering_model::load(t.store(), &t.client_id, id)
        .await
        .unwrap()
        .unwrap()
        .rec
}

async fn get_trade(t: &TestApp, account: &str, id: &str) -> Value {
    let r = t.post("getTrade", &[("accountId", account), ("tradeId", id)]).await;
    assert_eq!(r.code(), "101", "{:?}", r.json);
    r.json["partyDetails"][0].clone()
}

fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
    v.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
}

/// `keys` of a record, as (name, text) pairs in that order.
fn fields_of(record: &Value, keys: &[&str]) -> Vec<(String, String)> {
    keys.iter()
        .map(|k| {
            let v = &record[*k];
            let text = match v {
                Value::String(s) => s.clone(),
                Value::Null => panic!("{k} missing from {record}"),
                other => other.to_string(),
            };
            ((*k).to_owned(), text)
        })
        .collect()
}

fn keys(v: &Value) -> Vec<&str> {
    v.as_object().unwrap().keys().map(String::as_str).collect()
}

/// Every stored item a trade change touches, as raw items: the trade, its two copies, its
/// purchase entry, its offering, the trade counter, the pending-ACH marker and the ID counter.
async fn snapshot(t: &TestApp, id: &str) -> Vec<Option<Item>> {
    let tr = stored(t, id).await;
    let c = &t.client_id;
    let keys = [
        model::trade_key(c, id),
        Key::new(model::by_offering_pk(c, &tr.offering_id), sortable(id)),
        Key::new(model::by_account_pk(c, &tr.account_id), sortable(id)),
        purchase_key(c, &tr.offering_id, id),
        offering_model::offering_key(c, &tr.offering_id),
        records::counter_key::<Trade>(c),
        model::pending_ach_key(c, id),
        Key::new("#COUNTER", "trade"),
    ];
    let mut out = Vec::new();
    for k in &keys {
        out.push(t.store().get(k).await.unwrap());
    }
    out
}

/// The offering item and the trade counters, for rejected createTrade calls.
async fn offering_snapshot(t: &TestApp, offering: &str) -> Vec<Option<Item>> {
    let c = &t.client_id;
    let mut out = Vec::new();
    for k in [
        offering_model::offering_key(c, offering),
        records::counter_key::<Trade>(c),
        Key::new("#COUNTER", "trade"),
    ] {
        out.push(t.store().get(&k).await.unwrap());
    }
    out
}

/// Marks an ACH fund move of the trade pending, as the payments group will.
async fn mark_ach_pending(t: &TestApp, id: &str) {
    t.store()
        .write(vec![model::pending_ach_put(&t.client_id, id, "REF1")])
        .await
        .unwrap();
}

/// A labelled request and the code it must answer.
type Case<'a> = (&'a str, Vec<(&'a str, &'a str)>, &'a str);
/// [`Case`] with owned values.
type OwnedCase = (&'static str, Vec<(&'static str, String)>, &'static str);

fn dec(s: &str) -> Decimal {
    s.parse().unwrap()
}

// ---------------------------------------------------------------- createTrade

both!(create_trade_answers_every_field_and_fires, |t: TestApp| async move {
    let o = offering(&t, "1000").await;
    let (a, p) = investor(&t).await;
    let mut h = hook(&t, "createTrade").await;
    let params = with(
        &trade_params(&a, &o, "5"),
        &[
            ("transactionType", "external credit_card"),
            ("fees", "2.5"),
            ("RRName", "Rick"),
            ("RRApprovalDate", "02-03-2026"),
            ("PrincipalApprovalStatus", "Approved"),
            ("field2", "f2"),
        ],
    );
    let r = t.post("createTrade", &params).await;
    assert_eq!((r.status, r.code()), (200, "101"), "{:?}", r.json);
    assert_eq!(r.json["purchaseDetails"][0], json!(true));
    let rec = r.inserted("purchaseDetails").clone();
    let id = rec["tradeId"].as_str().unwrap().to_owned();
    assert!(id.parse::<u64>().unwrap() >= 100_000);
    assert_eq!(
        keys(&rec),
        [
            "tradeId",
            "transactionId",
            "transactionAmount",
            "transactionDate",
            "transactionStatus",
            "RRApprovalStatus",
            "RRName",
            "RRApprovalDate",
            "PrincipalApprovalStatus",
            "PrincipalName",
            "PrincipalDate",
            "closeId",
            "eligibleToClose"
        ]
    );
    assert_eq!(rec["transactionId"], json!(id), "the trade's reference");
    assert_eq!(rec["transactionAmount"], "52.500000", "10 x 5 + 2.5");
    assert_eq!(rec["transactionStatus"], "CREATED");
    assert_eq!(rec["RRApprovalStatus"], "Pending", "default");
    assert_eq!(rec["PrincipalApprovalStatus"], "Approved");
    assert_eq!(rec["closeId"], "", "always present");
    assert_eq!(rec["eligibleToClose"], "no");
    let got = h.next(5).await.expect("createTrade webhook");
    let mut expected = fields_of(&rec, &keys(&rec));
    expected.retain(|(k, _)| k != "closeId");
    assert_eq!(got.pairs(), expected, "every field but the empty closeId");

    let tr = get_trade(&t, &a, &id).await;
    assert_eq!(tr["transactionType"], "EXTERNALCREDITCARD");
    assert_eq!(tr["partyId"], json!(p));
    assert_eq!(
        (tr["totalShares"].as_str(), tr["orderStatus"].as_str()),
        (Some("5"), Some("CREATED"))
    );
    let o_now = offering_state(&t, &o).await;
    assert_eq!((o_now.remaining_shares, o_now.open_trades), (995, 1));
    assert_eq!(
        (o_now.pending_amount, o_now.committed_amount),
        (dec("52.5"), dec("52.5"))
    );

    let r = t
        .post("createTrade", &with(&trade_params(&a, &o, "1"), &[("closeId", "C-9")]))
        .await;
    assert_eq!(r.inserted("purchaseDetails")["closeId"], "C-9");
    let got = h.next(5).await.expect("createTrade webhook");
    assert!(
        got.pairs().contains(&("closeId".to_owned(), "C-9".to_owned())),
        "{got:?}"
    );
    let r = t.post("getOfferingPurchaseHistory", &[("offeringId", &o)]).await;
    let history = &r.json["Offering purchased details"]["offering_purchase_history"];
    assert_eq!(history.as_array().unwrap().len(), 2, "{history}");
    assert_eq!(history[0]["tradeId"], json!(id));
    assert_eq!(history[0]["accountName"], "Ann Lee");
});

both!(
    create_trade_checks_in_contract_order_and_writes_nothing,
    |t: TestApp| async move {
        let o = offering(&t, "10").await;
        let (a, _) = investor(&t).await;
        let before = offering_snapshot(&t, &o).await;
        let lonely = create_account(&t).await;
        for name in ["accountId", "offeringId", "transactionType", "transactionUnits"] {
            let r = t
                .post("createTrade", &without(&trade_params(&a, &o, "1"), &[name]))
                .await;
            assert_eq!(r.code(), "106", "{name}: {:?}", r.json);
        }
        let cases: Vec<Case> = vec![
            ("units not a number", trade_params(&a, &o, "two"), "106"),
            (
                "fees malformed",
                with(&trade_params(&a, &o, "1"), &[("fees", "-1")]),
                "106",
            ),
            (
                "bad date",
                with(&trade_params(&a, &o, "1"), &[("PrincipalDate", "31-31-2026")]),
                "106",
            ),
            ("offering not numeric", trade_params(&a, "abc", "1"), "106"),
            (
                "blank type",
                with(&trade_params(&a, &o, "1"), &[("transactionType", " _ ")]),
                "106",
            ),
            ("unknown account first", trade_params("A9999999", "999999", "0"), "148"),
            (
                "no primary party before the offering",
                trade_params(&lonely, "999999", "0"),
                "135",
            ),
            (
                "unknown offering before the units",
                trade_params(&a, "999999", "0"),
                "138",
            ),
            ("zero units", trade_params(&a, &o, "0"), "106"),
            ("negative units", trade_params(&a, &o, "-3"), "106"),
            ("above remaining", trade_params(&a, &o, "11"), "106"),
        ];
        for (label, params, code) in &cases {
            let r = t.post("createTrade", params).await;
            assert_eq!(r.code(), *code, "{label}: {:?}", r.json);
            assert_eq!(offering_snapshot(&t, &o).await, before, "{label}: nothing written");
        }
        let r = t.post("createTrade", &trade_params(&a, &o, "11")).await;
        assert!(r.desc().contains("10 remain"), "{}", r.desc());

        // An archived account is not active: 148.
        let r = t
            .post(
                "updateAccountArchivestatus",
                &[("accountId", &a), ("archiveStatus", "1")],
            )
            .await;
        assert_eq!(r.code(), "101", "{:?}", r.json);
        assert_eq!(create(&t, &a, &o, "1").await.code(), "148");
        t.post(
            "updateAccountArchivestatus",
            &[("accountId", &a), ("archiveStatus", "0")],
        )
        .await;

        // Closed, cancelled, deleted offerings: 106 (does not accept investments), 138 deleted.
        let closed = offering(&t, "10").await;
        assert_eq!(t.post("closeOffering", &[("offeringId", &closed)]).await.code(), "101");
        let r = create(&t, &a, &closed, "1").await;
        assert_eq!(r.code(), "106", "{:?}", r.json);
        assert!(r.desc().contains("does not accept investments"), "{}", r.desc());
        let cancelled = offering(&t, "10").await;
        t.post("cancelOffering", &[("offeringId", &cancelled)]).await;
        assert_eq!(create(&t, &a, &cancelled, "1").await.code(), "106");
        let deleted = offering(&t, "10").await;
        t.post("deleteOffering", &[("offeringId", &deleted)]).await;
        assert_eq!(create(&t, &a, &deleted, "1").await.code(), "138");
        t.post("reopenOffering", &[("offeringId", &closed)]).await;
        assert_eq!(
            create(&t, &a, &closed, "1").await.code(),
            "101",
            "a reopened offering accepts again"
        );

        // Another client's account and offering do not exist for this one.
        let other = t.new_client(json!({"scopes": ["*"]})).await;
        let r = t
            .form_as(&other, Method::POST, "createTrade", &trade_params(&a, &o, "1"))
            .await;
        assert_eq!(r.code(), "148");
        let r = t.get("/v3/trades").await;
        assert_eq!(
            r.json["pagination"]["totalRecords"],
            json!(1),
            "only the reopened one: {:?}",
            r.json
        );
    }
);

both!(exactly_the_remaining_units_can_be_taken, |t: TestApp| async move {
    let o = offering(&t, "7").await;
    let (a, _) = investor(&t).await;
    trade(&t, &a, &o, "4").await;
    assert_eq!(create(&t, &a, &o, "4").await.code(), "106");
    trade(&t, &a, &o, "3").await;
    assert_eq!(offering_state(&t, &o).await.remaining_shares, 0);
    assert_eq!(create(&t, &a, &o, "1").await.code(), "106");
});

both!(
    amounts_past_the_limit_are_106_and_totals_stay_exact,
    |t: TestApp| async move {
        let o = offering(&t, "100").await;
        let (a, _) = investor(&t).await;
        let with_fees = |fees: &'static str| {
            let mut p = trade_params(&a, &o, "1");
            p.push(("fees", fees));
            p
        };
        let before = offering_snapshot(&t, &o).await;
        for fees in ["50000000000000000000000000000", "1000000000000000"] {
            let r = t.post("createTrade", &with_fees(fees)).await;
            assert_eq!(r.code(), "106", "{fees}: {:?}", r.json);
        }
        let r = create(&t, &a, &o, "1000000000001").await;
        assert_eq!(r.code(), "106", "{:?}", r.json);
        assert_eq!(offering_snapshot(&t, &o).await, before, "nothing written");
        // The largest fees, twice: the offering's totals stay exact and readable.
        for _ in 0..2 {
            let r = t.post("createTrade", &with_fees("999999999999989")).await;
            assert_eq!(r.code(), "101", "{:?}", r.json);
        }
        let r = t.post("getOffering", &[("offeringId", &o)]).await;
        assert_eq!(r.code(), "101", "{:?}", r.json);
        let r = t.get("/v3/offerings?limit=1").await;
        assert_eq!(r.code(), "101", "{:?}", r.json);
        let r = t.post("getOfferingDetails", &[("offeringId", &o)]).await;
        assert_eq!(r.code(), "101", "{:?}", r.json);
        assert!(r.json.to_string().contains("1999999999999998.000000"), "{:?}", r.json);
    }
);

// ---------------------------------------------------------------- reads

const TRADE_RECORD: &[&str] = &[
    "id",
    "developerAPIKey",
    "offeringId",
    "accountId",
    "partyId",
    "party_type",
    "escrowId",
    "orderId",
    "transactionType",
    "totalAmount",
    "totalShares",
    "orderStatus",
    "createdDate",
    "createdIpAddress",
    "errors",
    "documentKey",
    "esignStatus",
    "users",
    "field1",
    "field2",
    "field3",
    "RRApprovalStatus",
    "RRName",
    "RRApprovalDate",
    "PrincipalApprovalStatus",
    "PrincipalName",
    "PrincipalDate",
    "archived_status",
    "closeId",
    "eligibleToClose",
];

both!(get_trade_answers_the_observed_record, |t: TestApp| async move {
    let o = offering(&t, "100").await;
    let (a, p) = investor(&t).await;
    let id = trade(&t, &a, &o, "3").await;
    let mut h = hook(&t, "getTrade").await;
    let r = t
        .post("getTrade", &[("accountId", a.as_str()), ("tradeId", id.as_str())])
        .await;
    assert_eq!(r.code(), "101", "{:?}", r.json);
    let rec = &r.json["partyDetails"][0];
    assert_eq!(keys(rec), TRADE_RECORD);
    assert_eq!(rec["developerAPIKey"], "XXXXXXXXXXXXXXX");
    assert_eq!(
        (rec["id"].as_str(), rec["orderId"].as_str()),
        (Some(id.as_str()), Some(id.as_str()))
    );
    assert_eq!(rec["partyId"], json!(p));
    assert_eq!(rec["party_type"], "IndivACParty");
    assert_eq!(rec["totalAmount"], "30.000000");
    assert_eq!(rec["esignStatus"], "NOTSIGNED");
    assert_eq!(rec["createdIpAddress"], "127.0.0.1");
    let got = h.next(5).await.expect("getTrade webhook");
    assert_eq!(got.pairs(), fields_of(rec, TRADE_RECORD));

    let (b, _) = investor(&t).await;
    let cases = [
        (
            "no accountId",
            t.post("getTrade", &[("tradeId", id.as_str())]).await,
            "106",
        ),
        (
            "no tradeId",
            t.post("getTrade", &[("accountId", a.as_str())]).await,
            "106",
        ),
        (
            "tradeId not numeric",
            t.post("getTrade", &[("accountId", a.as_str()), ("tradeId", "x1")])
                .await,
            "106",
        ),
        (
            "unknown account",
            t.post("getTrade", &[("accountId", "A9999999"), ("tradeId", id.as_str())])
                .await,
            "148",
        ),
        (
            "unknown trade",
            t.post("getTrade", &[("accountId", a.as_str()), ("tradeId", "999999")])
                .await,
            "188",
        ),
        (
            "another account's",
            t.post("getTrade", &[("accountId", b.as_str()), ("tradeId", id.as_str())])
                .await,
            "188",
        ),
    ];
    for (label, r, code) in &cases {
        assert_eq!(r.code(), *code, "{label}: {:?}", r.json);
    }
});

both!(
    get_trade_status_answers_188_for_unknown_trades,
    |t: TestApp| async move {
        let o = offering(&t, "100").await;
        let (a, _) = investor(&t).await;
        let id = trade(&t, &a, &o, "3").await;
        let mut h = hook(&t, "getTradeStatus").await;
        let r = t.post("getTradeStatus", &[("tradeId", id.as_str())]).await;
        assert_eq!(r.code(), "101", "{:?}", r.json);
        let rec = &r.json["tradeDetails"][0];
        let expected = [
            "id",
            "developerAPIKey",
            "offeringId",
            "accountId",
            "partyId",
            "party_type",
            "escrowId",
            "orderId",
            "transactionType",
            "totalAmount",
            "totalShares",
            "orderStatus",
            "createdDate",
            "createdIpAddress",
            "errors",
            "documentKey",
            "esignStatus",
            "users",
            "archived_status",
            "field1",
            "field2",
            "field3",
            "RRApprovalStatus",
            "RRApprovalDate",
        ];
        assert_eq!(keys(rec), expected);
        assert_eq!(rec["orderStatus"], "CREATED");
        let got = h.next(5).await.expect("getTradeStatus webhook");
        assert_eq!(got.pairs(), fields_of(rec, &expected));
        assert_eq!(t.post("getTradeStatus", &[("tradeId", "999999")]).await.code(), "188");
        assert_eq!(t.post("getTradeStatus", &[("tradeId", "abc")]).await.code(), "106");
        assert_eq!(t.post("getTradeStatus", &[]).await.code(), "106");
    }
);

both!(trades_for_offering_lists_live_trades, |t: TestApp| async move {
    let o = offering(&t, "100").await;
    let (a, _) = investor(&t).await;
    let first = trade(&t, &a, &o, "2").await;
    let gone = trade(&t, &a, &o, "3").await;
    let r = t
        .post("deleteTrade", &[("accountId", a.as_str()), ("tradeId", gone.as_str())])
        .await;
    assert_eq!(r.code(), "101");
    let last = trade(&t, &a, &o, "4").await;
    let mut h = hook(&t, "getTradesForOffering").await;
    let r = t.post("getTradesForOffering", &[("offeringId", o.as_str())]).await;
    assert_eq!(r.code(), "101", "{:?}", r.json);
    let list = r.json["Offering purchased details"].as_array().unwrap().clone();
    assert_eq!(list.len(), 2, "the deleted trade is left out: {list:?}");
    assert_eq!(
        keys(&list[0]),
        [
            "accountId",
            "orderId",
            "orderStatus",
            "totalAmount",
            "totalShares",
            "transactionType",
            "unitPrice",
            "field1",
            "field2",
            "field3"
        ]
    );
    assert_eq!(
        (list[0]["orderId"].as_str(), list[1]["orderId"].as_str()),
        (Some(first.as_str()), Some(last.as_str()))
    );
    assert_eq!(
        (list[1]["totalAmount"].as_str(), list[1]["unitPrice"].as_str()),
        (Some("40.000000"), Some("10.000000"))
    );
    let got = h.next(5).await.expect("webhook");
    assert_eq!(
        got.pairs(),
        pairs(&[("offeringId", &o), ("tradeIds", &format!("{first},{last}"))])
    );
    assert_eq!(
        t.post("getTradesForOffering", &[("offeringId", "x")]).await.code(),
        "106"
    );
    assert_eq!(t.post("getTradesForOffering", &[]).await.code(), "106");
    assert_eq!(
        t.post("getTradesForOffering", &[("offeringId", "999999")]).await.code(),
        "138"
    );
    let empty = offering(&t, "5").await;
    let r = t.post("getTradesForOffering", &[("offeringId", empty.as_str())]).await;
    assert_eq!((r.code(), &r.json["Offering purchased details"]), ("101", &json!([])));
});

both!(get_all_trades_and_the_trades_list, |t: TestApp| async move {
    let o = offering(&t, "100").await;
    let o2 = offering(&t, "100").await;
    let (a, _) = investor(&t).await;
    let (b, _) = investor(&t).await;
    let t1 = trade(&t, &a, &o, "1").await;
    let t2 = trade(&t, &b, &o2, "2").await;
    let t3 = trade(&t, &a, &o2, "3").await;
    let r = t
        .post("deleteTrade", &[("accountId", a.as_str()), ("tradeId", t3.as_str())])
        .await;
    assert_eq!(r.code(), "101");

    let mut h = hook(&t, "getAllTrades").await;
    let r = t.post("getAllTrades", &[]).await;
    assert_eq!(r.code(), "101", "{:?}", r.json);
    let all = r.json["TradeFinancialDetails"].as_array().unwrap().clone();
    assert_eq!(all.len(), 2, "live trades only");
    assert_eq!(all[0]["id"], json!(t2), "newest first");
    assert_eq!(
        keys(&all[0]),
        [
            "id",
            "createdDate",
            "accountId",
            "issueName",
            "orderId",
            "accountName",
            "offeringId",
            "totalAmount",
            "transactionType",
            "approvalStatus",
            "kycStatus",
            "amlStatus",
            "orderStatus",
            "esignStatus",
            "developerAPIKey",
            "clientName",
            "clientId",
            "field1"
        ]
    );
    assert_eq!(
        (all[0]["issueName"].as_str(), all[0]["clientId"].as_str()),
        (Some("Acme Series A"), Some("XXXXXXXXXXXXXXX"))
    );
    let got = h.next(5).await.expect("webhook");
    assert_eq!(got.pairs(), pairs(&[("tradeIds", &format!("{t2},{t1}"))]));

    let r = t.get("/v3/trades").await;
    assert_eq!((r.status, r.code()), (200, "101"), "{:?}", r.json);
    assert_eq!(
        r.json["pagination"],
        json!({"totalRecords": 2, "startIndex": 0, "endIndex": 1})
    );
    assert_eq!(r.json["trades"][0]["tradeId"], json!(t2));
    assert_eq!(r.json["trades"][0]["offeringId"], json!(o2));
    assert!(r.json["trades"][0].get("archived").is_none());
    let r = t.get(&format!("/v3/trades?filter[]=offeringId:{o}")).await;
    assert_eq!(
        r.json["pagination"]["totalRecords"],
        json!(1),
        "observed array filter: {:?}",
        r.json
    );
    assert_eq!(r.json["trades"][0]["tradeId"], json!(t1));
    let r = t
        .get(&format!(
            "/v3/trades?filter[]=accountId:{a}&filter[]=offeringId:{o2}&deleted=true"
        ))
        .await;
    assert_eq!(r.json["trades"][0]["tradeId"], json!(t3), "{:?}", r.json);
    assert_eq!(
        r.json["trades"][0]["archived"], "1",
        "deleted=true marks deleted trades"
    );
    let r = t
        .get("/v3/trades?filter={\"totalShares\":{\"gte\":2}}&sort=totalShares:asc")
        .await;
    assert_eq!(r.json["trades"][0]["tradeId"], json!(t2), "{:?}", r.json);
    assert_eq!(r.json["pagination"]["totalRecords"], json!(1));
    let r = t.get("/v3/trades?deleted=true&limit=1&offset=2").await;
    assert_eq!(r.json["trades"][0]["tradeId"], json!(t1), "{:?}", r.json);
    let r = t.get("/v3/trades?filter={\"nosuch\":1}").await;
    assert_eq!((r.status, r.code()), (422, "1422"));
    let r = t.get("/v3/trades?offset=5").await;
    assert_eq!((r.status, r.code()), (422, "239"));
    let r = t.get("/v3/trades?filter={bad").await;
    assert_eq!((r.status, r.code()), (400, "1400"));
    let reader = t.new_client(json!({"scopes": ["account.read"]})).await;
    let r = t.get_as(&reader, "/v3/trades").await;
    assert_eq!((r.status, r.code()), (403, "1403"));
    let reader = t.new_client(json!({"scopes": ["trade.read.pii_low"]})).await;
    let r = t.get_as(&reader, "/v3/trades").await;
    assert_eq!(
        (r.status, r.code()),
        (422, "239"),
        "its own (empty) trades: {:?}",
        r.json
    );
});

both!(
    account_trade_history_is_newest_first_and_masked,
    |t: TestApp| async move {
        let o = offering(&t, "100").await;
        let (a, _) = investor(&t).await;
        let t1 = trade(&t, &a, &o, "1").await;
        let t2 = trade(&t, &a, &o, "2").await;
        let r = t
            .post("deleteTrade", &[("accountId", a.as_str()), ("tradeId", t1.as_str())])
            .await;
        assert_eq!(r.code(), "101");
        let mut h = hook(&t, "getAccountTradeHistory").await;
        let r = t.post("getAccountTradeHistory", &[("accountId", a.as_str())]).await;
        assert_eq!(r.code(), "101", "{:?}", r.json);
        let list = r.json["accountDetails"].as_array().unwrap().clone();
        assert_eq!(list.len(), 2, "one record per trade, deleted ones included");
        assert_eq!(
            (list[0]["in_id"].as_str(), list[1]["in_id"].as_str()),
            (Some(t2.as_str()), Some(t1.as_str()))
        );
        assert_eq!(list[1]["orderStatus"], "CANCELED");
        assert_eq!(
            keys(&list[0]),
            [
                "in_id",
                "id",
                "offeringId",
                "accountId",
                "partyId",
                "party_type",
                "escrowId",
                "orderId",
                "transactionType",
                "totalAmount",
                "totalShares",
                "orderStatus",
                "createdDate",
                "createdIpAddress",
                "errors",
                "documentKey",
                "esignStatus",
                "users",
                "archived_status",
                "field1",
                "field2",
                "field3",
                "clientId",
                "trade_developerAPIKey",
                "accountName",
                "accreditedStatus",
                "kycStatus",
                "amlStatus",
                "issueName"
            ]
        );
        assert_eq!(list[0]["clientId"], "XXXXXXXXXXXXXXX");
        assert_eq!(list[0]["trade_developerAPIKey"], "XXXXXXXXXXXXXXX");
        assert_eq!(
            (list[0]["accountName"].as_str(), list[0]["issueName"].as_str()),
            (Some("Ann Lee"), Some("Acme Series A"))
        );
        let got = h.next(5).await.expect("webhook");
        assert_eq!(
            got.pairs(),
            pairs(&[("accountId", &a), ("tradeIds", &format!("{t2},{t1}"))])
        );
        assert_eq!(t.post("getAccountTradeHistory", &[]).await.code(), "106");
        assert_eq!(
            t.post("getAccountTradeHistory", &[("accountId", "A9999999")])
                .await
                .code(),
            "148"
        );
        let lonely = create_account(&t).await;
        let r = t
            .post("getAccountTradeHistory", &[("accountId", lonely.as_str())])
            .await;
        assert_eq!((r.code(), &r.json["accountDetails"]), ("101", &json!([])));
    }
);

both!(payment_info_tells_how_and_where_to_pay, |t: TestApp| async move {
    let o = offering(&t, "100").await;
    let (a, _) = investor(&t).await;
    let id = trade(&t, &a, &o, "2").await;
    let path = format!("/operator/clients/{}/custodian-settings", t.client_id);
    let r = t
        .operator(
            Method::PUT,
            &path,
            json!({"name": "Custody Co", "wire": {"accountnumber": "987654321012", "routingnumber": "021000021"}}),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.json);
    let mut h = hook(&t, "getPaymentInfo").await;
    let r = t.post("getPaymentInfo", &[("tradeId", id.as_str())]).await;
    assert_eq!(r.code(), "101", "{:?}", r.json);
    let info = &r.json["paymentInfo"][0];
    let scalars = [
        "tradeId",
        "accountId",
        "offeringId",
        "transactionType",
        "unitPrice",
        "totalShares",
        "fees",
        "totalAmount",
        "orderStatus",
        "escrowAccountNumber",
        "achPending",
    ];
    assert_eq!(keys(info)[..11], scalars);
    assert_eq!(info["totalAmount"], "20.000000");
    assert_eq!(info["achPending"], "no");
    assert_eq!(info["custodianDetails"]["name"], "Custody Co");
    assert_eq!(info["custodianDetails"]["wire"]["accountnumber"], "987654321012");
    let got = h.next(5).await.expect("webhook");
    let mut sent = fields_of(info, &scalars);
    // The custodian's bank numbers, shown to the caller, are masked in the webhook.
    let mut custodian = info["custodianDetails"].clone();
    custodian["wire"]["accountnumber"] = json!("XXXXXXXX1012");
    custodian["wire"]["routingnumber"] = json!("XXXXX0021");
    sent.push(("custodianDetails".into(), custodian.to_string()));
    assert_eq!(got.pairs(), sent, "the fields, the nested one as JSON text");
    mark_ach_pending(&t, &id).await;
    let r = t
        .post("getPaymentInfo", &[("tradeId", id.as_str()), ("accountId", a.as_str())])
        .await;
    assert_eq!(r.json["paymentInfo"][0]["achPending"], "yes");
    let (b, _) = investor(&t).await;
    assert_eq!(
        t.post("getPaymentInfo", &[("tradeId", id.as_str()), ("accountId", b.as_str())])
            .await
            .code(),
        "188"
    );
    assert_eq!(
        t.post("getPaymentInfo", &[("tradeId", id.as_str()), ("accountId", "A9999999")])
            .await
            .code(),
        "148"
    );
    assert_eq!(t.post("getPaymentInfo", &[("tradeId", "999999")]).await.code(), "188");
    assert_eq!(t.post("getPaymentInfo", &[]).await.code(), "106");
});

// ---------------------------------------------------------------- editTrade, editTradeUnits

both!(edit_trade_changes_units_and_the_offering, |t: TestApp| async move {
    let o = offering(&t, "100").await;
    let (a, _) = investor(&t).await;
    let id = trade(&t, &a, &o, "10").await;
    let mut h = hook(&t, "editTrade").await;
    let edit = |shares: &'static str| {
        vec![
            ("accountId", a.clone()),
            ("offeringId", o.clone()),
            ("tradeId", id.clone()),
            ("shares", shares.to_owned()),
        ]
    };
    let send = |v: Vec<(&'static str, String)>| {
        let t = &t;
        async move {
            let v: Vec<(&str, &str)> = v.iter().map(|(k, v)| (*k, v.as_str())).collect();
            t.put("editTrade", &v).await
        }
    };
    let r = send(edit("25")).await;
    assert_eq!(r.code(), "101", "{:?}", r.json);
    assert_eq!(
        r.json["TradeFinancialDetails"],
        json!({"tradeId": id, "shares": "25", "sharePrice": 250, "totalShares": "100", "remainingShares": "75", "closeId": ""})
    );
    let got = h.next(5).await.expect("editTrade webhook");
    assert_eq!(
        got.pairs(),
        pairs(&[
            ("tradeId", &id),
            ("shares", "25"),
            ("sharePrice", "250.000000"),
            ("totalShares", "100"),
            ("remainingShares", "75")
        ]),
        "closeId omitted while empty"
    );
    let o_now = offering_state(&t, &o).await;
    assert_eq!(
        (o_now.remaining_shares, o_now.pending_amount, o_now.committed_amount),
        (75, dec("250"), dec("250"))
    );
    assert_eq!(get_trade(&t, &a, &id).await["totalAmount"], "250.000000");

    let mut with_close = edit("5");
    with_close.push(("closeId", "CL-1".to_owned()));
    let r = send(with_close).await;
    assert_eq!(r.json["TradeFinancialDetails"]["remainingShares"], "95");
    let got = h.next(5).await.expect("editTrade webhook");
    assert_eq!(got.pairs().last().unwrap(), &("closeId".to_owned(), "CL-1".to_owned()));

    // FUNDED trades may be edited too; the status stays.
    walk(&t, &a, &id, &["FUNDED"]).await;
    assert_eq!(send(edit("6")).await.code(), "101");
    h.next(5).await.expect("editTrade webhook of a FUNDED trade");
    assert_eq!(get_trade(&t, &a, &id).await["orderStatus"], "FUNDED");
    assert_eq!(offering_state(&t, &o).await.funded_amount, dec("60"));

    let before = snapshot(&t, &id).await;
    let (b, _) = investor(&t).await;
    let o2 = offering(&t, "100").await;
    let mut cases: Vec<OwnedCase> = Vec::new();
    for name in ["accountId", "offeringId", "tradeId", "shares"] {
        let v = edit("7").into_iter().filter(|(k, _)| *k != name).collect();
        cases.push(("missing", v, "106"));
    }
    let swap = |name: &'static str, value: &str| {
        let mut v = edit("7");
        v.retain(|(k, _)| *k != name);
        v.push((name, value.to_owned()));
        v
    };
    cases.push(("shares not a number", swap("shares", "x"), "106"));
    cases.push(("unknown account", swap("accountId", "A9999999"), "148"));
    cases.push(("unknown offering", swap("offeringId", "999999"), "138"));
    cases.push(("unknown trade", swap("tradeId", "999999"), "188"));
    cases.push(("another account", swap("accountId", &b), "188"));
    cases.push(("another offering", swap("offeringId", &o2), "188"));
    cases.push(("zero shares", edit("0"), "106"));
    cases.push(("above remaining", edit("101"), "106"));
    for (label, v, code) in cases {
        let r = send(v).await;
        assert_eq!(r.code(), code, "{label}: {:?}", r.json);
        assert_eq!(snapshot(&t, &id).await, before, "{label}: nothing written");
    }
    walk(&t, &a, &id, &["SETTLED"]).await;
    let before = snapshot(&t, &id).await;
    let r = send(edit("7")).await;
    assert_eq!(r.code(), "190", "SETTLED: {:?}", r.json);
    assert_eq!(snapshot(&t, &id).await, before);
    assert!(h.next(1).await.is_none(), "no webhook for rejections");

    // Adding units needs an offering that accepts investments; removing them does not.
    let o3 = offering(&t, "100").await;
    let id3 = trade(&t, &a, &o3, "10").await;
    walk(&t, &a, &id3, &["FUNDED"]).await;
    assert_eq!(
        t.post("closeOffering", &[("offeringId", o3.as_str())]).await.code(),
        "101"
    );
    let grow = [
        ("accountId", a.as_str()),
        ("offeringId", o3.as_str()),
        ("tradeId", id3.as_str()),
        ("shares", "11"),
    ];
    assert_eq!(t.put("editTrade", &grow).await.code(), "106");
    let shrink = [
        ("accountId", a.as_str()),
        ("offeringId", o3.as_str()),
        ("tradeId", id3.as_str()),
        ("shares", "9"),
    ];
    assert_eq!(t.put("editTrade", &shrink).await.code(), "101");
    assert_eq!(offering_state(&t, &o3).await.remaining_shares, 91);
});

both!(
    edit_trade_units_changes_price_and_units_in_created_only,
    |t: TestApp| async move {
        let o = offering(&t, "100").await;
        let (a, _) = investor(&t).await;
        let id = trade(&t, &a, &o, "10").await;
        let mut h = hook(&t, "editTradeUnits").await;
        let params = |price: &'static str, units: &'static str| {
            vec![
                ("accountId", a.clone()),
                ("tradeId", id.clone()),
                ("unitPrice", price.to_owned()),
                ("totalShares", units.to_owned()),
            ]
        };
        let send = |v: Vec<(&'static str, String)>| {
            let t = &t;
            async move {
                let v: Vec<(&str, &str)> = v.iter().map(|(k, v)| (*k, v.as_str())).collect();
                t.post("editTradeUnits", &v).await
            }
        };
        let r = send(params("12.5", "8")).await;
        assert_eq!(r.code(), "101", "{:?}", r.json);
        assert_eq!(
            r.json["TradeFinancialDetails"],
            json!({"tradeId": id, "sharePrice": 100, "unitPrice": "12.500000", "totalShares": "8"})
        );
        let got = h.next(5).await.expect("webhook");
        assert_eq!(
            got.pairs(),
            pairs(&[
                ("tradeId", &id),
                ("sharePrice", "100.000000"),
                ("unitPrice", "12.500000"),
                ("totalShares", "8")
            ])
        );
        let o_now = offering_state(&t, &o).await;
        assert_eq!((o_now.remaining_shares, o_now.pending_amount), (92, dec("100")));
        let tr = get_trade(&t, &a, &id).await;
        assert_eq!(
            (tr["totalShares"].as_str(), tr["totalAmount"].as_str()),
            (Some("8"), Some("100.000000"))
        );

        let before = snapshot(&t, &id).await;
        let (b, _) = investor(&t).await;
        let mut cases: Vec<OwnedCase> = Vec::new();
        for name in ["accountId", "tradeId", "unitPrice", "totalShares"] {
            cases.push((
                "missing",
                params("1", "1").into_iter().filter(|(k, _)| *k != name).collect(),
                "106",
            ));
        }
        cases.push(("price zero", params("0", "1"), "106"));
        cases.push(("price malformed", params("1e3", "1"), "106"));
        cases.push(("units zero", params("1", "0"), "106"));
        cases.push(("above remaining", params("1", "101"), "106"));
        let mut other = params("1", "1");
        other[0].1 = "A9999999".into();
        cases.push(("unknown account", other, "148"));
        let mut other = params("1", "1");
        other[0].1 = b.clone();
        cases.push(("another account", other, "188"));
        let mut other = params("1", "1");
        other[1].1 = "999999".into();
        cases.push(("unknown trade", other, "188"));
        for (label, v, code) in cases {
            let r = send(v).await;
            assert_eq!(r.code(), code, "{label}: {:?}", r.json);
            assert_eq!(snapshot(&t, &id).await, before, "{label}: nothing written");
        }
        walk(&t, &a, &id, &["FUNDED"]).await;
        let before = snapshot(&t, &id).await;
        assert_eq!(send(params("1", "1")).await.code(), "190", "FUNDED");
        assert_eq!(snapshot(&t, &id).await, before);
    }
);

// ---------------------------------------------------------------- deleteTrade, cancelInvestment

both!(delete_trade_cancels_and_returns_the_units, |t: TestApp| async move {
    let o = offering(&t, "100").await;
    let (a, p) = investor(&t).await;
    let id = trade(&t, &a, &o, "10").await;
    let mut h = hook(&t, "deleteTrade").await;
    let mut status_hook = hook(&t, "updateTradeStatus").await;
    let r = t
        .post(
            "deleteTrade",
            &[
                ("accountId", a.as_str()),
                ("tradeId", id.as_str()),
                ("errDesc", "duplicate"),
            ],
        )
        .await;
    assert_eq!(r.code(), "101", "{:?}", r.json);
    assert_eq!(
        r.json["tradeDetails"],
        json!([{"partyId": p, "offeringId": o, "orderStatus": "CANCELED"}])
    );
    let got = h.next(5).await.expect("deleteTrade webhook");
    assert_eq!(got.pairs(), pairs(&[("tradeId", &id)]));
    assert!(
        status_hook.next(1).await.is_none(),
        "deleteTrade fires only its own webhook"
    );
    let o_now = offering_state(&t, &o).await;
    assert_eq!(
        (o_now.remaining_shares, o_now.open_trades, o_now.committed_amount),
        (100, 0, Decimal::ZERO)
    );
    let tr = get_trade(&t, &a, &id).await;
    assert_eq!(
        (tr["orderStatus"].as_str(), tr["errors"].as_str()),
        (Some("CANCELED"), Some("duplicate"))
    );
    let r = t.get("/v3/trades").await;
    assert_eq!((r.status, r.code()), (422, "239"), "virtually deleted: {:?}", r.json);
    let r = t
        .post("getOfferingPurchaseHistory", &[("offeringId", o.as_str())])
        .await;
    assert_eq!(
        r.json["Offering purchased details"]["offering_purchase_history"],
        json!([])
    );

    let before = snapshot(&t, &id).await;
    let r = t
        .post("deleteTrade", &[("accountId", a.as_str()), ("tradeId", id.as_str())])
        .await;
    assert_eq!(r.code(), "190", "already deleted: {:?}", r.json);
    assert_eq!(snapshot(&t, &id).await, before);

    let funded = trade(&t, &a, &o, "5").await;
    walk(&t, &a, &funded, &["FUNDED"]).await;
    let before = snapshot(&t, &funded).await;
    assert_eq!(
        t.post(
            "deleteTrade",
            &[("accountId", a.as_str()), ("tradeId", funded.as_str())]
        )
        .await
        .code(),
        "190"
    );
    assert_eq!(snapshot(&t, &funded).await, before);

    let pending = trade(&t, &a, &o, "5").await;
    mark_ach_pending(&t, &pending).await;
    let before = snapshot(&t, &pending).await;
    let r = t
        .post(
            "deleteTrade",
            &[("accountId", a.as_str()), ("tradeId", pending.as_str())],
        )
        .await;
    assert_eq!(r.code(), "150", "a pending ACH fund move: {:?}", r.json);
    assert_eq!(snapshot(&t, &pending).await, before, "nothing written");
    t.store()
        .write(vec![model::pending_ach_clear(&t.client_id, &pending)])
        .await
        .unwrap();
    let r = t
        .post(
            "deleteTrade",
            &[("accountId", a.as_str()), ("tradeId", pending.as_str())],
        )
        .await;
    assert_eq!(r.code(), "101", "once the fund move left Pending");
    assert_eq!(
        h.next(5).await.expect("deleteTrade webhook").pairs(),
        pairs(&[("tradeId", &pending)])
    );

    let (b, _) = investor(&t).await;
    let live = trade(&t, &a, &o, "1").await;
    let cases = [
        (
            "no accountId",
            t.post("deleteTrade", &[("tradeId", live.as_str())]).await,
            "106",
        ),
        (
            "no tradeId",
            t.post("deleteTrade", &[("accountId", a.as_str())]).await,
            "106",
        ),
        (
            "unknown account",
            t.post("deleteTrade", &[("accountId", "A9999999"), ("tradeId", live.as_str())])
                .await,
            "148",
        ),
        (
            "unknown trade",
            t.post("deleteTrade", &[("accountId", a.as_str()), ("tradeId", "999999")])
                .await,
            "188",
        ),
        (
            "another account",
            t.post("deleteTrade", &[("accountId", b.as_str()), ("tradeId", live.as_str())])
                .await,
            "188",
        ),
    ];
    for (label, r, code) in &cases {
        assert_eq!(r.code(), *code, "{label}: {:?}", r.json);
    }
    assert_eq!(get_trade(&t, &a, &live).await["orderStatus"], "CREATED");
    assert!(h.next(1).await.is_none(), "one webhook per successful delete");
});

both!(cancel_investment_fires_its_inner_webhooks, |t: TestApp| async move {
    let o = offering(&t, "100").await;
    let (a, _) = investor(&t).await;
    let id = trade(&t, &a, &o, "10").await;
    walk(&t, &a, &id, &["FUNDED"]).await;
    let mut cancel_hook = hook(&t, "cancelInvestment").await;
    let mut status_hook = hook(&t, "updateTradeStatus").await;
    let r = t
        .post(
            "cancelInvestment",
            &[
                ("tradeId", id.as_str()),
                ("requestedBy", "ops"),
                ("reason", "offering cancelled"),
                ("notes", "refund"),
            ],
        )
        .await;
    assert_eq!(r.code(), "101", "{:?}", r.json);
    let rec = r.json["Canceled investment details"][0].clone();
    let cancelled_keys = [
        "id",
        "offeringId",
        "accountId",
        "partyId",
        "party_type",
        "escrowId",
        "orderId",
        "transactionType",
        "totalAmount",
        "totalShares",
        "orderStatus",
        "createdDate",
        "createdIpAddress",
        "errors",
        "documentKey",
        "esignStatus",
        "users",
        "archived_status",
        "field1",
        "field2",
        "field3",
    ];
    assert_eq!(keys(&rec), cancelled_keys);
    assert_eq!(rec["orderStatus"], "CANCELED");
    let got = cancel_hook.next(5).await.expect("cancelInvestment webhook");
    assert_eq!(
        got.pairs(),
        pairs(&[
            ("accountId", &a),
            ("OrderId", &id),
            ("Transaction Type", "ACH"),
            ("OrderStatus", "CANCELED")
        ])
    );
    assert!(got.body.contains("Transaction+Type=ACH"), "{}", got.body);
    let inner = status_hook.next(5).await.expect("the inner updateTradeStatus webhook");
    let now = get_trade(&t, &a, &id).await;
    let mut want = vec![("tradeId".to_owned(), id.clone())];
    want.extend(fields_of(&now, &STATUS_EVENT[1..]));
    assert_eq!(inner.pairs(), want, "part 1's updateTradeStatus payload");
    let o_now = offering_state(&t, &o).await;
    assert_eq!(
        (o_now.remaining_shares, o_now.funded_amount, o_now.committed_amount),
        (100, Decimal::ZERO, Decimal::ZERO)
    );
    let s = stored(&t, &id).await;
    let c = s.cancellation.expect("recorded");
    assert_eq!(
        (c.requested_by.as_str(), c.reason.as_str(), c.notes.as_str()),
        ("ops", "offering cancelled", "refund")
    );
    assert!(!s.deleted, "a cancelled investment stays listed");

    let before = snapshot(&t, &id).await;
    let again = [("tradeId", id.as_str()), ("requestedBy", "ops"), ("reason", "again")];
    assert_eq!(
        t.post("cancelInvestment", &again).await.code(),
        "190",
        "already CANCELED"
    );
    assert_eq!(snapshot(&t, &id).await, before);
    let settled = trade(&t, &a, &o, "1").await;
    walk(&t, &a, &settled, &["FUNDED", "SETTLED"]).await;
    let before = snapshot(&t, &settled).await;
    let r = t
        .post(
            "cancelInvestment",
            &[("tradeId", settled.as_str()), ("requestedBy", "ops"), ("reason", "x")],
        )
        .await;
    assert_eq!(r.code(), "190");
    assert_eq!(snapshot(&t, &settled).await, before);
    let pending = trade(&t, &a, &o, "1").await;
    mark_ach_pending(&t, &pending).await;
    let before = snapshot(&t, &pending).await;
    let r = t
        .post(
            "cancelInvestment",
            &[("tradeId", pending.as_str()), ("requestedBy", "ops"), ("reason", "x")],
        )
        .await;
    assert_eq!(r.code(), "150");
    assert_eq!(snapshot(&t, &pending).await, before);
    for name in ["tradeId", "requestedBy", "reason"] {
        let v = without(
            &[("tradeId", "100000"), ("requestedBy", "ops"), ("reason", "x")],
            &[name],
        );
        assert_eq!(t.post("cancelInvestment", &v).await.code(), "106", "{name}");
    }
    let r = t
        .post(
            "cancelInvestment",
            &[("tradeId", "999999"), ("requestedBy", "ops"), ("reason", "x")],
        )
        .await;
    assert_eq!(r.code(), "188");
    assert!(cancel_hook.next(1).await.is_none());
});

both!(fund_return_request_is_the_deprecated_cancel, |t: TestApp| async move {
    let o = offering(&t, "100").await;
    let (a, _) = investor(&t).await;
    let id = trade(&t, &a, &o, "4").await;
    let mut h = hook(&t, "fundReturnRequest").await;
    let mut status_hook = hook(&t, "updateTradeStatus").await;
    let r = t
        .post(
            "fundReturnRequest",
            &[("tradeId", id.as_str()), ("requestedBy", "ops"), ("reason", "x")],
        )
        .await;
    assert_eq!(r.code(), "101", "{:?}", r.json);
    assert_eq!(r.json["tradeDetails"][0]["orderStatus"], "CANCELED");
    assert_eq!(r.json["tradeDetails"][0]["id"], json!(id));
    let got = h.next(5).await.expect("fundReturnRequest webhook");
    assert_eq!(
        got.pairs(),
        pairs(&[
            ("accountId", &a),
            ("OrderId", &id),
            ("Transaction Type", "ACH"),
            ("OrderStatus", "CANCELED")
        ])
    );
    assert!(status_hook.next(5).await.is_some(), "inner updateTradeStatus");
    assert_eq!(offering_state(&t, &o).await.remaining_shares, 100);
    let r = t
        .post(
            "fundReturnRequest",
            &[("tradeId", id.as_str()), ("requestedBy", "ops"), ("reason", "x")],
        )
        .await;
    assert_eq!(r.code(), "190");
    assert_eq!(
        t.post("fundReturnRequest", &[("tradeId", id.as_str())]).await.code(),
        "106"
    );
    let r = t
        .post(
            "fundReturnRequest",
            &[("tradeId", "999999"), ("requestedBy", "ops"), ("reason", "x")],
        )
        .await;
    assert_eq!(r.code(), "188");
});

// ---------------------------------------------------------------- updateTradeStatus and the state table

const STATUS_EVENT: &[&str] = &[
    "tradeId",
    "id",
    "offeringId",
    "accountId",
    "partyId",
    "party_type",
    "escrowId",
    "transactionType",
    "totalAmount",
    "totalShares",
    "orderStatus",
    "createdDate",
    "createdIpAddress",
    "errors",
    "documentKey",
    "esignStatus",
    "users",
    "field1",
    "field2",
    "field3",
    "RRApprovalStatus",
    "RRName",
    "RRApprovalDate",
    "PrincipalApprovalStatus",
    "PrincipalName",
    "PrincipalDate",
    "archived_status",
    "eligibleToClose",
];

both!(
    update_trade_status_moves_and_fires_once_per_change,
    |t: TestApp| async move {
        let o = offering(&t, "100").await;
        let (a, _) = investor(&t).await;
        let id = trade(&t, &a, &o, "10").await;
        let mut h = hook(&t, "updateTradeStatus").await;
        let r = t
            .post(
                "updateTradeStatus",
                &[
                    ("accountId", a.as_str()),
                    ("tradeId", id.as_str()),
                    ("orderStatus", "funded"),
                    ("field2", "wire 7"),
                ],
            )
            .await;
        assert_eq!(r.code(), "101", "the orderStatus alias: {:?}", r.json);
        let rec = r.json["tradeDetails"][0].clone();
        assert_eq!(keys(&rec), TRADE_RECORD);
        assert_eq!(
            (rec["orderStatus"].as_str(), rec["field2"].as_str()),
            (Some("funded"), Some("wire 7")),
            "stored as sent"
        );
        let got = h.next(5).await.expect("updateTradeStatus webhook");
        let mut want = vec![("tradeId".to_owned(), id.clone())];
        want.extend(fields_of(&rec, &STATUS_EVENT[1..]));
        assert_eq!(got.pairs(), want, "closeId omitted while empty");
        let o_now = offering_state(&t, &o).await;
        assert_eq!(
            (o_now.open_trades, o_now.pending_amount, o_now.funded_amount),
            (0, Decimal::ZERO, dec("100"))
        );

        let r = set_status(&t, &a, &id, "FUNDED").await;
        assert_eq!(r.code(), "101", "the same status again: {:?}", r.json);
        assert!(h.next(1).await.is_none(), "no webhook when the status is unchanged");

        let r = t
            .post(
                "updateTradeStatus",
                &[
                    ("accountId", a.as_str()),
                    ("tradeId", id.as_str()),
                    ("tradeStatus", "UNWIND_PENDING"),
                    ("closeId", "C1"),
                ],
            )
            .await;
        assert_eq!(r.json["tradeDetails"][0]["orderStatus"], "UNWIND_PENDING");
        let got = h.next(5).await.expect("webhook");
        assert_eq!(
            got.pairs().last().unwrap(),
            &("eligibleToClose".to_owned(), "no".to_owned())
        );
        assert!(got.pairs().contains(&("closeId".to_owned(), "C1".to_owned())));
        assert_eq!(
            offering_state(&t, &o).await.open_trades,
            1,
            "unwinding keeps the offering open"
        );
        let r = set_status(&t, &a, &id, "UNWIND PENDING").await;
        assert_eq!(
            (r.code(), r.json["tradeDetails"][0]["orderStatus"].as_str()),
            ("101", Some("UNWIND PENDING")),
            "same status, other spelling: stored as sent"
        );
        assert!(h.next(1).await.is_none());
        walk(&t, &a, &id, &["unwind settled"]).await;
        let got = h.next(5).await.expect("webhook");
        assert!(got
            .pairs()
            .contains(&("orderStatus".to_owned(), "unwind settled".to_owned())));
        let o_now = offering_state(&t, &o).await;
        assert_eq!(
            (o_now.remaining_shares, o_now.open_trades, o_now.committed_amount),
            (100, 0, Decimal::ZERO)
        );

        let before = snapshot(&t, &id).await;
        let (b, _) = investor(&t).await;
        let cases = [
            ("unknown status", set_status(&t, &a, &id, "DONE").await, "106"),
            (
                "no status",
                t.post(
                    "updateTradeStatus",
                    &[("accountId", a.as_str()), ("tradeId", id.as_str())],
                )
                .await,
                "106",
            ),
            (
                "no account",
                t.post(
                    "updateTradeStatus",
                    &[("tradeId", id.as_str()), ("tradeStatus", "FUNDED")],
                )
                .await,
                "106",
            ),
            (
                "bad date",
                t.post(
                    "updateTradeStatus",
                    &[
                        ("accountId", a.as_str()),
                        ("tradeId", id.as_str()),
                        ("tradeStatus", "FUNDED"),
                        ("RRApprovalDate", "soon"),
                    ],
                )
                .await,
                "106",
            ),
            (
                "unknown account",
                set_status(&t, "A9999999", &id, "FUNDED").await,
                "148",
            ),
            ("unknown trade", set_status(&t, &a, "999999", "FUNDED").await, "188"),
            ("another account", set_status(&t, &b, &id, "FUNDED").await, "188"),
            (
                "out of a terminal status",
                set_status(&t, &a, &id, "FUNDED").await,
                "190",
            ),
        ];
        for (label, r, code) in &cases {
            assert_eq!(r.code(), *code, "{label}: {:?}", r.json);
        }
        assert_eq!(snapshot(&t, &id).await, before, "rejections write nothing");
        assert!(h.next(1).await.is_none());

        let pending = trade(&t, &a, &o, "1").await;
        mark_ach_pending(&t, &pending).await;
        let before = snapshot(&t, &pending).await;
        assert_eq!(set_status(&t, &a, &pending, "Rejected").await.code(), "150");
        assert_eq!(snapshot(&t, &pending).await, before);
        assert_eq!(
            set_status(&t, &a, &pending, "FUNDED").await.code(),
            "101",
            "funding is not blocked"
        );
    }
);

/// The path from `CREATED` to each status along the table.
fn path_to(s: TradeStatus) -> &'static [&'static str] {
    match s {
        TradeStatus::Created => &[],
        TradeStatus::Funded => &["FUNDED"],
        TradeStatus::Settled => &["FUNDED", "SETTLED"],
        TradeStatus::UnwindPending => &["FUNDED", "UNWIND PENDING"],
        TradeStatus::UnwindSettled => &["FUNDED", "UNWIND PENDING", "UNWIND SETTLED"],
        TradeStatus::Canceled => &["CANCELED"],
        TradeStatus::Rejected => &["Rejected"],
    }
}

both!(every_status_move_follows_the_table, |t: TestApp| async move {
    let o = offering(&t, "1000").await;
    let (a, _) = investor(&t).await;
    for from in TradeStatus::ALL {
        for to in TradeStatus::ALL {
            if from == to {
                continue;
            }
            let id = trade(&t, &a, &o, "3").await;
            walk(&t, &a, &id, path_to(from)).await;
            let before = snapshot(&t, &id).await;
            let r = set_status(&t, &a, &id, to.name()).await;
            if from.can_move_to(to) {
                assert_eq!(r.code(), "101", "{from:?} -> {to:?}: {:?}", r.json);
                assert_eq!(stored(&t, &id).await.status(), to);
            } else {
                assert_eq!(r.code(), "190", "{from:?} -> {to:?}: {:?}", r.json);
                assert_eq!(snapshot(&t, &id).await, before, "{from:?} -> {to:?} changed the store");
            }
        }
    }
    // Every trade is 3 units; the offering holds exactly those of trades holding shares.
    let trades = model::of_offering(t.store(), &t.client_id, &o).await.unwrap();
    let held: i64 = trades
        .iter()
        .map(|tr| {
            if tr.holding().status.holds_shares() {
                tr.units
            } else {
                0
            }
        })
        .sum();
    let open = trades.iter().filter(|tr| tr.holding().status.is_open()).count() as i64;
    let funded: Decimal = trades
        .iter()
        .filter(|tr| tr.holding().status.is_funded())
        .map(|tr| tr.total_amount)
        .sum();
    let o_now = offering_state(&t, &o).await;
    assert_eq!((o_now.remaining_shares, o_now.open_trades), (1000 - held, open));
    assert_eq!(o_now.funded_amount, funded);
    assert_eq!(o_now.committed_amount, Decimal::from(held * 10));
});

// ---------------------------------------------------------------- updateTrade and the other edits

both!(update_trade_sets_approvals_and_fields, |t: TestApp| async move {
    let o = offering(&t, "100").await;
    let (a, _) = investor(&t).await;
    let id = trade(&t, &a, &o, "2").await;
    let mut h = hook(&t, "updateTrade").await;
    let r = t
        .post(
            "updateTrade",
            &[
                ("accountId", a.as_str()),
                ("tradeId", id.as_str()),
                ("RRApprovalStatus", "Approved"),
                ("RRName", "Rita"),
                ("PrincipalDate", "03-04-2026"),
                ("field1", "x"),
            ],
        )
        .await;
    assert_eq!(r.code(), "101", "{:?}", r.json);
    let rec = r.json["tradeDetails"][0].clone();
    assert_eq!(keys(&rec), TRADE_RECORD);
    assert_eq!(
        (
            rec["RRApprovalStatus"].as_str(),
            rec["RRName"].as_str(),
            rec["field1"].as_str()
        ),
        (Some("Approved"), Some("Rita"), Some("x"))
    );
    assert_eq!(rec["orderStatus"], "CREATED", "status untouched");
    let expected = [
        "tradeId",
        "accountId",
        "offeringId",
        "orderStatus",
        "RRApprovalStatus",
        "RRName",
        "RRApprovalDate",
        "PrincipalApprovalStatus",
        "PrincipalName",
        "PrincipalDate",
        "field1",
        "field2",
        "field3",
    ];
    let mut want = fields_of(&rec, &expected[1..]);
    want.insert(0, ("tradeId".to_owned(), id.clone()));
    let got = h.next(5).await.expect("updateTrade webhook");
    assert_eq!(got.pairs(), want, "closeId omitted while empty");
    let r = t
        .post(
            "updateTrade",
            &[("accountId", a.as_str()), ("tradeId", id.as_str()), ("closeId", "CL")],
        )
        .await;
    assert_eq!(r.json["tradeDetails"][0]["closeId"], "CL");
    let got = h.next(5).await.expect("webhook");
    assert_eq!(got.pairs().last().unwrap(), &("closeId".to_owned(), "CL".to_owned()));

    let before = snapshot(&t, &id).await;
    let (b, _) = investor(&t).await;
    let cases = [
        (
            "no tradeId",
            t.post("updateTrade", &[("accountId", a.as_str())]).await,
            "106",
        ),
        (
            "no accountId",
            t.post("updateTrade", &[("tradeId", id.as_str())]).await,
            "106",
        ),
        (
            "bad date",
            t.post(
                "updateTrade",
                &[
                    ("accountId", a.as_str()),
                    ("tradeId", id.as_str()),
                    ("RRApprovalDate", "13-45-2026"),
                ],
            )
            .await,
            "106",
        ),
        (
            "unknown account",
            t.post("updateTrade", &[("accountId", "A9999999"), ("tradeId", id.as_str())])
                .await,
            "148",
        ),
        (
            "unknown trade",
            t.post("updateTrade", &[("accountId", a.as_str()), ("tradeId", "999999")])
                .await,
            "188",
        ),
        (
            "another account",
            t.post("updateTrade", &[("accountId", b.as_str()), ("tradeId", id.as_str())])
                .await,
            "188",
        ),
    ];
    for (label, r, code) in &cases {
        assert_eq!(r.code(), *code, "{label}: {:?}", r.json);
    }
    assert_eq!(snapshot(&t, &id).await, before);
    t.post("deleteTrade", &[("accountId", a.as_str()), ("tradeId", id.as_str())])
        .await;
    let before = snapshot(&t, &id).await;
    let r = t
        .post(
            "updateTrade",
            &[("accountId", a.as_str()), ("tradeId", id.as_str()), ("field1", "y")],
        )
        .await;
    assert_eq!(r.code(), "190", "a deleted trade");
    assert_eq!(snapshot(&t, &id).await, before);
});

both!(
    update_trade_transaction_type_only_before_funding,
    |t: TestApp| async move {
        let o = offering(&t, "100").await;
        let (a, _) = investor(&t).await;
        let id = trade(&t, &a, &o, "2").await;
        let mut h = hook(&t, "updateTradeTransactionType").await;
        let r = t
            .post(
                "updateTradeTransactionType",
                &[("tradeId", id.as_str()), ("transactionType", "wire transfer")],
            )
            .await;
        assert_eq!(r.code(), "101", "{:?}", r.json);
        let rec = &r.json["TradeDetails"][0];
        assert_eq!(
            keys(rec),
            [
                "orderId",
                "id",
                "transactionType",
                "developerAPIKey",
                "offeringId",
                "accountId",
                "partyId",
                "party_type",
                "totalAmount",
                "totalShares",
                "orderStatus"
            ]
        );
        assert_eq!(rec["transactionType"], "WIRETRANSFER");
        let got = h.next(5).await.expect("webhook");
        assert_eq!(
            got.pairs(),
            pairs(&[("tradeId", &id), ("transactionType", "WIRETRANSFER")])
        );
        assert_eq!(get_trade(&t, &a, &id).await["transactionType"], "WIRETRANSFER");

        assert_eq!(
            t.post("updateTradeTransactionType", &[("tradeId", id.as_str())])
                .await
                .code(),
            "106"
        );
        assert_eq!(
            t.post("updateTradeTransactionType", &[("transactionType", "ACH")])
                .await
                .code(),
            "106"
        );
        let r = t
            .post(
                "updateTradeTransactionType",
                &[("tradeId", "999999"), ("transactionType", "ACH")],
            )
            .await;
        assert_eq!(r.code(), "188");
        mark_ach_pending(&t, &id).await;
        let before = snapshot(&t, &id).await;
        let r = t
            .post(
                "updateTradeTransactionType",
                &[("tradeId", id.as_str()), ("transactionType", "ACH")],
            )
            .await;
        assert_eq!(r.code(), "150");
        assert_eq!(snapshot(&t, &id).await, before);
        let funded = trade(&t, &a, &o, "2").await;
        walk(&t, &a, &funded, &["FUNDED"]).await;
        let before = snapshot(&t, &funded).await;
        let r = t
            .post(
                "updateTradeTransactionType",
                &[("tradeId", funded.as_str()), ("transactionType", "ACH")],
            )
            .await;
        assert_eq!(r.code(), "190");
        assert_eq!(snapshot(&t, &funded).await, before);
        assert!(h.next(1).await.is_none());
    }
);

both!(archive_and_eligible_to_close_flags, |t: TestApp| async move {
    let o = offering(&t, "100").await;
    let (a, p) = investor(&t).await;
    let id = trade(&t, &a, &o, "2").await;
    let mut h = hook(&t, "updateTradeArchivestatus").await;
    let r = t
        .post(
            "updateTradeArchivestatus",
            &[("tradeId", id.as_str()), ("archiveStatus", "1")],
        )
        .await;
    assert_eq!(r.code(), "101", "{:?}", r.json);
    let want = json!([{"tradeId": id, "partyId": p, "offeringId": o, "orderStatus": "CREATED", "archiveStatus": "1"}]);
    assert_eq!(r.json["tradeDetails"], want);
    let got = h.next(5).await.expect("webhook");
    assert_eq!(
        got.pairs(),
        pairs(&[
            ("tradeId", &id),
            ("partyId", &p),
            ("offeringId", &o),
            ("orderStatus", "CREATED"),
            ("archiveStatus", "1")
        ])
    );
    assert_eq!(get_trade(&t, &a, &id).await["archived_status"], "1");
    assert_eq!(
        t.post(
            "updateTradeArchivestatus",
            &[("tradeId", id.as_str()), ("archiveStatus", "0")]
        )
        .await
        .code(),
        "101"
    );
    assert_eq!(get_trade(&t, &a, &id).await["archived_status"], "0");
    let before = snapshot(&t, &id).await;
    assert_eq!(
        t.post(
            "updateTradeArchivestatus",
            &[("tradeId", id.as_str()), ("archiveStatus", "2")]
        )
        .await
        .code(),
        "106"
    );
    assert_eq!(
        t.post("updateTradeArchivestatus", &[("tradeId", id.as_str())])
            .await
            .code(),
        "106"
    );
    assert_eq!(
        t.post(
            "updateTradeArchivestatus",
            &[("tradeId", "999999"), ("archiveStatus", "1")]
        )
        .await
        .code(),
        "188"
    );
    assert_eq!(snapshot(&t, &id).await, before);

    let mut h = hook(&t, "updateEligibleToCloseStatus").await;
    let r = t
        .post(
            "updateEligibleToCloseStatus",
            &[("tradeId", id.as_str()), ("eligibleToClose", "YES")],
        )
        .await;
    assert_eq!(r.code(), "101", "{:?}", r.json);
    let want =
        json!([{"tradeId": id, "accountId": a, "offeringId": o, "orderStatus": "CREATED", "eligibleToClose": "yes"}]);
    assert_eq!(r.json["tradeDetails"], want);
    let got = h.next(5).await.expect("webhook");
    assert_eq!(
        got.pairs(),
        pairs(&[
            ("tradeId", &id),
            ("accountId", &a),
            ("offeringId", &o),
            ("orderStatus", "CREATED"),
            ("eligibleToClose", "yes")
        ])
    );
    assert_eq!(get_trade(&t, &a, &id).await["eligibleToClose"], "yes");
    let before = snapshot(&t, &id).await;
    assert_eq!(
        t.post(
            "updateEligibleToCloseStatus",
            &[("tradeId", id.as_str()), ("eligibleToClose", "maybe")]
        )
        .await
        .code(),
        "106"
    );
    assert_eq!(
        t.post(
            "updateEligibleToCloseStatus",
            &[("tradeId", "999999"), ("eligibleToClose", "no")]
        )
        .await
        .code(),
        "188"
    );
    assert_eq!(snapshot(&t, &id).await, before);
    let gone = trade(&t, &a, &o, "1").await;
    t.post("deleteTrade", &[("accountId", a.as_str()), ("tradeId", gone.as_str())])
        .await;
    let before = snapshot(&t, &gone).await;
    assert_eq!(
        t.post(
            "updateEligibleToCloseStatus",
            &[("tradeId", gone.as_str()), ("eligibleToClose", "yes")]
        )
        .await
        .code(),
        "190"
    );
    assert_eq!(snapshot(&t, &gone).await, before);
});

// ---------------------------------------------------------------- notes

both!(trade_notes_add_read_update_delete, |t: TestApp| async move {
    let o = offering(&t, "100").await;
    let (a, _) = investor(&t).await;
    let id = trade(&t, &a, &o, "2").await;
    let mut add_hook = hook(&t, "addTradeNote").await;
    let r = t
        .post(
            "addTradeNote",
            &[
                ("tradeId", id.as_str()),
                ("authorName", "Ops"),
                ("notes", "called the investor"),
            ],
        )
        .await;
    assert_eq!(r.code(), "101", "{:?}", r.json);
    assert_eq!(r.json["notesDetails"][0], json!(true));
    let note = r.inserted("notesDetails").clone();
    let note_keys = ["noteId", "tradeId", "authorname", "note", "createdDate", "updatedDate"];
    assert_eq!(keys(&note), note_keys);
    let note_id = note["noteId"].as_str().unwrap().to_owned();
    assert_eq!(
        add_hook.next(5).await.expect("webhook").pairs(),
        fields_of(&note, &note_keys)
    );
    let second = t
        .post(
            "addTradeNote",
            &[("tradeId", id.as_str()), ("authorName", "Ops"), ("notes", "second")],
        )
        .await;
    let second_id = second.inserted("notesDetails")["noteId"].as_str().unwrap().to_owned();

    let mut get_hook = hook(&t, "getTradeNote").await;
    let r = t.post("getTradeNote", &[("tradeId", id.as_str())]).await;
    assert_eq!(r.code(), "101");
    assert_eq!(r.json["notesDetails"].as_array().unwrap().len(), 2);
    assert_eq!(r.json["notesDetails"][0]["note"], "called the investor", "oldest first");
    assert_eq!(
        get_hook.next(5).await.expect("webhook").pairs(),
        pairs(&[("tradeId", &id), ("noteIds", &format!("{note_id},{second_id}"))])
    );
    let r = t
        .post(
            "getTradeNote",
            &[("tradeId", id.as_str()), ("noteId", second_id.as_str())],
        )
        .await;
    assert_eq!(r.json["notesDetails"].as_array().unwrap().len(), 1);

    let mut upd_hook = hook(&t, "updateTradeNote").await;
    let r = t
        .post(
            "updateTradeNote",
            &[("noteId", note_id.as_str()), ("notes", "emailed instead")],
        )
        .await;
    assert_eq!(r.code(), "101", "{:?}", r.json);
    let updated = r.json["notesDetails"][0].clone();
    assert_eq!(
        (updated["note"].as_str(), updated["authorname"].as_str()),
        (Some("emailed instead"), Some("Ops"))
    );
    assert_eq!(
        upd_hook.next(5).await.expect("webhook").pairs(),
        fields_of(&updated, &note_keys)
    );

    let mut del_hook = hook(&t, "deleteTradeNote").await;
    let r = t.post("deleteTradeNote", &[("noteId", note_id.as_str())]).await;
    assert_eq!(
        (r.code(), &r.json["notesDetails"]),
        ("101", &json!("Trade notes deleted successfully"))
    );
    assert_eq!(
        del_hook.next(5).await.expect("webhook").pairs(),
        pairs(&[("noteId", &note_id), ("tradeId", &id)])
    );
    let r = t.post("getTradeNote", &[("tradeId", id.as_str())]).await;
    assert_eq!(
        r.json["notesDetails"].as_array().unwrap().len(),
        1,
        "deleted notes are left out"
    );

    let other = trade(&t, &a, &o, "1").await;
    let cases = [
        (
            "add: no notes",
            t.post("addTradeNote", &[("tradeId", id.as_str()), ("authorName", "Ops")])
                .await,
            "106",
        ),
        (
            "add: no author",
            t.post("addTradeNote", &[("tradeId", id.as_str()), ("notes", "x")])
                .await,
            "106",
        ),
        (
            "add: unknown trade",
            t.post(
                "addTradeNote",
                &[("tradeId", "999999"), ("authorName", "a"), ("notes", "x")],
            )
            .await,
            "188",
        ),
        ("get: no trade", t.post("getTradeNote", &[]).await, "106"),
        (
            "get: unknown trade",
            t.post("getTradeNote", &[("tradeId", "999999")]).await,
            "188",
        ),
        (
            "get: deleted note",
            t.post(
                "getTradeNote",
                &[("tradeId", id.as_str()), ("noteId", note_id.as_str())],
            )
            .await,
            "106",
        ),
        (
            "update: no notes",
            t.post("updateTradeNote", &[("noteId", second_id.as_str())]).await,
            "106",
        ),
        (
            "update: deleted note",
            t.post("updateTradeNote", &[("noteId", note_id.as_str()), ("notes", "x")])
                .await,
            "106",
        ),
        (
            "update: another trade's",
            t.post(
                "updateTradeNote",
                &[
                    ("noteId", second_id.as_str()),
                    ("tradeId", other.as_str()),
                    ("notes", "x"),
                ],
            )
            .await,
            "106",
        ),
        ("delete: no id", t.post("deleteTradeNote", &[]).await, "106"),
        (
            "delete: unknown",
            t.post("deleteTradeNote", &[("noteId", "999999")]).await,
            "106",
        ),
        (
            "delete: again",
            t.post("deleteTradeNote", &[("noteId", note_id.as_str())]).await,
            "106",
        ),
    ];
    for (label, r, code) in &cases {
        assert_eq!(r.code(), *code, "{label}: {:?}", r.json);
    }
    let r = t.post("getTradeNote", &[("tradeId", id.as_str())]).await;
    assert_eq!(
        r.json["notesDetails"][0]["note"], "second",
        "rejections changed nothing"
    );
});

// ---------------------------------------------------------------- offering counters and close

both!(
    trades_keep_the_offering_totals_and_close_rule,
    |t: TestApp| async move {
        let o = offering(&t, "100").await;
        let (a, _) = investor(&t).await;
        let t1 = trade(&t, &a, &o, "10").await;
        let t2 = trade(&t, &a, &o, "5").await;
        let r = t.post("closeOffering", &[("offeringId", o.as_str())]).await;
        assert_eq!(r.code(), "106", "CREATED trades keep it open: {:?}", r.json);
        walk(&t, &a, &t1, &["FUNDED"]).await;
        walk(&t, &a, &t2, &["Rejected"]).await;
        let r = t.post("getOfferingDetails", &[("offeringId", o.as_str())]).await;
        let d = &r.json["Offering purchased details"][0];
        assert_eq!(
            (
                d["pendingAmount"].as_str(),
                d["fundedAmount"].as_str(),
                d["committedAmount"].as_str()
            ),
            (Some("0.000000"), Some("100.000000"), Some("100.000000"))
        );
        assert_eq!(
            t.post("closeOffering", &[("offeringId", o.as_str())]).await.code(),
            "101"
        );
        assert_eq!(create(&t, &a, &o, "1").await.code(), "106", "closed");
        let r = t.post("getOffering", &[("offeringId", o.as_str())]).await;
        assert_eq!(r.json["offeringDetails"][0]["remainingShares"], "90");
    }
);

// ---------------------------------------------------------------- concurrency

/// Units of an offering's live trades that hold shares, from the trade records themselves.
async fn held_units(t: &TestApp, offering: &str) -> (i64, usize) {
    let copies = model::of_offering(t.store(), &t.client_id, offering).await.unwrap();
    let mut held = 0;
    for c in &copies {
        let rec = stored(t, &c.id).await;
        assert_eq!(&rec, c, "the offering copy matches the record");
        if rec.holding().status.holds_shares() {
            held += rec.units;
        }
    }
    (held, copies.len())
}

both!(concurrent_creates_and_edits_never_oversell, |t: TestApp| async move {
    const TOTAL: i64 = 60;
    let o = offering(&t, &TOTAL.to_string()).await;
    let (a, _) = investor(&t).await;
    let (b, _) = investor(&t).await;
    let mut seeded = Vec::new();
    for acct in [&a, &b, &a, &b] {
        seeded.push((acct.clone(), trade(&t, acct, &o, "3").await));
    }
    let t = Arc::new(t);
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let monitor = {
        let (t, o, stop) = (t.clone(), o.clone(), stop.clone());
        tokio::spawn(async move {
            let mut seen = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let r = offering_state(&t, &o).await.remaining_shares;
                assert!((0..=TOTAL).contains(&r), "remainingShares {r} out of range");
                seen += 1;
                tokio::time::sleep(std::time::Duration::from_millis(5)).await;
            }
            seen
        })
    };
    let mut tasks = Vec::new();
    for k in 0..64usize {
        let (t, o) = (t.clone(), o.clone());
        let (acct, id) = seeded[k % seeded.len()].clone();
        tasks.push(tokio::spawn(async move {
            let units = (1 + k % 5).to_string();
            let r = match k % 8 {
                0..=3 => create(&t, &acct, &o, &units).await,
                4 | 5 => {
                    let p = [
                        ("accountId", acct.as_str()),
                        ("offeringId", o.as_str()),
                        ("tradeId", id.as_str()),
                        ("shares", units.as_str()),
                    ];
                    t.put("editTrade", &p).await
                }
                6 => {
                    let p = [
                        ("accountId", acct.as_str()),
                        ("tradeId", id.as_str()),
                        ("unitPrice", "10"),
                        ("totalShares", units.as_str()),
                    ];
                    t.post("editTradeUnits", &p).await
                }
                _ => {
                    // Cancel a trade of its own, then try to take the units again.
                    let r = create(&t, &acct, &o, "2").await;
                    if r.code() == "101" {
                        let own = r.inserted("purchaseDetails")["tradeId"].as_str().unwrap().to_owned();
                        let del = t
                            .post(
                                "deleteTrade",
                                &[("accountId", acct.as_str()), ("tradeId", own.as_str())],
                            )
                            .await;
                        assert_eq!(del.code(), "101", "{:?}", del.json);
                    }
                    r
                }
            };
            if let Some(rem) = r.json["TradeFinancialDetails"]["remainingShares"].as_str() {
                assert!(rem.parse::<i64>().unwrap() >= 0);
            }
            (k, r.code().to_owned(), r.desc().to_owned())
        }));
    }
    let (mut ok, mut refused) = (0, 0);
    for task in tasks {
        let (k, code, desc) = task.await.unwrap();
        if code == "106" {
            refused += 1;
        }
        assert!(
            ["101", "106", "190"].contains(&code.as_str()),
            "task {k}: {code} {desc}"
        );
        if code == "101" {
            ok += 1;
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    assert!(monitor.await.unwrap() > 0);
    assert!(
        ok > 0 && refused > 0,
        "{ok} calls succeed, {refused} find too few units"
    );
    let (held, n) = held_units(&t, &o).await;
    let o_now = offering_state(&t, &o).await;
    assert!(held <= TOTAL, "{held} units held of {TOTAL}");
    assert_eq!(
        o_now.remaining_shares,
        TOTAL - held,
        "remainingShares = totalShares - live units ({n} trades)"
    );
    let trades = model::of_offering(t.store(), &t.client_id, &o).await.unwrap();
    let open = trades.iter().filter(|tr| tr.holding().status.is_open()).count() as i64;
    let committed: Decimal = trades
        .iter()
        .filter(|tr| tr.holding().status.holds_shares())
        .map(|tr| tr.total_amount)
        .sum();
    assert_eq!(
        (o_now.open_trades, o_now.committed_amount, o_now.pending_amount),
        (open, committed, committed)
    );
    let r = t.get("/v3/trades?limit=500").await;
    let listed: i64 = r.json["trades"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tr| tr["totalShares"].as_str().unwrap().parse::<i64>().unwrap())
        .sum();
    assert_eq!(listed, held, "the list shows the same live units");
});

both!(
    concurrent_creates_take_exactly_the_remaining_units,
    |t: TestApp| async move {
        let o = offering(&t, "50").await;
        let (a, _) = investor(&t).await;
        let t = Arc::new(t);
        let tasks: Vec<_> = (0..60)
            .map(|_| {
                let (t, a, o) = (t.clone(), a.clone(), o.clone());
                tokio::spawn(async move { create(&t, &a, &o, "2").await.code().to_owned() })
            })
            .collect();
        let mut codes = Vec::new();
        for task in tasks {
            codes.push(task.await.unwrap());
        }
        let won = codes.iter().filter(|c| *c == "101").count();
        assert_eq!(won, 25, "{codes:?}");
        assert!(codes.iter().all(|c| c == "101" || c == "106"), "{codes:?}");
        assert_eq!(offering_state(&t, &o).await.remaining_shares, 0);
        assert_eq!(held_units(&t, &o).await, (50, 25));
    }
);

both!(concurrent_status_moves_stay_on_the_table, |t: TestApp| async move {
    let o = offering(&t, "100").await;
    let (a, _) = investor(&t).await;
    let t = Arc::new(t);
    for _ in 0..3 {
        let id = trade(&t, &a, &o, "5").await;
        let targets = [
            "FUNDED",
            "CANCELED",
            "Rejected",
            "SETTLED",
            "UNWIND PENDING",
            "CREATED",
            "UNWIND SETTLED",
        ];
        let tasks: Vec<_> = (0..56)
            .map(|k| {
                let (t, a, id) = (t.clone(), a.clone(), id.clone());
                let target = targets[k % targets.len()];
                tokio::spawn(async move { set_status(&t, &a, &id, target).await.code().to_owned() })
            })
            .collect();
        for task in tasks {
            let code = task.await.unwrap();
            assert!(code == "101" || code == "190", "{code}");
        }
        let tr = stored(&t, &id).await;
        let s = tr.status();
        let reachable = [
            TradeStatus::Created,
            TradeStatus::Funded,
            TradeStatus::Settled,
            TradeStatus::UnwindPending,
            TradeStatus::UnwindSettled,
            TradeStatus::Canceled,
            TradeStatus::Rejected,
        ];
        assert!(reachable.contains(&s));
    }
    let trades = model::of_offering(t.store(), &t.client_id, &o).await.unwrap();
    let held: i64 = trades
        .iter()
        .filter(|tr| tr.holding().status.holds_shares())
        .map(|tr| tr.units)
        .sum();
    let open = trades.iter().filter(|tr| tr.holding().status.is_open()).count() as i64;
    let funded: Decimal = trades
        .iter()
        .filter(|tr| tr.holding().status.is_funded())
        .map(|tr| tr.total_amount)
        .sum();
    let pending: Decimal = trades
        .iter()
        .filter(|tr| tr.holding().status.is_pending())
        .map(|tr| tr.total_amount)
        .sum();
    let o_now = offering_state(&t, &o).await;
    assert_eq!(
        (
            o_now.remaining_shares,
            o_now.open_trades,
            o_now.funded_amount,
            o_now.pending_amount
        ),
        (100 - held, open, funded, pending),
        "the counters follow every committed move exactly"
    );
});

both!(trade_fields_need_their_permissions, |t: TestApp| async move {
    let o = offering(&t, "100").await;
    let (a, _) = investor(&t).await;
    let id = trade(&t, &a, &o, "2").await;
    let c = t.new_client(json!({"scopes": ["*"]})).await;
    let path = format!("/operator/clients/{}/field-permissions", c.id);
    let r = t
        .operator(
            Method::PUT,
            &path,
            json!({"fields": ["transactionType", "transactionUnits"]}),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.json);
    let with_fees = with(&trade_params(&a, &o, "1"), &[("fees", "1")]);
    let r = t.form_as(&c, Method::POST, "createTrade", &with_fees).await;
    assert_eq!(r.code(), "110", "{:?}", r.json);
    let r = t
        .form_as(&c, Method::POST, "createTrade", &trade_params(&a, &o, "1"))
        .await;
    assert_eq!(r.code(), "148", "permitted, but another client's account: {:?}", r.json);
    let edit = [
        ("accountId", a.as_str()),
        ("offeringId", o.as_str()),
        ("tradeId", id.as_str()),
        ("shares", "3"),
    ];
    assert_eq!(t.form_as(&c, Method::PUT, "editTrade", &edit).await.code(), "110");
    let upd = [("accountId", a.as_str()), ("tradeId", id.as_str()), ("field1", "x")];
    assert_eq!(t.form_as(&c, Method::POST, "updateTrade", &upd).await.code(), "110");
    let note = [("tradeId", id.as_str()), ("authorName", "x"), ("notes", "y")];
    assert_eq!(t.form_as(&c, Method::POST, "addTradeNote", &note).await.code(), "110");
    let r = t
        .form_as(&c, Method::POST, "getTradeStatus", &[("tradeId", id.as_str())])
        .await;
    assert_eq!(r.code(), "188", "another client's trade does not exist for it");
});

both!(trade_operations_stay_within_the_budget, |t: TestApp| async move {
    use crate::costs::cost;
    let o = offering(&t, "100").await;
    let (a, _) = investor(&t).await;
    let id = trade(&t, &a, &o, "1").await;
    let params = trade_params(&a, &o, "1");
    assert_eq!(
        cost(&t, Method::POST, "/v3/createTrade", &params).await,
        6,
        "account, primary marker, party, offering, a registration read, one transaction"
    );
    let move_to = [
        ("accountId", a.as_str()),
        ("tradeId", id.as_str()),
        ("tradeStatus", "FUNDED"),
    ];
    assert_eq!(
        cost(&t, Method::POST, "/v3/updateTradeStatus", &move_to).await,
        4,
        "account, trade, a registration read, one transaction"
    );
    let get = [("accountId", a.as_str()), ("tradeId", id.as_str())];
    assert_eq!(cost(&t, Method::POST, "/v3/getTrade", &get).await, 3);
    let by_offering = [("offeringId", o.as_str())];
    assert_eq!(
        cost(&t, Method::POST, "/v3/getTradesForOffering", &by_offering).await,
        3,
        "offering, one query, a registration read"
    );
    assert_eq!(cost(&t, Method::GET, "/v3/trades?limit=5", &[]).await, 2);
});
