//! Runs one golden vector on one transport and judges every step.
//!
//! The first violated step fails the vector (the rest are skipped); the violation carries the
//! pointer, expected and observed values and the full transcript. Each step also leaves an
//! outcome signature so the engine can compare the two bindings (PV-TR-1).

// `Mismatch` is only built on the (cold) failure path and carries the expected/observed JSON the
// report needs; boxing it would add noise to every matcher arm for no measurable gain.
#![allow(clippy::result_large_err)]

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::LazyLock;

use futures::FutureExt as _;
use futures::future::BoxFuture;
use regex::Regex;

use serde_json::{Value, json};

use super::loader::LoadedVector;
use super::model::{Expect, Need, Role, Step, StepAction, Vector, identity_roles};
use crate::engine::check::{Bindings, Check, CheckCtx, CheckOutcome, StepSignature};
use crate::engine::requirements::Catalogue;
use crate::engine::verdict::{Cause, Verdict, Violation};
use crate::json::matcher::{Mismatch, match_value};
use crate::json::placeholders::Env;
use crate::json::pointer_token;
use crate::parley::compare::PV_TR_1;
use crate::parley::manifest::declared_path;
use crate::parley::pacing::{MAX_RETRY_AFTER, Pacer, retry_after};
use crate::parley::preflight::ParleyTarget;
use crate::parley::tokens::token_env;
use crate::transport::{Auth, Exchange, Reply, TransportError, TransportKind};

/// Maximum pages followed by `paginate`.
pub const MAX_PAGES: usize = 50;

/// A golden vector as a [`Check`].
pub struct VectorCheck {
    lv: LoadedVector,
    required: bool,
    bindings: Vec<TransportKind>,
    /// `["PV-TR-1"]` when the vector runs on both bindings (its outcomes are compared).
    derived: Vec<String>,
}

impl VectorCheck {
    /// Wraps a loaded vector; `catalogue` decides fail (MUST cited) vs warn.
    pub fn new(lv: LoadedVector, catalogue: &Catalogue) -> Self {
        // An advisory vector checks what the notes do not fix: never a failure (issue 14).
        let required =
            lv.vector.advisory.is_none() && catalogue.any_required(&lv.vector.requirements);
        let (mut http, mut mcp) = (true, true);
        for s in &lv.vector.steps {
            match s.action() {
                Some(StepAction::Http(_)) => mcp = false,
                Some(StepAction::Mcp(_)) => http = false,
                _ => {}
            }
        }
        let bindings: Vec<TransportKind> = [(http, TransportKind::Http), (mcp, TransportKind::Mcp)]
            .into_iter()
            .filter_map(|(on, k)| on.then_some(k))
            .collect();
        let derived = if bindings.len() == 2 {
            vec![PV_TR_1.to_string()]
        } else {
            Vec::new()
        };
        Self {
            lv,
            required,
            bindings,
            derived,
        }
    }

    /// The vector.
    pub fn loaded(&self) -> &LoadedVector {
        &self.lv
    }
}

