//! E-signature of trades: sendSubscriptionDocument, sendSubscriptionDocumentClient,
//! resendSubscriptionDocuments, getTradeSignedDocument, getAllSignedDocument,
//! updateDocuSignStatus, and the NDA operations sendNda and updateNdaDocuSignStatus.
//!
//! A sending puts each of the offering's active subscription templates in its own envelope
//! to the account's primary party (`crate::trade_esign::SignDoc`, one per template),
//! committed in ONE transaction with the envelopes, the trade's `documentKey`/`esignStatus`
//! (conditioned on the trade's version) and the webhooks. Status changes reported later
//! (the operator's sandbox actions, or a client's void) go through `esign::change_status`,
//! whose `status_effects` update the document and the trade and fire `updateDocuSignStatus`
//! / `updateNdaDocuSignStatus`. Shapes and decisions: `docs/trades-documents.md`.

use std::collections::HashMap;

use crate::trade_esign::{self, aggregate, Nda, SignDoc, NDA, SUBSCRIPTION};
use serde::Serialize;
use serde_json::{Map, Value};
use shared::documents::DOCUMENT;
use shared::esign::{self, Action, EsignStatus, Purpose};
use shared::mask::MASK;
use shared::model::ids::{no_trade, numeric_id, AccountId};
use shared::model::link::no_primary_party;
use shared::model::trade::{wrong_status, BodyView, Trade};
use shared::model::Party;
use shared::providers::esign::{ESignProvider, EnvelopeRequest, Signer};
use shared::records::{self, Stored};
use shared::records::{offering, subscription, trade};
use shared::webhooks::{record_event, view_event, Event};
use shared::{op, ApiError, Ctx, Params, Plan, Reply, Routes};

use crate::support::{existing_account, primary, trade_id, trade_of};
use shared::webhooks::ids_event;

/// Most templates one sending carries: its envelopes and document records, the retired
/// sending's voids, the trade and the webhooks are one transaction (at most 100 writes).
pub const MAX_TEMPLATES: usize = 12;

/// Most documents getAllSignedDocument answers (as getAllTrades).
const ALL_MAX: usize = 10_000;

/// The reason recorded on envelopes a resend voids.
const RESENT: &str = "Replaced by resendSubscriptionDocuments";

/// The role of the primary party in the templates.
const INVESTOR_ROLE: &str = "Investor";

/// Which operation sends.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Sending {
    /// sendSubscriptionDocument: emailed to the signer, once per trade.
    Email,
    /// sendSubscriptionDocumentClient: drafts the client platform presents itself.
    Embedded,
    /// resendSubscriptionDocuments: emailed again as a new sending.
    Resend,
}

/// The IDs a subscription operation names.
struct Target {
    offering: String,
    account: AccountId,
    trade: String,
}

impl Target {
    fn parse(p: &Params) -> Result<Target, ApiError> {
        let offering = numeric_id("offeringId", &p.req(&["offeringId"])?)?;
        let account = p.req(&["accountId"])?;
        let trade = trade_id(p)?;
        // Checked after the other parameters: a malformed ID answers 148 as an unknown one.
        let account = AccountId::parse(&account)?;
        Ok(Target {
            offering,
            account,
            trade,
        })
    }

    /// The trade, after its account (`148`) and offering (`138`): `188` when unknown or not
    /// that account's and that offering's.
    async fn load(&self, ctx: &Ctx) -> Result<Stored<Trade>, ApiError> {
        let account = existing_account(ctx, &self.account).await?;
        offering::live(ctx.store(), ctx.client_id(), &self.offering).await?;
        let t = trade_of(ctx, &self.trade).await?;
        if t.rec.account_id != account.rec.id || t.rec.offering_id != self.offering {
            return Err(no_trade());
        }
        Ok(t)
    }
}

