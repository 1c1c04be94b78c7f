//! Transports: one trait, two bindings (HTTP, MCP Streamable HTTP), raw access.
//!
//! Vectors are binding-neutral; a transport maps an operation onto its wire form and records
//! every exchange, so a failure always comes with the exact bytes that caused it.

pub mod http;
pub mod mcp;
pub mod raw;

use std::fmt;
use std::time::Duration;

use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use raw::{RawHttp, RawMcp};

/// Which binding a check ran on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TransportKind {
    /// Plain HTTP routes.
    Http,
    /// MCP tools over Streamable HTTP.
    Mcp,
}

impl TransportKind {
    /// Lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            TransportKind::Http => "http",
            TransportKind::Mcp => "mcp",
        }
    }
}

impl fmt::Display for TransportKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// MCP protocol revision spoken by the MCP transport.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
pub enum McpRevision {
    /// Handshake era: `initialize` + `notifications/initialized`, optional `Mcp-Session-Id`.
    #[serde(rename = "2025-11-25")]
    #[default]
    V2025_11_25,
    /// Stateless era: no handshake; every request carries the version in `_meta` and headers.
    #[serde(rename = "2026-07-28")]
    V2026_07_28,
}

impl McpRevision {
    /// The revision string.
    pub fn as_str(self) -> &'static str {
        match self {
            McpRevision::V2025_11_25 => "2025-11-25",
            McpRevision::V2026_07_28 => "2026-07-28",
        }
    }

    /// Parses a revision string.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "2025-11-25" => Some(McpRevision::V2025_11_25),
            "2026-07-28" => Some(McpRevision::V2026_07_28),
            _ => None,
        }
    }
}

impl fmt::Display for McpRevision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Credentials for one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Auth {
    /// No `Authorization` header.
    None,
    /// `Authorization: Bearer <token>`.
    Bearer {
        /// The token sent.
        token: String,
        /// Environment variable standing for it in transcripts and curl commands
        /// (`CONFORM_TOKEN_AGENT_A`); `None` shows the literal token (e.g. a deliberately invalid one).
        env: Option<String>,
    },
}

impl Auth {
    /// The header value as sent.
    pub fn header_value(&self) -> Option<String> {
        match self {
            Auth::None => None,
            Auth::Bearer { token, .. } => Some(format!("Bearer {token}")),
        }
    }

    /// The header value as recorded (token replaced by `${ENV}` when it has one).
    pub fn recorded_value(&self) -> Option<String> {
        match self {
            Auth::None => None,
            Auth::Bearer { env: Some(e), .. } => Some(format!("Bearer ${{{e}}}")),
            Auth::Bearer { token, env: None } => Some(format!("Bearer {token}")),
        }
    }
}

/// One recorded request/response pair.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Exchange {
    /// Binding.
    pub transport: TransportKind,
    /// HTTP method.
    pub method: String,
    /// Full URL.
    pub url: String,
    /// Request headers as sent (tokens shown as `${CONFORM_TOKEN_…}`).
    pub request_headers: Vec<(String, String)>,
    /// Request body (lossy UTF-8; base64 bodies are shown as `base64:<…>`).
    #[serde(default)]
    pub request_body: Option<String>,
    /// Response status (`None` when no response arrived).
    #[serde(default)]
    pub status: Option<u16>,
    /// Response headers (lowercase names).
    #[serde(default)]
    pub response_headers: Vec<(String, String)>,
    /// Response body (lossy UTF-8).
    #[serde(default)]
    pub response_body: Option<String>,
    /// Transport error (timeout, connection refused).
    #[serde(default)]
    pub error: Option<String>,
    /// Round-trip time in microseconds.
    pub elapsed_us: u64,
}

/// What came back from one transport call.
#[derive(Debug, Clone)]
pub struct Reply {
    /// HTTP status of the (last) response.
    pub http_status: u16,
    /// Response headers (lowercase names).
    pub headers: Vec<(String, String)>,
    /// HTTP: the parsed JSON body. MCP: the JSON-RPC response message (SSE unwrapped).
    pub json: Option<Value>,
    /// The raw response text.
    pub text: String,
    /// Every exchange made for this call (MCP may add the handshake).
    pub exchanges: Vec<Exchange>,
}

impl Reply {
    /// First header value with this (lowercase) name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Why a transport call produced no response.
#[derive(Debug, thiserror::Error)]
pub enum TransportError {
    /// Network error or timeout; the exchange records the attempt.
    #[error("{message}")]
    Io {
        /// What happened.
        message: String,
        /// The attempted exchanges.
        exchanges: Vec<Exchange>,
    },
    /// The request cannot be expressed on this transport (bad route, raw step of the other binding).
    #[error("{0}")]
    Unusable(String),
}

impl TransportError {
    /// The exchanges attempted before the error.
    pub fn exchanges(&self) -> &[Exchange] {
        match self {
            TransportError::Io { exchanges, .. } => exchanges,
            TransportError::Unusable(_) => &[],
        }
    }
}

/// An operation-based binding the harness can drive (HTTP routes or MCP tools).
pub trait Transport: Send + Sync {
    /// Which binding this is.
    fn kind(&self) -> TransportKind;