impl Check for VectorCheck {
    fn id(&self) -> &str {
        &self.lv.vector.id
    }
    fn title(&self) -> &str {
        &self.lv.vector.title
    }
    fn requirements(&self) -> &[String] {
        &self.lv.vector.requirements
    }
    fn area(&self) -> &str {
        &self.lv.area
    }
    fn exclusive(&self) -> bool {
        self.lv.vector.exclusive
    }
    fn advisory(&self) -> Option<&str> {
        self.lv.vector.advisory.as_deref()
    }
    fn bindings(&self) -> Bindings {
        Bindings::Each(self.bindings.clone())
    }
    fn compare_transports(&self) -> bool {
        self.bindings.len() == 2
    }
    fn derived_requirements(&self) -> &[String] {
        &self.derived
    }
    fn describe(&self) -> Option<String> {
        let v = &self.lv.vector;
        let roles: Vec<&str> = v.roles.iter().map(|r| r.as_str()).collect();
        Some(format!(
            "vector {} ({}, area {})\n  {}\n  steps: {}, roles: {}",
            v.id,
            self.lv.file.display(),
            self.lv.area,
            v.title,
            v.steps.len(),
            if roles.is_empty() {
                "none".to_string()
            } else {
                roles.join(", ")
            }
        ))
    }
    fn budget_use(&self) -> Vec<(String, u64)> {
        // The writes the pacer paces (PV-TR-5): by role tokens, the quota role aside.
        let mut per_role: BTreeMap<Role, u64> = BTreeMap::new();
        for step in &self.lv.vector.steps {
            if is_write(step)
                && step.token.is_none()
                && !matches!(step.role, Role::Limited | Role::Anonymous)
            {
                *per_role.entry(step.role).or_default() += u64::from(step.repeat.unwrap_or(1));
            }
        }
        per_role
            .into_iter()
            .map(|(r, n)| (r.as_str().to_string(), n))
            .collect()
    }
    fn run<'a>(&'a self, ctx: &'a CheckCtx) -> BoxFuture<'a, CheckOutcome> {
        async move {
            let Some(kind) = ctx.transport else {
                return CheckOutcome::verdict(Verdict::HarnessError {
                    message: "vector run without a transport".into(),
                });
            };
            run_vector(&self.lv, self.required, ctx, kind).await
        }
        .boxed()
    }
}

/// What the vector observed for one request, in binding-neutral terms.
///
/// Owns the reply (no copies of the parsed JSON: inbox pages can be large).
#[derive(Debug)]
struct Observation {
    kind: TransportKind,
    raw_mcp: bool,
    http_status: u16,
    headers: Vec<(String, String)>,
    text: String,
    /// HTTP: the body. MCP: the JSON-RPC message.
    doc: Option<Value>,
    /// The vector's body is `doc.result.structuredContent` (MCP `op` steps), not `doc` itself.
    in_result: bool,
    /// `paginate`: the assembled `{"items", "cursor"}` body.
    synthetic: Option<Value>,
    /// MCP tool result: `isError`.
    is_error: Option<bool>,
    /// PV-RS-2 (text mirror of `structuredContent`) problem.
    mirror: Option<Mismatch>,
}

impl Observation {
    fn new(kind: TransportKind, raw_mcp: bool, reply: Reply) -> Self {
        let Reply {
            http_status,
            headers,
            json,
            text,
            ..
        } = reply;
        let mut o = Observation {
            kind,
            raw_mcp,
            http_status,
            headers,
            text,
            doc: json,
            in_result: kind == TransportKind::Mcp && !raw_mcp,
            synthetic: None,
            is_error: None,
            mirror: None,
        };
        if kind == TransportKind::Mcp
            && let Some(r) = o.doc.as_ref().and_then(|m| m.get("result"))
        {
            o.is_error = Some(r.get("isError").and_then(Value::as_bool).unwrap_or(false));
            let text = r.pointer("/content/0/text").and_then(Value::as_str);
            if let Some(sc) = r.get("structuredContent") {
                let mirrored = text.and_then(|t| serde_json::from_str::<Value>(t).ok());
                if mirrored.as_ref() != Some(sc) {
                    o.mirror = Some(Mismatch {
                        pointer: "/content/0/text".into(),
                        expected: json!("the JSON text of structuredContent (PV-RS-2)"),
                        observed: text.map(|t| json!(t)).unwrap_or(Value::Null),
                        message:
                            "content[0].text does not carry the same JSON as structuredContent"
                                .into(),
                    });
                }
            }
        }
        o
    }

    /// HTTP body / MCP `structuredContent` / raw MCP message.
    fn body(&self) -> Option<&Value> {
        if let Some(s) = &self.synthetic {
            return Some(s);
        }
        let doc = self.doc.as_ref()?;
        if self.in_result {
            doc.pointer("/result/structuredContent")
        } else {
            Some(doc)
        }
    }

