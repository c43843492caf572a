//! E-signature records of trades and NDAs, and what an envelope's status change means for
//! them ([`subscription_effects`], [`nda_effects`], which the trades group registers as the
//! e-signature effects of its purposes).
//!
//! A **subscription document** ([`SignDoc`]) is one template of an offering sent to a
//! trade's primary party: one envelope per template (its `documentKey`), so each document has
//! its own status, as `updateDocuSignStatus` reports it (one `templateId` per payload). The
//! documents sent together are a *sending* (`sending` = 1, 2, ...; a resend starts the next
//! one and retires the previous); the trade's `documentKey` lists the current sending's keys
//! (comma separated, in template order) and its `esignStatus` sums their statuses
//! ([`aggregate`]).
//!
//! An **NDA** ([`Nda`]) is one envelope sent to an account's primary party for an offering;
//! `updateNdaDocuSignStatus` fires when it is signed.
//!
//! # Layout
//!
//! | item | key (`pk` / `sk`) | holds |
//! |---|---|---|
//! | subscription document | `<client>#SIGNDOC#<tradeId>` / documentKey | JSON of [`SignDoc`] in `d`, version `v`; while `SIGNED` also `gsi1pk` = `<client>#SIGNDOC`, `gsi1sk` = `<updatedDate>#<sortable id>` (the client's signed documents, one index query) |
//! | NDA | `<client>#NDA` / sortable refNum | JSON of [`Nda`] in `d`, version `v` |
//! | an account's NDA for an offering | `<client>#NDAFOR` / `<accountId>#<offeringId>` | `r` = the current refNum, `g` = its sending |
//!
//! Envelopes carry the purpose `subscription` / tradeId or `nda` / refNum.

use serde::{Deserialize, Serialize};

use shared::esign::{self, Envelope, EsignStatus};
use shared::ids::sortable;
use shared::model::trade::Trade;
use shared::providers::esign::{ESignError, ESignProvider};
use shared::records::{self, trade, Stored};
use shared::store::{CmpOp, Cond, Index, Item, Key, Query, Store, Val, Write};
use shared::webhooks::Event;
use shared::{ApiError, Ctx};

/// The purpose kind of a trade's subscription document envelopes (id: the trade ID).
pub const SUBSCRIPTION: &str = "subscription";
/// The purpose kind of NDA envelopes (id: the NDA's refNum).
pub const NDA: &str = "nda";

/// The webhook of a subscription document's status change (part 1).
pub const SUBSCRIPTION_STATUS_METHOD: &str = "updateDocuSignStatus";
/// The webhook of a signed NDA (part 1).
pub const NDA_SIGNED_METHOD: &str = "updateNdaDocuSignStatus";

/// One template of an offering sent to a trade's primary party (one envelope).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SignDoc {
    /// Numeric, from the service-wide document counter.
    pub id: String,
    pub trade_id: String,
    pub offering_id: String,
    pub account_id: String,
    /// The signer: the account's primary party when it was sent.
    pub party_id: String,
    /// The envelope.
    pub document_key: String,
    /// The e-signature account's template ID.
    #[serde(rename = "templateId")]
    pub template_key: String,
    pub template_name: String,
    /// The offering's template record it came from (`templateNameID`).
    #[serde(rename = "docsId")]
    pub offering_template_id: String,
    /// Which sending of the trade it belongs to (1, 2, ...).
    pub sending: u32,
    /// Part of the trade's current sending (a resend retires the earlier ones).
    pub current: bool,
    /// Created for the client platform to present (sendSubscriptionDocumentClient), not
    /// emailed: a draft until it is sent.
    pub embedded: bool,
    #[serde(rename = "esignStatus")]
    pub status: EsignStatus,
    #[serde(rename = "createdDate")]
    pub created: String,
    #[serde(rename = "updatedDate")]
    pub updated: String,
    #[serde(rename = "updatedIpAddress")]
    pub updated_ip: String,
}

fn trade_partition(client: &str, trade_id: &str) -> String {
    format!("{client}#SIGNDOC#{trade_id}")
}

