//! Faults injected at the HTTP boundary (cargo feature `faults` only).
//!
//! The MCP refusal fault and the SSP provider faults change what the server puts on the
//! wire; they are injected by one middleware in front of the router instead of inside the
//! bindings and the provider, so the catalogue does not thread a fault set through code
//! whose only job is the correct behaviour. Each branch below reproduces the observable
//! behaviour of the named bug exactly (what a client sees is all a conformance suite can
//! judge). Nothing here runs unless one of [`WIRE_FAULTS`] is switched on.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use http_body_util::BodyExt;
use serde_json::{Value, json};

use super::{Fault, Faults};

/// The faults this middleware implements.
pub(super) const WIRE_FAULTS: &[Fault] = &[
    Fault::McpRefusalAsJsonRpcError,
    Fault::HttpRefusalNotJson,
    Fault::SspIndexNotJson,
    Fault::SspFailedErrorWithoutMessage,
    Fault::SspPrivateVisibleAnonymously,
    Fault::SspFilterIgnored,
    Fault::SspDescriptorVersionDrift,
    Fault::SspInvoke200,
    Fault::SspWrongSkillExecuted,
    Fault::SspStatusGoesBackwards,
    Fault::SspCompletedAtMissing,
    Fault::SspResultOutputEarly,
    Fault::SspUnstableExecutionNotFound,
    Fault::SspUnstableAuthCode,
    Fault::SspTimeoutAsFailed,
    Fault::SspContextTimeoutIgnored,
    Fault::SspExecutionReadableByOthers,
    Fault::SspPublicNeedsCredentials,
    Fault::Ssp401PermissionDenied,
    Fault::SspFailedOwnCode,
    Fault::SspMissingScopeAs401,
    Fault::SspApiKeyAnyHeader,
    Fault::SspTerminalReadableByOthers,
    Fault::SspIdReusedAfterResult,
    Fault::SspStatusChangesAfterResult,
    Fault::SspFilterLeaksPrivate,
    Fault::SspResultErrorWhileRunning,
];

/// Bodies larger than this are passed through untouched (the routes cap far lower).
const BODY_CAP: usize = 4 * 1024 * 1024;

/// The SSP api_key header of the reference descriptors.
const API_KEY_HEADER: &str = "x-api-key";

/// Credential headers an SSP request can carry.
const CREDENTIAL_HEADERS: &[&str] = &["authorization", API_KEY_HEADER, "x-signature"];

struct Wire {
    faults: Faults,
    /// A demo API key with permission (to make an anonymous discovery "authenticated").
    api_key: Option<String>,
    /// Every API key the server knows (for `ssp-api-key-any-header`).
    api_keys: Vec<String>,
    /// Credential headers of the invocation that created each execution.
    creators: Mutex<HashMap<String, Vec<(HeaderName, HeaderValue)>>>,
    /// Terminal status reads per execution (for `ssp-status-goes-backwards`).
    terminal_reads: Mutex<HashMap<String, u32>>,
    /// Executions a read has shown terminal (for `ssp-terminal-readable-by-others`).
    terminal_seen: Mutex<HashSet<String>>,
    /// Completed executions whose result was read (for `ssp-status-changes-after-result`).
    results_read: Mutex<HashSet<String>>,
    /// The id the next accepted invocation gets again (for `ssp-id-reused-after-result`).
    recycled: Mutex<Option<String>>,
    /// Executions of `conform/overrun` (for `ssp-result-error-while-running`).
    overruns: Mutex<HashSet<String>>,
}

