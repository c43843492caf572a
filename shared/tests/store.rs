//! The storage port's contract: every case runs against the embedded adapter and against
//! DynamoDB (moto's server in development and CI, reached through `AWS_ENDPOINT_URL`).

use std::str::FromStr;
use std::sync::Arc;

use futures_util::future::join_all;
use rust_decimal::Decimal;
use shared::store::dynamo::DynamoStore;
use shared::store::embedded::EmbeddedStore;
use shared::store::{
    eval_cond, CmpOp, Cond, Index, Item, Key, Query, SkRange, Store, StoreError, Update, Val, Write,
    MAX_TRANSACTION_WRITES,
};

type Shared = Arc<dyn Store>;

async fn embedded_store() -> Shared {
    Arc::new(EmbeddedStore::in_memory())
}

/// A DynamoDB store on a fresh table of its own.
async fn dynamodb_store() -> Shared {
    Arc::new(fresh_dynamo_store().await)
}

async fn fresh_dynamo_store() -> DynamoStore {
    let table = format!("t-{}", uuid::Uuid::new_v4());
    let store = dynamo_store_on(table).await;
    if let Err(e) = store.ensure_table().await {
        panic!("creating table {}: {e}", store.table());
    }
    store
}

async fn dynamo_store_on(table: String) -> DynamoStore {
    if std::env::var("AWS_ENDPOINT_URL").map_or(true, |v| v.is_empty()) {
        panic!(
            "AWS_ENDPOINT_URL is not set: the DynamoDB variants of the store tests need a \
             DynamoDB endpoint. Run the tests through `tests/run.sh` (it starts \
             moto's server and sets the environment), or start `moto_server -p 5000` and set \
             AWS_ENDPOINT_URL=http://127.0.0.1:5000 AWS_REGION=us-east-1 \
             AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test AWS_EC2_METADATA_DISABLED=true"
        );
    }
    let config = shared::aws::sdk_config().expect("the AWS environment");
    DynamoStore::new(aws_sdk_dynamodb::Client::new(&config), table)
}

/// Writes each case once as an `async fn(Shared)` and runs it on both adapters:
/// `case::embedded` and `case::dynamodb`.
macro_rules! contract {
    ($($case:ident),* $(,)?) => {$(
        mod $case {
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn embedded() {
                super::$case(super::embedded_store().await).await
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn dynamodb() {
                super::$case(super::dynamodb_store().await).await
            }
        }
    )*};
}

contract!(
    put_then_get_round_trips_every_value_kind,
    put_replaces_the_whole_item,
    conditional_put_on_an_existing_item_fails_and_writes_nothing,
    conditional_delete_removes_only_when_the_condition_holds,
    update_conditions_compare_numbers_strings_and_booleans,
    update_returns_the_item_as_it_is_after_the_update,
    add_treats_a_missing_attribute_as_zero,
    remove_deletes_attributes,
    update_without_operations_creates_the_item_with_its_key,
    transaction_is_all_or_nothing_and_reports_the_failing_write,
    a_lone_check_writes_nothing_and_fails_without_an_index,
    two_writes_on_one_key_in_a_transaction_are_refused,
    query_reads_a_table_partition_by_sort_key_range_both_ways,
    query_reads_sparse_indexes_by_sort_key_range_both_ways,
    index_entries_follow_the_item_attributes,
    pages_continue_exactly_where_the_previous_one_stopped,
    concurrent_conditional_decrements_never_oversell,
    concurrent_transactions_never_oversell,
    concurrent_versioned_rewrites_never_lose_one,
    every_call_is_one_counted_request,
    both_adapters_refuse_what_dynamodb_refuses,
);

// ---------------------------------------------------------------------------------------
// Fixtures

fn num(s: &str) -> Val {
    Val::N(Decimal::from_str(s).unwrap_or_else(|e| panic!("bad number {s}: {e}")))
}

fn dec(s: &str) -> Decimal {
    Decimal::from_str(s).unwrap_or_else(|e| panic!("bad number {s}: {e}"))
}

fn item(pk: &str, sk: &str, attrs: &[(&str, Val)]) -> Item {
    let mut item = Key::new(pk, sk).item();
    for (a, v) in attrs {
        item.insert((*a).to_owned(), v.clone());
    }
    item
}

fn put(item: Item) -> Write {
    Write::Put { item, cond: None }
}

fn put_if(item: Item, cond: Cond) -> Write {
    Write::Put { item, cond: Some(cond) }
}

fn cmp(attr: &str, op: CmpOp, v: impl Into<Val>) -> Cond {
    Cond::Cmp(attr.to_owned(), op, v.into())
}

fn add(attr: &str, n: i64) -> Update {
    Update::Add(attr.to_owned(), Decimal::from(n))
}

const FAILED: Result<(), StoreError> = Err(StoreError::ConditionFailed { index: None });

async fn must_write(store: &Shared, writes: Vec<Write>) {
    if let Err(e) = store.write(writes).await {
        panic!("write failed: {e:?}");
    }
}

async fn must_update(store: &Shared, pk: &str, sk: &str, op: Update) {
    if let Err(e) = store.update(&Key::new(pk, sk), vec![op], None).await {
        panic!("update {pk}/{sk} failed: {e:?}");
    }
}

async fn get(store: &Shared, pk: &str, sk: &str) -> Option<Item> {
    match store.get(&Key::new(pk, sk)).await {
        Ok(item) => item,
        Err(e) => panic!("get {pk}/{sk} failed: {e:?}"),
    }
}

async fn attr(store: &Shared, pk: &str, sk: &str, a: &str) -> Option<Val> {
    get(store, pk, sk).await.and_then(|i| i.get(a).cloned())
}

/// The sort keys of a query's single page (which must be the last).
async fn sks(store: &Shared, q: Query) -> Vec<String> {
    let page = match store.query(&q).await {
        Ok(page) => page,
        Err(e) => panic!("query {q:?} failed: {e:?}"),
    };
    assert_eq!(page.next, None, "a page holding everything has no continuation");
    page.items.iter().map(|i| sk_of(i, q.index)).collect()
}

/// The item's table sort key, or for an index query `gsisk|sk`.
fn sk_of(item: &Item, index: Index) -> String {
    let text = |a: &str| item.get(a).and_then(Val::as_str).unwrap_or("?").to_owned();
    match index {
        Index::Table => text("sk"),
        _ => format!("{}|{}", text(index.attrs().1), text("sk")),
    }
}

fn query(index: Index, pk: &str, sk: SkRange, forward: bool) -> Query {
    Query {
        sk,
        forward,
        ..Query::new(index, pk)
    }
}

fn rev(v: &[&str]) -> Vec<String> {
    v.iter().rev().map(|s| (*s).to_owned()).collect()
}

fn own(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| (*s).to_owned()).collect()
}

