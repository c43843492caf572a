//! How subscription templates of offerings are stored.
//!
//! # Layout
//!
//! | item | key | content |
//! |---|---|---|
//! | template of an offering | `<client>#SUBSCRIPTION#<offeringId>` / `ids::sortable(templateNameID)` | JSON of [`OfferingTemplate`] in `d`, version `v`, `live` (Bool) |
//! | one active use of an e-sign template per offering | `<client>#SUBSCRIPTIONKEY#<offeringId>` / `templateKey` | `t` = the templateNameID |
//!
//! IDs (`templateNameID`) come from the service-wide `subscription` counter (from 100000), so
//! an offering's templates read newest first by reading its partition backwards.

use crate::error::ApiError;
use crate::ids::sortable;
use crate::model::subscription::OfferingTemplate;
use crate::store::{CmpOp, Cond, Index, Key, Query, Store, Val, Write};

/// An offering template as read, with its version.
pub type StoredTemplate = super::Stored<OfferingTemplate>;

fn partition(client: &str, offering_id: &str) -> String {
    format!("{client}#SUBSCRIPTION#{offering_id}")
}

pub fn key(client: &str, offering_id: &str, id: &str) -> Key {
    Key::new(partition(client, offering_id), sortable(id))
}

/// The key that keeps one e-sign template active at most once per offering.
pub fn marker_key(client: &str, offering_id: &str, template_key: &str) -> Key {
    Key::new(format!("{client}#SUBSCRIPTIONKEY#{offering_id}"), template_key)
}

fn record_write(client: &str, t: &OfferingTemplate, before: Option<i64>) -> Result<Write, ApiError> {
    let mut item = key(client, &t.offering_id, &t.id).item();
    let json =
        serde_json::to_string(t).map_err(|e| ApiError::internal_from("offering template does not serialize", e))?;
    item.insert("d".into(), Val::S(json));
    item.insert("v".into(), Val::from(before.unwrap_or(0) + 1));
    item.insert("live".into(), Val::Bool(!t.deleted));
    let cond = match before {
        None => Cond::NotExists,
        Some(v) => Cond::Cmp("v".into(), CmpOp::Eq, Val::from(v)),
    };
    Ok(Write::Put { item, cond: Some(cond) })
}

fn marker_put(client: &str, t: &OfferingTemplate) -> Write {
    let mut item = marker_key(client, &t.offering_id, &t.template_key).item();
    item.insert("t".into(), Val::S(t.id.clone()));
    Write::Put {
        item,
        cond: Some(Cond::NotExists),
    }
}

fn marker_delete(client: &str, t: &OfferingTemplate) -> Write {
    Write::Delete {
        key: marker_key(client, &t.offering_id, &t.template_key),
        cond: None,
    }
}

/// The writes that attach a new template: its record, and its marker, whose write fails
/// when the offering already has this e-sign template active.
pub fn insert(client: &str, t: &OfferingTemplate) -> Result<(Write, Write), ApiError> {
    Ok((record_write(client, t, None)?, marker_put(client, t)))
}

/// The writes that change a stored template (`before` as read; the record's write is
/// conditioned on its version), and, when the e-sign template changes, the new marker's
/// write, which fails if the offering already has that one active (it goes after the others).
pub fn update(
    client: &str,
    before: &StoredTemplate,
    after: &OfferingTemplate,
) -> Result<(Vec<Write>, Option<Write>), ApiError> {
    let mut writes = vec![record_write(client, after, Some(before.version))?];
    let mut marker = None;
    if after.deleted && !before.rec.deleted {
        writes.push(marker_delete(client, &before.rec));
    } else if after.template_key != before.rec.template_key {
        writes.push(marker_delete(client, &before.rec));
        marker = Some(marker_put(client, after));
    }
    Ok((writes, marker))
}

fn decode(item: &crate::store::Item) -> Result<StoredTemplate, ApiError> {
    super::decode(item, "corrupt offering template")
}

/// One live template of an offering by its numeric ID (`None` when unknown or deleted).
pub async fn find(
    store: &dyn Store,
    client: &str,
    offering_id: &str,
    id: &str,
) -> Result<Option<StoredTemplate>, ApiError> {
    let id = id.trim();
    if id.is_empty() || id.len() > 18 || !id.bytes().all(|b| b.is_ascii_digit()) {
        return Ok(None);
    }
    let Ok(n) = id.parse::<u64>() else {
        return Ok(None);
    };
    let Some(item) = store.get(&key(client, offering_id, &n.to_string())).await? else {
        return Ok(None);
    };
    let t = decode(&item)?;
    Ok((!t.rec.deleted).then_some(t))
}

/// The offering's active templates (not deleted), newest first: what sendSubscriptionDocument
/// sends (their `template_key`s).
pub async fn active(store: &dyn Store, client: &str, offering_id: &str) -> Result<Vec<OfferingTemplate>, ApiError> {
    let mut q = Query::new(Index::Table, partition(client, offering_id));
    q.forward = false;
    q.limit = 500;
    let mut out = Vec::new();
    for item in &super::query_all(store, q).await? {
        let t = decode(item)?.rec;
        if !t.deleted {
            out.push(t);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::embedded::EmbeddedStore;

    fn template(id: &str, key: &str) -> OfferingTemplate {
        OfferingTemplate {
            id: id.into(),
            offering_id: "100000".into(),
            template_key: key.into(),
            template_name: format!("T {id}"),
            ..OfferingTemplate::default()
        }
    }

    #[tokio::test]
    async fn active_templates_read_newest_first_and_keys_stay_unique() {
        let s = EmbeddedStore::in_memory();
        for (id, key) in [("100000", "k1"), ("100009", "k2"), ("100010", "k3")] {
            let (record, marker) = insert("c", &template(id, key)).unwrap();
            s.write(vec![record, marker]).await.unwrap();
        }
        let ids: Vec<String> = active(&s, "c", "100000")
            .await
            .unwrap()
            .into_iter()
            .map(|t| t.id)
            .collect();
        assert_eq!(ids, ["100010", "100009", "100000"]);
        let (_, marker) = insert("c", &template("100011", "k2")).unwrap();
        assert!(
            s.write(vec![marker]).await.is_err(),
            "k2 is active on the offering already"
        );
        let stored = find(&s, "c", "100000", "100009").await.unwrap().unwrap();
        let mut gone = stored.rec.clone();
        gone.deleted = true;
        let (writes, marker) = update("c", &stored, &gone).unwrap();
        assert!(marker.is_none(), "a delete only removes the marker");
        s.write(writes).await.unwrap();
        assert!(find(&s, "c", "100000", "100009").await.unwrap().is_none());
        assert_eq!(active(&s, "c", "100000").await.unwrap().len(), 2);
        // The e-sign template can be attached again once its use was deleted.
        let (record, marker) = insert("c", &template("100012", "k2")).unwrap();
        s.write(vec![record, marker]).await.unwrap();
        assert!(active(&s, "c", "100001").await.unwrap().is_empty());
        assert!(find(&s, "c", "100000", "abc").await.unwrap().is_none());
    }
}