/// Wraps `router` with the boundary faults switched on in `faults` (identity otherwise).
pub(super) fn layer(router: Router, faults: Faults, config: &crate::config::Config) -> Router {
    if !WIRE_FAULTS.iter().any(|f| faults.is_on(*f)) {
        return router;
    }
    let mut api_keys = config.ssp.api_keys_allowed.clone();
    api_keys.extend(config.ssp.api_keys_limited.iter().cloned());
    let wire = Arc::new(Wire {
        faults,
        api_key: config.ssp.api_keys_allowed.first().cloned(),
        api_keys,
        creators: Mutex::new(HashMap::new()),
        terminal_reads: Mutex::new(HashMap::new()),
        terminal_seen: Mutex::new(HashSet::new()),
        results_read: Mutex::new(HashSet::new()),
        recycled: Mutex::new(None),
        overruns: Mutex::new(HashSet::new()),
    });
    router.layer(middleware::from_fn_with_state(wire, boundary))
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A poisoned lock only means a panic elsewhere mid-update; the map stays usable.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Which route a request goes to (only the ones a boundary fault cares about).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Route {
    Mcp,
    ParleyHttp,
    Index,
    Invoke(String),
    Status(String),
    Result(String),
    Other,
}

fn route(method: &Method, path: &str) -> Route {
    let tail = |prefix: &str| {
        path.strip_prefix(prefix)
            .filter(|s| !s.is_empty() && !s.contains('/'))
    };
    match (method, path) {
        (&Method::POST, "/mcp") => Route::Mcp,
        (_, p) if p.starts_with("/v1/") => Route::ParleyHttp,
        (&Method::GET, "/.well-known/skill-sharing") => Route::Index,
        (&Method::POST, _) if tail("/ssp/invoke/").is_some() => {
            Route::Invoke(tail("/ssp/invoke/").unwrap_or_default().to_string())
        }
        (&Method::GET, _) if tail("/ssp/status/").is_some() => {
            Route::Status(tail("/ssp/status/").unwrap_or_default().to_string())
        }
        (&Method::GET, _) if tail("/ssp/result/").is_some() => {
            Route::Result(tail("/ssp/result/").unwrap_or_default().to_string())
        }
        _ => Route::Other,
    }
}

async fn collect(body: Body) -> Option<Bytes> {
    http_body_util::Limited::new(body, BODY_CAP)
        .collect()
        .await
        .ok()
        .map(|c| c.to_bytes())
}

fn too_large() -> Response {
    let body = json!({"error": {"code": "PAYLOAD_TOO_LARGE", "message": "request body too large"}});
    json_response(StatusCode::PAYLOAD_TOO_LARGE, HeaderMap::new(), &body)
}

fn json_response(status: StatusCode, mut headers: HeaderMap, body: &Value) -> Response {
    headers.remove(header::CONTENT_LENGTH);
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    let mut resp = (status, body.to_string()).into_response();
    for (name, value) in &headers {
        resp.headers_mut().insert(name.clone(), value.clone());
    }
    resp
}

fn credentials(headers: &HeaderMap) -> Vec<(HeaderName, HeaderValue)> {
    CREDENTIAL_HEADERS
        .iter()
        .filter_map(|n| {
            let name = HeaderName::from_static(n);
            headers.get(&name).map(|v| (name, v.clone()))
        })
        .collect()
}

/// The middleware: the request hook, the router, the response hook — for the routes a
/// switched-on fault concerns; any other request passes untouched.
async fn boundary(State(w): State<Arc<Wire>>, req: Request, next: Next) -> Response {
    let f = w.faults;
    let r = route(req.method(), req.uri().path());
    let concerned = match r {
        Route::Other => false,
        Route::Mcp => f.is_on(Fault::McpRefusalAsJsonRpcError),
        Route::ParleyHttp => f.is_on(Fault::HttpRefusalNotJson),
        _ => WIRE_FAULTS.iter().any(|x| {
            !matches!(
                x,
                Fault::McpRefusalAsJsonRpcError | Fault::HttpRefusalNotJson
            ) && f.is_on(*x)
        }),
    };
    if !concerned {
        return next.run(req).await;
    }
    if r == Route::ParleyHttp {
        return parley_http_response(next.run(req).await);
    }
    let (parts, body) = match request(&w, &r, req).await {
        Ok(req) => req,
        Err(refused) => return refused,
    };
    let creator = credentials(&parts.headers);
    let resp = next.run(Request::from_parts(parts, body)).await;
    response(&w, &r, creator, resp).await
}

/// `http-refusal-not-json`: the JSON error body is right; the header announcing it is not.
fn parley_http_response(mut resp: Response) -> Response {
    if resp.status().is_client_error() || resp.status().is_server_error() {
        resp.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; charset=utf-8"),
        );
    }
    resp
}