// ---------------------------------------------------------------------------------------
// Cases

async fn put_then_get_round_trips_every_value_kind(store: Shared) {
    let it = item(
        "c1#values",
        "a",
        &[
            ("text", Val::from("hello, é 漢字 🎉")),
            ("empty", Val::from("")),
            ("int", num("42")),
            ("negative", num("-7")),
            ("fraction", num("1234.5678")),
            ("negative_fraction", num("-0.5")),
            ("tiny", num("0.000001")),
            ("huge", num("79228162514264337593543950335")),
            ("zero", num("0")),
            ("scaled", Val::N(Decimal::new(150, 2))),
            ("yes", Val::Bool(true)),
            ("no", Val::Bool(false)),
        ],
    );
    must_write(&store, vec![put(it.clone())]).await;
    assert_eq!(get(&store, "c1#values", "a").await, Some(it));
    assert_eq!(attr(&store, "c1#values", "a", "scaled").await, Some(num("1.5")));
    assert_eq!(get(&store, "c1#values", "b").await, None);
    assert_eq!(get(&store, "c1#other", "a").await, None);
}

async fn put_replaces_the_whole_item(store: Shared) {
    must_write(
        &store,
        vec![put(item("c1#p", "a", &[("x", num("1")), ("y", num("2"))]))],
    )
    .await;
    must_write(&store, vec![put(item("c1#p", "a", &[("z", num("3"))]))]).await;
    assert_eq!(
        get(&store, "c1#p", "a").await,
        Some(item("c1#p", "a", &[("z", num("3"))]))
    );
}

async fn conditional_put_on_an_existing_item_fails_and_writes_nothing(store: Shared) {
    let first = item("c1#cp", "a", &[("v", num("1"))]);
    must_write(&store, vec![put_if(first.clone(), Cond::NotExists)]).await;
    let second = item("c1#cp", "a", &[("v", num("2")), ("extra", Val::from("x"))]);
    assert_eq!(store.write(vec![put_if(second.clone(), Cond::NotExists)]).await, FAILED);
    assert_eq!(get(&store, "c1#cp", "a").await, Some(first));

    // `Exists` is the converse: it fails on a missing item and writes nothing.
    let missing = item("c1#cp", "b", &[("v", num("1"))]);
    assert_eq!(store.write(vec![put_if(missing, Cond::Exists)]).await, FAILED);
    assert_eq!(get(&store, "c1#cp", "b").await, None);

    must_write(&store, vec![put_if(second.clone(), Cond::Exists)]).await;
    assert_eq!(get(&store, "c1#cp", "a").await, Some(second));
}

async fn conditional_delete_removes_only_when_the_condition_holds(store: Shared) {
    must_write(&store, vec![put(item("c1#del", "a", &[("v", num("3"))]))]).await;
    let del = |cond| Write::Delete {
        key: Key::new("c1#del", "a"),
        cond,
    };
    assert_eq!(store.write(vec![del(Some(cmp("v", CmpOp::Eq, 99)))]).await, FAILED);
    assert!(get(&store, "c1#del", "a").await.is_some());
    must_write(&store, vec![del(Some(cmp("v", CmpOp::Eq, 3)))]).await;
    assert_eq!(get(&store, "c1#del", "a").await, None);
    // Deleting a missing item is no error, unless the condition asks for the item.
    must_write(&store, vec![del(None)]).await;
    assert_eq!(store.write(vec![del(Some(Cond::Exists))]).await, FAILED);
}

