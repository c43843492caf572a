//! The Lambda adapters: configuration and SDK clients built once at cold start, API Gateway
//! HTTP API events through the same kernel as the local API, and JSON logs.

use std::sync::Arc;

use bytes::Bytes;
use lambda_http::request::RequestContext;
use lambda_http::{Body, Request, RequestExt, Response};

use crate::clock::SystemClock;
use crate::config::Config;
use crate::http::{body_limit, RawRequest};
use crate::{App, Routes};

/// The application of one endpoint group, on the stores the template provides.
pub async fn app(routes: Routes) -> Result<Arc<App>, lambda_http::Error> {
    let cfg = Config::from_env("dynamodb")?;
    let (store, queue) = cfg.aws_ports(false).await?;
    Ok(Arc::new(App::new(store, queue, Arc::new(SystemClock), cfg.env, routes)))
}

fn source_ip(req: &Request) -> std::net::IpAddr {
    let ip = match req.request_context_ref() {
        Some(RequestContext::ApiGatewayV2(ctx)) => ctx.http.source_ip.clone(),
        _ => None,
    };
    ip.and_then(|s| s.parse().ok())
        .unwrap_or(std::net::IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED))
}

/// Handles one API Gateway request. The webhooks a success produced are handed to SQS
/// before the function answers (a Lambda is frozen once it returns); the queue delays them
/// so the POST follows the response.
pub async fn handle(app: Arc<App>, req: Request) -> Result<Response<Body>, lambda_http::Error> {
    let ip = source_ip(&req);
    let (parts, body) = req.into_parts();
    let bytes = match body {
        Body::Empty => Bytes::new(),
        Body::Text(t) => Bytes::from(t),
        Body::Binary(b) => Bytes::from(b),
        _ => Bytes::new(),
    };
    let limit = body_limit(&parts.headers);
    let raw = RawRequest {
        method: parts.method,
        path: parts.uri.path().to_owned(),
        query: parts.uri.query().map(str::to_owned),
        headers: parts.headers,
        body: if bytes.len() > limit { Err(limit) } else { Ok(bytes) },
        ip,
    };
    let handled = app.handle(raw).await;
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
