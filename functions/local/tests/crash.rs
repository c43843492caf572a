//! Crash safety of the embedded store, over real HTTP: the local API is killed with SIGKILL
//! at a random moment while writers create parties, five times. After every restart each
//! acknowledged party is there, and nothing half-written is: the client's party counter
//! (written in the same transaction as the party) equals the parties a full listing finds.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;

mod common;
use common::{start, KEY};

const WRITERS: usize = 8;
const ROUNDS: usize = 5;

/// Acknowledged parties: ID and the first name sent.
type Acked = Arc<Mutex<Vec<(String, String)>>>;

async fn writer(base: String, name: String, acked: Acked) {
    let http = reqwest::Client::new();
    for n in 0.. {
        let first = format!("{name}n{n}");
        let form = format!(
            "firstName={first}&lastName=Crash&dob=01-02-1980&primCountry=USA&primAddress1=1+Main\
             &primCity=Austin&primState=TX&primZip=78701&emailAddress=c%40example.com"
        );
        let sent = http
            .put(format!("{base}/v3/createParty"))
            .header("authorization", format!("Bearer local-test:{KEY}"))
            .body(form)
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

async fn get(http: &reqwest::Client, url: String) -> Value {
    http.get(url)
        .header("authorization", format!("Bearer local-test:{KEY}"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

/// Every acknowledged party reads back as sent, and the counter matches the listing.
async fn verify(base: &str, acked: &[(String, String)]) {
    let http = reqwest::Client::new();
    for (id, first) in acked {
        let body = get(&http, format!("{base}/v3/parties/{id}")).await;
        assert_eq!(body["statusCode"], "101", "acknowledged party {id} lost: {body}");
        assert_eq!(body["party"]["firstName"], first.as_str(), "{body}");
    }
    let (mut listed, mut total) = (0, None);
    loop {
        let body = get(&http, format!("{base}/v3/parties?limit=500&offset={listed}")).await;
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
    let dir = std::env::temp_dir().join(format!("ips-crash-{}", uuid::Uuid::new_v4()));
    let env = [("IPS_DATA_DIR", dir.display().to_string())];
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
