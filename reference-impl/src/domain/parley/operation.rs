//! The service contract's wire-neutral types: the nine operations, what a binding extracts
//! from the wire, and what it sends back. Pure data (here in the domain so that the seeded
//! faults' hooks, which sit below the service, take them too).

use std::ops::Deref;
use std::sync::OnceLock;

use serde_json::{Value, json};

/// The nine Parley operations (§1). One MCP tool and one HTTP route each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operation {
    /// `get_manifest` (no token).
    GetManifest,
    /// `whoami` (any valid token).
    Whoami,
    /// `post` (write).
    Post,
    /// `read_thread` (read).
    ReadThread,
    /// `list_events` (read).
    ListEvents,
    /// `inbox` (read).
    Inbox,
    /// `mark` (write + thread authority).
    Mark,
    /// `reopen` (write + PV-AU-3).
    Reopen,
    /// `read_claim` (read, dialectic).
    ReadClaim,
}

impl Operation {
    /// Every operation, in the order of §1.
    pub const ALL: [Self; 9] = [
        Self::GetManifest,
        Self::Whoami,
        Self::Post,
        Self::ReadThread,
        Self::ListEvents,
        Self::Inbox,
        Self::Mark,
        Self::Reopen,
        Self::ReadClaim,
    ];

    /// The operation name (= MCP tool name).
    pub fn tool_name(self) -> &'static str {
        match self {
            Self::GetManifest => "get_manifest",
            Self::Whoami => "whoami",
            Self::Post => "post",
            Self::ReadThread => "read_thread",
            Self::ListEvents => "list_events",
            Self::Inbox => "inbox",
            Self::Mark => "mark",
            Self::Reopen => "reopen",
            Self::ReadClaim => "read_claim",
        }
    }

    /// Inverse of [`Operation::tool_name`].
    pub fn from_tool_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|op| op.tool_name() == name)
    }

    /// Whether the operation needs a bearer token (all but `get_manifest`, PV-TR-4).
    pub fn needs_token(self) -> bool {
        self != Self::GetManifest
    }

    /// Whether the operation names stored records (thread, message, claim) that may not
    /// exist (→ 404, PV-EN-5, PV-DI-7).
    pub fn names_records(self) -> bool {
        !matches!(self, Self::GetManifest | Self::Whoami | Self::Inbox)
    }

    /// Operations that write (quota-counted, PV-TR-5; need `write`, PV-AU-1).
    pub fn is_write(self) -> bool {
        matches!(self, Self::Post | Self::Mark | Self::Reopen)
    }
}

/// The `Authorization` header as the binding saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BearerToken {
    /// `Bearer <token>`.
    Token(String),
    /// Any other scheme or garbage (→ 401 `token_invalid`).
    Malformed,
}

/// Whether a POST body was declared JSON (PV-RS-4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContentType {
    /// `application/json` (or `+json`).
    Json,
    /// A body with a missing or non-JSON content type (→ 415).
    NotJson,
    /// MCP, or a request without a body.
    NotApplicable,
}

/// The operation's arguments.
#[derive(Debug, Clone, PartialEq)]
pub enum Args {
    /// HTTP: path params + query + JSON body merged into one object; MCP: tool `arguments`.
    Json(Value),
    /// The body could not be parsed as JSON or was not UTF-8 (→ 400 `invalid_body`).
    Malformed(String),
}

/// What a binding extracted from the wire. The service applies the whole check order of
/// PV-AU-6, so both bindings necessarily agree (PV-TR-1).
#[derive(Debug, Clone)]
pub struct Request {
    /// Which operation.
    pub op: Operation,
    /// `Authorization`: `None` = absent.
    pub auth: Option<BearerToken>,
    /// Arguments.
    pub args: Args,
    /// Size in bytes of the request body as received (→ 413 over `request_max_bytes`).
    pub body_len: usize,
    /// Content type of a POST body.
    pub content_type: ContentType,
}

/// Success or refusal. A refusal body is exactly `{"error": {"reason", "status", "message"}}`
/// (PV-TR-2, PV-TR-3).
#[derive(Debug, Clone, PartialEq)]
pub struct Response {
    /// HTTP status (201 for post, 200 for other successes, §10 statuses for refusals).
    pub status: u16,
    /// JSON body (MCP `structuredContent`).
    pub body: Body,
    /// `Retry-After` seconds for 429.
    pub retry_after_secs: Option<u64>,
}