    /// Moves the body out (pagination).
    fn take_body(&mut self) -> Option<Value> {
        if let Some(s) = self.synthetic.take() {
            return Some(s);
        }
        if self.in_result {
            self.doc
                .as_mut()?
                .pointer_mut("/result/structuredContent")
                .map(Value::take)
        } else {
            self.doc.take()
        }
    }

    /// MCP: the JSON-RPC message.
    fn rpc(&self) -> Option<&Value> {
        if self.kind == TransportKind::Mcp {
            self.doc.as_ref()
        } else {
            None
        }
    }

    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// A compact JSON picture of the response for violations.
    fn summary(&self) -> Value {
        match self.kind {
            TransportKind::Http => json!({
                "status": self.http_status,
                "body": self.body().cloned().unwrap_or_else(|| json!(truncate(&self.text, 2000))),
            }),
            TransportKind::Mcp => json!({
                "http_status": self.http_status,
                "jsonrpc": self.rpc().cloned().unwrap_or_else(|| json!(truncate(&self.text, 2000))),
            }),
        }
    }

    fn signature(&self, step: usize, compare_body: bool) -> StepSignature {
        let err = self.body().and_then(|b| b.get("error"));
        let refusal = match self.kind {
            TransportKind::Http => self.http_status >= 400,
            TransportKind::Mcp => self.is_error == Some(true),
        };
        if let Some(code) = self.rpc().and_then(|m| m.pointer("/error/code")) {
            return StepSignature {
                step,
                class: "jsonrpc_error".into(),
                status: code.as_u64(),
                reason: None,
                body: None,
            };
        }
        if refusal {
            return StepSignature {
                step,
                class: "refusal".into(),
                status: err
                    .and_then(|e| e.get("status"))
                    .and_then(Value::as_u64)
                    .or(match self.kind {
                        TransportKind::Http => Some(u64::from(self.http_status)),
                        TransportKind::Mcp => None,
                    }),
                reason: err
                    .and_then(|e| e.get("reason"))
                    .and_then(Value::as_str)
                    .map(str::to_string),
                body: None,
            };
        }
        let success = match self.kind {
            TransportKind::Http => (200..300).contains(&self.http_status),
            TransportKind::Mcp => self.is_error == Some(false),
        };
        StepSignature {
            step,
            class: if success { "success" } else { "other" }.into(),
            status: None,
            reason: None,
            body: if success && compare_body {
                self.body().cloned()
            } else {
                None
            },
        }
    }
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(n).collect::<String>())
    }
}

/// Why evaluating an expectation did not pass.
enum EvalError {
    Mismatch(Mismatch),
    Harness(String),
}

impl From<Mismatch> for EvalError {
    fn from(m: Mismatch) -> Self {
        EvalError::Mismatch(m)
    }
}

fn mismatch(
    pointer: &str,
    expected: Value,
    observed: Value,
    message: impl Into<String>,
) -> EvalError {
    EvalError::Mismatch(Mismatch {
        pointer: pointer.into(),
        expected,
        observed,
        message: message.into(),
    })
}

fn resolve_match(
    env: &Env,
    m: &Value,
    observed: Option<&Value>,
    pointer: &str,
) -> Result<(), EvalError> {
    let m = env.resolve(m).map_err(EvalError::Harness)?;
    match_value(&m, observed, pointer).map_err(EvalError::Mismatch)
}

