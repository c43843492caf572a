//! Webhook events: payloads, the outbox written with the state change, and delivery
//! exactly as part 1 "Events > Mechanics" says.

pub mod crypto;
mod delivery;

pub use delivery::{Deliverer, UrlPolicy};

use serde::{Deserialize, Serialize};

use crate::error::ApiError;
use crate::store::{Item, Key, Val, Write};

/// The fixed `User-Agent` of webhook requests.
pub const USER_AGENT: &str = "InvestmentPlatformService-Webhooks/1.0";

/// A webhook payload for one method: its fields in the spec's order. `None` is omitted
/// from the body; booleans are already `1`/`0`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Event {
    pub method: String,
    pub fields: Vec<(String, Option<String>)>,
    /// Sent without the client's `X-Webhook-Token` (the ATS's own webhooks, part 1).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub tokenless: bool,
}

impl Event {
    pub fn new(method: &str) -> Self {
        Event {
            method: method.to_owned(),
            fields: Vec::new(),
            tokenless: false,
        }
    }

    /// The same event, sent without identification headers.
    pub fn without_token(self) -> Self {
        Event {
            tokenless: true,
            ..self
        }
    }

    /// Adds a field; a `None` value is omitted on delivery.
    pub fn field(mut self, name: &str, value: impl Into<Option<String>>) -> Self {
        self.fields.push((name.to_owned(), value.into()));
        self
    }

    /// Adds a field sent only when it has a non-empty value (`*` in part 1's table).
    pub fn field_if_set(self, name: &str, value: &str) -> Self {
        let v = (!value.is_empty()).then(|| value.to_owned());
        self.field(name, v)
    }

    /// The event within [`MAX_EVENT_BYTES`] as stored and queued: over it (only the JSON
    /// text of a long list answer gets there), its largest fields are left out until it fits
    /// and `truncated=1` says so. A webhook never fails the call that fires it, and never
    /// waits in the outbox for a queue that cannot take it.
    fn fitted(mut self) -> Self {
        // JSON escapes a byte into six at the most: below this, the event surely fits.
        let raw: usize = self
            .fields
            .iter()
            .map(|(k, v)| k.len() + v.as_ref().map_or(0, String::len))
            .sum();
        if raw * 6 < MAX_EVENT_BYTES {
            return self;
        }
        let size = |e: &Event| serde_json::to_string(e).map_or(usize::MAX, |j| j.len());
        while size(&self) > MAX_EVENT_BYTES {
            let largest = self
                .fields
                .iter()
                .enumerate()
                .max_by_key(|(_, (_, v))| v.as_ref().map_or(0, String::len))
                .map(|(i, _)| i);
            match largest {
                Some(i) if self.fields[i].1.is_some() => {
                    self.fields.remove(i);
                }
                _ => break,
            }
            if !self.fields.iter().any(|(k, _)| k == "truncated") {
                self.fields.push(("truncated".into(), Some("1".into())));
            }
        }
        self
    }
}

/// The most one webhook's payload may hold: its envelope travels alone in an SQS message
/// (256 KiB) and waits in a DynamoDB outbox item (400 KB).
const MAX_EVENT_BYTES: usize = 192 * 1024;

/// A record value as webhook text (CONTRACT.md, Webhook payloads): strings as they are,
/// numbers as text, booleans `1`/`0`, nested values as JSON text; null is omitted.
pub fn value_text(v: &serde_json::Value) -> Option<String> {
    use serde_json::Value;
    match v {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        Value::Bool(b) => Some(if *b { "1" } else { "0" }.into()),
        other => Some(other.to_string()),
    }
}

