//! The whole server in process: requests over both Parley bindings (the binding tests).
//!
//! `App` drives [`reference_impl::app`] with `tower::ServiceExt::oneshot` (no socket);
//! `Era` picks the MCP revision a call is made in.

use axum::Router;
use axum::body::Body;
use axum::http::{HeaderMap, Request, header};
use serde_json::{Value, json};

/// A response as the tests look at it.
#[derive(Debug, Clone)]
pub(crate) struct Reply {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: Value,
    pub raw: Vec<u8>,
}

impl Reply {
    /// The refusal reason of an HTTP refusal body.
    pub(crate) fn reason(&self) -> Option<&str> {
        self.body["error"]["reason"].as_str()
    }
}

/// The MCP revisions served on `/mcp`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Era {
    /// 2025-11-25: `initialize` handshake era (served statelessly).
    Legacy,
    /// 2026-07-28: no handshake, per-request `_meta`, standard headers.
    Current,
}

impl Era {
    pub(crate) const ALL: [Self; 2] = [Self::Legacy, Self::Current];

    pub(crate) fn version(self) -> &'static str {
        match self {
            Self::Legacy => "2025-11-25",
            Self::Current => "2026-07-28",
        }
    }
}

/// The outcome of a tool call, normalised for comparison with HTTP.
#[derive(Debug, Clone)]
pub(crate) struct ToolOutcome {
    pub is_error: bool,
    pub structured: Value,
    pub text: String,
    pub http_status: u16,
}

#[derive(Clone)]
pub(crate) struct App {
    pub router: Router,
}

impl App {
    /// A fresh demo server over a private in-memory database.
    pub(crate) fn demo() -> Self {
        let router = reference_impl::app(reference_impl::Config::demo_in_memory()).expect("app");
        Self { router }
    }

    pub(crate) async fn send(&self, req: Request<Body>) -> Reply {
        let (status, headers, raw) = super::oneshot(&self.router, req).await;
        let raw = raw.to_vec();
        let body = serde_json::from_slice(&raw).unwrap_or(Value::Null);
        Reply {
            status,
            headers,
            body,
            raw,
        }
    }

    /// An HTTP binding request; `body` is sent as `application/json` when given.
    pub(crate) async fn http(
        &self,
        method: &str,
        path: &str,
        token: Option<&str>,
        body: Option<Value>,
    ) -> Reply {
        let mut req = Request::builder().method(method).uri(path);
        if let Some(t) = token {
            req = req.header(header::AUTHORIZATION, format!("Bearer {t}"));
        }
        let req = match body {
            Some(b) => req
                .header(header::CONTENT_TYPE, "application/json")
                .body(Body::from(b.to_string())),
            None => req.body(Body::empty()),
        };
        self.send(req.expect("request")).await
    }

    /// A raw POST to `/mcp` (headers of a well-behaved client for `era`).
    pub(crate) async fn mcp_raw(&self, era: Era, extra: &[(&str, &str)], body: Vec<u8>) -> Reply {
        let req = Request::builder()
            .method("POST")
            .uri("/mcp")
            .header(header::HOST, "127.0.0.1")
            .header(header::CONTENT_TYPE, "application/json")
            .header(header::ACCEPT, "application/json, text/event-stream")
            .header("MCP-Protocol-Version", era.version());
        let mut req = req.body(Body::from(body)).expect("request");
        for (k, v) in extra {
            // Replace, not append: a test overriding `Host` must not leave the default one.
            req.headers_mut().insert(
                axum::http::HeaderName::from_bytes(k.as_bytes()).expect("header name"),
                axum::http::HeaderValue::from_str(v).expect("header value"),
            );
        }
        self.send(req).await
    }

    /// A JSON-RPC request in `era` (adds `_meta` and the standard headers for 2026-07-28).
    pub(crate) async fn mcp(
        &self,
        era: Era,
        token: Option<&str>,
        id: u64,
        method: &str,
        params: Value,
    ) -> Reply {
        let mut params = params;
        let mut headers: Vec<(String, String)> = Vec::new();
        if era == Era::Current {
            params["_meta"] = json!({
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": "conform-tests", "version": "0"}
            });
            headers.push(("Mcp-Method".into(), method.into()));
            if let Some(name) = params.get("name").and_then(Value::as_str) {
                headers.push(("Mcp-Name".into(), name.into()));
            }
        }
        if let Some(t) = token {
            headers.push(("Authorization".into(), format!("Bearer {t}")));
        }
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let extra: Vec<(&str, &str)> = headers
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        self.mcp_raw(era, &extra, body.to_string().into_bytes())
            .await
    }

    /// `tools/call` in `era`; panics on a JSON-RPC error (tests use [`App::mcp`] for those).
    pub(crate) async fn tool(
        &self,
        era: Era,
        token: Option<&str>,
        name: &str,
        args: Value,
    ) -> ToolOutcome {
        let reply = self
            .mcp(
                era,
                token,
                7,
                "tools/call",
                json!({"name": name, "arguments": args}),
            )
            .await;
        let result = &reply.body["result"];
        assert!(
            result.is_object(),
            "tools/call {name} in {era:?}: no result: {}",
            reply.body
        );
        let text = result["content"][0]["text"]
            .as_str()
            .expect("content[0].text")
            .to_owned();
        ToolOutcome {
            is_error: result["isError"].as_bool().unwrap_or(false),
            structured: result["structuredContent"].clone(),
            text,
            http_status: reply.status,
        }
    }
}

/// Replaces values that legitimately differ between two servers (ids are equal when both
/// servers replay the same script, but timestamps are not) with placeholders.
pub(crate) fn redact(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| {
                    let is_time = k.ends_with("_at") || k == "at" || k == "cursor";
                    let v = if is_time && v.is_string() {
                        Value::from("<time>")
                    } else {
                        redact(v)
                    };
                    (k.clone(), v)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(redact).collect()),
        Value::String(s) if s.len() >= 20 && s.chars().nth(4) == Some('-') && s.contains('T') => {
            Value::from("<time>")
        }
        other => other.clone(),
    }
}
