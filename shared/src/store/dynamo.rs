//! The DynamoDB adapter: the production store.
//!
//! Each port call is one DynamoDB request (a lone [`Write::Check`] is a strongly consistent
//! `GetItem`, see [`DynamoStore`]). Conditions and updates are rendered as expressions with
//! `#nK` name and `:vK` value placeholders, so no attribute name can collide with a
//! DynamoDB reserved word.

use std::collections::HashMap;
use std::error::Error as StdError;
use std::fmt::Debug;
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use aws_sdk_dynamodb::error::{DisplayErrorContext, ProvideErrorMetadata, SdkError};
use aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError;
use aws_sdk_dynamodb::types::{
    AttributeDefinition, AttributeValue, BillingMode, ConditionCheck, Delete, GlobalSecondaryIndex, IndexStatus,
    KeySchemaElement, KeyType, Projection, ProjectionType, Put, ReturnValue, ScalarAttributeType, TableDescription,
    TableStatus, TransactWriteItem, Update as DynamoUpdate,
};
use aws_sdk_dynamodb::Client;
use rust_decimal::Decimal;

use super::embedded::last_key;
use super::{
    eval_cond, CmpOp, Cond, Index, Item, Key, Page, Query, Request, SkRange, Store, StoreError, Update, Val, Write,
    MAX_TRANSACTION_WRITES,
};

/// DynamoDB's attribute map.
type AttrMap = HashMap<String, AttributeValue>;

/// How long [`DynamoStore::ensure_table`] waits for a new table to become active.
const TABLE_ACTIVE_TIMEOUT: Duration = Duration::from_secs(300);

/// The attribute an update with no operation removes: a transaction's update requires an
/// expression (and moto's server fails an `UpdateItem` without one), and removing an
/// attribute that no item has changes nothing, yet creates the item when it is missing, as
/// an empty update does.
const NOOP_ATTR: &str = "__store_noop__";

/// The [`Store`] on one DynamoDB table (key `pk`/`sk`, sparse GSIs `gsi1` and `gsi2`).
///
/// - One write is one `PutItem`, `UpdateItem` or `DeleteItem`; several are one
///   `TransactWriteItems`. A lone [`Write::Check`] writes nothing, so it is a strongly
///   consistent `GetItem` with the condition evaluated here by [`eval_cond`]: the same
///   verdict as a one-item transaction at half the cost of a read instead of two writes.
/// - A failed condition is [`StoreError::ConditionFailed`] (with the write's position in a
///   transaction), a transaction that collided with another one is [`StoreError::Conflict`],
///   anything else is [`StoreError::Backend`] carrying DynamoDB's message.
/// - Comparisons follow [`eval_cond`] whatever the backend does at the edges: against a
///   missing attribute they are false, `<>` included (rendered as
///   `attribute_exists(a) AND a <> v`); an order comparison with a value of another type is
///   false (guarded by `attribute_type(a, t)`, which also spares moto's server a crash);
///   booleans are ordered `false < true` (rendered as the set of booleans that satisfy it).
/// - [`Store::requests`] counts every request this store sends ([`DynamoStore::ensure_table`]'s
///   included); the SDK's own retries of one request are not counted again.
pub struct DynamoStore {
    client: Client,
    table: String,
    requests: AtomicU64,
}

impl DynamoStore {
    /// A store on `table` through `client` (built from [`crate::aws::sdk_config`]).
    pub fn new(client: Client, table: impl Into<String>) -> Self {
        DynamoStore {
            client,
            table: table.into(),
            requests: AtomicU64::new(0),
        }
    }

    /// The table's name.
    pub fn table(&self) -> &str {
        &self.table
    }

    /// Creates the table when it is missing (on-demand billing, `pk`/`sk` string key, GSIs
    /// `gsi1` and `gsi2` on string keys projecting all attributes), then waits until the
    /// table and its indexes are active. For the local API and tests: in AWS the SAM
    /// template owns the table.
    pub async fn ensure_table(&self) -> Result<(), StoreError> {
        self.count(Request::Table);
        match self.client.describe_table().table_name(&self.table).send().await {
            Ok(out) if is_active(out.table.as_ref()) => return Ok(()),
            Ok(_) => {}
            Err(e) if e.code() == Some("ResourceNotFoundException") => self.create_table().await?,
            Err(e) => return Err(sdk_backend(e)),
        }
        self.wait_active().await
    }

