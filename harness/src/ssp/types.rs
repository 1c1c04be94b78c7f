//! Typed SSP 1.0 documents (seed §3, §4.3, §5.3, §5.4, §8.2).
//!
//! These are the values `parse` yields and `serialize` writes. They are deliberately *not*
//! `deny_unknown_fields`: strictness is the validator's job (strict vs lenient mode,
//! SSP-SCH-1), so a leniently accepted document with unknown members still parses (the
//! unknown members are dropped — they were reported as warnings).
//!
//! Numbers are kept as [`serde_json::Number`] so that `30000` stays `30000` through a
//! round trip (an `f64` would be re-serialized as `30000.0`), which keeps
//! `parse(serialize(d)) == d` (SSP-SCH-5) exact and the output faithful to the input.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Number, Value};
use std::fmt;

/// Deserializes a present member as `Some(value)`, including `null`.
///
/// `Option<Value>` alone would turn `"default": null` into `None` and lose the member on
/// serialization, breaking the round trip of SSP-SCH-5.
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

/// `protocol` member (seed §3.5.1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProtocolVersion {
    /// `MAJOR.MINOR.PATCH` (SSP-SCH-2).
    pub version: String,
    /// Optional link to the version's changelog.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changelog_url: Option<String>,
}

/// Capability classification (seed §3.4.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CapabilityType {
    /// Extends functionality.
    Plugin,
    /// An API service endpoint.
    Api,
    /// A knowledge pack or data source.
    Knowledge,
    /// A task execution capability.
    Task,
}

impl CapabilityType {
    /// All values, in seed order (the `expected` of an enum violation).
    pub const ALL: [Self; 4] = [Self::Plugin, Self::Api, Self::Knowledge, Self::Task];

    /// Wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Plugin => "plugin",
            Self::Api => "api",
            Self::Knowledge => "knowledge",
            Self::Task => "task",
        }
    }
}

/// Access control policy (seed §3.4.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AccessPolicy {
    /// Visible and invocable by everyone.
    Public,
    /// Visible to everyone, invocable by authorised consumers.
    Restricted,
    /// Hidden from unauthenticated discovery (seed §4.4).
    Private,
}

impl AccessPolicy {
    /// Wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Public => "public",
            Self::Restricted => "restricted",
            Self::Private => "private",
        }
    }
}

/// Authentication method (seed §3.4.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AuthType {
    /// Key in the header named by `auth.header`.
    ApiKey,
    /// OAuth 2.0 bearer token.
    Oauth2,
    /// Provider-defined scheme described by `auth.custom`.
    Custom,
    /// No authentication.
    None,
}

impl AuthType {
    /// Wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ApiKey => "api_key",
            Self::Oauth2 => "oauth2",
            Self::Custom => "custom",
            Self::None => "none",
        }
    }
}

/// Execution status (seed §3.4.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExecutionStatus {
    /// Request accepted.
    Accepted,
    /// Skill running.
    Running,
    /// Finished successfully (terminal).
    Completed,
    /// Failed (terminal).
    Failed,
    /// Timed out (terminal).
    Timeout,
}

impl ExecutionStatus {
    /// Terminal states never change again (SSP-INV-3).
    pub fn is_terminal(self) -> bool {
        matches!(self, Self::Completed | Self::Failed | Self::Timeout)
    }

    /// Position in the forward-only order `accepted → running → terminal` (SSP-INV-3).
    pub fn rank(self) -> u8 {
        match self {
            Self::Accepted => 0,
            Self::Running => 1,
            Self::Completed | Self::Failed | Self::Timeout => 2,
        }
    }

    /// Wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Accepted => "accepted",
            Self::Running => "running",
            Self::Completed => "completed",
            Self::Failed => "failed",
            Self::Timeout => "timeout",
        }
    }
}

