//! The README's run command, end to end over real HTTP: the local API serves, persists, and
//! delivers webhooks after its responses, on the embedded store and on DynamoDB + SQS.

use std::time::Duration;

use api_tests::Listener;
use serde_json::{json, Value};

mod common;
use api_tests::params::PARTY;
use common::{answer, find, start, Api, KEY};

/// Sends raw bytes on a new connection and reads until the server answers and closes, or
/// 10 s pass: the text received.
async fn raw_exchange(base: &str, bytes: &[u8]) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(base.trim_start_matches("http://"))
        .await
        .unwrap();
    stream.write_all(bytes).await.unwrap();
    let mut out = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut out)).await;
    assert!(
        read.is_ok(),
        "the server let a stalled request hang: {:?}",
        String::from_utf8_lossy(&out)
    );
    String::from_utf8_lossy(&out).into_owned()
}

/// The probes of issue 11 that need real HTTP: bodies over the limit whatever their content
/// type, and requests that do not arrive in time (the server runs with a 2 s read timeout).
async fn probe_limits_and_timeouts(base: &str, auth: &str) {
    let http = reqwest::Client::new();
    // Only multipart/form-data is an upload: any other multipart type keeps the 1 MiB limit.
    let resp = http
        .put(format!("{base}/v3/createParty"))
        .header("authorization", auth)
        .header("content-type", "multipart/mixed; boundary=x")
        .body(vec![b'a'; 2 << 20])
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 413);
    // Nor does multipart/form-data, except to an operation that takes files.
    let big_form = |op: &str| {
        let mut body = b"--x\r\nContent-Disposition: form-data; name=\"notes\"\r\n\r\n".to_vec();
        body.extend(vec![b'a'; 2 << 20]);
        body.extend_from_slice(b"\r\n--x--\r\n");
        // A connection of its own: the server closes one whose body it refused unread.
        reqwest::Client::new()
            .post(format!("{base}/v3/{op}"))
            .header("authorization", auth)
            .header("content-type", "multipart/form-data; boundary=x")
            .body(body)
            .send()
    };
    assert_eq!(big_form("createParty").await.unwrap().status(), 413);
    let upload = big_form("uploadPartyDocument").await.unwrap();
    assert_ne!(upload.status(), 413, "uploads take 50 MiB");

    // A body that stops short of its Content-Length: 408 / 1408, never started.
    let started = std::time::Instant::now();
    let head = format!(
        "PUT /v3/createParty HTTP/1.1\r\nhost: x\r\nauthorization: {auth}\r\n\
         content-type: application/x-www-form-urlencoded\r\ncontent-length: 1000000\r\n\r\nfirstName=A"
    );
    let answer = raw_exchange(base, head.as_bytes()).await;
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("\"1408\""), "{answer}");
    assert!(started.elapsed() < Duration::from_secs(8));

    // Headers that never end: the connection is closed.
    let answer = raw_exchange(base, b"GET /v3/ping HTTP/1.1\r\nhost: x\r\nx-slow: ").await;
    assert!(!answer.contains("200 OK"), "{answer}");
}