async fn update_conditions_compare_numbers_strings_and_booleans(store: Shared) {
    let base = item(
        "c1#cmp",
        "a",
        &[
            ("n", num("5")),
            ("s", Val::from("banana")),
            ("t", Val::Bool(true)),
            ("f", Val::Bool(false)),
        ],
    );
    must_write(&store, vec![put(base.clone())]).await;
    use CmpOp::*;
    let cases: Vec<(Cond, bool)> = vec![
        // numbers
        (cmp("n", Eq, 5), true),
        (cmp("n", Eq, num("5.0")), true),
        (cmp("n", Ne, 5), false),
        (cmp("n", Ne, 6), true),
        (cmp("n", Lt, 5), false),
        (cmp("n", Lt, num("5.01")), true),
        (cmp("n", Le, 5), true),
        (cmp("n", Le, num("4.99")), false),
        (cmp("n", Gt, 5), false),
        (cmp("n", Gt, -10), true),
        (cmp("n", Ge, 5), true),
        (cmp("n", Ge, num("5.5")), false),
        // strings compare by UTF-8 bytes
        (cmp("s", Eq, "banana"), true),
        (cmp("s", Ne, "apple"), true),
        (cmp("s", Lt, "banana"), false),
        (cmp("s", Lt, "bananas"), true),
        (cmp("s", Lt, "Banana"), false),
        (cmp("s", Le, "banana"), true),
        (cmp("s", Gt, "apple"), true),
        (cmp("s", Gt, "é"), false),
        (cmp("s", Ge, "cherry"), false),
        // booleans: false < true
        (cmp("t", Eq, Val::Bool(true)), true),
        (cmp("t", Ne, Val::Bool(true)), false),
        (cmp("t", Gt, Val::Bool(false)), true),
        (cmp("t", Lt, Val::Bool(true)), false),
        (cmp("t", Ge, Val::Bool(true)), true),
        (cmp("t", Le, Val::Bool(false)), false),
        (cmp("f", Lt, Val::Bool(true)), true),
        (cmp("f", Le, Val::Bool(false)), true),
        (cmp("f", Gt, Val::Bool(true)), false),
        (cmp("f", Ge, Val::Bool(false)), true),
        // a missing attribute satisfies no comparison, `Ne` included
        (cmp("missing", Eq, 1), false),
        (cmp("missing", Ne, 1), false),
        (cmp("missing", Lt, 1), false),
        (cmp("missing", Ge, ""), false),
        (cmp("missing", Ne, Val::Bool(true)), false),
        // values of another type are never equal, and unordered
        (cmp("n", Eq, "5"), false),
        (cmp("n", Ne, "5"), true),
        (cmp("s", Lt, 1), false),
        // presence and conjunctions
        (Cond::Exists, true),
        (Cond::NotExists, false),
        (Cond::AttrExists("n".into()), true),
        (Cond::AttrExists("missing".into()), false),
        (Cond::AttrNotExists("missing".into()), true),
        (Cond::AttrNotExists("n".into()), false),
        (Cond::And(vec![]), true),
        (Cond::And(vec![Cond::Exists, cmp("n", Eq, 5), cmp("s", Ge, "b")]), true),
        (Cond::And(vec![Cond::Exists, cmp("n", Eq, 5), cmp("s", Ge, "c")]), false),
    ];
    let key = Key::new("c1#cmp", "a");
    let mut hits = 0;
    for (cond, holds) in cases {
        assert_eq!(
            eval_cond(&cond, Some(&base)),
            holds,
            "the reference disagrees on {cond:?}"
        );
        let result = store.update(&key, vec![add("hits", 1)], Some(cond.clone())).await;
        if holds {
            hits += 1;
            match result {
                Ok(after) => assert_eq!(after.get("hits"), Some(&Val::from(hits)), "{cond:?}"),
                Err(e) => panic!("{cond:?} should hold: {e:?}"),
            }
        } else {
            assert_eq!(result, Err(StoreError::ConditionFailed { index: None }), "{cond:?}");
        }
    }
    let mut expected = base;
    expected.insert("hits".into(), Val::from(hits));
    assert_eq!(get(&store, "c1#cmp", "a").await, Some(expected));
}

async fn update_returns_the_item_as_it_is_after_the_update(store: Shared) {
    must_write(
        &store,
        vec![put(item("c1#upd", "a", &[("keep", Val::from("k")), ("n", num("1"))]))],
    )
    .await;
    let after = store
        .update(
            &Key::new("c1#upd", "a"),
            vec![
                Update::Set("s".into(), Val::from("new")),
                add("n", 2),
                Update::Set("b".into(), Val::Bool(false)),
            ],
            Some(Cond::Exists),
        )
        .await;
    let expected = item(
        "c1#upd",
        "a",
        &[
            ("keep", Val::from("k")),
            ("n", num("3")),
            ("s", Val::from("new")),
            ("b", Val::Bool(false)),
        ],
    );
    assert_eq!(after, Ok(expected.clone()));
    assert_eq!(get(&store, "c1#upd", "a").await, Some(expected));
    // A failed condition changes nothing.
    let failed = store
        .update(&Key::new("c1#upd", "a"), vec![add("n", 1)], Some(Cond::NotExists))
        .await;
    assert_eq!(failed, Err(StoreError::ConditionFailed { index: None }));
    assert_eq!(attr(&store, "c1#upd", "a", "n").await, Some(num("3")));
}

