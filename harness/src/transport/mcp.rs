//! The MCP binding: tools over Streamable HTTP, in both protocol eras.
//!
//! - 2025-11-25: `initialize` + `notifications/initialized` once, then `tools/call`; the
//!   `Mcp-Session-Id` the server returns (if any) is sent on every later request.
//! - 2026-07-28: stateless, no handshake. Every request carries `MCP-Protocol-Version`,
//!   `Mcp-Method` / `Mcp-Name` headers (SEP-2243) and the per-request `_meta` keys
//!   `io.modelcontextprotocol/protocolVersion` and `…/clientCapabilities` (SEP-2575) — the
//!   keys rmcp 3.11 requires (`RequestMetaObject::DRAFT_REQUIRED_KEYS`).

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};

use futures::FutureExt as _;
use futures::future::BoxFuture;
use serde_json::{Value, json};
use tokio::sync::OnceCell;

use super::raw::{RawHttp, RawMcp};
use super::{
    Auth, Exchange, McpRevision, Prepared, Reply, Transport, TransportError, TransportKind,
    send_recorded,
};

/// `_meta` key carrying the protocol version (2026-07-28).
pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key carrying the client capabilities (2026-07-28).
pub const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key carrying the client identity (2026-07-28, optional).
pub const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";

/// JSON-RPC error codes (open newtype: any code a server sends is representable).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JsonRpcCode(pub i64);

impl JsonRpcCode {
    /// Invalid JSON.
    pub const PARSE_ERROR: Self = Self(-32700);
    /// Not a valid request object.
    pub const INVALID_REQUEST: Self = Self(-32600);
    /// Unknown method.
    pub const METHOD_NOT_FOUND: Self = Self(-32601);
    /// Bad params / unknown tool.
    pub const INVALID_PARAMS: Self = Self(-32602);
}

#[derive(Debug, Clone)]
struct Session {
    id: Option<String>,
}

/// MCP transport over one keep-alive client.
#[derive(Debug)]
pub struct McpTransport {
    client: crate::transport::Client,
    url: String,
    revision: McpRevision,
    tools: HashMap<String, Option<String>>,
    init_auth: Auth,
    session: OnceCell<Result<Session, String>>,
    handshake: tokio::sync::Mutex<Vec<Exchange>>,
    next_id: AtomicU64,
}

/// Unwraps a Streamable HTTP response body: JSON, or the JSON-RPC message inside SSE `data:` lines.
pub fn parse_rpc_body(content_type: Option<&str>, text: &str, id: Option<u64>) -> Option<Value> {
    let is_sse =
        content_type.is_some_and(|c| c.to_ascii_lowercase().starts_with("text/event-stream"));
    if !is_sse {
        return serde_json::from_str(text).ok();
    }
    let mut messages = Vec::new();
    let mut data = String::new();
    for line in text.lines().chain(std::iter::once("")) {
        if line.is_empty() {
            if !data.is_empty() {
                if let Ok(v) = serde_json::from_str::<Value>(&data) {
                    messages.push(v);
                }
                data.clear();
            }
        } else if let Some(rest) = line.strip_prefix("data:") {
            if !data.is_empty() {
                data.push('\n');
            }
            data.push_str(rest.strip_prefix(' ').unwrap_or(rest));
        }
    }
    let is_response = |m: &Value| m.get("result").is_some() || m.get("error").is_some();
    let by_id = id.and_then(|id| {
        messages
            .iter()
            .find(|m| is_response(m) && m.get("id") == Some(&json!(id)))
            .cloned()
    });
    by_id
        .or_else(|| messages.iter().find(|m| is_response(m)).cloned())
        .or_else(|| messages.into_iter().next())
}

impl McpTransport {
    /// `url` is the full MCP endpoint; `tools` maps operation → tool name (`None` = not offered).
    /// `init_auth` is sent with the 2025-11-25 handshake (servers may demand a token on every POST).
    pub fn new(
        client: crate::transport::Client,
        url: &str,
        revision: McpRevision,
        tools: HashMap<String, Option<String>>,
        init_auth: Auth,
    ) -> Self {
        Self {
            client,
            url: url.to_string(),
            revision,
            tools,
            init_auth,
            session: OnceCell::new(),
            handshake: tokio::sync::Mutex::new(Vec::new()),
            next_id: AtomicU64::new(1),
        }
    }

    /// The revision spoken.
    pub fn revision(&self) -> McpRevision {
        self.revision
    }

    /// Exchanges of the handshake (2025-11-25), for the report's exchange count.
    pub async fn handshake_exchanges(&self) -> Vec<Exchange> {
        self.handshake.lock().await.clone()
    }