/// The partition of the client's signed subscription documents in `gsi1`.
pub fn signed_partition(client: &str) -> String {
    format!("{client}#SIGNDOC")
}

/// Where a subscription document is kept.
pub fn sign_doc_key(client: &str, trade_id: &str, document_key: &str) -> Key {
    Key::new(trade_partition(client, trade_id), document_key)
}

fn json<T: Serialize>(value: &T, what: &'static str) -> Result<String, ApiError> {
    serde_json::to_string(value).map_err(|e| ApiError::internal_from(what, e))
}

fn versioned(mut item: Item, d: String, before: Option<i64>) -> Write {
    item.insert("d".into(), Val::S(d));
    item.insert("v".into(), Val::from(before.unwrap_or(0) + 1));
    let cond = match before {
        None => Cond::NotExists,
        Some(v) => Cond::Cmp("v".into(), CmpOp::Eq, Val::from(v)),
    };
    Write::Put { item, cond: Some(cond) }
}

impl SignDoc {
    /// The write of a new document (`before` = `None`: the key must be free) or of a change
    /// of the version read. A signed document enters the client's signed list.
    pub fn write(&self, client: &str, before: Option<i64>) -> Result<Write, ApiError> {
        let mut item = sign_doc_key(client, &self.trade_id, &self.document_key).item();
        if self.status == EsignStatus::Signed {
            item.insert("gsi1pk".into(), Val::S(signed_partition(client)));
            item.insert(
                "gsi1sk".into(),
                Val::S(format!("{}#{}", self.updated, sortable(&self.id))),
            );
        }
        Ok(versioned(item, json(self, "subscription document")?, before))
    }

    /// `updateDocuSignStatus` (part 1): `tradeId`, `id`, `documentId`, `templateId`,
    /// `esignstatus`, `updatedDate`, `updatedIpAddress`.
    pub fn status_event(&self) -> Event {
        Event::new(SUBSCRIPTION_STATUS_METHOD)
            .field("tradeId", self.trade_id.clone())
            .field("id", self.id.clone())
            .field("documentId", self.document_key.clone())
            .field("templateId", self.template_key.clone())
            .field("esignstatus", self.status.as_str().to_owned())
            .field("updatedDate", self.updated.clone())
            .field("updatedIpAddress", self.updated_ip.clone())
    }

    /// `<templateId>--<templateName>`, as templates are named to the offering operations.
    pub fn template_label(&self) -> String {
        format!("{}--{}", self.template_key, self.template_name)
    }
}

/// A trade's subscription documents, every sending, in the order they were made (one query).
pub async fn of_trade(store: &dyn Store, client: &str, trade_id: &str) -> Result<Vec<Stored<SignDoc>>, ApiError> {
    let q = Query::new(Index::Table, trade_partition(client, trade_id));
    let mut out = Vec::new();
    for item in &records::query_all(store, q).await? {
        out.push(records::decode::<SignDoc>(item, "subscription document")?);
    }
    out.sort_by_key(|s| sortable(&s.rec.id));
    Ok(out)
}

/// The client's signed subscription documents, most recently signed first, at most `max`
/// (the sparse index holds signed documents only).
pub async fn signed(store: &dyn Store, client: &str, max: usize) -> Result<Vec<SignDoc>, ApiError> {
    let mut q = Query::new(Index::Gsi1, signed_partition(client));
    q.forward = false;
    let mut out = Vec::new();
    loop {
        q.limit = (max - out.len()).clamp(1, 1000) as u32;
        let page = store.query(&q).await?;
        for item in &page.items {
            out.push(records::decode::<SignDoc>(item, "subscription document")?.rec);
        }
        match page.next {
            Some(next) if out.len() < max => q.start = Some(next),
            _ => return Ok(out),
        }
    }
}

