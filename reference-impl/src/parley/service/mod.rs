//! The Parley service: one function per operation, authenticate → validate → decide →
//! persist → respond. Both bindings call only this layer (PV-TR-1), so there is exactly
//! one permission check, applied in the order of PV-AU-6:
//! 401 → 403 right → 429 → 413 → 415 → 400 → 404 → 403 authority/self_attest → 409.

mod args;
mod context;
mod ops;
mod post;
mod quota;
pub(crate) mod render;

#[cfg(test)]
mod tests;

pub use crate::domain::parley::operation::{
    Args, BearerToken, Body, ContentType, Operation, Request, Response,
};
pub use args::CURSOR_PREFIX;
pub(crate) use context::{Caller, Fail, Inner, Now, refused};

use std::sync::Arc;

use serde_json::Value;

use crate::config::TokenRow;
use crate::domain::parley::{Limits, REFERENCE, Reason, Refusal, Right};
use crate::faults::{Faults, hooks};
use crate::store::Db;

/// The Parley service (cheap to clone: one `Arc`).
#[derive(Clone)]
pub struct ParleyService {
    inner: Arc<Inner>,
    /// This handle serves the MCP binding (only seeded faults ever look at it).
    via_mcp: bool,
}

impl std::fmt::Debug for ParleyService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ParleyService").finish_non_exhaustive()
    }
}

impl ParleyService {
    /// Builds the service over a database and token rows (the reference limits, dialectic on).
    pub fn new(db: Db, tokens: Vec<TokenRow>) -> Self {
        Self::with_faults(db, tokens, Faults::none())
    }

    /// [`ParleyService::new`] with seeded faults switched on (issue 6: measuring the suite).
    pub fn with_faults(db: Db, tokens: Vec<TokenRow>, faults: Faults) -> Self {
        let tokens = tokens.into_iter().map(|t| (t.token.clone(), t)).collect();
        Self {
            inner: Arc::new(Inner {
                db,
                tokens,
                limits: REFERENCE,
                dialectic: true,
                quota: quota::Quota::default(),
                faults,
                gate: Arc::new(tokio::sync::Semaphore::new(context::turns())),
            }),
            via_mcp: false,
        }
    }

    /// Declares and enforces `limits` instead of the reference's (the legal variants of
    /// issue 14: PV-MF-2 holds because the manifest and every check read this one value).
    /// Call before the service is shared.
    pub fn with_limits(mut self, limits: Limits) -> Self {
        if let Some(inner) = Arc::get_mut(&mut self.inner) {
            inner.limits = limits;
        }
        self
    }

    /// Switches the dialectic profile off (PV-DI-8: its kinds become `kind_unknown` and the
    /// manifest lists no profile). Call before the service is shared.
    pub fn without_dialectic(mut self) -> Self {
        if let Some(inner) = Arc::get_mut(&mut self.inner) {
            inner.dialectic = false;
        }
        self
    }

    /// The same service, as seen by the MCP binding. Decisions never depend on the binding
    /// (PV-TR-1); only the seeded fault `mcp-mark-skips-authority` looks at it.
    pub fn for_mcp(&self) -> Self {
        Self {
            inner: Arc::clone(&self.inner),
            via_mcp: true,
        }
    }

    /// Waits for a turn in the service: the bindings hold it while [`ParleyService::handle`]
    /// runs ([`Inner`]'s `gate` says why). `None` only if the gate was closed, which
    /// nothing does: the call then runs without a turn.
    pub async fn turn(&self) -> Option<tokio::sync::OwnedSemaphorePermit> {
        Arc::clone(&self.inner.gate).acquire_owned().await.ok()
    }

    /// Handles one request (synchronous: SQLite; bindings use `spawn_blocking`).
    pub fn handle(&self, req: Request) -> Response {
        let op = req.op;
        match self.dispatch(req, &Now::read()) {
            Ok(resp) => resp,
            Err(Fail::Refused(mut r, mut retry_after)) => {
                hooks::request::refusal(self.inner.faults, &mut r, &mut retry_after);
                tracing::debug!(
                    op = op.tool_name(),
                    reason = r.reason.as_str(),
                    "refused: {}",
                    r.message
                );
                let mut resp = Response::refusal(r.reason.status(), r.reason.as_str(), r.message);
                resp.retry_after_secs = retry_after;
                resp
            }
            Err(Fail::Store(e)) => {
                tracing::error!(op = op.tool_name(), error = %e, "storage failure");
                Response::refusal(500, "internal_error", "internal storage error")
            }
        }
    }