    async fn create_table(&self) -> Result<(), StoreError> {
        let string_attr = |name: &str| {
            AttributeDefinition::builder()
                .attribute_name(name)
                .attribute_type(ScalarAttributeType::S)
                .build()
                .map_err(backend)
        };
        let key_schema = |pk: &str, sk: &str| -> Result<Vec<KeySchemaElement>, StoreError> {
            Ok(vec![
                KeySchemaElement::builder()
                    .attribute_name(pk)
                    .key_type(KeyType::Hash)
                    .build()
                    .map_err(backend)?,
                KeySchemaElement::builder()
                    .attribute_name(sk)
                    .key_type(KeyType::Range)
                    .build()
                    .map_err(backend)?,
            ])
        };
        let mut attrs = Vec::new();
        for index in [Index::Table, Index::Gsi1, Index::Gsi2] {
            let (pk, sk) = index.attrs();
            attrs.push(string_attr(pk)?);
            attrs.push(string_attr(sk)?);
        }
        let mut gsis = Vec::new();
        for index in [Index::Gsi1, Index::Gsi2] {
            let (pk, sk) = index.attrs();
            gsis.push(
                GlobalSecondaryIndex::builder()
                    .index_name(index.name().unwrap_or_default())
                    .set_key_schema(Some(key_schema(pk, sk)?))
                    .projection(Projection::builder().projection_type(ProjectionType::All).build())
                    .build()
                    .map_err(backend)?,
            );
        }
        self.count(Request::Table);
        let created = self
            .client
            .create_table()
            .table_name(&self.table)
            .billing_mode(BillingMode::PayPerRequest)
            .set_attribute_definitions(Some(attrs))
            .set_key_schema(Some(key_schema("pk", "sk")?))
            .set_global_secondary_indexes(Some(gsis))
            .send()
            .await;
        match created {
            Ok(_) => Ok(()),
            // Created meanwhile by another process: wait for it like for ours.
            Err(e) if e.code() == Some("ResourceInUseException") => Ok(()),
            Err(e) => Err(sdk_backend(e)),
        }
    }

