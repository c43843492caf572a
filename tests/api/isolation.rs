//! Tenant isolation, generated from `all_routes()` (OWASP API1): client A holds one record of
//! every kind; client B calls every method-style operation with A's IDs in every ID
//! parameter, and every resource route with A's IDs in its path. B never gets A's data (a
//! `101` answer never carries one of A's IDs; a resource read is 404), no call is a server
//! error, every operation that takes an ID gets past its parameter checks to the lookup of
//! what the ID names, and A's records read the same afterwards. Each case runs on both
//! backends.

use std::collections::{BTreeMap, BTreeSet};

use api_tests::{both, Creds, Listener, Resp, TestApp};
use http::Method;
use serde_json::{json, Value};
use shared::model::kyc::KycRequest;
use shared::model::market_hours::DAYS;
use shared::records;

use crate::fixtures::{approved_offering_as, code, create_account, create_entity, create_trade, link, with};
use crate::fixtures::{ACCOUNT, ENTITY, ISSUER_ACCOUNT, OFFERING, PARTY};
use crate::trades::investor;

/// Client A's records.
pub(crate) struct Seeded {
    /// A's value of every ID parameter name the operations read: sent to every operation.
    params: BTreeMap<&'static str, String>,
    /// A's records that a parameter name shared by several operations means differently
    /// per operation (`documentId`: whose document), by kind: sent as [`RECORD_OF`] says.
    kinds: BTreeMap<&'static str, String>,
}

impl Seeded {
    /// A's record of `kind` (a key of `kinds`, else of `params`).
    pub(crate) fn record(&self, kind: &str) -> &str {
        self.kinds
            .get(kind)
            .or_else(|| self.params.get(kind))
            .unwrap_or_else(|| panic!("A has no record of kind {kind}"))
    }

    /// Every ID of A's, and the texts of A's records that carry none (notes, document
    /// titles, the external account's holder), for the leak check.
    fn all(&self) -> BTreeSet<String> {
        let texts = A_TEXTS.iter().map(|t| t.to_string());
        self.params
            .values()
            .chain(self.kinds.values())
            .cloned()
            .chain(texts)
            .collect()
    }
}

/// Texts only A's records hold (B's values are other).
const A_TEXTS: &[&str] = &["A's note", "A's file", "A's memorandum", "Ada Stone"];

/// A file every upload operation takes: a PDF (by its name) of 2 kB, over the 1 kB minimum.
pub(crate) fn pdf() -> Vec<u8> {
    let mut v = b"%PDF-1.4\n".to_vec();
    v.resize(2048, b'x');
    v
}

/// The string (or number) at `pointer` of a `101` answer.
#[track_caller]
fn at(r: &Resp, pointer: &str) -> String {
    code(r, "101");
    match r.json.pointer(pointer) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        _ => panic!("no {pointer} in {:?}", r.json),
    }
}

