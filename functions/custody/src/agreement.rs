//! The custody agreement on file: createCustodyAgreementAttestation (a document the client
//! attests, fetched once to see it answer 200 directly) and createCustodyAgreementEsign
//! (designed: the agreement sent for e-signature to the account's primary party, adding to
//! the attestation). Either counts for createCustodyAccountRequest once attested or signed.

use serde_json::{json, Value};
use shared::esign::{self, Envelope, Purpose};
use shared::model::custody::{attestation_error, Attestation};
use shared::model::link::no_primary_party;
use shared::model::Party;
use shared::providers::esign::{EnvelopeRequest, Signer};
use shared::records::{self, link};
use shared::store::Write;
use shared::webhooks::{view_event, Event};
use shared::{op, ApiError, Ctx, Environment, Params, Plan, Reply, Routes};

/// The purpose of custody agreement envelopes (the envelope's `id` is the account's).
const PURPOSE: &str = "custody-agreement";

/// `isAttested` as sent: `true` (a JSON boolean, or the text in any case) only; anything
/// else is `1422` (part 3: it must be `true`).
fn attested(p: &Params) -> Result<(), ApiError> {
    let yes = match p.value("isAttested") {
        Some(Value::Bool(b)) => *b,
        Some(Value::String(s)) => s.trim().eq_ignore_ascii_case("true"),
        _ => false,
    };
    if yes {
        Ok(())
    } else {
        Err(attestation_error("isAttested must be true"))
    }
}

/// `POST /v3/createCustodyAgreementAttestation`: `accountId`, `isAttested` (`true`) and
/// `documentUrl`, checked in CONTRACT's order once they are present: `148` for an unknown
/// or inactive account, `1422` unless attested, then the document is fetched once
/// with GET, following no redirect (the environment's URL policy; 5 s): anything but 200 is
/// `1422`. A later attestation replaces the document and keeps an agreement sent for
/// e-signature. Answers `attestation`.
async fn attest(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    ctx.check_fields(&p, &["isAttested", "documentUrl"])?;
    let account = p.req(&["accountId"])?;
    p.req(&["isAttested"])?;
    let url = p.req(&["documentUrl"])?.trim().to_owned();
    let account = records::active_account(&ctx, &account).await?.rec.id;
    attested(&p)?;
    match ctx.app.env.url_policy().get_status(&url).await {
        Ok(200) => {}
        Ok(status) => {
            return Err(attestation_error(format!(
                "documentUrl answered HTTP {status}, not 200"
            )))
        }
        // In production the cause stays in the log: how a name resolves, or why a connection
        // failed, would map the service's network for the caller.
        Err(why) if ctx.app.env == Environment::Production => {
            tracing::info!(url = %url, cause = %why, "attestation document not reachable");
            return Err(attestation_error(
                "documentUrl is not reachable: a public https URL that answers 200 is needed",
            ));
        }
        Err(why) => return Err(attestation_error(format!("documentUrl is not reachable: {why}"))),
    }
    let after = ctx
        .transact(async move |ctx, _| {
            let before = records::owned::<Attestation>(ctx.store(), ctx.client_id(), &account).await?;
            let now = ctx.now();
            let mut after = before.as_ref().map(|b| b.rec.clone()).unwrap_or_default();
            after.account_id.clone_from(&account);
            after.is_attested = true;
            after.document_url.clone_from(&url);
            after.created_date.clone_from(&now);
            after.updated_date = now;
            let write = records::owned_put(ctx.client_id(), &after, before.map(|b| b.version))?;
            Ok(Plan::new(vec![write], after))
        })
        .await?;
    Ok(Reply::ok().with("attestation", after.view()))
}

fn agreement_record(a: &Attestation, party: &str) -> Value {
    json!({
        "accountId": a.account_id,
        "partyId": party,
        "documentKey": a.esign_document_key,
        "esignStatus": a.esign_status,
        "isAttested": u8::from(a.is_attested),
        // Records from before the sent date was kept show their last change.
        "createdDate": if a.esign_sent_date.is_empty() { &a.updated_date } else { &a.esign_sent_date },
    })
}

