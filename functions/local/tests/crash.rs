//! What survives a crash or a disconnect, over real HTTP against the local API's binary:
//! - the embedded store: killed with SIGKILL at a random moment while writers create parties,
//!   five times; after every restart each acknowledged party is there, and nothing
//!   half-written is (the party counter, written in the same transaction as the party,
//!   equals the parties a full listing finds);
//! - webhooks: killed between the `101` and the delivery, the webhook arrives after the
//!   restart, once;
//! - a request whose client disconnects runs to its end, webhook included.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use api_tests::Listener;
use serde_json::Value;

mod common;
use api_tests::params::{with, ACCOUNT, ISSUER, OFFERING, PARTY};
use common::{find, start, Api, KEY};

const WRITERS: usize = 8;
const ROUNDS: usize = 5;

/// Acknowledged parties: ID and the first name sent.
type Acked = Arc<Mutex<Vec<(String, String)>>>;

async fn writer(base: String, name: String, acked: Acked) {
    let api = Api::new(&base);
    for n in 0.. {
        let first = format!("{name}n{n}");
        let mut form = PARTY.to_vec();
        form[0] = ("firstName", &first);
        let sent = api
            .request(reqwest::Method::PUT, "/v3/createParty")
            .form(&form)
            .send()
            .await;
        // Once the server is gone, every request fails: the round is over for this writer.
        let Ok(resp) = sent else { return };
        let Ok(body) = resp.json::<Value>().await else { return };
        assert_eq!(body["statusCode"], "101", "{body}");
        let id = body["partyDetails"][1][0]["partyId"].as_str().unwrap().to_owned();
        acked.lock().unwrap().push((id, first));
    }
}

