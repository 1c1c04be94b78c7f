//! JSON-RPC over Streamable HTTP as the MCP-layer checks need it: requests framed for either
//! era (2025-11-25 handshake and headers, 2026-07-28 per-request `_meta` and standard
//! headers), any header overridden or removed, any body, every exchange recorded.
//!
//! The Parley binding ([`crate::transport::mcp`]) only ever sends well-formed tool calls;
//! these checks must also send what a correct client never would, so they frame requests
//! themselves and keep the exact bytes for the transcript.

use serde_json::{Value, json};

use crate::engine::finding::{Finding, Step};
use crate::transport::mcp::{
    META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_PROTOCOL_VERSION, parse_rpc_body,
};
use crate::transport::{Client, Exchange, Prepared, TransportKind, send_recorded};

/// The handshake era's revision, the one the checks request first.
pub const LEGACY: &str = "2025-11-25";
/// The stateless era's revision.
pub const MODERN: &str = "2026-07-28";
/// Environment variable standing for the `[mcp] token` in transcripts.
pub const TOKEN_ENV: &str = "CONFORM_MCP_TOKEN";

/// One answer: status, lowercase headers, body text and the JSON-RPC message in it.
#[derive(Debug, Clone)]
pub struct Answer {
    /// HTTP status.
    pub status: u16,
    /// Lowercase headers.
    pub headers: Vec<(String, String)>,
    /// Body text.
    pub text: String,
    /// The JSON-RPC message (JSON body, or the response inside SSE `data:` lines).
    pub message: Option<Value>,
}

impl Answer {
    /// First header with this lowercase name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
    /// The JSON-RPC `result`, when the message has one.
    pub fn result(&self) -> Option<&Value> {
        self.message.as_ref().and_then(|m| m.get("result"))
    }
    /// The JSON-RPC `error.code`, when the message is an error.
    pub fn error_code(&self) -> Option<i64> {
        self.message
            .as_ref()
            .and_then(|m| m.get("error"))
            .and_then(|e| e.get("code"))
            .and_then(Value::as_i64)
    }
    /// What was observed, for a finding: status, error code, whether a result came back.
    pub fn observed(&self) -> Value {
        json!({
            "http_status": self.status,
            "jsonrpc_error": self.message.as_ref().and_then(|m| m.get("error")),
            "result": self.result().is_some(),
        })
    }
}

/// A 2025-11-25 session: the version the server answered and the session id it issued.
#[derive(Debug, Clone)]
pub struct Session {
    /// Negotiated version (sent as `MCP-Protocol-Version`).
    pub version: String,
    /// `Mcp-Session-Id`, when the server issued one.
    pub id: Option<String>,
}

/// A recording JSON-RPC client for one check.
pub struct Wire {
    client: Client,
    url: String,
    token: Option<String>,
    next_id: u64,
    /// Every exchange, in order (the check's transcript).
    pub exchanges: Vec<Exchange>,
    /// Warnings collected without stopping the check.
    pub warnings: Vec<Box<Finding>>,
}

impl Wire {
    /// A client for the endpoint `url`, sending `token` as a Bearer token when given.
    pub fn new(client: Client, url: &str, token: Option<String>) -> Self {
        Self {
            client,
            url: url.to_string(),
            token,
            next_id: 1,
            exchanges: Vec::new(),
            warnings: Vec::new(),
        }
    }

    /// Another client on the same endpoint and pool (for requests in flight together); its
    /// exchanges are merged back by the caller.
    pub fn twin(&self) -> Self {
        Self::new(self.client.clone(), &self.url, self.token.clone())
    }