/// What a trade's `esignStatus` says of its current documents: `SIGNED` when every one is
/// signed; else `DECLINED` when one was declined, `VOIDED` when one was voided, `NOTSIGNED`
/// when one is out for signature, `CREATED` when all are drafts. `None` without documents.
pub fn aggregate(statuses: impl IntoIterator<Item = EsignStatus>) -> Option<EsignStatus> {
    let all: Vec<EsignStatus> = statuses.into_iter().collect();
    if all.is_empty() {
        return None;
    }
    let any = |s: EsignStatus| all.contains(&s);
    Some(if all.iter().all(|s| *s == EsignStatus::Signed) {
        EsignStatus::Signed
    } else if any(EsignStatus::Declined) {
        EsignStatus::Declined
    } else if any(EsignStatus::Voided) {
        EsignStatus::Voided
    } else if any(EsignStatus::NotSigned) || any(EsignStatus::Signed) {
        EsignStatus::NotSigned
    } else {
        EsignStatus::Created
    })
}

/// The address a change is recorded with: the caller's, or empty when it came from the
/// provider's side (the operator's sandbox actions carry no client address).
pub fn change_ip(ctx: &Ctx) -> String {
    if ctx.ip.is_unspecified() {
        String::new()
    } else {
        ctx.ip.to_string()
    }
}

/// The effects of a subscription envelope's status change: the document's new status (with
/// `updateDocuSignStatus`) and, for a document of the current sending, the trade's
/// `esignStatus` when the sum of its documents changes. An envelope whose document is not
/// found (never expected) changes status alone.
pub async fn subscription_effects(ctx: Ctx, after: Envelope) -> Result<(Vec<Write>, Vec<Event>), ApiError> {
    let (ctx, after) = (&ctx, &after);
    let client = ctx.client_id();
    let trade_id = after.purpose.id.as_str();
    let docs = of_trade(ctx.store(), client, trade_id).await?;
    let Some(pos) = docs.iter().position(|d| d.rec.document_key == after.document_key) else {
        tracing::warn!(trade = trade_id, "subscription envelope without its document record");
        return Ok((Vec::new(), Vec::new()));
    };
    let mut doc = docs[pos].rec.clone();
    doc.status = after.status;
    doc.updated.clone_from(&after.updated);
    doc.updated_ip = change_ip(ctx);
    let mut writes = vec![doc.write(client, Some(docs[pos].version))?];
    let events = vec![doc.status_event()];
    if doc.current {
        if let Some(stored) = trade::load(ctx.store(), client, trade_id).await? {
            let statuses = docs.iter().enumerate().filter(|(_, d)| d.rec.current).map(|(i, d)| {
                if i == pos {
                    doc.status
                } else {
                    d.rec.status
                }
            });
            let sum = aggregate(statuses).filter(|sum| stored.rec.esign_status != sum.as_str());
            if let Some(sum) = sum {
                let mut t = stored.rec.clone();
                t.esign_status = sum.as_str().to_owned();
                t.stamps.updated.clone_from(&after.updated);
                writes.extend(trade::replace(client, &stored, &t)?);
            } else {
                writes.push(records::unchanged(client, &stored));
            }
            // The sum read the other documents: a concurrent change of one (the last two
            // signed at once) retries this, so the trade's status is never left behind.
            for d in docs
                .iter()
                .enumerate()
                .filter(|(i, d)| *i != pos && d.rec.current)
                .map(|(_, d)| d)
            {
                writes.push(Write::Check {
                    key: sign_doc_key(client, trade_id, &d.rec.document_key),
                    cond: Cond::Cmp("v".into(), CmpOp::Eq, Val::from(d.version)),
                });
            }
        }
    }
    Ok((writes, events))
}

/// The reason recorded on envelopes voided because their trade was cancelled.
pub const TRADE_CANCELLED: &str = "Trade cancelled";

/// The writes and webhooks that void subscription documents, as one transaction carries
/// them (with the caller's own writes); built by [`void_documents`].
#[derive(Debug, Default)]
pub struct Voids {
    /// Each voided envelope (conditioned on its version) and each document written.
    pub writes: Vec<Write>,
    /// `updateDocuSignStatus` `VOIDED`, one per voided document.
    pub events: Vec<Event>,
    /// The documents as written.
    pub docs: Vec<SignDoc>,
    /// The envelopes to void at the provider too.
    pub keys: Vec<String>,
    reason: String,
}

