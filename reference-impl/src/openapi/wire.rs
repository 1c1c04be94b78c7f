//! The Parley HTTP binding's bodies as Rust types, for their JSON Schemas (schemars) only.
//!
//! The service renders its answers with `service::render` (one place, so both bindings send
//! byte-identical JSON, PV-TR-1); these types state the same shapes (§11, PV-RS-2) so that
//! `/openapi.json` can describe them. They are never built: `tests/openapi.rs` validates real
//! answers of the reference against the schemas generated from them, so a drift between the
//! two fails a test. Enumerations and limits (kinds, states, `body_max_chars`, ...) are
//! filled in by [`super::parley`] from the tables the service enforces.

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde_json::Value;

use crate::domain::parley::{Evidence, Limits, Provenance};

/// A member that is always present and may be `null` (schemars makes `Option` members
/// optional; the service renders these as `null` rather than leaving them out).
pub struct Nullable<T>(Option<T>);

impl<T: JsonSchema> JsonSchema for Nullable<T> {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> Cow<'static, str> {
        Option::<T>::schema_name()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        Option::<T>::json_schema(generator)
    }
}

/// An id argument: `th_N` / `msg_N` / `cl_N` / `ev_N`, a number, or a digit string (PV-EN-5).
#[derive(JsonSchema)]
#[serde(untagged)]
pub enum IdArg {
    /// Prefixed or bare digits.
    Text(String),
    /// A non-negative number.
    Number(u64),
}

/// `{identity, extension}` (`extension` null when absent, PV-ID-1).
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Party {
    /// The token's identity.
    pub identity: String,
    /// The sub-party (PV-ID-2).
    pub extension: Nullable<String>,
}

/// `awaiting`: `{any: true, except}` for an open question, or one party.
#[derive(JsonSchema)]
#[serde(untagged)]
pub enum AwaitingParty {
    /// Anyone but the opener's party.
    Any(AwaitingAny),
    /// One named party.
    One(Party),
}

/// `{any: true, except: Party}`.
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AwaitingAny {
    /// Always `true`.
    pub any: bool,
    /// The opener's party.
    pub except: Party,
}

/// A message (§11); dialectic acts add `evidence` and `claim`; `read_thread` adds `replies`.
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Message {
    /// `msg_N`.
    pub id: String,
    /// `th_N`.
    pub thread: String,
    /// `msg_N` or null for the root.
    pub parent: Nullable<String>,
    /// The speech act.
    pub kind: String,
    /// The author's party.
    pub from: Party,
    /// `human` or `agent` (server-set, PV-EN-4).
    pub author_kind: String,
    /// The text.
    pub body: String,
    /// As sent.
    pub provenance: Nullable<Provenance>,
    /// RFC 3339.
    pub created_at: String,
    /// Dialectic acts only.
    pub evidence: Option<Vec<Evidence>>,
    /// Dialectic acts only: the claim created or acted on.
    pub claim: Option<String>,
    /// `read_thread` only: the replies, in creation order (PV-RD-1).
    pub replies: Option<Vec<Self>>,
}

/// A thread (§11).
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Thread {
    /// `th_N`.
    pub id: String,
    /// Current state.
    pub state: String,
    /// Who set it.
    pub state_origin: String,
    /// When a lock holder or human confirmed it (PV-ST-3).
    pub state_confirmed_at: Nullable<String>,
    /// Label of the state.
    pub state_label: Nullable<String>,
    /// The opener.
    pub creator: Party,
    /// Who must reply (PV-KD-2), null for nobody.
    pub awaiting: Nullable<AwaitingParty>,
    /// RFC 3339.
    pub created_at: String,
    /// RFC 3339.
    pub last_activity_at: String,
}

/// A state event (§11).
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Event {
    /// `ev_N`.
    pub id: String,
    /// `thread` or `claim`.
    pub subject: String,
    /// `th_N`.
    pub thread: String,
    /// `cl_N` for claim events.
    pub claim: Nullable<String>,
    /// Previous state.
    pub from_state: Nullable<String>,
    /// New state.
    pub to_state: String,
    /// Who set it.
    pub origin: String,
    /// Label.
    pub label: Nullable<String>,
    /// Who acted.
    pub actor: Party,
    /// RFC 3339.
    pub at: String,
    /// When confirmed.
    pub confirmed_at: Nullable<String>,
}

/// One attestation, refutation or verification of a claim.
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClaimAct {
    /// `msg_N`.
    pub message: String,
    /// Who acted.
    pub by: Party,
    /// The act's evidence.
    pub evidence: Vec<Evidence>,
    /// RFC 3339.
    pub at: String,
}

/// A claim (PV-DI-7).
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Claim {
    /// `cl_N`.
    pub id: String,
    /// `th_N`.
    pub thread: String,
    /// The asserting message.
    pub message: String,
    /// The asserting party.
    pub author: Party,
    /// Claim status.
    pub status: String,
    /// Number of attestations (PV-RS-3).
    pub support: u64,
    /// The assertion's evidence.
    pub evidence: Vec<Evidence>,
    /// Attestations.
    pub attestations: Vec<ClaimAct>,
    /// Refutations.
    pub refutations: Vec<ClaimAct>,
    /// Verifications.
    pub verifications: Vec<ClaimAct>,
    /// Claims this one supersedes.
    pub supersedes: Vec<String>,
    /// The claim superseding this one.
    pub superseded_by: Nullable<String>,
    /// Expiry (PV-DI-2).
    pub valid_until: Nullable<String>,
    /// Whether `valid_until` has passed.
    pub expired: bool,
}