/// Judges one observation against one expectation.
fn evaluate(
    expect: &Expect,
    obs: &Observation,
    env: &Env,
    reasons: &BTreeSet<String>,
) -> Result<(), EvalError> {
    if obs.kind == TransportKind::Http
        && let Some(hs) = expect.headers()
    {
        for (name, m) in hs {
            let v = obs.header(&name.to_ascii_lowercase()).map(|s| json!(s));
            resolve_match(
                env,
                m,
                v.as_ref(),
                &format!("/headers/{}", pointer_token(&name.to_ascii_lowercase())),
            )?;
        }
    }
    match expect {
        Expect::OneOf(o) => {
            let mut first = None;
            for alt in &o.one_of {
                match evaluate(alt, obs, env, reasons) {
                    Ok(()) => return Ok(()),
                    Err(EvalError::Harness(h)) => return Err(EvalError::Harness(h)),
                    Err(EvalError::Mismatch(m)) => {
                        first.get_or_insert(m);
                    }
                }
            }
            let detail = first
                .map(|m| format!(" (first alternative: {} at {:?})", m.message, m.pointer))
                .unwrap_or_default();
            Err(mismatch(
                "",
                serde_json::to_value(&o.one_of).unwrap_or(Value::Null),
                obs.summary(),
                format!("the response matches none of the alternatives{detail}"),
            ))
        }
        Expect::Success(s) => {
            match (obs.kind, obs.raw_mcp) {
                (TransportKind::Http, _) | (TransportKind::Mcp, true) => {
                    if obs.http_status != s.status {
                        return Err(mismatch(
                            "",
                            json!({"status": s.status}),
                            obs.summary(),
                            format!("expected HTTP {}, got {}", s.status, obs.http_status),
                        ));
                    }
                }
                (TransportKind::Mcp, false) => {
                    if let Some(e) = obs.rpc().and_then(|m| m.get("error")) {
                        return Err(mismatch(
                            "",
                            json!({"result": {"isError": false}}),
                            json!({"error": e}),
                            "expected a tool result, got a JSON-RPC error",
                        ));
                    }
                    match obs.is_error {
                        None => {
                            return Err(mismatch(
                                "",
                                json!({"result": {"isError": false}}),
                                obs.summary(),
                                "no JSON-RPC result in the response",
                            ));
                        }
                        Some(true) => {
                            return Err(mismatch(
                                "",
                                json!({"isError": false}),
                                obs.body().cloned().unwrap_or(Value::Null),
                                "expected a success, got a tool result with isError: true",
                            ));
                        }
                        Some(false) => {}
                    }
                    if obs.body().is_none() {
                        return Err(mismatch(
                            "/structuredContent",
                            json!({"$type": "object"}),
                            Value::Null,
                            "success without structuredContent (PV-RS-2)",
                        ));
                    }
                    if let Some(m) = &obs.mirror {
                        return Err(EvalError::Mismatch(m.clone()));
                    }
                }
            }
            if let Some(m) = &s.matcher {
                if obs.body().is_none() {
                    return Err(mismatch(
                        "",
                        m.clone(),
                        json!(truncate(&obs.text, 2000)),
                        "the response body is not JSON",
                    ));
                }
                resolve_match(env, m, obs.body(), "")?;
            }
            Ok(())
        }
        Expect::Refusal(r) => {
            let want = json!({"error": {"reason": r.refusal.reason, "status": r.refusal.status, "message": {"$type": "string"}}});
            match obs.kind {
                TransportKind::Http => {
                    if obs.http_status != r.refusal.status {
                        return Err(mismatch(
                            "",
                            json!({"status": r.refusal.status, "reason": r.refusal.reason}),
                            obs.summary(),
                            format!(
                                "expected refusal HTTP {} {}, got HTTP {}",
                                r.refusal.status, r.refusal.reason, obs.http_status
                            ),
                        ));
                    }
                    let Some(body) = obs.body() else {
                        return Err(mismatch(
                            "",
                            want,
                            json!(truncate(&obs.text, 2000)),
                            "refusal body is not JSON (PV-TR-3)",
                        ));
                    };
                    match_value(&want, Some(body), "")?;
                    let ct = obs.header("content-type").unwrap_or_default();
                    if !ct.to_ascii_lowercase().starts_with("application/json") {
                        return Err(mismatch(
                            "/headers/content-type",
                            json!("application/json"),
                            json!(ct),
                            "refusal is not served as application/json (PV-TR-3)",
                        ));
                    }
                    Ok(())
                }
                TransportKind::Mcp => {
                    if let Some(e) = obs.rpc().and_then(|m| m.get("error")) {
                        return Err(mismatch(
                            "",
                            json!({"result": {"isError": true, "structuredContent": want}}),
                            json!({"error": e}),
                            "refusal sent as a JSON-RPC error instead of a tool result with isError (PV-TR-2)",
                        ));
                    }
                    if obs.is_error != Some(true) {
                        return Err(mismatch(
                            "",
                            json!({"isError": true, "structuredContent": want}),
                            obs.summary(),
                            format!(
                                "expected refusal {} {}, got a success",
                                r.refusal.status, r.refusal.reason
                            ),
                        ));
                    }
                    let sc = obs
                        .rpc()
                        .and_then(|m| m.pointer("/result/structuredContent"));
                    match_value(&want, sc, "/structuredContent")?;
                    if let Some(m) = &obs.mirror {
                        return Err(EvalError::Mismatch(m.clone()));
                    }
                    Ok(())
                }
            }
        }
        Expect::WellFormed(w) => well_formed(w.well_formed, obs, reasons),
        Expect::JsonRpcError(j) => {
            if obs.kind != TransportKind::Mcp {
                return Err(EvalError::Harness(
                    "jsonrpc_error expectation on the HTTP transport".into(),
                ));
            }
            let code = obs.rpc().and_then(|m| m.pointer("/error/code"));
            if code.and_then(Value::as_i64) != Some(j.jsonrpc_error.code) {
                return Err(mismatch(
                    "/error/code",
                    json!(j.jsonrpc_error.code),
                    obs.summary(),
                    "expected a JSON-RPC error with this code",
                ));
            }
            if let Some(class) = j.http_status_class
                && obs.http_status / 100 != class
            {
                return Err(mismatch(
                    "",
                    json!({"http_status_class": format!("{class}xx")}),
                    obs.summary(),
                    format!("expected HTTP {class}xx, got {}", obs.http_status),
                ));
            }
            Ok(())
        }
    }
}