/// The signer of an account's documents: its primary party (`135`), which needs an email
/// address (`106`).
async fn signer(ctx: &Ctx, account: &str) -> Result<(String, Signer), ApiError> {
    let party_id = primary(ctx, account).await?;
    let party = records::load::<Party>(ctx.store(), ctx.client_id(), &party_id)
        .await?
        .ok_or_else(no_primary_party)?
        .rec;
    if !party.email.contains('@') {
        return Err(ApiError::invalid(
            "emailAddress",
            format!("the primary party {party_id} has no email address to send the documents to"),
        ));
    }
    let name = [&party.first_name, &party.middle_initial, &party.last_name]
        .iter()
        .map(|s| s.trim())
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    let name = if name.is_empty() { party_id.clone() } else { name };
    let signer = Signer {
        name,
        email: party.email.trim().to_owned(),
        role: INVESTOR_ROLE.into(),
    };
    Ok((party_id, signer))
}

/// An element of `document_details`: `documentKey`, `esignStatus`, `accountId` (observed),
/// also the webhook of each document sent.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct DocumentView<'a> {
    document_key: &'a str,
    esign_status: &'static str,
    account_id: &'a str,
}

impl<'a> DocumentView<'a> {
    fn new(d: &'a SignDoc) -> Self {
        DocumentView {
            document_key: &d.document_key,
            esign_status: d.status.as_str(),
            account_id: &d.account_id,
        }
    }
}

fn documents_reply(docs: &[SignDoc]) -> Reply {
    let list: Vec<_> = docs.iter().map(DocumentView::new).collect();
    Reply::ok().with("document_details", list)
}

/// The webhook of the embedded variant (which answers no record): `tradeId`, `accountId`,
/// `documentKey` (the keys, comma separated) and `esignStatus` (the trade's).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct EmbeddedSendingView<'a> {
    trade_id: &'a str,
    account_id: &'a str,
    document_key: &'a str,
    esign_status: &'a str,
}

/// The webhooks of a sending: one per document with its record, or for the embedded
/// variant one for the trade.
fn sending_events(method: &str, how: Sending, trade: &Trade, docs: &[SignDoc]) -> Vec<Event> {
    match how {
        Sending::Embedded => {
            let view = EmbeddedSendingView {
                trade_id: &trade.id,
                account_id: &trade.account_id,
                document_key: &trade.document_key,
                esign_status: &trade.esign_status,
            };
            vec![view_event(method, &view)]
        }
        _ => docs.iter().map(|d| view_event(method, &DocumentView::new(d))).collect(),
    }
}

/// The writes that retire the current sending: each document leaves it, and one still out
/// (a draft or awaiting signature) is voided at the provider, in the platform's record and
/// with its `updateDocuSignStatus` webhook (`trade_esign::void_documents`, as a cancellation).
async fn retire(
    ctx: &Ctx,
    provider: &dyn ESignProvider,
    current: &[&Stored<SignDoc>],
    now: &str,
    writes: &mut Vec<shared::store::Write>,
    events: &mut Vec<Event>,
) -> Result<(), ApiError> {
    let voids = trade_esign::void_documents(ctx, current, true, RESENT, now).await?;
    voids
        .at_provider(ctx.client_id(), provider)
        .await
        .map_err(ApiError::from)?;
    writes.extend(voids.writes);
    events.extend(voids.events);
    Ok(())
}