// ---- request hook ----------------------------------------------------------------------

/// The request as the faulty provider reads it, or the answer it gives without routing.
async fn request(
    w: &Wire,
    r: &Route,
    req: Request,
) -> Result<(axum::http::request::Parts, Body), Response> {
    let (mut parts, body) = req.into_parts();
    match r {
        Route::Index => index_request(w, &mut parts),
        Route::Status(id) | Route::Result(id) => poll_request(w, id, &mut parts),
        Route::Invoke(slug) => return invoke_request(w, slug, parts, body).await,
        Route::Mcp | Route::ParleyHttp | Route::Other => {}
    }
    Ok((parts, body))
}

/// `ssp-filter-ignored`, `ssp-private-visible-anonymously`, `ssp-filter-leaks-private`.
fn index_request(w: &Wire, parts: &mut axum::http::request::Parts) {
    let f = w.faults;
    if f.is_on(Fault::SspFilterIgnored) && parts.uri.query().is_some() {
        // The filter is never read: the query string might as well not exist.
        if let Ok(uri) = parts.uri.path().parse() {
            parts.uri = uri;
        }
    }
    let filtered = parts.uri.query().is_some_and(|q| {
        q.split('&')
            .any(|kv| kv.starts_with("capability_type=") || kv.starts_with("type="))
    });
    let leak = f.is_on(Fault::SspPrivateVisibleAnonymously)
        || (f.is_on(Fault::SspFilterLeaksPrivate) && filtered);
    if leak
        && credentials(&parts.headers).is_empty()
        && let Some(key) = w
            .api_key
            .as_deref()
            .and_then(|k| HeaderValue::from_str(k).ok())
    {
        // Visibility decided as if every caller were authenticated.
        parts
            .headers
            .insert(HeaderName::from_static(API_KEY_HEADER), key);
    }
}

/// `ssp-execution-readable-by-others`, `ssp-terminal-readable-by-others`.
fn poll_request(w: &Wire, id: &str, parts: &mut axum::http::request::Parts) {
    let swap = w.faults.is_on(Fault::SspExecutionReadableByOthers)
        || (w.faults.is_on(Fault::SspTerminalReadableByOthers)
            && !credentials(&parts.headers).is_empty()
            && lock(&w.terminal_seen).contains(id));
    if swap && let Some(creator) = lock(&w.creators).get(id).cloned() {
        // Access decided on "some valid credential", not on the creating one.
        for n in CREDENTIAL_HEADERS {
            parts.headers.remove(*n);
        }
        for (n, v) in creator {
            parts.headers.insert(n, v);
        }
    }
}