    /// The manifest JSON (also returned by `get_manifest`).
    pub fn manifest(&self) -> Value {
        let mut manifest = crate::domain::parley::manifest::build(
            env!("CARGO_PKG_VERSION"),
            &self.inner.limits,
            self.inner.dialectic,
        );
        hooks::request::manifest(self.inner.faults, &mut manifest);
        manifest
    }

    /// The limits this service declares and enforces (PV-MF-2).
    pub fn limits(&self) -> Limits {
        self.inner.limits
    }

    /// Whether the dialectic profile is on (PV-DI-8).
    pub fn dialectic(&self) -> bool {
        self.inner.dialectic
    }

    /// `read_thread` without a token (SSP `conform/forum-digest`): same body as read_thread.
    pub fn read_thread_as_system(&self, thread: &str) -> Response {
        let args = serde_json::json!({ "thread": thread });
        match ops::read_thread(&self.inner, &args) {
            Ok(body) => Response::ok(200, body),
            Err(Fail::Refused(r, _)) => {
                Response::refusal(r.reason.status(), r.reason.as_str(), r.message)
            }
            Err(Fail::Store(e)) => {
                tracing::error!(error = %e, "storage failure");
                Response::refusal(500, "internal_error", "internal storage error")
            }
        }
    }

    /// PV-TR-4: absent → `token_missing`; malformed or unknown → `token_invalid`.
    fn authenticate(&self, auth: Option<&BearerToken>) -> Result<Caller, Fail> {
        let token = match auth {
            None => {
                return refused(
                    Reason::TokenMissing,
                    "Authorization: Bearer <token> is required",
                );
            }
            Some(BearerToken::Malformed) => {
                return refused(
                    Reason::TokenInvalid,
                    "Authorization must be \"Bearer <token>\"",
                );
            }
            Some(BearerToken::Token(t)) => t,
        };
        match self.inner.tokens.get(token) {
            Some(row) => Ok(Caller {
                actor: row.actor(),
                token: token.clone(),
                quota_per_minute: row
                    .quota_per_minute
                    .unwrap_or(self.inner.limits.writes_per_minute),
            }),
            None => refused(
                hooks::request::unknown_token(self.inner.faults),
                "unknown token",
            ),
        }
    }

    /// PV-AU-6 step by step; each operation's own 400 → 404 → 403 → 409 follow in `ops`/`post`.
    fn dispatch(&self, req: Request, now: &Now) -> Result<Response, Fail> {
        let inner = &self.inner;
        // 401 (get_manifest needs no token, PV-TR-4).
        let caller = if req.op.needs_token() {
            Some(self.authenticate(req.auth.as_ref())?)
        } else {
            None
        };
        let enforced = hooks::request::enforced(inner.faults);
        if let Some(caller) = &caller {
            self.admit(caller, &req, enforced, now)?;
        }
        // 413
        if req.body_len > inner.limits.request_max_bytes && enforced.payload_limit {
            return refused(
                Reason::PayloadTooLarge,
                format!("request over {} bytes", inner.limits.request_max_bytes),
            );
        }
        // 415 (PV-RS-4)
        if req.content_type == ContentType::NotJson && enforced.json_content_type {
            return refused(
                Reason::UnsupportedMediaType,
                "the request body must be application/json",
            );
        }
        // 400 from here on, per operation.
        let args = match req.args {
            Args::Json(Value::Null) => render::empty(),
            Args::Json(v) => v,
            Args::Malformed(why) => {
                return refused(Reason::InvalidBody, format!("malformed JSON: {why}"));
            }
        };
        match caller {
            None if req.op == Operation::GetManifest => Ok(Response::ok(200, self.manifest())),
            None => refused(
                Reason::TokenMissing,
                "Authorization: Bearer <token> is required",
            ),
            Some(c) => self.operate(req.op, &c, &args, now),
        }
    }