/// sendSubscriptionDocument, its embedded variant and resendSubscriptionDocuments: the
/// documents of the trade's current sending after the call.
async fn send(ctx: &Ctx, p: &Params, how: Sending, method: &str) -> Result<Vec<SignDoc>, ApiError> {
    let target = Target::parse(p)?;
    // Owned: a captured reference would keep the handler's future from being `Send`.
    let method = method.to_owned();
    ctx.transact(async move |ctx, _| {
        let client = ctx.client_id();
        let provider = esign::provider(&ctx);
        let stored = target.load(&ctx).await?;
        let docs = trade_esign::of_trade(ctx.store(), client, &stored.rec.id).await?;
        let current: Vec<&Stored<SignDoc>> = docs.iter().filter(|d| d.rec.current).collect();
        if how != Sending::Resend && !current.is_empty() {
            // Sent already (call once after createTrade): the sending as it stands.
            let docs: Vec<SignDoc> = current.iter().map(|d| d.rec.clone()).collect();
            let events = sending_events(&method, how, &stored.rec, &docs);
            return Ok(Plan::answer(docs).events(events));
        }
        if how == Sending::Resend && aggregate(current.iter().map(|d| d.rec.status)) == Some(EsignStatus::Signed) {
            return Err(ApiError::invalid(
                "tradeId",
                "the trade's subscription documents are signed already",
            ));
        }
        if stored.rec.holding().status.is_terminal() {
            return Err(wrong_status(format!(
                "Subscription documents cannot be sent for a trade in status {}",
                stored.rec.status
            )));
        }
        let (party_id, signer) = signer(&ctx, target.account.as_str()).await?;
        let mut templates = subscription::active(ctx.store(), client, &target.offering).await?;
        if templates.is_empty() {
            return Err(ApiError::invalid(
                "offeringId",
                "the offering has no active subscription templates (addSubscriptionsforOffering)",
            ));
        }
        if templates.len() > MAX_TEMPLATES {
            return Err(ApiError::invalid(
                "offeringId",
                format!("at most {MAX_TEMPLATES} subscription templates are sent to a trade"),
            ));
        }
        // In the order they were attached to the offering.
        templates.reverse();
        let now = ctx.now();
        let ip = ctx.ip.to_string();
        let mut writes = Vec::new();
        let mut events = Vec::new();
        retire(&ctx, &provider, &current, &now, &mut writes, &mut events).await?;
        let sending = docs.iter().map(|d| d.rec.sending).max().unwrap_or(0) + 1;
        let mut sent = Vec::with_capacity(templates.len());
        for tpl in &templates {
            let request = EnvelopeRequest {
                reference: format!("trade-{}-subscription-{sending}-{}", stored.rec.id, tpl.id),
                template_ids: vec![tpl.template_key.clone()],
                signers: vec![signer.clone()],
            };
            let purpose = Purpose::new(SUBSCRIPTION, &stored.rec.id);
            let (envelope, envelope_writes) =
                esign::create_envelope(&ctx, &provider, &request, purpose, how != Sending::Embedded).await?;
            writes.extend(envelope_writes);
            let doc = SignDoc {
                id: ctx.next_id(DOCUMENT).await?,
                trade_id: stored.rec.id.clone(),
                offering_id: stored.rec.offering_id.clone(),
                account_id: stored.rec.account_id.clone(),
                party_id: party_id.clone(),
                document_key: envelope.document_key,
                template_key: tpl.template_key.clone(),
                template_name: tpl.template_name.clone(),
                offering_template_id: tpl.id.clone(),
                sending,
                current: true,
                embedded: how == Sending::Embedded,
                status: envelope.status,
                created: now.clone(),
                updated: now.clone(),
                updated_ip: ip.clone(),
            };
            writes.push(doc.write(client, None)?);
            sent.push(doc);
        }
        let mut after = stored.rec.clone();
        after.document_key = sent
            .iter()
            .map(|d| d.document_key.as_str())
            .collect::<Vec<_>>()
            .join(",");
        if let Some(sum) = aggregate(sent.iter().map(|d| d.status)) {
            after.esign_status = sum.as_str().to_owned();
        }
        after.stamps.updated.clone_from(&now);
        after.stamps.updated_ip.clone_from(&ip);
        writes.extend(trade::replace(client, &stored, &after)?);
        events.extend(sending_events(&method, how, &after, &sent));
        Ok(Plan::new(writes, sent).events(events))
    })
    .await
}

/// `POST /v3/sendSubscriptionDocument`: `offeringId`, `accountId`, `tradeId` (all required).
/// Sends each of the offering's active subscription templates (at most 12) in its own
/// envelope to the account's primary party by email; the documents and the trade's
/// `esignStatus` become `NOTSIGNED`, the trade's `documentKey` lists their keys. Call once
/// after createTrade: a later call sends nothing and answers the current documents as they
/// stand (resendSubscriptionDocuments sends again). Answers `document_details` = one
/// `{documentKey, esignStatus, accountId}` per document, in the order the templates were
/// attached; fires `sendSubscriptionDocument` once per document with those fields.
pub async fn send_subscription(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let docs = send(&ctx, &p, Sending::Email, "sendSubscriptionDocument").await?;
    Ok(documents_reply(&docs))
}

