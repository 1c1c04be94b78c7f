//! SSP execution lifecycle rules (pure, no IO).
//!
//! Everything here is a decision over plain values so it can be tested exhaustively:
//! the execution status machine (SSP-INV-3), input validation against the skill's
//! `ParameterDefinition`s producing the seed's §8.3.1 `details` array (SSP-INV-2), the
//! per-skill authentication decision (SSP-AUTH-1..4), and the effective timeout
//! (SSP-INV-5). The provider (`crate::ssp`) does the IO around these decisions.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

/// Protocol error codes of seed §8.1: every SSP error, HTTP answers and the `error` of a
/// failed or timed-out execution alike, uses one of these seven (seed §8.2, SSP-ERR-3).
pub mod codes {
    /// Local / 400: the request or a document breaks the schema (seed §8.3.1).
    pub const VALIDATION_ERROR: &str = "VALIDATION_ERROR";
    /// 401: credentials missing or invalid (seed §8.3.2).
    pub const AUTH_REQUIRED: &str = "AUTH_REQUIRED";
    /// 403: credentials valid, permission missing (seed §8.3.3).
    pub const PERMISSION_DENIED: &str = "PERMISSION_DENIED";
    /// 404: unknown skill, descriptor, route or execution (seed §8.3.4).
    pub const SKILL_NOT_FOUND: &str = "SKILL_NOT_FOUND";
    /// The execution overran its effective timeout (seed §8.3.5; the seed wins over the
    /// upstream `EXECUTION_TIMEOUT`, ssp.md §1).
    pub const INVOCATION_TIMEOUT: &str = "INVOCATION_TIMEOUT";
    /// 502/503: the provider cannot serve the endpoint (seed §8.3.6). SSP-ERR-3's table also
    /// gives it to a 429, a 500 and a skill that ran and failed: the seven have no other.
    pub const ENDPOINT_UNREACHABLE: &str = "ENDPOINT_UNREACHABLE";
}

/// Seed §3.4.4 execution status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ExecutionStatus {
    /// The invocation was accepted (every execution starts here, SSP-INV-1).
    Accepted,
    /// The skill is executing.
    Running,
    /// Finished with an output.
    Completed,
    /// Finished with an error.
    Failed,
    /// Overran its effective timeout (SSP-INV-5).
    Timeout,
}

impl ExecutionStatus {
    /// Every status, in lifecycle order.
    pub const ALL: [Self; 5] = [
        Self::Accepted,
        Self::Running,
        Self::Completed,
        Self::Failed,
        Self::Timeout,
    ];

    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Accepted => "accepted",
            Self::Running => "running",
            Self::Completed => "completed",
            Self::Failed => "failed",
            Self::Timeout => "timeout",
        }
    }

    /// Parses the wire spelling.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|st| st.as_str() == s)
    }

    /// Terminal states never change again (SSP-INV-3).
    pub fn is_terminal(self) -> bool {
        matches!(self, Self::Completed | Self::Failed | Self::Timeout)
    }

    fn rank(self) -> u8 {
        match self {
            Self::Accepted => 0,
            Self::Running => 1,
            Self::Completed | Self::Failed | Self::Timeout => 2,
        }
    }

    /// SSP-INV-3: status only moves forward (`accepted → running → terminal`, accepted may
    /// jump to a terminal state); staying in the same non-terminal state is allowed (a
    /// no-op), a terminal state never changes.
    pub fn can_move_to(self, next: Self) -> bool {
        if self.is_terminal() {
            return false;
        }
        next.rank() > self.rank() || next == self
    }
}

/// A refused status change.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "execution status cannot move from {from:?} to {to:?} (SSP-INV-3: forward only, terminal stable)"
)]
pub struct TransitionError {
    /// Current status.
    pub from: ExecutionStatus,
    /// Refused target.
    pub to: ExecutionStatus,
}

/// The unified error object of seed §8.2 (also the `error` member of a failed/timed-out
/// InvocationResponse, SSP-ERR-1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorObject {
    /// Error code (open string, SSP-ERR-3).
    pub code: String,
    /// Human-readable message.
    pub message: String,
    /// Context-specific details (boxed: keeps `Result<_, ErrorObject>` small).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Box<Value>>,
    /// Retry suggestion (both members always present: seed §8.2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry: Option<RetrySuggestion>,
}