    fn base_headers(&self, session: Option<&Session>) -> Vec<(String, String)> {
        let mut h = vec![
            ("content-type".to_string(), "application/json".to_string()),
            (
                "accept".to_string(),
                "application/json, text/event-stream".to_string(),
            ),
            (
                "mcp-protocol-version".to_string(),
                self.revision.as_str().to_string(),
            ),
        ];
        if let Some(Session { id: Some(id) }) = session {
            h.push(("mcp-session-id".to_string(), id.clone()));
        }
        h
    }

    fn era_meta(&self) -> Value {
        json!({
            META_PROTOCOL_VERSION: self.revision.as_str(),
            META_CLIENT_CAPABILITIES: {},
            META_CLIENT_INFO: {"name": "conform", "version": env!("CARGO_PKG_VERSION")},
        })
    }

    async fn post(
        &self,
        mut headers: Vec<(String, String)>,
        extra: &BTreeMap<String, String>,
        body: (Option<Vec<u8>>, Option<String>),
        auth: &Auth,
        id: Option<u64>,
    ) -> Result<Reply, Exchange> {
        let mut recorded = headers.clone();
        let overridden = |n: &str| extra.keys().any(|k| k.eq_ignore_ascii_case(n));
        headers.retain(|(k, _)| !overridden(k));
        recorded.retain(|(k, _)| !overridden(k));
        if !overridden("authorization")
            && let (Some(v), Some(r)) = (auth.header_value(), auth.recorded_value())
        {
            headers.push(("authorization".into(), v));
            recorded.push(("authorization".into(), r));
        }
        for (k, v) in extra {
            headers.push((k.to_ascii_lowercase(), v.clone()));
            recorded.push((k.to_ascii_lowercase(), v.clone()));
        }
        let p = Prepared {
            method: "POST".into(),
            url: self.url.clone(),
            headers,
            recorded_headers: recorded,
            body: body.0,
            shown_body: body.1,
        };
        let (ex, resp) = send_recorded(&self.client, TransportKind::Mcp, p).await;
        let Some((status, hs, text)) = resp else {
            return Err(ex);
        };
        let ct = hs
            .iter()
            .find(|(k, _)| k == "content-type")
            .map(|(_, v)| v.as_str());
        let json = parse_rpc_body(ct, &text, id);
        Ok(Reply {
            http_status: status,
            headers: hs,
            json,
            text,
            exchanges: vec![ex],
        })
    }

    async fn session(&self) -> Result<Option<Session>, TransportError> {
        if self.revision == McpRevision::V2026_07_28 {
            return Ok(None);
        }
        let r = self
            .session
            .get_or_init(|| async { self.handshake().await })
            .await;
        match r {
            Ok(s) => Ok(Some(s.clone())),
            Err(e) => Err(TransportError::Io {
                message: e.clone(),
                exchanges: self.handshake.lock().await.clone(),
            }),
        }
    }

    async fn handshake(&self) -> Result<Session, String> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let init = json!({
            "jsonrpc": "2.0", "id": id, "method": "initialize",
            "params": {
                "protocolVersion": self.revision.as_str(),
                "capabilities": {},
                "clientInfo": {"name": "conform", "version": env!("CARGO_PKG_VERSION")}
            }
        });
        let text = init.to_string();
        let reply = self
            .post(
                self.base_headers(None),
                &BTreeMap::new(),
                (Some(text.clone().into_bytes()), Some(text)),
                &self.init_auth,
                Some(id),
            )
            .await;
        let reply = match reply {
            Ok(r) => {
                self.handshake
                    .lock()
                    .await
                    .extend(r.exchanges.iter().cloned());
                r
            }
            Err(ex) => {
                let msg = format!("MCP initialize: {}", ex.error.clone().unwrap_or_default());
                self.handshake.lock().await.push(ex);
                return Err(msg);
            }
        };
        let ok = reply.json.as_ref().and_then(|j| j.get("result")).is_some();
        if !ok {
            return Err(format!(
                "MCP initialize refused: HTTP {} {}",
                reply.http_status, reply.text
            ));
        }
        let session = Session {
            id: reply.header("mcp-session-id").map(str::to_string),
        };
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
        let reply = self
            .post(
                self.base_headers(Some(&session)),
                &BTreeMap::new(),
                (Some(note.clone().into_bytes()), Some(note)),
                &self.init_auth,
                None,
            )
            .await;
        match reply {
            Ok(r) => {
                self.handshake
                    .lock()
                    .await
                    .extend(r.exchanges.iter().cloned());
                if (200..300).contains(&r.http_status) {
                    Ok(session)
                } else {
                    Err(format!(
                        "MCP notifications/initialized: HTTP {} {}",
                        r.http_status, r.text
                    ))
                }
            }
            Err(ex) => {
                let msg = format!(
                    "MCP notifications/initialized: {}",
                    ex.error.clone().unwrap_or_default()
                );
                self.handshake.lock().await.push(ex);
                Err(msg)
            }
        }
    }

    fn finish(reply: Result<Reply, Exchange>) -> Result<Reply, TransportError> {
        reply.map_err(|ex| TransportError::Io {
            message: ex.error.clone().unwrap_or_default(),
            exchanges: vec![ex],
        })
    }
}

