//! The ATS: orders placed, matched by each security's book one message at a time, the
//! CLOB, matched trades, cancels, updates, the operator's approval, the closed market and
//! the open, expiry, the keyset-paged lists, the ATS webhooks at a real listener (no
//! `X-Webhook-Token`), a redelivered book message, and the invariants under many concurrent
//! crossing orders and cancels. Each case runs on both backends.

use std::collections::HashMap;
use std::sync::Arc;

use api_tests::{both, Listener, Resp, TestApp};
use chrono::{TimeZone, Utc};
use http::Method;
use rust_decimal::Decimal;
use serde_json::{json, Value};
use shared::model::market_hours::DAYS;
use shared::queue::sequencer::BookMessage;

use crate::fixtures::{
    approved_offering_as, code, create_account, every_field_filters_and_sorts, urlencode, with, OFFERING,
};

/// A security of the sandbox client: (securityId, issuerId).
struct Market {
    security: String,
    issuer: String,
}

async fn set_hours(t: &TestApp, open: bool) {
    let day = if open {
        json!({"closed": false, "start": "00:00", "end": "24:00"})
    } else {
        json!({"closed": true})
    };
    let body: serde_json::Map<String, Value> = DAYS.iter().map(|d| (d.to_string(), day.clone())).collect();
    let path = format!("/operator/clients/{}/market-hours", t.client_id);
    let r = t.operator(Method::PUT, &path, Value::Object(body)).await;
    assert_eq!(r.status, 200, "{:?}", r.json);
}

/// An approved offering, on a market open around the clock.
async fn market(t: &TestApp) -> Market {
    set_hours(t, true).await;
    let (security, issuer) = approved_offering_as(t, &t.creds()).await;
    Market { security, issuer }
}

fn order_params<'a>(
    m: &'a Market,
    member: &'a str,
    action: &'a str,
    qty: &'a str,
    price: &'a str,
) -> Vec<(&'a str, &'a str)> {
    vec![
        ("memberid", member),
        ("issuerid", &m.issuer),
        ("securityid", &m.security),
        ("type", "Limit"),
        ("action", action),
        ("quantity", qty),
        ("price", price),
        ("expiration", "GTC"),
        ("disclosePrice", "Yes"),
        ("solicited", "Unsolicited"),
    ]
}

async fn place(
    t: &TestApp,
    m: &Market,
    member: &str,
    action: &str,
    qty: &str,
    price: &str,
    extra: &[(&str, &str)],
) -> Resp {
    let params = with(&order_params(m, member, action, qty, price), extra);
    t.post("createOrder", &params).await
}

/// Places an order and answers its ID.
async fn order(t: &TestApp, m: &Market, member: &str, action: &str, qty: &str, price: &str) -> String {
    let r = place(t, m, member, action, qty, price, &[]).await;
    code(&r, "101");
    r.json["orderDetails"]["orderId"].as_str().unwrap().to_owned()
}

async fn get_order(t: &TestApp, id: &str) -> Value {
    let r = t.post("getOrder", &[("orderid", id)]).await;
    code(&r, "101");
    r.json["orderDetails"][0].clone()
}

fn status(o: &Value) -> &str {
    o["orderStatus"].as_str().unwrap_or("")
}

async fn clob(t: &TestApp, m: &Market) -> Value {
    let r = t
        .post("getClob", &[("securityID", &m.security), ("issuerID", &m.issuer)])
        .await;
    code(&r, "101");
    r.json["orderDetailsAll"].clone()
}

/// One field of every matched trade, oldest first.
async fn trade_fields(t: &TestApp, field: &str) -> Vec<Value> {
    let trades = list(t, "trades", "sort=executionTime:asc").await;
    trades["ppex_trades"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x[field].clone())
        .collect()
}

async fn list(t: &TestApp, what: &str, query: &str) -> Value {
    let r = t.get(&format!("/v3/ppex/{what}?{query}")).await;
    assert_eq!(r.status, 200, "{:?}", r.json);
    r.json.clone()
}

both!(
    create_order_answers_live_with_bid_or_offer_and_echoes_the_token_only_when_sent,
    |t: TestApp| async move {
        let m = market(&t).await;
        let a = create_account(&t).await;
        let r = place(
            &t,
            &m,
            &a,
            "Buy",
            "10",
            "12.50",
            &[("token", "t-1"), ("orderStatus", "Executed")],
        )
        .await;
        code(&r, "101");
        let d = &r.json["orderDetails"];
        let id = d["orderId"].as_str().unwrap();
        assert_eq!(
            d,
            &json!({"id": id, "securityId": m.security, "orderId": id, "action": "Bid", "orderStatus": "Live", "token": "t-1"})
        );
        let r = place(&t, &m, &a, "Sell", "10", "20", &[]).await;
        code(&r, "101");
        assert_eq!(r.json["orderDetails"]["action"], "Offer");
        assert!(r.json["orderDetails"].get("token").is_none(), "{:?}", r.json);
        t.settle().await;
        let o = get_order(&t, id).await;
        assert_eq!(
            (o["number_shares"].as_u64(), o["shares_remaining"].as_u64()),
            (Some(10), Some(10))
        );
        assert_eq!(o["sharePrice"], json!("12.5"));
        assert_eq!(o["matchedOrders"], json!([]));
    }
);