async fn add_treats_a_missing_attribute_as_zero(store: Shared) {
    let key = Key::new("c1#add", "a");
    assert_eq!(
        store.update(&key, vec![add("cnt", 5)], None).await,
        Ok(item("c1#add", "a", &[("cnt", num("5"))]))
    );
    let after = store
        .update(
            &key,
            vec![add("cnt", -7), Update::Add("frac".into(), dec("0.25"))],
            None,
        )
        .await;
    assert_eq!(
        after,
        Ok(item("c1#add", "a", &[("cnt", num("-2")), ("frac", num("0.25"))]))
    );
    let after = store
        .update(&key, vec![Update::Add("frac".into(), dec("-0.75"))], Some(Cond::Exists))
        .await;
    assert_eq!(after.map(|i| i.get("frac").cloned()), Ok(Some(num("-0.5"))));
}

async fn remove_deletes_attributes(store: Shared) {
    must_write(
        &store,
        vec![put(item(
            "c1#rm",
            "a",
            &[("a", num("1")), ("b", num("2")), ("c", num("3"))],
        ))],
    )
    .await;
    let key = Key::new("c1#rm", "a");
    let after = store
        .update(
            &key,
            vec![Update::Remove("a".into()), Update::Remove("never".into())],
            None,
        )
        .await;
    assert_eq!(after, Ok(item("c1#rm", "a", &[("b", num("2")), ("c", num("3"))])));
    let after = store
        .update(
            &key,
            vec![Update::Set("d".into(), Val::from("x")), Update::Remove("b".into())],
            None,
        )
        .await;
    assert_eq!(after, Ok(item("c1#rm", "a", &[("c", num("3")), ("d", Val::from("x"))])));
    assert_eq!(
        get(&store, "c1#rm", "a").await,
        Some(item("c1#rm", "a", &[("c", num("3")), ("d", Val::from("x"))]))
    );
}

async fn update_without_operations_creates_the_item_with_its_key(store: Shared) {
    let key = Key::new("c1#empty", "a");
    assert_eq!(store.update(&key, vec![], None).await, Ok(key.item()));
    assert_eq!(get(&store, "c1#empty", "a").await, Some(key.item()));
    // In a transaction too, and an existing item keeps its attributes.
    must_write(&store, vec![put(item("c1#empty", "b", &[("v", num("1"))]))]).await;
    let touch = |sk: &str| Write::Update {
        key: Key::new("c1#empty", sk),
        ops: vec![],
        cond: None,
    };
    must_write(&store, vec![touch("b"), touch("c")]).await;
    assert_eq!(
        get(&store, "c1#empty", "b").await,
        Some(item("c1#empty", "b", &[("v", num("1"))]))
    );
    assert_eq!(
        get(&store, "c1#empty", "c").await,
        Some(Key::new("c1#empty", "c").item())
    );
}

async fn transaction_is_all_or_nothing_and_reports_the_failing_write(store: Shared) {
    let pk = "c1#tx";
    must_write(
        &store,
        vec![
            put(item(pk, "a", &[("v", num("1"))])),
            put(item(pk, "c", &[("v", num("1"))])),
        ],
    )
    .await;
    let bump_if = |v: i64| Write::Update {
        key: Key::new(pk, "a"),
        ops: vec![add("v", 1)],
        cond: Some(cmp("v", CmpOp::Eq, v)),
    };

    let failing = vec![
        put(item(pk, "b", &[("v", num("1"))])),
        bump_if(2),
        Write::Delete {
            key: Key::new(pk, "c"),
            cond: None,
        },
    ];
    assert_eq!(
        store.write(failing).await,
        Err(StoreError::ConditionFailed { index: Some(1) })
    );
    assert_eq!(get(&store, pk, "b").await, None);
    assert_eq!(attr(&store, pk, "a", "v").await, Some(num("1")));
    assert!(get(&store, pk, "c").await.is_some());

    let failing_check = vec![
        put(item(pk, "e", &[])),
        bump_if(1),
        Write::Check {
            key: Key::new(pk, "c"),
            cond: Cond::AttrExists("nope".into()),
        },
    ];
    assert_eq!(
        store.write(failing_check).await,
        Err(StoreError::ConditionFailed { index: Some(2) })
    );
    assert_eq!(get(&store, pk, "e").await, None);
    assert_eq!(attr(&store, pk, "a", "v").await, Some(num("1")));

    let succeeding = vec![
        put_if(item(pk, "b", &[("v", num("1"))]), Cond::NotExists),
        bump_if(1),
        Write::Delete {
            key: Key::new(pk, "c"),
            cond: Some(Cond::Exists),
        },
        Write::Check {
            key: Key::new(pk, "d"),
            cond: Cond::NotExists,
        },
    ];
    must_write(&store, succeeding).await;
    assert_eq!(get(&store, pk, "b").await, Some(item(pk, "b", &[("v", num("1"))])));
    assert_eq!(attr(&store, pk, "a", "v").await, Some(num("2")));
    assert_eq!(get(&store, pk, "c").await, None);
    assert_eq!(get(&store, pk, "d").await, None, "a check writes nothing");
}