    /// A fresh request id.
    pub fn id(&mut self) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    /// Sends `method` with the default POST headers changed by `headers` (a header given
    /// replaces the default of that name; an empty value removes it) and `body`.
    pub async fn send(
        &mut self,
        method: &str,
        headers: &[(&str, String)],
        body: Option<Vec<u8>>,
    ) -> Step<Answer> {
        let mut all: Vec<(String, String)> = vec![
            ("content-type".into(), "application/json".into()),
            (
                "accept".into(),
                "application/json, text/event-stream".into(),
            ),
        ];
        for (k, v) in headers {
            all.retain(|(n, _)| !n.eq_ignore_ascii_case(k));
            if !v.is_empty() {
                all.push((k.to_ascii_lowercase(), v.clone()));
            }
        }
        let mut recorded = all.clone();
        if let Some(t) = &self.token {
            all.push(("authorization".into(), format!("Bearer {t}")));
            recorded.push(("authorization".into(), format!("Bearer ${{{TOKEN_ENV}}}")));
        }
        let shown = body
            .as_ref()
            .map(|b| String::from_utf8_lossy(b).into_owned());
        let p = Prepared {
            method: method.into(),
            url: self.url.clone(),
            headers: all,
            recorded_headers: recorded,
            body,
            shown_body: shown,
        };
        let (ex, resp) = send_recorded(&self.client, TransportKind::Mcp, p).await;
        let error = ex.error.clone();
        self.exchanges.push(ex);
        let Some((status, headers, text)) = resp else {
            return Err(Finding::fail(
                "",
                json!("an HTTP answer"),
                json!(error),
                format!(
                    "{method} {}: no answer ({})",
                    self.url,
                    error.unwrap_or_default()
                ),
            ));
        };
        let ct = headers
            .iter()
            .find(|(k, _)| k == "content-type")
            .map(|(_, v)| v.clone());
        let message = parse_rpc_body(ct.as_deref(), &text, None);
        Ok(Answer {
            status,
            headers,
            text,
            message,
        })
    }

    /// A GET that may open an endless SSE stream: only the status and headers are read (a
    /// body is read, bounded, only when it is not an event stream).
    pub async fn get_head(&mut self, headers: &[(&str, String)]) -> Step<Answer> {
        let mut rb = self.client.http().get(&self.url);
        let mut recorded = Vec::new();
        for (k, v) in headers {
            rb = rb.header(*k, v);
            recorded.push((k.to_string(), v.clone()));
        }
        if let Some(t) = &self.token {
            rb = rb.bearer_auth(t);
            recorded.push(("authorization".into(), format!("Bearer ${{{TOKEN_ENV}}}")));
        }
        let started = std::time::Instant::now();
        let mut ex = Exchange {
            transport: TransportKind::Mcp,
            method: "GET".into(),
            url: self.url.clone(),
            request_headers: recorded,
            request_body: None,
            status: None,
            response_headers: Vec::new(),
            response_body: None,
            error: None,
            elapsed_us: 0,
            resent_after: None,
        };
        let answer = match rb.send().await {
            Err(e) => {
                ex.error = Some(crate::transport::tls::error_chain(&e));
                None
            }
            Ok(resp) => {
                let status = resp.status().as_u16();
                let headers = crate::transport::header_list(resp.headers());
                let sse = crate::transport::is_event_stream(&headers);
                // An event stream may never end: its body is not the check's business.
                let text = if sse {
                    "(event stream, not read)".to_string()
                } else {
                    let cap = self.client.limits().response_body_bytes;
                    let bytes = crate::transport::read_body(resp, cap)
                        .await
                        .unwrap_or_default();
                    String::from_utf8_lossy(&bytes).into_owned()
                };
                ex.status = Some(status);
                ex.response_headers = headers.clone();
                ex.response_body = Some(text.clone());
                Some(Answer {
                    status,
                    headers,
                    message: serde_json::from_str(&text).ok(),
                    text,
                })
            }
        };
        ex.elapsed_us = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
        let error = ex.error.clone();
        self.exchanges.push(ex);
        answer.ok_or_else(|| {
            Finding::fail(
                "",
                json!("an HTTP answer"),
                json!(error),
                format!("GET {}: no answer", self.url),
            )
        })
    }

    /// POSTs the JSON `body` with `headers`.
    pub async fn post(&mut self, headers: &[(&str, String)], body: &Value) -> Step<Answer> {
        self.send("POST", headers, Some(body.to_string().into_bytes()))
            .await
    }

    /// `initialize` requesting `version` (no session yet), with `params` when given.
    pub async fn initialize(&mut self, version: &str, params: Option<Value>) -> Step<Answer> {
        let id = self.id();
        let params = params.unwrap_or_else(|| {
            json!({
                "protocolVersion": version,
                "capabilities": {},
                "clientInfo": {"name": "conform", "version": env!("CARGO_PKG_VERSION")},
            })
        });
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": params});
        self.post(&[("mcp-protocol-version", String::new())], &body)
            .await
    }

