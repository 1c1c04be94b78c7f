//! Parley targets: the envelope validator, the HTTP binding and the MCP front layer.

use arbitrary::{Arbitrary, Unstructured};
use axum::body::Body;
use axum::http::Request;
use reference_impl::domain::parley::envelope::parse_envelope;
use reference_impl::domain::parley::limits::REFERENCE;
use reference_impl::ssp::api::is_ssp_path;
use serde_json::Value;

use crate::app::{Reply, send};

/// `parse_envelope` on any JSON the bytes hold, with and without the dialectic profile:
/// a refusal or an envelope, never a panic.
pub fn envelope(data: &[u8]) {
    let Ok(v) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let now = chrono::DateTime::UNIX_EPOCH;
    for dialectic in [false, true] {
        let _ = parse_envelope(&v, &REFERENCE, dialectic, now);
    }
}

/// The nine routes' templates, and paths no route has.
const PATHS: [&str; 11] = [
    "/v1/manifest",
    "/v1/whoami",
    "/v1/messages",
    "/v1/threads/{id}",
    "/v1/threads/{id}/events",
    "/v1/inbox",
    "/v1/threads/{id}/state",
    "/v1/threads/{id}/reopen",
    "/v1/claims/{id}",
    "/v1/{id}",
    "/{id}",
];
const METHODS: [&str; 6] = ["GET", "POST", "PUT", "DELETE", "HEAD", "PATCH"];
const TOKENS: [&str; 4] = ["demo-agent-a", "demo-moderator", "demo-reader", "nope"];

/// One HTTP request drawn by the fuzzer.
#[derive(Debug, Arbitrary)]
pub struct HttpInput {
    method: u8,
    path: u8,
    id: String,
    query: Option<String>,
    token: Option<u8>,
    content_type: Option<String>,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl HttpInput {
    fn request(&self) -> Option<Request<Body>> {
        let path = PATHS[usize::from(self.path) % PATHS.len()].replace("{id}", &self.id);
        let uri = match &self.query {
            Some(q) => format!("{path}?{q}"),
            None => path,
        };
        let mut b = Request::builder()
            .method(METHODS[usize::from(self.method) % METHODS.len()])
            .uri(uri);
        if let Some(t) = self.token {
            b = b.header(
                "authorization",
                format!("Bearer {}", TOKENS[usize::from(t) % 4]),
            );
        }
        if let Some(ct) = &self.content_type {
            b = b.header("content-type", ct.as_str());
        }
        for (k, v) in self.headers.iter().take(8) {
            b = b.header(k.as_str(), v.as_str());
        }
        b.body(Body::from(self.body.clone())).ok()
    }
}

/// The refusal shape of the path's protocol: on Parley's paths PV-TR-3's
/// `{"error": {"reason", "status", "message"}}`, its status equal to the HTTP status; on the
/// SSP provider's paths (`/ssp…`, `/.well-known/…`, which a drawn id can reach) SSP-ERR-1's
/// unified `{"error": {"code", "message"}}` — the reference's own routing decides which
/// (`is_ssp_path`). Either labelled `application/json`.
fn assert_refusal_shape(r: &Reply, what: &str, path: &str) {
    assert!(r.status < 500, "{what}: HTTP {}", r.status);
    if r.status < 400 {
        return;
    }
    let ct = r.content_type.as_deref().unwrap_or("");
    assert!(
        ct.starts_with("application/json"),
        "{what}: refusal labelled {ct:?}"
    );
    let v: Value = match serde_json::from_slice(&r.body) {
        Ok(v) => v,
        Err(e) => panic!("{what}: refusal body is not JSON ({e})"),
    };
    if is_ssp_path(path) {
        assert!(v["error"]["code"].is_string(), "{what}: no SSP code in {v}");
        assert!(
            v["error"]["message"].is_string(),
            "{what}: no message in {v}"
        );
        return;
    }
    assert!(v["error"]["reason"].is_string(), "{what}: no reason in {v}");
    assert_eq!(v["error"]["status"], r.status, "{what}: status in {v}");
}

/// Any method, path, query, headers and body through the HTTP binding of `app()`: never a
/// 5xx, every refusal in the refusal shape.
pub fn http(data: &[u8]) {
    let Ok(input) = HttpInput::arbitrary(&mut Unstructured::new(data)) else {
        return;
    };
    let Some(req) = input.request() else {
        return;
    };
    let what = format!("{} {}", req.method(), req.uri());
    let path = req.uri().path().to_string();
    let head = req.method() == axum::http::Method::HEAD;
    let r = send(req);
    if head {
        // No body by definition: only the status is judged.
        assert!(r.status < 500, "{what}: HTTP {}", r.status);
    } else {
        assert_refusal_shape(&r, &what, &path);
    }
}

/// Any bytes as a JSON-RPC body on `/mcp` (the first byte picks the MCP revision): never a
/// 5xx, and every answer with a body is a JSON-RPC message.
pub fn mcp(data: &[u8]) {
    let Some((era, body)) = data.split_first() else {
        return;
    };
    let version = if era % 2 == 0 {
        "2025-11-25"
    } else {
        "2026-07-28"
    };
    let req = Request::builder()
        .method("POST")
        .uri("/mcp")
        .header("host", "127.0.0.1")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", version)
        .header("authorization", "Bearer demo-agent-a")
        .body(Body::from(body.to_vec()));
    let Ok(req) = req else {
        return;
    };
    let r = send(req);
    assert!(r.status < 500, "MCP: HTTP {}", r.status);
    if r.body.is_empty() {
        return;
    }
    let v: Value = match serde_json::from_slice(&r.body) {
        Ok(v) => v,
        Err(e) => panic!(
            "MCP answer is not JSON ({e}): {}",
            String::from_utf8_lossy(&r.body)
        ),
    };
    assert_eq!(v["jsonrpc"], "2.0", "MCP answer is not JSON-RPC: {v}");
}
