//! Sending one step: the run's state, the request on the binding, pacing under the target's
//! quotas (a 429 the step did not provoke is waited out and sent again once), pooled
//! credentials, and the observation it yields.

use std::collections::HashMap;

use serde_json::{Value, json};

use super::observation::Observation;

use crate::engine::check::{CheckOutcome, StepSignature};
use crate::engine::finding::{self, Finding, Source};
use crate::engine::verdict::Verdict;
use crate::json::matcher::Mismatch;
use crate::json::placeholders::Env;
use crate::parley::manifest::declared_path;
use crate::parley::pacing::{MAX_RETRY_AFTER, Pacer, retry_after};
use crate::parley::preflight::ParleyTarget;
use crate::parley::tokens::token_env;
use crate::parley::vectors::loader::LoadedVector;
use crate::parley::vectors::model::{Role, Step, StepAction};
use crate::transport::{Auth, Exchange, Reply, TransportError, TransportKind};

/// Maximum pages followed by `paginate`.
pub(super) const MAX_PAGES: usize = 50;

pub(super) struct RunState<'a> {
    pub(super) lv: &'a LoadedVector,
    pub(super) required: bool,
    pub(super) kind: TransportKind,
    pub(super) exchanges: Vec<Exchange>,
    pub(super) steps: Vec<StepSignature>,
    pub(super) ids: HashMap<String, String>,
}

impl RunState<'_> {
    /// The verdict of the vector when step `step` did not match (`m`): a finding on the
    /// rules that step's expectation stands for.
    pub(super) fn violation(&self, step: usize, m: Mismatch) -> Verdict {
        let v = &self.lv.vector;
        let message = match &v.advisory {
            Some(why) => format!("{} (advisory, not a failure: {why})", m.message),
            None => m.message,
        };
        let f = Finding::fail(&m.pointer, m.expected, m.observed, message)
            .on(&v.violated_by(step))
            .at(step)
            .by(Source::Vector);
        finding::found(&v.id, &v.requirements, self.required, f, &self.exchanges)
    }

    pub(super) fn done(self, verdict: Verdict) -> CheckOutcome {
        CheckOutcome {
            verdict,
            exchanges: self.exchanges,
            steps: self.steps,
            unkept: 0,
        }
    }
}

/// Builds the environment of built-ins for a target (`$identity.<role>`, `$lock_label.<role>`,
/// `$run`, and `$limits.<name>` for every limit the target's manifest declares — PV-MF-2:
/// the declared values are authoritative, so boundary vectors are written against them,
/// never against the reference's numbers).
pub(super) fn base_env(target: &ParleyTarget, run_nonce: &str) -> Env {
    let mut env = Env::new();
    env.set("run", json!(run_nonce));
    if let Some(limits) = target.manifest.raw.get("limits").and_then(Value::as_object) {
        for (name, value) in limits {
            env.set(format!("limits.{name}"), value.clone());
        }
    }
    // `$tool.<op>`: the MCP tool the target declares for an operation (the §1 table's name
    // when the manifest names none), for raw MCP steps (PV-MF-1: operations are declared).
    for (op, _) in crate::parley::manifest::default_routes().0 {
        let tool = match target.manifest.tools.get(&op) {
            Some(Some(t)) => t.clone(),
            _ => op.clone(),
        };
        env.set(format!("tool.{op}"), json!(tool));
    }
    for (role, id) in &target.identities {
        env.set(format!("identity.{role}"), json!(id.identity));
        env.set(
            format!("lock_label.{role}"),
            id.lock_label
                .clone()
                .map(Value::String)
                .unwrap_or(Value::Null),
        );
    }
    env
}