/// Bodies in flight share `IPS_BODY_MEMORY_MB` (50 here): an upload that stalls holding
/// nearly all of it leaves small requests served, and makes a larger body wait for memory
/// until the stalled one is answered 408 at its read timeout. Memory stays bounded however
/// many senders stall.
async fn probe_body_memory(base: &str, auth: &str) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stalled = tokio::net::TcpStream::connect(base.trim_start_matches("http://"))
        .await
        .unwrap();
    let head = format!(
        "POST /v3/uploadPartyDocument HTTP/1.1\r\nhost: x\r\nauthorization: {auth}\r\n\
         content-type: multipart/form-data; boundary=x\r\ncontent-length: 52400000\r\n\r\n"
    );
    stalled.write_all(head.as_bytes()).await.unwrap();
    let chunk = vec![b'a'; 1 << 20];
    let mut sent = 0;
    while sent < 52_000_000 {
        let n = chunk.len().min(52_000_000 - sent);
        stalled.write_all(&chunk[..n]).await.unwrap();
        sent += n;
    }
    // What the socket still buffers is not yet the server's: let it read the rest.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let timed_out = tokio::spawn(async move {
        let mut out = Vec::new();
        let _ = tokio::time::timeout(Duration::from_secs(10), stalled.read_to_end(&mut out)).await;
        (std::time::Instant::now(), String::from_utf8_lossy(&out).into_owned())
    });
    let party = |extra: &str| {
        let body = format!("{}{extra}", serde_urlencoded::to_string(PARTY).unwrap());
        reqwest::Client::new()
            .put(format!("{base}/v3/createParty"))
            .header("authorization", auth)
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body)
            .send()
    };
    let small = party("").await.unwrap();
    let small_at = std::time::Instant::now();
    assert_eq!(small.status(), 200);
    // An unknown parameter is ignored (CONTRACT): only the body is large, not the record.
    let large = party(&format!("&padding={}", "n".repeat(600_000))).await.unwrap();
    let large_at = std::time::Instant::now();
    assert_eq!(large.status(), 200);
    let (stalled_at, answer) = timed_out.await.unwrap();
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(small_at < stalled_at, "a small body is served while the upload stalls");
    assert!(
        stalled_at <= large_at,
        "a large one waits for the memory the upload held"
    );
}

