//! The parameters the OpenAPI document gives each method-style operation
//! (`functions/service/parameters.json`), found from the code: client A, who holds a record
//! of every kind (the isolation sweep's), calls every operation with every parameter, and
//! each one the handler reads is noted with what it was read as. The required ones are found
//! by sending none and adding back, one at a time, the one a `106` names missing (parameters
//! are checked before anything is looked up or written, CONTRACT "Order of checks").
//!
//! After a change to what an operation reads, rewrite the file with
//! `IPS_WRITE_PARAMETERS=1 tests/run.sh -p api-tests --test api -- documented_parameters`.

use std::collections::BTreeMap;

use api_tests::{both, Resp, TestApp};
use serde_json::{json, Value};
use shared::http::params::{recording, Read};

use crate::isolation::{own, pdf, request, seed};

const FILE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../functions/service/parameters.json");

both!(
    documented_parameters_are_what_the_handlers_read,
    |t: TestApp| async move {
        let t = t.without_cost_log();
        let a = seed(&t).await;
        let own = own(&t, &t.creds()).await;
        let routes = service::all_routes();
        let file = pdf();
        let mut table = BTreeMap::new();
        // Reads before writes, and last what ends a record's life (deleting, archiving,
        // cancelling, closing): each operation reaches as much of its code as it can.
        let mut ops = routes.op_names();
        ops.sort_by_key(|op| match op {
            o if ["get", "search", "fetch"].iter().any(|p| o.starts_with(p)) => 0,
            o if ENDS.contains(o) => 3,
            o if o.starts_with("delete") => 2,
            _ => 1,
        });
        for op in ops {
            let takes_files = routes.takes_files(&format!("/v3/{op}"));
            let mut all = request(op, &a, &own);
            // What the sweep leaves out (see isolation's NO_LOOKUP) or names otherwise.
            match op {
                "createIssuer" => all.extend([
                    ("issuerName", "A's issuer"),
                    ("firstName", "Ada"),
                    ("lastName", "Stone"),
                    ("email", "ada@example.com"),
                    ("phoneNumber", "5551234567"),
                ]),
                "createEntitySupp" | "updateEntitySupp" => all.push(("entityID", a.record("entityId"))),
                _ => {}
            }
            let (mut reads, mut required) = explore(&t, op, takes_files, &all, &file).await;
            // Operations whose parameters differ by case: every case's reads are documented,
            // and only what every case requires is required.
            for case in cases(op, &a) {
                let mut pairs = all.clone();
                pairs.retain(|(n, _)| !case.iter().any(|(c, _)| c == n));
                pairs.extend(case.iter().copied());
                let (more, needed) = explore(&t, op, takes_files, &pairs, &file).await;
                for (name, how) in more {
                    let seen = reads.entry(name).or_insert(how);
                    *seen = (*seen).max(how);
                }
                required.retain(|n| needed.contains(n));
            }
            let types: BTreeMap<String, &str> = reads
                .into_iter()
                .map(|(name, how)| {
                    let ty = match how {
                        Read::Any => "any",
                        Read::Text => "string",
                        Read::Integer => "integer",
                    };
                    (name, ty)
                })
                .collect();
            let files: Vec<&String> = required.iter().filter(|n| !types.contains_key(*n)).collect();
            table.insert(
                op.to_owned(),
                json!({"parameters": types, "required": required, "files": files}),
            );
        }
        let found = serde_json::to_string_pretty(&table).expect("a table of names serializes") + "\n";
        if std::env::var_os("IPS_WRITE_PARAMETERS").is_some() {
            std::fs::write(FILE, &found).expect("the parameters file");
            return;
        }
        let committed: BTreeMap<String, Value> =
            serde_json::from_str(&std::fs::read_to_string(FILE).expect("the parameters file"))
                .expect("the parameters file is JSON");
        let changed: std::collections::BTreeSet<&String> = table
            .keys()
            .chain(committed.keys())
            .filter(|op| table.get(*op) != committed.get(*op))
            .collect();
        assert!(
            changed.is_empty(),
            "the parameters these operations read differ from {FILE} (rewrite it as the module \
         says): {changed:?}"
        );
    }
);

/// What `op` reads when sent `all`, and what it requires, in the order its checks name them
/// (found by sending none and adding back, one at a time, the one a `106` names missing).
async fn explore(
    t: &TestApp,
    op: &str,
    takes_files: bool,
    all: &[(&str, &str)],
    file: &[u8],
) -> (BTreeMap<String, Read>, Vec<String>) {
    let first_file = if takes_files {
        vec!["userfile0".to_owned()]
    } else {
        vec![]
    };
    let (_, mut reads) = call(t, op, takes_files, all, &first_file, file).await;
    let (mut sent, mut files, mut required) = (Vec::new(), Vec::new(), Vec::new());
    loop {
        let (r, more) = call(t, op, takes_files, &sent, &files, file).await;
        for (name, how) in more {
            let seen = reads.entry(name).or_insert(how);
            *seen = (*seen).max(how);
        }
        let Some(name) = missing(&r) else { break };
        assert!(!required.contains(&name), "{op} names {name} missing once it is sent");
        required.push(name.clone());
        match all.iter().find(|(n, _)| *n == name) {
            Some(pair) => sent.push(*pair),
            None if takes_files => files.push(name),
            None => panic!("{op}: {name} is required and the test has no value for it"),
        }
    }
    (reads, required)
}

/// The other cases of an operation whose parameters depend on a value: the pairs that make
/// each case, over the sweep's.
fn cases<'a>(op: &str, a: &'a crate::isolation::Seeded) -> Vec<Vec<(&'a str, &'a str)>> {
    match op {
        "createExternalAccount" | "updateExternalAccount" | "deleteExternalAccount" | "getExternalAccount" => {
            vec![vec![("types", "Issuer"), ("issuerId", a.record("issuerId"))]]
        }
        "createCustodyFundDisbursement" => vec![vec![
            ("type", "wire_domestic"),
            ("bankId", "B-1"),
            ("bankAccountId", "BA-1"),
        ]],
        "getCustodyFundDisbursements" => vec![vec![("offset", "0"), ("limit", "1")]],
        _ => Vec::new(),
    }
}

/// The operations that end a record's life without `delete` in their names.
const ENDS: &[&str] = &[
    "cancelInvestment",
    "cancelOffering",
    "cancelOrder",
    "closeOffering",
    "fundReturnRequest",
    "requestForVoidACH",
    "updateAccountArchiveStatus",
    "updateAccountArchivestatus",
    "updatePartyEntityArchivestatus",
    "updateTradeArchivestatus",
    "updateTradeStatus",
];

/// Calls `op` as the test's client with `pairs`, and `files` (each the same PDF) as
/// multipart when it takes files, noting what its handler reads.
async fn call(
    t: &TestApp,
    op: &str,
    takes_files: bool,
    pairs: &[(&str, &str)],
    files: &[String],
    file: &[u8],
) -> (Resp, BTreeMap<String, Read>) {
    let (r, reads) = if takes_files {
        let files: Vec<(&str, &str, &[u8])> = files.iter().map(|f| (f.as_str(), "a.pdf", file)).collect();
        recording(t.multipart(op, pairs, &files)).await
    } else {
        recording(t.post(op, pairs)).await
    };
    assert!(r.status < 500, "{op}: {} {:?}", r.status, r.json);
    (r, reads)
}

/// The parameter a `106` says is missing.
fn missing(r: &Resp) -> Option<String> {
    let name = r.json["Error(s)"].as_str()?.strip_suffix(" : Missing")?;
    (r.code() == "106").then(|| name.to_owned())
}
