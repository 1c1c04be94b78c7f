//! The seven demo skills of issue #3: their descriptors (built for a base URL) and their
//! real, deterministic implementations.
//!
//! Together they exercise every rule of ssp.md (§7 fixtures): one per capability type, one
//! per auth type, one per access policy, one that finishes at once (`echo`), one that
//! runs for a requested delay (`slow-task`), one that fails (`always-fails`), one that
//! overruns its `timeout_ms` (`overrun`).

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{Map, Value, json};

use super::auth::{NONCE_HEADER, REPLAY_WINDOW_SECS, TIMESTAMP_HEADER};
use crate::domain::ssp::{ErrorObject, codes};

/// Which demo skill.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SkillKind {
    /// `conform/echo`: api, public, none; returns its inputs at once.
    Echo,
    /// `conform/text-stats`: api, public, none; counts words, characters, sentences.
    TextStats,
    /// `conform/slow-task`: task, restricted, api_key; completes after `delay_ms`.
    SlowTask,
    /// `conform/always-fails`: plugin, public, none; ends `failed`.
    AlwaysFails,
    /// `conform/overrun`: task, public, none; `timeout_ms` 50, works 2000 ms.
    Overrun,
    /// `conform/spec-lookup`: knowledge, restricted, custom HMAC; requirement text by ID.
    SpecLookup,
    /// `conform/forum-digest`: plugin, private, oauth2; summarises a Parley thread.
    ForumDigest,
}

impl SkillKind {
    /// Every demo skill, in index order.
    pub const ALL: [Self; 7] = [
        Self::Echo,
        Self::TextStats,
        Self::SlowTask,
        Self::AlwaysFails,
        Self::Overrun,
        Self::SpecLookup,
        Self::ForumDigest,
    ];

    /// The path segment (`/ssp/skills/<slug>.json`, `/ssp/invoke/<slug>`).
    pub fn slug(self) -> &'static str {
        match self {
            Self::Echo => "echo",
            Self::TextStats => "text-stats",
            Self::SlowTask => "slow-task",
            Self::AlwaysFails => "always-fails",
            Self::Overrun => "overrun",
            Self::SpecLookup => "spec-lookup",
            Self::ForumDigest => "forum-digest",
        }
    }

    /// The skill id (`conform/<slug>`).
    pub fn id(self) -> String {
        format!("conform/{}", self.slug())
    }

    /// Whether the runner reports `running` before the work (observable for task-like
    /// skills; instant skills may jump from `accepted` to a terminal state, SSP-INV-3).
    pub fn reports_running(self) -> bool {
        matches!(self, Self::SlowTask | Self::Overrun | Self::ForumDigest)
    }
}

/// How long `conform/overrun` works (it declares [`OVERRUN_TIMEOUT_MS`]).
pub const OVERRUN_WORK_MS: u64 = 2000;
/// `conform/overrun`'s declared timeout. Short: every check and model that invokes it waits
/// this long for its end (50 ms, was 200: the SSP model's longest wait, issue 25), and the
/// 40-fold margin to [`OVERRUN_WORK_MS`] keeps the timeout certain on a loaded machine.
pub const OVERRUN_TIMEOUT_MS: u64 = 50;
/// `conform/slow-task`'s maximum delay.
pub const SLOW_TASK_MAX_DELAY_MS: u64 = 10_000;
/// The custom scheme's signature header.
pub const SIGNATURE_HEADER: &str = "X-Signature";
/// The api_key skills' header.
pub const API_KEY_HEADER: &str = "X-API-Key";

