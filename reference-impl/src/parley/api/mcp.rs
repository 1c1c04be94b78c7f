//! Parley MCP binding: `POST /mcp` (Streamable HTTP, stateless) and stdio.
//!
//! One tool per operation ([`Operation::tool_name`]). A tool call becomes the same
//! [`Request`] the HTTP binding builds — token from the `Authorization` header, arguments
//! from the tool `arguments`, body size = the JSON-RPC HTTP body — so both bindings give the
//! same outcome (PV-TR-1). A refusal is a tool result with `isError: true` and
//! `structuredContent: {"error": {...}}`, the same JSON as text in `content[0]` (PV-TR-2);
//! JSON-RPC errors are reserved for protocol faults.
//!
//! Both MCP eras share the endpoint: the legacy one (2025-11-25, `initialize` /
//! `notifications/initialized`, served without server-side sessions) and the current one
//! (2026-07-28: no handshake, per-request `_meta`, `server/discover`); rmcp routes each
//! request by its own version signals. rmcp answers bodies it cannot parse with a
//! plain-text 415, so [`routes`] puts a validating front in front of it: invalid JSON →
//! HTTP 400 + `-32700`, valid JSON that is not a JSON-RPC request (`id: null`, wrong
//! `jsonrpc`, batch arrays — both served eras removed batching) → HTTP 400 + `-32600`,
//! oversized → 413 + a JSON-RPC error; any other plain-text error rmcp produces is wrapped
//! into a JSON-RPC error object with the same status.

use std::borrow::Cow;
use std::sync::Arc;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::Request as HttpRequest;
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response as HttpResponse};
use axum::routing::any;
use http_body_util::BodyExt;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientJsonRpcMessage, ContentBlock,
    Implementation, InitializeRequestParams, JsonObject, ListToolsResult, PaginatedRequestParams,
    ProtocolVersion, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};
use serde::Deserialize as _;
use serde_json::{Value, json};

use super::http::{BodyError, call_service, read_capped};
use super::{HARD_BODY_CAP, bearer_from_headers};
use crate::parley::service::{
    Args, BearerToken, ContentType, Operation, ParleyService, Request, Response,
};

/// The MCP revisions served on `/mcp` and over stdio, oldest first (and declared in the
/// manifest's `bindings.mcp.revisions`).
///
/// `initialize` answers with the client's version when it is one of the three handshake
/// revisions here (MCP lifecycle, "Version Negotiation"), else with the newest of them,
/// 2025-11-25. 2025-03-26 is the oldest revision with the Streamable HTTP transport this
/// endpoint speaks (2024-11-05 had HTTP+SSE), and what the tools return is valid in each:
/// `structuredContent` (2025-06-18 onward) is an extra member an older client ignores.
pub const PROTOCOL_VERSIONS: &[ProtocolVersion] = &[
    ProtocolVersion::V_2025_03_26,
    ProtocolVersion::V_2025_06_18,
    ProtocolVersion::V_2025_11_25,
    ProtocolVersion::V_2026_07_28,
];

/// JSON-RPC 2.0 error codes used by the validating front (open set, documented constants).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JsonRpcCode(pub i64);

impl JsonRpcCode {
    /// The body is not JSON (or not UTF-8).
    pub const PARSE_ERROR: Self = Self(-32700);
    /// The JSON is not a valid JSON-RPC 2.0 request.
    pub const INVALID_REQUEST: Self = Self(-32600);
    /// The method does not exist.
    pub const METHOD_NOT_FOUND: Self = Self(-32601);
    /// Invalid method parameters (also: unknown tool).
    pub const INVALID_PARAMS: Self = Self(-32602);
    /// Internal error.
    pub const INTERNAL_ERROR: Self = Self(-32603);
}

/// Size of the JSON-RPC HTTP body a tool call arrived in, carried from the validating
/// front to the handler through the request extensions (→ [`Request::body_len`]).
#[derive(Debug, Clone, Copy)]
pub struct McpBodyLen(pub usize);