/// HTTP method of an invocation endpoint (seed §3.5.3: GET, POST, PUT, DELETE only).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum HttpMethod {
    /// `GET`
    #[serde(rename = "GET")]
    Get,
    /// `POST`
    #[serde(rename = "POST")]
    Post,
    /// `PUT`
    #[serde(rename = "PUT")]
    Put,
    /// `DELETE`
    #[serde(rename = "DELETE")]
    Delete,
}

impl HttpMethod {
    /// Wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Get => "GET",
            Self::Post => "POST",
            Self::Put => "PUT",
            Self::Delete => "DELETE",
        }
    }
}

/// Provider information (seed §3.2: MUST contain `name`; §4.3.2: MAY contain `url`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProviderInfo {
    /// Provider name.
    pub name: String,
    /// Provider home page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Contact address (seed §3.6 example).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contact: Option<String>,
}

/// One input (or custom-auth) parameter (seed §3.5.2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ParameterDefinition {
    /// Parameter name, unique within its list (SSP-SCH-4).
    pub name: String,
    /// JSON Schema type name.
    #[serde(rename = "type")]
    pub kind: String,
    /// Human-readable description.
    pub description: String,
    /// Whether the parameter must be supplied.
    pub required: bool,
    /// Default value (any JSON, `null` included).
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub default: Option<Value>,
    /// Nested JSON Schema for complex types.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<Map<String, Value>>,
}

/// Retry configuration of an endpoint (seed §3.5.3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RetryConfig {
    /// Maximum number of attempts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_attempts: Option<Number>,
    /// Base backoff in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backoff_ms: Option<Number>,
}

/// Invocation endpoint (seed §3.5.3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InvocationEndpoint {
    /// Absolute invocation URL.
    pub url: String,
    /// HTTP method.
    pub method: HttpMethod,
    /// Request content type (default `application/json`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_type: Option<String>,
    /// Status URI template with `{execution_id}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_url: Option<String>,
    /// Result URI template with `{execution_id}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_url: Option<String>,
    /// Invocation timeout in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<Number>,
    /// Retry configuration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry: Option<RetryConfig>,
}

/// Output definition (seed §3.5.4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OutputDefinition {
    /// MIME type of the output.
    pub content_type: String,
    /// JSON Schema of the output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<Map<String, Value>>,
    /// Human-readable description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// OAuth 2.0 configuration (seed §3.5.5).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OAuth2Config {
    /// Authorization URL.
    pub authorization_url: String,
    /// Token URL.
    pub token_url: String,
    /// Scope name → description.
    pub scopes: Map<String, Value>,
}

/// Custom authentication configuration (seed §3.5.5).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CustomAuthConfig {
    /// Human-readable instructions.
    pub instructions: String,
    /// Parameters the scheme needs.
    pub parameters: Vec<ParameterDefinition>,
}

/// Authentication configuration (seed §3.5.5).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuthConfig {
    /// Method.
    #[serde(rename = "type")]
    pub kind: AuthType,
    /// Human-readable requirements.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Header carrying the API key (required for `api_key`, SSP-SCH-4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub header: Option<String>,
    /// OAuth 2.0 configuration (required for `oauth2`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oauth2: Option<OAuth2Config>,
    /// Custom configuration (required for `custom`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub custom: Option<CustomAuthConfig>,
}

/// The Skill Descriptor (seed §3.2, §3.3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SkillDescriptor {
    /// Protocol version the descriptor conforms to.
    pub protocol: ProtocolVersion,
    /// Globally unique skill id.
    pub id: String,
    /// Human-readable name.
    pub name: String,
    /// Skill version (SemVer, SSP-SCH-2).
    pub version: String,
    /// Capability classification.
    pub capability_type: CapabilityType,
    /// What the skill does.
    pub description: String,
    /// Who provides it.
    pub provider: ProviderInfo,
    /// How to invoke it.
    pub endpoint: InvocationEndpoint,
    /// Input parameters.
    pub inputs: Vec<ParameterDefinition>,
    /// Output format.
    pub output: OutputDefinition,
    /// Authentication.
    pub auth: AuthConfig,
    /// Access policy.
    pub access: AccessPolicy,
    /// Search tags.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<Vec<String>>,
    /// Documentation URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub documentation_url: Option<String>,
    /// Creation timestamp (ISO 8601).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
    /// Last update timestamp (ISO 8601).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_at: Option<String>,
}

