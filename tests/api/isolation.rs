//! Tenant isolation, generated from `all_routes()` (OWASP API1): client A holds one record of
//! every kind; client B calls every method-style operation with A's IDs in every ID
//! parameter, and every resource route with A's IDs in its path. B never gets A's data (a
//! `101` answer never carries one of A's IDs; a resource read is 404), no call is a server
//! error, and A's records read the same afterwards. Each case runs on both backends.

use std::collections::BTreeMap;

use api_tests::{both, Listener, TestApp};
use http::Method;
use serde_json::{json, Value};

use crate::fixtures::{approved_offering_as, code, create_entity, link};
use crate::trades::investor;

/// Client A's records: every ID parameter name the operations read, with A's value.
async fn seed(t: &TestApp) -> BTreeMap<&'static str, String> {
    let mut ids = BTreeMap::new();
    let (account, party) = investor(t).await;
    let entity = create_entity(t).await;
    let l = link(t, &account, "EntityACParty", &entity, "0").await;
    code(&l, "101");
    let link_id = l.inserted("linkDetails")["id"].as_str().unwrap().to_owned();
    let (offering, issuer) = approved_offering_as(t, &t.creds()).await;
    let r = t
        .post(
            "createTrade",
            &[
                ("accountId", &account),
                ("offeringId", &offering),
                ("transactionType", "ACH"),
                ("transactionUnits", "5"),
            ],
        )
        .await;
    code(&r, "101");
    let trade = r.inserted("purchaseDetails")["tradeId"].as_str().unwrap().to_owned();
    let ext = [
        ("types", "Account"),
        ("accountId", account.as_str()),
        ("ExtAccountfullname", "Ada Stone"),
        ("Extnickname", "Main"),
        ("ExtRoutingnumber", "021000021"),
        ("ExtAccountnumber", "000123456789"),
    ];
    code(&t.post("createExternalAccount", &ext).await, "101");
    let fund = [
        ("accountId", account.as_str()),
        ("offeringId", offering.as_str()),
        ("tradeId", trade.as_str()),
        ("amount", "50"),
        ("description", "Subscription"),
        ("checkNumber", "1"),
    ];
    let r = t.post("externalFundMove", &fund).await;
    code(&r, "101");
    let ref_num = r.json["TradeFinancialDetails"][0]["RefNum"]
        .as_str()
        .unwrap()
        .to_owned();
    let order = [
        ("memberid", account.as_str()),
        ("issuerid", issuer.as_str()),
        ("securityid", offering.as_str()),
        ("type", "Limit"),
        ("action", "Buy"),
        ("quantity", "3"),
        ("price", "10"),
        ("expiration", "GTC"),
        ("disclosePrice", "Yes"),
        ("solicited", "Unsolicited"),
    ];
    let r = t.post("createOrder", &order).await;
    code(&r, "101");
    let order_id = r.json["orderDetails"]["orderId"].as_str().unwrap().to_owned();
    let doc = Listener::start(200).await;
    let attest = [
        ("accountId", account.as_str()),
        ("isAttested", "true"),
        ("documentUrl", doc.url.as_str()),
    ];
    code(&t.post("createCustodyAgreementAttestation", &attest).await, "101");
    let r = t.post("createCustodyAccountRequest", &[("accountId", &account)]).await;
    code(&r, "101");
    let custody = r.json["custodialAccountDetails"][0]["custAccRequestID"]
        .as_str()
        .unwrap()
        .to_owned();

    for name in [
        "accountId",
        "accountid",
        "memberId",
        "memberid",
        "firstEntry",
        "investorId",
    ] {
        ids.insert(name, account.clone());
    }
    ids.insert("partyId", party.clone());
    ids.insert("relatedEntry", party);
    ids.insert("entityId", entity);
    ids.insert("id", link_id);
    for name in ["offeringId", "securityId", "securityid", "securityID"] {
        ids.insert(name, offering.clone());
    }
    for name in ["issuerId", "issuerid", "issuerID"] {
        ids.insert(name, issuer.clone());
    }
    ids.insert("tradeId", trade);
    for name in ["RefNum", "refNum", "referenceNumber"] {
        ids.insert(name, ref_num.clone());
    }
    ids.insert("orderId", order_id.clone());
    ids.insert("orderid", order_id);
    ids.insert("custAccRequestID", custody);
    ids
}