async fn a_lone_check_writes_nothing_and_fails_without_an_index(store: Shared) {
    must_write(&store, vec![put(item("c1#chk", "a", &[("v", num("2"))]))]).await;
    let check = |cond| Write::Check {
        key: Key::new("c1#chk", "a"),
        cond,
    };
    must_write(&store, vec![check(cmp("v", CmpOp::Eq, 2))]).await;
    must_write(&store, vec![check(Cond::And(vec![]))]).await;
    assert_eq!(store.write(vec![check(cmp("v", CmpOp::Gt, 2))]).await, FAILED);
    let missing = Write::Check {
        key: Key::new("c1#chk", "zz"),
        cond: Cond::NotExists,
    };
    must_write(&store, vec![missing]).await;
    assert_eq!(get(&store, "c1#chk", "zz").await, None);
    assert_eq!(
        get(&store, "c1#chk", "a").await,
        Some(item("c1#chk", "a", &[("v", num("2"))]))
    );
}

async fn two_writes_on_one_key_in_a_transaction_are_refused(store: Shared) {
    must_write(&store, vec![put(item("c1#dup", "a", &[("v", num("1"))]))]).await;
    let dup = vec![
        Write::Update {
            key: Key::new("c1#dup", "a"),
            ops: vec![add("v", 1)],
            cond: None,
        },
        put(item("c1#dup", "b", &[])),
        Write::Delete {
            key: Key::new("c1#dup", "a"),
            cond: None,
        },
    ];
    assert!(matches!(store.write(dup).await, Err(StoreError::Backend(_))));
    assert_eq!(attr(&store, "c1#dup", "a", "v").await, Some(num("1")));
    assert_eq!(get(&store, "c1#dup", "b").await, None);

    assert!(matches!(store.write(vec![]).await, Err(StoreError::Backend(_))));
    let too_many: Vec<Write> = (0..=MAX_TRANSACTION_WRITES)
        .map(|i| put(item("c1#dup", &format!("m{i:03}"), &[])))
        .collect();
    assert!(matches!(store.write(too_many).await, Err(StoreError::Backend(_))));
    assert_eq!(get(&store, "c1#dup", "m000").await, None);
}

async fn query_reads_a_table_partition_by_sort_key_range_both_ways(store: Shared) {
    let sks_in = ["a#1", "a#2", "a#3", "b", "b#1", "b#2", "c"];
    let mut writes: Vec<Write> = sks_in
        .iter()
        .map(|sk| put(item("c1#q", sk, &[("x", num("1"))])))
        .collect();
    // Neighbouring partitions must not leak in.
    writes.push(put(item("c1#qa", "a#1", &[])));
    writes.push(put(item("c1#", "a#1", &[])));
    writes.push(put(item("c1#q#", "a#1", &[])));
    must_write(&store, writes).await;

    let q = |sk: SkRange, forward: bool| query(Index::Table, "c1#q", sk, forward);
    assert_eq!(sks(&store, q(SkRange::All, true)).await, own(&sks_in));
    assert_eq!(sks(&store, q(SkRange::All, false)).await, rev(&sks_in));
    let begins = |p: &str| SkRange::BeginsWith(p.to_owned());
    assert_eq!(sks(&store, q(begins("a#"), true)).await, own(&["a#1", "a#2", "a#3"]));
    assert_eq!(sks(&store, q(begins("b"), false)).await, rev(&["b", "b#1", "b#2"]));
    assert_eq!(sks(&store, q(begins("b#2"), true)).await, own(&["b#2"]));
    assert_eq!(sks(&store, q(begins("zz"), true)).await, own(&[]));
    assert_eq!(sks(&store, q(begins(""), true)).await, own(&sks_in));
    let between = |a: &str, b: &str| SkRange::Between(a.to_owned(), b.to_owned());
    assert_eq!(
        sks(&store, q(between("a#2", "b#1"), true)).await,
        own(&["a#2", "a#3", "b", "b#1"])
    );
    assert_eq!(
        sks(&store, q(between("a#2", "b#1"), false)).await,
        rev(&["a#2", "a#3", "b", "b#1"])
    );
    assert_eq!(sks(&store, q(between("a#3", "a#3"), true)).await, own(&["a#3"]));
    assert_eq!(sks(&store, q(between("a#4", "a#9"), true)).await, own(&[]));
    assert_eq!(sks(&store, q(between("b", "a"), true)).await, own(&[]));
    assert_eq!(sks(&store, q(between("", "a#2"), true)).await, own(&["a#1", "a#2"]));
    assert_eq!(
        sks(&store, query(Index::Table, "c1#nothing", SkRange::All, true)).await,
        own(&[])
    );

    // Items come back whole.
    let page = store.query(&q(begins("a#1"), true)).await;
    assert_eq!(page.map(|p| p.items), Ok(vec![item("c1#q", "a#1", &[("x", num("1"))])]));
}

