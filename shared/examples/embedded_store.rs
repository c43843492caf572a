//! Measures the embedded store on disk: the start-up integrity check at a given size, the
//! memory it holds after opening, and write throughput with 1 and 32 concurrent writers.
//!
//! `cargo run --release -p shared --example embedded_store -- [RECORDS]` (default 100000).

use std::sync::Arc;
use std::time::{Duration, Instant};

use shared::store::embedded::EmbeddedStore;
use shared::store::{Cond, Item, Key, Store, Val, Write};

/// A party-sized record: about twenty attributes, two index entries.
fn record(n: usize) -> Item {
    let mut i = Key::new("client-1#party", format!("P{n:09}")).item();
    for (a, v) in [
        ("gsi1pk", "client-1#parties".to_owned()),
        ("gsi1sk", format!("2026-11-25T00:00:00Z#P{n:09}")),
        ("gsi2pk", "client-1#parties-by-name".to_owned()),
        ("gsi2sk", format!("lee#ann#P{n:09}")),
        ("firstName", "Ann".to_owned()),
        ("lastName", format!("Lee{n}")),
        ("dob", "01-02-1980".to_owned()),
        ("primCountry", "USA".to_owned()),
        ("primAddress1", "1 Main Street".to_owned()),
        ("primCity", "Austin".to_owned()),
        ("primState", "TX".to_owned()),
        ("primZip", "78701".to_owned()),
        ("emailAddress", format!("ann{n}@example.com")),
        ("phone", "5125550100".to_owned()),
        ("occupation", "Engineer".to_owned()),
        ("KYCstatus", "Pending".to_owned()),
        ("AMLstatus", "Pending".to_owned()),
        ("createdDate", "2026-11-25 10:00:00".to_owned()),
        ("updatedDate", "2026-11-25 10:00:00".to_owned()),
    ] {
        i.insert(a.into(), Val::S(v));
    }
    i.insert("v".into(), Val::from(1));
    i
}

/// The process's CPU time so far (user + system), in seconds.
fn cpu_secs() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command name (which ends with ')'): utime and stime are the 12th and 13th.
    let fields: Vec<&str> = stat.rsplit(')').next().unwrap_or("").split_whitespace().collect();
    let ticks = |i: usize| fields.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (ticks(11) + ticks(12)) / 100.0
}

fn rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kib: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0.0);
    kib / 1024.0
}

/// Single-record writes by `writers` concurrent tasks for `for_how_long`: writes per second.
async fn throughput(store: &Arc<EmbeddedStore>, writers: usize, first: usize, for_how_long: Duration) -> f64 {
    let until = Instant::now() + for_how_long;
    let tasks: Vec<_> = (0..writers)
        .map(|w| {
            let store = store.clone();
            tokio::spawn(async move {
                let mut n = 0;
                while Instant::now() < until {
                    let item = record(first + w * 1_000_000 + n);
                    let put = Write::Put {
                        item,
                        cond: Some(Cond::NotExists),
                    };
                    store.write(vec![put]).await.expect("a write");
                    n += 1;
                }
                n
            })
        })
        .collect();
    let mut done = 0;
    for t in tasks {
        done += t.await.expect("a writer");
    }
    done as f64 / for_how_long.as_secs_f64()
}

#[tokio::main]
async fn main() {
    let records: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(100_000);
    let dir = std::env::temp_dir().join(format!("ips-store-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temp dir");
    let path = dir.join("store.redb");
    {
        let store = EmbeddedStore::open(&path).expect("a new store");
        let started = Instant::now();
        for chunk in (0..records).collect::<Vec<_>>().chunks(50) {
            let writes = chunk.iter().map(|&n| Write::Put {
                item: record(n),
                cond: None,
            });
            store.write(writes.collect()).await.expect("a fill");
        }
        println!("filled {records} records in {:.1} s", started.elapsed().as_secs_f64());
    }
    let size = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    let before = rss_mib();
    let started = Instant::now();
    let store = Arc::new(EmbeddedStore::open(&path).expect("the store reopens"));
    println!(
        "open + integrity check of {records} records ({:.0} MiB file): {} ms; RSS {before:.0} -> {:.0} MiB",
        size as f64 / (1 << 20) as f64,
        started.elapsed().as_millis(),
        rss_mib()
    );
    for writers in [1, 32] {
        let cpu = cpu_secs();
        let rate = throughput(&store, writers, records + writers * 100_000_000, Duration::from_secs(2)).await;
        let per_write = (cpu_secs() - cpu) / (rate * 2.0) * 1e6;
        println!("{writers:>2} concurrent writers: {rate:.0} single-record writes/s, {per_write:.0} µs CPU each");
    }
    drop(store);
    std::fs::remove_dir_all(&dir).ok();
}
