//! createTrade: an account's investment in an offering, its units reserved in the same
//! transaction as the trade.

use rust_decimal::Decimal;
use shared::model::ids::{numeric_id, AccountId};
use shared::model::trade::{normalize_transaction_type, total_amount, Trade, TradeStatus};
use shared::model::{validate, Stamps};
use shared::records;
use shared::records::offering;
use shared::records::trade;
use shared::{insert_array, op, ApiError, Ctx, Params, Plan, Reply, Routes};

use crate::edits::FIELD_NAMES;
use crate::support::{active_account, ip_param, opt_date, primary, primary_still_there, units};

/// The fields only createTrade sets (field permissions, `110`); the others are the edits'
/// [`FIELD_NAMES`].
const CREATE_FIELDS: &[&str] = &["transactionType", "transactionUnits", "fees"];

/// The approval status default (part 2: `Pending`).
const PENDING: &str = "Pending";

/// What createTrade was sent, parsed before anything is read.
struct Request {
    account: AccountId,
    offering: String,
    transaction_type: String,
    units: i64,
    fees: Decimal,
    template: Trade,
}

fn parse(ctx: &Ctx, p: &Params) -> Result<Request, ApiError> {
    ctx.check_fields(p, CREATE_FIELDS)?;
    ctx.check_fields(p, FIELD_NAMES)?;
    let account = p.req(&["accountId"])?;
    let offering = numeric_id("offeringId", &p.req(&["offeringId"])?)?;
    let transaction_type = normalize_transaction_type(&p.req(&["transactionType"])?);
    if transaction_type.is_empty() {
        return Err(ApiError::missing("transactionType"));
    }
    let units = units(p, "transactionUnits")?;
    let fees = match p.opt(&["fees"])? {
        Some(v) if !v.trim().is_empty() => validate::amount("fees", &v)?,
        _ => Decimal::ZERO,
    };
    let status_or_pending = |name: &str| -> Result<String, ApiError> {
        Ok(p.opt(&[name])?
            .filter(|v| !v.trim().is_empty())
            .unwrap_or_else(|| PENDING.to_owned()))
    };
    let template = Trade {
        rr_approval_status: status_or_pending("RRApprovalStatus")?,
        rr_name: p.text(&["RRName"])?,
        rr_approval_date: opt_date(p, "RRApprovalDate")?.unwrap_or_default(),
        principal_approval_status: status_or_pending("PrincipalApprovalStatus")?,
        principal_name: p.text(&["PrincipalName"])?,
        principal_date: opt_date(p, "PrincipalDate")?.unwrap_or_default(),
        field1: p.text(&["field1"])?,
        field2: p.text(&["field2"])?,
        field3: p.text(&["field3"])?,
        close_id: p.text(&["closeId"])?,
        stamps: Stamps {
            created_ip: ip_param(ctx, p, &["createdIpAddress", "createdIPAddress"])?,
            ..Stamps::default()
        },
        ..Trade::default()
    };
    Ok(Request {
        // Checked after the other parameters: a malformed ID answers 148 as an unknown one.
        account: AccountId::parse(&account)?,
        offering,
        transaction_type,
        units,
        fees,
        template,
    })
}

/// `POST /v3/createTrade`: `offeringId`, `accountId`, `transactionType`, `transactionUnits`
/// (required); `fees`, `createdIpAddress`, `field1`-`field3`, RR and principal fields,
/// `closeId`. Checks in CONTRACT's order: account exists and is active (`148`), one primary
/// party (`135`), offering exists (`138`), accepts investments (`106`), units a positive
/// integer not above the remaining shares (`106`). The trade (`CREATED`), the units reserved
/// on the offering, its read copies, purchase entry and the webhook commit as one transaction;
/// a concurrent reservation that took the units makes it read again and answer `106`.
/// Answers `purchaseDetails` = `[true, [created record]]`.
pub async fn create(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let req = parse(&ctx, &p)?;
    // Allocated on the first attempt that passes the checks, and kept by re-planned ones.
    let mut id: Option<String> = None;
    ctx.transact(async move |ctx, _| {
        let client = ctx.client_id();
        let account = active_account(&ctx, &req.account).await?;
        let party = primary(&ctx, &account.rec.id).await?;
        let o = offering::live(ctx.store(), client, &req.offering).await?.rec;
        o.require_accepting_investments()?;
        if req.units <= 0 {
            return Err(ApiError::invalid("transactionUnits", "must be a positive whole number"));
        }
        if req.units > o.remaining_shares {
            return Err(ApiError::invalid(
                "transactionUnits",
                format!(
                    "{} units requested, {} remain in the offering",
                    req.units, o.remaining_shares
                ),
            ));
        }
        let amount = total_amount(o.unit_price, req.units, req.fees)
            .ok_or_else(|| ApiError::invalid("transactionUnits", "the amount is out of range"))?;
        let trade_id = match &id {
            Some(id) => id.clone(),
            None => id.insert(ctx.next_id(shared::ids::TRADE).await?).clone(),
        };
        let now = ctx.now();
        let t = Trade {
            id: trade_id.clone(),
            offering_id: o.id.clone(),
            account_id: account.rec.id.clone(),
            account_name: account.rec.account_name.clone(),
            party_id: party,
            party_type: "IndivACParty".into(),
            escrow_id: o.escrow_account_number.clone(),
            transaction_id: trade_id,
            transaction_type: req.transaction_type.clone(),
            units: req.units,
            unit_price: o.unit_price,
            fees: req.fees,
            total_amount: amount,
            status: TradeStatus::Created.name().into(),
            esign_status: "NOTSIGNED".into(),
            eligible_to_close: "no".into(),
            stamps: Stamps {
                updated_ip: req.template.stamps.created_ip.clone(),
                ..Stamps::created(now, req.template.stamps.created_ip.clone())
            },
            ..req.template.clone()
        };
        // The account and its primary party as read: a concurrent change fails the
        // transaction, and the next attempt's reads answer 148 or 135.
        let event = t.created_event();
        Ok(Plan::new(trade::insert(client, &t)?, t)
            .write(records::unchanged(client, &account))
            .write(primary_still_there(&ctx, &account.rec.id))
            .event(event))
    })
    .await
    .map(|t| Reply::ok().with_value("purchaseDetails", insert_array(t.created_view())))
}

pub fn routes() -> Routes {
    Routes::new().op("createTrade", op!(create))
}