impl ErrorObject {
    /// An error with code and message only.
    pub fn new(code: &str, message: impl Into<String>) -> Self {
        Self {
            code: code.to_string(),
            message: message.into(),
            details: None,
            retry: None,
        }
    }

    /// Adds `details`.
    pub fn with_details(mut self, details: Value) -> Self {
        self.details = Some(Box::new(details));
        self
    }

    /// Adds `retry`.
    pub fn with_retry(mut self, suggested_delay_ms: u64, max_attempts: u64) -> Self {
        self.retry = Some(RetrySuggestion {
            suggested_delay_ms,
            max_attempts,
        });
        self
    }

    /// The `{"error": …}` response body.
    pub fn to_body(&self) -> Value {
        json!({ "error": self })
    }
}

/// Seed §8.2 `error.retry`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RetrySuggestion {
    /// Delay before retrying, in milliseconds.
    pub suggested_delay_ms: u64,
    /// Maximum attempts.
    pub max_attempts: u64,
}

/// A JSON document kept as its text (issue 13 §2). Inputs and outputs are only stored and
/// echoed, so they stay compact text (the size of the request) rather than a `Value` tree:
/// with `preserve_order` a node costs ~80 bytes, so a 64 KiB array of 32,000 zeros was
/// 2.5 MiB per copy.
#[derive(Clone, Serialize, Deserialize)]
#[serde(transparent)]
pub struct JsonText(Box<RawValue>);

impl JsonText {
    /// The text of `v`.
    pub fn from_value(v: &Value) -> Result<Self, serde_json::Error> {
        serde_json::value::to_raw_value(v).map(Self)
    }

    /// Checks that `text` is one JSON document and keeps it as is.
    pub fn parse(text: String) -> Result<Self, serde_json::Error> {
        RawValue::from_string(text).map(Self)
    }

    /// The JSON text.
    pub fn get(&self) -> &str {
        self.0.get()
    }

    /// The raw value (serializes verbatim).
    pub fn raw(&self) -> &RawValue {
        &self.0
    }

    /// Bytes of text.
    pub fn len(&self) -> usize {
        self.0.get().len()
    }

    /// True for an empty text (never, for a parsed document).
    pub fn is_empty(&self) -> bool {
        self.0.get().is_empty()
    }

    /// The document as a `Value` tree (tests, and skills that need the structure).
    pub fn to_value(&self) -> Result<Value, serde_json::Error> {
        serde_json::from_str(self.0.get())
    }
}

impl PartialEq for JsonText {
    fn eq(&self, other: &Self) -> bool {
        self.get() == other.get()
    }
}

impl std::fmt::Debug for JsonText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.get())
    }
}

/// The state of one execution, as stored and as served (seed §5.4).
#[derive(Debug, Clone, PartialEq)]
pub struct Execution {
    /// Unique execution id (SSP-INV-7).
    pub id: String,
    /// The skill that runs (never another one: SSP-INV-2).
    pub skill_id: String,
    /// Fingerprint of the credential that created it; `None` for public skills.
    pub credential: Option<String>,
    /// Current status.
    pub status: ExecutionStatus,
    /// The validated inputs (defaults applied), as text.
    pub inputs: JsonText,
    /// Output, once completed, as text.
    pub output: Option<JsonText>,
    /// Error, once failed or timed out.
    pub error: Option<ErrorObject>,
    /// Creation time, constant (SSP-INV-3).
    pub created_at: chrono::DateTime<chrono::Utc>,
    /// Last change, never before `created_at`.
    pub updated_at: chrono::DateTime<chrono::Utc>,
    /// Set iff the status is terminal.
    pub completed_at: Option<chrono::DateTime<chrono::Utc>>,
}

/// What a status change carries.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Move to `running`.
    Running,
    /// Finish with this output.
    Completed(JsonText),
    /// Finish with this error.
    Failed(ErrorObject),
    /// Finish as overrun, with the `INVOCATION_TIMEOUT` error.
    Timeout(ErrorObject),
}

impl Outcome {
    /// The status this outcome moves to.
    pub fn status(&self) -> ExecutionStatus {
        match self {
            Self::Running => ExecutionStatus::Running,
            Self::Completed(_) => ExecutionStatus::Completed,
            Self::Failed(_) => ExecutionStatus::Failed,
            Self::Timeout(_) => ExecutionStatus::Timeout,
        }
    }
}