async fn query_reads_sparse_indexes_by_sort_key_range_both_ways(store: Shared) {
    let s = |v: &str| Val::from(v);
    // An item of partition `c1#o` with the index attributes given as (name, value) pairs.
    let indexed = |sk: &str, attrs: &[(&str, &str)]| {
        let attrs: Vec<(&str, Val)> = attrs.iter().map(|(a, v)| (*a, s(v))).collect();
        put(item("c1#o", sk, &attrs))
    };
    fn both<'a>(gsi1: [&'a str; 2], gsi2: [&'a str; 2]) -> [(&'static str, &'a str); 4] {
        [
            ("gsi1pk", gsi1[0]),
            ("gsi1sk", gsi1[1]),
            ("gsi2pk", gsi2[0]),
            ("gsi2sk", gsi2[1]),
        ]
    }
    let writes = vec![
        indexed("o1", &both(["c1#open", "2024-01-03"], ["c1#inv7", "b"])),
        indexed("o2", &both(["c1#open", "2024-01-01"], ["c1#inv7", "a"])),
        indexed("o3", &[("gsi1pk", "c1#open"), ("gsi1sk", "2024-02-01")]),
        indexed("o4", &both(["c1#closed", "2024-01-02"], ["c1#inv7", "c"])),
        // Sparse: no index attributes, or only half of an index key.
        put(item("c1#o", "o5", &[("x", s("no index"))])),
        put(item("c1#o", "o6", &[("gsi1pk", s("c1#open"))])),
        put(item("c1#o", "o7", &[("gsi2sk", s("a"))])),
    ];
    must_write(&store, writes).await;

    let g1 = |sk: SkRange, forward: bool| query(Index::Gsi1, "c1#open", sk, forward);
    let open = ["2024-01-01|o2", "2024-01-03|o1", "2024-02-01|o3"];
    assert_eq!(sks(&store, g1(SkRange::All, true)).await, own(&open));
    assert_eq!(sks(&store, g1(SkRange::All, false)).await, rev(&open));
    assert_eq!(
        sks(&store, g1(SkRange::BeginsWith("2024-01".into()), true)).await,
        own(&open[..2])
    );
    assert_eq!(
        sks(&store, g1(SkRange::BeginsWith("2024-01".into()), false)).await,
        rev(&open[..2])
    );
    let jan2_feb1 = SkRange::Between("2024-01-02".into(), "2024-02-01".into());
    assert_eq!(sks(&store, g1(jan2_feb1.clone(), true)).await, own(&open[1..]));
    assert_eq!(sks(&store, g1(jan2_feb1, false)).await, rev(&open[1..]));
    assert_eq!(
        sks(&store, query(Index::Gsi1, "c1#closed", SkRange::All, true)).await,
        own(&["2024-01-02|o4"])
    );

    let g2 = |sk: SkRange, forward: bool| query(Index::Gsi2, "c1#inv7", sk, forward);
    let inv = ["a|o2", "b|o1", "c|o4"];
    assert_eq!(sks(&store, g2(SkRange::All, true)).await, own(&inv));
    assert_eq!(sks(&store, g2(SkRange::All, false)).await, rev(&inv));
    assert_eq!(
        sks(&store, g2(SkRange::Between("b".into(), "z".into()), true)).await,
        own(&inv[1..])
    );
    assert_eq!(
        sks(&store, g2(SkRange::BeginsWith("a".into()), true)).await,
        own(&inv[..1])
    );

    // Index queries return whole items (projection ALL).
    let page = store.query(&g2(SkRange::BeginsWith("c".into()), true)).await;
    let o4 = item(
        "c1#o",
        "o4",
        &[
            ("gsi1pk", s("c1#closed")),
            ("gsi1sk", s("2024-01-02")),
            ("gsi2pk", s("c1#inv7")),
            ("gsi2sk", s("c")),
        ],
    );
    assert_eq!(page.map(|p| p.items), Ok(vec![o4]));
}

async fn index_entries_follow_the_item_attributes(store: Shared) {
    let s = |v: &str| Val::from(v);
    let entry = |sk: &str, gsk: &str| item("c1#e", sk, &[("gsi1pk", s("c1#idx")), ("gsi1sk", s(gsk))]);
    must_write(
        &store,
        vec![
            put(entry("a", "1")),
            put(entry("b", "2")),
            put(entry("c", "3")),
            put(entry("d", "4")),
        ],
    )
    .await;
    let all = || query(Index::Gsi1, "c1#idx", SkRange::All, true);
    assert_eq!(sks(&store, all()).await, own(&["1|a", "2|b", "3|c", "4|d"]));

    // Removing an index attribute takes the item out of the index.
    must_update(&store, "c1#e", "a", Update::Remove("gsi1sk".into())).await;
    // Changing the sort attribute moves it; changing the partition attribute moves it out.
    must_update(&store, "c1#e", "b", Update::Set("gsi1sk".into(), s("9"))).await;
    must_update(&store, "c1#e", "c", Update::Set("gsi1pk".into(), s("c1#elsewhere"))).await;
    assert_eq!(sks(&store, all()).await, own(&["4|d", "9|b"]));
    assert_eq!(
        sks(&store, query(Index::Gsi1, "c1#elsewhere", SkRange::All, true)).await,
        own(&["3|c"])
    );

    // A put without the attributes, and a delete, take items out too; a put brings one back.
    must_write(
        &store,
        vec![
            put(item("c1#e", "d", &[])),
            Write::Delete {
                key: Key::new("c1#e", "b"),
                cond: None,
            },
        ],
    )
    .await;
    assert_eq!(sks(&store, all()).await, own(&[]));
    must_write(&store, vec![put(entry("a", "5"))]).await;
    assert_eq!(sks(&store, all()).await, own(&["5|a"]));
}

