//! A deployed function: what it serves and which ports it needs. Its `main.rs` and the API
//! tests build its [`App`] from this one description, so a port that a function's code
//! reaches but its `main.rs` does not provide fails the tests, not a deployment.

use crate::app::{App, OperatorAccess};
use crate::http::router::{RouteConflict, Routes};
use crate::ports::Ports;

/// Builds a function's blob store from the SDK configuration and the bucket's name.
pub type BlobStore = fn(&aws_types::SdkConfig, String) -> std::sync::Arc<dyn crate::blobs::Blobs>;

/// The documents of the functions that keep them: the S3 bucket.
pub const S3_DOCUMENTS: Option<BlobStore> =
    Some(|sdk, bucket| std::sync::Arc::new(crate::blobs::S3Blobs::new(sdk, bucket)));

#[derive(Clone, Copy)]
pub struct Function {
    /// The binary, as the SAM template names it.
    pub name: &'static str,
    pub routes: fn() -> Routes,
    /// Keeps documents: how it builds its blob store in AWS (S3 and `IPS_BUCKET`). A
    /// function pointer rather than a flag, so that a function without documents does not
    /// even link the S3 client (its role grants no S3 action).
    pub documents: Option<BlobStore>,
    /// Serves the operator API (IAM-authorized in AWS) rather than clients.
    pub operator: bool,
}

impl Function {
    /// The function's application on `ports` (without their blob store unless it keeps
    /// documents); `operator_access` applies only to the operator function. A route
    /// registered twice fails it.
    pub fn app(&self, mut ports: Ports, operator_access: OperatorAccess) -> Result<App, RouteConflict> {
        if self.documents.is_none() {
            ports.blobs = None;
        }
        let routes = (self.routes)().checked()?;
        let access = if self.operator {
            operator_access
        } else {
            OperatorAccess::Disabled
        };
        Ok(App::on(ports, routes).with_operator(access))
    }
}