/// The rmcp server handler: lists the nine tools and forwards calls to the service.
#[derive(Clone)]
pub struct ParleyMcp {
    service: ParleyService,
    /// Token used when a call carries no HTTP parts (stdio: `PARLEY_TOKEN`).
    stdio_token: Option<String>,
    tools: Arc<[Tool]>,
}

impl std::fmt::Debug for ParleyMcp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ParleyMcp").finish_non_exhaustive()
    }
}

impl ParleyMcp {
    /// A handler over `service`; `stdio_token` authenticates calls that have no HTTP
    /// `Authorization` header to read (stdio transport).
    pub fn new(service: ParleyService, stdio_token: Option<String>) -> Self {
        Self {
            service,
            stdio_token,
            tools: tools().into(),
        }
    }
}

impl ServerHandler for ParleyMcp {
    fn get_info(&self) -> ServerConfig {
        let mut info = ServerConfig::new(ServerCapabilities::builder().enable_tools().build());
        info.server_info =
            Implementation::new("conform-reference-server", env!("CARGO_PKG_VERSION"));
        info.instructions = Some(
            "Parley v1 forum. Call get_manifest first: it lists the operations, limits, kinds \
             and refusal reasons. Over HTTP authenticate with an `Authorization: Bearer <token>` \
             header; over stdio every call uses the server's PARLEY_TOKEN."
                .into(),
        );
        info
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(PROTOCOL_VERSIONS)
    }

