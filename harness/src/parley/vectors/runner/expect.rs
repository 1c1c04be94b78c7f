//! Judging an observation against a step's expectation: the matcher and its placeholders,
//! the well-formedness of what came back, and normalisation for the PV-TR-1 comparison of
//! the two bindings (captures are taken in `runner.rs`, `run_step`).

// `Mismatch` is only built on the (cold) failure path; see the parent module.
#![expect(clippy::result_large_err)]

use std::collections::{BTreeSet, HashMap};
use std::sync::LazyLock;

use regex::Regex;

use serde_json::{Value, json};

use super::observation::{Observation, truncate};

use crate::json::matcher::{Mismatch, match_value};
use crate::json::placeholders::Env;
use crate::json::pointer_token;
use crate::parley::fuzz::oracles;
use crate::parley::vectors::model::{Expect, ExpectJsonRpc, ExpectRefusal, ExpectSuccess};
use crate::transport::TransportKind;

/// Why evaluating an expectation did not pass.
pub(super) enum EvalError {
    Mismatch(Mismatch),
    Harness(String),
}

impl From<Mismatch> for EvalError {
    fn from(m: Mismatch) -> Self {
        Self::Mismatch(m)
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
pub(super) fn evaluate(
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
        Expect::OneOf(o) => one_of(&o.one_of, obs, env, reasons),
        Expect::Success(s) => success(s, obs, env),
        Expect::Refusal(r) => refusal(r, obs),
        Expect::WellFormed(w) => well_formed(w.well_formed, obs, reasons),
        Expect::JsonRpcError(j) => jsonrpc_error(j, obs),
    }
}

/// `one_of`: the first alternative that matches passes; otherwise the first alternative's
/// mismatch is named.
fn one_of(
    alternatives: &[Expect],
    obs: &Observation,
    env: &Env,
    reasons: &BTreeSet<String>,
) -> Result<(), EvalError> {
    let mut first = None;
    for alt in alternatives {
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
        serde_json::to_value(alternatives).unwrap_or(Value::Null),
        obs.summary(),
        format!("the response matches none of the alternatives{detail}"),
    ))
}

/// A success: the status (HTTP, raw MCP) or a tool result without `isError` and with
/// `structuredContent` (PV-RS-2), then the body matcher.
fn success(s: &ExpectSuccess, obs: &Observation, env: &Env) -> Result<(), EvalError> {
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

/// A refusal in the PV-TR-3 shape: on HTTP the status, JSON body and media type; on MCP a
/// tool result with `isError: true` carrying the same body (PV-TR-2).
fn refusal(r: &ExpectRefusal, obs: &Observation) -> Result<(), EvalError> {
    let want = json!({"error": {"reason": r.refusal.reason, "status": r.refusal.status, "message": {"$type": "string"}}});
    match obs.kind {
        TransportKind::Http => refusal_http(r, obs, &want),
        TransportKind::Mcp => refusal_mcp(r, obs, &want),
    }
}

fn refusal_http(r: &ExpectRefusal, obs: &Observation, want: &Value) -> Result<(), EvalError> {
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
            want.clone(),
            json!(truncate(&obs.text, 2000)),
            "refusal body is not JSON (PV-TR-3)",
        ));
    };
    match_value(want, Some(body), "")?;
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

fn refusal_mcp(r: &ExpectRefusal, obs: &Observation, want: &Value) -> Result<(), EvalError> {
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
    match_value(want, sc, "/structuredContent")?;
    if let Some(m) = &obs.mirror {
        return Err(EvalError::Mismatch(m.clone()));
    }
    Ok(())
}

/// A JSON-RPC error with the code (and, when given, the HTTP status class): MCP only.
fn jsonrpc_error(j: &ExpectJsonRpc, obs: &Observation) -> Result<(), EvalError> {
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
    let (_, breaches) = oracles::judge(obs.kind, &reply, reasons, None);
    match breaches.first() {
        None => Ok(()),
        Some(b) => Err(mismatch(
            "",
            json!({"well_formed": true}),
            obs.summary(),
            // A breach's `expected` is its oracle's title (`Oracle::breach`).
            format!(
                "{} ({})",
                b.message,
                b.expected.as_str().unwrap_or_default()
            ),
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