impl Execution {
    /// A freshly accepted execution (SSP-INV-1): `created_at == updated_at`, no
    /// `completed_at`.
    pub fn accepted(
        id: String,
        skill_id: String,
        credential: Option<String>,
        inputs: JsonText,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Self {
        Self {
            id,
            skill_id,
            credential,
            status: ExecutionStatus::Accepted,
            inputs,
            output: None,
            error: None,
            created_at: now,
            updated_at: now,
            completed_at: None,
        }
    }

    /// Applies `outcome` at `now` under SSP-INV-3: forward only, terminal stable,
    /// `updated_at ≥ created_at` (a clock that went backwards is clamped), `completed_at`
    /// set exactly when entering a terminal state.
    pub fn apply(
        &mut self,
        outcome: Outcome,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Result<(), TransitionError> {
        let to = outcome.status();
        if !self.status.can_move_to(to) {
            return Err(TransitionError {
                from: self.status,
                to,
            });
        }
        let at = now.max(self.updated_at);
        self.status = to;
        self.updated_at = at;
        match outcome {
            Outcome::Running => {}
            Outcome::Completed(out) => {
                self.output = Some(out);
                self.completed_at = Some(at);
            }
            Outcome::Failed(err) | Outcome::Timeout(err) => {
                self.error = Some(err);
                self.completed_at = Some(at);
            }
        }
        Ok(())
    }

    /// The seed §5.4 InvocationResponse: `output` only when completed, `error` only when
    /// failed/timed out, `completed_at` only when terminal (SSP-INV-3/4). Serialized
    /// straight from the stored texts: the output is never rebuilt as a tree.
    pub fn to_response(&self) -> Result<Box<RawValue>, serde_json::Error> {
        #[derive(Serialize)]
        struct Timestamps {
            created_at: String,
            updated_at: String,
            #[serde(skip_serializing_if = "Option::is_none")]
            completed_at: Option<String>,
        }
        #[derive(Serialize)]
        struct Response<'a> {
            execution_id: &'a str,
            status: &'static str,
            skill_id: &'a str,
            #[serde(skip_serializing_if = "Option::is_none")]
            output: Option<&'a RawValue>,
            #[serde(skip_serializing_if = "Option::is_none")]
            error: Option<&'a ErrorObject>,
            timestamps: Timestamps,
        }
        let output = (self.status == ExecutionStatus::Completed)
            .then(|| self.output.as_ref().map_or(RawValue::NULL, JsonText::raw));
        serde_json::value::to_raw_value(&Response {
            execution_id: &self.id,
            status: self.status.as_str(),
            skill_id: &self.skill_id,
            output,
            error: self.error.as_ref(),
            timestamps: Timestamps {
                created_at: format_time(self.created_at),
                updated_at: format_time(self.updated_at),
                completed_at: self.completed_at.map(format_time),
            },
        })
    }
}

/// RFC 3339 UTC with milliseconds (`2026-01-01T00:00:00.000Z`): sortable and exact
/// enough to show `created_at ≤ updated_at`.
pub fn format_time(t: chrono::DateTime<chrono::Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// SSP-INV-5: effective timeout = min(`endpoint.timeout_ms`, `context.timeout_ms`), either
/// may be absent. Non-finite or non-positive values are ignored (the schema refuses them
/// before this point).
pub fn effective_timeout_ms(endpoint: Option<f64>, context: Option<f64>) -> Option<u64> {
    let valid = |v: Option<f64>| v.filter(|x| x.is_finite() && *x > 0.0);
    let ms = match (valid(endpoint), valid(context)) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }?;
    // Round up so a fractional timeout never becomes 0 ms.
    Some(ms.ceil() as u64)
}

/// The `INVOCATION_TIMEOUT` error of seed §8.3.5 (SSP-INV-5).
pub fn timeout_error(timeout_ms: u64, execution_id: &str) -> ErrorObject {
    ErrorObject::new(
        codes::INVOCATION_TIMEOUT,
        format!("Skill execution timed out after {timeout_ms}ms"),
    )
    .with_details(json!({ "timeout_ms": timeout_ms, "execution_id": execution_id }))
    .with_retry(1000, 3)
}

/// One entry of the seed §8.3.1 `details` array.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ValidationDetail {
    /// JSON Pointer to the invalid member (of the request document).
    pub path: String,
    /// What is wrong.
    pub message: String,
    /// The expected value or type.
    pub expected: Value,
    /// The value or type found.
    pub actual: Value,
}