both!(
    create_order_refuses_bad_parameters_an_unknown_security_and_a_foreign_member_and_writes_nothing,
    |t: TestApp| async move {
        let m = market(&t).await;
        let a = create_account(&t).await;
        for (extra, expected) in [
            (vec![("quantity", "0")], "106"),
            (vec![("quantity", "1.5")], "106"),
            (vec![("price", "-1")], "106"),
            (vec![("price", "1.1234567")], "106"),
            // Plain notation only, as every amount.
            (vec![("price", "1e2")], "106"),
            (vec![("price", "+5")], "106"),
            (vec![("quantity", "+10")], "106"),
            // A typed parameter sent is checked where the order ignores it too.
            (vec![("minimumThreshold", "abc")], "106"),
            (vec![("expirationDate", "garbage")], "106"),
            (vec![("type", "Market")], "106"),
            (vec![("action", "Hold")], "106"),
            (vec![("expiration", "Other")], "106"),
            (vec![("expiration", "Other"), ("expirationDate", "01-01-2020")], "106"),
            (vec![("contingencies", "Minimum Quantity")], "106"),
            (
                vec![("contingencies", "Minimum Quantity"), ("minimumThreshold", "11")],
                "106",
            ),
            (vec![("contingencies", "Sometimes")], "106"),
            (vec![("securityid", "999999999")], "138"),
            (vec![("issuerid", "1")], "138"),
            (vec![("memberid", "A9999999")], "148"),
            (vec![("accountid", "A9999999")], "148"),
        ] {
            let r = place(&t, &m, &a, "Buy", "10", "10", &extra).await;
            assert_eq!(r.code(), expected, "{extra:?}: {:?}", r.json);
        }
        let r = t.post("createOrder", &[("memberid", a.as_str())]).await;
        code(&r, "106");
        let r = t.get("/v3/ppex/orders").await;
        assert_eq!(r.code(), "239", "nothing written: {:?}", r.json);
    }
);

both!(
    crossing_orders_match_at_the_resting_price_with_partial_fills,
    |t: TestApp| async move {
        let m = market(&t).await;
        let (seller, buyer) = (create_account(&t).await, create_account(&t).await);
        let ask = order(&t, &m, &seller, "Sell", "100", "10").await;
        t.settle().await;
        let bid = order(&t, &m, &buyer, "Buy", "60", "12").await;
        t.settle().await;
        let a = get_order(&t, &ask).await;
        let b = get_order(&t, &bid).await;
        assert_eq!(
            (status(&a), a["shares_remaining"].as_u64()),
            ("Partially Executed", Some(40))
        );
        assert_eq!((status(&b), b["shares_remaining"].as_u64()), ("Executed", Some(0)));
        let match_id = a["matchedOrders"][0]["matchid"].as_str().unwrap().to_owned();
        assert_eq!(b["matchedOrders"], json!([{"matchid": match_id}]));
        let r = t.post("getMatchedTrade", &[("matchId", &match_id)]).await;
        code(&r, "101");
        let d = &r.json["matchedTradeDetails"][0];
        assert_eq!(d["numberOfShares"], 60);
        assert_eq!(d["Price"], json!("10"));
        assert_eq!(d["ordersMatched"], json!({"askOrderId": ask, "bidOrderId": bid}));
        assert!(d["executionTime"].as_f64().unwrap() > 1.7e9, "epoch seconds: {d}");
        let trades = list(&t, "trades", "").await;
        assert_eq!(trades["ppex_trades"][0]["matchId"], json!(match_id));
        assert_eq!(trades["ppex_trades"][0]["sharePrice"], json!("10"));
        // A second buyer takes the rest; the book is then empty.
        let third = create_account(&t).await;
        order(&t, &m, &third, "Buy", "40", "10").await;
        t.settle().await;
        assert_eq!(status(&get_order(&t, &ask).await), "Executed");
        assert_eq!(clob(&t, &m).await["orderDetailsBid"], "--");
        let r = t.post("getMatchedTrade", &[("matchId", "1")]).await;
        code(&r, "106");
    }
);

both!(
    the_clob_shows_the_best_prices_rfq_and_hidden_prices_and_one_member_never_trades_with_itself,
    |t: TestApp| async move {
        let m = market(&t).await;
        assert_eq!(
            clob(&t, &m).await,
            json!({"securityID": m.security, "orderDetailsBid": "--", "orderDetailsOffer": "--"})
        );
        let (a, b) = (create_account(&t).await, create_account(&t).await);
        let r = place(&t, &m, &a, "Buy", "5", "1", &[("type", "RFQ")]).await;
        code(&r, "101");
        t.settle().await;
        assert_eq!(clob(&t, &m).await["orderDetailsBid"], "RFQ");
        order(&t, &m, &a, "Buy", "10", "9").await;
        order(&t, &m, &a, "Buy", "7", "9.5").await;
        let r = place(&t, &m, &b, "Sell", "3", "11", &[("disclosePrice", "No")]).await;
        code(&r, "101");
        // The same member's crossing offer rests beside its bids.
        let own = order(&t, &m, &a, "Sell", "4", "9").await;
        t.settle().await;
        assert_eq!(status(&get_order(&t, &own).await), "Live");
        let c = clob(&t, &m).await;
        assert_eq!(c["orderDetailsBid"], json!({"price": "9.5", "shares": 7}));
        assert_eq!(c["orderDetailsOffer"], json!({"price": "9", "shares": 4}));
        t.post("cancelOrder", &[("orderid", &own)]).await;
        assert_eq!(
            clob(&t, &m).await["orderDetailsOffer"],
            json!({"price": "Not Disclosed", "shares": 3})
        );
        // A disclosed order at that price shows it, and only its own shares beside it.
        order(&t, &m, &b, "Sell", "2", "11").await;
        t.settle().await;
        assert_eq!(
            clob(&t, &m).await["orderDetailsOffer"],
            json!({"price": "11", "shares": 2})
        );
        let r = t
            .post("getClob", &[("securityID", &m.security), ("issuerID", "1")])
            .await;
        code(&r, "138");
    }
);

