//! The typed golden-vector model (`vectors/README.md`, `format_version` 1).
//!
//! Every object is closed (`deny_unknown_fields`): a typo in a vector is a load error, not a
//! silently ignored expectation.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use regex::Regex;

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use crate::parley::role::Role;
pub use crate::transport::raw::{RawHttp, RawMcp};

/// A vector file (`vectors/<suite>/<area>.json`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VectorFile {
    /// Must be 1.
    pub format_version: u32,
    /// Suite (`parley`).
    pub suite: String,
    /// Area of the design note.
    pub area: String,
    /// The vectors.
    pub vectors: Vec<Vector>,
}

/// One golden vector: a scripted conversation with the target and its expected outcomes.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Vector {
    /// Unique id in the suite (also the test name and the `--filter` key).
    pub id: String,
    /// Requirement IDs checked; the first is the primary one.
    pub requirements: Vec<String>,
    /// One line: what the vector shows.
    pub title: String,
    /// Roles the steps use.
    pub roles: Vec<Role>,
    /// Target features required: `dialectic` / `!dialectic` (the manifest lists the profile or
    /// not), or `<JSON pointer>=<JSON value>`, a value the target's manifest must declare for
    /// the vector to apply (e.g. `/limits/evidence_max=8` for a vector written for the
    /// reference instance's limit). Not met → `unsupported`, never `fail`: the manifest is
    /// authoritative (PV-MF-2), so a server declaring another value is not wrong.
    #[serde(default)]
    pub needs: Vec<String>,
    /// Set when the notes fix nothing for what the vector checks but the check is still worth
    /// having: the reason, shown with every violation, which is then reported as `warn` even
    /// when a cited requirement is a MUST (issue 14: zero false failures).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub advisory: Option<String>,
    /// Run alone, never concurrently with other vectors.
    #[serde(default)]
    pub exclusive: bool,
    /// Steps, in order.
    pub steps: Vec<Step>,
}

/// One request of a vector and what must come back.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Step {
    /// Who sends it.
    #[serde(rename = "as")]
    pub role: Role,
    /// A literal bearer token instead of the role's.
    #[serde(default)]
    pub token: Option<String>,
    /// A binding-neutral operation.
    #[serde(default)]
    pub op: Option<String>,
    /// The operation's arguments.
    #[serde(default)]
    pub args: Option<Value>,
    /// A raw HTTP request (HTTP transport only).
    #[serde(default)]
    pub http: Option<RawHttp>,
    /// A raw JSON-RPC exchange (MCP transport only).
    #[serde(default)]
    pub mcp: Option<RawMcp>,
    /// `inbox` only: follow the cursor until an empty page.
    #[serde(default)]
    pub paginate: bool,
    /// Send the same step this many times.
    #[serde(default)]
    pub repeat: Option<u32>,
    /// With `repeat`: at least one attempt must match this.
    #[serde(default)]
    pub expect_seen: Option<Expect>,
    /// The expected outcome.
    pub expect: Expect,
    /// Values captured from the response body (name → JSON pointer).
    #[serde(default)]
    pub capture: BTreeMap<String, String>,
    /// The requirement IDs an unexpected answer to this step violates, when they are not
    /// the vector's primary one (a set-up step, a step checking a second cited rule).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requirements: Vec<String>,
    /// Free text.
    #[serde(default)]
    pub note: Option<String>,
}

/// What a step sends, once validated (exactly one of `op`, `http`, `mcp`).
#[derive(Debug, Clone, Copy)]
pub enum StepAction<'a> {
    /// A binding-neutral operation.
    Op(&'a str),
    /// Raw HTTP.
    Http(&'a RawHttp),
    /// Raw MCP.
    Mcp(&'a RawMcp),
}

impl Vector {
    /// The requirement IDs a failure at 1-based `step` violates: the step's own, else the
    /// vector's primary one (the first cited). The other cited IDs are not blamed: the
    /// vector did not get to judge them (issue 26).
    pub fn violated_by(&self, step: usize) -> Vec<String> {
        match step.checked_sub(1).and_then(|i| self.steps.get(i)) {
            Some(s) if !s.requirements.is_empty() => s.requirements.clone(),
            _ => self.requirements.iter().take(1).cloned().collect(),
        }
    }
}

impl Step {
    /// The step's action, or `None` when not exactly one of `op`/`http`/`mcp` is set.
    pub fn action(&self) -> Option<StepAction<'_>> {
        match (&self.op, &self.http, &self.mcp) {
            (Some(op), None, None) => Some(StepAction::Op(op)),
            (None, Some(h), None) => Some(StepAction::Http(h)),
            (None, None, Some(m)) => Some(StepAction::Mcp(m)),
            _ => None,
        }
    }
}

/// An expected outcome.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Expect {
    /// A success with a status (HTTP) and an optional partial match of the body.
    Success(ExpectSuccess),
    /// A refusal with status and reason.
    Refusal(ExpectRefusal),
    /// Any one of the alternatives.
    OneOf(ExpectOneOf),
    /// A JSON-RPC error (raw MCP).
    JsonRpcError(ExpectJsonRpc),
    /// Any answer the protocol allows to a hostile request (a promoted fuzz finding).
    WellFormed(ExpectWellFormed),
}