/// A's records as A reads them.
async fn snapshot(t: &TestApp, ids: &BTreeMap<&'static str, String>) -> Vec<Value> {
    let id = |k: &str| ids[k].as_str();
    let reads: Vec<(&str, Vec<(&str, &str)>)> = vec![
        ("getAccount", vec![("accountId", id("accountId"))]),
        ("getParty", vec![("partyId", id("partyId"))]),
        ("getEntity", vec![("partyId", id("entityId"))]),
        ("getLink", vec![("id", id("id"))]),
        ("getIssuer", vec![("issuerId", id("issuerId"))]),
        ("getOffering", vec![("offeringId", id("offeringId"))]),
        ("getTradeStatus", vec![("tradeId", id("tradeId"))]),
        ("getExternalAccount", vec![("accountId", id("accountId"))]),
        (
            "getExternalFundMove",
            vec![("accountId", id("accountId")), ("RefNum", id("RefNum"))],
        ),
        ("getOrder", vec![("orderid", id("orderid"))]),
    ];
    let mut out = Vec::new();
    for (op, pairs) in reads {
        let r = t.post(op, &pairs).await;
        code(&r, "101");
        out.push(r.json);
    }
    out.push(t.get(&format!("/v3/custody/accounts/{}", id("accountId"))).await.json);
    out
}

/// Values for the parameters besides the IDs.
const PLAUSIBLE: &[(&str, &str)] = &[
    ("authorName", "B"),
    ("notes", "B was here"),
    ("requestedBy", "B"),
    ("reason", "B"),
    ("createdIpAddress", "10.0.0.9"),
    ("updatedIpAddress", "10.0.0.9"),
    ("amount", "10"),
    ("description", "B"),
    ("checkNumber", "1"),
    ("transactionType", "ACH"),
    ("transactionUnits", "1"),
    ("shares", "1"),
    ("unitPrice", "10"),
    ("archiveStatus", "1"),
    ("searchKeyword", "a"),
    ("totalShares", "1"),
    ("accountRegistration", "B"),
    ("firstEntryType", "Account"),
    ("relatedEntryType", "IndivACParty"),
    ("linkType", "owner"),
    ("custAccRequestStatus", "Pending"),
    ("tradeStatus", "CANCELED"),
    ("eligibleToClose", "yes"),
    ("transactionstatus", "Approved"),
    ("kycStatus", "Manually Approved"),
    ("esignStatus", "SIGNED"),
    ("types", "Account"),
    ("ExtAccountfullname", "B"),
    ("Extnickname", "B"),
    ("ExtRoutingnumber", "021000021"),
    ("ExtAccountnumber", "000999"),
    ("isAttested", "true"),
    ("mailingAddressLine1", "1 Main St"),
    ("mailingCity", "Denver"),
    ("mailingState", "CO"),
    ("mailingZipCode", "80202"),
    ("mailingCountry", "USA"),
    ("quantity", "1"),
    ("price", "10"),
    ("action", "Sell"),
    ("expiration", "GTC"),
    ("disclosePrice", "Yes"),
    ("solicited", "Unsolicited"),
];

/// Whether `body` names one of A's IDs as a whole value.
fn leaks(body: &Value, ids: &BTreeMap<&'static str, String>) -> Option<String> {
    match body {
        Value::String(s) => ids.values().find(|id| s == *id).cloned(),
        Value::Array(a) => a.iter().find_map(|v| leaks(v, ids)),
        Value::Object(m) => m.values().find_map(|v| leaks(v, ids)),
        _ => None,
    }
}

both!(another_clients_ids_reach_nothing, |t: TestApp| async move {
    let ids = seed(&t).await;
    let before = snapshot(&t, &ids).await;
    // The detector sees A's own reads (getExternalAccount's answer names no ID).
    for r in before
        .iter()
        .filter(|r| r["statusDesc"].get("AccountNickName").is_none())
    {
        assert!(leaks(r, &ids).is_some(), "{r}");
    }
    let b = t.new_client(json!({"scopes": ["*"]})).await;
    let routes = service::all_routes();
    // A's IDs, and plausible values for the other parameters, so that most operations get
    // past their parameter checks to the lookup of what the IDs name.
    let mut pairs: Vec<(&str, &str)> = ids.iter().map(|(k, v)| (*k, v.as_str())).collect();
    pairs.extend_from_slice(PLAUSIBLE);
    let (mut answered, mut swept) = (0, 0);
    for op in routes.op_names() {
        swept += 1;
        let r = t.form_as(&b, Method::POST, op, &pairs).await;
        assert!(r.status < 500, "{op}: {} {:?}", r.status, r.json);
        if r.code() == "101" {
            assert_eq!(
                leaks(&r.json, &ids),
                None,
                "{op} answered B with A's record: {:?}",
                r.json
            );
            answered += 1;
        }
    }
    assert!(swept > 150, "every operation: {swept}");
    assert!(answered > 0, "some operations answer B with its own (empty) data");
    for (verb, pattern) in routes.resource_routes() {
        let mut path = pattern.clone();
        for (name, value) in &ids {
            path = path.replace(&format!("{{{name}}}"), value);
        }
        if path == pattern {
            continue;
        }
        let r = match verb {
            Method::GET => t.get_as(&b, &path).await,
            _ => {
                t.json_as(&b, verb.clone(), &path, &json!({"account": {"notes": "B was here"}}))
                    .await
            }
        };
        assert_eq!(r.status, 404, "{verb} {path}: {:?}", r.json);
    }
    assert_eq!(snapshot(&t, &ids).await, before, "A's records are as they were");
});