/// Every acknowledged party reads back as sent, and the counter matches the listing.
async fn verify(base: &str, acked: &[(String, String)]) {
    let api = Api::new(base);
    for (id, first) in acked {
        let body = api.get(&format!("/v3/parties/{id}")).await;
        assert_eq!(body["statusCode"], "101", "acknowledged party {id} lost: {body}");
        assert_eq!(body["party"]["firstName"], first.as_str(), "{body}");
    }
    let (mut listed, mut total) = (0, None);
    loop {
        let body = api.get(&format!("/v3/parties?limit=500&offset={listed}")).await;
        if body["statusCode"] != "101" {
            break;
        }
        total = body["pagination"]["totalRecords"].as_u64();
        let page = body["parties"].as_array().unwrap().len();
        listed += page;
        if page < 500 {
            break;
        }
    }
    assert!(listed >= acked.len());
    if listed > 0 {
        assert_eq!(total, Some(listed as u64), "the counter and the parties disagree");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acknowledged_writes_survive_kill_9_at_random_moments() {
    let (dir, env) = temp_env();
    let acked: Acked = Arc::default();
    for round in 0..ROUNDS {
        let mut server = start(&env).await;
        let so_far = acked.lock().unwrap().clone();
        verify(&server.base, &so_far).await;
        let writers: Vec<_> = (0..WRITERS)
            .map(|w| tokio::spawn(writer(server.base.clone(), format!("R{round}w{w}"), acked.clone())))
            .collect();
        let delay = 300 + (uuid::Uuid::new_v4().as_u128() % 900) as u64;
        tokio::time::sleep(Duration::from_millis(delay)).await;
        server.child.kill().unwrap();
        server.child.wait().unwrap();
        for w in writers {
            w.await.unwrap();
        }
        let now = acked.lock().unwrap().len();
        assert!(now > so_far.len(), "round {round} acknowledged nothing before the kill");
    }
    let server = start(&env).await;
    let all = acked.lock().unwrap().clone();
    verify(&server.base, &all).await;
    drop(server);
    std::fs::remove_dir_all(&dir).ok();
}

fn temp_env() -> (std::path::PathBuf, [(&'static str, String); 1]) {
    let dir = std::env::temp_dir().join(format!("ips-crash-{}", uuid::Uuid::new_v4()));
    let env = [("IPS_DATA_DIR", dir.display().to_string())];
    (dir, env)
}

/// A form field of a webhook body.
fn field(body: &str, name: &str) -> Option<String> {
    serde_urlencoded::from_str::<Vec<(String, String)>>(body)
        .ok()?
        .into_iter()
        .find_map(|(k, v)| (k == name).then_some(v))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhooks_survive_kill_9_between_the_101_and_the_delivery() {
    let (dir, env) = temp_env();
    let mut hook = Listener::start(200).await;
    // The receiver hangs: eight deliveries wait on it (eight per host at a time), the ninth
    // waits its turn; the kill comes well within the five seconds a delivery may take.
    hook.set_stalled(true);
    let mut server = start(&env).await;
    let api = Api::new(&server.base);
    api.register("createParty", &hook.url).await;
    let mut ids = Vec::new();
    for _ in 0..9 {
        let body = api.call(reqwest::Method::PUT, "createParty", PARTY).await;
        ids.push(find(&body, "partyId").unwrap());
    }
    server.child.kill().unwrap();
    server.child.wait().unwrap();

    hook.set_stalled(false);
    let _server = start(&env).await;
    let mut got = Vec::new();
    while got.len() < ids.len() {
        let Some(r) = hook.next(15).await else { break };
        got.push(field(&r.body, "partyId").unwrap());
    }
    assert!(hook.next(2).await.is_none(), "a webhook arrived twice");
    got.sort();
    ids.sort();
    assert_eq!(got, ids, "every webhook arrives after the restart, once");
    std::fs::remove_dir_all(&dir).ok();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_runs_to_its_end_when_the_client_disconnects() {
    use tokio::io::AsyncWriteExt;
    let (dir, env) = temp_env();
    let server = start(&env).await;
    let base = server.base.as_str();
    let api = Api::new(base);
    let mut hook = Listener::start(200).await;
    api.register("createTrade", &hook.url).await;
    let create = async |op: &str, form: &[(&str, &str)], id: &str| {
        find(&api.call(reqwest::Method::PUT, op, form).await, id).unwrap()
    };
    let issuer = create("createIssuer", ISSUER, "issuerId").await;
    let offering = with(OFFERING, &[("issuerId", issuer.as_str())]);
    let offering = create("createOffering", &offering, "offeringId").await;
    let account = create("createAccount", ACCOUNT, "accountId").await;
    let party = create("createParty", PARTY, "partyId").await;
    let link = [
        ("firstEntryType", "Account"),
        ("firstEntry", account.as_str()),
        ("relatedEntryType", "IndivACParty"),
        ("relatedEntry", party.as_str()),
        ("linkType", "owner"),
        ("primary_value", "1"),
    ];
    create("createLink", &link, "id").await;

    // The whole request is sent, then the connection is closed before any answer.
    let form = format!("accountId={account}&offeringId={offering}&transactionType=ACH&transactionUnits=5");
    let request = format!(
        "POST /v3/createTrade HTTP/1.1\r\nhost: local\r\nauthorization: Bearer local-test:{KEY}\r\n\
         content-type: application/x-www-form-urlencoded\r\ncontent-length: {}\r\n\r\n{form}",
        form.len()
    );
    let mut stream = tokio::net::TcpStream::connect(base.trim_start_matches("http://"))
        .await
        .unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    drop(stream);

    let delivered = hook.next(10).await.expect("the trade's webhook is delivered");
    let trade = field(&delivered.body, "tradeId").expect("a trade ID in the webhook");
    let got = api
        .call(
            reqwest::Method::POST,
            "getTrade",
            &[("accountId", account.as_str()), ("tradeId", trade.as_str())],
        )
        .await;
    assert_eq!(find(&got, "offeringId").as_deref(), Some(offering.as_str()), "{got}");
    drop(server);
    std::fs::remove_dir_all(&dir).ok();
}