/// The methods whose webhooks part 1 describes (its payload table, its aliases, and
/// createEntity, which sends none) and the ATS webhooks CONTRACT designs: their operations
/// fire exactly when those say. Any other method-style call that succeeds sends its response
/// record ([`record_event`]).
const DESCRIBED: &[&str] = &[
    "createAccount",
    "updateAccount",
    "getAccount",
    "getAccountLinkId",
    "updateAccountArchivestatus",
    "updateAccountArchiveStatus",
    "uploadAccountDocument",
    "uploadPartyDocument",
    "uploadTradeDocument",
    "createParty",
    "updateParty",
    "createEntity",
    "updateEntity",
    "updatePartyEntityArchivestatus",
    "createEntitySupp",
    "updateEntitySupp",
    "createLink",
    "deleteLink",
    "performKycAml",
    "performKycAmlBasic",
    "performAml",
    "updateKycAml",
    "requestAiVerification",
    "updateAiVerification",
    "updateAiRequest",
    "uploadVerificationDocument",
    "updateOffering",
    "closeOffering",
    "cancelOffering",
    "reopenOffering",
    "deleteOffering",
    "createTrade",
    "updateTrade",
    "updateTradeStatus",
    "editTrade",
    "editTradeUnits",
    "updateTradeTransactionType",
    "updateTradeArchivestatus",
    "deleteTrade",
    "cancelInvestment",
    "updateTradeDocArchivestatus",
    "updateDocuSignStatus",
    "updateNdaDocuSignStatus",
    "createExternalAccount",
    "updateExternalAccount",
    "deleteExternalAccount",
    "linkExternalAccount",
    "updateLinkExternalAccount",
    "externalFundMove",
    "updateExternalFundMoveStatus",
    "createCustodyAccountRequest",
    "updateCustodyAccountRequest",
    "requestCustodialAccount",
    "updateCustodialAccountRequest",
    "approveCustodyAccountRequest",
    "approveCustodialAccountRequest",
    "updateOrder",
    "matchedTradenotify",
];

/// The bank numbers a response record may carry, each in clear (`false`) or base64 (part 3).
const BANK_NUMBERS: &[(&str, bool)] = &[
    ("accountNumber", false),
    ("routingNumber", false),
    ("bankAccountNumber1", true),
    ("bankAccountNumber2", true),
    ("internationalAccountNumber", true),
    ("AccountNumber", true),
    ("RoutingNumber", true),
    ("AccountRoutingNumber", true),
    ("CustodianAccountNumber", true),
    ("Accountnumber", true),
    ("Routingnumber", true),
    ("ExtAccountnumber", true),
    ("ExtRoutingnumber", true),
    // The custodian's wire instructions (getCustodianDetailsforOffering's `wire`).
    ("accountnumber", false),
    ("routingnumber", false),
    ("beneficiaryaccountnumber", false),
];

/// A bank number as a webhook carries it (CONTRACT, "Payments, custody and escrow"):
/// encrypted like `params` under the client's key (`key`, as stored), else masked but its
/// last four digits.
pub fn bank_number(number: &str, key: Option<&str>) -> Result<String, ApiError> {
    let unsealable = |e: String| ApiError::internal_from("bank number not encrypted", std::io::Error::other(e));
    match key {
        Some(k) => crypto::seal(&crypto::parse_key(k).map_err(unsealable)?, number).map_err(unsealable),
        None => Ok(crate::mask::last_four(number)),
    }
}

/// The webhook of a response record ([`record_event`]) with its bank numbers as
/// [`bank_number`] shows them, at any depth (a list's records, nested objects): a response
/// may show them, a webhook never does.
pub fn masked_record_event(
    method: &str,
    mut record: serde_json::Map<String, serde_json::Value>,
    key: Option<&str>,
) -> Result<Event, ApiError> {
    mask_bank_numbers(&mut record, key)?;
    Ok(record_event(method, &record))
}