    /// One page holds every tool, so no cursor is ever issued: a request carrying one is
    /// refused with -32602 (MCP 2025-11-25 basic/utilities/pagination: "Invalid cursors
    /// SHOULD result in an error with code -32602"), never answered as if it were absent.
    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        if let Some(cursor) = request.and_then(|r| r.cursor) {
            return Err(McpError::invalid_params(
                format!("unknown cursor {cursor:?}: tools/list issues none"),
                None,
            ));
        }
        Ok(ListToolsResult::with_all_items(self.tools.to_vec()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools.iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        // An unknown tool is a protocol fault, not a refusal (PV-TR-2): JSON-RPC -32602.
        let Some(op) = Operation::from_tool_name(&request.name) else {
            return Err(McpError::invalid_params(
                format!("unknown tool `{}`; see tools/list", request.name),
                None,
            ));
        };
        let parts = context.extensions.get::<axum::http::request::Parts>();
        let auth = match parts {
            Some(parts) => bearer_from_headers(&parts.headers),
            None => self.stdio_token.clone().map(BearerToken::Token),
        };
        let args = match parts.and_then(|p| p.extensions.get::<McpMalformedArguments>()) {
            Some(why) => Args::Malformed(why.0.clone()),
            None => Args::Json(Value::Object(request.arguments.clone().unwrap_or_default())),
        };
        let body_len = parts
            .and_then(|p| p.extensions.get::<McpBodyLen>())
            .map(|len| len.0)
            // stdio: no HTTP body; the serialized call parameters are the closest measure.
            .unwrap_or_else(|| serde_json::to_vec(&request).map(|v| v.len()).unwrap_or(0));
        let req = Request {
            op,
            auth,
            args,
            body_len,
            content_type: ContentType::NotApplicable,
        };
        Ok(CallToolResponse::Complete(tool_result(
            call_service(self.service.clone(), req).await,
        )))
    }
}

/// PV-TR-2: success → `structuredContent` = body; refusal → `isError: true` with the
/// refusal body; `content[0]` is the same JSON as text in both cases.
pub fn tool_result(resp: Response) -> CallToolResult {
    let refused = resp.is_refusal();
    // The body's own text: an encoded body is not written a second time from its values.
    let (text, value) = resp.body.into_text_and_value();
    let content = vec![ContentBlock::text(text)];
    let mut result = if refused {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    };
    result.structured_content = Some(value);
    result
}

fn schema(value: Value) -> Arc<JsonObject> {
    match value {
        Value::Object(map) => Arc::new(map),
        // Every literal below is an object; an empty schema object is the safe fallback.
        _ => Arc::new(JsonObject::new()),
    }
}

/// The nine tools with their input schemas (argument names as in parley-v1.md §1, §3).
pub fn tools() -> Vec<Tool> {
    let id = json!({"type": ["string", "integer"], "description": "opaque key (th_12) or number"});
    let party = json!({
        "type": "object",
        "properties": {"extension": {"type": "string"}},
    });
    let evidence = json!({
        "type": "array",
        "items": {
            "type": "object",
            "properties": {
                "kind": {"type": "string", "enum": ["url", "hash", "artifact", "commit", "log", "reproducer", "note", "other"]},
                "ref": {"type": "string"},
                "note": {"type": "string"}
            },
            "required": ["kind", "ref"]
        }
    });
    Operation::ALL
        .iter()
        .map(|&op| {
            let (description, input) = match op {
                Operation::GetManifest => (
                    "The server's manifest: limits, kinds, states, profiles, operations, reasons (no token needed).",
                    json!({"type": "object", "properties": {}}),
                ),
                Operation::Whoami => (
                    "The caller's identity, rights, lock label and write quota.",
                    json!({"type": "object", "properties": {}}),
                ),
                Operation::Post => (
                    "Post a message (the envelope): one of the speech acts; opens a thread when sent without thread/parent by an opening kind.",
                    json!({
                        "type": "object",
                        "properties": {
                            "parley": {"type": "string", "const": "1"},
                            "kind": {"type": "string"},
                            "thread": id,
                            "parent": id,
                            "from": party,
                            "body": {"type": "string"},
                            "provenance": {"type": "object", "properties": {"model": {"type": "string"}, "client": {"type": "string"}}},
                            "evidence": evidence,
                            "claim": {"type": "string"},
                            "supersedes": {"type": "array", "items": {"type": "string"}},
                            "valid_until": {"type": "string", "format": "date-time"}
                        },
                        "required": ["kind", "body"]
                    }),
                ),
                Operation::ReadThread => (
                    "A thread and its messages as a tree.",
                    json!({"type": "object", "properties": {"thread": id}, "required": ["thread"]}),
                ),
                Operation::ListEvents => (
                    "The state-change events of a thread, optionally after the event `since`.",
                    json!({"type": "object", "properties": {"thread": id, "since": {"type": "string"}}, "required": ["thread"]}),
                ),
                Operation::Inbox => (
                    "Threads awaiting a reply from the caller, oldest activity first, with a cursor.",
                    json!({"type": "object", "properties": {
                        "since": {"type": "string"},
                        "extension": {"type": "string"},
                        "limit": {"type": ["integer", "string"]}
                    }}),
                ),
                Operation::Mark => (
                    "Set a thread's state (forward or lateral); needs thread authority.",
                    json!({"type": "object", "properties": {"thread": id, "state": {"type": "string"}}, "required": ["thread", "state"]}),
                ),
                Operation::Reopen => (
                    "Reopen a closed or lateral thread.",
                    json!({"type": "object", "properties": {"thread": id}, "required": ["thread"]}),
                ),
                Operation::ReadClaim => (
                    "A dialectic claim with its evidence, attestations and refutations.",
                    json!({"type": "object", "properties": {"claim": {"type": "string"}}, "required": ["claim"]}),
                ),
            };
            Tool::new(op.tool_name(), description, schema(input))
        })
        .collect()
}

/// The `/mcp` route (any method; only POST is served, others get 405).
///
/// rmcp's own `Host` check is off: the server's rebinding layer
/// (`crate::server::rebinding`) checks `Host` and `Origin` on every route, this one included.
pub fn routes(service: ParleyService) -> Router {
    let handler = ParleyMcp::new(service, None);
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_sse_keep_alive(None)
        .with_max_request_body_bytes(HARD_BODY_CAP)
        .disable_allowed_hosts();
    let rmcp = StreamableHttpService::new(
        move || Ok(handler.clone()),
        Arc::new(NeverSessionManager::default()),
        config,
    );
    Router::new().route(
        "/mcp",
        any(move |req: HttpRequest| {
            let rmcp = rmcp.clone();
            async move { front(rmcp, req).await }
        }),
    )
}

type Rmcp = StreamableHttpService<ParleyMcp, NeverSessionManager>;

/// A refusal the front sends instead of passing the request on; boxed, as a response is too
/// large to travel in an `Err` unboxed.
type Refusal = Box<HttpResponse>;

/// A JSON-RPC error response (`id` null when unknown) with an HTTP status.
pub fn jsonrpc_error(
    status: StatusCode,
    id: Value,
    code: JsonRpcCode,
    message: &str,
) -> HttpResponse {
    let body = json!({"jsonrpc": "2.0", "id": id, "error": {"code": code.0, "message": message}});
    let mut resp = (status, body.to_string()).into_response();
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    resp
}

/// The validating front of `/mcp` (see the module docs). The order of the checks is
/// normative: it decides which refusal wins when several apply.
async fn front(rmcp: Rmcp, req: HttpRequest) -> HttpResponse {
    if req.method() != Method::POST {
        return method_not_allowed();
    }
    let (mut parts, body) = req.into_parts();
    let bytes = match read_body(body).await {
        Ok(b) => b,
        Err(refusal) => return *refusal,
    };
    if let Err(refusal) = validate(&mut parts, &bytes) {
        return *refusal;
    }
    relax_accept(&mut parts.headers);
    parts.extensions.insert(McpBodyLen(bytes.len()));
    let resp = rmcp
        .handle(HttpRequest::from_parts(parts, Body::from(bytes)))
        .await;
    wrap_plain_errors(resp).await
}

/// 405 with `Allow: POST`: the endpoint is stateless, so there is no GET stream or DELETE.
fn method_not_allowed() -> HttpResponse {
    let mut resp = super::http::into_http(Response::refusal(
        405,
        "method_not_allowed",
        "the MCP endpoint is stateless and only accepts POST",
    ));
    resp.headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static("POST"));
    resp
}