    async fn wait_active(&self) -> Result<(), StoreError> {
        let deadline = tokio::time::Instant::now() + TABLE_ACTIVE_TIMEOUT;
        let mut pause = Duration::from_millis(50);
        loop {
            self.count(Request::Table);
            let out = self
                .client
                .describe_table()
                .table_name(&self.table)
                .send()
                .await
                .map_err(sdk_backend)?;
            let active = is_active(out.table.as_ref());
            if active {
                return Ok(());
            }
            if tokio::time::Instant::now() >= deadline {
                return Err(StoreError::Backend(format!(
                    "table {} not active after {:?}",
                    self.table, TABLE_ACTIVE_TIMEOUT
                )));
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(Duration::from_secs(2));
        }
    }

    fn count(&self, kind: Request) {
        self.requests.fetch_add(1, Ordering::Relaxed);
        super::note(kind);
    }

    async fn write_one(&self, write: Write) -> Result<(), StoreError> {
        let mut ex = Expr::default();
        match write {
            Write::Put { item, cond } => {
                let cond = cond.and_then(|c| ex.cond(&c));
                self.count(Request::Write);
                self.client
                    .put_item()
                    .table_name(&self.table)
                    .set_item(Some(to_attr_map(&item)))
                    .conditioned(&ex, cond)
                    .send()
                    .await
                    .map_err(single_write_error)?;
            }
            Write::Update { key, ops, cond } => {
                self.update_item(&key, &ops, cond.as_ref(), ReturnValue::None).await?;
            }
            Write::Delete { key, cond } => {
                let cond = cond.and_then(|c| ex.cond(&c));
                self.count(Request::Write);
                self.client
                    .delete_item()
                    .table_name(&self.table)
                    .set_key(Some(key_map(&key)))
                    .conditioned(&ex, cond)
                    .send()
                    .await
                    .map_err(single_write_error)?;
            }
            Write::Check { key, cond } => {
                let current = self.get(&key).await?;
                if !eval_cond(&cond, current.as_ref()) {
                    return Err(StoreError::ConditionFailed { index: None });
                }
            }
        }
        Ok(())
    }

    async fn update_item(
        &self,
        key: &Key,
        ops: &[Update],
        cond: Option<&Cond>,
        returning: ReturnValue,
    ) -> Result<Option<AttrMap>, StoreError> {
        let mut ex = Expr::default();
        let update = ex.update_or_noop(ops);
        let cond = cond.and_then(|c| ex.cond(c));
        self.count(Request::Write);
        let out = self
            .client
            .update_item()
            .table_name(&self.table)
            .set_key(Some(key_map(key)))
            .update_expression(update)
            .conditioned(&ex, cond)
            .return_values(returning)
            .send()
            .await
            .map_err(single_write_error)?;
        Ok(out.attributes)
    }

    async fn transact(&self, writes: Vec<Write>) -> Result<(), StoreError> {
        let items = writes
            .iter()
            .map(|w| self.transact_item(w))
            .collect::<Result<Vec<_>, _>>()?;
        self.count(Request::Write);
        let result = self
            .client
            .transact_write_items()
            .set_transact_items(Some(items))
            .send()
            .await;
        match result {
            Ok(_) => Ok(()),
            Err(e) => Err(transaction_error(e)),
        }
    }

    fn transact_item(&self, write: &Write) -> Result<TransactWriteItem, StoreError> {
        let mut ex = Expr::default();
        let item = match write {
            Write::Put { item, cond } => {
                let cond = cond.as_ref().and_then(|c| ex.cond(c));
                let put = Put::builder()
                    .table_name(&self.table)
                    .set_item(Some(to_attr_map(item)))
                    .conditioned(&ex, cond)
                    .build()
                    .map_err(backend)?;
                TransactWriteItem::builder().put(put).build()
            }
            Write::Update { key, ops, cond } => {
                let update = ex.update_or_noop(ops);
                let cond = cond.as_ref().and_then(|c| ex.cond(c));
                let update = DynamoUpdate::builder()
                    .table_name(&self.table)
                    .set_key(Some(key_map(key)))
                    .update_expression(update)
                    .conditioned(&ex, cond)
                    .build()
                    .map_err(backend)?;
                TransactWriteItem::builder().update(update).build()
            }
            Write::Delete { key, cond } => {
                let cond = cond.as_ref().and_then(|c| ex.cond(c));
                let delete = Delete::builder()
                    .table_name(&self.table)
                    .set_key(Some(key_map(key)))
                    .conditioned(&ex, cond)
                    .build()
                    .map_err(backend)?;
                TransactWriteItem::builder().delete(delete).build()
            }
            Write::Check { key, cond } => {
                // DynamoDB requires a condition here; an empty `And` always holds.
                let cond = match ex.cond(cond) {
                    Some(c) => c,
                    None => {
                        let pk = ex.name("pk");
                        format!("(attribute_exists({pk}) OR attribute_not_exists({pk}))")
                    }
                };
                let check = ConditionCheck::builder()
                    .table_name(&self.table)
                    .set_key(Some(key_map(key)))
                    .condition_expression(cond)
                    .set_expression_attribute_names(ex.names())
                    .set_expression_attribute_values(ex.values())
                    .build()
                    .map_err(backend)?;
                TransactWriteItem::builder().condition_check(check).build()
            }
        };
        Ok(item)
    }
}

/// The condition and the expression names and values every conditional request carries:
/// the SDK's builders share these setters but no trait, so each gets this one.
trait Conditioned: Sized {
    fn conditioned(self, ex: &Expr, cond: Option<String>) -> Self;
}

macro_rules! conditioned {
    ($($builder:ty),*) => {$(
        impl Conditioned for $builder {
            fn conditioned(self, ex: &Expr, cond: Option<String>) -> Self {
                self.set_condition_expression(cond)
                    .set_expression_attribute_names(ex.names())
                    .set_expression_attribute_values(ex.values())
            }
        }
    )*};
}

conditioned!(
    aws_sdk_dynamodb::operation::put_item::builders::PutItemFluentBuilder,
    aws_sdk_dynamodb::operation::delete_item::builders::DeleteItemFluentBuilder,
    aws_sdk_dynamodb::operation::update_item::builders::UpdateItemFluentBuilder,
    aws_sdk_dynamodb::types::builders::PutBuilder,
    aws_sdk_dynamodb::types::builders::UpdateBuilder,
    aws_sdk_dynamodb::types::builders::DeleteBuilder
);

/// Whether a table and all its indexes are active.
fn is_active(table: Option<&TableDescription>) -> bool {
    table.is_some_and(|t| {
        t.table_status == Some(TableStatus::Active)
            && t.global_secondary_indexes()
                .iter()
                .all(|g| g.index_status() == Some(&IndexStatus::Active))
    })
}

/// Rejects what the embedded adapter rejects before any request: no write, too many, a
/// write without a key, two writes on one key.
fn validate(writes: &[Write]) -> Result<(), StoreError> {
    if writes.is_empty() || writes.len() > MAX_TRANSACTION_WRITES {
        return Err(StoreError::Backend(format!(
            "{} writes in one transaction",
            writes.len()
        )));
    }
    let mut keys = writes
        .iter()
        .map(|w| w.key().ok_or_else(|| StoreError::Backend("write without key".into())))
        .collect::<Result<Vec<_>, _>>()?;
    let n = keys.len();
    keys.sort();
    keys.dedup();
    if keys.len() != n {
        return Err(StoreError::Backend("two writes on one key in a transaction".into()));
    }
    Ok(())
}

#[async_trait]
impl Store for DynamoStore {
    async fn get(&self, key: &Key) -> Result<Option<Item>, StoreError> {
        self.count(Request::Read);
        let out = self
            .client
            .get_item()
            .table_name(&self.table)
            .set_key(Some(key_map(key)))
            .consistent_read(true)
            .send()
            .await
            .map_err(sdk_backend)?;
        out.item.map(from_attr_map).transpose()
    }