/// `POST /v3/sendSubscriptionDocumentClient`: as sendSubscriptionDocument, but the client
/// platform presents the documents itself (embedded signing): the envelopes are created as
/// drafts (`CREATED`, nobody is emailed; the trade's `esignStatus` `CREATED`) until the
/// provider reports them sent. Answers `101`/`Ok` only (observed); fires
/// `sendSubscriptionDocumentClient` once with `tradeId`, `accountId`, `documentKey` (comma
/// separated) and `esignStatus`.
pub async fn send_subscription_client(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    send(&ctx, &p, Sending::Embedded, "sendSubscriptionDocumentClient").await?;
    Ok(Reply::ok())
}

/// `POST /v3/resendSubscriptionDocuments`: `offeringId`, `accountId`, `tradeId`. A new
/// sending of the offering's current active templates, emailed; the previous sending is
/// retired, its documents still out voided (each firing `updateDocuSignStatus` `VOIDED`).
/// Refused (`106`) when the trade's documents are all signed. Answers `document_details` =
/// one `{documentKey, esignStatus: NOTSIGNED, accountId}` per new document; fires
/// `resendSubscriptionDocuments` once per document with those fields.
pub async fn resend_subscription(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let docs = send(&ctx, &p, Sending::Resend, "resendSubscriptionDocuments").await?;
    Ok(documents_reply(&docs))
}

/// The `SignedDocumentDetails` object (OBSERVED-MORE, in its order): the document's `id`,
/// `documentId` (its envelope key), `esignstatus`, `templateName` (`<templateId>--<name>`),
/// `widgetTemplate` (`1` for a document the client platform presents, `0` for an emailed
/// one), `docsId` (the offering template's `templateNameID`), then the trade's fields.
#[derive(Serialize)]
struct SignedView<'a> {
    #[serde(rename = "orderId")]
    order_id: &'a str,
    id: &'a str,
    #[serde(rename = "documentId")]
    document_id: &'a str,
    esignstatus: &'static str,
    #[serde(rename = "templateName")]
    template_name: String,
    #[serde(rename = "widgetTemplate")]
    widget_template: &'static str,
    #[serde(rename = "docsId")]
    docs_id: &'a str,
    #[serde(rename = "developerAPIKey")]
    developer_api_key: &'static str,
    #[serde(flatten)]
    trade: BodyView<'a>,
    archived_status: &'static str,
}

fn signed_view<'a>(d: &'a SignDoc, t: &'a Trade) -> SignedView<'a> {
    SignedView {
        order_id: &t.id,
        id: &d.id,
        document_id: &d.document_key,
        esignstatus: d.status.as_str(),
        template_name: d.template_label(),
        widget_template: if d.embedded { "1" } else { "0" },
        docs_id: &d.offering_template_id,
        developer_api_key: MASK,
        trade: t.body(),
        archived_status: t.archived_status(),
    }
}

/// `POST /v3/getTradeSignedDocument`: `tradeId`; `SignedDocumentDetails` = the object of the
/// trade's most recently signed subscription document, or, while none is signed, of the
/// first document of its current sending (its `esignstatus` says where it stands). Nothing
/// ever sent: body statusCode `404`. Fires `getTradeSignedDocument` with the object's fields.
pub async fn get_trade_signed(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let id = trade_id(&p)?;
    let (doc, t) = ctx
        .transact(async move |ctx, _| {
            let t = trade_of(&ctx, &id).await?.rec;
            let docs = trade_esign::of_trade(ctx.store(), ctx.client_id(), &t.id).await?;
            let chosen = docs
                .iter()
                .filter(|d| d.rec.status == EsignStatus::Signed)
                .max_by(|a, b| {
                    (&a.rec.updated, a.rec.id.len(), &a.rec.id).cmp(&(&b.rec.updated, b.rec.id.len(), &b.rec.id))
                })
                .or_else(|| docs.iter().find(|d| d.rec.current))
                .ok_or_else(|| ApiError::coded("404", "No subscription document has been sent for this trade"))?;
            let event = view_event("getTradeSignedDocument", &signed_view(&chosen.rec, &t));
            Ok(Plan::answer((chosen.rec.clone(), t)).event(event))
        })
        .await?;
    Ok(Reply::ok().with("SignedDocumentDetails", signed_view(&doc, &t)))
}

