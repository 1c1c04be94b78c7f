//! Raw requests: exactly the bytes a check wants on the wire, including malformed ones
//! (the harness must be able to send anything). Vector files embed these shapes.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A raw HTTP request.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawHttp {
    /// Method (any token, even invalid ones are sent as-is when the HTTP stack allows).
    pub method: String,
    /// Path (and query) relative to the target's base URL.
    pub path: String,
    /// Extra headers; `authorization` here overrides the role's token.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// Literal text body.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    /// JSON body (placeholders resolved).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body_json: Option<Value>,
    /// Base64 body (arbitrary bytes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body_base64: Option<String>,
}

/// A raw JSON-RPC exchange with the MCP endpoint.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawMcp {
    /// Literal text body.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    /// JSON body (placeholders resolved; on 2026-07-28 the era's `_meta` is added to a request's params when missing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body_json: Option<Value>,
    /// Extra headers (override the era's).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
}
