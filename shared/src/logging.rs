//! Logging set-up: `RUST_LOG` as `level` or `target=level,...` (default `info`), JSON lines
//! in Lambda, text locally (coloured only on a terminal: a log file gets no escape codes, and
//! each request's span is formatted without them). The filter parses without regular
//! expressions, which keeps them out of the function binaries.

use std::io::IsTerminal;

use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

fn filter() -> Targets {
    std::env::var("RUST_LOG")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| Targets::new().with_default(tracing::Level::INFO))
}

/// Installs the global subscriber.
pub fn init(json: bool) {
    let registry = tracing_subscriber::registry().with(filter());
    if json {
        let layer = tracing_subscriber::fmt::layer()
            .json()
            .with_current_span(true)
            .without_time()
            .with_target(false);
        registry.with(layer).init();
    } else {
        let layer = tracing_subscriber::fmt::layer().with_ansi(std::io::stdout().is_terminal());
        registry.with(layer).init();
    }
}