/// An optional numeric ID parameter (blank counts as absent).
fn opt_numeric(p: &Params, name: &str) -> Result<Option<String>, ApiError> {
    match p.opt(&[name])? {
        Some(v) if !v.trim().is_empty() => numeric_id(name, &v).map(Some),
        _ => Ok(None),
    }
}

/// `POST /v3/getAllSignedDocument` (designed): optional `tradeId`, `accountId`,
/// `offeringId` (each narrows the set; `188`/`148`/`138` when it names nothing);
/// `SignedDocumentDetails` = an array of getTradeSignedDocument's objects, one per signed
/// subscription document of the caller, most recently signed first, at most 10,000 (`[]`
/// when none). Fires `getAllSignedDocument` with `documentIds` (comma separated).
pub async fn get_all_signed(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let trade_f = opt_numeric(&p, "tradeId")?;
    let offering_f = opt_numeric(&p, "offeringId")?;
    let account_f = p
        .opt(&["accountId"])?
        .filter(|a| !a.trim().is_empty())
        .map(|a| AccountId::parse(&a))
        .transpose()?;
    let (docs, trades) = ctx
        .transact(async move |ctx, _| {
            if let Some(a) = &account_f {
                existing_account(&ctx, a).await?;
            }
            if let Some(o) = &offering_f {
                offering::live(ctx.store(), ctx.client_id(), o).await?;
            }
            let client = ctx.client_id();
            let docs: Vec<SignDoc> = match &trade_f {
                Some(id) => {
                    let t = trade_of(&ctx, id).await?.rec;
                    let mut docs: Vec<SignDoc> = trade_esign::of_trade(ctx.store(), client, &t.id)
                        .await?
                        .into_iter()
                        .map(|s| s.rec)
                        .filter(|d| d.status == EsignStatus::Signed)
                        .collect();
                    docs.sort_by(|a, b| (&b.updated, b.id.len(), &b.id).cmp(&(&a.updated, a.id.len(), &a.id)));
                    docs
                }
                None => trade_esign::signed(ctx.store(), client, ALL_MAX).await?,
            };
            let docs: Vec<SignDoc> = docs
                .into_iter()
                .filter(|d| account_f.as_ref().is_none_or(|a| d.account_id == a.as_str()))
                .filter(|d| offering_f.as_deref().is_none_or(|o| d.offering_id == o))
                .collect();
            let mut trades: HashMap<String, Trade> = HashMap::new();
            for d in &docs {
                if !trades.contains_key(&d.trade_id) {
                    if let Some(t) = trade::load(ctx.store(), client, &d.trade_id).await? {
                        trades.insert(d.trade_id.clone(), t.rec);
                    }
                }
            }
            let event = ids_event(
                "getAllSignedDocument",
                None,
                "documentIds",
                docs.iter().map(|d| d.id.clone()),
            );
            Ok(Plan::answer((docs, trades)).event(event))
        })
        .await?;
    // A document whose trade is gone is left out of the answer (not of the webhook).
    let out: Vec<_> = docs
        .iter()
        .filter_map(|d| trades.get(&d.trade_id).map(|t| signed_view(d, t)))
        .collect();
    Ok(Reply::ok().with("SignedDocumentDetails", out))
}