/// `POST /v3/createCustodyAgreementEsign` (designed, `docs/custody.md`): `accountId`,
/// optional `templateId`. Sends the custody agreement to the account's primary party
/// (`148`, `135`; `106` for the template) and records it beside the attestation, whose
/// document stays. While an agreement is out or signed the call answers it as it stands;
/// after a decline or a void it sends a new one. Answers `document_details` = `[{accountId,
/// partyId, documentKey, esignStatus, isAttested, createdDate}]`; fires
/// `createCustodyAgreementEsign` with that record when it sends.
async fn esign(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let account = p.req(&["accountId"])?;
    let wanted = p.opt(&["templateId"])?.filter(|t| !t.trim().is_empty());
    let account = records::active_account(&ctx, &account).await?.rec.id;
    let party_id = link::primary_party(ctx.store(), ctx.client_id(), &account)
        .await?
        .ok_or_else(no_primary_party)?;
    let party = records::load::<Party>(ctx.store(), ctx.client_id(), &party_id)
        .await?
        .ok_or_else(no_primary_party)?
        .rec;
    let provider = esign::provider(&ctx);
    let template = esign::template_in_folder(&ctx, &provider, wanted.as_deref(), "Custody").await?;
    let signer = Signer {
        name: format!("{} {}", party.first_name, party.last_name).trim().to_owned(),
        email: party.email.clone(),
        role: "Account Holder".into(),
    };
    let record = ctx
        .transact(async move |ctx, _| {
            let before = records::owned::<Attestation>(ctx.store(), ctx.client_id(), &account).await?;
            let current = before.as_ref().map(|b| b.rec.esign_status.as_str()).unwrap_or("");
            if current == "NOTSIGNED" || current == "SIGNED" {
                let a = before.map(|b| b.rec).unwrap_or_default();
                return Ok(Plan::answer(agreement_record(&a, &party_id)));
            }
            let request = EnvelopeRequest {
                reference: format!(
                    "custody-agreement-{account}-{}",
                    before.as_ref().map_or(0, |b| b.version)
                ),
                template_ids: vec![template.id.clone()],
                signers: vec![signer.clone()],
            };
            let (envelope, mut writes) =
                esign::create_envelope(&ctx, &provider, &request, Purpose::new(PURPOSE, &account), true).await?;
            let now = ctx.now();
            let mut after = before.as_ref().map(|b| b.rec.clone()).unwrap_or_default();
            if after.account_id.is_empty() {
                after.account_id.clone_from(&account);
                after.created_date.clone_from(&now);
            }
            after.esign_document_key = envelope.document_key;
            after.esign_status = envelope.status.as_str().to_owned();
            after.esign_sent_date.clone_from(&now);
            after.updated_date = now;
            writes.push(records::owned_put(ctx.client_id(), &after, before.map(|b| b.version))?);
            let record = agreement_record(&after, &party_id);
            let event = view_event("createCustodyAgreementEsign", &record);
            Ok(Plan::new(writes, record).event(event))
        })
        .await?;
    Ok(Reply::ok().with_value("document_details", Value::Array(vec![record])))
}

/// What a custody agreement envelope's new status means: the attestation records it (a
/// signed agreement puts the agreement on file).
fn effect(ctx: Ctx, after: Envelope) -> esign::EffectFuture {
    Box::pin(async move {
        let client = ctx.client_id();
        let Some(before) = records::owned::<Attestation>(ctx.store(), client, &after.purpose.id).await? else {
            tracing::warn!(account = %after.purpose.id, "custody agreement envelope without its attestation");
            return Ok((Vec::<Write>::new(), Vec::<Event>::new()));
        };
        if before.rec.esign_document_key != after.document_key {
            // An earlier envelope, replaced by a newer send: nothing on file changes.
            return Ok((Vec::new(), Vec::new()));
        }
        let mut a = before.rec.clone();
        a.esign_status = after.status.as_str().to_owned();
        a.updated_date.clone_from(&after.updated);
        Ok((vec![records::owned_put(client, &a, Some(before.version))?], Vec::new()))
    })
}

pub fn routes() -> Routes {
    Routes::new()
        .op("createCustodyAgreementAttestation", op!(attest))
        .op("createCustodyAgreementEsign", op!(esign))
        .esign_effect(PURPOSE, effect)
}