/// The full SkillDescriptor of `kind` for a provider at `base` (no trailing slash).
pub fn descriptor(kind: SkillKind, base: &str) -> Value {
    let slug = kind.slug();
    let none = json!({ "type": "none" });
    let (name, version, cap, access, description, inputs, output, auth, timeout_ms, tags): (
        &str,
        &str,
        &str,
        &str,
        &str,
        Value,
        Value,
        Value,
        u64,
        Value,
    ) = match kind {
        SkillKind::Echo => (
            "Echo",
            "1.0.0",
            "api",
            "public",
            "Returns its inputs unchanged; finishes at once.",
            json!([
                { "name": "message", "type": "string", "description": "Text to echo.", "required": true },
                { "name": "metadata", "type": "object", "description": "Any JSON object, echoed as is.", "required": false }
            ]),
            json!({
                "content_type": "application/json",
                "description": "The inputs, unchanged.",
                "schema": {
                    "type": "object",
                    "properties": { "message": { "type": "string" }, "metadata": { "type": "object" } },
                    "required": ["message"],
                    "additionalProperties": false
                }
            }),
            none,
            5000,
            json!(["demo", "echo"]),
        ),
        SkillKind::TextStats => (
            "Text Statistics",
            "1.0.0",
            "api",
            "public",
            "Counts words, characters (Unicode scalar values) and sentences of a text and lists its ten most frequent words.",
            json!([
                { "name": "text", "type": "string", "description": "The text to analyse (at most 100000 characters).", "required": true,
                  "schema": { "type": "string", "maxLength": 100000 } }
            ]),
            json!({
                "content_type": "application/json",
                "description": "Counts and the ten most frequent words (ties broken alphabetically).",
                "schema": {
                    "type": "object",
                    "properties": {
                        "characters": { "type": "integer", "minimum": 0 },
                        "words": { "type": "integer", "minimum": 0 },
                        "sentences": { "type": "integer", "minimum": 0 },
                        "top_words": {
                            "type": "array", "maxItems": 10,
                            "items": {
                                "type": "object",
                                "properties": { "word": { "type": "string" }, "count": { "type": "integer", "minimum": 1 } },
                                "required": ["word", "count"], "additionalProperties": false
                            }
                        }
                    },
                    "required": ["characters", "words", "sentences", "top_words"],
                    "additionalProperties": false
                }
            }),
            none,
            5000,
            json!(["demo", "text"]),
        ),
        SkillKind::SlowTask => (
            "Slow Task",
            "1.0.0",
            "task",
            "restricted",
            "Waits delay_ms milliseconds (0-10000) in status running, then completes.",
            json!([
                { "name": "delay_ms", "type": "integer", "description": "How long to work, 0-10000 ms.", "required": false, "default": 1000,
                  "schema": { "type": "integer", "minimum": 0, "maximum": SLOW_TASK_MAX_DELAY_MS } }
            ]),
            json!({
                "content_type": "application/json",
                "description": "How long the task worked.",
                "schema": {
                    "type": "object",
                    "properties": { "waited_ms": { "type": "integer", "minimum": 0 } },
                    "required": ["waited_ms"], "additionalProperties": false
                }
            }),
            json!({
                "type": "api_key",
                "description": format!("Send your API key in the {API_KEY_HEADER} header."),
                "header": API_KEY_HEADER
            }),
            15_000,
            json!(["demo", "task", "delay"]),
        ),
        SkillKind::AlwaysFails => (
            "Always Fails",
            "1.0.0",
            "plugin",
            "public",
            "Ends failed with a unified error (code ENDPOINT_UNREACHABLE, SSP-ERR-3) every time.",
            json!([
                { "name": "reason", "type": "string", "description": "Text placed in the error.", "required": false, "default": "requested failure" }
            ]),
            json!({ "content_type": "application/json", "description": "Never produced: the skill always fails." }),
            none,
            5000,
            json!(["demo", "failure"]),
        ),
        SkillKind::Overrun => (
            "Overrun",
            "1.0.0",
            "task",
            "public",
            "Declares timeout_ms 50 but works 2000 ms: every execution ends as timeout (INVOCATION_TIMEOUT).",
            json!([]),
            json!({
                "content_type": "application/json",
                "description": "Never produced: the skill always overruns.",
                "schema": { "type": "object" }
            }),
            none,
            OVERRUN_TIMEOUT_MS,
            json!(["demo", "timeout"]),
        ),
        SkillKind::SpecLookup => (
            "Spec Lookup",
            "1.0.0",
            "knowledge",
            "restricted",
            "Returns the level, rule text and source of a requirement ID (e.g. SSP-INV-3) from the conform requirement catalogue.",
            json!([
                { "name": "id", "type": "string", "description": "A requirement ID such as SSP-INV-3.", "required": true,
                  "schema": { "type": "string", "pattern": "^[A-Z]+-[A-Z]+-[0-9]+[a-z]?$" } }
            ]),
            json!({
                "content_type": "application/json",
                "description": "The catalogue row.",
                "schema": {
                    "type": "object",
                    "properties": {
                        "id": { "type": "string" },
                        "level": { "enum": ["MUST", "SHOULD", "MAY", "REC"] },
                        "rule": { "type": "string" },
                        "source": { "type": "string" },
                        "seed_text": { "type": "string" }
                    },
                    "required": ["id", "level", "rule", "source"],
                    "additionalProperties": false
                }
            }),
            json!({
                "type": "custom",
                "description": "HMAC-SHA256 signed requests.",
                "custom": {
                    "instructions": format!(
                        "Compute HMAC-SHA256 over the raw request body with your secret key and send it hex-encoded in the {SIGNATURE_HEADER} header. Requests without a body (status and result polls, discovery) sign the empty string. Replay protection (recommended): also send {TIMESTAMP_HEADER} (Unix time in seconds, within {REPLAY_WINDOW_SECS} s of the provider's clock) and {NONCE_HEADER} (a value never sent before: 16 to 128 characters of A-Z a-z 0-9 - _ . ~); the signature then covers the text timestamp LF nonce LF METHOD LF path LF followed by the raw body (polls: empty body, so the signature is bound to the execution id in the path); a reused nonce or a stale timestamp is refused with 401 AUTH_REQUIRED. Executions invoked with replay protection are read with it too."
                    ),
                    "parameters": [
                        { "name": "secret_key", "type": "string", "description": "Your HMAC secret key.", "required": true },
                        { "name": "timestamp", "type": "integer", "description": format!("Replay protection: Unix time in seconds, sent in {TIMESTAMP_HEADER} together with a nonce."), "required": false },
                        { "name": "nonce", "type": "string", "description": format!("Replay protection: a never reused value, sent in {NONCE_HEADER} together with a timestamp."), "required": false }
                    ]
                }
            }),
            5000,
            json!(["demo", "knowledge", "requirements"]),
        ),
        SkillKind::ForumDigest => (
            "Forum Digest",
            "1.0.0",
            "plugin",
            "private",
            "Summarises a Parley thread of this server: message counts per kind, state, awaiting party.",
            json!([
                { "name": "thread", "type": "string", "description": "Thread id (th_12) or number (\"12\").", "required": true,
                  "schema": { "type": "string", "minLength": 1, "maxLength": 64 } }
            ]),
            json!({
                "content_type": "application/json",
                "description": "The thread digest.",
                "schema": {
                    "type": "object",
                    "properties": {
                        "thread": { "type": "string" },
                        "state": { "type": "string" },
                        "state_confirmed": { "type": "boolean" },
                        "awaiting": {},
                        "messages": { "type": "integer", "minimum": 0 },
                        "kinds": { "type": "object", "additionalProperties": { "type": "integer", "minimum": 1 } },
                        "last_activity_at": {}
                    },
                    "required": ["thread", "state", "state_confirmed", "awaiting", "messages", "kinds"],
                    "additionalProperties": false
                }
            }),
            json!({
                "type": "oauth2",
                "description": "OAuth 2.0 bearer token with scope skill:invoke (invoke) and skill:read (read results).",
                "oauth2": {
                    "authorization_url": format!("{base}/ssp/oauth/authorize"),
                    "token_url": format!("{base}/ssp/oauth/token"),
                    "scopes": {
                        "skill:invoke": "Invoke the skill",
                        "skill:read": "Read the skill's descriptor and executions"
                    }
                }
            }),
            5000,
            json!(["demo", "parley", "digest"]),
        ),
    };
    json!({
        "protocol": { "version": "1.0.0" },
        "id": kind.id(),
        "name": name,
        "version": version,
        "capability_type": cap,
        "description": description,
        "provider": { "name": "conform reference server", "url": base },
        "endpoint": {
            "url": format!("{base}/ssp/invoke/{slug}"),
            "method": "POST",
            "content_type": "application/json",
            "status_url": format!("{base}/ssp/status/{{execution_id}}"),
            "result_url": format!("{base}/ssp/result/{{execution_id}}"),
            "timeout_ms": timeout_ms,
            "retry": { "max_attempts": 3, "backoff_ms": 500 }
        },
        "inputs": inputs,
        "output": output,
        "auth": auth,
        "access": access,
        "tags": tags,
        "documentation_url": format!("{base}/ssp/skills/{slug}.json"),
        "created_at": "2026-01-01T00:00:00Z",
        "updated_at": "2026-01-01T00:00:00Z"
    })
}