/// Reads the capped body; an oversized or broken one is refused before any parsing.
async fn read_body(body: Body) -> Result<Bytes, Refusal> {
    match read_capped(body).await {
        Ok(b) => Ok(b),
        Err(BodyError::TooLarge) => Err(Box::new(jsonrpc_error(
            StatusCode::PAYLOAD_TOO_LARGE,
            Value::Null,
            JsonRpcCode::INVALID_REQUEST,
            &format!("payload_too_large: request body exceeds {HARD_BODY_CAP} bytes"),
        ))),
        Err(BodyError::Io(msg)) => Err(Box::new(jsonrpc_error(
            StatusCode::BAD_REQUEST,
            Value::Null,
            JsonRpcCode::PARSE_ERROR,
            &msg,
        ))),
    }
}

/// The checks on a read body, in the front's normative order; `Err` is the refusal to send.
/// A duplicate inside a tool's arguments is not refused here but marked on `parts`.
fn validate(parts: &mut Parts, bytes: &[u8]) -> Result<(), Refusal> {
    if !is_json_content_type(&parts.headers) {
        return Err(Box::new(jsonrpc_error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Value::Null,
            JsonRpcCode::INVALID_REQUEST,
            "Content-Type must be application/json",
        )));
    }
    let value = parse_body(bytes)?;
    check_duplicates(parts, bytes, &value)?;
    if let Err((id, message)) = check_envelope(&value) {
        return Err(Box::new(jsonrpc_error(
            StatusCode::BAD_REQUEST,
            id,
            JsonRpcCode::INVALID_REQUEST,
            &message,
        )));
    }
    if let Err(message) = check_params(&value) {
        return Err(Box::new(invalid_params(&value, &message)));
    }
    // Deserialize from the borrowed value: no copy of a body of up to 1 MiB.
    if let Err(e) = ClientJsonRpcMessage::deserialize(&value) {
        return Err(Box::new(invalid_params(
            &value,
            &format!("Invalid params: {e}"),
        )));
    }
    match check_version_header(&parts.headers, &value) {
        Some(refusal) => Err(Box::new(refusal)),
        None => Ok(()),
    }
}