both!(
    cancel_order_cancels_an_open_order_keeps_its_fills_and_refuses_a_terminal_one,
    |t: TestApp| async move {
        let m = market(&t).await;
        let (a, b) = (create_account(&t).await, create_account(&t).await);
        let ask = order(&t, &m, &a, "Sell", "10", "5").await;
        t.settle().await;
        order(&t, &m, &b, "Buy", "4", "5").await;
        t.settle().await;
        let r = t.post("cancelOrder", &[("orderid", &ask)]).await;
        code(&r, "101");
        assert_eq!(r.json["orderStatus"], "Cancelled");
        let o = get_order(&t, &ask).await;
        assert_eq!(
            (o["number_shares"].as_u64(), o["shares_remaining"].as_u64()),
            (Some(10), Some(6)),
            "filled = total − remaining"
        );
        assert_eq!(clob(&t, &m).await["orderDetailsOffer"], "--");
        let again = t.post("cancelOrder", &[("orderid", &ask)]).await;
        code(&again, "106");
        assert_eq!(get_order(&t, &ask).await, o, "nothing changed");
        code(&t.post("cancelOrder", &[("orderid", "123")]).await, "106");
        code(&t.post("cancelOrder", &[]).await, "106");
    }
);

both!(
    update_order_lowers_the_quantity_in_place_and_a_new_price_matches_again,
    |t: TestApp| async move {
        let m = market(&t).await;
        let (a, b) = (create_account(&t).await, create_account(&t).await);
        let bid = order(&t, &m, &a, "Buy", "10", "5").await;
        let ask = order(&t, &m, &b, "Sell", "10", "6").await;
        t.settle().await;
        let r = t
            .post("updateOrder", &[("orderid", bid.as_str()), ("quantity", "8")])
            .await;
        code(&r, "101");
        assert_eq!(r.json["orderDetails"][0]["shares_remaining"], 8);
        code(
            &t.post("updateOrder", &[("orderid", bid.as_str()), ("quantity", "9")])
                .await,
            "106",
        );
        code(
            &t.post("updateOrder", &[("orderid", bid.as_str()), ("quantity", "0")])
                .await,
            "106",
        );
        code(
            &t.post("updateOrder", &[("orderid", bid.as_str()), ("quantity", "7")])
                .await,
            "101",
        );
        code(&t.post("updateOrder", &[("orderid", bid.as_str())]).await, "106");
        let r = t
            .post("updateOrder", &[("orderid", bid.as_str()), ("price", "6")])
            .await;
        code(&r, "101");
        t.settle().await;
        assert_eq!(status(&get_order(&t, &bid).await), "Executed");
        assert_eq!(get_order(&t, &ask).await["shares_remaining"], 3);
        code(
            &t.post("updateOrder", &[("orderid", bid.as_str()), ("price", "7")])
                .await,
            "106",
        );
    }
);

both!(
    orders_wait_for_the_operators_approval_and_a_rejected_one_never_trades,
    |t: TestApp| async move {
        let m = market(&t).await;
        let path = format!("/operator/clients/{}/issuers/{}/order-approval", t.client_id, m.issuer);
        let r = t.operator(Method::PUT, &path, json!({"required": true})).await;
        assert_eq!(r.status, 200, "{:?}", r.json);
        let (a, b) = (create_account(&t).await, create_account(&t).await);
        let r = place(&t, &m, &a, "Sell", "10", "5", &[]).await;
        assert_eq!(r.json["orderDetails"]["orderStatus"], "Pending");
        let ask = r.json["orderDetails"]["orderId"].as_str().unwrap().to_owned();
        let bid = order(&t, &m, &b, "Buy", "10", "5").await;
        let rejected = order(&t, &m, &b, "Buy", "10", "5").await;
        t.settle().await;
        assert_eq!(
            status(&get_order(&t, &bid).await),
            "Pending",
            "pending orders never match"
        );
        let decide = |id: &str, what: &str| format!("/operator/clients/{}/orders/{id}/{what}", t.client_id);
        let r = t.operator(Method::POST, &decide(&rejected, "reject"), json!({})).await;
        assert_eq!((r.status, r.json["orderStatus"].as_str()), (200, Some("Not Approved")));
        for id in [&ask, &bid] {
            let r = t.operator(Method::POST, &decide(id, "approve"), json!({})).await;
            assert_eq!(
                (r.status, r.json["orderStatus"].as_str()),
                (200, Some("Live")),
                "{:?}",
                r.json
            );
        }
        t.settle().await;
        assert_eq!(status(&get_order(&t, &ask).await), "Executed");
        assert_eq!(status(&get_order(&t, &rejected).await), "Not Approved");
        let r = t.operator(Method::POST, &decide(&ask, "approve"), json!({})).await;
        assert_eq!(r.status, 409);
        let r = t.operator(Method::POST, &decide("999", "approve"), json!({})).await;
        assert_eq!(r.status, 404);
        code(&t.post("cancelOrder", &[("orderid", &rejected)]).await, "106");
    }
);