/// `{"well_formed": true}`: the fuzzer's oracles hold for this answer.
fn well_formed(
    enabled: bool,
    obs: &Observation,
    reasons: &BTreeSet<String>,
) -> Result<(), EvalError> {
    if !enabled {
        return Err(EvalError::Harness(
            "`well_formed` must be true (false would expect nothing)".into(),
        ));
    }
    let reply = Ok(crate::transport::Reply {
        http_status: obs.http_status,
        headers: obs.headers.clone(),
        json: obs.doc.clone(),
        text: obs.text.clone(),
        exchanges: Vec::new(),
    });
    let (_, breaches) = crate::parley::fuzz::oracles::judge(obs.kind, &reply, reasons, None);
    match breaches.first() {
        None => Ok(()),
        Some(b) => Err(mismatch(
            "",
            json!({"well_formed": true}),
            obs.summary(),
            format!("{} ({})", b.message, b.oracle.title()),
        )),
    }
}

static ID_RE: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r"^([a-z]+)_[0-9]+$").ok());
static TIME_RE: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}").ok());

/// Normalises a success body for PV-TR-1: ids by order of first appearance, times and cursors masked.
pub fn normalise(v: &Value, ids: &mut HashMap<String, String>) -> Value {
    match v {
        Value::String(s) => {
            if TIME_RE.as_ref().is_some_and(|r| r.is_match(s)) {
                return json!("<time>");
            }
            if let Some(c) = ID_RE.as_ref().and_then(|r| r.captures(s)) {
                let n = ids.len() + 1;
                let prefix = c[1].to_string();
                return json!(
                    ids.entry(s.clone())
                        .or_insert_with(|| format!("<{prefix}#{n}>"))
                        .clone()
                );
            }
            v.clone()
        }
        Value::Array(a) => {
            let mut out: Vec<Value> = a.iter().map(|x| normalise(x, ids)).collect();
            // Lists of plain names (rights, reasons, kinds, claim states): the notes fix no
            // order for them (only §5's forward states, checked per binding by its own vector),
            // so the two bindings may list them differently and still give "the same success
            // payload" (PV-TR-1). Ids and times (already masked as `<…>`) keep their order.
            if out
                .iter()
                .all(|x| x.as_str().is_some_and(|s| !s.starts_with('<')))
            {
                out.sort_by(|x, y| x.as_str().cmp(&y.as_str()));
            }
            Value::Array(out)
        }
        // Members in name order: ids are numbered in the order they are met, and member
        // order carries no meaning (RFC 8259 §4), so two bindings listing the same members
        // in different orders must normalise alike (PV-TR-1).
        Value::Object(o) => Value::Object(
            sorted_members(o)
                .map(|(k, x)| {
                    let nv = if k == "cursor" && !x.is_null() {
                        json!("<cursor>")
                    } else {
                        normalise(x, ids)
                    };
                    (k.clone(), nv)
                })
                .collect(),
        ),
        _ => v.clone(),
    }
}