/// The body as JSON; anything else is a JSON-RPC parse error (`-32700`).
fn parse_body(bytes: &[u8]) -> Result<Value, Refusal> {
    serde_json::from_slice(bytes).map_err(|e| {
        Box::new(jsonrpc_error(
            StatusCode::BAD_REQUEST,
            Value::Null,
            JsonRpcCode::PARSE_ERROR,
            &format!("Parse error: {e}"),
        ))
    })
}

/// A repeated member name: inside a tool's arguments it is marked on `parts`, so the
/// operation refuses it later; in the envelope it is an invalid request, refused now.
fn check_duplicates(parts: &mut Parts, bytes: &[u8], value: &Value) -> Result<(), Refusal> {
    let Some(path) = crate::api::duplicates::first_duplicate(bytes) else {
        return Ok(());
    };
    match duplicate_in_arguments(value, &path) {
        // Inside the tool's arguments: the operation's malformed body (`invalid_body`)
        // at its place in the check order, as on HTTP.
        Some(message) => {
            parts.extensions.insert(McpMalformedArguments(message));
            Ok(())
        }
        None => {
            let id = (path[0] != "id")
                .then(|| value.get("id").filter(|id| id_ok(id)).cloned())
                .flatten()
                .unwrap_or(Value::Null);
            Err(Box::new(jsonrpc_error(
                StatusCode::BAD_REQUEST,
                id,
                JsonRpcCode::INVALID_REQUEST,
                &format!(
                    "Invalid Request: duplicate member name `{}`",
                    path.join(".")
                ),
            )))
        }
    }
}

/// HTTP 400 + `-32602`, echoing the request's id as sent.
fn invalid_params(value: &Value, message: &str) -> HttpResponse {
    let id = value.get("id").cloned().unwrap_or(Value::Null);
    jsonrpc_error(
        StatusCode::BAD_REQUEST,
        id,
        JsonRpcCode::INVALID_PARAMS,
        message,
    )
}

/// Streamable HTTP transport, "Protocol Version Header": a request whose
/// `MCP-Protocol-Version` names a revision this endpoint does not serve → HTTP 400, with the
/// JSON-RPC error `-32022` (unsupported protocol version, `data: {requested, supported}`).
/// rmcp already refuses unknown strings, but accepts every revision it knows, 2024-11-05
/// (HTTP+SSE, not this transport) included. A request that carries its version in `_meta`
/// (2026-07-28) is left to rmcp, which checks the header against it (header mismatch).
/// `Some` is the refusal to send.
fn check_version_header(headers: &HeaderMap, value: &Value) -> Option<HttpResponse> {
    let header = headers.get("mcp-protocol-version")?;
    let per_request = value
        .pointer("/params/_meta/io.modelcontextprotocol~1protocolVersion")
        .is_some();
    let requested = header.to_str().unwrap_or("");
    if per_request || PROTOCOL_VERSIONS.iter().any(|v| v.as_str() == requested) {
        return None;
    }
    let id = value
        .get("id")
        .filter(|id| id_ok(id))
        .cloned()
        .unwrap_or(Value::Null);
    let supported: Vec<&str> = PROTOCOL_VERSIONS
        .iter()
        .map(ProtocolVersion::as_str)
        .collect();
    let error = json!({
        "code": rmcp::model::ErrorCode::UNSUPPORTED_PROTOCOL_VERSION.0,
        "message": format!("Unsupported MCP-Protocol-Version: {requested:?}"),
        "data": {"requested": requested, "supported": supported},
    });
    let body = json!({"jsonrpc": "2.0", "id": id, "error": error});
    let mut resp = (StatusCode::BAD_REQUEST, body.to_string()).into_response();
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    Some(resp)
}

/// Stricter than [`crate::api::is_json_media_type`] on purpose: the MCP Streamable HTTP transport
/// speaks exactly `application/json`, and rmcp refuses anything else.
fn is_json_content_type(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .eq_ignore_ascii_case("application/json")
        })
}