both!(
    orders_rest_crossed_while_the_market_is_closed_and_match_at_the_open,
    |t: TestApp| async move {
        let m = market(&t).await;
        set_hours(&t, false).await;
        let (a, b, c) = (
            create_account(&t).await,
            create_account(&t).await,
            create_account(&t).await,
        );
        let ask = order(&t, &m, &a, "Sell", "10", "10").await;
        let bid = order(&t, &m, &b, "Buy", "15", "12").await;
        let later = order(&t, &m, &c, "Sell", "10", "9").await;
        t.settle().await;
        assert_eq!(t.open_books().await, 0, "still closed");
        for id in [&ask, &bid, &later] {
            assert_eq!(status(&get_order(&t, id).await), "Live");
        }
        set_hours(&t, true).await;
        assert_eq!(t.open_books().await, 1);
        // In time order: the bid takes the first offer at 10, then 5 of the later one at 12.
        assert_eq!(status(&get_order(&t, &ask).await), "Executed");
        assert_eq!(status(&get_order(&t, &bid).await), "Executed");
        let l = get_order(&t, &later).await;
        assert_eq!(
            (status(&l), l["shares_remaining"].as_u64()),
            ("Partially Executed", Some(5))
        );
        assert_eq!(trade_fields(&t, "sharePrice").await, [json!("10"), json!("12")]);
        assert_eq!(t.open_books().await, 0, "opened once");
    }
);

both!(
    day_and_other_orders_expire_at_their_close_by_the_expiry_batch,
    |t: TestApp| async move {
        let m = market(&t).await;
        // Default hours: a Wednesday at 10:00 Eastern.
        let path = format!("/operator/clients/{}/market-hours", t.client_id);
        let day = json!({"closed": false, "start": "09:30", "end": "16:00"});
        let r = t.operator(Method::PUT, &path, json!({"monday": day, "tuesday": day, "wednesday": day, "thursday": day, "friday": day, "saturday": {"closed": true}, "sunday": {"closed": true}})).await;
        assert_eq!(r.status, 200);
        let wednesday = Utc.with_ymd_and_hms(2026, 11, 25, 15, 0, 0).unwrap();
        t.clock.set(wednesday);
        let (a, b) = (create_account(&t).await, create_account(&t).await);
        let day_order = place(&t, &m, &a, "Sell", "10", "5", &[("expiration", "Day")]).await;
        let day_order = day_order.json["orderDetails"]["orderId"].as_str().unwrap().to_owned();
        let other = place(
            &t,
            &m,
            &a,
            "Sell",
            "10",
            "50",
            &[("expiration", "Other"), ("expirationDate", "11-26-2026")],
        )
        .await;
        code(&other, "101");
        let other = other.json["orderDetails"]["orderId"].as_str().unwrap().to_owned();
        let gtc = order(&t, &m, &a, "Sell", "10", "60").await;
        t.settle().await;
        order(&t, &m, &b, "Buy", "4", "5").await;
        t.settle().await;
        assert_eq!(run_expiry(&t).await, 0, "nothing due before the close");
        t.clock.set(wednesday + chrono::Duration::hours(7));
        assert_eq!(run_expiry(&t).await, 1);
        assert_eq!(
            status(&get_order(&t, &day_order).await),
            "Partially Executed & Cancelled"
        );
        assert_eq!(status(&get_order(&t, &other).await), "Live");
        t.clock.set(wednesday + chrono::Duration::hours(31));
        assert_eq!(run_expiry(&t).await, 1);
        assert_eq!(status(&get_order(&t, &other).await), "Cancelled");
        assert_eq!(status(&get_order(&t, &gtc).await), "Live", "GTC never expires");
        // An order past its expiry never matches, batch or not.
        let late = place(&t, &m, &a, "Sell", "1", "1", &[("expiration", "Day")]).await;
        let late = late.json["orderDetails"]["orderId"].as_str().unwrap().to_owned();
        t.settle().await;
        // The next Monday at 10:00 Eastern: open, and the order expired at Friday's close.
        t.clock.set(wednesday + chrono::Duration::days(5));
        order(&t, &m, &b, "Buy", "1", "1").await;
        t.settle().await;
        assert_eq!(status(&get_order(&t, &late).await), "Cancelled");
        // The schedule: every hour of every day, Thanksgiving included (no ATS holidays).
        let batch = service::BATCHES
            .into_iter()
            .find(|b| b.name == "ats-expiry")
            .expect("the expiry batch");
        let thanksgiving = Utc.with_ymd_and_hms(2026, 11, 26, 15, 0, 0).unwrap();
        assert!(batch.runs_on(thanksgiving));
        assert_eq!(batch.runs_due(thanksgiving), 11, "hours 0 to 10 Eastern");
    }
);