/// The change a client may make to an envelope it sent: send a draft (`NOTSIGNED`) or
/// withdraw it (`VOIDED`). Signing and declining are the signer's, reported by the provider
/// (in the sandbox: the operator), so `SIGNED` and `DECLINED` are refused (`106`).
fn client_action(p: &Params) -> Result<Action, ApiError> {
    let sent = p.req(&["esignStatus", "esignstatus"])?;
    match sent.trim().to_ascii_uppercase().as_str() {
        "NOTSIGNED" => Ok(Action::Send),
        "VOIDED" => Ok(Action::Void),
        "SIGNED" | "DECLINED" => Err(ApiError::invalid(
            "esignStatus",
            "SIGNED and DECLINED are reported by the e-signature provider, not set by clients",
        )),
        _ => Err(ApiError::invalid("esignStatus", "must be NOTSIGNED or VOIDED")),
    }
}

/// The record of updateDocuSignStatus: the document's `updateDocuSignStatus` fields.
fn status_record(d: &SignDoc) -> Map<String, Value> {
    d.status_event()
        .fields
        .into_iter()
        .map(|(k, v)| (k, v.map_or(Value::Null, Value::from)))
        .collect()
}

/// `POST /v3/updateDocuSignStatus` (designed): `tradeId`, `documentKey` (alias
/// `documentId`) of one of the trade's subscription documents, `esignStatus` `NOTSIGNED`
/// (send a draft of sendSubscriptionDocumentClient) or `VOIDED` (withdraw it); optional
/// `reason`. The move follows the envelope rules (`106` when its status does not allow it);
/// the document, the trade's `esignStatus` and the `updateDocuSignStatus` webhook follow as
/// for a provider's report. The current status again: `101`, nothing written, no webhook.
/// Answers `document_details` = `[{tradeId, id, documentId, templateId, esignstatus,
/// updatedDate, updatedIpAddress}]`.
pub async fn update_docusign_status(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let id = trade_id(&p)?;
    let key = p.req(&["documentKey", "documentId"])?.trim().to_owned();
    let action = client_action(&p)?;
    let reason = p.text(&["reason"])?;
    let t = trade_of(&ctx, &id).await?.rec;
    let find = |docs: Vec<Stored<SignDoc>>| docs.into_iter().find(|d| d.rec.document_key == key);
    let docs = trade_esign::of_trade(ctx.store(), ctx.client_id(), &t.id).await?;
    find(docs).ok_or_else(|| ApiError::invalid("documentKey", "Document does not exist"))?;
    esign::change_status(&ctx, &crate::ESIGN_EFFECTS, &key, action, &reason).await?;
    let docs = trade_esign::of_trade(ctx.store(), ctx.client_id(), &t.id).await?;
    let doc = find(docs).ok_or_else(|| ApiError::invalid("documentKey", "Document does not exist"))?;
    let record = Value::Object(status_record(&doc.rec));
    Ok(Reply::ok().with_value("document_details", Value::Array(vec![record])))
}