/// Client A's records: every ID parameter name the operations read, with A's value, and
/// the records one name means differently per operation.
pub(crate) async fn seed(t: &TestApp) -> Seeded {
    let mut ids = BTreeMap::new();
    let mut kinds = BTreeMap::new();
    let (account, party) = investor(t).await;
    let entity = create_entity(t).await;
    let l = link(t, &account, "EntityACParty", &entity, "0").await;
    code(&l, "101");
    let link_id = l.inserted("linkDetails")["id"].as_str().unwrap().to_owned();
    let (offering, issuer) = approved_offering_as(t, &t.creds()).await;
    let trade = create_trade(t, &account, &offering, "5").await;
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

    // The market open around the clock, so that a sell of another account of A's meets
    // A's buy: a matched trade, and the buy still live with shares remaining.
    let day = json!({"closed": false, "start": "00:00", "end": "24:00"});
    let week: serde_json::Map<String, Value> = DAYS.iter().map(|d| (d.to_string(), day.clone())).collect();
    let path = format!("/operator/clients/{}/market-hours", t.client_id);
    let r = t.operator(Method::PUT, &path, Value::Object(week)).await;
    assert_eq!(r.status, 200, "{:?}", r.json);
    let seller = create_account(t).await;
    let mut order_ids = Vec::new();
    for (member, action, quantity) in [(&account, "Buy", "3"), (&seller, "Sell", "1")] {
        let order = [
            ("memberid", member.as_str()),
            ("issuerid", issuer.as_str()),
            ("securityid", offering.as_str()),
            ("type", "Limit"),
            ("action", action),
            ("quantity", quantity),
            ("price", "10"),
            ("expiration", "GTC"),
            ("disclosePrice", "Yes"),
            ("solicited", "Unsolicited"),
        ];
        order_ids.push(at(&t.post("createOrder", &order).await, "/orderDetails/orderId"));
        t.settle().await;
    }
    let order_id = order_ids[0].clone();
    let r = t.post("getOrder", &[("orderid", &order_id)]).await;
    let match_id = at(&r, "/orderDetails/0/matchedOrders/0/matchid");
    // The security's own hours (after the match: they may close its market).
    let hours = [("securityId", offering.as_str()), ("mondayClosed", "yes")];
    code(&t.post("createSecurityMarketHours", &hours).await, "101");

    let doc = Listener::start(200).await;
    let attest = [
        ("accountId", account.as_str()),
        ("isAttested", "true"),
        ("documentUrl", doc.url.as_str()),
    ];
    code(&t.post("createCustodyAgreementAttestation", &attest).await, "101");
    let r = t.post("createCustodyAccountRequest", &[("accountId", &account)]).await;
    code(&r, "101");
    let custody = at(&r, "/custodialAccountDetails/0/custAccRequestID");
    let issuer_account = with(ISSUER_ACCOUNT, &[("issuerId", issuer.as_str())]);
    code(&t.put("createIssuerAccount", &issuer_account).await, "101");

    // Notes, accreditation request, manual KYC request (of the account).
    let note = [
        ("accountId", account.as_str()),
        ("authorName", "A"),
        ("notes", "A's note"),
    ];
    code(&t.post("addAccountNote", &note).await, "101");
    let note = [("tradeId", trade.as_str()), ("authorName", "A"), ("notes", "A's note")];
    let r = t.post("addTradeNote", &note).await;
    let note_id = at(&r, "/notesDetails/1/0/noteId");
    let ai = [("accountId", account.as_str()), ("aiMethod", "Upload")];
    let r = t.post("requestAiVerification", &ai).await;
    let ai_request = at(&r, "/accreditedDetails/0/airequestId");
    let r = t.post("requestKycAml", &[("investorId", &account)]).await;
    let kyc_request = at(&r, "/requestDetails/0/requestId");

    // One document of each owner, and each one's ID as its read answers it.
    let file = pdf();
    let title = ("documentTitle", "A's file");
    let uploads: [(&str, Vec<(&str, &str)>); 6] = [
        ("uploadAccountDocument", vec![("accountId", account.as_str())]),
        ("uploadPartyDocument", vec![("partyId", party.as_str())]),
        ("uploadEntityDocument", vec![("partyId", entity.as_str())]),
        ("uploadTradeDocument", vec![("tradeId", trade.as_str())]),
        ("uploadVerificationDocument", vec![("accountId", account.as_str())]),
        (
            "requestUploadPartyDocument",
            vec![("investorId", account.as_str()), ("requestId", kyc_request.as_str())],
        ),
    ];
    for (op, mut fields) in uploads {
        fields.push(title);
        let r = t.multipart(op, &fields, &[("userfile0", "a.pdf", &file)]).await;
        code(&r, "101");
    }
    let reads = [
        (
            "accountDocument",
            "getAccountDocument",
            ("accountId", account.as_str()),
            "/accountDocumentDetails/0/id",
        ),
        (
            "partyDocument",
            "getPartyDocument",
            ("partyId", party.as_str()),
            "/partyDocumentDetails/0/id",
        ),
        (
            "entityDocument",
            "getEntityDocument",
            ("partyId", entity.as_str()),
            "/partyDocumentDetails/0/id",
        ),
        (
            "tradeDocument",
            "getTradeDocument",
            ("tradeId", trade.as_str()),
            "/document_details/0/id",
        ),
        (
            "tradeDocumentRef",
            "getTradeDocument",
            ("tradeId", trade.as_str()),
            "/document_details/0/documentFileReferenceCode",
        ),
        (
            "aiDocument",
            "getAiDocument",
            ("accountId", account.as_str()),
            "/document_details/0/id",
        ),
        (
            "requestedDocument",
            "getuploadPartyDocument",
            ("partyId", account.as_str()),
            "/partyDocumentDetails/0/id",
        ),
    ];
    for (kind, op, owner, pointer) in reads {
        kinds.insert(kind, at(&t.post(op, &[owner]).await, pointer));
    }
    let offering_doc = [
        ("offeringId", offering.as_str()),
        ("documentTitle", "A's memorandum"),
        ("documentFileReferenceCode", "A-REF-7"),
        ("file_name", "filename0=memo.pdf"),
    ];
    let r = t
        .multipart(
            "addDocumentsforOffering",
            &offering_doc,
            &[("userfile0", "memo.pdf", &file)],
        )
        .await;
    kinds.insert("offeringDocument", at(&r, "/document_details/0/documentId"));
    kinds.insert("offeringDocumentRef", "A-REF-7".to_owned());

    // E-signature: a subscription template of the offering, the trade's subscription
    // document (its key), and an NDA (its refNum and key).
    let r = t.post("fetchSubscriptionDocuments", &[]).await;
    let template = format!(
        "{}--{}",
        at(&r, "/document_details/0/templateId"),
        at(&r, "/document_details/0/name")
    );
    let sub = [("offeringId", offering.as_str()), ("file_name", &template)];
    let r = t.post("addSubscriptionsforOffering", &sub).await;
    let template_id = at(&r, "/document_details/0/templateNameID");
    let send = [
        ("offeringId", offering.as_str()),
        ("accountId", &account),
        ("tradeId", &trade),
    ];
    let r = t.post("sendSubscriptionDocument", &send).await;
    let document_key = at(&r, "/document_details/0/documentKey");
    let nda = [("accountId", account.as_str()), ("offeringId", &offering)];
    let r = t.post("sendNda", &nda).await;
    kinds.insert("ndaRefNum", at(&r, "/document_details/0/refNum"));
    kinds.insert("ndaKey", at(&r, "/document_details/0/documentKey"));

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
    ids.insert("matchId", match_id);
    ids.insert("custAccRequestID", custody);
    ids.insert("noteId", note_id);
    ids.insert("airequestId", ai_request);
    ids.insert("requestId", kyc_request);
    ids.insert("templateId", template_id);
    ids.insert("documentKey", document_key);
    Seeded { params: ids, kinds }
}

