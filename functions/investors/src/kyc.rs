//! KYC/AML: performKycAml, performKycAmlBasic, performAml, updateKycAml, getKycAml,
//! getKycAmlResponse, requestKycAml and deleteKycAml, on individual parties (`P…`) and
//! entities (`E…`), through the [`KycProvider`] port (the deterministic sandbox provider).
//! Shapes and sandbox rules: `docs/investors-kyc.md`.

use serde_json::{json, Value};
use shared::model::kyc::{
    AmlDetails, CheckEvent, CheckOutcome, CheckResponse, CheckStatuses, CheckType, KycOutcome, KycPassed, KycRecord,
    KycRequest, PartyStatus, RequestRef, Session, ANSWER_WINDOW_SECS, REPORT, REQUEST,
};
use shared::model::{Entity, Party};
use shared::providers::kyc::{KycProvider, SandboxKyc, Subject, Verdict};
use shared::records::kyc::request_ref;
use shared::records::party::with_statuses;
use shared::records::{self, Stored};
use shared::store::Write;
use shared::webhooks::{view_event, Event};
use shared::{op, Routes};
use shared::{ApiError, Ctx, Params, Plan, Reply};

use crate::accounts::live_account;
use crate::entities::live_entity;
use crate::parties::live_party;
use crate::support::insert_once;
use shared::billing::billing;

const AUTO_APPROVED: &str = "Auto Approved";
const DISAPPROVED: &str = "Disapproved";
const PENDING: &str = "Pending";

/// The provider every check goes to. The sandbox provider in every environment until a
/// production provider is configured here.
fn provider() -> &'static dyn KycProvider {
    static SANDBOX: SandboxKyc = SandboxKyc;
    &SANDBOX
}

/// The `1…` code of updateKycAml when the provider gives neither pass nor fail (unknown,
/// expired or already used `idNumber`): HTTP 404.
fn no_question_set() -> ApiError {
    ApiError::coded_http(
        "1404",
        404,
        "KYC question set not found or expired: run performKycAml again",
    )
}

/// A live party or entity of the caller.
enum Target {
    Party(Box<Stored<Party>>),
    Entity(Box<Stored<Entity>>),
}

impl Target {
    /// `E…` is an entity, anything else an individual party; unknown, deleted or another
    /// client's: `198`.
    async fn load(ctx: &Ctx, id: &str) -> Result<Target, ApiError> {
        if id.starts_with('E') {
            Ok(Target::Entity(Box::new(live_entity(ctx, id).await?)))
        } else {
            Ok(Target::Party(Box::new(live_party(ctx, id).await?)))
        }
    }

    fn id(&self) -> &str {
        match self {
            Target::Party(s) => &s.rec.id,
            Target::Entity(s) => &s.rec.id,
        }
    }

    fn is_entity(&self) -> bool {
        matches!(self, Target::Entity(_))
    }

    /// (kycStatus, amlStatus, amlDate) as stored.
    fn statuses(&self) -> (&str, &str, &str) {
        match self {
            Target::Party(s) => (&s.rec.kyc_status, &s.rec.aml_status, &s.rec.aml_date),
            Target::Entity(s) => (&s.rec.kyc_status, &s.rec.aml_status, &s.rec.aml_date),
        }
    }

    fn subject(&self) -> Subject {
        match self {
            Target::Party(s) => {
                let r = &s.rec;
                Subject {
                    id: r.id.clone(),
                    entity: false,
                    first_name: r.first_name.clone(),
                    last_name: r.last_name.clone(),
                    ssn: r.ssn.clone(),
                    dob: r.dob.clone(),
                    city: r.prim_city.clone(),
                    state: r.prim_state.clone(),
                    zip: r.prim_zip.clone(),
                    country: r.prim_country.clone(),
                    ..Subject::default()
                }
            }
            Target::Entity(s) => {
                let r = &s.rec;
                Subject {
                    id: r.id.clone(),
                    entity: true,
                    entity_name: r.entity_name.clone(),
                    ein: r.ein.clone(),
                    city: r.prim_city.clone(),
                    state: r.prim_state.clone(),
                    zip: r.prim_zip.clone(),
                    country: r.prim_country.clone(),
                    ..Subject::default()
                }
            }
        }
    }