impl Transport for McpTransport {
    fn kind(&self) -> TransportKind {
        TransportKind::Mcp
    }

    fn call<'a>(
        &'a self,
        op: &'a str,
        args: &'a Value,
        auth: &'a Auth,
    ) -> BoxFuture<'a, Result<Reply, TransportError>> {
        async move {
            let tool = match self.tools.get(op) {
                Some(Some(t)) => t.clone(),
                Some(None) => {
                    return Err(TransportError::Unusable(format!(
                        "the target offers no MCP tool for {op}"
                    )));
                }
                None => op.to_string(),
            };
            let session = self.session().await?;
            let id = self.next_id.fetch_add(1, Ordering::Relaxed);
            let mut params = json!({"name": tool, "arguments": args});
            let mut headers = self.base_headers(session.as_ref());
            if self.revision == McpRevision::V2026_07_28 {
                params["_meta"] = self.era_meta();
                headers.push(("mcp-method".into(), "tools/call".into()));
                headers.push(("mcp-name".into(), tool.clone()));
            }
            let body =
                json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
                    .to_string();
            let reply = self
                .post(
                    headers,
                    &BTreeMap::new(),
                    (Some(body.clone().into_bytes()), Some(body)),
                    auth,
                    Some(id),
                )
                .await;
            Self::finish(reply)
        }
        .boxed()
    }

    fn raw_http<'a>(
        &'a self,
        _req: &'a RawHttp,
        _auth: &'a Auth,
    ) -> BoxFuture<'a, Result<Reply, TransportError>> {
        async move {
            Err(TransportError::Unusable(
                "raw HTTP step on the MCP transport".into(),
            ))
        }
        .boxed()
    }

    fn raw_mcp<'a>(
        &'a self,
        req: &'a RawMcp,
        auth: &'a Auth,
    ) -> BoxFuture<'a, Result<Reply, TransportError>> {
        async move {
            let session = self.session().await?;
            let mut headers = self.base_headers(session.as_ref());
            let mut body_json = req.body_json.clone();
            let mut id = None;
            if let Some(Value::Object(msg)) = body_json.as_mut() {
                id = msg.get("id").and_then(Value::as_u64);
                let method = msg
                    .get("method")
                    .and_then(Value::as_str)
                    .map(str::to_string);
                if self.revision == McpRevision::V2026_07_28
                    && let Some(method) = method
                {
                    headers.push(("mcp-method".into(), method.clone()));
                    if let Some(name) = msg
                        .get("params")
                        .and_then(|p| p.get("name"))
                        .and_then(Value::as_str)
                    {
                        headers.push(("mcp-name".into(), name.to_string()));
                    }
                    // A request of the stateless era carries the era's `_meta` unless the vector set one.
                    if msg.contains_key("id") && method != "initialize" {
                        let params = msg.entry("params").or_insert_with(|| json!({}));
                        if let Value::Object(p) = params
                            && !p.contains_key("_meta")
                        {
                            p.insert("_meta".into(), self.era_meta());
                        }
                    }
                }
            }
            let (bytes, shown) = super::raw_body(&req.body, &body_json, None)?;
            let reply = self
                .post(headers, &req.headers, (bytes, shown), auth, id)
                .await;
            Self::finish(reply)
        }
        .boxed()
    }
}

#[cfg(test)]
#[expect(clippy::unwrap_used)] // tests: a panic is the failure report
mod tests {
    use super::*;

    #[test]
    fn unwraps_sse() {
        let text = "id: 1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"x\"}\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"a\":1}}\n\n";
        let v = parse_rpc_body(Some("text/event-stream"), text, Some(7)).unwrap();
        assert_eq!(v["result"]["a"], 1);
        let v = parse_rpc_body(
            Some("application/json"),
            "{\"id\":1,\"error\":{\"code\":-32600}}",
            Some(1),
        )
        .unwrap();
        assert_eq!(v["error"]["code"], -32600);
    }
}
