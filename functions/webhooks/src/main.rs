//! The webhook delivery function: an SQS consumer that reports only failed messages, and,
//! on its schedule (`{"sweepOutbox": <seconds>}`), the outbox sweep that re-sends events a
//! crash left between commit and hand-over.

use aws_lambda_events::event::sqs::SqsEvent;
use lambda_runtime::{service_fn, LambdaEvent};
use serde::Deserialize;

#[derive(Deserialize)]
#[serde(untagged)]
enum Input {
    Sqs(SqsEvent),
    #[serde(rename_all = "camelCase")]
    Sweep {
        sweep_outbox: u64,
    },
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), lambda_runtime::Error> {
    shared::logging::init(true);
    let ports = shared::lambda::ports().await?;
    let deliverer = shared::webhooks::Deliverer::new(ports.store.clone(), ports.env.url_policy());
    lambda_runtime::run(service_fn(move |event: LambdaEvent<Input>| {
        let (ports, deliverer) = (ports.clone(), deliverer.clone());
        async move {
            let out = match event.payload {
                Input::Sqs(batch) => serde_json::to_value(shared::lambda::deliver_batch(&deliverer, batch).await)?,
                Input::Sweep { sweep_outbox } => {
                    let n = ports.sweep_outbox(std::time::Duration::from_secs(sweep_outbox)).await?;
                    serde_json::json!({ "resent": n })
                }
            };
            Ok::<_, lambda_runtime::Error>(out)
        }
    }))
    .await
}