fn sorted_members(o: &serde_json::Map<String, Value>) -> impl Iterator<Item = (&String, &Value)> {
    let mut members: Vec<(&String, &Value)> = o.iter().collect();
    members.sort_by(|a, b| a.0.cmp(b.0));
    members.into_iter()
}

struct RunState<'a> {
    lv: &'a LoadedVector,
    required: bool,
    kind: TransportKind,
    exchanges: Vec<Exchange>,
    steps: Vec<StepSignature>,
    ids: HashMap<String, String>,
}

impl RunState<'_> {
    fn violation(&self, step: usize, m: Mismatch) -> Verdict {
        let v = Violation {
            check: self.lv.vector.id.clone(),
            requirements: self.lv.vector.violated_by(step),
            step: Some(step),
            pointer: m.pointer,
            expected: m.expected,
            observed: m.observed,
            message: match &self.lv.vector.advisory {
                Some(why) => format!("{} (advisory, not a failure: {why})", m.message),
                None => m.message,
            },
            transcript: self.exchanges.clone(),
        };
        if self.required {
            Verdict::Fail(v)
        } else {
            Verdict::Warn(v)
        }
    }

    fn done(self, verdict: Verdict) -> CheckOutcome {
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
pub fn base_env(target: &ParleyTarget, run_nonce: &str) -> Env {
    let mut env = Env::new();
    env.set("run", json!(run_nonce));
    if let Some(limits) = target.manifest.raw.get("limits").and_then(Value::as_object) {
        for (name, value) in limits {
            env.set(format!("limits.{name}"), value.clone());
        }
    }
    // `$tool.<op>`: the MCP tool the target declares for an operation (the §1 table's name
    // when the manifest names none), for raw MCP steps (PV-MF-1: operations are declared).
    for (op, _) in super::super::manifest::default_routes().0 {
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

/// Why `v` cannot run on `kind` against `target` (a need the manifest does not meet, a role
/// without a token or identity, an operation the target declares `null`), with whose side
/// the gap is on, or `None` when it can. The run and `conform init` (which lists the checks
/// a profile leaves `unsupported`) both ask this. `Err` = the vector itself is malformed.
pub fn unsupported_reason(
    v: &Vector,
    target: &ParleyTarget,
    kind: TransportKind,
) -> Result<Option<(Cause, String)>, String> {
    for need in &v.needs {
        if let Some(reason) = unmet_need(need, target)? {
            return Ok(Some((Cause::Target, reason)));
        }
    }
    for role in &v.roles {
        if *role != Role::Anonymous && target.auth(*role).is_none() {
            return Ok(Some((
                Cause::Profile,
                format!("the target profile has no token for role {role}"),
            )));
        }
    }
    // A role whose identity a step names (`$identity.agent_b`) without acting as it: the
    // placeholder cannot resolve without that role's token and whoami (issue 26: a profile
    // gap, never a harness error).
    for name in identity_roles(v)? {
        if !target.identities.keys().any(|r| r.as_str() == name) {
            return Ok(Some((
                Cause::Profile,
                format!(
                    "the target profile gives no identity for role {name} (its token and whoami)"
                ),
            )));
        }
    }
    // An operation the target declares `null` on this binding (PV-TR-1a, reported by its own
    // check) makes the vector inapplicable here, not failed.
    for step in &v.steps {
        if let Some(StepAction::Op(op)) = step.action() {
            let missing = match kind {
                TransportKind::Http => matches!(target.manifest.routes.0.get(op), Some(None)),
                TransportKind::Mcp => matches!(target.manifest.tools.get(op), Some(None)),
            };
            if missing {
                return Ok(Some((
                    Cause::Target,
                    format!("the target declares no {kind} binding for {op} (PV-TR-1a)"),
                )));
            }
        }
    }
    Ok(None)
}

/// The reason a `needs` entry is not met by the target's manifest, if it is not.
fn unmet_need(need: &str, target: &ParleyTarget) -> Result<Option<String>, String> {
    Ok(match Need::parse(need)? {
        Need::Feature(f) => (!target.has_feature(&f))
            .then(|| format!("the target's manifest does not enable `{f}`")),
        // `!dialectic`: the vector checks the profile's absence (PV-DI-8).
        Need::NoFeature(f) => target
            .has_feature(&f)
            .then(|| format!("the target's manifest enables `{f}`")),
        // A vector written for one declared value (the reference instance's): the manifest is
        // authoritative (PV-MF-2), so another declared value makes the vector inapplicable,
        // not failed; other vectors check the declared value itself.
        Need::Declared { pointer, value } => {
            let declared = target.manifest.raw.pointer(&pointer);
            (declared != Some(&value)).then(|| {
                format!(
                    "the vector is written for a manifest declaring {pointer} = {value}; the target declares {}",
                    declared.map_or_else(|| "nothing there".to_string(), Value::to_string)
                )
            })
        }
    })
}

/// Runs one vector on one transport.
pub async fn run_vector(
    lv: &LoadedVector,
    required: bool,
    ctx: &CheckCtx,
    kind: TransportKind,
) -> CheckOutcome {
    let Some(target) = ctx.target.part::<ParleyTarget>() else {
        return CheckOutcome::verdict(Verdict::HarnessError {
            message: "the Parley pre-flight did not run".into(),
        });
    };
    let reasons = target.manifest.reasons();
    let v = &lv.vector;
    match unsupported_reason(v, target, kind) {
        Ok(None) => {}
        Ok(Some((cause, reason))) => {
            return CheckOutcome::verdict(Verdict::Unsupported { reason, cause });
        }
        Err(message) => return CheckOutcome::verdict(Verdict::HarnessError { message }),
    }
    let pacer = ctx.target.part::<Pacer>();
    let mut env = base_env(target, &ctx.run_nonce);
    let mut drifted = false;
    let mut st = RunState {
        lv,
        required,
        kind,
        exchanges: Vec::new(),
        steps: Vec::new(),
        ids: HashMap::new(),
    };
    for (i, step) in v.steps.iter().enumerate() {
        let n = i + 1;
        let auth = match &step.token {
            Some(t) => Auth::Bearer {
                token: t.clone(),
                env: None,
            },
            None => target.auth(step.role).unwrap_or(Auth::None),
        };
        let raw_mcp = matches!(step.action(), Some(StepAction::Mcp(_)));
        let attempts = step.repeat.unwrap_or(1).max(1);
        let mut seen = false;
        let mut last: Option<Observation> = None;
        for _ in 0..attempts {
            let obs = match observe(
                target,
                st.kind,
                step,
                &env,
                &auth,
                raw_mcp,
                &mut st.exchanges,
                pacer,
            )
            .await
            {
                Ok(o) => o,
                Err(StepError::Harness(m)) => {
                    let message = format!("step {n}: {m}");
                    return st.done(Verdict::HarnessError { message });
                }
                Err(StepError::NoResponse(e)) => {
                    st.steps.push(StepSignature {
                        step: n,
                        class: "no_response".into(),
                        status: None,
                        reason: None,
                        body: None,
                    });
                    let m = Mismatch {
                        pointer: String::new(),
                        expected: json!("a response"),
                        observed: json!(e),
                        message: format!("no response: {e}"),
                    };
                    let verdict = st.violation(n, m);
                    return st.done(verdict);
                }
            };
            match evaluate(&step.expect, &obs, &env, &reasons) {
                Ok(()) => {}
                Err(EvalError::Harness(m)) => {
                    let message = format!("step {n}: {m}");
                    return st.done(Verdict::HarnessError { message });
                }
                Err(EvalError::Mismatch(m)) => {
                    st.steps.push(obs.signature(n, false));
                    let verdict = st.violation(n, m);
                    return st.done(verdict);
                }
            }
            if let Some(es) = &step.expect_seen
                && !seen
            {
                match evaluate(es, &obs, &env, &reasons) {
                    Ok(()) => seen = true,
                    Err(EvalError::Harness(m)) => {
                        let message = format!("step {n}: {m}");
                        return st.done(Verdict::HarnessError { message });
                    }
                    Err(EvalError::Mismatch(_)) => {}
                }
            }
            last = Some(obs);
        }
        let Some(obs) = last else {
            return st.done(Verdict::HarnessError {
                message: format!("step {n}: no attempt made"),
            });
        };
        if let Some(es) = &step.expect_seen
            && !seen
        {
            let m = Mismatch {
                pointer: String::new(),
                expected: serde_json::to_value(es).unwrap_or(Value::Null),
                observed: obs.summary(),
                message: format!("none of the {attempts} attempts matched expect_seen"),
            };
            st.steps.push(obs.signature(n, false));
            let verdict = st.violation(n, m);
            return st.done(verdict);
        }
        // The shared inbox depends on concurrent activity, and a repeated step on the quota
        // window it happens to fall in (the two bindings' runs are seconds apart): a repeated
        // step is not compared across bindings, and after one the threads it wrote to may
        // legitimately differ, so later bodies are not compared either (classes still are).
        let mut sig = if step.repeat.is_some() {
            drifted = true;
            StepSignature {
                step: n,
                class: "repeat".into(),
                status: None,
                reason: None,
                body: None,
            }
        } else {
            obs.signature(n, !drifted && step.op.as_deref() != Some("inbox"))
        };
        if let Some(b) = sig.body.take() {
            sig.body = Some(normalise(&b, &mut st.ids));
        }
        st.steps.push(sig);
        for (name, ptr) in &step.capture {
            match obs.body().and_then(|b| b.pointer(ptr)) {
                Some(val) => env.set(name.clone(), val.clone()),
                None => {
                    let m = Mismatch {
                        pointer: ptr.clone(),
                        expected: json!({"$any": true}),
                        observed: Value::Null,
                        message: format!(
                            "cannot capture ${name}: the response has nothing at {ptr:?}"
                        ),
                    };
                    let verdict = st.violation(n, m);
                    return st.done(verdict);
                }
            }
        }
    }
    st.done(Verdict::Pass)
}

enum StepError {
    Harness(String),
    NoResponse(String),
}

/// Whether a step writes (PV-TR-5 counts write attempts): the write operations, and every
/// raw request that is not a GET (counted conservatively: pacing one too many is harmless).
fn is_write(step: &Step) -> bool {
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

#[allow(clippy::too_many_arguments)] // one step's whole context, passed through unchanged
async fn observe(
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
    let mut send = async |extra: Option<(&str, &Value)>| -> Result<Observation, StepError> {
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

#[allow(clippy::too_many_arguments)] // one request's whole context, passed through unchanged
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
