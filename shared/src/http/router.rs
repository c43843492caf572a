//! The route table: method-style operations by name, resource-style routes by verb and
//! path pattern, operator endpoints, and the e-signature effects a group owns. Groups
//! register `(name, handler)` pairs; nothing matches on names elsewhere. A name, path or
//! purpose registered twice is a conflict that fails the function at start-up
//! ([`Routes::checked`]).

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;

use http::Method;

use crate::auth::PiiLevel;
use crate::ctx::Ctx;
use crate::error::ApiError;
use crate::esign::{Effect, Effects};
use crate::http::envelope::Reply;
use crate::http::operator::{OpError, OpReply, OperatorCtx, OperatorRequest, RouteTable};
use crate::http::params::Params;

pub type HandlerFuture = Pin<Box<dyn Future<Output = Result<Reply, ApiError>> + Send>>;
/// An operation: the kernel has already authenticated and authorized the caller.
pub type Handler = fn(Ctx, Params) -> HandlerFuture;

pub type OperatorFuture = Pin<Box<dyn Future<Output = Result<OpReply, OpError>> + Send>>;
/// An operator endpoint: the kernel has already checked the operator's credentials and
/// parsed the JSON body.
pub type OperatorHandler = fn(OperatorCtx, OperatorRequest) -> OperatorFuture;

/// A resource route's scope requirement: a family and the least PII level it needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScopeReq {
    pub family: &'static str,
    pub min: PiiLevel,
    /// The scope name reported on `1403`.
    pub name: &'static str,
}

impl ScopeReq {
    /// `family` at `min` or higher, reported as `name`.
    pub const fn new(family: &'static str, min: PiiLevel, name: &'static str) -> Self {
        ScopeReq { family, min, name }
    }
}

#[derive(Clone)]
struct Resource {
    verb: Method,
    segments: Vec<&'static str>,
    scope: ScopeReq,
    handler: Handler,
}

#[derive(Clone)]
struct OperatorRoute {
    verb: Method,
    segments: Vec<&'static str>,
    handler: OperatorHandler,
}

impl RouteTable for Routes {
    fn has_op(&self, name: &str) -> bool {
        Routes::has_op(self, name)
    }
    fn knows_scope(&self, name: &str) -> bool {
        Routes::knows_scope(self, name)
    }
    fn effects(&self) -> &Effects {
        Routes::effects(self)
    }
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
    /// Operations that take files: the only ones allowed the multipart body limit.
    uploads: Vec<&'static str>,
    operator: Vec<OperatorRoute>,
    effects: Effects,
    /// Everything registered twice, reported by [`Routes::checked`].
    conflicts: Vec<String>,
}

/// What an operator path resolved to.
pub enum OperatorMatch<'a> {
    Found {
        handler: OperatorHandler,
        path_params: Vec<(&'static str, &'a str)>,
    },
    /// The path exists for other verbs.
    WrongVerb,
    NotFound,
}

/// Routes registered twice: the function must not start.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("routes registered twice: {}", .0.join(", "))]
pub struct RouteConflict(pub Vec<String>);

fn pattern_segments(pattern: &'static str) -> Vec<&'static str> {
    pattern.trim_matches('/').split('/').collect()
}

/// The path parameters of `parts` under `segments`, when the pattern fits.
fn fit<'a>(segments: &[&'static str], parts: &[&'a str]) -> Option<Vec<(&'static str, &'a str)>> {
    if segments.len() != parts.len() {
        return None;
    }
    let mut params = Vec::new();
    for (seg, part) in segments.iter().zip(parts) {
        match seg.strip_prefix('{') {
            Some(name) if !part.is_empty() => params.push((name.trim_end_matches('}'), *part)),
            Some(_) => return None,
            None if seg == part => {}
            None => return None,
        }
    }
    Some(params)
}