    async fn write(&self, mut writes: Vec<Write>) -> Result<(), StoreError> {
        validate(&writes)?;
        super::check_item_sizes(&writes)?;
        if writes.len() == 1 {
            if let Some(write) = writes.pop() {
                return self.write_one(write).await;
            }
        }
        self.transact(writes).await
    }

    async fn update(&self, key: &Key, ops: Vec<Update>, cond: Option<Cond>) -> Result<Item, StoreError> {
        super::check_update_size(&ops)?;
        match self.update_item(key, &ops, cond.as_ref(), ReturnValue::AllNew).await? {
            Some(attrs) if !attrs.is_empty() => from_attr_map(attrs),
            // An update with nothing to change returns no attributes: the item holds just
            // its key (it was created if missing).
            _ => Ok(key.item()),
        }
    }

    async fn query(&self, q: &Query) -> Result<Page, StoreError> {
        // No item has an empty key attribute, and DynamoDB refuses to look one up.
        if q.pk.is_empty() {
            return Ok(Page::default());
        }
        let (pk_attr, sk_attr) = q.index.attrs();
        let mut ex = Expr::default();
        let mut key_cond = format!("{} = {}", ex.name(pk_attr), ex.value(AttributeValue::S(q.pk.clone())));
        match &q.sk {
            SkRange::All => {}
            // DynamoDB refuses an empty string in a key condition; an empty prefix is no
            // condition at all.
            SkRange::BeginsWith(p) if p.is_empty() => {}
            SkRange::BeginsWith(p) => {
                let (n, v) = (ex.name(sk_attr), ex.value(AttributeValue::S(p.clone())));
                key_cond.push_str(&format!(" AND begins_with({n}, {v})"));
            }
            SkRange::Between(a, b) => {
                // An empty range matches nothing (DynamoDB would refuse it); an empty lower
                // bound is below every sort key (which cannot be empty).
                if a.as_bytes() > b.as_bytes() || b.is_empty() {
                    return Ok(Page::default());
                }
                let n = ex.name(sk_attr);
                let hi = ex.value(AttributeValue::S(b.clone()));
                if a.is_empty() {
                    key_cond.push_str(&format!(" AND {n} <= {hi}"));
                } else {
                    let lo = ex.value(AttributeValue::S(a.clone()));
                    key_cond.push_str(&format!(" AND {n} BETWEEN {lo} AND {hi}"));
                }
            }
        }
        let start = q.start.as_ref().map(|s| to_attr_map(&last_key(q.index, s)));
        self.count(Request::Read);
        let out = self
            .client
            .query()
            .table_name(&self.table)
            .set_index_name(q.index.name().map(str::to_owned))
            .key_condition_expression(key_cond)
            .set_expression_attribute_names(ex.names())
            .set_expression_attribute_values(ex.values())
            .scan_index_forward(q.forward)
            .limit(i32::try_from(q.limit.max(1)).unwrap_or(i32::MAX))
            .set_exclusive_start_key(start)
            .send()
            .await
            .map_err(sdk_backend)?;
        let items = out
            .items
            .unwrap_or_default()
            .into_iter()
            .map(from_attr_map)
            .collect::<Result<Vec<_>, _>>()?;
        let next = out.last_evaluated_key.map(from_attr_map).transpose()?;
        Ok(Page { items, next })
    }