/// `ssp-public-needs-credentials`, `ssp-api-key-any-header`, `ssp-wrong-skill-executed`,
/// `ssp-context-timeout-ignored`.
async fn invoke_request(
    w: &Wire,
    slug: &str,
    mut parts: axum::http::request::Parts,
    body: Body,
) -> Result<(axum::http::request::Parts, Body), Response> {
    let f = w.faults;
    if f.is_on(Fault::SspPublicNeedsCredentials) && credentials(&parts.headers).is_empty() {
        let err = json!({"error": {
            "code": "AUTH_REQUIRED",
            "message": "Authentication is required to invoke this skill",
            "details": {"required_auth_type": "api_key", "header": "X-API-Key"},
            "retry": {"suggested_delay_ms": 0, "max_attempts": 1}
        }});
        let mut h = HeaderMap::new();
        h.insert(
            header::WWW_AUTHENTICATE,
            HeaderValue::from_static("ApiKey realm=\"ssp\", header=\"X-API-Key\""),
        );
        return Err(json_response(StatusCode::UNAUTHORIZED, h, &err));
    }
    if f.is_on(Fault::SspApiKeyAnyHeader) && !parts.headers.contains_key(API_KEY_HEADER) {
        let found = parts.headers.iter().find_map(|(_, v)| {
            v.to_str()
                .ok()
                .filter(|s| w.api_keys.iter().any(|k| k == s))
                .map(|_| v.clone())
        });
        if let Some(v) = found {
            parts
                .headers
                .insert(HeaderName::from_static(API_KEY_HEADER), v);
        }
    }
    if !(f.is_on(Fault::SspWrongSkillExecuted) || f.is_on(Fault::SspContextTimeoutIgnored)) {
        return Ok((parts, body));
    }
    let Some(bytes) = collect(body).await else {
        return Err(too_large());
    };
    let mut rewritten = None;
    if let Ok(mut v) = serde_json::from_slice::<Value>(&bytes) {
        let own = format!("conform/{slug}");
        if f.is_on(Fault::SspWrongSkillExecuted)
            && v.get("skill_id")
                .is_some_and(|s| s.is_string() && s.as_str() != Some(own.as_str()))
        {
            // The endpoint runs its own skill whatever skill_id says.
            v["skill_id"] = Value::from(own);
            rewritten = Some(v.clone());
        }
        if f.is_on(Fault::SspContextTimeoutIgnored)
            && let Some(ctx) = v.get_mut("context").and_then(Value::as_object_mut)
            && ctx.remove("timeout_ms").is_some()
        {
            rewritten = Some(v);
        }
    }
    let body = match rewritten {
        Some(v) => {
            parts.headers.remove(header::CONTENT_LENGTH);
            Body::from(v.to_string())
        }
        None => Body::from(bytes),
    };
    Ok((parts, body))
}

// ---- response hook ---------------------------------------------------------------------

/// The response as the faulty server sends it. `creator`: the credential headers of the
/// request (remembered for the executions it creates).
async fn response(
    w: &Wire,
    r: &Route,
    creator: Vec<(HeaderName, HeaderValue)>,
    resp: Response,
) -> Response {
    let f = w.faults;
    let (rparts, rbody) = resp.into_parts();
    let Some(bytes) = collect(rbody).await else {
        return json_response(
            StatusCode::INTERNAL_SERVER_ERROR,
            HeaderMap::new(),
            &json!({"error": {"code": "INTERNAL_ERROR", "message": "response too large"}}),
        );
    };
    let Ok(mut v) = serde_json::from_slice::<Value>(&bytes) else {
        return Response::from_parts(rparts, Body::from(bytes));
    };
    let mut status = rparts.status;
    match r {
        Route::Mcp => mcp_response(f, &mut v),
        Route::Index => index_response(f, &mut v),
        Route::Invoke(slug) => {
            if status == StatusCode::ACCEPTED {
                if let Some(id) = v.get("execution_id").and_then(Value::as_str) {
                    lock(&w.creators).insert(id.to_string(), creator);
                    if f.is_on(Fault::SspResultErrorWhileRunning) && slug == "overrun" {
                        lock(&w.overruns).insert(id.to_string());
                    }
                }
                if f.is_on(Fault::SspIdReusedAfterResult)
                    && let Some(old) = lock(&w.recycled).take()
                {
                    // The id of a finished execution is handed out again.
                    v["execution_id"] = Value::from(old);
                }
                if f.is_on(Fault::SspInvoke200) {
                    status = StatusCode::OK;
                }
            }
        }
        Route::Status(id) | Route::Result(id) => {
            poll_response(w, r, id, status, &mut v);
            if f.is_on(Fault::SspResultErrorWhileRunning)
                && matches!(r, Route::Result(_))
                && status == StatusCode::ACCEPTED
                && lock(&w.overruns).contains(id.as_str())
            {
                // The failure it expects, announced before the execution has ended.
                status = StatusCode::INTERNAL_SERVER_ERROR;
                v = json!({"error": {
                    "code": "ENDPOINT_UNREACHABLE",
                    "message": "the execution is failing",
                    "details": {"execution_id": id}
                }});
            }
        }
        Route::ParleyHttp | Route::Other => {}
    }
    if matches!(
        r,
        Route::Index | Route::Invoke(_) | Route::Status(_) | Route::Result(_)
    ) {
        ssp_error_response(f, &mut status, &mut v);
    }
    let mut resp = json_response(status, rparts.headers, &v);
    if *r == Route::Index && f.is_on(Fault::SspIndexNotJson) {
        resp.headers_mut()
            .insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain"));
    }
    resp
}

