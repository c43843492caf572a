//! The service-wide flag lists of SSNs (`775`) and email addresses (`776`) that cannot be
//! used: `GET` lists, `PUT` replaces the list, `POST` adds values, `DELETE` removes them;
//! bodies are `{"values": [...]}`. Every value is checked before anything is written.

use std::collections::BTreeSet;

use http::Method;
use serde::Deserialize;
use serde_json::json;
use shared::http::operator::{OpError, OpReply, OperatorCtx, OperatorRequest};
use shared::model::flags::{FlagKind, VALUE_ATTR};
use shared::records::{self, flags::FlagItems};
use shared::store::{Index, Query, Val, Write, MAX_TRANSACTION_WRITES};
use shared::{operator_op, Routes};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Values {
    values: Vec<String>,
}

/// The normalized values stored on a flag list, sorted.
async fn flag_values(ctx: &OperatorCtx, kind: FlagKind) -> Result<Vec<String>, OpError> {
    let items = records::query_all(ctx.store(), Query::new(Index::Table, kind.partition())).await?;
    let mut out: Vec<String> = items
        .iter()
        .filter_map(|i| i.get(VALUE_ATTR).and_then(Val::as_str).map(str::to_owned))
        .collect();
    out.sort();
    Ok(out)
}

fn kind(req: &OperatorRequest) -> Result<FlagKind, OpError> {
    let name = req.param("kind");
    FlagKind::parse(name).ok_or_else(|| OpError::NotFound(format!("no flag list {name} (ssn or email)")))
}

async fn list(ctx: &OperatorCtx, kind: FlagKind) -> Result<OpReply, OpError> {
    Ok(OpReply::ok(
        json!({"kind": kind.name(), "values": flag_values(ctx, kind).await?}),
    ))
}

async fn get(ctx: OperatorCtx, req: OperatorRequest) -> Result<OpReply, OpError> {
    list(&ctx, kind(&req)?).await
}

/// `PUT`, `POST` and `DELETE`: the values are normalized and checked first.
async fn change(ctx: OperatorCtx, req: OperatorRequest) -> Result<OpReply, OpError> {
    let kind = kind(&req)?;
    let Values { values } = req.body()?;
    let mut wanted = BTreeSet::new();
    for v in &values {
        wanted.insert(kind.normalize_for_list(v).map_err(OpError::BadRequest)?);
    }
    let (add, remove): (Vec<String>, Vec<String>) = match req.method {
        Method::POST => (wanted.into_iter().collect(), Vec::new()),
        Method::DELETE => (Vec::new(), wanted.into_iter().collect()),
        _ => {
            let current = flag_values(&ctx, kind).await?;
            let stale = current.iter().filter(|c| !wanted.contains(*c)).cloned().collect();
            (wanted.into_iter().collect(), stale)
        }
    };
    let mut writes: Vec<Write> = remove
        .iter()
        .map(|v| Write::Delete {
            key: kind.key(v),
            cond: None,
        })
        .collect();
    writes.extend(add.iter().map(|v| {
        let mut item = kind.key(v).item();
        item.insert(VALUE_ATTR.into(), Val::S(v.clone()));
        Write::Put { item, cond: None }
    }));
    for chunk in writes.chunks(MAX_TRANSACTION_WRITES) {
        ctx.store().write(chunk.to_vec()).await?;
    }
    list(&ctx, kind).await
}

pub fn routes() -> Routes {
    const PATH: &str = "/operator/flags/{kind}";
    Routes::new()
        .operator(Method::GET, PATH, operator_op!(get))
        .operator(Method::PUT, PATH, operator_op!(change))
        .operator(Method::POST, PATH, operator_op!(change))
        .operator(Method::DELETE, PATH, operator_op!(change))
}
