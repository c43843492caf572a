//! Bank linking: linkExternalAccount and updateLinkExternalAccount answer the URL where the
//! investor links a bank account (billed in production); the operator's `bank-link` is the
//! investor's side in the sandbox: it creates or replaces the external account and fires
//! `linkExternalAccount` or `updateLinkExternalAccount` as it did, with part 1's fields (bank numbers
//! masked but the last four digits, or encrypted like `params` when the client has an
//! encryption key). Shapes: `docs/payments.md`.

use http::Method;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use shared::billing::billing;
use shared::http::operator::{OpError, OpReply, OperatorCtx, OperatorRequest};
use shared::model::ids::AccountId;
use shared::model::payments::{digits, ExternalAccount, LinkSession, Owner};
use shared::model::Account;
use shared::providers::payments::{BankLinks, Sandbox};
use shared::records::active_account;
use shared::records::payments as pay;
use shared::webhooks::{bank_number, view_event};
use shared::{op, operator_op, ApiError, Ctx, Params, Plan, Reply, Routes};

/// The kind of link a bank link is, in its key.
const BANK: &str = "BANK";
/// The nickname and bank of an account linked in the sandbox.
const LINKED_NICKNAME: &str = "Linked bank";
const SANDBOX_BANK: &str = "Sandbox Bank";

/// `715`: an external account is linked already (OBSERVED-MORE: clients treat it as done).
fn already_linked() -> ApiError {
    ApiError::coded("715", "An external account is already linked to this account")
}

/// Starts a bank link for `method`; answers the link URL.
async fn start(ctx: Ctx, p: Params, method: &'static str) -> Result<Reply, ApiError> {
    ctx.check_fields(&p, &["createdIpAddress"])?;
    let account = AccountId::param(&p, &["accountId"])?;
    active_account(&ctx, account.as_str()).await?;
    let (store, client) = (ctx.store(), ctx.client_id());
    let linked = pay::external(store, client, Owner::Account, account.as_str()).await?;
    if method == "linkExternalAccount" && linked.is_some() {
        return Err(already_linked());
    }
    let session = LinkSession {
        account_id: account.as_str().to_owned(),
        id: shared::ids::unique(),
        created_date: ctx.now(),
        ip_address: p.opt(&["createdIpAddress"])?.unwrap_or_else(|| ctx.ip.to_string()),
    };
    let mut writes = vec![pay::link_put(client, BANK, &session)?];
    writes.extend(billing(&ctx, method, account.as_str(), &session.id)?);
    store.write(writes).await?;
    let url = Sandbox.link_url("bank", &session.id);
    Ok(Reply::ok().with_value("accountDetails", Value::from(url)))
}

/// `POST /v3/linkExternalAccount` (billed in production): `accountId`; `accountDetails` =
/// the URL where the investor links a bank account (OBSERVED-MORE: a string); `715` when
/// one is linked. Webhook `linkExternalAccount` once the link completes.
pub async fn link(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    start(ctx, p, "linkExternalAccount").await
}