    fn requests(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }
}

/// Placeholders of one request's expressions.
#[derive(Default)]
struct Expr {
    names: HashMap<String, String>,
    by_attr: HashMap<String, String>,
    values: HashMap<String, AttributeValue>,
}

impl Expr {
    /// The `#nK` placeholder of an attribute name (one per name).
    fn name(&mut self, attr: &str) -> String {
        if let Some(p) = self.by_attr.get(attr) {
            return p.clone();
        }
        let p = format!("#n{}", self.by_attr.len());
        self.by_attr.insert(attr.to_owned(), p.clone());
        self.names.insert(p.clone(), attr.to_owned());
        p
    }

    /// A fresh `:vK` placeholder for a value.
    fn value(&mut self, v: AttributeValue) -> String {
        let p = format!(":v{}", self.values.len());
        self.values.insert(p.clone(), v);
        p
    }

    /// The names map, `None` when empty (DynamoDB refuses an empty map).
    fn names(&self) -> Option<HashMap<String, String>> {
        (!self.names.is_empty()).then(|| self.names.clone())
    }

    /// The values map, `None` when empty (DynamoDB refuses an empty map).
    fn values(&self) -> Option<AttrMap> {
        (!self.values.is_empty()).then(|| self.values.clone())
    }

    /// The condition expression of `cond`; `None` when it always holds (an empty `And`).
    fn cond(&mut self, cond: &Cond) -> Option<String> {
        match cond {
            Cond::Exists => Some(format!("attribute_exists({})", self.name("pk"))),
            Cond::NotExists => Some(format!("attribute_not_exists({})", self.name("pk"))),
            Cond::AttrExists(a) => Some(format!("attribute_exists({})", self.name(a))),
            Cond::AttrNotExists(a) => Some(format!("attribute_not_exists({})", self.name(a))),
            Cond::Cmp(a, op, v) => Some(self.cmp(a, *op, v)),
            Cond::And(cs) => {
                let parts: Vec<String> = cs.iter().filter_map(|c| self.cond(c)).collect();
                match parts.len() {
                    0 => None,
                    1 => parts.into_iter().next(),
                    _ => Some(format!("({})", parts.join(" AND "))),
                }
            }
        }
    }

    fn cmp(&mut self, attr: &str, op: CmpOp, v: &Val) -> String {
        let n = self.name(attr);
        if let Val::Bool(b) = v {
            if !matches!(op, CmpOp::Eq | CmpOp::Ne) {
                return self.bool_order(&n, op, *b);
            }
        }
        let type_name = match v {
            Val::S(_) => "S",
            Val::N(_) => "N",
            Val::Bool(_) => "BOOL",
        };
        let v = self.value(to_attr(v));
        let ordered = |this: &mut Self, sym: &str| {
            let t = this.value(AttributeValue::S(type_name.to_owned()));
            format!("(attribute_type({n}, {t}) AND {n} {sym} {v})")
        };
        match op {
            CmpOp::Eq => format!("{n} = {v}"),
            CmpOp::Ne => format!("(attribute_exists({n}) AND {n} <> {v})"),
            CmpOp::Lt => ordered(self, "<"),
            CmpOp::Le => ordered(self, "<="),
            CmpOp::Gt => ordered(self, ">"),
            CmpOp::Ge => ordered(self, ">="),
        }
    }