/// `mcp-refusal-as-jsonrpc-error`: the refusal becomes a JSON-RPC error (PV-TR-2 reserves
/// those for protocol faults).
fn mcp_response(f: Faults, v: &mut Value) {
    if f.is_on(Fault::McpRefusalAsJsonRpcError)
        && v.pointer("/result/isError").and_then(Value::as_bool) == Some(true)
    {
        let error = v
            .pointer("/result/structuredContent/error")
            .cloned()
            .unwrap_or(Value::Null);
        *v = json!({
            "jsonrpc": "2.0",
            "id": v.get("id").cloned().unwrap_or(Value::Null),
            "error": {
                "code": -32000,
                "message": error.get("message").and_then(Value::as_str).unwrap_or("refused"),
                "data": error,
            }
        });
    }
}

/// `ssp-descriptor-version-drift`.
fn index_response(f: Faults, v: &mut Value) {
    if f.is_on(Fault::SspDescriptorVersionDrift)
        && let Some(entries) = v.get_mut("skills").and_then(Value::as_array_mut)
    {
        for e in entries {
            if let Some(ver) = e.get("version").and_then(Value::as_str) {
                e["version"] = Value::from(next_minor(ver));
            }
        }
    }
}

/// `ssp-timeout-as-failed`, `ssp-failed-error-without-message`, `ssp-failed-own-code`,
/// `ssp-completed-at-missing`,
/// `ssp-result-output-early`, `ssp-status-goes-backwards`, `ssp-unstable-execution-not-found`
/// and the sequence faults of [`sequence_faults`].
fn poll_response(w: &Wire, r: &Route, id: &str, status: StatusCode, v: &mut Value) {
    let f = w.faults;
    let terminal = matches!(
        v.get("status").and_then(Value::as_str),
        Some("completed" | "failed" | "timeout")
    );
    if f.is_on(Fault::SspTimeoutAsFailed)
        && v.get("status").and_then(Value::as_str) == Some("timeout")
    {
        v["status"] = Value::from("failed");
    }
    if f.is_on(Fault::SspFailedErrorWithoutMessage)
        && v.get("status").and_then(Value::as_str) == Some("failed")
        && let Some(e) = v.get_mut("error").and_then(Value::as_object_mut)
    {
        e.remove("message");
    }
    if f.is_on(Fault::SspFailedOwnCode)
        && v.get("status").and_then(Value::as_str) == Some("failed")
        && let Some(code) = v.pointer_mut("/error/code")
    {
        *code = Value::from("SKILL_FAILED");
    }
    if f.is_on(Fault::SspCompletedAtMissing)
        && let Some(ts) = v.get_mut("timestamps").and_then(Value::as_object_mut)
    {
        ts.remove("completed_at");
    }
    if f.is_on(Fault::SspResultOutputEarly)
        && matches!(r, Route::Result(_))
        && status == StatusCode::ACCEPTED
        && let Some(o) = v.as_object_mut()
    {
        o.entry("output").or_insert(Value::Null);
    }
    if f.is_on(Fault::SspStatusGoesBackwards) && terminal && matches!(r, Route::Status(_)) {
        let reads = {
            let mut m = lock(&w.terminal_reads);
            let n = m.entry(id.to_string()).or_insert(0);
            *n += 1;
            *n
        };
        if reads % 2 == 0
            && let Some(o) = v.as_object_mut()
        {
            // A stale replica answers every other read.
            o.insert("status".into(), Value::from("running"));
            o.remove("output");
            o.remove("error");
            if let Some(ts) = o.get_mut("timestamps").and_then(Value::as_object_mut) {
                ts.remove("completed_at");
            }
        }
    }
    sequence_faults(w, r, id, status, v);
    if f.is_on(Fault::SspUnstableExecutionNotFound)
        && status == StatusCode::NOT_FOUND
        && v.pointer("/error/code").and_then(Value::as_str) == Some("SKILL_NOT_FOUND")
    {
        v["error"]["code"] = Value::from("EXECUTION_NOT_FOUND");
    }
}