async fn send_once(
    target: &ParleyTarget,
    kind: TransportKind,
    step: &Step,
    env: &Env,
    auth: &Auth,
    extra_args: Option<(&str, &Value)>,
) -> Result<(Reply, bool), Result<TransportError, String>> {
    let t = target.transport(kind);
    match step.action() {
        Some(StepAction::Op(op)) => {
            let mut args = match &step.args {
                Some(a) => env.resolve(a).map_err(Err)?,
                None => json!({}),
            };
            if let (Some((k, v)), Some(o)) = (extra_args, args.as_object_mut()) {
                o.insert(k.to_string(), v.clone());
            }
            t.call(op, &args, auth)
                .await
                .map(|r| (r, false))
                .map_err(Ok)
        }
        Some(StepAction::Http(h)) => {
            let mut h = h.clone();
            let path = match env.resolve_str(&h.path).map_err(Err)? {
                Value::String(s) => s,
                other => other.to_string(),
            };
            // Raw steps are written against the §1 table; the target's declared route for
            // the same operation wins (the manifest is authoritative, parley-v1.md preamble).
            h.path = declared_path(&target.manifest.routes, &path);
            if let Some(b) = &h.body_json {
                h.body_json = Some(env.resolve(b).map_err(Err)?);
            }
            if let Some(b) = &h.body {
                h.body = Some(match env.resolve_str(b).map_err(Err)? {
                    Value::String(s) => s,
                    other => other.to_string(),
                });
            }
            t.raw_http(&h, auth).await.map(|r| (r, false)).map_err(Ok)
        }
        Some(StepAction::Mcp(m)) => {
            let mut m = m.clone();
            if let Some(b) = &m.body_json {
                m.body_json = Some(env.resolve(b).map_err(Err)?);
            }
            t.raw_mcp(&m, auth).await.map(|r| (r, true)).map_err(Ok)
        }
        None => Err(Err("step needs exactly one of op, http, mcp".into())),
    }
}

pub(super) enum StepError {
    Harness(String),
    NoResponse(String),
}

/// Whether a step writes (PV-TR-5 counts write attempts): the write operations, and every
/// raw request that is not a GET (counted conservatively: pacing one too many is harmless).
pub(super) fn is_write(step: &Step) -> bool {
    match step.action() {
        Some(StepAction::Op(op)) => matches!(op, "post" | "mark" | "reopen"),
        Some(StepAction::Http(h)) => !h.method.eq_ignore_ascii_case("GET"),
        Some(StepAction::Mcp(_)) => true,
        None => false,
    }
}

/// A `429 rate_limited` the step did not ask for: the target's quota window still holds
/// writes the pacer could not see (an earlier run against the same server).
fn unprovoked_429(step: &Step, obs: &Observation) -> bool {
    let limited = obs.http_status == 429
        || obs.body().and_then(|b| b.pointer("/error/status")) == Some(&Value::from(429));
    limited
        && !serde_json::to_string(&step.expect)
            .is_ok_and(|e| e.contains("rate_limited") || e.contains("429"))
}

/// Admits one write by `role` through the pacer: `auth` (its primary token), or another
/// token of the role's pool when that one has room first.
async fn pooled_auth(p: &Pacer, primary: &str, role: Role, auth: &Auth) -> Auth {
    match p.admit(primary).await {
        0 => auth.clone(),
        i => Auth::Bearer {
            token: p.pooled(primary, i).to_string(),
            env: Some(token_env(role, i)),
        },
    }
}

/// Sends one request of the step; a paced write (`paced`: its token and the pacer) goes
/// through the role's token pool, and an unprovoked 429 is waited out and retried once.
#[expect(clippy::too_many_arguments)] // one request's whole context, passed through unchanged
async fn send_paced(
    target: &ParleyTarget,
    kind: TransportKind,
    step: &Step,
    env: &Env,
    auth: &Auth,
    raw_mcp: bool,
    exchanges: &mut Vec<Exchange>,
    paced: Option<(&str, &Pacer)>,
    extra: Option<(&str, &Value)>,
) -> Result<Observation, StepError> {
    let Some((t, p)) = paced else {
        return send_raw(target, kind, step, env, auth, raw_mcp, exchanges, extra).await;
    };
    let used = pooled_auth(p, t, step.role, auth).await;
    let first = send_raw(target, kind, step, env, &used, raw_mcp, exchanges, extra).await?;
    if !unprovoked_429(step, &first) {
        return Ok(first);
    }
    // The target's window holds writes this run did not make: wait as it asks (and
    // until the pacer, told so, has room), then retry once; both exchanges stay in the
    // transcript.
    let wait = retry_after(first.header("retry-after")).unwrap_or(MAX_RETRY_AFTER);
    tracing::warn!(
        step = step_label(step),
        wait_s = wait.as_secs(),
        "unprovoked 429: waiting Retry-After, then retrying once"
    );
    if let Auth::Bearer { token, .. } = &used {
        p.saturate(token);
    }
    tokio::time::sleep(wait).await;
    let again = pooled_auth(p, t, step.role, auth).await;
    send_raw(target, kind, step, env, &again, raw_mcp, exchanges, extra).await
}