    /// An order comparison with a boolean (`false < true`), which DynamoDB's operators do
    /// not accept: rendered as the set of booleans that satisfy it.
    fn bool_order(&mut self, n: &str, op: CmpOp, b: bool) -> String {
        let satisfying: Vec<bool> = [false, true]
            .into_iter()
            .filter(|x| match op {
                CmpOp::Lt => !*x && b,
                CmpOp::Le => *x <= b,
                CmpOp::Gt => *x && !b,
                CmpOp::Ge => *x >= b,
                CmpOp::Eq => *x == b,
                CmpOp::Ne => *x != b,
            })
            .collect();
        match satisfying.as_slice() {
            [] => format!("(attribute_exists({n}) AND attribute_not_exists({n}))"),
            [x] => format!("{n} = {}", self.value(AttributeValue::Bool(*x))),
            _ => {
                let f = self.value(AttributeValue::Bool(false));
                let t = self.value(AttributeValue::Bool(true));
                format!("{n} IN ({f}, {t})")
            }
        }
    }

    /// The update expression of `ops`, or one that changes nothing when `ops` is empty.
    fn update_or_noop(&mut self, ops: &[Update]) -> String {
        match self.update(ops) {
            Some(u) => u,
            None => format!("REMOVE {}", self.name(NOOP_ATTR)),
        }
    }

