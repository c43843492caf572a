//! The Lambda adapters: configuration and SDK clients built once at cold start, API Gateway
//! HTTP API events through the same kernel as the local API, and JSON logs.

use std::sync::Arc;

use bytes::Bytes;
use lambda_http::request::RequestContext;
use lambda_http::{Body, Request, RequestExt, Response};

use crate::app::OperatorAccess;
use crate::clock::SystemClock;
use crate::config::{Config, StoreKind};
use crate::http::{body_limit, RawRequest};
use crate::{App, Routes};

/// The application of one endpoint group, on the stores the template provides.
pub async fn app(routes: Routes) -> Result<Arc<App>, lambda_http::Error> {
    Ok(Arc::new(aws_app(routes).await?.0))
}

/// The application of a group that keeps documents: [`app`] plus the S3 bucket
/// `IPS_BUCKET`. Only these functions link the S3 client.
pub async fn app_with_documents(routes: Routes) -> Result<Arc<App>, lambda_http::Error> {
    let (app, sdk, cfg) = aws_app(routes).await?;
    let blobs = crate::blobs::S3Blobs::new(&sdk, cfg.bucket);
    Ok(Arc::new(app.with_blobs(Arc::new(blobs))))
}

/// The operator function's application: `/operator/...` only (no client route), with
/// [`OperatorAccess::Trusted`] since API Gateway's IAM authorization stands in front of it.
/// Serve it with [`handle_operator`], which refuses requests that bypassed that authorization.
pub async fn operator_app() -> Result<Arc<App>, lambda_http::Error> {
    Ok(Arc::new(
        aws_app(Routes::new()).await?.0.with_operator(OperatorAccess::Trusted),
    ))
}

/// Lambda functions link DynamoDB and SQS only; the embedded store is the local API's.
async fn aws_app(routes: Routes) -> Result<(App, aws_config::SdkConfig, Config), String> {
    let cfg = Config::from_env("dynamodb")?;
    if let StoreKind::Embedded(_) = cfg.store {
        return Err(
            "IPS_STORE=embedded is not available in a Lambda function: use local-api, or \
                    IPS_STORE=dynamodb with AWS_ENDPOINT_URL"
                .into(),
        );
    }
    let sdk = crate::aws::sdk_config().await;
    let (store, queue) = cfg.aws_ports(&sdk, false).await?;
    let app = App::new(store, queue, Arc::new(SystemClock), cfg.env, routes);
    Ok((app, sdk, cfg))
}

fn source_ip(req: &Request) -> std::net::IpAddr {
    let ip = match req.request_context_ref() {
        Some(RequestContext::ApiGatewayV2(ctx)) => ctx.http.source_ip.clone(),
        _ => None,
    };
    ip.and_then(|s| s.parse().ok())
        .unwrap_or(std::net::IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED))
}

/// The kernel's view of an API Gateway request.
fn raw_request(req: Request) -> RawRequest {
    let ip = source_ip(&req);
    let (parts, body) = req.into_parts();
    let bytes = match body {
        Body::Empty => Bytes::new(),
        Body::Text(t) => Bytes::from(t),
        Body::Binary(b) => Bytes::from(b),
        _ => Bytes::new(),
    };
    let limit = body_limit(&parts.headers);
    RawRequest {
        method: parts.method,
        path: parts.uri.path().to_owned(),
        query: parts.uri.query().map(str::to_owned),
        headers: parts.headers,
        body: if bytes.len() > limit { Err(limit) } else { Ok(bytes) },
        ip,
    }
}

/// The IAM principal API Gateway authorized the request for, if it did.
fn iam_caller(req: &Request) -> Option<String> {
    match req.request_context_ref() {
        Some(RequestContext::ApiGatewayV2(ctx)) => {
            let iam = ctx.authorizer.as_ref()?.iam.as_ref()?;
            iam.user_arn.clone().or_else(|| iam.caller_id.clone())
        }
        _ => None,
    }
}

/// Handles one request of the operator function. API Gateway authorizes the operator routes
/// with IAM; a request that arrives without an IAM principal (a route wired without that
/// authorization, or a function URL) is refused here too, so one wiring mistake cannot open
/// the operator API. The principal is logged with every operator request.
pub async fn handle_operator(app: Arc<App>, req: Request) -> Result<Response<Body>, lambda_http::Error> {
    let Some(caller) = iam_caller(&req) else {
        tracing::warn!(
            path = req.uri().path(),
            "operator request without IAM authorization refused"
        );
        let mut refused = Response::new(Body::Text(
            r#"{"error":"operator requests must be IAM-authorized"}"#.into(),
        ));
        *refused.status_mut() = http::StatusCode::FORBIDDEN;
        refused.headers_mut().insert(
            http::header::CONTENT_TYPE,
            http::HeaderValue::from_static("application/json"),
        );
        return Ok(refused);
    };
    tracing::info!(%caller, method = %req.method(), path = req.uri().path(), "operator request");
    handle(app, req).await
}

/// Handles one API Gateway request. The webhooks a success produced are handed to SQS
/// before the function answers (a Lambda is frozen once it returns); the queue delays them
/// so the POST follows the response.
pub async fn handle(app: Arc<App>, req: Request) -> Result<Response<Body>, lambda_http::Error> {
    let handled = app.handle(raw_request(req)).await;
    app.dispatch(handled.events).await;
    let (head, bytes) = handled.response.into_parts();
    let text = String::from_utf8(bytes.to_vec()).unwrap_or_default();
    Ok(Response::from_parts(head, Body::Text(text)))
}