impl Voids {
    /// Voids the envelopes at the provider (the sandbox keeps no envelope of its own: the
    /// platform's record written with [`Voids::writes`] is the envelope).
    pub async fn at_provider(&self, client: &str, provider: &dyn ESignProvider) -> Result<(), ESignError> {
        for key in &self.keys {
            provider.void(client, key, &self.reason).await?;
        }
        Ok(())
    }
}

/// The writes that void `docs` of one trade: each one still out (a draft or awaiting
/// signature) is voided in its envelope record (with `reason`, conditioned on the
/// envelope's version) and in its document (`updatedDate` `now`, the caller's address),
/// with its `updateDocuSignStatus` webhook. `retire` also takes every one of `docs` out of
/// the trade's current sending (a resend); otherwise only the voided documents are written
/// (a cancellation: they stay the current sending, now `VOIDED`). Final documents (signed,
/// declined, voided) keep their status. Reads each envelope to void (one get each).
pub async fn void_documents(
    ctx: &Ctx,
    docs: &[&Stored<SignDoc>],
    retire: bool,
    reason: &str,
    now: &str,
) -> Result<Voids, ApiError> {
    let client = ctx.client_id();
    let mut out = Voids {
        reason: reason.to_owned(),
        ..Voids::default()
    };
    for old in docs {
        let mut d = old.rec.clone();
        let void = !d.status.is_final();
        if !void && !retire {
            continue;
        }
        if retire {
            d.current = false;
        }
        if void {
            let stored = esign::load_envelope(ctx.store(), client, &d.document_key)
                .await?
                .ok_or_else(|| ApiError::internal("subscription document without its envelope"))?;
            if !stored.rec.status.is_final() {
                let mut voided = stored.rec.clone();
                voided.status = EsignStatus::Voided;
                voided.reason = reason.to_owned();
                voided.updated = now.to_owned();
                out.writes
                    .push(esign::envelope_write(client, &voided, Some(stored.version))?);
                out.keys.push(d.document_key.clone());
            }
            d.status = EsignStatus::Voided;
            now.clone_into(&mut d.updated);
            d.updated_ip = ctx.ip.to_string();
            out.events.push(d.status_event());
        }
        out.writes.push(d.write(client, Some(old.version))?);
        out.docs.push(d);
    }
    Ok(out)
}

/// What cancelling a trade (deleteTrade, cancelInvestment, fundReturnRequest,
/// updateTradeStatus to `CANCELED` or `Rejected`) does to its subscription documents: those
/// still out are voided ([`void_documents`], reason [`TRADE_CANCELLED`]) and `after`'s
/// `esignStatus` becomes the sum of its current sending. The caller commits the answer's
/// writes and webhooks in the cancellation's transaction, then voids at the provider.
///
/// Only a trade with a current sending (a `documentKey`) can have documents out (a resend
/// voids the ones it retires), so a trade never sent costs no request; one sent costs a
/// query of its documents and a get per document still out.
pub async fn cancellation_voids(ctx: &Ctx, before: &Trade, after: &mut Trade, now: &str) -> Result<Voids, ApiError> {
    if before.document_key.is_empty() {
        return Ok(Voids::default());
    }
    let docs = of_trade(ctx.store(), ctx.client_id(), &before.id).await?;
    let out: Vec<&Stored<SignDoc>> = docs.iter().filter(|d| !d.rec.status.is_final()).collect();
    if out.is_empty() {
        return Ok(Voids::default());
    }
    let voids = void_documents(ctx, &out, false, TRADE_CANCELLED, now).await?;
    let statuses = docs.iter().filter(|d| d.rec.current).map(|d| {
        voids
            .docs
            .iter()
            .find(|v| v.document_key == d.rec.document_key)
            .map_or(d.rec.status, |v| v.status)
    });
    if let Some(sum) = aggregate(statuses) {
        after.esign_status = sum.as_str().to_owned();
    }
    Ok(voids)
}

// ---------------------------------------------------------------- NDAs