/// `POST /v3/sendNda` (designed): `accountId`, `offeringId` required; optional `templateId`
/// (a template of the connected e-signature account; default: its first template in the
/// folder `NDA`) and `maasuserId` (the client platform's own user ID, echoed in the
/// webhook). Sends the NDA to the account's primary party (`148`, `138`, `135`). One NDA per
/// account and offering: while it is out or signed, a call answers it as it stands; after
/// a decline or a void a call sends a new one. Answers `document_details` = `[{refNum,
/// documentKey, esignStatus, accountId, partyId, offeringId, maasuserId}]`; fires `sendNda`
/// with those fields; `updateNdaDocuSignStatus` follows when it is signed.
pub async fn send_nda(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let account = p.req(&["accountId"])?;
    let offering_id = numeric_id("offeringId", &p.req(&["offeringId"])?)?;
    let wanted = p
        .opt(&["templateId"])?
        .map(|t| t.trim().to_owned())
        .filter(|t| !t.is_empty());
    let maasuser = p.text(&["maasuserId"])?.trim().to_owned();
    let account = AccountId::parse(&account)?;
    let account = existing_account(&ctx, &account).await?.rec.id;
    offering::live(ctx.store(), ctx.client_id(), &offering_id).await?;
    let nda = ctx
        .transact(async move |ctx, _| {
            let client = ctx.client_id();
            let current = trade_esign::current_nda(ctx.store(), client, &account, &offering_id).await?;
            if let Some(c) = current
                .as_ref()
                .filter(|c| !matches!(c.rec.status, EsignStatus::Declined | EsignStatus::Voided))
            {
                // Out or signed: answered as it stands.
                let event = record_event("sendNda", &c.rec.record());
                return Ok(Plan::answer(c.rec.clone()).event(event));
            }
            let provider = esign::provider(&ctx);
            let (party_id, signer) = signer(&ctx, &account).await?;
            let template = esign::template_in_folder(&ctx, &provider, wanted.as_deref(), "NDA").await?;
            let sending = current.as_ref().map_or(0, |c| c.rec.sending) + 1;
            let ref_num = ctx.next_id(DOCUMENT).await?;
            let request = EnvelopeRequest {
                reference: format!("nda-{account}-{offering_id}-{sending}"),
                template_ids: vec![template.id.clone()],
                signers: vec![signer],
            };
            let purpose = Purpose::new(NDA, &ref_num);
            let (envelope, mut writes) = esign::create_envelope(&ctx, &provider, &request, purpose, true).await?;
            let now = ctx.now();
            let nda = Nda {
                ref_num,
                account_id: account.clone(),
                party_id,
                offering_id: offering_id.clone(),
                maasuser_id: maasuser.clone(),
                template_key: template.id,
                template_name: template.name,
                document_key: envelope.document_key,
                sending,
                status: envelope.status,
                created: now.clone(),
                updated: now,
                updated_ip: ctx.ip.to_string(),
            };
            writes.push(nda.write(client, None)?);
            writes.push(nda.pointer_write(client, current.as_ref().map(|c| c.rec.ref_num.as_str())));
            let event = record_event("sendNda", &nda.record());
            Ok(Plan::new(writes, nda).event(event))
        })
        .await?;
    let record = Value::Object(nda.record());
    Ok(Reply::ok().with_value("document_details", Value::Array(vec![record])))
}

/// `POST /v3/updateNdaDocuSignStatus` (designed): `refNum` (sendNda's) and `esignStatus`
/// `VOIDED` (withdraw it; `NOTSIGNED` for a draft, which sendNda never makes); optional
/// `reason`. `106` for an unknown refNum or a move its status does not allow. The webhook
/// `updateNdaDocuSignStatus` fires only when an NDA is signed (part 1), which the provider
/// reports. Answers `document_details` = `[sendNda's record]`.
pub async fn update_nda_status(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let ref_num = numeric_id("refNum", &p.req(&["refNum"])?)?;
    let action = client_action(&p)?;
    let reason = p.text(&["reason"])?;
    let unknown = || ApiError::invalid("refNum", "NDA does not exist");
    let stored = trade_esign::load_nda(ctx.store(), ctx.client_id(), &ref_num)
        .await?
        .ok_or_else(unknown)?;
    esign::change_status(&ctx, &crate::ESIGN_EFFECTS, &stored.rec.document_key, action, &reason)
        .await
        .map_err(|e| e.for_param("refNum"))?;
    let after = trade_esign::load_nda(ctx.store(), ctx.client_id(), &ref_num)
        .await?
        .ok_or_else(unknown)?;
    let record = Value::Object(after.rec.record());
    Ok(Reply::ok().with_value("document_details", Value::Array(vec![record])))
}

/// The e-signature routes.
pub fn routes() -> Routes {
    Routes::new()
        .op("sendSubscriptionDocument", op!(send_subscription))
        .op("sendSubscriptionDocumentClient", op!(send_subscription_client))
        .op("resendSubscriptionDocuments", op!(resend_subscription))
        .op("getTradeSignedDocument", op!(get_trade_signed))
        .op("getAllSignedDocument", op!(get_all_signed))
        .op("updateDocuSignStatus", op!(update_docusign_status))
        .op("sendNda", op!(send_nda))
        .op("updateNdaDocuSignStatus", op!(update_nda_status))
}
