//! The route table: method-style operations by name, resource-style routes by verb and
//! path pattern. Groups register `(name, handler)` pairs; nothing matches on names elsewhere.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;

use http::Method;

use crate::app::Ctx;
use crate::auth::PiiLevel;
use crate::error::ApiError;
use crate::http::envelope::Reply;
use crate::http::params::Params;

pub type HandlerFuture = Pin<Box<dyn Future<Output = Result<Reply, ApiError>> + Send>>;
/// An operation: the kernel has already authenticated and authorized the caller.
pub type Handler = fn(Ctx, Params) -> HandlerFuture;

/// A resource route's scope requirement: a family and the least PII level it needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScopeReq {
    pub family: &'static str,
    pub min: PiiLevel,
    /// The scope name reported on `1403`.
    pub name: &'static str,
}

#[derive(Clone)]
struct Resource {
    verb: Method,
    segments: Vec<&'static str>,
    scope: ScopeReq,
    handler: Handler,
}

/// All routes a function serves.
#[derive(Clone, Default)]
pub struct Routes {
    /// By exact name, then by case-folded name (aliases that differ only in case, such as
    /// `updateAccountArchivestatus` / `updateAccountArchiveStatus`, each keep their own).
    methods: HashMap<&'static str, Handler>,
    folded: HashMap<String, (&'static str, Handler)>,
    resources: Vec<Resource>,
    /// Operations also served without the `/v3` prefix, where the spec writes their path so.
    unprefixed: Vec<&'static str>,
}

/// What a path resolved to.
pub enum Matched<'a> {
    Method {
        name: &'static str,
        handler: Handler,
    },
    Resource {
        scope: ScopeReq,
        handler: Handler,
        path_params: Vec<(&'static str, &'a str)>,
    },
}

impl Routes {
    pub fn new() -> Self {
        Routes::default()
    }

    /// Registers a method-style operation (`/v3/<name>`).
    pub fn op(mut self, name: &'static str, handler: Handler) -> Self {
        self.methods.insert(name, handler);
        self.folded.insert(name.to_ascii_lowercase(), (name, handler));
        self
    }

    /// Also serves the operation `name` (registered with [`Routes::op`]) at `/<name>`, without
    /// the `/v3` prefix, because the spec writes its path that way (`POST /updateKycAmlStatus`).
    /// Other paths without `/v3` stay unknown (part 1, Versioning 3).
    pub fn unprefixed(mut self, name: &'static str) -> Self {
        self.unprefixed.push(name);
        self
    }

    /// Registers a resource-style route; `{name}` segments become parameters.
    pub fn resource(mut self, verb: Method, pattern: &'static str, scope: ScopeReq, handler: Handler) -> Self {
        let segments = pattern.trim_matches('/').split('/').collect();
        self.resources.push(Resource {
            verb,
            segments,
            scope,
            handler,
        });
        self
    }

    /// Every route of `other` added to these.
    pub fn merge(mut self, other: Routes) -> Self {
        self.methods.extend(other.methods);
        self.folded.extend(other.folded);
        self.resources.extend(other.resources);
        self.unprefixed.extend(other.unprefixed);
        self
    }

    /// Resolves a path (already without the `/tapiv3/index.php` prefix).
    pub fn find<'a>(&self, verb: &Method, path: &'a str) -> Option<Matched<'a>> {
        let parts: Vec<&str> = path.trim_matches('/').split('/').collect();
        for r in &self.resources {
            if r.segments.len() != parts.len() || r.verb != verb {
                continue;
            }
            let mut params = Vec::new();
            let fits = r
                .segments
                .iter()
                .zip(&parts)
                .all(|(seg, part)| match seg.strip_prefix('{') {
                    Some(name) => {
                        params.push((name.trim_end_matches('}'), *part));
                        !part.is_empty()
                    }
                    None => seg == part,
                });
            if fits {
                return Some(Matched::Resource {
                    scope: r.scope,
                    handler: r.handler,
                    path_params: params,
                });
            }
        }
        // The legacy host's `/getAccount` resolves to the standard method (part 1, Versioning 3).
        let name = match parts.as_slice() {
            ["v3", name] => *name,
            ["getAccount"] => "getAccount",
            [name] if self.unprefixed.contains(name) => *name,
            _ => return None,
        };
        if !matches!(*verb, Method::GET | Method::POST | Method::PUT) {
            return None;
        }
        if let Some((name, handler)) = self.methods.get_key_value(name) {
            return Some(Matched::Method {
                name,
                handler: *handler,
            });
        }
        if let Some((name, handler)) = self.folded.get(&name.to_ascii_lowercase()) {
            return Some(Matched::Method {
                name,
                handler: *handler,
            });
        }
        None
    }
}

/// Boxes an async operation into a [`Handler`]: `op!(party::create)`.
#[macro_export]
macro_rules! op {
    ($f:path) => {
        |ctx, params| Box::pin($f(ctx, params))
    };
}