/// A non-disclosure agreement sent to an account's primary party for an offering.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Nda {
    /// Numeric, from the service-wide document counter.
    pub ref_num: String,
    pub account_id: String,
    pub party_id: String,
    pub offering_id: String,
    /// The client platform's own user ID for the investor, as sent (empty when not).
    pub maasuser_id: String,
    #[serde(rename = "templateId")]
    pub template_key: String,
    pub template_name: String,
    pub document_key: String,
    /// The account's NDAs for the offering are numbered 1, 2, ... (a new one after a
    /// declined or voided one).
    pub sending: u32,
    #[serde(rename = "esignStatus")]
    pub status: EsignStatus,
    #[serde(rename = "createdDate")]
    pub created: String,
    #[serde(rename = "updatedDate")]
    pub updated: String,
    #[serde(rename = "updatedIpAddress")]
    pub updated_ip: String,
}

pub fn nda_key(client: &str, ref_num: &str) -> Key {
    Key::new(format!("{client}#NDA"), sortable(ref_num))
}

/// The pointer to an account's current NDA for an offering.
pub fn nda_pointer_key(client: &str, account_id: &str, offering_id: &str) -> Key {
    Key::new(format!("{client}#NDAFOR"), format!("{account_id}#{offering_id}"))
}

impl Nda {
    /// The write of a new NDA (`before` = `None`) or of a change of the version read.
    pub fn write(&self, client: &str, before: Option<i64>) -> Result<Write, ApiError> {
        let item = nda_key(client, &self.ref_num).item();
        Ok(versioned(item, json(self, "NDA")?, before))
    }

    /// The write that makes this NDA the account's current one for the offering, conditioned
    /// on the pointer read: absent (`None`) or naming `previous`.
    pub fn pointer_write(&self, client: &str, previous: Option<&str>) -> Write {
        let mut item = nda_pointer_key(client, &self.account_id, &self.offering_id).item();
        item.insert("r".into(), Val::S(self.ref_num.clone()));
        item.insert("g".into(), Val::from(i64::from(self.sending)));
        let cond = match previous {
            None => Cond::NotExists,
            Some(r) => Cond::Cmp("r".into(), CmpOp::Eq, Val::from(r)),
        };
        Write::Put { item, cond: Some(cond) }
    }

    /// sendNda's record (and its webhook's fields): `refNum`, `documentKey`, `esignStatus`,
    /// `accountId`, `partyId`, `offeringId`, `maasuserId`.
    pub fn record(&self) -> serde_json::Map<String, serde_json::Value> {
        let mut m = serde_json::Map::new();
        m.insert("refNum".into(), self.ref_num.clone().into());
        m.insert("documentKey".into(), self.document_key.clone().into());
        m.insert("esignStatus".into(), self.status.as_str().into());
        m.insert("accountId".into(), self.account_id.clone().into());
        m.insert("partyId".into(), self.party_id.clone().into());
        m.insert("offeringId".into(), self.offering_id.clone().into());
        m.insert("maasuserId".into(), self.maasuser_id.clone().into());
        m
    }

    /// `updateNdaDocuSignStatus` (part 1): `refNum`, `maasuserId`, `accountId`, `partyId`,
    /// `offeringId`, `eSignedStatus`.
    pub fn signed_event(&self) -> Event {
        Event::new(NDA_SIGNED_METHOD)
            .field("refNum", self.ref_num.clone())
            .field("maasuserId", self.maasuser_id.clone())
            .field("accountId", self.account_id.clone())
            .field("partyId", self.party_id.clone())
            .field("offeringId", self.offering_id.clone())
            .field("eSignedStatus", self.status.as_str().to_owned())
    }
}

/// An NDA by its refNum.
pub async fn load_nda(store: &dyn Store, client: &str, ref_num: &str) -> Result<Option<Stored<Nda>>, ApiError> {
    if ref_num.is_empty() || ref_num.len() > 20 || !ref_num.bytes().all(|b| b.is_ascii_digit()) {
        return Ok(None);
    }
    match store.get(&nda_key(client, ref_num)).await? {
        Some(item) => records::decode::<Nda>(&item, "NDA").map(Some),
        None => Ok(None),
    }
}