    /// The versioned write of new statuses: `kyc` when given, `aml` (status, date) when given.
    fn set_statuses(&self, ctx: &Ctx, kyc: Option<&str>, aml: Option<(&str, &str)>) -> Result<Vec<Write>, ApiError> {
        let now = ctx.now();
        match self {
            Target::Party(s) => with_statuses(ctx.client_id(), s, kyc, aml, &now),
            Target::Entity(s) => with_statuses(ctx.client_id(), s, kyc, aml, &now),
        }
    }
}

/// The writes that store `after` as the party's KYC record (`before` as read, if any).
fn kyc_writes(ctx: &Ctx, before: Option<&Stored<KycRecord>>, after: &KycRecord) -> Result<Vec<Write>, ApiError> {
    match before {
        Some(b) => records::replace(ctx.client_id(), b, after),
        None => records::insert(ctx.client_id(), after),
    }
}

/// The KYC record to update: the stored one (revived when deleted) or a new one.
fn kyc_base(ctx: &Ctx, id: &str, before: Option<&Stored<KycRecord>>) -> KycRecord {
    let now = ctx.now();
    let mut rec = match before {
        Some(b) if !b.rec.deleted => b.rec.clone(),
        _ => KycRecord {
            id: id.to_owned(),
            created: now.clone(),
            ..KycRecord::default()
        },
    };
    rec.deleted = false;
    rec.updated = now;
    rec
}

/// The party or entity and its KYC record, as each attempt of a change reads them.
async fn read(ctx: &Ctx, id: &str) -> Result<(Target, Option<Stored<KycRecord>>), ApiError> {
    let target = Target::load(ctx, id).await?;
    let kyc = records::load::<KycRecord>(ctx.store(), ctx.client_id(), id).await?;
    Ok((target, kyc))
}

/// A new reference number for the provider.
async fn reference(ctx: &Ctx) -> Result<u64, ApiError> {
    ctx.next_id(REPORT)
        .await?
        .parse()
        .map_err(|e| ApiError::internal_from("report reference is not numeric", e))
}

fn aml_date(ctx: &Ctx) -> String {
    ctx.app.clock.now().format("%m-%d-%Y").to_string()
}

/// performKycAml (`questions`) and performKycAmlBasic.
async fn perform_kyc(ctx: Ctx, p: Params, method: &'static str, questions: bool) -> Result<Reply, ApiError> {
    let id = p.req(&["partyId"])?;
    let target = Target::load(&ctx, &id).await?;
    let subject = target.subject();
    let report = provider().kyc(&subject, questions, reference(&ctx).await?).await;
    let aml_status = if report.aml.matched { DISAPPROVED } else { AUTO_APPROVED };
    let id_present = if target.is_entity() {
        !subject.ein.trim().is_empty()
    } else {
        !subject.ssn.trim().is_empty()
    };
    let kyc_status = if report.aml.matched {
        DISAPPROVED
    } else if !report.questions.is_empty() || !id_present {
        PENDING
    } else {
        AUTO_APPROVED
    };
    let statuses = CheckStatuses {
        kycstatus: kyc_status,
        amlstatus: aml_status,
    };
    let outcome = if target.is_entity() {
        CheckOutcome::Entity {
            aml_score: report.aml.score_value(),
            statuses,
        }
    } else {
        CheckOutcome::Individual {
            kyc: KycOutcome {
                response: report.response(),
                statuses,
            },
        }
    };
    let body = match serde_json::to_value(&outcome) {
        Ok(Value::Object(body)) => body,
        _ => return Err(ApiError::internal("the check outcome is not an object")),
    };
    let date = aml_date(&ctx);
    let created_at = ctx.now();
    let expires = ctx.app.clock.now().timestamp_millis() + ANSWER_WINDOW_SECS * 1000;
    let check = if questions {
        CheckType::Enhanced
    } else {
        CheckType::Basic
    };
    // Owned: the attempts borrow them.
    let (kyc_status, aml_status, method) = (kyc_status.to_owned(), aml_status.to_owned(), method.to_owned());
    let body = ctx
        .transact(async move |ctx, _| {
            let (target, before) = read(&ctx, &id).await?;
            let before = before.as_ref();
            let mut writes = target.set_statuses(&ctx, Some(&kyc_status), Some((&aml_status, &date)))?;
            let mut rec = kyc_base(&ctx, target.id(), before);
            rec.set(
                check,
                CheckResponse {
                    created_at: created_at.clone(),
                    report_id: report.id_number.clone(),
                    response: Value::Object(body.clone()),
                },
            );
            if questions {
                rec.session = (!report.questions.is_empty()).then(|| Session {
                    id_number: report.id_number.clone(),
                    expires,
                    questions: report.questions.clone(),
                });
            }
            writes.extend(kyc_writes(&ctx, before, &rec)?);
            writes.extend(billing(&ctx, &method, target.id(), &report.id_number)?);
            let event = view_event(
                &method,
                &CheckEvent {
                    party_id: target.id(),
                    kycstatus: &kyc_status,
                    amlstatus: &aml_status,
                },
            );
            Ok(Plan::new(writes, body.clone()).event(event))
        })
        .await?;
    Ok(body.into_iter().fold(Reply::ok(), |r, (k, v)| r.with_value(&k, v)))
}