/// The 400 `VALIDATION_ERROR` body error with its details array (SSP-INV-2).
pub fn validation_error(message: &str, details: Vec<ValidationDetail>) -> ErrorObject {
    ErrorObject::new(codes::VALIDATION_ERROR, message).with_details(json!(details))
}

/// JSON Schema type names a ParameterDefinition may declare.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamType {
    /// `string`
    String,
    /// `number` (any JSON number)
    Number,
    /// `integer` (a number with zero fractional part)
    Integer,
    /// `boolean`
    Boolean,
    /// `object`
    Object,
    /// `array`
    Array,
    /// `null`
    Null,
}

impl ParamType {
    /// Parses a JSON Schema type name.
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "string" => Self::String,
            "number" => Self::Number,
            "integer" => Self::Integer,
            "boolean" => Self::Boolean,
            "object" => Self::Object,
            "array" => Self::Array,
            "null" => Self::Null,
            _ => return None,
        })
    }

    /// The JSON Schema type name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::String => "string",
            Self::Number => "number",
            Self::Integer => "integer",
            Self::Boolean => "boolean",
            Self::Object => "object",
            Self::Array => "array",
            Self::Null => "null",
        }
    }

    /// Whether `v` has this JSON Schema type (`integer` accepts `3.0`, as JSON Schema does).
    pub fn matches(self, v: &Value) -> bool {
        match self {
            Self::String => v.is_string(),
            Self::Number => v.is_number(),
            Self::Integer => {
                v.is_i64()
                    || v.is_u64()
                    || v.as_f64()
                        .is_some_and(|f| f.is_finite() && f.fract() == 0.0)
            }
            Self::Boolean => v.is_boolean(),
            Self::Object => v.is_object(),
            Self::Array => v.is_array(),
            Self::Null => v.is_null(),
        }
    }
}

/// The JSON type name of a value, for `actual` in validation details.
pub fn json_type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// A ParameterDefinition as the provider enforces it.
#[derive(Debug, Clone, PartialEq)]
pub struct ParamSpec {
    /// Input name.
    pub name: String,
    /// Declared JSON type.
    pub ty: ParamType,
    /// Required input.
    pub required: bool,
    /// Value used when the input is absent.
    pub default: Option<Value>,
}

/// SSP-INV-2: checks `inputs` (the request's `inputs` object) against the skill's
/// parameter definitions — every required input present, every input of its declared
/// type, no undeclared input — and returns the inputs with defaults filled in, or **all**
/// violations as seed §8.3.1 details (paths are pointers into the InvocationRequest).
/// `extra` runs each present, well-typed input through its nested `schema` (if any) and
/// returns further details.
pub fn validate_inputs(
    specs: &[ParamSpec],
    inputs: &Map<String, Value>,
    mut extra: impl FnMut(&ParamSpec, &Value) -> Vec<ValidationDetail>,
) -> Result<Map<String, Value>, Vec<ValidationDetail>> {
    let mut details = Vec::new();
    let mut out = Map::new();
    for name in inputs.keys() {
        if !specs.iter().any(|s| &s.name == name) {
            details.push(ValidationDetail {
                path: format!("/inputs/{}", escape_pointer(name)),
                message: format!("input '{name}' is not declared by this skill"),
                expected: json!(specs.iter().map(|s| s.name.as_str()).collect::<Vec<_>>()),
                actual: json!(name),
            });
        }
    }
    for spec in specs {
        let path = format!("/inputs/{}", escape_pointer(&spec.name));
        match inputs.get(&spec.name) {
            None => {
                if spec.required {
                    details.push(ValidationDetail {
                        path,
                        message: format!("required input '{}' is missing", spec.name),
                        expected: json!(spec.ty.as_str()),
                        actual: json!("missing"),
                    });
                } else if let Some(d) = &spec.default {
                    out.insert(spec.name.clone(), d.clone());
                }
            }
            Some(v) if !spec.ty.matches(v) => details.push(ValidationDetail {
                path,
                message: format!("input '{}' must be of type {}", spec.name, spec.ty.as_str()),
                expected: json!(spec.ty.as_str()),
                actual: json!(json_type_name(v)),
            }),
            Some(v) => {
                let more = extra(spec, v);
                if more.is_empty() {
                    out.insert(spec.name.clone(), v.clone());
                } else {
                    details.extend(more);
                }
            }
        }
    }
    if details.is_empty() {
        Ok(out)
    } else {
        Err(details)
    }
}