fn mask_bank_numbers(
    record: &mut serde_json::Map<String, serde_json::Value>,
    key: Option<&str>,
) -> Result<(), ApiError> {
    use base64::Engine;
    use serde_json::Value;
    for (name, value) in record.iter_mut() {
        match value {
            Value::String(shown) => {
                let Some((_, encoded)) = BANK_NUMBERS.iter().find(|(n, _)| n == name) else {
                    continue;
                };
                let clear = match encoded {
                    false => shown.clone(),
                    true => base64::engine::general_purpose::STANDARD
                        .decode(shown.as_bytes())
                        .ok()
                        .and_then(|b| String::from_utf8(b).ok())
                        .unwrap_or_default(),
                };
                // In the response's own form: base64 where the response shows base64.
                *shown = match (clear.is_empty(), encoded) {
                    (true, _) => String::new(),
                    (false, true) => crate::mask::b64(&bank_number(&clear, key)?),
                    (false, false) => bank_number(&clear, key)?,
                };
            }
            nested => mask_nested(nested, key)?,
        }
    }
    Ok(())
}

fn mask_nested(value: &mut serde_json::Value, key: Option<&str>) -> Result<(), ApiError> {
    match value {
        serde_json::Value::Object(inner) => mask_bank_numbers(inner, key),
        serde_json::Value::Array(items) => items.iter_mut().try_for_each(|item| mask_nested(item, key)),
        _ => Ok(()),
    }
}

/// Whether part 1 (or CONTRACT, for the ATS) describes when `method` fires.
pub fn listed(method: &str) -> bool {
    DESCRIBED.contains(&method)
}

/// The webhook of a method part 1's table does not list: the fields of its response record,
/// in order (CONTRACT.md, Webhook payloads).
pub fn record_event(method: &str, record: &serde_json::Map<String, serde_json::Value>) -> Event {
    record
        .iter()
        .fold(Event::new(method), |e, (k, v)| e.field(k, value_text(v)))
}

/// The webhook of a read that answers a set of records: the answered IDs under `name`,
/// comma separated, after `lead` (the ID the read was for, if any).
pub fn ids_event<S: AsRef<str>>(
    method: &str,
    lead: Option<(&str, &str)>,
    name: &str,
    ids: impl IntoIterator<Item = S>,
) -> Event {
    let e = Event::new(method);
    let e = match lead {
        Some((k, v)) => e.field(k, v.to_owned()),
        None => e,
    };
    let ids: Vec<S> = ids.into_iter().collect();
    e.field(name, ids.iter().map(AsRef::as_ref).collect::<Vec<&str>>().join(","))
}

/// The webhook whose payload is a view's fields, in the view's order (the same struct that
/// serves the response, where part 1 gives both the same fields).
pub fn view_event(method: &str, view: &impl Serialize) -> Event {
    record_event(method, &crate::model::object(view))
}

/// What travels on the queue: one event of one client.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Envelope {
    pub id: String,
    #[serde(rename = "clientId")]
    pub client_id: String,
    pub event: Event,
}

/// The outbox partition (entries are removed once handed to the queue).
pub const OUTBOX_PK: &str = "OUTBOX";

impl Envelope {
    pub fn new(client_id: &str, event: Event, now_millis: i64) -> Self {
        Envelope {
            id: format!("{now_millis:015}#{}", crate::ids::unique()),
            client_id: client_id.to_owned(),
            event: event.fitted(),
        }
    }

    pub fn outbox_key(&self) -> Key {
        Key::new(OUTBOX_PK, self.id.clone())
    }