    /// Sends a binding-neutral operation (`post`, `read_thread`, …) with its arguments.
    fn call<'a>(
        &'a self,
        op: &'a str,
        args: &'a Value,
        auth: &'a Auth,
    ) -> BoxFuture<'a, Result<Reply, TransportError>>;

    /// Sends a raw HTTP request (HTTP transport only).
    fn raw_http<'a>(
        &'a self,
        req: &'a RawHttp,
        auth: &'a Auth,
    ) -> BoxFuture<'a, Result<Reply, TransportError>>;

    /// Sends a raw JSON-RPC body to the MCP endpoint (MCP transport only).
    fn raw_mcp<'a>(
        &'a self,
        req: &'a RawMcp,
        auth: &'a Auth,
    ) -> BoxFuture<'a, Result<Reply, TransportError>>;
}

/// Shared HTTP client settings (keep-alive pool, no proxy: the target is reached directly).
pub fn client(timeout: Duration) -> Result<reqwest::Client, TransportError> {
    reqwest::Client::builder()
        .timeout(timeout)
        .no_proxy()
        .pool_max_idle_per_host(64)
        // Servers close idle keep-alive connections on their own schedule (the reference
        // after 10 s, Node's default after 5 s); a request sent on a connection the server
        // is closing fails with "error sending request" — a false failure. Dropping idle
        // connections after 2 s keeps the pool inside every common server's idle window.
        .pool_idle_timeout(Duration::from_secs(2))
        .build()
        .map_err(|e| TransportError::Unusable(format!("building the HTTP client: {e}")))
}

/// Body bytes of a raw request.
pub(crate) fn raw_body(
    body: &Option<String>,
    body_json: &Option<Value>,
    body_base64: Option<&String>,
) -> Result<(Option<Vec<u8>>, Option<String>), TransportError> {
    use base64::Engine as _;
    if let Some(b) = body {
        return Ok((Some(b.clone().into_bytes()), Some(b.clone())));
    }
    if let Some(j) = body_json {
        let s = j.to_string();
        return Ok((Some(s.clone().into_bytes()), Some(s)));
    }
    if let Some(b64) = body_base64 {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(b64.trim())
            .map_err(|e| TransportError::Unusable(format!("body_base64: {e}")))?;
        let shown = match std::str::from_utf8(&bytes) {
            Ok(s) => s.to_string(),
            Err(_) => format!("base64:{b64}"),
        };
        return Ok((Some(bytes), Some(shown)));
    }
    Ok((None, None))
}

/// A request ready to send: real headers, recorded headers (tokens masked) and body.
pub(crate) struct Prepared {
    pub method: String,
    pub url: String,
    pub headers: Vec<(String, String)>,
    pub recorded_headers: Vec<(String, String)>,
    pub body: Option<Vec<u8>>,
    pub shown_body: Option<String>,
}

/// Raw response parts: status, lowercase headers, body text.
pub(crate) type RawResponse = (u16, Vec<(String, String)>, String);

/// Sends one prepared request and records it.
pub(crate) async fn send_recorded(
    client: &reqwest::Client,
    transport: TransportKind,
    p: Prepared,
) -> (Exchange, Option<RawResponse>) {
    let Prepared {
        method,
        url,
        headers,
        recorded_headers,
        body,
        shown_body,
    } = p;
    let (method, url) = (method.as_str(), url.as_str());
    let started = std::time::Instant::now();
    let mut ex = Exchange {
        transport,
        method: method.to_string(),
        url: url.to_string(),
        request_headers: recorded_headers,
        request_body: shown_body,
        status: None,
        response_headers: Vec::new(),
        response_body: None,
        error: None,
        elapsed_us: 0,
    };
    let m = match reqwest::Method::from_bytes(method.as_bytes()) {
        Ok(m) => m,
        Err(e) => {
            ex.error = Some(format!("invalid method {method:?}: {e}"));
            return (ex, None);
        }
    };
    let mut rb = client.request(m, url);
    for (k, v) in &headers {
        rb = rb.header(k.as_str(), v.as_str());
    }
    if let Some(b) = body {
        rb = rb.body(b);
    }
    let result = async {
        let resp = rb.send().await?;
        let status = resp.status().as_u16();
        let hs: Vec<(String, String)> = resp
            .headers()
            .iter()
            .map(|(k, v)| {
                (
                    k.as_str().to_ascii_lowercase(),
                    String::from_utf8_lossy(v.as_bytes()).into_owned(),
                )
            })
            .collect();
        let bytes = resp.bytes().await?;
        Ok::<_, reqwest::Error>((status, hs, String::from_utf8_lossy(&bytes).into_owned()))
    }
    .await;
    ex.elapsed_us = started.elapsed().as_micros() as u64;
    match result {
        Ok((status, hs, text)) => {
            ex.status = Some(status);
            ex.response_headers = hs.clone();
            ex.response_body = Some(text.clone());
            (ex, Some((status, hs, text)))
        }
        Err(e) => {
            let kind = if e.is_timeout() {
                "timeout"
            } else if e.is_connect() {
                "connection failed"
            } else {
                "request failed"
            };
            ex.error = Some(format!("{kind}: {e}"));
            (ex, None)
        }
    }
}