/// RFC 6901 escaping of one reference token.
pub fn escape_pointer(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// Seed §3.4.2 access policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Access {
    /// Visible and invocable by everyone (subject to `auth`).
    Public,
    /// Visible to everyone, invocable by authorised consumers.
    Restricted,
    /// Hidden from unauthenticated discovery (SSP-DISC-2).
    Private,
}

impl Access {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Public => "public",
            Self::Restricted => "restricted",
            Self::Private => "private",
        }
    }

    /// SSP-DISC-2: private entries only for authenticated discovery.
    pub fn visible(self, authenticated: bool) -> bool {
        self != Self::Private || authenticated
    }
}

/// How a skill authenticates its callers (seed §7.2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthRequirement {
    /// `none`.
    None,
    /// `api_key` in the named header.
    ApiKey {
        /// Declared header name.
        header: String,
    },
    /// `oauth2` bearer token.
    OAuth2 {
        /// The descriptor's authorization URL (for `details.authorization_url`).
        authorization_url: String,
        /// Scopes needed to invoke.
        required_scopes: Vec<String>,
    },
    /// `custom`: HMAC signature in the named header.
    Custom {
        /// Header carrying the signature.
        header: String,
    },
}

impl AuthRequirement {
    /// The seed §3.4.3 auth type name.
    pub fn type_name(&self) -> &'static str {
        match self {
            Self::None => "none",
            Self::ApiKey { .. } => "api_key",
            Self::OAuth2 { .. } => "oauth2",
            Self::Custom { .. } => "custom",
        }
    }
}

/// What the caller presented for the skill's auth method, as established by the provider
/// (header lookup, token table, signature check).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Presented {
    /// Nothing in the place the method requires (also: the key sent in another header,
    /// SSP-AUTH-4).
    Missing,
    /// Something there, but not a credential the provider accepts.
    Invalid,
    /// A credential the provider accepts.
    Valid {
        /// Stable fingerprint of the credential (binds executions to it, SSP-INV-6).
        fingerprint: String,
        /// Scopes / permissions it grants.
        granted: Vec<String>,
    },
}

/// The outcome of the auth check for one invocation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthDecision {
    /// Go ahead; executions are bound to this fingerprint (`None` for public, no-auth skills).
    Allow {
        /// Fingerprint of the creating credential.
        credential: Option<String>,
    },
    /// 401 `AUTH_REQUIRED` (SSP-AUTH-2).
    Unauthenticated,
    /// 403 `PERMISSION_DENIED` (SSP-AUTH-3).
    Forbidden {
        /// Scopes the skill needs.
        required: Vec<String>,
        /// Scopes the credential has.
        granted: Vec<String>,
    },
}

/// SSP-AUTH-1..4: decides an invocation. `required` lists the permissions needed to
/// invoke (OAuth2 scopes; the provider grants api keys `skill:invoke` when allowed).
pub fn decide_auth(
    req: &AuthRequirement,
    presented: &Presented,
    required: &[String],
) -> AuthDecision {
    if matches!(req, AuthRequirement::None) {
        // SSP-AUTH-1: never 401/403 on a no-auth skill, whatever the caller sends.
        return AuthDecision::Allow { credential: None };
    }
    match presented {
        Presented::Missing | Presented::Invalid => AuthDecision::Unauthenticated,
        Presented::Valid {
            fingerprint,
            granted,
        } => {
            if required.iter().all(|r| granted.contains(r)) {
                AuthDecision::Allow {
                    credential: Some(fingerprint.clone()),
                }
            } else {
                AuthDecision::Forbidden {
                    required: required.to_vec(),
                    granted: granted.clone(),
                }
            }
        }
    }
}