/// `POST /v3/performKycAml` (billed): an individual gets `kyc.response` with five questions,
/// `kyc.kycstatus` `Pending` until updateKycAml passes; an entity gets `AML SCORE` instead.
pub async fn perform_kyc_aml(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    perform_kyc(ctx, p, "performKycAml", true).await
}

/// `POST /v3/performKycAmlBasic` (billed): performKycAml's shape without questions.
pub async fn perform_kyc_aml_basic(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    perform_kyc(ctx, p, "performKycAmlBasic", false).await
}

/// The result fields performAml's webhook adds after the request's (part 1's table).
const AML_RESULT_FIELDS: [&str; 8] = [
    "apiMethodName",
    "tblFields",
    "devPerms",
    "amlStatus",
    "amlList",
    "amlScore",
    "expected_id",
    "verificationResponse",
];

/// The request's parameters as text (performAml's webhook), credentials left out, and so is
/// a parameter named as a result field: each name is sent once, with the service's value (a
/// receiver reading the first `amlStatus` must not read the client's).
fn request_fields(p: &Params) -> Vec<(String, String)> {
    let dropped = |k: &str| {
        ["clientID", "developerAPIKey"]
            .iter()
            .chain(AML_RESULT_FIELDS.iter())
            .any(|name| k.eq_ignore_ascii_case(name))
    };
    p.map()
        .iter()
        .filter(|(k, _)| !dropped(k))
        .filter_map(|(k, v)| {
            let text = match v {
                Value::String(s) => s.clone(),
                Value::Number(n) => n.to_string(),
                Value::Bool(b) => if *b { "1" } else { "0" }.to_owned(),
                _ => return None,
            };
            Some((k.clone(), text))
        })
        .collect()
}

/// `POST /v3/performAml` (billed): `partyDetails` = {`response` (the raw watch-list result),
/// `amlStatus`}: `Auto Approved` without a match, `Disapproved` with one.
pub async fn perform_aml(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let id = p.req(&["partyId"])?;
    let target = Target::load(&ctx, &id).await?;
    let report = provider().aml(&target.subject(), reference(&ctx).await?).await;
    let status = if report.matched { DISAPPROVED } else { AUTO_APPROVED };
    let details = AmlDetails {
        response: report.response(),
        aml_status: status,
    };
    let details = serde_json::to_value(&details).map_err(|e| ApiError::internal_from("AML details", e))?;
    let date = aml_date(&ctx);
    let created_at = ctx.now();
    let fields = request_fields(&p);
    let response = json!({ "partyDetails": details });
    let status = status.to_owned();
    ctx.transact(async move |ctx, _| {
        let (target, before) = read(&ctx, &id).await?;
        let before = before.as_ref();
        let mut writes = target.set_statuses(&ctx, None, Some((&status, &date)))?;
        let mut rec = kyc_base(&ctx, target.id(), before);
        rec.set(
            CheckType::AmlOnly,
            CheckResponse {
                created_at: created_at.clone(),
                report_id: report.id_number.clone(),
                response: response.clone(),
            },
        );
        writes.extend(kyc_writes(&ctx, before, &rec)?);
        writes.extend(billing(&ctx, "performAml", target.id(), &report.id_number)?);
        let [api_method, tbl_fields, dev_perms, aml_status, aml_list, aml_score, expected_id, verification] =
            AML_RESULT_FIELDS;
        let event = fields
            .iter()
            .fold(Event::new("performAml"), |e, (k, v)| e.field(k, v.clone()))
            .field(api_method, "performAml".to_owned())
            .field(tbl_fields, "amlStatus,amlDate".to_owned())
            .field(dev_perms, "1".to_owned())
            .field(aml_status, status.clone())
            .field(aml_list, report.list.clone())
            .field(aml_score, report.score.to_string())
            .field(expected_id, report.id_number.clone())
            .field(
                verification,
                report.response()["results"]["message"].as_str().map(str::to_owned),
            );
        Ok(Plan::new(writes, ()).event(event))
    })
    .await?;
    Ok(Reply::ok().with_value("partyDetails", details))
}