/// One entry of a Skill Index (seed §4.3.3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SkillIndexEntry {
    /// Skill id, unique within the index (SSP-DISC-1).
    pub id: String,
    /// Human-readable name.
    pub name: String,
    /// Capability classification.
    pub capability_type: CapabilityType,
    /// Short description.
    pub description: String,
    /// Absolute URL of the full descriptor.
    pub descriptor_url: String,
    /// Access policy.
    pub access: AccessPolicy,
    /// Skill version.
    pub version: String,
}

/// The Skill Index served at `/.well-known/skill-sharing` (seed §4.3.2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SkillIndex {
    /// Protocol version.
    pub protocol: ProtocolVersion,
    /// Provider information.
    pub provider: ProviderInfo,
    /// Entries.
    pub skills: Vec<SkillIndexEntry>,
}

impl SkillIndex {
    /// The entries whose `capability_type` is `t`, in index order (seed §4.5: only the
    /// matching entries, and all of them).
    pub fn filter_by_capability(&self, t: CapabilityType) -> Vec<&SkillIndexEntry> {
        self.skills
            .iter()
            .filter(|e| e.capability_type == t)
            .collect()
    }
}

/// Caller identity (seed §5.3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Caller {
    /// Caller id.
    pub id: String,
    /// Caller type (`ifay`, `service`, `user`, …).
    #[serde(rename = "type")]
    pub kind: String,
    /// Credentials.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials: Option<Map<String, Value>>,
}

/// Execution priority (seed §5.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Priority {
    /// Low.
    Low,
    /// Normal.
    Normal,
    /// High.
    High,
}

/// Invocation context (seed §5.3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InvocationContext {
    /// Distributed trace id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_id: Option<String>,
    /// Priority.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<Priority>,
    /// Client-side timeout (SSP-INV-5: the effective timeout is the minimum).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<Number>,
}

/// Invocation request (seed §5.3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InvocationRequest {
    /// Caller identity.
    pub caller: Caller,
    /// Target skill.
    pub skill_id: String,
    /// Input values.
    pub inputs: Map<String, Value>,
    /// Context.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<InvocationContext>,
}

/// Execution timestamps (seed §5.4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Timestamps {
    /// Creation (constant, SSP-INV-3).
    pub created_at: String,
    /// Last update.
    pub updated_at: String,
    /// End of execution (present iff terminal).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed_at: Option<String>,
}

/// Milliseconds since the epoch of an RFC 3339 timestamp.
pub fn instant_ms(s: &str) -> Option<f64> {
    chrono::DateTime::parse_from_rfc3339(s)
        .ok()
        .map(|t| t.timestamp_millis() as f64)
}

/// Whether a `timeout` answer came once `timeout_ms` had passed since its `created_at`,
/// within one second of slack for timestamps of second precision: SSP-INV-5 lets a server
/// start the clock at acceptance, so such an execution may have timed out while queued,
/// whatever its skill does (and one that timed out earlier is early).
pub fn timed_out_in_time(answer: &serde_json::Value, timeout_ms: f64) -> Option<bool> {
    let at = |p: &str| {
        answer
            .pointer(p)
            .and_then(serde_json::Value::as_str)
            .and_then(instant_ms)
    };
    let (c, d) = (
        at("/timestamps/created_at")?,
        at("/timestamps/completed_at")?,
    );
    Some(d - c >= timeout_ms - 1000.0)
}

/// Whether two timestamps name the same instant: `…00Z` and `…00.000Z` (or another
/// offset) are one time, so a constant `created_at` may be spelt differently.
pub fn same_instant(a: &str, b: &str) -> bool {
    let at = chrono::DateTime::parse_from_rfc3339;
    a == b || matches!((at(a), at(b)), (Ok(x), Ok(y)) if x == y)
}