/// The SkillIndexEntry of a descriptor (seed §4.3.3): the same id, name, type, access,
/// version (SSP-DISC-4).
pub fn index_entry(descriptor: &Value, descriptor_url: &str) -> Value {
    json!({
        "id": descriptor["id"],
        "name": descriptor["name"],
        "capability_type": descriptor["capability_type"],
        "description": descriptor["description"],
        "descriptor_url": descriptor_url,
        "access": descriptor["access"],
        "version": descriptor["version"],
    })
}

/// `conform/echo`.
pub fn echo(inputs: &Map<String, Value>) -> Value {
    Value::Object(inputs.clone())
}

/// `conform/text-stats`: word = maximal run of alphanumeric characters (apostrophes and
/// hyphens inside a word kept), lower-cased; sentence = a stretch with at least one
/// alphanumeric character ended by a run of `.`, `!`, `?` or by the end of the text.
pub fn text_stats(text: &str) -> Value {
    let characters = text.chars().count();
    let mut counts: BTreeMap<String, u64> = BTreeMap::new();
    let mut words = 0u64;
    for raw in text.split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '-')) {
        let w = raw.trim_matches(|c: char| c == '\'' || c == '-');
        if w.chars().any(char::is_alphanumeric) {
            words += 1;
            *counts.entry(w.to_lowercase()).or_default() += 1;
        }
    }
    let mut sentences = 0u64;
    let mut content = false;
    for c in text.chars() {
        if matches!(c, '.' | '!' | '?') {
            if content {
                sentences += 1;
                content = false;
            }
        } else if c.is_alphanumeric() {
            content = true;
        }
    }
    if content {
        sentences += 1;
    }
    let mut top: Vec<(String, u64)> = counts.into_iter().collect();
    // Most frequent first; ties alphabetical (BTreeMap order is kept by the stable sort).
    top.sort_by_key(|w| std::cmp::Reverse(w.1));
    top.truncate(10);
    json!({
        "characters": characters,
        "words": words,
        "sentences": sentences,
        "top_words": top.into_iter().map(|(w, c)| json!({ "word": w, "count": c })).collect::<Vec<_>>(),
    })
}