/// Where one parameter name means different records, the record of A's each operation reads
/// (operation, parameter, kind of [`Seeded::record`]).
const RECORD_OF: &[(&str, &str, &str)] = &[
    ("getAccountDocument", "documentId", "accountDocument"),
    ("deleteAccountDocument", "documentId", "accountDocument"),
    ("getPartyDocument", "documentId", "partyDocument"),
    ("deletePartyDocument", "documentId", "partyDocument"),
    ("getEntityDocument", "documentId", "entityDocument"),
    ("deleteEntityDocument", "documentId", "entityDocument"),
    ("getAiDocument", "documentId", "aiDocument"),
    // The entity operations take the entity's ID as `partyId`.
    ("getEntity", "partyId", "entityId"),
    ("updateEntity", "partyId", "entityId"),
    ("deleteEntity", "partyId", "entityId"),
    ("getEntityDocument", "partyId", "entityId"),
    ("deleteEntityDocument", "partyId", "entityId"),
    ("uploadEntityDocument", "partyId", "entityId"),
    // The investor with the manual KYC request (the account).
    ("updateKycAmlStatus", "partyId", "accountId"),
    // The documents requestUploadPartyDocument took, under the investor they are for.
    ("getuploadPartyDocument", "partyId", "accountId"),
    ("getuploadPartyDocument", "documentId", "requestedDocument"),
    ("deleteTradeDocument", "documentId", "tradeDocument"),
    ("deleteTradeDocument", "documentFileReferenceCode", "tradeDocumentRef"),
    (
        "updateTradeDocArchivestatus",
        "documentFileReferenceCode",
        "tradeDocumentRef",
    ),
    ("updateOfferingDocument", "documentId", "offeringDocument"),
    ("updateDocumentforOffering", "documentId", "offeringDocument"),
    ("deleteDocumentsforOffering", "documentId", "offeringDocument"),
    // sendNda's refNum, not a fund move's.
    ("updateNdaDocuSignStatus", "refNum", "ndaRefNum"),
];