/// Invocation response (seed §5.4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InvocationResponse {
    /// Execution id.
    pub execution_id: String,
    /// Current status.
    pub status: ExecutionStatus,
    /// Skill id.
    pub skill_id: String,
    /// Output (completed only).
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub output: Option<Value>,
    /// Error (failed / timeout only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorObject>,
    /// Timestamps.
    pub timestamps: Timestamps,
}

/// An error code: an open string (SSP-ERR-3) with the seed's seven as constants (§8.1).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ErrorCode(pub String);

impl ErrorCode {
    /// Local: the validator rejected a document (also 400 for invalid requests, SSP-INV-2).
    pub const VALIDATION_ERROR: &'static str = "VALIDATION_ERROR";
    /// 401.
    pub const AUTH_REQUIRED: &'static str = "AUTH_REQUIRED";
    /// 403.
    pub const PERMISSION_DENIED: &'static str = "PERMISSION_DENIED";
    /// 404.
    pub const SKILL_NOT_FOUND: &'static str = "SKILL_NOT_FOUND";
    /// 408 / 504 (the seed's name; upstream's alias is [`Self::EXECUTION_TIMEOUT`]).
    pub const INVOCATION_TIMEOUT: &'static str = "INVOCATION_TIMEOUT";
    /// Upstream alias of `INVOCATION_TIMEOUT`, accepted with a warning (ssp.md §1).
    pub const EXECUTION_TIMEOUT: &'static str = "EXECUTION_TIMEOUT";
    /// 502 / 503, or local on a refused connection.
    pub const ENDPOINT_UNREACHABLE: &'static str = "ENDPOINT_UNREACHABLE";
    /// 422, or local from the compatibility check.
    pub const VERSION_INCOMPATIBLE: &'static str = "VERSION_INCOMPATIBLE";

    /// Builds a code.
    pub fn new(code: impl Into<String>) -> Self {
        Self(code.into())
    }

    /// The code text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Retry suggestion (seed §8.2: both members required when present).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RetrySuggestion {
    /// Suggested delay before retrying.
    pub suggested_delay_ms: Number,
    /// Maximum number of attempts.
    pub max_attempts: Number,
}

/// The unified error object (seed §8.2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorObject {
    /// Error code.
    pub code: ErrorCode,
    /// Human-readable message.
    pub message: String,
    /// Context-specific details.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub details: Option<Value>,
    /// Retry suggestion.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry: Option<RetrySuggestion>,
}

/// The envelope `{"error": {...}}` of every error response (seed §8.2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorResponse {
    /// The error.
    pub error: ErrorObject,
}

#[cfg(test)]
mod tests {
    use super::timed_out_in_time;
    use serde_json::json;

    fn ended(created: &str, completed: &str) -> serde_json::Value {
        json!({"status": "timeout", "timestamps": {"created_at": created, "completed_at": completed}})
    }

    #[test]
    fn a_timeout_counts_as_in_time_from_created_at_with_a_second_of_slack() {
        let t0 = "2026-01-01T00:00:00Z";
        // 5 s timeout: at 5 s in time; at 4 s (second-precision timestamps) still in time;
        // at 3.5 s early.
        assert_eq!(
            timed_out_in_time(&ended(t0, "2026-01-01T00:00:05Z"), 5000.0),
            Some(true)
        );
        assert_eq!(
            timed_out_in_time(&ended(t0, "2026-01-01T00:00:04Z"), 5000.0),
            Some(true)
        );
        assert_eq!(
            timed_out_in_time(&ended(t0, "2026-01-01T00:00:03.500Z"), 5000.0),
            Some(false)
        );
        assert_eq!(
            timed_out_in_time(&json!({"status": "timeout"}), 5000.0),
            None
        );
    }
}