async fn scenario(mut env: Vec<(&str, String)>) {
    env.push(("IPS_READ_TIMEOUT_SECS", "2".into()));
    env.push(("IPS_BODY_MEMORY_MB", "50".into()));
    let http = reqwest::Client::new();
    let server = start(&env).await;
    let api = Api::new(&server.base);
    let auth = format!("Bearer local-test:{KEY}");
    assert_eq!(api.get("/v3/ping").await["status"], "ok");

    let mut hook = Listener::start(200).await;
    api.register("createParty", &hook.url).await;
    let body = api.call(reqwest::Method::PUT, "createParty", PARTY).await;
    let id = find(&body, "partyId").unwrap();
    let got = hook.next(5).await.expect("webhook delivered by the local API");
    assert_eq!(got.body, format!("partyId={id}&KYCstatus=&AMLstatus="));

    // A document: uploaded as multipart, its signed URL read back over HTTP without
    // credentials (the local API serves it under /blobs/, or S3 does), tampering refused.
    let pdf: Vec<u8> = b"%PDF-1.4\n"
        .iter()
        .copied()
        .chain((0..2000u32).map(|i| (i % 251) as u8))
        .collect();
    let (content_type, multipart) = api_tests::multipart_body(
        &[("partyId", &id), ("documentTitle", "documentTitle0=Passport")],
        &[("userfile0", "passport.pdf", &pdf)],
    );
    let body: Value = api
        .request(reqwest::Method::POST, "/v3/uploadPartyDocument")
        .header("content-type", content_type)
        .body(multipart)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(body["statusCode"], "101", "{body}");
    let body = api
        .call(reqwest::Method::POST, "getPartyDocument", &[("partyId", id.as_str())])
        .await;
    let doc_url = body["partyDocumentDetails"][0]["documentUrl"]
        .as_str()
        .unwrap()
        .to_owned();
    let old_base = server.base.clone();
    let local_blobs = doc_url.starts_with(&old_base);
    let resp = http.get(&doc_url).send().await.unwrap();
    assert_eq!(resp.status(), 200, "{doc_url}");
    assert_eq!(resp.bytes().await.unwrap().as_ref(), pdf.as_slice());
    if local_blobs {
        let bad = doc_url.replace("signature=", "signature=0");
        assert_eq!(http.get(&bad).send().await.unwrap().status(), 403);
    }

    // A large document: an upload URL from POST /v3/documents/uploads takes 8 MB with one
    // PUT over HTTP (streamed to the local directory, or to S3), then stands in for the file.
    let new_upload = api.request(reqwest::Method::POST, "/v3/documents/uploads");
    let slot = answer(new_upload.json(&json!({"fileName": "statement.pdf"}))).await;
    let details = &slot["uploadDetails"];
    let large: Vec<u8> = (0..8_000_000u32).map(|i| (i % 253) as u8).collect();
    let put_url = details["uploadUrl"].as_str().unwrap();
    let put = http.put(put_url).body(large.clone()).send().await.unwrap();
    assert_eq!(put.status(), 200, "{slot}");
    let upload = details["uploadId"].as_str().unwrap();
    api.call(
        reqwest::Method::POST,
        "uploadPartyDocument",
        &[("partyId", &id), ("documentTitle", "Statement"), ("uploadId0", upload)],
    )
    .await;
    let body = api
        .call(reqwest::Method::POST, "getPartyDocument", &[("partyId", id.as_str())])
        .await;
    let large_url = body["partyDocumentDetails"][1]["documentUrl"].as_str().unwrap();
    let resp = http.get(large_url).send().await.unwrap();
    assert_eq!(resp.status(), 200, "{large_url}");
    assert!(resp.bytes().await.unwrap().as_ref() == large.as_slice());
    if local_blobs {
        // A read URL does not write.
        assert_eq!(http.put(&doc_url).body("x").send().await.unwrap().status(), 403);
    }

    // Bodies over 1 MiB are refused with 413 before anything is parsed or written.
    let big = "x".repeat(1 << 20);
    let resp = api
        .request(reqwest::Method::PUT, "/v3/createParty")
        .form(&[PARTY, &[("notes", big.as_str())]].concat())
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 413);
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["statusCode"], "106");
    // Invalid UTF-8 over real HTTP is a clean 106, not a failure.
    let resp = api
        .request(reqwest::Method::PUT, "/v3/createParty")
        .body(vec![b'f', b'=', 0xff, 0xfe])
        .send()
        .await
        .unwrap();
    assert_eq!(
        (
            resp.status().as_u16(),
            resp.json::<Value>().await.unwrap()["statusCode"].clone()
        ),
        (404, json!("106"))
    );

    probe_limits_and_timeouts(&server.base, &auth).await;

    // The data outlives the process.
    drop(server);
    let server = start(&env).await;
    let list = Api::new(&server.base).get("/v3/parties").await;
    assert_eq!(list["parties"][0]["partyId"], id.as_str(), "{list}");
    // A URL handed out before the restart still reads (the local signing secret persists;
    // the restarted server listens on another port).
    let doc_url = doc_url.replacen(&old_base, &server.base, 1);
    let resp = http.get(&doc_url).send().await.unwrap();
    assert_eq!(resp.status(), 200, "{doc_url}");
    assert_eq!(resp.bytes().await.unwrap().as_ref(), pdf.as_slice());
    probe_body_memory(&server.base, &auth).await;
}

#[tokio::test]
async fn serves_persists_and_delivers_on_the_embedded_store() {
    let dir = std::env::temp_dir().join(format!("ips-local-{}", uuid::Uuid::new_v4().simple()));
    scenario(vec![("IPS_DATA_DIR", dir.display().to_string())]).await;
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn serves_persists_and_delivers_on_dynamodb_and_sqs() {
    assert!(
        std::env::var("AWS_ENDPOINT_URL").is_ok(),
        "needs moto's server: run tests/run.sh"
    );
    let name = format!("local-{}", uuid::Uuid::new_v4().simple());
    scenario(vec![
        ("IPS_STORE", "dynamodb".into()),
        ("IPS_TABLE", name.clone()),
        ("IPS_WEBHOOK_QUEUE", name.clone()),
        ("IPS_BUCKET", name),
    ])
    .await;
}