/// Optional parameters left out: updateOfferingDocument checks an `offeringId` before the
/// document (the lookup to reach is the document's), and to sendNda and
/// createCustodyAgreementEsign a `templateId` is an e-signature template, not A's
/// subscription template.
const WITHOUT: &[(&str, &str)] = &[
    ("updateOfferingDocument", "offeringId"),
    ("updateDocumentforOffering", "offeringId"),
    ("sendNda", "templateId"),
    ("createCustodyAgreementEsign", "templateId"),
];

/// Valid values where operations disagree on a parameter (`type` is an account's kind, an
/// order's, a disbursement's or a KYC check's), or where an operation needs a whole record's.
fn valid_for(op: &str) -> &'static [(&'static str, &'static str)] {
    match op {
        "createAccount" | "updateAccount" => ACCOUNT,
        "createParty" => PARTY,
        "createEntity" => ENTITY,
        "createOffering" => OFFERING,
        "createOrder" => &[("type", "Limit")],
        "createCustodyFundDisbursement" => &[("type", "ach")],
        "getKycAmlResponse" => &[("type", "Basic")],
        "addDocumentsforOffering" => &[("documentFileReferenceCode", "B-REF-1")],
        _ => &[],
    }
}

/// Operations that take no ID of an existing record, so have no lookup to reach: they may
/// stop at their parameter checks. createParty, createEntity and createAccount get valid
/// values and answer B with its own new record; createIssuer is left without its
/// `issuerName`, since a new issuer's numeric ID could equal one of A's IDs of another kind
/// (every numeric kind counts from 100000), which the leak check would take for A's.
const NO_LOOKUP: &[&str] = &["createIssuer"];

/// Whether an answer stopped at the parameter checks: `106` for a parameter missing or
/// malformed (a `106` for an ID says that what it names does not exist).
fn stopped_at_params(r: &Resp) -> bool {
    r.code() == "106" && !r.desc().contains("does not exist")
}

/// A caller's own values where only a live one passes once the IDs are found.
pub(crate) struct Own {
    /// A template of the caller's e-signature account, `<templateId>--<templateName>`.
    template: String,
    /// A document URL that answers 200 (createCustodyAgreementAttestation fetches it), and
    /// the listener behind it.
    document: Listener,
}

/// `creds`' own template and a document URL that answers, so that an operation that found
/// the record its IDs name would go on and change it.
pub(crate) async fn own(t: &TestApp, creds: &Creds) -> Own {
    let r = t.form_as(creds, Method::POST, "fetchSubscriptionDocuments", &[]).await;
    Own {
        template: format!(
            "{}--{}",
            at(&r, "/document_details/0/templateId"),
            at(&r, "/document_details/0/name")
        ),
        document: Listener::start(200).await,
    }
}

/// The parameters for `op`: A's IDs, plausible values for the rest, and `op`'s own.
pub(crate) fn request<'a>(op: &str, a: &'a Seeded, b: &'a Own) -> Vec<(&'a str, &'a str)> {
    let mut pairs: Vec<(&str, &str)> = a.params.iter().map(|(k, v)| (*k, v.as_str())).collect();
    pairs.extend_from_slice(PLAUSIBLE);
    pairs.push(("documentUrl", &b.document.url));
    let mut own: Vec<(&str, &str)> = valid_for(op).to_vec();
    if matches!(op, "addSubscriptionsforOffering" | "updateSubscriptionsforOffering") {
        // An e-signature template, not an upload's file name.
        own.push(("file_name", &b.template));
    }
    own.extend(
        RECORD_OF
            .iter()
            .filter(|(o, ..)| *o == op)
            .map(|(_, name, kind)| (*name, a.record(kind))),
    );
    let mut pairs = with(&pairs, &own);
    pairs.retain(|(name, _)| !WITHOUT.contains(&(op, *name)));
    pairs
}