/// `conform/slow-task`: waits `delay_ms` on the tokio clock (paused time in tests).
pub async fn slow_task(delay_ms: u64) -> Value {
    tokio::time::sleep(Duration::from_millis(delay_ms)).await;
    json!({ "waited_ms": delay_ms })
}

/// `conform/always-fails`.
pub fn always_fails(reason: &str) -> ErrorObject {
    ErrorObject::new(
        codes::ENDPOINT_UNREACHABLE,
        format!("conform/always-fails failed by design: {reason}"),
    )
    .with_details(json!({ "reason": reason }))
}

/// `conform/overrun`: works [`OVERRUN_WORK_MS`], longer than its declared timeout.
pub async fn overrun() -> Value {
    tokio::time::sleep(Duration::from_millis(OVERRUN_WORK_MS)).await;
    json!({ "worked_ms": OVERRUN_WORK_MS })
}

/// `conform/forum-digest` over a `read_thread` body (`{thread, messages: [tree]}`,
/// parley-v1.md PV-RS-2).
pub fn digest(body: &Value) -> Result<Value, ErrorObject> {
    let bad = |what: &str| {
        ErrorObject::new(
            codes::ENDPOINT_UNREACHABLE,
            format!("unexpected read_thread body: {what}"),
        )
    };
    let thread = body.get("thread").ok_or_else(|| bad("no thread"))?;
    let mut kinds: BTreeMap<String, u64> = BTreeMap::new();
    let mut stack: Vec<&Value> = body
        .get("messages")
        .and_then(Value::as_array)
        .ok_or_else(|| bad("no messages"))?
        .iter()
        .collect();
    let mut total = 0u64;
    // Iterative walk of the reply tree (no recursion depth limit to hit).
    while let Some(m) = stack.pop() {
        total += 1;
        let kind = m.get("kind").and_then(Value::as_str).unwrap_or("unknown");
        *kinds.entry(kind.to_string()).or_default() += 1;
        if let Some(replies) = m.get("replies").and_then(Value::as_array) {
            stack.extend(replies.iter());
        }
    }
    let mut out = json!({
        "thread": thread.get("id").and_then(Value::as_str).ok_or_else(|| bad("thread.id"))?,
        "state": thread.get("state").and_then(Value::as_str).ok_or_else(|| bad("thread.state"))?,
        "state_confirmed": thread.get("state_confirmed_at").is_some_and(|v| !v.is_null()),
        "awaiting": thread.get("awaiting").cloned().unwrap_or(Value::Null),
        "messages": total,
        "kinds": kinds,
    });
    if let (Some(o), Some(t)) = (out.as_object_mut(), thread.get("last_activity_at")) {
        o.insert("last_activity_at".into(), t.clone());
    }
    Ok(out)
}