both!(
    the_clob_looks_past_any_number_of_expired_orders,
    |t: TestApp| async move {
        let m = market(&t).await;
        let path = format!("/operator/clients/{}/market-hours", t.client_id);
        let day = json!({"closed": false, "start": "09:30", "end": "16:00"});
        let week = json!({"monday": day, "tuesday": day, "wednesday": day, "thursday": day, "friday": day});
        assert_eq!(t.operator(Method::PUT, &path, week).await.status, 200);
        let wednesday = Utc.with_ymd_and_hms(2026, 11, 25, 15, 0, 0).unwrap();
        t.clock.set(wednesday);
        let (a, b) = (create_account(&t).await, create_account(&t).await);
        order(&t, &m, &b, "Buy", "1", "9").await;
        // More Day orders at a better price than a page of the book holds.
        for _ in 0..101 {
            code(
                &place(&t, &m, &a, "Buy", "1", "10", &[("expiration", "Day")]).await,
                "101",
            );
        }
        t.settle().await;
        assert_eq!(
            clob(&t, &m).await["orderDetailsBid"],
            json!({"price": "10", "shares": 101})
        );
        // After the close, before the expiry batch: the live bid at 9 shows.
        t.clock.set(wednesday + chrono::Duration::hours(7));
        assert_eq!(
            clob(&t, &m).await["orderDetailsBid"],
            json!({"price": "9", "shares": 1})
        );
    }
);