/// `POST /v3/updateLinkExternalAccount`: as linkExternalAccount, for replacing the linked
/// account; webhook `updateLinkExternalAccount` once it completes.
pub async fn update_link(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    start(ctx, p, "updateLinkExternalAccount").await
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct BankLinkBody {
    routing_number: String,
    account_number: String,
    #[serde(default)]
    account_type: Option<String>,
}

/// The link webhooks' payload (part 1's fields and order).
#[derive(Serialize)]
struct LinkEvent {
    id: String,
    #[serde(rename = "accountId")]
    investor_account: String,
    #[serde(rename = "refNum")]
    ref_num: String,
    #[serde(rename = "institutionId")]
    institution_id: &'static str,
    institution_name: &'static str,
    account_number: String,
    account_name: String,
    account_subtype: String,
    account_mask: String,
    /// The provider's ID of the bank account (part 1's `account_id`).
    account_id: String,
    #[serde(rename = "account_plaidId")]
    account_plaid_id: String,
    routing_number: String,
    wire_routing: String,
    account_type: &'static str,
    #[serde(rename = "externalAccount")]
    external_account: &'static str,
    #[serde(rename = "createdDate")]
    created_date: String,
    #[serde(rename = "createdIpAddress")]
    created_ip: String,
    #[serde(rename = "updatedDate")]
    updated_date: String,
    #[serde(rename = "updatedIpAddress")]
    updated_ip: String,
}

/// `POST /operator/clients/{clientId}/accounts/{accountId}/bank-link`: `{"routingNumber",
/// "accountNumber", "accountType"}`; completes the investor's link in the sandbox: the
/// external account is created or replaced (nickname `Linked bank`, the account's name as
/// holder) and `linkExternalAccount` or `updateLinkExternalAccount` fires, as it did. 200 the external
/// account (as createExternalAccount's record) with `clientId`; 409 when no link was started
/// for the account; 400 bad numbers; 404 unknown client or account.
async fn bank_link(octx: OperatorCtx, req: OperatorRequest) -> Result<OpReply, OpError> {
    let body: BankLinkBody = req.body()?;
    let routing = digits("routingNumber", &body.routing_number).map_err(|e| OpError::BadRequest(e.desc()))?;
    if routing.len() != 9 {
        return Err(OpError::BadRequest("routingNumber: nine digits".into()));
    }
    let number = digits("accountNumber", &body.account_number).map_err(|e| OpError::BadRequest(e.desc()))?;
    // Owned: a captured reference would keep the handler's future from being `Send`.
    let account_type: String = match body.account_type.as_deref().map(str::to_ascii_lowercase).as_deref() {
        None | Some("checking") => "Checking".into(),
        Some("savings") => "Savings".into(),
        Some(_) => return Err(OpError::BadRequest("accountType: Checking or Savings".into())),
    };
    let ctx = octx.for_client(req.param("clientId"), "operator").await?;
    let key = ctx.client.webhook_key.clone();
    let account_id = req.param("accountId").to_owned();
    let unknown = format!("no account {account_id} of client {}", ctx.client_id());
    let saved = ctx
        .transact(async move |ctx, _| {
            let (store, client) = (ctx.store(), ctx.client_id());
            let account = match shared::records::load::<Account>(store, client, &account_id).await? {
                Some(a) if !a.rec.deleted => a.rec,
                _ => return Err(ApiError::not_found(unknown.clone())),
            };
            let Some(session) = pay::link_session(store, client, BANK, &account_id).await? else {
                return Err(ApiError::conflict(format!(
                    "no bank link was started for account {account_id}"
                )));
            };
            let before = pay::external(store, client, Owner::Account, &account_id).await?;
            let before_version = before.as_ref().map(|b| b.version);
            let now = ctx.now();
            let ext = ExternalAccount {
                types: Owner::Account,
                owner_id: account_id.clone(),
                full_name: account.account_name.clone(),
                nickname: LINKED_NICKNAME.into(),
                routing_number: routing.clone(),
                account_number: number.clone(),
                bank_name: SANDBOX_BANK.into(),
                account_type: account_type.clone(),
                created_date: before
                    .as_ref()
                    .map_or_else(|| now.clone(), |b| b.rec.created_date.clone()),
                updated_date: now.clone(),
                ip_address: session.rec.ip_address.clone(),
            };
            let provider_id = format!("sbx-acct-{}", session.rec.id);
            let event = LinkEvent {
                id: session.rec.id.clone(),
                investor_account: account_id.clone(),
                ref_num: session.rec.id.clone(),
                institution_id: "ins_sandbox",
                institution_name: SANDBOX_BANK,
                account_number: bank_number(&number, key.as_deref())?,
                account_name: account.account_name.clone(),
                account_subtype: account_type.to_ascii_lowercase(),
                account_mask: number[number.len().saturating_sub(4)..].to_owned(),
                account_id: provider_id.clone(),
                account_plaid_id: provider_id,
                routing_number: bank_number(&routing, key.as_deref())?,
                wire_routing: bank_number(&routing, key.as_deref())?,
                account_type: "depository",
                external_account: "Yes",
                created_date: session.rec.created_date.clone(),
                created_ip: session.rec.ip_address.clone(),
                updated_date: now,
                // The operator stands in for the investor, whose link this completes.
                updated_ip: session.rec.ip_address.clone(),
            };
            let writes = vec![
                pay::external_put(client, &ext, before_version)?,
                pay::link_clear(client, BANK, &account_id),
            ];
            // CONTRACT: the link creates (linkExternalAccount) or replaces
            // (updateLinkExternalAccount) the external account, whichever call started it.
            let method = match before_version {
                None => "linkExternalAccount",
                Some(_) => "updateLinkExternalAccount",
            };
            Ok(Plan::new(writes, ext).event(view_event(method, &event)))
        })
        .await?;
    Ok(OpReply::for_client(saved.view(), ctx.client_id()))
}

pub fn routes() -> Routes {
    Routes::new()
        .op("linkExternalAccount", op!(link))
        .op("updateLinkExternalAccount", op!(update_link))
        .operator(
            Method::POST,
            "/operator/clients/{clientId}/accounts/{accountId}/bank-link",
            operator_op!(bank_link),
        )
}