/// JSON-RPC 2.0 envelope rules the MCP eras served here require of one message.
/// `Err((id to echo, message))` → `-32600 Invalid Request`.
fn check_envelope(value: &Value) -> Result<(), (Value, String)> {
    let Value::Object(obj) = value else {
        let what = if value.is_array() {
            "batch arrays are not supported (removed from MCP in 2025-06-18; both served revisions lack them)"
        } else {
            "a JSON-RPC message must be a JSON object"
        };
        return Err((Value::Null, format!("Invalid Request: {what}")));
    };
    let id = obj.get("id");
    let echo = id.filter(|id| id_ok(id)).cloned().unwrap_or(Value::Null);
    if obj.get("jsonrpc") != Some(&Value::from("2.0")) {
        return Err((echo, "Invalid Request: `jsonrpc` must be \"2.0\"".into()));
    }
    if let Some(id) = id
        && !id_ok(id)
    {
        return Err((
            Value::Null,
            "Invalid Request: `id` must be a string or an integer within the signed 64-bit \
             range (null is not allowed)"
                .into(),
        ));
    }
    match obj.get("method") {
        Some(Value::String(_)) => {
            if let Some(params) = obj.get("params")
                && !params.is_object()
            {
                return Err((echo, "Invalid Request: `params` must be an object".into()));
            }
            Ok(())
        }
        Some(_) => Err((echo, "Invalid Request: `method` must be a string".into())),
        None => {
            // A response or error object from the client: let rmcp answer it (it refuses
            // them in stateless mode with a JSON-RPC error of its own).
            if id.is_some() && (obj.contains_key("result") ^ obj.contains_key("error")) {
                Ok(())
            } else {
                Err((echo, "Invalid Request: missing `method`".into()))
            }
        }
    }
}

/// An id this server can echo: a string or an integer in the `i64` range (rmcp's request
/// id). A larger integer would be read by the front and refused by rmcp with `-32602`.
fn id_ok(id: &Value) -> bool {
    id.is_string() || id.is_i64()
}

/// Marks a tool call whose `arguments` repeat a member name (→ `Args::Malformed`).
#[derive(Debug, Clone)]
pub struct McpMalformedArguments(pub String);

/// The refusal message when the duplicate member `path` lies inside a `tools/call`'s
/// `arguments`; `None` when it is part of the JSON-RPC envelope.
fn duplicate_in_arguments(value: &Value, path: &[String]) -> Option<String> {
    let in_arguments = value.get("method").and_then(Value::as_str) == Some("tools/call")
        && path.len() > 2
        && path[0] == "params"
        && path[1] == "arguments";
    in_arguments.then(|| format!("duplicate member name `{}`", path[2..].join(".")))
}

/// Params of the methods whose malformed params rmcp would read as a custom request and
/// answer `-32601`: JSON-RPC calls them invalid params (`-32602`, PV-TR-2).
fn check_params(value: &Value) -> Result<(), String> {
    match value.get("method").and_then(Value::as_str) {
        Some("tools/call") => check_tool_call_params(value),
        Some("initialize") => {
            let params = value.get("params").unwrap_or(&Value::Null);
            InitializeRequestParams::deserialize(params).map(|_| ()).map_err(|e| {
                format!(
                    "Invalid params: initialize needs params {{protocolVersion, capabilities, clientInfo}}: {e}"
                )
            })
        }
        _ => Ok(()),
    }
}

/// `tools/call` needs `params.name` (string) and, when present, `params.arguments`
/// (object).
fn check_tool_call_params(value: &Value) -> Result<(), String> {
    let Some(params) = value.get("params") else {
        return Err("Invalid params: tools/call needs params {name, arguments}".into());
    };
    if !params.get("name").is_some_and(Value::is_string) {
        return Err("Invalid params: tools/call needs a string `name`".into());
    }
    match params.get("arguments") {
        None | Some(Value::Null | Value::Object(_)) => Ok(()),
        Some(_) => Err("Invalid params: tools/call `arguments` must be an object".into()),
    }
}