/// The 401 error of SSP-AUTH-2 / seed §8.3.2 for `req` (never called for `none`).
pub fn auth_required_error(req: &AuthRequirement, message: &str) -> ErrorObject {
    let mut details = Map::new();
    details.insert("required_auth_type".into(), json!(req.type_name()));
    match req {
        AuthRequirement::None => {}
        AuthRequirement::ApiKey { header } | AuthRequirement::Custom { header } => {
            details.insert("header".into(), json!(header));
        }
        AuthRequirement::OAuth2 {
            authorization_url,
            required_scopes,
        } => {
            details.insert("authorization_url".into(), json!(authorization_url));
            details.insert("required_scopes".into(), json!(required_scopes));
        }
    }
    ErrorObject::new(codes::AUTH_REQUIRED, message)
        .with_details(Value::Object(details))
        .with_retry(0, 1)
}

/// The 403 error of SSP-AUTH-3 / seed §8.3.3.
pub fn permission_denied_error(required: &[String], granted: &[String]) -> ErrorObject {
    ErrorObject::new(
        codes::PERMISSION_DENIED,
        "Insufficient permissions to invoke this skill",
    )
    .with_details(json!({ "required_scopes": required, "granted_scopes": granted }))
}

/// SSP-INV-6: may `caller` (fingerprints of every valid credential presented) read an
/// execution created with `owner`? Executions without an owner (public skills) are
/// readable by everyone.
pub fn may_read_execution(owner: Option<&str>, caller: &[String]) -> bool {
    match owner {
        None => true,
        Some(o) => caller.iter().any(|c| c == o),
    }
}

#[cfg(test)]
#[expect(clippy::unwrap_used)] // tests: a panic is the failure report
mod tests {
    use super::*;
    use ExecutionStatus::*;

    fn text(v: Value) -> JsonText {
        JsonText::from_value(&v).unwrap()
    }

    fn response(e: &Execution) -> Value {
        serde_json::from_str(e.to_response().unwrap().get()).unwrap()
    }

    fn t(s: i64) -> chrono::DateTime<chrono::Utc> {
        chrono::DateTime::from_timestamp(1_700_000_000 + s, 0).unwrap_or_default()
    }

    #[test]
    fn status_moves_forward_only_and_terminal_is_stable() {
        // SSP-INV-3: exhaustive over all 25 pairs.
        for from in ExecutionStatus::ALL {
            for to in ExecutionStatus::ALL {
                let expected = match (from, to) {
                    (Accepted, _) => true,
                    (Running, Accepted) => false,
                    (Running, _) => true,
                    (_, _) => false,
                };
                assert_eq!(from.can_move_to(to), expected, "{from:?} -> {to:?}");
            }
        }
    }

    #[test]
    fn apply_keeps_timestamps_consistent() {
        let mut e = Execution::accepted("e".into(), "s".into(), None, text(json!({})), t(10));
        assert_eq!(e.completed_at, None);
        e.apply(Outcome::Running, t(5)).unwrap_or_default();
        // A clock going backwards is clamped: updated_at >= created_at.
        assert_eq!(e.updated_at, t(10));
        e.apply(Outcome::Completed(text(json!(1))), t(12))
            .unwrap_or_default();
        assert_eq!(e.completed_at, Some(t(12)));
        assert_eq!(e.created_at, t(10));
        let err = e.apply(Outcome::Failed(ErrorObject::new("X", "x")), t(13));
        assert_eq!(
            err,
            Err(TransitionError {
                from: Completed,
                to: Failed
            })
        );
        assert_eq!(e.status, Completed);
        assert_eq!(e.output, Some(text(json!(1))));
        assert!(e.error.is_none());
        let r = response(&e);
        assert_eq!(r["output"], json!(1));
        assert!(r["timestamps"].get("completed_at").is_some());
    }

    #[test]
    fn non_terminal_response_has_no_output_nor_completed_at() {
        let e = Execution::accepted("e".into(), "s".into(), None, text(json!({})), t(0));
        let r = response(&e);
        assert!(r.get("output").is_none());
        assert!(r.get("error").is_none());
        assert!(r["timestamps"].get("completed_at").is_none());
        assert_eq!(r["timestamps"]["created_at"], r["timestamps"]["updated_at"]);
    }