/// Every item of `q`, read page by page with its limit; fails on a repeated item.
async fn read_pages(store: &Shared, mut q: Query) -> Vec<String> {
    let mut out = Vec::new();
    for _ in 0..100 {
        let page = match store.query(&q).await {
            Ok(page) => page,
            Err(e) => panic!("query {q:?} failed: {e:?}"),
        };
        assert!(page.items.len() <= q.limit as usize, "page larger than its limit");
        for i in &page.items {
            let id = sk_of(i, q.index);
            assert!(!out.contains(&id), "{id} returned twice");
            out.push(id);
        }
        match page.next {
            Some(next) => q.start = Some(next),
            None => return out,
        }
    }
    panic!("more than 100 pages");
}

async fn pages_continue_exactly_where_the_previous_one_stopped(store: Shared) {
    let s = |v: String| Val::S(v);
    // 25 items: pages of 5 end exactly at the last item, pages of 7 do not. Index sort
    // keys repeat, so index pages must continue on the table key as well.
    let writes: Vec<Write> = (0..25)
        .map(|i| {
            put(item(
                "c1#pg",
                &format!("k#{i:02}"),
                &[
                    ("gsi1pk", s("c1#pgi".into())),
                    ("gsi1sk", s(format!("g#{}", i % 4))),
                    ("n", Val::from(i)),
                ],
            ))
        })
        .collect();
    must_write(&store, writes).await;
    must_write(
        &store,
        vec![put(item(
            "c1#pgz",
            "k#00",
            &[("gsi1pk", s("c1#pgz".into())), ("gsi1sk", s("g#0".into()))],
        ))],
    )
    .await;

    let ranges = [
        SkRange::All,
        SkRange::BeginsWith("k#1".into()),
        SkRange::Between("k#03".into(), "k#21".into()),
    ];
    for sk in ranges {
        for forward in [true, false] {
            let full = sks(&store, query(Index::Table, "c1#pg", sk.clone(), forward)).await;
            assert!(!full.is_empty());
            for limit in [1, 5, 7, 100] {
                let q = Query {
                    limit,
                    ..query(Index::Table, "c1#pg", sk.clone(), forward)
                };
                assert_eq!(
                    read_pages(&store, q).await,
                    full,
                    "table {sk:?} forward={forward} limit={limit}"
                );
            }
        }
    }
    for sk in [SkRange::All, SkRange::Between("g#1".into(), "g#2".into())] {
        for forward in [true, false] {
            let full = sks(&store, query(Index::Gsi1, "c1#pgi", sk.clone(), forward)).await;
            let expected = if sk == SkRange::All { 25 } else { 12 };
            assert_eq!(full.len(), expected, "{sk:?}");
            for limit in [1, 4, 6] {
                let q = Query {
                    limit,
                    ..query(Index::Gsi1, "c1#pgi", sk.clone(), forward)
                };
                assert_eq!(
                    read_pages(&store, q).await,
                    full,
                    "gsi1 {sk:?} forward={forward} limit={limit}"
                );
            }
        }
    }
}

async fn concurrent_conditional_decrements_never_oversell(store: Shared) {
    must_write(&store, vec![put(item("c1#ctr", "a", &[("rem", num("10"))]))]).await;
    let tasks = (0..40).map(|_| {
        let store = store.clone();
        tokio::spawn(async move {
            store
                .update(
                    &Key::new("c1#ctr", "a"),
                    vec![add("rem", -1)],
                    Some(cmp("rem", CmpOp::Ge, 1)),
                )
                .await
        })
    });
    let (mut won, mut lost) = (0, 0);
    for result in join_all(tasks).await {
        match result {
            Ok(Ok(_)) => won += 1,
            Ok(Err(StoreError::ConditionFailed { index: None })) => lost += 1,
            other => panic!("unexpected outcome {other:?}"),
        }
    }
    assert_eq!((won, lost), (10, 30));
    assert_eq!(attr(&store, "c1#ctr", "a", "rem").await, Some(num("0")));
}

async fn concurrent_transactions_never_oversell(store: Shared) {
    must_write(&store, vec![put(item("c1#offer", "a", &[("rem", num("10"))]))]).await;
    let tasks = (0..30).map(|i| {
        let store = store.clone();
        tokio::spawn(async move {
            let writes = vec![
                Write::Update {
                    key: Key::new("c1#offer", "a"),
                    ops: vec![add("rem", -1)],
                    cond: Some(cmp("rem", CmpOp::Ge, 1)),
                },
                put_if(
                    item("c1#trades", &format!("t{i:02}"), &[("units", num("1"))]),
                    Cond::NotExists,
                ),
            ];
            // A conflict wrote nothing and is safe to retry.
            for _ in 0..50 {
                match store.write(writes.clone()).await {
                    Err(StoreError::Conflict) => tokio::task::yield_now().await,
                    other => return other,
                }
            }
            Err(StoreError::Conflict)
        })
    });
    let (mut won, mut lost) = (0, 0);
    for result in join_all(tasks).await {
        match result {
            Ok(Ok(())) => won += 1,
            Ok(Err(StoreError::ConditionFailed { index: Some(0) })) => lost += 1,
            other => panic!("unexpected outcome {other:?}"),
        }
    }
    assert_eq!((won, lost), (10, 20));
    assert_eq!(attr(&store, "c1#offer", "a", "rem").await, Some(num("0")));
    let trades = sks(&store, query(Index::Table, "c1#trades", SkRange::All, true)).await;
    assert_eq!(trades.len(), 10);
}