/// rmcp requires `Accept` to list both `application/json` and `text/event-stream`. This
/// server always answers JSON (`json_response`), so a client that sends no `Accept`, `*/*`
/// or only `application/json` (curl, plain HTTP clients) is served as well.
fn relax_accept(headers: &mut HeaderMap) {
    let accept: Vec<String> = headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|v| {
            v.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase()
        })
        .collect();
    let lenient = accept.is_empty()
        || accept
            .iter()
            .any(|a| a == "*/*" || a == "application/json" || a == "application/*");
    if lenient {
        headers.insert(
            header::ACCEPT,
            HeaderValue::from_static("application/json, text/event-stream"),
        );
    }
}

/// Turns any non-JSON error rmcp produced (plain-text 400/403/404/406/415/500) into a
/// JSON-RPC error object with the same HTTP status.
async fn wrap_plain_errors(
    resp: axum::http::Response<
        http_body_util::combinators::BoxBody<axum::body::Bytes, std::convert::Infallible>,
    >,
) -> HttpResponse {
    let status = resp.status();
    let is_json = resp
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json") || v.starts_with("text/event-stream"));
    if !(status.is_client_error() || status.is_server_error()) || is_json {
        return resp.map(Body::new).into_response();
    }
    let (parts, body) = resp.into_parts();
    let text = match body.collect().await {
        Ok(c) => String::from_utf8_lossy(&c.to_bytes()).into_owned(),
        Err(never) => match never {},
    };
    let code = if status.is_server_error() {
        JsonRpcCode::INTERNAL_ERROR
    } else {
        JsonRpcCode::INVALID_REQUEST
    };
    let mut out = jsonrpc_error(status, Value::Null, code, &text);
    for (name, value) in parts.headers.iter() {
        if name != header::CONTENT_TYPE && name != header::CONTENT_LENGTH {
            out.headers_mut().insert(name.clone(), value.clone());
        }
    }
    out
}

/// Why the stdio server stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum StdioError {
    /// The MCP session could not be established (handshake failed, stdin closed early).
    #[error("mcp stdio: {0}")]
    Serve(String),
}

/// Serves MCP over stdin/stdout until the client closes stdin. Every call is authenticated
/// with `token` (the `PARLEY_TOKEN` environment variable of `reference-server stdio`),
/// since stdio carries no `Authorization` header.
pub async fn serve_stdio(service: ParleyService, token: Option<String>) -> Result<(), StdioError> {
    let handler = ParleyMcp::new(service, token);
    let running = handler
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| StdioError::Serve(e.to_string()))?;
    running
        .waiting()
        .await
        .map_err(|e| StdioError::Serve(e.to_string()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn envelope_rules() {
        assert!(
            check_envelope(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})).is_ok()
        );
        assert!(
            check_envelope(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
                .is_ok()
        );
        assert!(check_envelope(&json!({"jsonrpc": "2.0", "id": null, "method": "x"})).is_err());
        assert!(check_envelope(&json!({"jsonrpc": "1.0", "id": 1, "method": "x"})).is_err());
        assert!(check_envelope(&json!({"id": 1, "method": "x"})).is_err());
        assert!(check_envelope(&json!([{"jsonrpc": "2.0", "id": 1, "method": "x"}])).is_err());
        assert!(check_envelope(&json!({"jsonrpc": "2.0", "id": 1.5, "method": "x"})).is_err());
        assert!(check_envelope(&json!({"jsonrpc": "2.0", "id": 1, "method": 3})).is_err());
        assert!(
            check_envelope(&json!({"jsonrpc": "2.0", "id": 1, "method": "x", "params": []}))
                .is_err()
        );
        assert!(check_envelope(&json!("hello")).is_err());
    }

    #[test]
    fn manifest_declares_the_served_revisions() {
        let served: Vec<&str> = PROTOCOL_VERSIONS
            .iter()
            .map(ProtocolVersion::as_str)
            .collect();
        assert_eq!(served, crate::domain::parley::manifest::MCP_REVISIONS);
    }

    #[test]
    fn nine_tools_named_after_operations() {
        let tools = tools();
        assert_eq!(tools.len(), 9);
        for (tool, op) in tools.iter().zip(Operation::ALL) {
            assert_eq!(tool.name, op.tool_name());
        }
    }
}