#[cfg(test)]
#[expect(clippy::unwrap_used)] // tests: a panic is the failure report
mod tests {
    use super::*;

    #[test]
    fn text_stats_counts() {
        let s = text_stats("The cat sat. The cat ran!  Where's the dog?? ok");
        assert_eq!(s["words"], 10);
        assert_eq!(s["sentences"], 4);
        assert_eq!(s["characters"], 47);
        assert_eq!(s["top_words"][0], json!({"word": "the", "count": 3}));
        assert_eq!(s["top_words"][1], json!({"word": "cat", "count": 2}));
        assert_eq!(s["top_words"][2], json!({"word": "dog", "count": 1}));
        let e = text_stats("");
        assert_eq!(
            e,
            json!({"characters": 0, "words": 0, "sentences": 0, "top_words": []})
        );
        assert_eq!(text_stats("...!?")["sentences"], 0);
        assert_eq!(
            text_stats("élan Élan")["top_words"][0],
            json!({"word": "élan", "count": 2})
        );
    }

    #[test]
    fn digest_counts_the_tree() {
        let body = json!({
            "thread": {"id": "th_1", "state": "answered", "state_confirmed_at": null, "awaiting": null,
                        "last_activity_at": "2026-01-01T00:00:00Z"},
            "messages": [{"kind": "ask", "replies": [
                {"kind": "answer", "replies": []},
                {"kind": "clarify", "replies": [{"kind": "answer", "replies": []}]}
            ]}]
        });
        let d = digest(&body).unwrap();
        assert_eq!(d["messages"], 4);
        assert_eq!(d["kinds"], json!({"answer": 2, "ask": 1, "clarify": 1}));
        assert_eq!(d["state_confirmed"], false);
        assert!(digest(&json!({})).is_err());
    }
}