/// What a path resolved to.
pub enum Matched<'a> {
    Method {
        name: &'static str,
        /// The name as the path spells it: the methods list is matched against it (CONTRACT,
        /// "What a client may call": exact and case-sensitive).
        called: &'a str,
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
        if self.methods.insert(name, handler).is_some() {
            self.conflicts.push(format!("operation {name}"));
        }
        self.folded.insert(name.to_ascii_lowercase(), (name, handler));
        self
    }

    /// Registers a method-style operation that takes files (`multipart/form-data`): the only
    /// kind of request allowed a body over the ordinary limit.
    pub fn upload(mut self, name: &'static str, handler: Handler) -> Self {
        self.uploads.push(name);
        self.op(name, handler)
    }

    /// Whether the operation at this path (method-style, any registered spelling) takes files.
    pub fn takes_files(&self, path: &str) -> bool {
        match self.find(&Method::POST, path) {
            Some(Matched::Method { name, .. }) => self.uploads.contains(&name),
            _ => false,
        }
    }

    /// Also serves the operation `name` (registered with [`Routes::op`]) at `/<name>`, without
    /// the `/v3` prefix, because the spec writes its path that way (`POST /updateKycAmlStatus`).
    /// Other paths without `/v3` stay unknown (part 1, Versioning 3).
    pub fn unprefixed(mut self, name: &'static str) -> Self {
        if self.unprefixed.contains(&name) {
            self.conflicts.push(format!("unprefixed /{name}"));
        }
        self.unprefixed.push(name);
        self
    }

    /// Registers a resource-style route; `{name}` segments become parameters.
    pub fn resource(mut self, verb: Method, pattern: &'static str, scope: ScopeReq, handler: Handler) -> Self {
        let segments = pattern_segments(pattern);
        if self.resources.iter().any(|r| r.verb == verb && r.segments == segments) {
            self.conflicts.push(format!("{verb} {pattern}"));
        }
        self.resources.push(Resource {
            verb,
            segments,
            scope,
            handler,
        });
        self
    }

    /// Registers an operator endpoint (`/operator/...`); `{name}` segments become parameters.
    pub fn operator(mut self, verb: Method, pattern: &'static str, handler: OperatorHandler) -> Self {
        let segments = pattern_segments(pattern);
        if self.operator.iter().any(|r| r.verb == verb && r.segments == segments) {
            self.conflicts.push(format!("operator {verb} {pattern}"));
        }
        self.operator.push(OperatorRoute {
            verb,
            segments,
            handler,
        });
        self
    }

    /// Registers what an envelope's status change means for envelopes sent for `purpose`
    /// (the group that sends them owns the effect).
    pub fn esign_effect(mut self, purpose: &'static str, effect: Effect) -> Self {
        if !self.effects.register(purpose, effect) {
            self.conflicts.push(format!("e-signature effect {purpose}"));
        }
        self
    }

    /// The routes of every part, merged in order (a name two parts register is a conflict).
    pub fn of(parts: &[fn() -> Routes]) -> Self {
        parts.iter().fold(Routes::new(), |all, part| all.merge(part()))
    }

    /// Every route of `other` added to these; a name, path or purpose both register is a
    /// conflict.
    pub fn merge(mut self, other: Routes) -> Self {
        for (name, handler) in other.methods {
            self = self.op(name, handler);
        }
        for name in other.unprefixed {
            self = self.unprefixed(name);
        }
        self.uploads.extend(other.uploads);
        for r in other.resources {
            if self
                .resources
                .iter()
                .any(|o| o.verb == r.verb && o.segments == r.segments)
            {
                self.conflicts.push(format!("{} /{}", r.verb, r.segments.join("/")));
            }
            self.resources.push(r);
        }
        for r in other.operator {
            if self
                .operator
                .iter()
                .any(|o| o.verb == r.verb && o.segments == r.segments)
            {
                self.conflicts
                    .push(format!("operator {} /{}", r.verb, r.segments.join("/")));
            }
            self.operator.push(r);
        }
        for (purpose, effect) in other.effects.iter() {
            self = self.esign_effect(purpose, effect);
        }
        self.conflicts.extend(other.conflicts);
        self
    }

    /// These routes, or what was registered twice.
    pub fn checked(self) -> Result<Routes, RouteConflict> {
        if self.conflicts.is_empty() {
            Ok(self)
        } else {
            Err(RouteConflict(self.conflicts))
        }
    }

    /// The e-signature effects registered, by purpose.
    pub fn effects(&self) -> &Effects {
        &self.effects
    }

    /// Resolves an operator path.
    pub fn find_operator<'a>(&self, verb: &Method, path: &'a str) -> OperatorMatch<'a> {
        let parts: Vec<&str> = path.trim_matches('/').split('/').collect();
        let mut other_verb = false;
        for r in &self.operator {
            if let Some(path_params) = fit(&r.segments, &parts) {
                if r.verb == verb {
                    return OperatorMatch::Found {
                        handler: r.handler,
                        path_params,
                    };
                }
                other_verb = true;
            }
        }
        if other_verb {
            OperatorMatch::WrongVerb
        } else {
            OperatorMatch::NotFound
        }
    }

    /// Whether a method-style operation of this name is registered.
    pub fn has_op(&self, name: &str) -> bool {
        self.methods.contains_key(name)
    }

    /// Whether a client may be granted scope `name`: `*`, or a scope family a resource route
    /// asks for, alone or at a PII level (read as [`ClientRecord::scope_level`] reads it).
    ///
    /// [`ClientRecord::scope_level`]: crate::auth::ClientRecord::scope_level
    pub fn knows_scope(&self, name: &str) -> bool {
        name == "*"
            || self.resources.iter().any(|r| match name.strip_prefix(r.scope.family) {
                Some(level) => matches!(level, "" | ".pii_high" | ".pii_medium" | ".pii_low"),
                None => false,
            })
    }

    /// Every method-style operation's name, sorted (generated sweeps walk them all).
    pub fn op_names(&self) -> Vec<&'static str> {
        let mut names: Vec<&'static str> = self.methods.keys().copied().collect();
        names.sort_unstable();
        names
    }

    /// Every resource route as (verb, path pattern with its `{parameters}`).
    pub fn resource_routes(&self) -> Vec<(Method, String)> {
        self.resources
            .iter()
            .map(|r| (r.verb.clone(), format!("/{}", r.segments.join("/"))))
            .collect()
    }

    /// What a request names, for reports: its method-style operation, or its resource
    /// route's verb and pattern.
    pub fn label(&self, verb: &Method, path: &str) -> Option<String> {
        let parts: Vec<&str> = path.trim_matches('/').split('/').collect();
        if let Some(r) = self
            .resources
            .iter()
            .find(|r| r.verb == verb && fit(&r.segments, &parts).is_some())
        {
            return Some(format!("{verb} /{}", r.segments.join("/")));
        }
        match self.find(verb, path)? {
            Matched::Method { name, .. } => Some(name.to_owned()),
            Matched::Resource { .. } => None,
        }
    }

    /// Resolves a path (already without the `/tapiv3/index.php` prefix).
    pub fn find<'a>(&self, verb: &Method, path: &'a str) -> Option<Matched<'a>> {
        let parts: Vec<&str> = path.trim_matches('/').split('/').collect();
        for r in &self.resources {
            if r.verb != verb {
                continue;
            }
            if let Some(path_params) = fit(&r.segments, &parts) {
                return Some(Matched::Resource {
                    scope: r.scope,
                    handler: r.handler,
                    path_params,
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
        let called = name;
        if let Some((name, handler)) = self.methods.get_key_value(name) {
            return Some(Matched::Method {
                name,
                called,
                handler: *handler,
            });
        }
        if let Some((name, handler)) = self.folded.get(&name.to_ascii_lowercase()) {
            return Some(Matched::Method {
                name,
                called,
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

/// A list endpoint as a [`Handler`]: one page of the caller's records of a kind, read by the
/// `ListSpec` from the query, each written as `view` under `key` with `pagination`. The view
/// names the record and the request's `Ctx`: `list_op!(Party, LIST, "parties", |p, ctx|
/// p.shown(ctx.pii))`.
#[macro_export]
macro_rules! list_op {
    ($kind:ty, $spec:path, $key:literal, |$r:ident, $c:ident| $view:expr) => {
        |ctx, params| {
            Box::pin(async move {
                let $c = &ctx;
                $crate::records::list::<$kind>($c, params.query_pairs(), &$spec, $key, |$r, _| {
                    $crate::records::raw(&$view)
                })
                .await
            })
        }
    };
}

/// Boxes an async operator endpoint into an [`OperatorHandler`]: `operator_op!(clients::create)`.
#[macro_export]
macro_rules! operator_op {
    ($f:path) => {
        |ctx, req| Box::pin($f(ctx, req))
    };
}

/// Boxes an async e-signature effect into an [`Effect`]: `effect!(subscription_effects)`.
#[macro_export]
macro_rules! effect {
    ($f:path) => {
        |ctx, envelope| Box::pin($f(ctx, envelope))
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn nothing(_: Ctx, _: Params) -> Result<Reply, ApiError> {
        Ok(Reply::ok())
    }

    #[test]
    fn a_name_registered_twice_fails_the_check() {
        let a = Routes::new().op("createParty", crate::op!(nothing));
        let b = Routes::new().op("getParty", crate::op!(nothing));
        assert!(a.clone().merge(b.clone()).checked().is_ok());
        let err = a.clone().merge(b).merge(a).checked().err().expect("a conflict");
        assert_eq!(err.0, vec!["operation createParty".to_owned()]);

        let scope = ScopeReq::new("party", PiiLevel::Low, "party.read");
        let r = Routes::new().resource(Method::GET, "/v3/parties", scope, crate::op!(nothing));
        let err = r.clone().merge(r).checked().err().expect("a conflict");
        assert_eq!(err.0, vec!["GET /v3/parties".to_owned()]);
    }

    #[test]
    fn names_differing_in_case_are_distinct_aliases() {
        let r = Routes::new()
            .op("updateAccountArchivestatus", crate::op!(nothing))
            .op("updateAccountArchiveStatus", crate::op!(nothing));
        assert!(r.checked().is_ok());
    }
}