/// `ssp-terminal-readable-by-others`, `ssp-id-reused-after-result`,
/// `ssp-status-changes-after-result`: what a poll answer remembers for later requests.
fn sequence_faults(w: &Wire, r: &Route, id: &str, status: StatusCode, v: &mut Value) {
    let f = w.faults;
    let state = v.get("status").and_then(Value::as_str).map(str::to_string);
    if f.is_on(Fault::SspTerminalReadableByOthers)
        && matches!(state.as_deref(), Some("completed" | "failed" | "timeout"))
    {
        lock(&w.terminal_seen).insert(id.to_string());
    }
    let result_read = matches!(r, Route::Result(_))
        && status == StatusCode::OK
        && state.as_deref() == Some("completed");
    if f.is_on(Fault::SspIdReusedAfterResult) && result_read {
        *lock(&w.recycled) = Some(id.to_string());
    }
    if f.is_on(Fault::SspStatusChangesAfterResult) {
        if result_read {
            lock(&w.results_read).insert(id.to_string());
        } else if matches!(r, Route::Status(_))
            && state.as_deref() == Some("completed")
            && lock(&w.results_read).contains(id)
            && let Some(o) = v.as_object_mut()
        {
            // The result read "consumed" the execution: it now reports a failure.
            o.insert("status".into(), Value::from("failed"));
            o.remove("output");
            o.insert(
                "error".into(),
                json!({"code": "RESULT_CONSUMED", "message": "the result was already collected"}),
            );
        }
    }
}

/// The SSP error faults: `ssp-missing-scope-as-401`, `ssp-unstable-auth-code`,
/// `ssp-401-permission-denied`.
fn ssp_error_response(f: Faults, status: &mut StatusCode, v: &mut Value) {
    if f.is_on(Fault::SspMissingScopeAs401)
        && *status == StatusCode::FORBIDDEN
        && v.pointer("/error/code").and_then(Value::as_str) == Some("PERMISSION_DENIED")
    {
        *status = StatusCode::UNAUTHORIZED;
        v["error"]["code"] = Value::from("AUTH_REQUIRED");
    }
    if f.is_on(Fault::SspUnstableAuthCode)
        && *status == StatusCode::UNAUTHORIZED
        && v.pointer("/error/code").and_then(Value::as_str) == Some("AUTH_REQUIRED")
    {
        v["error"]["code"] = Value::from("UNAUTHENTICATED");
    }
    if f.is_on(Fault::Ssp401PermissionDenied)
        && *status == StatusCode::UNAUTHORIZED
        && v.pointer("/error/code").and_then(Value::as_str) == Some("AUTH_REQUIRED")
    {
        v["error"]["code"] = Value::from("PERMISSION_DENIED");
    }
}

/// `1.2.3` → `1.3.0` (any other text gets `-drift`).
fn next_minor(v: &str) -> String {
    let parts: Vec<&str> = v.split('.').collect();
    match parts.as_slice() {
        [major, minor, _] => match minor.parse::<u64>() {
            Ok(m) => format!("{major}.{}.0", m + 1),
            Err(_) => format!("{v}-drift"),
        },
        _ => format!("{v}-drift"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_and_versions() {
        assert_eq!(route(&Method::POST, "/mcp"), Route::Mcp);
        assert_eq!(
            route(&Method::POST, "/ssp/invoke/echo"),
            Route::Invoke("echo".into())
        );
        assert_eq!(
            route(&Method::GET, "/ssp/status/exec-1"),
            Route::Status("exec-1".into())
        );
        assert_eq!(
            route(&Method::GET, "/ssp/result/exec-1"),
            Route::Result("exec-1".into())
        );
        assert_eq!(route(&Method::GET, "/ssp/status/"), Route::Other);
        assert_eq!(route(&Method::GET, "/v1/manifest"), Route::ParleyHttp);
        assert_eq!(route(&Method::GET, "/.well-known/other"), Route::Other);
        assert_eq!(next_minor("1.0.0"), "1.1.0");
        assert_eq!(next_minor("2.3"), "2.3-drift");
    }
}