#[expect(clippy::too_many_arguments)] // one step's whole context, passed through unchanged
pub(super) async fn observe(
    target: &ParleyTarget,
    kind: TransportKind,
    step: &Step,
    env: &Env,
    auth: &Auth,
    raw_mcp: bool,
    exchanges: &mut Vec<Exchange>,
    pacer: Option<&Pacer>,
) -> Result<Observation, StepError> {
    let token = match auth {
        Auth::Bearer { token, .. } => Some(token.as_str()),
        Auth::None => None,
    };
    let paced = token
        .zip(pacer)
        .filter(|(t, p)| is_write(step) && p.paces(t));
    let mut send = async |extra: Option<(&str, &Value)>| {
        send_paced(
            target, kind, step, env, auth, raw_mcp, exchanges, paced, extra,
        )
        .await
    };
    if !step.paginate {
        return send(None).await;
    }
    let ok = |o: &Observation| match kind {
        TransportKind::Http => (200..300).contains(&o.http_status),
        TransportKind::Mcp => o.is_error == Some(false),
    };
    let mut first = send(None).await?;
    if !ok(&first) {
        return Ok(first);
    }
    let mut items: Vec<Value> = Vec::new();
    let mut cursor = Value::Null;
    let mut page_body = first.take_body();
    for _ in 0..MAX_PAGES {
        let mut body = page_body.take().unwrap_or(Value::Null);
        cursor = body
            .get_mut("cursor")
            .map(Value::take)
            .unwrap_or(Value::Null);
        let page_items = match body.get_mut("items").map(Value::take) {
            Some(Value::Array(a)) => a,
            _ => Vec::new(),
        };
        if page_items.is_empty() {
            break;
        }
        items.extend(page_items);
        let mut page = send(Some(("since", &cursor))).await?;
        if !ok(&page) {
            return Ok(page);
        }
        if first.mirror.is_none() {
            first.mirror = page.mirror.take();
        }
        page_body = page.take_body();
    }
    first.synthetic = Some(json!({"items": items, "cursor": cursor}));
    Ok(first)
}

fn step_label(step: &Step) -> String {
    match step.action() {
        Some(StepAction::Op(op)) => op.to_string(),
        Some(StepAction::Http(h)) => format!("{} {}", h.method, h.path),
        Some(StepAction::Mcp(_)) => "raw MCP".into(),
        None => String::new(),
    }
}

#[expect(clippy::too_many_arguments)] // one request's whole context, passed through unchanged
async fn send_raw(
    target: &ParleyTarget,
    kind: TransportKind,
    step: &Step,
    env: &Env,
    auth: &Auth,
    raw_mcp: bool,
    exchanges: &mut Vec<Exchange>,
    extra: Option<(&str, &Value)>,
) -> Result<Observation, StepError> {
    match send_once(target, kind, step, env, auth, extra).await {
        Ok((mut reply, raw)) => {
            let ex = std::mem::take(&mut reply.exchanges);
            exchanges.extend(ex);
            Ok(Observation::new(kind, raw || raw_mcp, reply))
        }
        Err(Ok(TransportError::Unusable(m))) => Err(StepError::Harness(m)),
        Err(Ok(TransportError::Io {
            message,
            exchanges: ex,
        })) => {
            exchanges.extend(ex);
            Err(StepError::NoResponse(message))
        }
        Err(Err(m)) => Err(StepError::Harness(m)),
    }
}