/// `whoami` (PV-TR-5).
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Whoami {
    /// The token's identity.
    pub identity: String,
    /// `human` or `agent`.
    pub author_kind: String,
    /// Rights of the token.
    pub rights: Vec<String>,
    /// The lock label, if the token has `lock`.
    pub lock_label: Nullable<String>,
    /// The token's write quota.
    pub quota_per_minute: u32,
}

/// The manifest (§2, PV-MF-1): its limits are exactly the enforced ones (PV-MF-2).
#[derive(JsonSchema)]
pub struct Manifest {
    /// Always `"1"`.
    pub parley: String,
    /// Server version.
    pub version: String,
    /// Declared and enforced limits.
    pub limits: Limits,
    /// Core kinds.
    pub kinds: Vec<Value>,
    /// Forward and lateral states.
    pub states: Value,
    /// Enabled profiles.
    pub profiles: Vec<Value>,
    /// The operation table of §1.
    pub operations: Vec<Value>,
    /// HTTP and MCP bindings.
    pub bindings: Value,
    /// Every reason the server can emit.
    pub reasons: Vec<String>,
    /// Identity realm.
    pub identity: Value,
}

/// `post` request: the envelope (§3). Server-set members are accepted and ignored (PV-EN-4).
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PostRequest {
    /// `"1"` when present.
    pub parley: Option<String>,
    /// The speech act.
    pub kind: String,
    /// Target thread (absent: open one).
    pub thread: Option<IdArg>,
    /// Parent message.
    pub parent: Option<IdArg>,
    /// `{extension}`.
    pub from: Option<FromArg>,
    /// The text (not blank).
    pub body: String,
    /// Optional provenance.
    pub provenance: Option<Provenance>,
    /// Dialectic acts: 1..evidence_max items.
    pub evidence: Option<Vec<Evidence>>,
    /// attest / refute / verify: the claim.
    pub claim: Option<IdArg>,
    /// assert: claims superseded.
    pub supersedes: Option<Vec<IdArg>>,
    /// assert: expiry (RFC 3339).
    pub valid_until: Option<String>,
    /// Ignored (server-set).
    pub id: Option<Value>,
    /// Ignored (server-set).
    pub author_kind: Option<Value>,
    /// Ignored (server-set).
    pub created_at: Option<Value>,
}

/// `from` of an envelope: only `extension` counts (`identity` is server-set and ignored).
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FromArg {
    /// Sub-party (PV-EN-7).
    pub extension: Option<String>,
    /// Ignored.
    pub identity: Option<Value>,
}

/// `post` answer (201): `{message, thread}` (+ `claim` for dialectic acts).
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PostAnswer {
    /// The stored message.
    pub message: Message,
    /// Its thread after the post.
    pub thread: Thread,
    /// The claim created or acted on.
    pub claim: Option<Claim>,
}

/// `read_thread` answer (PV-RD-1).
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ThreadAnswer {
    /// The thread.
    pub thread: Thread,
    /// Root messages with nested `replies`.
    pub messages: Vec<Message>,
}

/// `list_events` answer (PV-RD-2).
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EventsAnswer {
    /// Events after `since`, in order.
    pub events: Vec<Event>,
}

/// One inbox item (PV-RD-3).
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InboxItem {
    /// `th_N`.
    pub thread: String,
    /// Its state.
    pub state: String,
    /// Who must reply.
    pub awaiting: Nullable<AwaitingParty>,
    /// The last message.
    pub last_message: Message,
    /// RFC 3339.
    pub last_activity_at: String,
}

/// `inbox` answer (PV-RD-3).
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InboxAnswer {
    /// Threads awaiting the caller.
    pub items: Vec<InboxItem>,
    /// Opaque cursor for the next call.
    pub cursor: String,
}

/// `mark` request body: the target state. The thread is the path's (a `thread` member is
/// accepted only when it repeats it, which a schema cannot say, so it is left out here).
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MarkRequest {
    /// Target state (PV-ST-2).
    pub state: String,
}

/// `reopen` request body: optional and empty (the thread is the path's).
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReopenRequest {}

/// `mark` / `reopen` answer: the thread and the event (null when nothing changed).
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StateAnswer {
    /// The thread after the call.
    pub thread: Thread,
    /// The event, or null.
    pub event: Nullable<Event>,
}

/// The refusal body of PV-TR-3.
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RefusalBody {
    /// The refusal.
    pub error: RefusalError,
}

/// `{reason, status, message}`.
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RefusalError {
    /// Stable reason (§10).
    pub reason: String,
    /// The HTTP status it travels with.
    pub status: u16,
    /// Explanation for humans.
    pub message: String,
}