/// Delivers a batch of queued webhooks concurrently; only messages that could not be
/// processed (a store failure while reading registrations) are reported back for a retry.
pub async fn deliver_batch(
    deliverer: &crate::webhooks::Deliverer,
    event: aws_lambda_events::event::sqs::SqsEvent,
) -> aws_lambda_events::event::sqs::SqsBatchResponse {
    use aws_lambda_events::event::sqs::{BatchItemFailure, SqsBatchResponse};
    let work = event.records.into_iter().map(|m| async move {
        let body = m.body.unwrap_or_default();
        match crate::webhooks::deliver_message(deliverer, &body).await {
            Ok(()) => None,
            Err(e) => {
                tracing::warn!(error = %e, "webhook message failed; SQS will retry it");
                m.message_id
            }
        }
    });
    let failed = futures_util::future::join_all(work).await.into_iter().flatten();
    let mut response = SqsBatchResponse::default();
    response.batch_item_failures = failed
        .map(|id| {
            let mut f = BatchItemFailure::default();
            f.item_identifier = id;
            f
        })
        .collect();
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::embedded::EmbeddedQueue;
    use crate::store::embedded::EmbeddedStore;
    use crate::Environment;
    use http::Method;
    use serde_json::Value;

    const PING: &str = include_str!("../../infra/events/ping.json");
    const CREATE_PARTY: &str = include_str!("../../infra/events/create-party.json");
    const LIST_PARTIES: &str = include_str!("../../infra/events/list-parties.json");
    const OPERATOR_CREATE_CLIENT: &str = include_str!("../../infra/events/operator-create-client.json");

    fn event(json: &str) -> Request {
        lambda_http::request::from_str(json).expect("an API Gateway HTTP API (v2) event")
    }

    fn memory_app(access: OperatorAccess) -> Arc<App> {
        let app = App::new(
            Arc::new(EmbeddedStore::in_memory()),
            Arc::new(EmbeddedQueue::default()),
            Arc::new(SystemClock),
            Environment::Sandbox,
            Routes::new(),
        );
        Arc::new(app.with_operator(access))
    }

    fn json_body(resp: &Response<Body>) -> Value {
        serde_json::from_slice(resp.body().as_ref()).expect("a JSON body")
    }

    #[test]
    fn sample_events_reach_the_kernel_as_api_gateway_sent_them() {
        let ping = raw_request(event(PING));
        assert_eq!((&ping.method, ping.path.as_str()), (&Method::GET, "/v3/ping"));
        assert_eq!(ping.ip.to_string(), "203.0.113.10");
        assert_eq!(
            ping.headers.get("authorization").and_then(|v| v.to_str().ok()),
            Some("Bearer sandbox-client:sandbox-api-key")
        );

        let party = raw_request(event(CREATE_PARTY));
        assert_eq!((&party.method, party.path.as_str()), (&Method::PUT, "/v3/createParty"));
        let body = party.body.expect("a body under the limit");
        assert!(body.starts_with(b"firstName=Ann&lastName=Lee&"), "{body:?}");

        let list = raw_request(event(LIST_PARTIES));
        assert_eq!(list.path, "/v3/parties");
        assert_eq!(list.query.as_deref(), Some("limit=5&offset=0"));
    }

    #[tokio::test]
    async fn ping_event_answers_the_sandbox_client() {
        let app = memory_app(OperatorAccess::Disabled);
        crate::operator::ensure_dev_client(&app, "sandbox-client", "sandbox-api-key")
            .await
            .expect("dev client");
        let resp = handle(app, event(PING)).await.expect("a response");
        assert_eq!(resp.status(), 200);
        assert_eq!(json_body(&resp)["statusCode"], "101");
    }

    #[tokio::test]
    async fn operator_function_serves_iam_authorized_requests_only() {
        let app = memory_app(OperatorAccess::Trusted);
        let resp = handle_operator(app.clone(), event(OPERATOR_CREATE_CLIENT))
            .await
            .expect("a response");
        assert_eq!(resp.status(), 201);
        assert_eq!(json_body(&resp)["clientId"], "acme");

        let mut unsigned: Value = serde_json::from_str(OPERATOR_CREATE_CLIENT).expect("JSON");
        unsigned["requestContext"]
            .as_object_mut()
            .map(|ctx| ctx.remove("authorizer"));
        unsigned["body"] = Value::String(r#"{"clientId": "intruder"}"#.into());
        let resp = handle_operator(app.clone(), event(&unsigned.to_string()))
            .await
            .expect("a response");
        assert_eq!(resp.status(), 403);
        let stored = crate::auth::load_client(app.store.as_ref(), "intruder").await;
        assert!(matches!(stored, Ok(None)), "{stored:?}");
    }

    #[tokio::test]
    async fn client_functions_do_not_serve_the_operator_api() {
        let app = memory_app(OperatorAccess::Disabled);
        let resp = handle(app.clone(), event(OPERATOR_CREATE_CLIENT))
            .await
            .expect("a response");
        assert_eq!(resp.status(), 404);
        let stored = crate::auth::load_client(app.store.as_ref(), "acme").await;
        assert!(matches!(stored, Ok(None)), "{stored:?}");
    }
}