/// The account's current NDA for the offering (the latest sent), if any.
pub async fn current_nda(
    store: &dyn Store,
    client: &str,
    account_id: &str,
    offering_id: &str,
) -> Result<Option<Stored<Nda>>, ApiError> {
    let Some(pointer) = store.get(&nda_pointer_key(client, account_id, offering_id)).await? else {
        return Ok(None);
    };
    let ref_num = pointer.get("r").and_then(Val::as_str).unwrap_or("");
    load_nda(store, client, ref_num).await
}

/// The effects of an NDA envelope's status change: the NDA's new status, and
/// `updateNdaDocuSignStatus` when it was signed.
pub async fn nda_effects(ctx: Ctx, after: Envelope) -> Result<(Vec<Write>, Vec<Event>), ApiError> {
    let (ctx, after) = (&ctx, &after);
    let client = ctx.client_id();
    let Some(stored) = load_nda(ctx.store(), client, &after.purpose.id).await? else {
        tracing::warn!(nda = %after.purpose.id, "NDA envelope without its record");
        return Ok((Vec::new(), Vec::new()));
    };
    let mut nda = stored.rec.clone();
    nda.status = after.status;
    nda.updated.clone_from(&after.updated);
    nda.updated_ip = change_ip(ctx);
    let writes = vec![nda.write(client, Some(stored.version))?];
    let events = if nda.status == EsignStatus::Signed {
        vec![nda.signed_event()]
    } else {
        Vec::new()
    };
    Ok((writes, events))
}

#[cfg(test)]
mod tests {
    use super::*;
    use EsignStatus::*;

    #[test]
    fn a_trades_status_sums_its_current_documents() {
        assert_eq!(aggregate([]), None);
        assert_eq!(aggregate([Signed, Signed]), Some(Signed));
        assert_eq!(aggregate([Signed, NotSigned]), Some(NotSigned));
        assert_eq!(aggregate([Signed, Created]), Some(NotSigned));
        assert_eq!(aggregate([Created, Created]), Some(Created));
        assert_eq!(aggregate([Created, NotSigned]), Some(NotSigned));
        assert_eq!(aggregate([Signed, Declined, Voided]), Some(Declined));
        assert_eq!(aggregate([Signed, Voided, NotSigned]), Some(Voided));
    }

    fn doc(status: EsignStatus) -> SignDoc {
        SignDoc {
            id: "100007".into(),
            trade_id: "100001".into(),
            offering_id: "100000".into(),
            account_id: "A1000000".into(),
            party_id: "P1000000".into(),
            document_key: "k-1".into(),
            template_key: "tpl".into(),
            template_name: "Subscription Agreement".into(),
            offering_template_id: "100003".into(),
            sending: 1,
            current: true,
            embedded: false,
            status,
            created: "2026-01-02 03:04:05".into(),
            updated: "2026-01-02 03:04:06".into(),
            updated_ip: String::new(),
        }
    }

    #[test]
    fn only_signed_documents_enter_the_signed_index() {
        let Write::Put { item, cond } = doc(NotSigned).write("c", None).unwrap() else {
            panic!("a put")
        };
        assert!(!item.contains_key("gsi1pk"));
        assert_eq!(cond, Some(Cond::NotExists));
        let Write::Put { item, cond } = doc(Signed).write("c", Some(3)).unwrap() else {
            panic!("a put")
        };
        assert_eq!(item["gsi1pk"], Val::from("c#SIGNDOC"));
        assert_eq!(item["gsi1sk"], Val::from("2026-01-02 03:04:06#000000100007"));
        assert_eq!(item["v"], Val::from(4));
        assert_eq!(cond, Some(Cond::Cmp("v".into(), CmpOp::Eq, Val::from(3))));
    }

    #[test]
    fn the_status_webhook_carries_part_ones_fields() {
        let e = doc(Declined).status_event();
        let names: Vec<&str> = e.fields.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(
            names,
            [
                "tradeId",
                "id",
                "documentId",
                "templateId",
                "esignstatus",
                "updatedDate",
                "updatedIpAddress"
            ]
        );
        assert_eq!(e.fields[4].1.as_deref(), Some("DECLINED"));
        assert_eq!(doc(Signed).template_label(), "tpl--Subscription Agreement");
    }
}