/// `PUT /v3/updateKycAml`: the answers to performKycAml's questions. Three of five right
/// within 600 s: the party's `kycStatus` becomes `Auto Approved`; fewer: HTTP 200 `145`
/// (the question set is used up either way); an unknown, expired or used `idNumber`: HTTP
/// 404 `1404`.
pub async fn update_kyc_aml(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let id = p.req(&["partyId"])?;
    let count = p.req(&["noOfqns"])?;
    let count: i64 = count
        .trim()
        .parse()
        .map_err(|_| ApiError::invalid("noOfqns", "Numeric values only"))?;
    let id_number = p.req(&["idNumber"])?;
    let id_number: u64 = id_number
        .trim()
        .parse()
        .map_err(|_| ApiError::invalid("idNumber", "Numeric values only"))?;
    let mut answers = Vec::new();
    for i in 1..=5 {
        let t = p.req(&[&format!("type{i}")])?;
        let a = p.req(&[&format!("qns{i}")])?;
        answers.push((t, a));
    }
    if count != 5 {
        return Err(ApiError::invalid("noOfqns", "must be 5"));
    }
    let id_number = id_number.to_string();
    Target::load(&ctx, &id).await?;
    let now_ms = ctx.app.clock.now().timestamp_millis();
    let open = move |before: Option<&Stored<KycRecord>>| -> Option<Session> {
        before
            .filter(|b| !b.rec.deleted)
            .and_then(|b| b.rec.session.clone())
            .filter(|s| s.id_number == id_number && now_ms <= s.expires)
    };
    let kyc = records::load::<KycRecord>(ctx.store(), ctx.client_id(), &id).await?;
    let session = open(kyc.as_ref()).ok_or_else(no_question_set)?;
    let verdict = provider().verify(&session.questions, &answers).await;
    if let Verdict::Undetermined { .. } = verdict {
        return Err(no_question_set());
    }
    let passed = matches!(verdict, Verdict::Pass { .. });
    let party = id.clone();
    ctx.transact(async move |ctx, _| {
        let (target, before) = read(&ctx, &party).await?;
        let before = before.as_ref();
        let Some(b) = before.filter(|_| open(before).is_some()) else {
            return Err(no_question_set());
        };
        let mut rec = b.rec.clone();
        rec.session = None;
        rec.updated = ctx.now();
        let mut plan = Plan::new(records::replace(ctx.client_id(), b, &rec)?, ());
        if passed {
            plan = plan
                .writes(target.set_statuses(&ctx, Some(AUTO_APPROVED), None)?)
                .event(view_event(
                    "updateKycAml",
                    &KycPassed {
                        party_id: target.id(),
                        kyc_status: AUTO_APPROVED,
                    },
                ));
        }
        Ok(plan)
    })
    .await?;
    match verdict {
        Verdict::Pass { .. } => Ok(Reply::ok().with(
            "Financial investor details",
            KycPassed {
                party_id: &id,
                kyc_status: AUTO_APPROVED,
            },
        )),
        Verdict::Fail { message } | Verdict::Undetermined { message } => {
            let mut body = serde_json::Map::new();
            body.insert(
                "verificationResponse".into(),
                json!({"result": "Failed", "message": message}),
            );
            Err(ApiError::CodedBody {
                code: "145",
                desc: message,
                http: Some(200),
                body,
            })
        }
    }
}

/// `POST /v3/getKycAml`: the stored statuses only: `KYC Status` and `Party Status` =
/// {`PartyID`, `AML status`, `AML date`}.
pub async fn get_kyc_aml(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let id = p.req(&["partyId"])?;
    let target = Target::load(&ctx, &id).await?;
    let (kyc, aml, date) = target.statuses();
    let status = PartyStatus {
        party_id: target.id(),
        aml_status: aml,
        aml_date: date,
    };
    Ok(Reply::ok()
        .with_value("KYC Status", Value::from(kyc))
        .with("Party Status", status))
}