    /// 403 token_right_missing, then 429 (PV-AU-6) for an authenticated caller.
    fn admit(
        &self,
        caller: &Caller,
        req: &Request,
        enforced: hooks::request::Enforced,
        now: &Now,
    ) -> Result<(), Fail> {
        let inner = &self.inner;
        let faults = inner.faults;
        hooks::request::before_rights(
            faults,
            req.op,
            &req.args,
            &inner.limits,
            inner.dialectic,
            now.time,
        )?;
        // 403 token_right_missing: the operation's right (PV-AU-1); a `verify` post also
        // needs `verify` — the kind is read for this (PV-DI-4, PV-AU-6).
        let rights = required_rights(req.op, &req.args, inner.dialectic);
        for right in hooks::request::rights(faults, req.op, rights) {
            if !caller.actor.has_right(right) {
                return refused(
                    Reason::TokenRightMissing,
                    format!("{} needs the {right:?} right", req.op.tool_name()).to_lowercase(),
                );
            }
        }
        // 429: every write attempt that got this far counts (PV-TR-5).
        if req.op.is_write()
            && enforced.quota
            && let Err(retry_after) = inner.quota.admit(&caller.token, caller.quota_per_minute)
        {
            return Err(Fail::Refused(
                Refusal::new(
                    Reason::RateLimited,
                    format!("more than {} writes per minute", caller.quota_per_minute),
                ),
                Some(retry_after),
            ));
        }
        Ok(())
    }

    /// The operation itself, for an admitted caller (its own 400 → 404 → 403 → 409).
    fn operate(
        &self,
        op: Operation,
        c: &Caller,
        args: &Value,
        now: &Now,
    ) -> Result<Response, Fail> {
        let inner = &self.inner;
        let faults = inner.faults;
        let ok = |body| Ok(Response::ok(200, body));
        match op {
            Operation::GetManifest => ok(self.manifest()),
            Operation::Whoami => ok(ops::whoami(inner, c, args)?),
            Operation::Post => Ok(Response::ok(
                hooks::post::created_status(faults),
                post::post(inner, &c.actor, args, now)?,
            )),
            Operation::ReadThread => Ok(Response::ok(200, ops::read_thread(inner, args)?)),
            Operation::ListEvents => ok(ops::list_events(inner, args)?),
            Operation::Inbox => ok(ops::inbox(inner, &c.actor, args)?),
            Operation::Mark => {
                // Seeded fault only: the MCP binding skips the thread authority of mark.
                let skip_authority = hooks::threads::mark_skips_authority(faults, self.via_mcp);
                ok(ops::mark(inner, &c.actor, args, now, skip_authority)?)
            }
            Operation::Reopen => ok(ops::reopen(inner, &c.actor, args, now)?),
            Operation::ReadClaim => ok(ops::read_claim(inner, args, now)?),
        }
    }
}

/// The refusal statuses `op` can answer with, one per step of PV-AU-6 it reaches, sorted:
/// 401 (a token is needed), 403 (a right, or thread authority for writes), 429 (writes),
/// 400 (arguments are read), 404 (records are named), 409 (writes change state). The
/// transport adds its own (413/415 for request bodies). What `/openapi.json` documents.
pub fn refusal_statuses(op: Operation) -> Vec<u16> {
    let needs_right = !required_rights(op, &Args::Json(Value::Null), true).is_empty();
    let steps = [
        (401, op.needs_token()),
        (403, needs_right || op.is_write()),
        (429, op.is_write()),
        // Every operation but get_manifest reads its arguments (query or body).
        (400, op.needs_token()),
        (404, op.names_records()),
        (409, op.is_write()),
    ];
    let mut out: Vec<u16> = steps
        .into_iter()
        .filter_map(|(status, reached)| reached.then_some(status))
        .collect();
    out.sort_unstable();
    out
}

/// Rights an operation needs (PV-AU-1, PV-AU-3, PV-DI-4). `whoami` needs only a valid token.
fn required_rights(op: Operation, args: &Args, dialectic: bool) -> Vec<Right> {
    match op {
        Operation::GetManifest | Operation::Whoami => vec![],
        Operation::ReadThread | Operation::ListEvents | Operation::Inbox | Operation::ReadClaim => {
            vec![Right::Read]
        }
        Operation::Mark | Operation::Reopen => vec![Right::Write],
        Operation::Post => {
            let is_verify = matches!(args, Args::Json(v) if v.get("kind").and_then(Value::as_str) == Some("verify"));
            if is_verify && dialectic {
                vec![Right::Write, Right::Verify]
            } else {
                vec![Right::Write]
            }
        }
    }
}
