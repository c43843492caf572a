//! The operator's offering endpoints (CONTRACT.md, "The operator API"), called from
//! `operator.rs`: approving an offering, linking an escrow account to it, and the client's
//! custodian settings that getCustodianDetailsforOffering answers.

use serde::Deserialize;
use serde_json::{json, Value};

use crate::app::App;
use crate::error::ApiError;
use crate::model::custodian_settings::CustodianSettings;
use crate::model::offering::{status, EscrowAccount, Offering};
use crate::records::offering;
use crate::records::Stored;
use crate::store::StoreError;

/// An operator answer: HTTP status and JSON body, or HTTP status and message.
pub type OpAnswer = Result<(u16, Value), (u16, String)>;

fn internal<E: std::fmt::Display>(e: E) -> (u16, String) {
    tracing::error!(error = %e, "operator offering endpoint failed");
    (500, "internal error".into())
}

fn api(e: ApiError) -> (u16, String) {
    internal(e.desc())
}

async fn existing_client(app: &App, client: &str) -> Result<(), (u16, String)> {
    if !crate::operator::valid_client_id(client) {
        return Err((404, format!("no client {client}")));
    }
    match crate::auth::load_client(app.store.as_ref(), client)
        .await
        .map_err(api)?
    {
        Some(_) => Ok(()),
        None => Err((404, format!("no client {client}"))),
    }
}

async fn live_offering(app: &App, client: &str, id: &str) -> Result<Stored<Offering>, (u16, String)> {
    if id.is_empty() || !id.bytes().all(|b| b.is_ascii_digit()) {
        return Err((404, format!("no offering {id} of client {client}")));
    }
    match offering::load(app.store.as_ref(), client, id).await.map_err(api)? {
        Some(s) if !s.rec.deleted => Ok(s),
        _ => Err((404, format!("no offering {id} of client {client}"))),
    }
}

/// Applies `change` to the offering and writes it (with `extra` writes), re-reading it when a
/// concurrent change of the offering wins the version check.
async fn change_offering(
    app: &App,
    client: &str,
    id: &str,
    extra: Vec<crate::store::Write>,
    change: impl Fn(&Offering) -> Result<Option<Offering>, (u16, String)>,
) -> Result<Offering, (u16, String)> {
    for _ in 0..5 {
        let stored = live_offering(app, client, id).await?;
        let Some(after) = change(&stored.rec)? else {
            return Ok(stored.rec);
        };
        let mut writes = offering::update(client, &stored, &after, Vec::new(), None).map_err(api)?;
        writes.extend(extra.iter().cloned());
        match app.store.write(writes).await {
            Ok(()) => return Ok(after),
            Err(StoreError::ConditionFailed { .. } | StoreError::Conflict) => continue,
            Err(e) => return Err(internal(e)),
        }
    }
    Err((409, format!("offering {id} is being changed concurrently; try again")))
}

/// `POST /operator/clients/{clientId}/offerings/{offeringId}/approve`: `offeringStatus`
/// becomes `Approved` (already approved: unchanged). A closed or cancelled offering is 409:
/// approval would let it accept investments again; reopen it first.
pub async fn approve(app: &App, client: &str, id: &str) -> OpAnswer {
    existing_client(app, client).await?;
    let now = crate::clock::timestamp(app.clock.now());
    let o = change_offering(app, client, id, Vec::new(), |o| {
        if !o.accepts_investments() {
            return Err((
                409,
                format!("offering {id} is {}: reopen it before approving", o.status),
            ));
        }
        if o.status == status::APPROVED {
            return Ok(None);
        }
        let mut after = o.clone();
        after.status = status::APPROVED.into();
        after.updated = now.clone();
        Ok(Some(after))
    })
    .await?;
    Ok((
        200,
        json!({"clientId": client, "offeringId": o.id, "offeringStatus": o.status}),
    ))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct EscrowBody {
    escrow_account_number: String,
    #[serde(default)]
    escrow_bank: Option<String>,
    #[serde(default)]
    escrow_account_status: Option<String>,
    #[serde(default)]
    open_date: Option<String>,
    #[serde(default)]
    expiration_date: Option<String>,
    #[serde(default)]
    close_date: Option<String>,
}

fn escrow_date(name: &str, v: Option<String>) -> Result<Option<String>, (u16, String)> {
    match v {
        None => Ok(None),
        Some(d) if d.is_empty() => Ok(None),
        Some(d) if chrono::NaiveDate::parse_from_str(&d, "%Y-%m-%d").is_ok() && d.len() == 10 => Ok(Some(d)),
        Some(d) => Err((400, format!("{name}: {d} is not a YYYY-MM-DD date"))),
    }
}

/// `PUT /operator/clients/{clientId}/offerings/{offeringId}/escrow-account`: links an escrow
/// account (stored once per account number: several offerings may share one, and a later
/// link with the same number updates the account's details for all of them).
pub async fn link_escrow(app: &App, client: &str, id: &str, body: Value) -> OpAnswer {
    let b: EscrowBody = serde_json::from_value(body).map_err(|e| (400, format!("invalid body: {e}")))?;
    let number = b.escrow_account_number.trim().to_owned();
    let number_ok = !number.is_empty()
        && number.len() <= 64
        && number
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if !number_ok {
        return Err((400, "escrowAccountNumber: 1 to 64 letters, digits, '-' or '_'".into()));
    }
    let account_status = b.escrow_account_status.unwrap_or_else(|| "open".into());
    if account_status != "open" && account_status != "closed" {
        return Err((400, "escrowAccountStatus: open or closed".into()));
    }
    let account = EscrowAccount {
        number: number.clone(),
        bank: b.escrow_bank.unwrap_or_default(),
        status: account_status,
        open_date: escrow_date("openDate", b.open_date)?,
        expiration_date: escrow_date("expirationDate", b.expiration_date)?,
        close_date: escrow_date("closeDate", b.close_date)?,
    };
    existing_client(app, client).await?;
    let now = crate::clock::timestamp(app.clock.now());
    let write = offering::escrow_write(client, &account);
    let o = change_offering(app, client, id, vec![write], |o| {
        let mut after = o.clone();
        after.escrow_account_number = number.clone();
        after.updated = now.clone();
        Ok(Some(after))
    })
    .await?;
    let mut out = serde_json::to_value(&account).map_err(internal)?;
    if let Value::Object(m) = &mut out {
        m.shift_insert(0, "offeringId".into(), Value::String(o.id.clone()));
        m.shift_insert(0, "clientId".into(), Value::String(client.to_owned()));
    }
    Ok((200, out))
}

/// `PUT /operator/clients/{clientId}/custodian-settings`: replaces the client's custodian
/// settings (`{"name", "additionaldescription", "wire": {...}, "check": {...}}`, every key
/// optional, values strings); answers the `custodianDetails` offerings will show.
pub async fn custodian_settings(app: &App, client: &str, body: Value) -> OpAnswer {
    let settings = CustodianSettings::parse(&body).map_err(|e| (400, e))?;
    existing_client(app, client).await?;
    app.store.write(vec![settings.write(client)]).await.map_err(internal)?;
    Ok((200, json!({"clientId": client, "custodianDetails": settings.details()})))
}