both!(
    the_fills_of_one_sweep_page_by_execution_time_without_a_gap,
    |t: TestApp| async move {
        let m = market(&t).await;
        let (seller, buyer) = (create_account(&t).await, create_account(&t).await);
        for price in ["5", "5", "4.9"] {
            order(&t, &m, &seller, "Sell", "10", price).await;
        }
        order(&t, &m, &buyer, "Buy", "25", "5.1").await;
        t.settle().await;
        let mut seen = Vec::new();
        let mut q = "limit=2&sort=executionTime:asc".to_owned();
        loop {
            let page = list(&t, "trades", &q).await["ppex_trades"].as_array().unwrap().clone();
            seen.extend(page.iter().map(|x| x["executionTime"].as_str().unwrap().to_owned()));
            if page.len() < 2 {
                break;
            }
            let filter = format!(r#"{{"executionTime":{{"gt":"{}"}}}}"#, seen.last().unwrap());
            q = format!("limit=2&sort=executionTime:asc&filter={}", urlencode(&filter));
        }
        assert_eq!(seen.len(), 3, "every fill once: {seen:?}");
        // Amounts read as prices do, without trailing zeros (10 × 4.9 is 49).
        assert_eq!(
            trade_fields(&t, "amount").await,
            [json!("49"), json!("50"), json!("25")]
        );
    }
);

both!(
    order_and_trade_lists_page_by_execution_time_with_a_keyset_and_need_ats_read,
    |t: TestApp| async move {
        let m = market(&t).await;
        let a = create_account(&t).await;
        let mut placed = Vec::new();
        for i in 1..=7 {
            placed.push(order(&t, &m, &a, "Buy", "1", &i.to_string()).await);
        }
        t.settle().await;
        let first = list(&t, "orders", "limit=3&sort=executionTime:asc").await;
        assert_eq!(first["pagination"]["totalRecords"], 7);
        let mut seen: Vec<String> = Vec::new();
        let mut page = first["ppex_orders"].as_array().unwrap().clone();
        loop {
            seen.extend(page.iter().map(|o| o["orderId"].as_str().unwrap().to_owned()));
            if page.len() < 3 {
                break;
            }
            let last = page.last().unwrap()["executionTime"].as_str().unwrap().to_owned();
            let filter = format!(r#"{{"executionTime":{{"gt":"{last}"}}}}"#);
            let q = format!("limit=3&sort=executionTime:asc&filter={}", urlencode(&filter));
            page = list(&t, "orders", &q).await["ppex_orders"].as_array().unwrap().clone();
        }
        assert_eq!(seen, placed, "every order once, oldest first");
        let newest = list(&t, "orders", "limit=1").await;
        assert_eq!(
            newest["ppex_orders"][0]["orderId"],
            json!(placed[6]),
            "newest first by default"
        );
        let o = &newest["ppex_orders"][0];
        for field in [
            "securityId",
            "securityName",
            "memberId",
            "shares",
            "remainingShares",
            "sharePrice",
            "amount",
            "priceNotDisplayed",
            "allOrNone",
            "status",
            "orderStatus",
            "executionTime",
            "expirationType",
            "contingencies",
            "solicited",
            "minimumQuantity",
            "cancelDate",
            "deleted",
        ] {
            assert!(o.get(field).is_some(), "{field}: {o}");
        }
        every_field_filters_and_sorts(&t, "/v3/ppex/orders", "ppex_orders", "orderId").await;
        // executionTime is a time: ISO 8601 bounds compare as times, a bad one is 1422.
        let first = &list(&t, "orders", "limit=1&sort=executionTime:asc").await["ppex_orders"][0];
        let at = first["executionTime"].as_str().unwrap();
        let second = format!("{}Z", at[..19].replace(' ', "T"));
        for (filter, expected) in [
            (json!({"executionTime": {"gte": second}}), 7),
            (json!({"executionTime": {"lt": second}}), 0),
            (json!({"executionTime": {"gte": "2000-01-01T00:00:00-05:00"}}), 7),
        ] {
            let r = t
                .get(&format!(
                    "/v3/ppex/orders?limit=500&filter={}",
                    urlencode(&filter.to_string())
                ))
                .await;
            let found = r.json["ppex_orders"].as_array().map_or(0, Vec::len);
            assert_eq!(found, expected, "{filter}: {:?}", r.json);
        }
        let r = t
            .get(&format!(
                "/v3/ppex/orders?filter={}",
                urlencode(r#"{"executionTime":{"gt":"notadate"}}"#)
            ))
            .await;
        assert_eq!((r.status, r.code()), (422, "1422"));
        let outsider = t.new_client(json!({"methods": [], "scopes": ["trade.read"]})).await;
        let r = t.get_as(&outsider, "/v3/ppex/orders").await;
        assert_eq!((r.status, r.code()), (403, "1403"));
    }
);

async fn run_expiry(t: &TestApp) -> u64 {
    let r = t
        .operator(Method::POST, "/operator/batches/ats-expiry/run", json!({}))
        .await;
    assert_eq!(r.status, 200, "{:?}", r.json);
    r.json["processed"].as_u64().unwrap()
}

both!(
    ats_webhooks_reach_a_listener_without_the_webhook_token,
    |t: TestApp| async move {
        let m = market(&t).await;
        let path = format!("/operator/clients/{}/webhook-tokens", t.client_id);
        let r = t.operator(Method::POST, &path, json!({})).await;
        assert_eq!(r.status, 201);
        let mut updates = Listener::start(200).await;
        let mut matches = Listener::start(200).await;
        t.register_webhook("updateOrder", &[&updates.url]).await;
        t.register_webhook("matchedTradenotify", &[&matches.url]).await;
        let (a, b) = (create_account(&t).await, create_account(&t).await);
        let ask = order(&t, &m, &a, "Sell", "10", "5").await;
        let bid = order(&t, &m, &b, "Buy", "10", "5").await;
        t.settle().await;
        let hit = matches.next(10).await.expect("matchedTradenotify");
        assert!(hit.headers.get("x-webhook-token").is_none());
        let fields: HashMap<String, String> = hit.pairs().into_iter().collect();
        assert_eq!(
            (fields["askOrderId"].as_str(), fields["bidOrderId"].as_str()),
            (ask.as_str(), bid.as_str())
        );
        assert_eq!(fields["numberOfShares"], "10");
        let mut statuses = Vec::new();
        for _ in 0..2 {
            let u = updates.next(10).await.expect("updateOrder");
            assert!(u.headers.get("x-webhook-token").is_none());
            let f: HashMap<String, String> = u.pairs().into_iter().collect();
            statuses.push((
                f["orderId"].clone(),
                f["orderStatus"].clone(),
                f["remainingShares"].clone(),
            ));
        }
        statuses.sort();
        let mut expected = vec![
            (ask.clone(), "Executed".to_owned(), "0".to_owned()),
            (bid.clone(), "Executed".to_owned(), "0".to_owned()),
        ];
        expected.sort();
        assert_eq!(statuses, expected);
        // The client's matchedTradenotify sends the match's webhook again.
        let r = t.post("matchedTradenotify", &[("matchId", &fields["matchId"])]).await;
        code(&r, "101");
        let again = matches.next(10).await.expect("sent again");
        assert_eq!(again.body, hit.body);
    }
);

both!(a_redelivered_book_message_changes_no_fill, |t: TestApp| async move {
    let m = market(&t).await;
    let (a, b) = (create_account(&t).await, create_account(&t).await);
    let ask = order(&t, &m, &a, "Sell", "10", "5").await;
    let bid = order(&t, &m, &b, "Buy", "4", "5").await;
    t.settle().await;
    let before = (
        get_order(&t, &ask).await,
        get_order(&t, &bid).await,
        list(&t, "trades", "").await,
    );
    for id in [&ask, &bid] {
        let msg = BookMessage {
            client_id: t.client_id.clone(),
            security_id: m.security.clone(),
            order_id: Some(id.clone()),
        };
        service::BOOK_WORK(t.app.ports.clone(), msg.clone())
            .await
            .expect("applied");
        service::BOOK_WORK(t.app.ports.clone(), msg)
            .await
            .expect("applied again");
    }
    let after = (
        get_order(&t, &ask).await,
        get_order(&t, &bid).await,
        list(&t, "trades", "").await,
    );
    assert_eq!(before, after);
});

both!(
    an_order_whose_book_message_was_lost_is_sent_again,
    |t: TestApp| async move {
        let m = market(&t).await;
        let (a, b) = (create_account(&t).await, create_account(&t).await);
        let ask = order(&t, &m, &a, "Sell", "10", "5").await;
        t.settle().await;
        let later = |secs| t.clock.set(Utc::now() + chrono::TimeDelta::seconds(secs));
        later(11);
        assert_eq!(t.open_books().await, 0, "orders placed leave no mark");
        // createOrder's writes committed, then the process stopped before the hand-over: a
        // crossing bid the book never heard of.
        let store = t.store();
        let mut bid = shared::records::ats::order(store, &t.client_id, &ask)
            .await
            .unwrap()
            .unwrap()
            .rec;
        (bid.order_id, bid.member_id, bid.account_id) = ("900000001".into(), b.clone(), b.clone());
        (bid.side, bid.seq, bid.matches) = ("Buy".into(), 0, Vec::new());
        (bid.shares, bid.remaining_shares) = (4, 4);
        bid.updated_date = shared::clock::timestamp(shared::clock::Clock::now(t.clock.as_ref()));
        store
            .write(shared::records::ats::insert_order(&t.client_id, &bid).unwrap())
            .await
            .unwrap();
        assert_eq!(t.open_books().await, 0, "not before it has had its moment");
        later(22);
        assert_eq!(t.open_books().await, 1);
        assert_eq!(status(&get_order(&t, &bid.order_id).await), "Executed");
        assert_eq!(get_order(&t, &ask).await["shares_remaining"], 6);
        assert_eq!(t.open_books().await, 0, "sent once");
    }
);

both!(
    many_concurrent_crossing_orders_and_cancels_never_double_fill_or_leave_a_cross,
    |t: TestApp| async move {
        let t = Arc::new(t);
        let m = Arc::new(market(&t).await);
        let mut members = Vec::new();
        for _ in 0..6 {
            members.push(create_account(&t).await);
        }
        let members = Arc::new(members);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(3);
        let mut tasks = Vec::new();
        for w in 0..6usize {
            let (t, m, members) = (t.clone(), m.clone(), members.clone());
            tasks.push(tokio::spawn(async move {
                let mut mine = Vec::new();
                let mut n = w;
                while std::time::Instant::now() < deadline {
                    n = n.wrapping_mul(31).wrapping_add(7) % 1000;
                    let side = if n % 2 == 0 { "Buy" } else { "Sell" };
                    let price = (95 + n % 11).to_string();
                    let qty = (1 + n % 20).to_string();
                    let r = place(&t, &m, &members[w], side, &qty, &price, &[]).await;
                    assert_eq!(r.code(), "101", "{:?}", r.json);
                    mine.push(r.json["orderDetails"]["orderId"].as_str().unwrap().to_owned());
                    if n % 5 == 0 {
                        let victim = mine[n % mine.len()].clone();
                        let r = t.post("cancelOrder", &[("orderid", &victim)]).await;
                        assert!(["101", "106"].contains(&r.code()), "{:?}", r.json);
                    }
                }
                mine
            }));
        }
        let mut all = Vec::new();
        for task in tasks {
            all.extend(task.await.expect("a placing task"));
        }
        t.settle().await;
        let mut filled: HashMap<String, u64> = HashMap::new();
        let mut offset = 0;
        loop {
            let page = list(&t, "trades", &format!("limit=500&offset={offset}")).await;
            let rows = page["ppex_trades"].as_array().cloned().unwrap_or_default();
            for tr in &rows {
                let q = tr["numberOfShares"].as_u64().unwrap();
                *filled.entry(tr["askOrderId"].as_str().unwrap().into()).or_default() += q;
                *filled.entry(tr["bidOrderId"].as_str().unwrap().into()).or_default() += q;
                assert_ne!(tr["buyerMemberId"], tr["sellerMemberId"], "a self-match");
            }
            offset += rows.len();
            if rows.len() < 500 || offset >= page["pagination"]["totalRecords"].as_u64().unwrap() as usize {
                break;
            }
        }
        let (mut bought, mut sold) = (0u64, 0u64);
        let mut open = Vec::new();
        for id in &all {
            let o = get_order(&t, id).await;
            let total = o["number_shares"].as_u64().unwrap();
            let remaining = o["shares_remaining"].as_u64().unwrap();
            assert!(remaining <= total);
            assert_eq!(
                filled.get(id).copied().unwrap_or(0),
                total - remaining,
                "filled = total − remaining: {o}"
            );
            if o["action"] == "Bid" {
                bought += total - remaining;
            } else {
                sold += total - remaining;
            }
            if ["Live", "Partially Executed"].contains(&status(&o)) {
                let p: Decimal = o["sharePrice"].as_str().unwrap().parse().unwrap();
                open.push((o["action"] == "Bid", o["memberId"].as_str().unwrap().to_owned(), p));
            }
        }
        assert_eq!(bought, sold, "shares bought equal shares sold");
        assert!(bought > 0, "orders matched");
        for (buy, member, price) in &open {
            for (sell, other, ask) in &open {
                let crossed = *buy && !*sell && member != other && price >= ask;
                assert!(
                    !crossed,
                    "the book is crossed while open: bid {price} of {member}, ask {ask} of {other}"
                );
            }
        }
    }
);

both!(
    issuer_approved_securities_lists_only_approved_offerings_of_the_issuer,
    |t: TestApp| async move {
        let m = market(&t).await;
        let params = with(
            OFFERING,
            &[("issuerId", m.issuer.as_str()), ("issueName", "Not yet approved")],
        );
        code(&t.put("createOffering", &params).await, "101");
        let r = t.post("getIssuerApprovedSecurities", &[("issuerID", &m.issuer)]).await;
        code(&r, "101");
        let securities = r.json["issuerDetails"].as_array().unwrap();
        assert_eq!(securities.len(), 1, "{securities:?}");
        assert_eq!(securities[0]["SecurityID"], json!(m.security));
        assert!(securities[0]["SecurityName"].is_string());
        code(
            &t.post("getIssuerApprovedSecurities", &[("issuerID", "999999")]).await,
            "136",
        );
        code(&t.post("getIssuerApprovedSecurities", &[]).await, "106");
        // An ID that is not an integer is malformed (106), as getClob answers, not unknown.
        code(
            &t.post("getIssuerApprovedSecurities", &[("issuerID", "abc")]).await,
            "106",
        );
        code(&t.post("matchedTradenotify", &[("matchId", "999999")]).await, "106");
        // Every group's 106 body: the parameter named, and Error(s).
        let r = t.post("getOrder", &[("orderid", "x")]).await;
        code(&r, "106");
        assert_eq!(r.json["Error(s)"], "orderid : Order does not exist", "{:?}", r.json);
        let r = t
            .post("getClob", &[("securityID", &m.security), ("issuerID", "abc")])
            .await;
        code(&r, "106");
        assert_eq!(r.desc(), "Invalid parameter issuerID: Numeric values only");
    }
);

both!(integral_json_numbers_are_integers_for_orders, |t: TestApp| async move {
    let m = market(&t).await;
    let a = create_account(&t).await;
    let integral = |id: &str| -> serde_json::Number { format!("{id}.0").parse().unwrap() };
    let (issuer, security) = (integral(&m.issuer), integral(&m.security));
    let order = |quantity: f64| {
        json!({
            "memberid": a, "issuerid": issuer, "securityid": security, "type": "Limit",
            "action": "Sell", "quantity": quantity, "price": "60.00", "expiration": "GTC",
            "disclosePrice": "Yes", "solicited": "Unsolicited",
            "contingencies": "Minimum Quantity", "minimumThreshold": 1e0,
        })
    };
    let r = t
        .json_as(&t.creds(), Method::POST, "/v3/createOrder", &order(2.0))
        .await;
    code(&r, "101");
    let id = integral(r.json["orderDetails"]["orderId"].as_str().unwrap());
    let r = t
        .json_as(&t.creds(), Method::POST, "/v3/createOrder", &order(2.5))
        .await;
    code(&r, "106");
    // A yes/no flag takes a JSON boolean.
    let mut body = order(2.0);
    body["disclosePrice"] = json!(false);
    let r = t.json_as(&t.creds(), Method::POST, "/v3/createOrder", &body).await;
    code(&r, "101");
    // A JSON boolean is no quantity or price (it once read as 1).
    for field in ["quantity", "price"] {
        let mut body = order(2.0);
        body[field] = json!(true);
        let r = t.json_as(&t.creds(), Method::POST, "/v3/createOrder", &body).await;
        code(&r, "106");
    }
    let body = json!({"securityID": security, "issuerID": issuer});
    let r = t.json_as(&t.creds(), Method::POST, "/v3/getClob", &body).await;
    code(&r, "101");
    for op in ["getOrder", "cancelOrder"] {
        let r = t
            .json_as(&t.creds(), Method::POST, &format!("/v3/{op}"), &json!({"orderid": id}))
            .await;
        code(&r, "101");
    }
});

both!(
    a_book_whose_offering_stops_being_a_security_is_halted,
    |t: TestApp| async move {
        let m = market(&t).await;
        let (a, b) = (create_account(&t).await, create_account(&t).await);
        let ask = order(&t, &m, &a, "Sell", "10", "10").await;
        let bid = order(&t, &m, &b, "Buy", "4", "9").await;
        t.settle().await;
        code(&t.post("deleteOffering", &[("offeringId", &m.security)]).await, "101");
        // A crossing price no longer trades: both orders rest, unmatched.
        let r = t
            .post("updateOrder", &[("orderid", bid.as_str()), ("price", "10")])
            .await;
        code(&r, "101");
        t.settle().await;
        for id in [&ask, &bid] {
            assert_eq!(status(&get_order(&t, id).await), "Live", "{id}");
        }
        let trades = t.get("/v3/ppex/trades").await;
        assert_eq!(trades.json["ppex_trades"], json!([]), "{:?}", trades.json);
        // The holder can still withdraw.
        code(&t.post("cancelOrder", &[("orderid", &ask)]).await, "101");
    }
);

/// Two instances (two processes, or Lambda instances without SQS FIFO's one-at-a-time per
/// book) take a buy and a sell that cross at the same moment, each book read slowed so that
/// both read the book before either order rests: one of the two must see the other, and
/// they trade, never both resting crossed.
mod crossing_orders_taken_by_two_instances_at_once_trade {
    use super::*;
    use api_tests::Backend;

    async fn run(backend: Backend) {
        let (one, two) = TestApp::two_instances(backend, std::time::Duration::from_millis(150)).await;
        let m = market(&one).await;
        let buyer = create_account(&one).await;
        let seller = create_account(&one).await;
        for round in 0..3 {
            let (bid, offer) = tokio::join!(
                order(&one, &m, &buyer, "Buy", "1", "10"),
                order(&two, &m, &seller, "Sell", "1", "10"),
            );
            one.settle().await;
            two.settle().await;
            for id in [&bid, &offer] {
                assert_eq!(status(&get_order(&one, id).await), "Executed", "round {round}: {id}");
            }
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn embedded() {
        run(Backend::Embedded).await
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn dynamodb() {
        run(Backend::DynamoDb).await
    }
}