/// Optimistic read-modify-write: each writer appends its name to a list guarded by a
/// version; a writer that loses the race reads again. Every name must survive.
async fn concurrent_versioned_rewrites_never_lose_one(store: Shared) {
    let key = Key::new("c1#tokens", "list");
    let tasks = (0..20).map(|i| {
        let (store, key) = (store.clone(), key.clone());
        tokio::spawn(async move {
            for _ in 0..200 {
                let cur = store.get(&key).await.unwrap();
                let version = cur.as_ref().and_then(|c| c.get("v")).and_then(Val::as_num);
                let names = cur
                    .as_ref()
                    .and_then(|c| c.get("names"))
                    .and_then(Val::as_str)
                    .unwrap_or("");
                let mut next = key.item();
                next.insert("names".into(), Val::S(format!("{names}w{i:02};")));
                next.insert("v".into(), Val::N(version.unwrap_or_default() + Decimal::ONE));
                let cond = match version {
                    None => Cond::NotExists,
                    Some(v) => Cond::Cmp("v".into(), CmpOp::Eq, Val::N(v)),
                };
                match store.write(vec![put_if(next, cond)]).await {
                    Ok(()) => return,
                    Err(StoreError::ConditionFailed { .. } | StoreError::Conflict) => tokio::task::yield_now().await,
                    Err(e) => panic!("{e}"),
                }
            }
            panic!("writer {i} never got its turn");
        })
    });
    for t in join_all(tasks).await {
        t.unwrap();
    }
    let names = attr(&store, "c1#tokens", "list", "names").await.unwrap();
    let mut got: Vec<&str> = names.as_str().unwrap().split_terminator(';').collect();
    got.sort_unstable();
    assert_eq!(got, (0..20).map(|i| format!("w{i:02}")).collect::<Vec<_>>());
    assert_eq!(attr(&store, "c1#tokens", "list", "v").await, Some(num("20")));
}

async fn every_call_is_one_counted_request(store: Shared) {
    let before = store.requests();
    let key = Key::new("c1#cnt", "a");
    must_write(&store, vec![put(key.item())]).await;
    let _ = store.get(&key).await;
    let _ = store.update(&key, vec![add("n", 1)], None).await;
    must_write(
        &store,
        vec![Write::Check {
            key: key.clone(),
            cond: Cond::Exists,
        }],
    )
    .await;
    must_write(
        &store,
        vec![put(item("c1#cnt", "b", &[])), put(item("c1#cnt", "c", &[]))],
    )
    .await;
    let _ = store.query(&Query::new(Index::Table, "c1#cnt")).await;
    assert_eq!(store.write(vec![put_if(key.item(), Cond::NotExists)]).await, FAILED);
    assert_eq!(store.requests() - before, 7);
}

#[tokio::test]
async fn dynamodb_ensure_table_keeps_an_existing_table() {
    let first = fresh_dynamo_store().await;
    let again = dynamo_store_on(first.table().to_owned()).await;
    let first: Shared = Arc::new(first);
    must_write(&first, vec![put(item("c1#keep", "a", &[]))]).await;
    assert_eq!(again.ensure_table().await, Ok(()));
    assert_eq!(again.requests(), 1, "one look-up finds the table active");
    let again: Shared = Arc::new(again);
    assert_eq!(get(&again, "c1#keep", "a").await, Some(Key::new("c1#keep", "a").item()));
}

async fn both_adapters_refuse_what_dynamodb_refuses(store: Shared) {
    let key = Key::new("c1#refuse", "a");
    store
        .write(vec![Write::Put {
            item: item("c1#refuse", "a", &[("s", Val::S("x".into()))]),
            cond: None,
        }])
        .await
        .unwrap();
    let refused = |r: Result<Item, StoreError>| matches!(r, Err(StoreError::Backend(_)));
    assert!(
        refused(store.update(&key, vec![add("s", 1)], None).await),
        "ADD to a string"
    );
    assert!(
        refused(
            store
                .update(&key, vec![add("n", 1), Update::Remove("n".into())], None)
                .await
        ),
        "one attribute twice"
    );
    assert!(
        refused(
            store
                .update(&key, vec![Update::Set("sk".into(), Val::S("b".into()))], None)
                .await
        ),
        "key change"
    );
    let empty_index = item(
        "c1#refuse",
        "b",
        &[("gsi1pk", Val::S(String::new())), ("gsi1sk", Val::S("x".into()))],
    );
    assert!(matches!(
        store
            .write(vec![Write::Put {
                item: empty_index,
                cond: None
            }])
            .await,
        Err(StoreError::Backend(_))
    ));
    assert_eq!(
        store.get(&key).await.unwrap(),
        Some(item("c1#refuse", "a", &[("s", Val::S("x".into()))])),
        "unchanged"
    );
}