/// `v` without the signed URLs it carries (they expire, so differ from one read to the next).
fn without_urls(v: Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.into_iter()
                .filter(|(k, _)| !k.to_ascii_lowercase().ends_with("url"))
                .map(|(k, v)| (k, without_urls(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.into_iter().map(without_urls).collect()),
        v => v,
    }
}

/// A's records as A reads them, by read.
async fn snapshot(t: &TestApp, a: &Seeded) -> Vec<(&'static str, Value)> {
    let id = |k: &str| a.record(k);
    let reads: Vec<(&str, Vec<(&str, &str)>)> = vec![
        ("getAccount", vec![("accountId", id("accountId"))]),
        ("getParty", vec![("partyId", id("partyId"))]),
        ("getEntity", vec![("partyId", id("entityId"))]),
        ("getLink", vec![("id", id("id"))]),
        ("getIssuer", vec![("issuerId", id("issuerId"))]),
        ("getIssuerAccount", vec![("issuerId", id("issuerId"))]),
        ("getOffering", vec![("offeringId", id("offeringId"))]),
        ("getDocumentsforOffering", vec![("offeringId", id("offeringId"))]),
        ("getSubscriptionsforOffering", vec![("offeringId", id("offeringId"))]),
        ("getTradeStatus", vec![("tradeId", id("tradeId"))]),
        (
            "getTrade",
            vec![("accountId", id("accountId")), ("tradeId", id("tradeId"))],
        ),
        ("getAccountNotes", vec![("accountId", id("accountId"))]),
        ("getTradeNote", vec![("tradeId", id("tradeId"))]),
        ("getTradeDocument", vec![("tradeId", id("tradeId"))]),
        ("getTradeSignedDocument", vec![("tradeId", id("tradeId"))]),
        ("getExternalAccount", vec![("accountId", id("accountId"))]),
        (
            "getExternalFundMove",
            vec![("accountId", id("accountId")), ("RefNum", id("RefNum"))],
        ),
        ("getOrder", vec![("orderid", id("orderid"))]),
        ("getMatchedTrade", vec![("matchId", id("matchId"))]),
        ("getAccountDocument", vec![("accountId", id("accountId"))]),
        ("getPartyDocument", vec![("partyId", id("partyId"))]),
        ("getEntityDocument", vec![("partyId", id("entityId"))]),
        ("getuploadPartyDocument", vec![("partyId", id("accountId"))]),
        ("getAiRequest", vec![("accountId", id("accountId"))]),
        ("getAiDocument", vec![("accountId", id("accountId"))]),
    ];
    let mut out = Vec::new();
    for (op, pairs) in reads {
        let r = t.post(op, &pairs).await;
        code(&r, "101");
        out.push((op, without_urls(r.json)));
    }
    let r = t.get(&format!("/v3/custody/accounts/{}", id("accountId"))).await;
    out.push(("GET /v3/custody/accounts/{accountId}", r.json));
    // The envelopes of the subscription document and the NDA, as the operator reads them.
    for key in [id("documentKey"), id("ndaKey")] {
        let path = format!("/operator/clients/{}/esign/envelopes/{key}", t.client_id);
        let r = t.operator(Method::GET, &path, Value::Null).await;
        assert_eq!(r.status, 200, "{:?}", r.json);
        out.push(("envelope", without_urls(r.json)));
    }
    // The manual KYC request has no read of its own.
    let kyc = records::load::<KycRequest>(t.store(), &t.client_id, id("accountId"))
        .await
        .expect("the store answers")
        .expect("A's KYC request");
    out.push(("KYC request", serde_json::to_value(kyc.rec).expect("a record is JSON")));
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
    // Above the units A's trade holds, so updateOffering would pass.
    ("totalShares", "9000"),
    ("accountRegistration", "B"),
    ("firstEntryType", "Account"),
    ("relatedEntryType", "IndivACParty"),
    ("linkType", "owner"),
    ("custAccRequestStatus", "Pending"),
    ("tradeStatus", "CANCELED"),
    ("eligibleToClose", "yes"),
    ("transactionstatus", "Approved"),
    ("kycStatus", "Manually Approved"),
    // What a client may set (SIGNED is the signer's, refused before any lookup).
    ("esignStatus", "VOIDED"),
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
    // Above the share of A's buy already filled, so updateOrder would pass.
    ("quantity", "2"),
    ("price", "10"),
    ("action", "Sell"),
    ("expiration", "GTC"),
    ("disclosePrice", "Yes"),
    ("solicited", "Unsolicited"),
    // A security's own hours: one day's.
    ("mondayClosed", "yes"),
    // createIssuerAccount's required fields.
    ("companyName", "B Co"),
    ("companyState", "CO"),
    ("issuingCountry", "USA"),
    ("aiRequestStatus", "Approved"),
    ("requestStatus", "Need More Info"),
    ("templatename", "B's template"),
    // Uploads: the file B sends (`userfile0`) and its title and name.
    ("documentTitle", "B's file"),
    ("file_name", "filename0=b.pdf"),
    // updateKycAml's answers to the five questions.
    ("noOfqns", "5"),
    ("idNumber", "1234"),
    ("type1", "a"),
    ("qns1", "a"),
    ("type2", "a"),
    ("qns2", "a"),
    ("type3", "a"),
    ("qns3", "a"),
    ("type4", "a"),
    ("qns4", "a"),
    ("type5", "a"),
    ("qns5", "a"),
];

/// Whether `body` names one of A's IDs as a whole value.
fn leaks(body: &Value, ids: &BTreeSet<String>) -> Option<String> {
    match body {
        Value::String(s) => ids.get(s).cloned(),
        Value::Array(a) => a.iter().find_map(|v| leaks(v, ids)),
        Value::Object(m) => m.values().find_map(|v| leaks(v, ids)),
        _ => None,
    }
}

both!(another_clients_ids_reach_nothing, |t: TestApp| async move {
    let a = seed(&t).await;
    let ids = a.all();
    let before = snapshot(&t, &a).await;
    // The detector sees every one of A's own reads.
    for (read, r) in &before {
        assert!(leaks(r, &ids).is_some(), "{read}: {r}");
    }
    let b = t.new_client(json!({"scopes": ["*"]})).await;
    let routes = service::all_routes();
    let own = own(&t, &b).await;
    let file = pdf();
    let (mut answered, mut swept) = (0, 0);
    let mut stopped = BTreeMap::new();
    for op in routes.op_names() {
        swept += 1;
        let pairs = request(op, &a, &own);
        // An upload checks its files before the IDs: B sends one.
        let r = if routes.takes_files(&format!("/v3/{op}")) {
            t.multipart_as(&b, op, &pairs, &[("userfile0", "b.pdf", &file)]).await
        } else {
            t.form_as(&b, Method::POST, op, &pairs).await
        };
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
        if stopped_at_params(&r) {
            stopped.insert(op, r.desc().to_owned());
        }
    }
    assert!(swept > 150, "every operation: {swept}");
    assert!(answered > 0, "some operations answer B with its own (empty) data");
    // Every operation that takes an ID reached its lookup; the list of those that need not
    // is exact, so that it cannot grow unnoticed.
    let names: Vec<&str> = stopped.keys().copied().collect();
    assert_eq!(names, NO_LOOKUP, "stopped at their parameters: {stopped:#?}");
    for (verb, pattern) in routes.resource_routes() {
        let mut path = pattern.clone();
        for (name, value) in &a.params {
            path = path.replace(&format!("{{{name}}}"), value);
        }
        if path == pattern {
            // A list: B's answer names none of A's records.
            if verb == Method::GET {
                let r = t.get_as(&b, &path).await;
                // B's own page, or none when B has none of the kind (offset 0 of 0: `239`).
                let answered = (r.status, r.code());
                assert!(
                    answered == (200, "101") || answered == (422, "239"),
                    "{path}: {:?}",
                    r.json
                );
                assert_eq!(leaks(&r.json, &ids), None, "{path} listed A's: {:?}", r.json);
            }
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
    assert_eq!(snapshot(&t, &a).await, before, "A's records are as they were");
});