/// `POST /v3/getKycAmlResponse` (read-only, not billed): `partyId` and `type` (`Basic`,
/// `Enhanced`, `AML Only`); `createdAt`, `reportId` (both `null` when no check of that type
/// is recorded) and `kycamlDetails`, the stored response (`null` likewise).
pub async fn get_kyc_aml_response(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let id = p.req(&["partyId"])?;
    let raw = p.req(&["type"])?;
    let check =
        CheckType::parse(&raw).ok_or_else(|| ApiError::invalid("type", "must be Basic, Enhanced or AML Only"))?;
    Target::load(&ctx, &id).await?;
    let kyc = records::load::<KycRecord>(ctx.store(), ctx.client_id(), &id).await?;
    let stored = kyc.as_ref().filter(|k| !k.rec.deleted).and_then(|k| k.rec.slot(check));
    Ok(match stored {
        Some(s) => Reply::ok()
            .with_value("createdAt", Value::from(s.created_at.clone()))
            .with_value("reportId", Value::from(s.report_id.clone()))
            .with_value("kycamlDetails", s.response.clone()),
        None => Reply::ok()
            .with_value("createdAt", Value::Null)
            .with_value("reportId", Value::Null)
            .with_value("kycamlDetails", Value::Null),
    })
}

/// `POST /v3/requestKycAml` (billed): a manual KYC/AML request for a party, entity or
/// account (`investorId`), once per investor (a second is HTTP 400 `1400`), `requestStatus`
/// `Pending`; `requestDetails` = [{`investorId`, `requestId`}]. The review is
/// `kyc_review.rs`.
pub async fn request_kyc_aml(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let id = p.req(&["investorId"])?;
    if id.starts_with('A') {
        live_account(&ctx, &id).await?;
    } else {
        Target::load(&ctx, &id).await?;
    }
    let now = ctx.now();
    let request = KycRequest {
        id: id.clone(),
        request_id: ctx.next_id(REQUEST).await?,
        request_status: PENDING.to_owned(),
        created: now.clone(),
        updated: now,
        ..KycRequest::default()
    };
    let mut more = vec![request_ref(ctx.client_id(), &request.request_id, &id)];
    more.extend(billing(&ctx, "requestKycAml", &id, &request.request_id)?);
    let exists = ApiError::coded_http("1400", 400, format!("A KYC/AML request already exists for {id}"));
    let record = RequestRef {
        investor_id: &id,
        request_id: &request.request_id,
    };
    let reply = Reply::ok().with("requestDetails", [record]);
    ctx.transact(async move |ctx, _| Ok(insert_once(ctx.client_id(), &request, exists.clone())?.writes(more.clone())))
        .await?;
    Ok(reply)
}

/// `POST /v3/deleteKycAml`: virtually deletes the party's stored KYC/AML responses and any
/// open question set; the party's status fields stay as they are. Deleting what is not
/// there answers `101` too. Fires `deleteKycAml` with `partyId` (the answer has no record
/// to send, as deleteParty's).
pub async fn delete_kyc_aml(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let id = p.req(&["partyId"])?;
    ctx.transact(async move |ctx, _| {
        let (_, before) = read(&ctx, &id).await?;
        let event = Event::new("deleteKycAml").field("partyId", id.clone());
        let Some(b) = before.filter(|b| !b.rec.deleted) else {
            return Ok(Plan::answer(()).event(event));
        };
        let mut rec = b.rec.clone();
        rec.deleted = true;
        rec.session = None;
        rec.updated = ctx.now();
        Ok(Plan::new(records::replace(ctx.client_id(), &b, &rec)?, ()).event(event))
    })
    .await?;
    Ok(Reply::ok().desc("KYC/AML record deleted successfully!"))
}

/// The KYC/AML routes.
pub fn routes() -> Routes {
    Routes::new()
        .op("performKycAml", op!(perform_kyc_aml))
        .op("performKycAmlBasic", op!(perform_kyc_aml_basic))
        .op("performAml", op!(perform_aml))
        .op("updateKycAml", op!(update_kyc_aml))
        .op("getKycAml", op!(get_kyc_aml))
        .op("getKycAmlResponse", op!(get_kyc_aml_response))
        .op("requestKycAml", op!(request_kyc_aml))
        .op("deleteKycAml", op!(delete_kyc_aml))
}