impl Response {
    /// True for refusals (status ≥ 400): MCP `isError: true`.
    pub fn is_refusal(&self) -> bool {
        self.status >= 400
    }

    /// A refusal with the §10 body.
    pub fn refusal(status: u16, reason: &str, message: impl Into<String>) -> Self {
        Self {
            status,
            body: json!({"error": {"reason": reason, "status": status, "message": message.into()}})
                .into(),
            retry_after_secs: None,
        }
    }

    /// A success.
    pub fn ok(status: u16, body: impl Into<Body>) -> Self {
        Self {
            status,
            body: body.into(),
            retry_after_secs: None,
        }
    }

    /// The refusal's `reason`, if this is a refusal (handy for tests and logs).
    pub fn reason(&self) -> Option<&str> {
        if self.is_refusal() {
            self.body["error"]["reason"].as_str()
        } else {
            None
        }
    }
}

/// A response body: a tree of values, or JSON already encoded (`read_thread` and a plain
/// post's 201 body, written straight from their rows without building a tree). Read as a
/// tree, an encoded body is parsed once, on first use: the MCP binding's
/// `structuredContent`, the SSP skill that reads a thread, tests.
#[derive(Debug, Clone)]
pub enum Body {
    /// A tree of values.
    Tree(Value),
    /// Compact JSON text, with its tree once parsed.
    Encoded {
        /// The JSON text sent.
        json: String,
        /// The parsed tree, once asked for.
        tree: OnceLock<Value>,
    },
}

impl Body {
    /// A body already encoded as JSON text.
    pub fn encoded(json: String) -> Self {
        Self::Encoded {
            json,
            tree: OnceLock::new(),
        }
    }

    /// A body written by `Serialize` straight to text (the service's renderers: strings,
    /// numbers and derived impls, so serialising cannot fail; `{}` if it ever did).
    pub fn serialized(body: &impl serde::Serialize) -> Self {
        Self::encoded(serde_json::to_string(body).unwrap_or_else(|_| "{}".into()))
    }

    /// The body as its text and its tree of values (the MCP binding sends both).
    pub fn into_text_and_value(self) -> (String, Value) {
        match self {
            Self::Tree(v) => (v.to_string(), v),
            Self::Encoded { json, tree } => {
                let v = tree.into_inner().unwrap_or_else(|| parse(&json));
                (json, v)
            }
        }
    }

    /// The body as a tree of values.
    pub fn into_value(self) -> Value {
        match self {
            Self::Tree(v) => v,
            Self::Encoded { json, tree } => tree.into_inner().unwrap_or_else(|| parse(&json)),
        }
    }

    /// The body as compact JSON bytes (encoded once, whichever form it has).
    pub fn into_bytes(self) -> Vec<u8> {
        match self {
            // A tree of values always serialises.
            Self::Tree(v) => serde_json::to_vec(&v).unwrap_or_else(|_| b"{}".to_vec()),
            Self::Encoded { json, .. } => json.into_bytes(),
        }
    }
}

/// An encoded body is only ever written by the service's renderer, so it parses, and it
/// nests within serde_json's 128 levels: `Limits::reply_depth_max` exists to keep every
/// `read_thread` body within them (the service test `reply_depth_limit_keeps_bodies_parseable`
/// pins it). `null` is never seen.
fn parse(json: &str) -> Value {
    serde_json::from_str(json).unwrap_or(Value::Null)
}

impl Deref for Body {
    type Target = Value;
    fn deref(&self) -> &Value {
        match self {
            Self::Tree(v) => v,
            Self::Encoded { json, tree } => tree.get_or_init(|| parse(json)),
        }
    }
}

/// The compact JSON text, as `Value`'s `Display` writes it.
impl std::fmt::Display for Body {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Tree(v) => v.fmt(f),
            Self::Encoded { json, .. } => f.write_str(json),
        }
    }
}

impl From<Value> for Body {
    fn from(v: Value) -> Self {
        Self::Tree(v)
    }
}

impl PartialEq for Body {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl PartialEq<Value> for Body {
    fn eq(&self, other: &Value) -> bool {
        **self == *other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_names_roundtrip() {
        for op in Operation::ALL {
            assert_eq!(Operation::from_tool_name(op.tool_name()), Some(op));
        }
        assert_eq!(Operation::from_tool_name("nope"), None);
    }
}