    /// The outbox write that goes into the state change's transaction.
    pub fn outbox_write(&self) -> Write {
        let mut item: Item = self.outbox_key().item();
        item.insert("d".into(), Val::S(self.to_json()));
        Write::Put { item, cond: None }
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// The form-encoded body: nulls omitted, `developerAPIKey` and `trade_developerAPIKey`
    /// masked (part 1, Events 5 and Conventions 8), whoever set them (performAml echoes the
    /// request's fields).
    pub fn form_body(&self) -> String {
        let pairs: Vec<(&str, &str)> = self
            .event
            .fields
            .iter()
            .filter_map(|(k, v)| {
                let v = v.as_deref()?;
                let masked = k == "developerAPIKey" || k == "trade_developerAPIKey";
                Some((k.as_str(), if masked { crate::mask::MASK } else { v }))
            })
            .collect();
        serde_urlencoded::to_string(pairs).unwrap_or_default()
    }
}

/// The store key of a method's registration.
pub fn registration_key(client_id: &str, method: &str) -> Key {
    Key::new(format!("{client_id}#WEBHOOK"), method)
}

/// The partition of the webhook tokens shared under a parent client: one item per token, so
/// that adding one never rewrites (or loses) another.
fn tokens_partition(owner: &str) -> String {
    format!("{owner}#TOKENS")
}

/// The item of a token added at `now_millis`: tokens are sent in the order they were added
/// (the process's counter orders those of one millisecond).
pub fn token_key(owner: &str, now_millis: i64) -> Key {
    Key::new(
        tokens_partition(owner),
        format!("T#{now_millis:015}#{}", crate::ids::unique()),
    )
}

/// The tokens of `owner`, oldest first: one query of its partition.
pub async fn load_tokens(
    store: &dyn crate::store::Store,
    owner: &str,
) -> Result<Vec<String>, crate::store::StoreError> {
    Ok(token_items(store, owner).await?.into_iter().map(|(_, t)| t).collect())
}

/// The tokens of `owner` with the keys of their items, oldest first.
pub async fn token_items(
    store: &dyn crate::store::Store,
    owner: &str,
) -> Result<Vec<(Key, String)>, crate::store::StoreError> {
    let q = crate::store::Query::new(crate::store::Index::Table, tokens_partition(owner));
    let items = crate::records::query_all(store, q).await?;
    Ok(items
        .iter()
        .filter_map(|i| Some((Key::of(i)?, i.get("t").and_then(Val::as_str)?.to_owned())))
        .collect())
}

/// Why a queued message was not done with.
#[derive(Debug, thiserror::Error)]
pub enum DeliveryError {
    /// Not an envelope: no attempt will read it; it belongs in the dead-letter queue.
    #[error("unreadable webhook message: {0}")]
    Unreadable(#[from] serde_json::Error),
    /// Its registrations could not be read: another attempt may succeed.
    #[error("webhook registrations not read: {0}")]
    Store(#[from] crate::store::StoreError),
}

/// The queue messages of one call's webhooks: its envelopes in the order they fired, as one
/// JSON array, delivered one after another (part 3: `Submitted` "and then" the final status;
/// an inner `updateTradeStatus` before its method's own). Split only where a message would
/// pass SQS's 256 KiB.
pub fn call_messages(envelopes: &[Envelope]) -> Vec<String> {
    const MAX_BYTES: usize = 200 * 1024;
    let mut messages = Vec::new();
    let mut current: Vec<String> = Vec::new();
    let mut size = 0;
    for e in envelopes {
        let json = e.to_json();
        if !current.is_empty() && size + json.len() > MAX_BYTES {
            messages.push(format!("[{}]", current.join(",")));
            (current, size) = (Vec::new(), 0);
        }
        size += json.len() + 1;
        current.push(json);
    }
    if !current.is_empty() {
        messages.push(format!("[{}]", current.join(",")));
    }
    messages
}

/// A queued message: one call's envelopes in order, or one envelope (the outbox sweep's).
#[derive(serde::Deserialize)]
#[serde(untagged)]
enum Queued {
    Call(Vec<Envelope>),
    One(Box<Envelope>),
}

fn queued(body: &str) -> Result<Vec<Envelope>, serde_json::Error> {
    Ok(match serde_json::from_str::<Queued>(body)? {
        Queued::Call(envelopes) => envelopes,
        Queued::One(envelope) => vec![*envelope],
    })
}

/// Delivers one queued message, its webhooks one after another. `Ok` means it is done with
/// (delivered, or refused by its endpoints) and may be acknowledged.
pub async fn deliver_message(deliverer: &Deliverer, body: &str) -> Result<(), DeliveryError> {
    for env in queued(body)? {
        deliverer.deliver(&env).await?;
    }
    Ok(())
}

/// [`deliver_message`] for an in-memory queue, whose outbox entry is the webhook's only
/// durable copy: each goes only once the attempt is made (a crash before re-sends it), and a
/// copy the sweep queued again while the first still waited (a slow receiver's backlog) is
/// passed over, whether the first is still in hand (`in_hand`) or done (its entry gone):
/// one attempt, as part 1 says.
async fn deliver_in_memory(
    deliverer: &Deliverer,
    body: &str,
    in_hand: &std::sync::Mutex<std::collections::HashSet<String>>,
) -> Result<(), DeliveryError> {
    let held = || in_hand.lock().unwrap_or_else(|e| e.into_inner());
    for env in queued(body)? {
        if !held().insert(env.id.clone()) {
            continue;
        }
        let attempt = async {
            if deliverer.outbox_holds(&env).await? {
                deliverer.deliver(&env).await?;
                deliverer.clear_outbox(&env).await;
            }
            Ok::<_, DeliveryError>(())
        }
        .await;
        held().remove(&env.id);
        attempt?;
    }
    Ok(())
}

/// The in-process deliverer of the local API: takes messages off the queue as they come and
/// delivers each concurrently (an in-memory queue's through [`deliver_in_memory`]).
pub async fn run_worker(queue: std::sync::Arc<dyn crate::queue::Queue>, deliverer: Deliverer) {
    let in_hand = std::sync::Arc::new(tokio::sync::Semaphore::new(256));
    let ids_in_hand = std::sync::Arc::new(std::sync::Mutex::new(std::collections::HashSet::new()));
    loop {
        let msgs = match queue.receive(10, std::time::Duration::from_secs(20)).await {
            Ok(msgs) => msgs,
            Err(e) => {
                tracing::warn!(error = %e, "webhook queue receive failed");
                tokio::time::sleep(std::time::Duration::from_secs(1)).await;
                continue;
            }
        };
        for m in msgs {
            // Receiving stops while this many messages are in hand: slow receivers slow
            // the worker down instead of piling up tasks.
            let Ok(permit) = in_hand.clone().acquire_owned().await else {
                return;
            };
            let (queue, deliverer, ids_in_hand) = (queue.clone(), deliverer.clone(), ids_in_hand.clone());
            tokio::spawn(async move {
                let _permit = permit;
                let done = match queue.durable() {
                    true => deliver_message(&deliverer, &m.body).await,
                    false => deliver_in_memory(&deliverer, &m.body, &ids_in_hand).await,
                };
                match done {
                    Ok(_) => {}
                    // The in-process queue has no dead-letter queue: log it and let it go.
                    Err(e @ DeliveryError::Unreadable(_)) => tracing::error!(error = %e, "webhook message dropped"),
                    Err(e) => {
                        tracing::warn!(error = %e, "webhook message left for another attempt");
                        return;
                    }
                }
                if let Err(e) = queue.ack(&m.receipt).await {
                    tracing::warn!(error = %e, "webhook message not acknowledged");
                }
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_webhook_too_large_for_its_queue_leaves_out_its_largest_fields() {
        let list = "x".repeat(300 * 1024);
        let event = Event::new("getAllParties")
            .field("partyId", Some("P1000000".to_owned()))
            .field("partyDetails", Some(list));
        let envelope = Envelope::new("c1", event, 0);
        assert!(envelope.to_json().len() <= MAX_EVENT_BYTES + 256);
        assert_eq!(
            envelope.form_body(),
            "partyId=P1000000&truncated=1",
            "the list left out, and said so"
        );
        // Quotes escape to two bytes each: the size that counts is the stored JSON's.
        let quoted = "\"".repeat(120 * 1024);
        let envelope = Envelope::new("c1", Event::new("m").field("d", Some(quoted)), 0);
        assert_eq!(envelope.form_body(), "truncated=1");
        // A small event is left as it is.
        let small = Event::new("m").field("a", Some("1".to_owned()));
        assert_eq!(Envelope::new("c1", small.clone(), 0).event, small);
    }
}
