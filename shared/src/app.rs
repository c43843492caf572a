//! A function's application: its ports, its routes, and who may reach the operator API.

use std::ops::Deref;
use std::sync::Arc;

use crate::blobs::Blobs;
use crate::clock::Clock;
use crate::http::router::Routes;
use crate::ports::{Environment, Ports};
use crate::queue::Queue;
use crate::store::Store;

/// How the operator API is reached.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OperatorAccess {
    /// Not served (the client API functions in AWS).
    Disabled,
    /// `Authorization: Bearer <token>` (the local API and tests).
    Token(String),
    /// Already authorized in front of the function (API Gateway IAM authorization).
    Trusted,
}

/// Everything a request needs, built once per process.
pub struct App {
    pub ports: Arc<Ports>,
    pub routes: Arc<Routes>,
    /// Who may reach `/operator/...` in this process.
    pub operator: OperatorAccess,
}

impl App {
    pub fn new(
        store: Arc<dyn Store>,
        queue: Arc<dyn Queue>,
        clock: Arc<dyn Clock>,
        env: Environment,
        routes: Routes,
    ) -> Self {
        App::on(Ports::new(store, queue, clock, env), routes)
    }

    /// An application of `routes` on these ports.
    pub fn on(ports: Ports, routes: Routes) -> Self {
        App {
            ports: Arc::new(ports),
            routes: Arc::new(routes),
            operator: OperatorAccess::Disabled,
        }
    }

    pub fn with_blobs(mut self, blobs: Arc<dyn Blobs>) -> Self {
        if let Some(ports) = Arc::get_mut(&mut self.ports) {
            ports.blobs = Some(blobs);
        }
        self
    }

    pub fn with_operator(mut self, access: OperatorAccess) -> Self {
        self.operator = access;
        self
    }
}

impl Deref for App {
    type Target = Ports;
    fn deref(&self) -> &Ports {
        &self.ports
    }
}