/// `{"well_formed": true}`: the answer passes the fuzzer's oracles — no 5xx, no internals
/// shown, a refusal in the refusal shape (labelled `application/json`, a reason the
/// manifest declares) or a success; on MCP a JSON-RPC response. What the right answer *is*
/// the notes may leave open; that it is well formed they do not.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectWellFormed {
    /// Must be `true`.
    pub well_formed: bool,
    /// Header matchers (HTTP only).
    #[serde(default)]
    pub headers: Option<BTreeMap<String, Value>>,
}

/// `{"status": 201, "match": …, "headers": …}`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectSuccess {
    /// HTTP status (checked on HTTP only; MCP has no status per tool call).
    pub status: u16,
    /// Partial match of the body.
    #[serde(default, rename = "match")]
    pub matcher: Option<Value>,
    /// Header matchers (HTTP only).
    #[serde(default)]
    pub headers: Option<BTreeMap<String, Value>>,
}

/// `{"refusal": {"status", "reason"}, "headers": …}`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectRefusal {
    /// The refusal.
    pub refusal: Refusal,
    /// Header matchers (HTTP only).
    #[serde(default)]
    pub headers: Option<BTreeMap<String, Value>>,
}

/// A refusal's status and machine-readable reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Refusal {
    /// HTTP status (also `error.status` in the body).
    pub status: u16,
    /// `error.reason`.
    pub reason: String,
}

/// `{"one_of": [EXPECT, …]}`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectOneOf {
    /// Alternatives.
    pub one_of: Vec<Expect>,
    /// Header matchers (HTTP only).
    #[serde(default)]
    pub headers: Option<BTreeMap<String, Value>>,
}

/// `{"jsonrpc_error": {"code": -32600}, "http_status_class": 4}`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectJsonRpc {
    /// The JSON-RPC error.
    pub jsonrpc_error: JsonRpcErrorSpec,
    /// Optional HTTP status class (4 = any 4xx).
    #[serde(default)]
    pub http_status_class: Option<u16>,
    /// Header matchers (HTTP only).
    #[serde(default)]
    pub headers: Option<BTreeMap<String, Value>>,
}

/// The expected JSON-RPC error code.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JsonRpcErrorSpec {
    /// JSON-RPC error code.
    pub code: i64,
}

impl Expect {
    /// The header matchers of this expectation, if any.
    pub fn headers(&self) -> Option<&BTreeMap<String, Value>> {
        match self {
            Self::Success(e) => e.headers.as_ref(),
            Self::Refusal(e) => e.headers.as_ref(),
            Self::OneOf(e) => e.headers.as_ref(),
            Self::JsonRpcError(e) => e.headers.as_ref(),
            Self::WellFormed(e) => e.headers.as_ref(),
        }
    }
}

/// One entry of a vector's `needs`, parsed.
#[derive(Debug, Clone, PartialEq)]
pub enum Need {
    /// The manifest enables this profile (`dialectic`).
    Feature(String),
    /// The manifest does not enable this profile (`!dialectic`).
    NoFeature(String),
    /// The manifest declares this value at this JSON pointer (`/limits/evidence_max=8`).
    Declared {
        /// JSON pointer into the manifest.
        pointer: String,
        /// The value the vector was written for.
        value: Value,
    },
}

impl Need {
    /// Parses a `needs` entry; `Err` says why it is malformed.
    pub fn parse(s: &str) -> Result<Self, String> {
        if s.starts_with('/') {
            let Some((pointer, value)) = s.split_once('=') else {
                return Err(format!(
                    "needs {s:?}: a declared value is `<pointer>=<JSON>`"
                ));
            };
            let value = serde_json::from_str(value)
                .map_err(|e| format!("needs {s:?}: the value is not JSON: {e}"))?;
            return Ok(Self::Declared {
                pointer: pointer.to_string(),
                value,
            });
        }
        match s.strip_prefix('!') {
            Some(f) if !f.is_empty() => Ok(Self::NoFeature(f.to_string())),
            None if !s.is_empty() => Ok(Self::Feature(s.to_string())),
            _ => Err(format!("needs {s:?}: empty feature name")),
        }
    }
}

/// The roles whose identity or lock label the vector's steps name (`$identity.<role>`,
/// `${lock_label.<role>}`), in first-use order.
pub fn identity_roles(v: &Vector) -> Result<Vec<String>, String> {
    static PLACEHOLDER: LazyLock<Option<Regex>> =
        LazyLock::new(|| Regex::new(r"\$\{?(?:identity|lock_label)\.([a-z_]+)").ok());
    let re = PLACEHOLDER
        .as_ref()
        .ok_or("the identity placeholder pattern does not compile")?;
    let text = serde_json::to_string(&v.steps).map_err(|e| e.to_string())?;
    let mut out: Vec<String> = Vec::new();
    for c in re.captures_iter(&text) {
        let name = c[1].to_string();
        if !out.contains(&name) {
            out.push(name);
        }
    }
    Ok(out)
}