    /// A 2025-11-25 session: `initialize` then `notifications/initialized`. A server that
    /// does not answer `initialize` with a result makes the check not applicable.
    pub async fn open(&mut self) -> Step<Session> {
        let a = self.initialize(LEGACY, None).await?;
        let Some(result) = a.result() else {
            return Err(Finding::unsupported(format!(
                "n/a: initialize ({LEGACY}) was not answered with a result (HTTP {})",
                a.status
            )));
        };
        let version = result
            .get("protocolVersion")
            .and_then(Value::as_str)
            .unwrap_or(LEGACY)
            .to_string();
        let s = Session {
            version,
            id: a.header("mcp-session-id").map(str::to_string),
        };
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        self.post(&self.session_headers(&s), &note).await?;
        Ok(s)
    }

    /// Headers of every request inside `s`.
    pub fn session_headers(&self, s: &Session) -> Vec<(&'static str, String)> {
        let mut h = vec![("mcp-protocol-version", s.version.clone())];
        if let Some(id) = &s.id {
            h.push(("mcp-session-id", id.clone()));
        }
        h
    }

    /// A request `method(params)` inside the session `s`.
    pub async fn legacy(&mut self, s: &Session, method: &str, params: Value) -> Step<Answer> {
        let id = self.id();
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let h = self.session_headers(s);
        self.post(&h, &body).await
    }

    /// A 2026-07-28 request `method(params)`: `_meta` keys in the body, standard headers
    /// (`Mcp-Name` from the body's target), then `overrides` applied to the headers.
    pub async fn modern(
        &mut self,
        method: &str,
        params: Value,
        overrides: &[(&str, String)],
    ) -> Step<Answer> {
        let id = self.id();
        let body = modern_body(id, method, params, MODERN);
        let mut h = modern_headers(&body);
        for (k, v) in overrides {
            h.retain(|(n, _)| !n.eq_ignore_ascii_case(k));
            h.push((k, v.clone()));
        }
        self.post(&h, &body).await
    }
}

/// The `_meta` of a 2026-07-28 request speaking `version`.
pub fn modern_meta(version: &str) -> Value {
    json!({
        META_PROTOCOL_VERSION: version,
        META_CLIENT_CAPABILITIES: {},
        META_CLIENT_INFO: {"name": "conform", "version": env!("CARGO_PKG_VERSION")},
    })
}

/// A 2026-07-28 request body: `params` with the era's `_meta` added.
pub fn modern_body(id: u64, method: &str, params: Value, version: &str) -> Value {
    let mut params = match params {
        Value::Object(m) => m,
        _ => serde_json::Map::new(),
    };
    params.insert("_meta".into(), modern_meta(version));
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// The standard headers mirrored from a 2026-07-28 body (`MCP-Protocol-Version`,
/// `Mcp-Method`, and `Mcp-Name` for requests that name a target).
pub fn modern_headers(body: &Value) -> Vec<(&'static str, String)> {
    let method = body.get("method").and_then(Value::as_str).unwrap_or("");
    let version = body
        .pointer(&format!(
            "/params/_meta/{}",
            META_PROTOCOL_VERSION.replace('/', "~1")
        ))
        .and_then(Value::as_str)
        .unwrap_or(MODERN);
    let mut h = vec![
        ("mcp-protocol-version", version.to_string()),
        ("mcp-method", method.to_string()),
    ];
    let name = match method {
        "tools/call" | "prompts/get" => body.pointer("/params/name"),
        "resources/read" => body.pointer("/params/uri"),
        _ => None,
    };
    if let Some(n) = name.and_then(Value::as_str) {
        h.push(("mcp-name", n.to_string()));
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modern_framing_mirrors_the_body_into_headers() {
        let body = modern_body(
            3,
            "tools/call",
            json!({"name": "t", "arguments": {}}),
            MODERN,
        );
        assert_eq!(body["params"]["_meta"][META_PROTOCOL_VERSION], MODERN);
        let h = modern_headers(&body);
        assert!(h.contains(&("mcp-method", "tools/call".into())));
        assert!(h.contains(&("mcp-name", "t".into())));
        assert!(h.contains(&("mcp-protocol-version", MODERN.into())));
        let h = modern_headers(&modern_body(4, "server/discover", json!({}), "1999-01-01"));
        assert!(h.contains(&("mcp-protocol-version", "1999-01-01".into())));
        assert!(!h.iter().any(|(k, _)| *k == "mcp-name"));
    }
}