    /// The update expression of `ops`; `None` when there is nothing to change.
    fn update(&mut self, ops: &[Update]) -> Option<String> {
        let (mut set, mut add, mut remove) = (Vec::new(), Vec::new(), Vec::new());
        for op in ops {
            match op {
                Update::Set(a, v) => {
                    let n = self.name(a);
                    set.push(format!("{n} = {}", self.value(to_attr(v))));
                }
                Update::Add(a, d) => {
                    let n = self.name(a);
                    add.push(format!("{n} {}", self.value(AttributeValue::N(number(*d)))));
                }
                Update::Remove(a) => remove.push(self.name(a)),
            }
        }
        let clauses: Vec<String> = [("SET", set), ("ADD", add), ("REMOVE", remove)]
            .into_iter()
            .filter(|(_, parts)| !parts.is_empty())
            .map(|(verb, parts)| format!("{verb} {}", parts.join(", ")))
            .collect();
        (!clauses.is_empty()).then(|| clauses.join(" "))
    }
}

/// A number as DynamoDB's decimal string.
fn number(d: Decimal) -> String {
    d.normalize().to_string()
}

fn to_attr(v: &Val) -> AttributeValue {
    match v {
        Val::S(s) => AttributeValue::S(s.clone()),
        Val::N(d) => AttributeValue::N(number(*d)),
        Val::Bool(b) => AttributeValue::Bool(*b),
    }
}

fn from_attr(name: &str, av: AttributeValue) -> Result<Val, StoreError> {
    match av {
        AttributeValue::S(s) => Ok(Val::S(s)),
        AttributeValue::N(n) => Decimal::from_str(&n)
            .or_else(|_| Decimal::from_scientific(&n))
            .map(Val::N)
            .map_err(|e| StoreError::Backend(format!("attribute {name}: number {n:?} out of range: {e}"))),
        AttributeValue::Bool(b) => Ok(Val::Bool(b)),
        other => Err(StoreError::Backend(format!(
            "attribute {name}: unsupported type {other:?}"
        ))),
    }
}

fn to_attr_map(item: &Item) -> AttrMap {
    item.iter().map(|(k, v)| (k.clone(), to_attr(v))).collect()
}

fn from_attr_map(map: AttrMap) -> Result<Item, StoreError> {
    map.into_iter()
        .map(|(k, av)| {
            let v = from_attr(&k, av)?;
            Ok((k, v))
        })
        .collect()
}

fn key_map(key: &Key) -> AttrMap {
    HashMap::from([
        ("pk".to_owned(), AttributeValue::S(key.pk.clone())),
        ("sk".to_owned(), AttributeValue::S(key.sk.clone())),
    ])
}

fn backend(e: impl std::fmt::Display) -> StoreError {
    StoreError::Backend(e.to_string())
}

fn sdk_backend<E, R>(e: SdkError<E, R>) -> StoreError
where
    E: StdError + 'static,
    R: Debug,
{
    StoreError::Backend(DisplayErrorContext(&e).to_string())
}

/// The error of a single conditional write.
fn single_write_error<E, R>(e: SdkError<E, R>) -> StoreError
where
    E: StdError + ProvideErrorMetadata + 'static,
    R: Debug,
{
    match e.code() {
        Some("ConditionalCheckFailedException") => StoreError::ConditionFailed { index: None },
        Some("TransactionConflictException") => StoreError::Conflict,
        _ => sdk_backend(e),
    }
}

/// The error of a `TransactWriteItems`: the first write whose condition failed, else a
/// conflict with another transaction, else the backend's message.
fn transaction_error<R: Debug>(e: SdkError<TransactWriteItemsError, R>) -> StoreError {
    if let Some(TransactWriteItemsError::TransactionCanceledException(tc)) = e.as_service_error() {
        let reasons = tc.cancellation_reasons();
        if let Some(i) = reasons.iter().position(|r| r.code() == Some("ConditionalCheckFailed")) {
            return StoreError::ConditionFailed { index: Some(i) };
        }
        if reasons.iter().any(|r| r.code() == Some("TransactionConflict")) {
            return StoreError::Conflict;
        }
    }
    if e.code() == Some("TransactionConflictException") {
        return StoreError::Conflict;
    }
    sdk_backend(e)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conditions_render_with_placeholders() {
        let mut ex = Expr::default();
        let cond = Cond::And(vec![
            Cond::Exists,
            Cond::Cmp("rem".into(), CmpOp::Ge, Val::from(1)),
            Cond::And(vec![]),
            Cond::Cmp("state".into(), CmpOp::Ne, Val::from("closed")),
        ]);
        assert_eq!(
            ex.cond(&cond).as_deref(),
            Some(
                "(attribute_exists(#n0) AND (attribute_type(#n1, :v1) AND #n1 >= :v0) \
                 AND (attribute_exists(#n2) AND #n2 <> :v2))"
            )
        );
        assert_eq!(ex.names.get("#n2").map(String::as_str), Some("state"));
        assert_eq!(ex.values.get(":v0"), Some(&AttributeValue::N("1".into())));
        assert_eq!(ex.values.get(":v1"), Some(&AttributeValue::S("N".into())));
        assert_eq!(Expr::default().cond(&Cond::And(vec![])), None);
    }

    #[test]
    fn boolean_order_renders_as_the_satisfying_set() {
        let mut ex = Expr::default();
        assert_eq!(ex.cmp("b", CmpOp::Lt, &Val::Bool(true)), "#n0 = :v0");
        assert_eq!(ex.values.get(":v0"), Some(&AttributeValue::Bool(false)));
        assert_eq!(ex.cmp("b", CmpOp::Ge, &Val::Bool(false)), "#n0 IN (:v1, :v2)");
        assert_eq!(
            ex.cmp("b", CmpOp::Gt, &Val::Bool(true)),
            "(attribute_exists(#n0) AND attribute_not_exists(#n0))"
        );
    }

    #[test]
    fn updates_render_as_set_add_remove_clauses() {
        let mut ex = Expr::default();
        let ops = vec![
            Update::Set("a".into(), Val::from("x")),
            Update::Add("n".into(), Decimal::new(-150, 2)),
            Update::Remove("gsi1pk".into()),
            Update::Set("b".into(), Val::Bool(true)),
        ];
        assert_eq!(
            ex.update(&ops).as_deref(),
            Some("SET #n0 = :v0, #n3 = :v2 ADD #n1 :v1 REMOVE #n2")
        );
        assert_eq!(ex.values.get(":v1"), Some(&AttributeValue::N("-1.5".into())));
        assert_eq!(Expr::default().update(&[]), None);
    }

    #[test]
    fn numbers_parse_back_in_plain_and_scientific_forms() {
        for (text, want) in [
            ("12.50", Decimal::new(125, 1)),
            ("1E+3", Decimal::from(1000)),
            ("-2.5e-2", Decimal::new(-25, 3)),
        ] {
            assert_eq!(from_attr("n", AttributeValue::N(text.into())), Ok(Val::N(want)));
        }
        assert!(from_attr("n", AttributeValue::N("1e400".into())).is_err());
        assert!(from_attr("n", AttributeValue::Null(true)).is_err());
    }
}
