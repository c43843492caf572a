//! The platform library every function links: the HTTP kernel (parameters, credentials,
//! envelope, routing), auth, the list engine, the storage and queue ports with their
//! adapters, webhooks, records shared across groups, and the operator API.

pub mod app;
pub mod auth;
pub mod aws;
pub mod batches;
pub mod billing;
pub mod blobs;
pub mod calendar;
pub mod clock;
pub mod config;
pub mod ctx;
pub mod documents;
pub mod error;
pub mod esign;
pub mod function;
pub mod http;
pub mod ids;
#[cfg(feature = "lambda")]
pub mod lambda;
pub mod list;
pub mod logging;
pub mod mask;
pub mod model;
pub mod ports;
pub mod providers;
pub mod queue;
pub mod records;
pub mod reviews;
pub mod store;
pub mod tx;
pub mod webhooks;

pub use app::App;
pub use ctx::Ctx;
pub use error::ApiError;
pub use function::Function;
pub use http::envelope::{insert_array, Reply};
pub use http::params::Params;
pub use http::router::Routes;
pub use ports::{Environment, Ports};
pub use tx::Plan;
