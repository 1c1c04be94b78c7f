//! Transports: one trait, two bindings (HTTP, MCP Streamable HTTP), raw access.
//!
//! Vectors are binding-neutral; a transport maps an operation onto its wire form and records
//! every exchange, so a failure always comes with the exact bytes that caused it.

pub mod budget;
pub mod http;
pub mod limits;
pub mod mcp;
pub mod pre_routing;
pub mod raw;
mod reuse;
pub mod tls;

use std::fmt;
use std::time::Duration;

use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use budget::{TimeBudget, TimeScale};
use limits::{LimitExceeded, Limits};
use raw::{RawHttp, RawMcp};
use tls::TlsOptions;

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
            Self::Http => "http",
            Self::Mcp => "mcp",
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
            Self::V2025_11_25 => "2025-11-25",
            Self::V2026_07_28 => "2026-07-28",
        }
    }

    /// Parses a revision string.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "2025-11-25" => Some(Self::V2025_11_25),
            "2026-07-28" => Some(Self::V2026_07_28),
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
            Self::None => None,
            Self::Bearer { token, .. } => Some(format!("Bearer {token}")),
        }
    }

    /// The header value as recorded (token replaced by `${ENV}` when it has one).
    pub fn recorded_value(&self) -> Option<String> {
        match self {
            Self::None => None,
            Self::Bearer { env: Some(e), .. } => Some(format!("Bearer ${{{e}}}")),
            Self::Bearer { token, env: None } => Some(format!("Bearer {token}")),
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
    /// The request went out twice: why its first attempt got no answer (a connection
    /// closed under it, RFC 9112 §9.3.1; see `transport::reuse`). The rest is the second's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resent_after: Option<String>,
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

    /// Whether the content type says JSON (`application/json`, any case, any parameters).
    pub fn labelled_json(&self) -> bool {
        self.header("content-type")
            .is_some_and(|c| c.to_ascii_lowercase().starts_with("application/json"))
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
            Self::Io { exchanges, .. } => exchanges,
            Self::Unusable(_) => &[],
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

/// The HTTP client every transport shares (keep-alive pool, no proxy: the target is reached
/// directly), the limits of what it reads from a response, and the TLS settings it trusts
/// `https://` targets by.
#[derive(Debug, Clone)]
pub struct Client {
    http: reqwest::Client,
    limits: Limits,
    timeout: TimeBudget,
    tls: TlsOptions,
}

impl Client {
    /// A client whose requests (body included) end after `timeout`, reading at most `limits`
    /// (default TLS: the bundled Mozilla roots).
    pub fn new(timeout: Duration, limits: Limits) -> Result<Self, TransportError> {
        let timeout = TimeScale::ONE.budget(PER_REQUEST, timeout);
        Self::with_tls(timeout, limits, &TlsOptions::default())
    }

    /// [`Client::new`] with the `timeout` budget (its scale is the run's: every waiting
    /// bound of a check reads it from here), trusting `https://` servers as `tls` says.
    pub fn with_tls(
        timeout: TimeBudget,
        limits: Limits,
        tls: &TlsOptions,
    ) -> Result<Self, TransportError> {
        let builder = reqwest::Client::builder()
            .timeout(timeout.limit())
            .no_proxy()
            .pool_max_idle_per_host(64)
            // Every check (and the fuzzer, issue 28) judges what the target answered: a 3xx
            // is an answer, never followed to some other resource (reqwest follows up to 10).
            .redirect(reqwest::redirect::Policy::none())
            .http1_max_headers(limits.response_headers)
            // Servers close idle keep-alive connections on their own schedule (the reference
            // after 10 s, Node's default after 5 s); a request sent on a connection the server
            // is closing fails with "error sending request" — a false failure. Dropping idle
            // connections after 2 s keeps the pool inside every common server's idle window.
            .pool_idle_timeout(Duration::from_secs(2));
        let http = tls
            .apply(builder)
            .map_err(|e| TransportError::Unusable(e.to_string()))?
            .build()
            .map_err(|e| {
                TransportError::Unusable(format!(
                    "building the HTTP client: {}",
                    tls::error_chain(&e)
                ))
            })?;
        Ok(Self {
            http,
            limits,
            timeout,
            tls: tls.clone(),
        })
    }

    /// A new client with the same settings and its own connection pool.
    pub fn renewed(&self) -> Result<Self, TransportError> {
        Self::with_tls(self.timeout, self.limits, &self.tls)
    }

    /// The underlying HTTP client (for requests whose body is not read).
    pub fn http(&self) -> &reqwest::Client {
        &self.http
    }

    /// What a response may hold at most.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// The TLS settings.
    pub fn tls(&self) -> &TlsOptions {
        &self.tls
    }

    /// The per-request timeout, scaled.
    pub fn timeout(&self) -> Duration {
        self.timeout.limit()
    }

    /// The run's time scale (every other waiting bound is scaled by it too).
    pub fn time_scale(&self) -> TimeScale {
        self.timeout.scale
    }
}

/// The name of the per-request budget in messages.
pub const PER_REQUEST: &str = "per-request timeout";

/// A client with the default [`Limits`].
pub fn client(timeout: Duration) -> Result<Client, TransportError> {
    Client::new(timeout, Limits::default())
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

/// Whether a transport error says the request was never built: the HTTP stack refused it
/// (a URI over its limit, a header or method it will not write), so nothing reached the
/// server and no verdict on the server may rest on it.
pub fn never_built(error: &str) -> bool {
    error.contains("builder error")
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
    client: &Client,
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
        resent_after: None,
    };
    let m = match reqwest::Method::from_bytes(method.as_bytes()) {
        Ok(m) => m,
        Err(e) => {
            ex.error = Some(format!("invalid method {method:?}: {e}"));
            return (ex, None);
        }
    };
    // Shared, not copied, when the request is built a second time (see `reuse::send`).
    let body = body.map(bytes::Bytes::from);
    let build = |http: &reqwest::Client| {
        let mut rb = http.request(m.clone(), url);
        for (k, v) in &headers {
            rb = rb.header(k.as_str(), v.as_str());
        }
        if let Some(b) = &body {
            rb = rb.body(b.clone());
        }
        rb
    };
    let (sent, resent_after) = reuse::send(client, &m, &build, started).await;
    ex.resent_after = resent_after;
    let result = match sent {
        Ok(resp) => read_response(client, resp).await,
        Err(e) => Err(e),
    };
    ex.elapsed_us = started.elapsed().as_micros() as u64;
    settle(client, ex, result)
}

/// The exchange completed with what `result` brought: the response, an unusable one with the
/// limit it broke, or the error (a timeout naming the budget).
fn settle(
    client: &Client,
    mut ex: Exchange,
    result: Result<ReadResponse, reqwest::Error>,
) -> (Exchange, Option<RawResponse>) {
    match result {
        Ok((status, hs, text, None)) => {
            ex.status = Some(status);
            ex.response_headers = hs.clone();
            ex.response_body = Some(text.clone());
            (ex, Some((status, hs, text)))
        }
        Ok((status, hs, text, Some(over))) => {
            // The response is unusable: record its start and why, and let the check judge.
            ex.status = Some(status);
            ex.response_headers = hs;
            ex.response_body = Some(target_truncate(&text, SHOWN_OVERFLOW_BYTES));
            ex.error = Some(over.to_string());
            (ex, None)
        }
        Err(e) => {
            let kind = if e.is_timeout() {
                // Name the budget: a slow target needs a larger --time-scale, not a bug hunt.
                format!("timeout: no answer within {}", client.timeout)
            } else if e.is_connect() {
                "connection failed".into()
            } else {
                "request failed".into()
            };
            // The whole chain: reqwest's own message hides the cause (a refused certificate).
            ex.error = Some(format!("{kind}: {}", tls::error_chain(&e)));
            (ex, None)
        }
    }
}

/// A response's status, lowercase headers, body text, and the limit it went over, if any.
type ReadResponse = (u16, Vec<(String, String)>, String, Option<LimitExceeded>);

/// A response's status, lowercase headers and body text, read within `client`'s limits
/// (the limit it went over, if any).
async fn read_response(
    client: &Client,
    resp: reqwest::Response,
) -> Result<ReadResponse, reqwest::Error> {
    let status = resp.status().as_u16();
    let hs = header_list(resp.headers());
    let sse = is_event_stream(&hs);
    let (bytes, over) = read_capped(resp, client.limits.response_body_bytes, sse).await?;
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let over = over.or_else(|| shape_exceeded(&hs, &text, &client.limits));
    Ok((status, hs, text, over))
}

/// A response's header fields as recorded: lowercase names (the `http` crate keeps them
/// so), values as lossy UTF-8, in the order received.
pub(crate) fn header_list(headers: &reqwest::header::HeaderMap) -> Vec<(String, String)> {
    headers
        .iter()
        .map(|(k, v)| {
            (
                k.as_str().to_string(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect()
}

/// Whether recorded `headers` label the body a `text/event-stream`.
pub(crate) fn is_event_stream(headers: &[(String, String)]) -> bool {
    headers.iter().any(|(k, v)| {
        k == "content-type" && v.to_ascii_lowercase().starts_with("text/event-stream")
    })
}

/// Bytes of an over-limit response kept in the transcript.
const SHOWN_OVERFLOW_BYTES: usize = 4096;

/// The first `n` bytes of `s` (on a character boundary), marked as cut when it was.
fn target_truncate(s: &str, n: usize) -> String {
    if s.len() <= n {
        return s.to_string();
    }
    let mut end = n;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} bytes shown of {})", &s[..end], end, s.len())
}

/// A whole response body of at most `cap` bytes; longer is an error saying so (for clients
/// outside the recording transports: `conform validate URL`, the SSP consumer).
pub async fn read_body(resp: reqwest::Response, cap: u64) -> Result<Vec<u8>, String> {
    match read_capped(resp, cap, false).await {
        Ok((bytes, None)) => Ok(bytes),
        Ok((_, Some(over))) => Err(over.to_string()),
        Err(e) => Err(e.to_string()),
    }
}

/// Reads a body chunk by chunk, stopping once it exceeds `cap` bytes (a declared length
/// above the cap stops it before any read). An event stream (`sse`) is read up to the first
/// event carrying a JSON-RPC response: a server only SHOULD close the stream after it
/// (MCP 2025-11-25 transports), so waiting for its end would turn a correct server's open
/// stream into a timeout.
async fn read_capped(
    mut resp: reqwest::Response,
    cap: u64,
    sse: bool,
) -> Result<(Vec<u8>, Option<LimitExceeded>), reqwest::Error> {
    let over = LimitExceeded::Body { limit: cap };
    if resp.content_length().is_some_and(|n| n > cap) {
        return Ok((Vec::new(), Some(over)));
    }
    let cap = usize::try_from(cap).unwrap_or(usize::MAX);
    let mut buf = Vec::new();
    // Events before this offset were already looked at (each chunk scans only what is new).
    let mut scanned = 0;
    while let Some(chunk) = resp.chunk().await? {
        if buf.len().saturating_add(chunk.len()) > cap {
            let room = cap - buf.len();
            buf.extend_from_slice(&chunk[..room.min(SHOWN_OVERFLOW_BYTES)]);
            return Ok((buf, Some(over)));
        }
        buf.extend_from_slice(&chunk);
        if sse && chunk.contains(&b'\n') {
            let (found, done) = rpc_response_after(&buf, scanned);
            if found {
                break;
            }
            scanned = done;
        }
    }
    Ok((buf, None))
}

/// Whether an event of the stream `buf` completed after byte `from` holds a JSON-RPC
/// response (an `id` with a `result` or an `error`), and the offset up to which `buf` is
/// now scanned (the end of its last complete event).
fn rpc_response_after(buf: &[u8], from: usize) -> (bool, usize) {
    let mut start = from;
    let mut found = false;
    while let Some((len, gap)) = next_event(&buf[start..]) {
        found |= is_rpc_response(&buf[start..start + len]);
        start += len + gap;
    }
    (found, start)
}

/// The length of the first complete event of `s` and of the blank line ending it.
fn next_event(s: &[u8]) -> Option<(usize, usize)> {
    (0..s.len()).find_map(|i| {
        if s[i..].starts_with(b"\n\n") {
            Some((i, 2))
        } else if s[i..].starts_with(b"\r\n\r\n") {
            Some((i, 4))
        } else {
            None
        }
    })
}

/// Whether one event's `data:` lines hold a JSON-RPC response.
fn is_rpc_response(event: &[u8]) -> bool {
    let text = String::from_utf8_lossy(event);
    let data: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(|d| d.strip_prefix(' ').unwrap_or(d))
        .collect();
    serde_json::from_str::<Value>(&data.join("\n")).is_ok_and(|m| {
        m.get("id").is_some() && (m.get("result").is_some() || m.get("error").is_some())
    })
}

/// The JSON-depth and SSE-event limits, judged on a complete body.
fn shape_exceeded(
    headers: &[(String, String)],
    text: &str,
    limits: &Limits,
) -> Option<LimitExceeded> {
    let ct = headers
        .iter()
        .find(|(k, _)| k == "content-type")
        .map(|(_, v)| v.to_ascii_lowercase());
    if ct
        .as_deref()
        .is_some_and(|c| c.starts_with("text/event-stream"))
    {
        let (mut events, mut data) = (0usize, false);
        for line in text.lines().chain(std::iter::once("")) {
            if line.is_empty() {
                events += usize::from(data);
                data = false;
            } else {
                data |= line.starts_with("data:");
            }
        }
        if events > limits.sse_events {
            return Some(LimitExceeded::SseEvents {
                limit: limits.sse_events,
            });
        }
        // Each event's data is JSON: the depth scan over the whole stream bounds them all.
    }
    limits::json_deeper_than(text, limits.json_depth).then_some(LimitExceeded::JsonDepth {
        limit: limits.json_depth,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rpc_response_after_start(buf: &[u8]) -> bool {
        rpc_response_after(buf, 0).0
    }

    #[test]
    fn an_event_stream_is_complete_at_its_first_response() {
        assert!(!rpc_response_after_start(
            b"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,"
        ));
        let note = b"data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n";
        assert!(
            !rpc_response_after_start(note),
            "a notification is no response"
        );
        let resp = b"id: 7\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\r\n\r\n";
        assert!(rpc_response_after_start(resp));
        let split = b"data: {\"jsonrpc\":\"2.0\",\ndata: \"id\":2,\"error\":{\"code\":1}}\n\n";
        assert!(
            rpc_response_after_start(split),
            "data lines join with a newline"
        );
        // Scanning resumes where it stopped: the notification is not looked at twice.
        let (found, at) = rpc_response_after(note, 0);
        assert!(!found && at == note.len());
        assert!(rpc_response_after(&[&note[..], &resp[..]].concat(), at).0);
    }
}
