//! The MCP transport against small fakes: the 2025-11-25 handshake keeps the session id it is
//! given and answers over SSE; the 2026-07-28 era sends no handshake and carries the version
//! in headers and `_meta` on every request (what rmcp 3.11 requires).
#![expect(clippy::unwrap_used)] // tests: a panic is the failure report

mod support;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use conform::parley::vectors::model::RawMcp;
use conform::transport::mcp::McpTransport;
use conform::transport::{Auth, McpRevision, Transport};
use serde_json::{Value, json};

#[derive(Default)]
struct Seen {
    requests: Vec<(HeaderMap, Value)>,
}

type Shared = Arc<Mutex<Seen>>;

fn sse(v: &Value) -> Response {
    let body = format!("event: message\ndata: {v}\n\n");
    ([("content-type", "text/event-stream")], body).into_response()
}

async fn legacy(State(seen): State<Shared>, headers: HeaderMap, body: Bytes) -> Response {
    let msg: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    seen.lock()
        .unwrap()
        .requests
        .push((headers.clone(), msg.clone()));
    let method = msg["method"].as_str().unwrap_or_default();
    if method == "initialize" {
        let mut r = sse(
            &json!({"jsonrpc": "2.0", "id": msg["id"], "result": {"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "fake", "version": "0"}}}),
        );
        r.headers_mut()
            .insert("mcp-session-id", "sess-42".parse().unwrap());
        return r;
    }
    if headers.get("mcp-session-id").and_then(|v| v.to_str().ok()) != Some("sess-42") {
        return (StatusCode::NOT_FOUND, "no session").into_response();
    }
    if method == "notifications/initialized" {
        return StatusCode::ACCEPTED.into_response();
    }
    let sc = json!({"echo": msg["params"]["arguments"], "tool": msg["params"]["name"]});
    sse(
        &json!({"jsonrpc": "2.0", "id": msg["id"], "result": {"structuredContent": sc, "content": [{"type": "text", "text": sc.to_string()}]}}),
    )
}

async fn stateless(State(seen): State<Shared>, headers: HeaderMap, body: Bytes) -> Response {
    let msg: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    seen.lock().unwrap().requests.push((headers, msg.clone()));
    let sc = json!({"ok": true});
    axum::Json(json!({"jsonrpc": "2.0", "id": msg["id"], "result": {"structuredContent": sc, "content": [{"type": "text", "text": sc.to_string()}]}})).into_response()
}

/// Serves the fake and returns its MCP endpoint.
async fn serve(app: Router) -> String {
    format!("{}/mcp", support::http::serve(app).await)
}

fn transport(url: &str, rev: McpRevision) -> McpTransport {
    let client = conform::transport::client(std::time::Duration::from_secs(5)).unwrap();
    McpTransport::new(client, url, rev, HashMap::new(), Auth::None)
}

#[tokio::test]
async fn legacy_era_handshakes_once_and_keeps_the_session() {
    let seen: Shared = Arc::default();
    let url = serve(
        Router::new()
            .route("/mcp", post(legacy))
            .with_state(seen.clone()),
    )
    .await;
    let t = transport(&url, McpRevision::V2025_11_25);
    let auth = Auth::Bearer {
        token: "tok".into(),
        env: Some("CONFORM_TOKEN_AGENT_A".into()),
    };
    for i in 0..3 {
        let r = t.call("post", &json!({"body": i}), &auth).await.unwrap();
        assert_eq!(
            r.json.unwrap()["result"]["structuredContent"]["echo"]["body"],
            i
        );
        assert_eq!(r.exchanges.len(), 1);
        let shown = &r.exchanges[0].request_headers;
        assert!(
            shown
                .iter()
                .any(|(k, v)| k == "authorization" && v == "Bearer ${CONFORM_TOKEN_AGENT_A}"),
            "token masked in transcripts"
        );
    }
    let seen = seen.lock().unwrap();
    let methods: Vec<&str> = seen
        .requests
        .iter()
        .map(|(_, m)| m["method"].as_str().unwrap())
        .collect();
    assert_eq!(
        methods,
        [
            "initialize",
            "notifications/initialized",
            "tools/call",
            "tools/call",
            "tools/call"
        ]
    );
    let (h, m) = &seen.requests[2];
    assert_eq!(h["mcp-protocol-version"], "2025-11-25");
    assert_eq!(h["authorization"], "Bearer tok");
    assert!(m["params"].get("_meta").is_none());
}

#[tokio::test]
async fn stateless_era_sends_version_headers_and_meta_on_every_request() {
    let seen: Shared = Arc::default();
    let url = serve(
        Router::new()
            .route("/mcp", post(stateless))
            .with_state(seen.clone()),
    )
    .await;
    let t = transport(&url, McpRevision::V2026_07_28);
    let r = t.call("whoami", &json!({}), &Auth::None).await.unwrap();
    assert_eq!(r.json.unwrap()["result"]["structuredContent"]["ok"], true);
    let raw = RawMcp {
        body: None,
        body_json: Some(json!({"jsonrpc": "2.0", "id": 9, "method": "tools/list"})),
        headers: Default::default(),
    };
    t.raw_mcp(&raw, &Auth::None).await.unwrap();
    let raw_text = RawMcp {
        body: Some("{not json".into()),
        body_json: None,
        headers: Default::default(),
    };
    t.raw_mcp(&raw_text, &Auth::None).await.unwrap();
    let seen = seen.lock().unwrap();
    assert_eq!(seen.requests.len(), 3, "no handshake in the stateless era");
    let (h, m) = &seen.requests[0];
    assert_eq!(h["mcp-protocol-version"], "2026-07-28");
    assert_eq!(h["mcp-method"], "tools/call");
    assert_eq!(h["mcp-name"], "whoami");
    assert_eq!(
        m["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
    );
    assert!(m["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"].is_object());
    let (h, m) = &seen.requests[1];
    assert_eq!(h["mcp-method"], "tools/list");
    assert_eq!(
        m["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"], "2026-07-28",
        "raw JSON requests get the era's _meta"
    );
    assert_eq!(
        seen.requests[2].1,
        Value::Null,
        "a raw text body is sent verbatim"
    );
}