    #[test]
    fn effective_timeout_is_the_minimum() {
        // SSP-INV-5
        assert_eq!(effective_timeout_ms(Some(200.0), Some(5000.0)), Some(200));
        assert_eq!(effective_timeout_ms(Some(5000.0), Some(100.0)), Some(100));
        assert_eq!(effective_timeout_ms(None, Some(100.0)), Some(100));
        assert_eq!(effective_timeout_ms(Some(300.0), None), Some(300));
        assert_eq!(effective_timeout_ms(None, None), None);
        assert_eq!(effective_timeout_ms(Some(0.5), None), Some(1));
        assert_eq!(effective_timeout_ms(Some(f64::NAN), Some(-1.0)), None);
    }

    fn specs() -> Vec<ParamSpec> {
        vec![
            ParamSpec {
                name: "text".into(),
                ty: ParamType::String,
                required: true,
                default: None,
            },
            ParamSpec {
                name: "n".into(),
                ty: ParamType::Integer,
                required: false,
                default: Some(json!(7)),
            },
        ]
    }

    #[test]
    fn inputs_validation_reports_every_violation() {
        // SSP-INV-2: missing required, wrong type, undeclared — all reported at once.
        let inputs = json!({"n": "x", "zz/z": 1});
        let Value::Object(m) = inputs else {
            unreachable!()
        };
        let Err(d) = validate_inputs(&specs(), &m, |_, _| vec![]) else {
            panic!("must fail")
        };
        let paths: Vec<_> = d.iter().map(|x| x.path.as_str()).collect();
        assert_eq!(paths, ["/inputs/zz~1z", "/inputs/text", "/inputs/n"]);
        assert_eq!(d[2].expected, json!("integer"));
        assert_eq!(d[2].actual, json!("string"));
    }

    #[test]
    fn inputs_defaults_are_applied() {
        let Value::Object(m) = json!({"text": "hi"}) else {
            unreachable!()
        };
        let out = validate_inputs(&specs(), &m, |_, _| vec![]).unwrap_or_default();
        assert_eq!(Value::Object(out), json!({"text": "hi", "n": 7}));
        let Value::Object(m) = json!({"text": "hi", "n": 3.0}) else {
            unreachable!()
        };
        assert!(validate_inputs(&specs(), &m, |_, _| vec![]).is_ok());
    }

    #[test]
    fn auth_decisions() {
        let key = AuthRequirement::ApiKey {
            header: "X-API-Key".into(),
        };
        let need = vec!["skill:invoke".to_string()];
        // SSP-AUTH-1
        assert_eq!(
            decide_auth(&AuthRequirement::None, &Presented::Invalid, &need),
            AuthDecision::Allow { credential: None }
        );
        // SSP-AUTH-2
        assert_eq!(
            decide_auth(&key, &Presented::Missing, &need),
            AuthDecision::Unauthenticated
        );
        assert_eq!(
            decide_auth(&key, &Presented::Invalid, &need),
            AuthDecision::Unauthenticated
        );
        // SSP-AUTH-3
        let limited = Presented::Valid {
            fingerprint: "f".into(),
            granted: vec![],
        };
        assert_eq!(
            decide_auth(&key, &limited, &need),
            AuthDecision::Forbidden {
                required: need.clone(),
                granted: vec![]
            }
        );
        let full = Presented::Valid {
            fingerprint: "f".into(),
            granted: need.clone(),
        };
        assert_eq!(
            decide_auth(&key, &full, &need),
            AuthDecision::Allow {
                credential: Some("f".into())
            }
        );
        let e = auth_required_error(&key, "m");
        assert_eq!(
            e.details.as_deref(),
            Some(&json!({"required_auth_type": "api_key", "header": "X-API-Key"}))
        );
        assert_eq!(
            e.retry,
            Some(RetrySuggestion {
                suggested_delay_ms: 0,
                max_attempts: 1
            })
        );
    }

    #[test]
    fn execution_visibility() {
        // SSP-INV-6
        assert!(may_read_execution(None, &[]));
        assert!(!may_read_execution(Some("a"), &[]));
        assert!(!may_read_execution(Some("a"), &["b".into()]));
        assert!(may_read_execution(Some("a"), &["b".into(), "a".into()]));
        assert!(Access::Public.visible(false) && !Access::Private.visible(false));
        assert!(Access::Private.visible(true));
    }
}
