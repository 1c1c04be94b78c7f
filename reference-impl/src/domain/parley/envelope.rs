//! Envelope validation (§3, PV-EN; dialectic members PV-DI-1/2/6, PV-RS-3). Everything a
//! post can be refused for with a 400 without looking at the store.

use chrono::{DateTime, Utc};
use serde_json::{Map, Value};

use super::dialectic::{Evidence, parse_evidence};
use super::ids::{IdKind, parse_id};
use super::kinds::Kind;
use super::limits::{Limits, char_len, extension_ok};
use super::reasons::{Reason, Refusal, refuse};

/// Optional `provenance` of a message.
#[derive(
    Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
// Closed in the schema (`/openapi.json`) only: the envelope check refuses unknown members.
#[schemars(deny_unknown_fields)]
pub struct Provenance {
    /// Model that wrote the message.
    #[serde(default)]
    pub model: Option<String>,
    /// Client that sent it.
    #[serde(default)]
    pub client: Option<String>,
}

/// A validated envelope: only what the client may decide. Server-set members (`id`,
/// `from.identity`, `author_kind`, `created_at`) are dropped here (PV-EN-4).
#[derive(Debug, Clone, PartialEq)]
pub struct Envelope {
    /// The speech act.
    pub kind: Kind,
    /// Target thread number, if given.
    pub thread: Option<i64>,
    /// Parent message number, if given.
    pub parent: Option<i64>,
    /// `from.extension`.
    pub extension: Option<String>,
    /// The body (≤ `body_max_chars`, not blank).
    pub body: String,
    /// `provenance`.
    pub provenance: Option<Provenance>,
    /// Evidence (dialectic acts only; 1..evidence_max there, empty otherwise).
    pub evidence: Vec<Evidence>,
    /// Target claim of `attest`/`refute`/`verify`.
    pub claim: Option<i64>,
    /// Claims an `assert` supersedes.
    pub supersedes: Vec<i64>,
    /// `valid_until` of an `assert`.
    pub valid_until: Option<DateTime<Utc>>,
}

/// Top-level members a client may send. `id`, `author_kind` and `created_at` are server-set
/// and **ignored** when sent (PV-EN-4) — so they are known, not "unknown fields" (PV-EN-1).
pub const TOP_LEVEL: &[&str] = &[
    "parley",
    "kind",
    "thread",
    "parent",
    "from",
    "body",
    "provenance",
    "evidence",
    "claim",
    "supersedes",
    "valid_until",
    "id",
    "author_kind",
    "created_at",
];

/// A member that is absent or JSON `null` is treated as absent.
fn present<'a>(map: &'a Map<String, Value>, name: &str) -> Option<&'a Value> {
    map.get(name).filter(|v| !v.is_null())
}

fn opt_string(map: &Map<String, Value>, name: &str, ctx: &str) -> Result<Option<String>, Refusal> {
    match present(map, name) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => refuse(Reason::InvalidBody, format!("{ctx}{name} must be a string")),
    }
}

fn opt_id(map: &Map<String, Value>, name: &str, kind: IdKind) -> Result<Option<i64>, Refusal> {
    match present(map, name) {
        None => Ok(None),
        Some(v) => match parse_id(kind, v) {
            Some(n) => Ok(Some(n)),
            None => refuse(
                Reason::InvalidBody,
                format!(
                    "{name} must be {}N, a number or a digit string",
                    kind.prefix()
                ),
            ),
        },
    }
}

fn parse_from(map: &Map<String, Value>) -> Result<Option<String>, Refusal> {
    let Some(from) = present(map, "from") else {
        return Ok(None);
    };
    let Value::Object(from) = from else {
        return refuse(Reason::InvalidBody, "from must be an object");
    };
    // `from.identity` is server-set and ignored (PV-EN-4, PV-ID-1).
    if let Some(k) = from
        .keys()
        .find(|k| !matches!(k.as_str(), "extension" | "identity"))
    {
        return refuse(Reason::InvalidBody, format!("from: unknown field {k:?}"));
    }
    let ext = opt_string(from, "extension", "from.")?;
    if let Some(e) = &ext
        && !extension_ok(e)
    {
        // PV-EN-7
        return refuse(
            Reason::InvalidBody,
            "from.extension must match ^[a-z0-9][a-z0-9_-]{0,31}$",
        );
    }
    Ok(ext)
}

fn parse_provenance(
    map: &Map<String, Value>,
    limits: &Limits,
) -> Result<Option<Provenance>, Refusal> {
    let Some(p) = present(map, "provenance") else {
        return Ok(None);
    };
    let Value::Object(p) = p else {
        return refuse(Reason::InvalidBody, "provenance must be an object");
    };
    if let Some(k) = p.keys().find(|k| !matches!(k.as_str(), "model" | "client")) {
        return refuse(
            Reason::InvalidBody,
            format!("provenance: unknown field {k:?}"),
        );
    }
    let model = opt_string(p, "model", "provenance.")?;
    let client = opt_string(p, "client", "provenance.")?;
    for (name, v) in [("model", &model), ("client", &client)] {
        if v.as_deref()
            .is_some_and(|s| char_len(s) > limits.provenance_max_chars)
        {
            return refuse(
                Reason::InvalidBody,
                format!(
                    "provenance.{name} longer than {} characters",
                    limits.provenance_max_chars
                ),
            );
        }
    }
    Ok(Some(Provenance { model, client }))
}

/// Keeps the first occurrence of each id: listing a claim twice supersedes it once.
fn dedup(ids: Vec<i64>) -> Vec<i64> {
    let mut out: Vec<i64> = Vec::with_capacity(ids.len());
    for id in ids {
        if !out.contains(&id) {
            out.push(id);
        }
    }
    out
}

/// Validates a post's arguments. Order (all 400s; the service has already applied the
/// earlier steps of PV-AU-6): shape and types (`invalid_body`, PV-EN-1/5/7) → missing kind /
/// blank body (`invalid_body`) → `kind_unknown` (PV-EN-3, PV-DI-8) → `body_too_long`
/// (PV-EN-2) → dialectic members on kinds that do not use them, missing `claim`, bad
/// `valid_until`/`supersedes` (`invalid_body`, PV-RS-3, PV-DI-2) → evidence
/// (`evidence_required` / `evidence_invalid`, PV-DI-1) → `thread_required` (PV-EN-6).
pub fn parse_envelope(
    v: &Value,
    limits: &Limits,
    dialectic: bool,
    now: DateTime<Utc>,
) -> Result<Envelope, Refusal> {
    let map = top_level(v)?;
    let kind = opt_string(map, "kind", "")?;
    let body = opt_string(map, "body", "")?;
    let thread = opt_id(map, "thread", IdKind::Thread)?;
    let parent = opt_id(map, "parent", IdKind::Message)?;
    let extension = parse_from(map)?;
    let provenance = parse_provenance(map, limits)?;
    // Types of the dialectic members are checked whatever the kind (wrong type = shape).
    let claim = opt_id(map, "claim", IdKind::Claim)?;
    let supersedes = opt_supersedes(map)?;
    let valid_until = opt_string(map, "valid_until", "")?;

    let (kind, body) = parse_kind_and_body(kind, body, limits, dialectic)?;
    check_members_for_kind(
        map,
        kind,
        claim,
        supersedes.is_some(),
        valid_until.is_some(),
    )?;
    let valid_until = parse_valid_until(valid_until, now)?;
    let evidence = if kind.needs_evidence() {
        parse_evidence(present(map, "evidence"), limits)?
    } else {
        Vec::new()
    };
    check_thread(kind, thread, parent)?;
    Ok(Envelope {
        kind,
        thread,
        parent,
        extension,
        body,
        provenance,
        evidence,
        claim,
        supersedes: dedup(supersedes.unwrap_or_default()),
        valid_until,
    })
}

/// The envelope's object, once its member names and `parley` version are known (PV-EN-1).
fn top_level(v: &Value) -> Result<&Map<String, Value>, Refusal> {
    let Value::Object(map) = v else {
        return refuse(Reason::InvalidBody, "the envelope must be a JSON object");
    };
    if let Some(k) = map.keys().find(|k| !TOP_LEVEL.contains(&k.as_str())) {
        return refuse(Reason::InvalidBody, format!("unknown field {k:?}"));
    }
    match present(map, "parley") {
        None => {}
        Some(Value::String(s)) if s == "1" => {}
        Some(_) => return refuse(Reason::InvalidBody, "parley must be \"1\" when present"),
    }
    Ok(map)
}

/// `supersedes` as claim numbers, in the order sent (duplicates kept).
fn opt_supersedes(map: &Map<String, Value>) -> Result<Option<Vec<i64>>, Refusal> {
    match present(map, "supersedes") {
        None => Ok(None),
        Some(Value::Array(items)) => items
            .iter()
            .map(|i| parse_id(IdKind::Claim, i))
            .collect::<Option<Vec<i64>>>()
            .map(Some)
            .ok_or_else(|| Refusal::new(Reason::InvalidBody, "supersedes items must be claim ids")),
        Some(_) => refuse(
            Reason::InvalidBody,
            "supersedes must be an array of claim ids",
        ),
    }
}

/// The required `kind` and `body`: present, body not blank, kind known (PV-EN-3, PV-DI-8),
/// body within the limit (PV-EN-2).
fn parse_kind_and_body(
    kind: Option<String>,
    body: Option<String>,
    limits: &Limits,
    dialectic: bool,
) -> Result<(Kind, String), Refusal> {
    let Some(kind_name) = kind else {
        return refuse(Reason::InvalidBody, "kind is required");
    };
    let Some(body) = body.filter(|b| !b.trim().is_empty()) else {
        return refuse(
            Reason::InvalidBody,
            "body is required and must not be blank",
        );
    };
    let Some(kind) = Kind::parse(&kind_name, dialectic) else {
        return refuse(Reason::KindUnknown, format!("unknown kind {kind_name:?}"));
    };
    let len = char_len(&body);
    if len > limits.body_max_chars {
        return refuse(
            Reason::BodyTooLong,
            format!(
                "body has {len} characters, the limit is {}",
                limits.body_max_chars
            ),
        );
    }
    Ok((kind, body))
}

/// Dialectic members sent only where `kind` uses them, and `claim` where it needs one.
fn check_members_for_kind(
    map: &Map<String, Value>,
    kind: Kind,
    claim: Option<i64>,
    has_supersedes: bool,
    has_valid_until: bool,
) -> Result<(), Refusal> {
    // PV-RS-3: members used only by some kinds.
    let misplaced = [
        ("claim", claim.is_some() && !kind.targets_claim()),
        ("supersedes", has_supersedes && !kind.creates_claim()),
        ("valid_until", has_valid_until && !kind.creates_claim()),
        (
            "evidence",
            present(map, "evidence").is_some() && !kind.needs_evidence(),
        ),
    ];
    if let Some((name, _)) = misplaced.iter().find(|(_, bad)| *bad) {
        return refuse(
            Reason::InvalidBody,
            format!("{name} is not used by kind {}", kind.as_str()),
        );
    }
    if kind.targets_claim() && claim.is_none() {
        return refuse(
            Reason::InvalidBody,
            format!("{} needs claim", kind.as_str()),
        );
    }
    Ok(())
}

/// `valid_until`, when sent, as a time after `now`.
fn parse_valid_until(
    valid_until: Option<String>,
    now: DateTime<Utc>,
) -> Result<Option<DateTime<Utc>>, Refusal> {
    let Some(s) = valid_until else {
        return Ok(None);
    };
    // PV-DI-2: RFC 3339, in the future.
    let t = DateTime::parse_from_rfc3339(&s)
        .map_err(|_| {
            Refusal::new(
                Reason::InvalidBody,
                "valid_until must be an RFC 3339 timestamp",
            )
        })?
        .with_timezone(&Utc);
    if t <= now {
        return refuse(Reason::InvalidBody, "valid_until must be in the future");
    }
    Ok(Some(t))
}

/// A message that does not open a thread must say where it goes.
fn check_thread(kind: Kind, thread: Option<i64>, parent: Option<i64>) -> Result<(), Refusal> {
    if thread.is_none() && parent.is_none() && !kind.opens_thread() {
        // PV-EN-6, PV-RS-3
        return refuse(
            Reason::ThreadRequired,
            format!(
                "{} needs thread or parent; only ask (or assert) opens a thread",
                kind.as_str()
            ),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::parley::limits::REFERENCE;
    use serde_json::json;

    fn now() -> DateTime<Utc> {
        DateTime::parse_from_rfc3339("2026-11-30T04:00:00Z")
            .map(|t| t.with_timezone(&Utc))
            .unwrap_or_default()
    }

    fn check(v: Value, dialectic: bool) -> Result<Envelope, Reason> {
        parse_envelope(&v, &REFERENCE, dialectic, now()).map_err(|r| r.reason)
    }

    fn ev() -> Value {
        json!([{"kind": "url", "ref": "https://example.org"}])
    }

    #[test]
    fn refusal_table() {
        use Reason::*;
        let b500 = "é".repeat(500);
        let b501 = "é".repeat(501);
        let table: Vec<(Value, bool, Option<Reason>)> = vec![
            // PV-EN-1
            (json!({"kind": "ask", "body": "q"}), false, None),
            (
                json!({"parley": "1", "kind": "ask", "body": "q"}),
                false,
                None,
            ),
            (
                json!({"parley": "2", "kind": "ask", "body": "q"}),
                false,
                Some(InvalidBody),
            ),
            (
                json!({"parley": 1, "kind": "ask", "body": "q"}),
                false,
                Some(InvalidBody),
            ),
            (
                json!({"kind": "ask", "body": "q", "colour": "red"}),
                false,
                Some(InvalidBody),
            ),
            (
                json!({"kind": "ask", "body": "q", "from": {"extension": "w", "x": 1}}),
                false,
                Some(InvalidBody),
            ),
            (
                json!({"kind": "ask", "body": "q", "provenance": {"model": "m", "x": 1}}),
                false,
                Some(InvalidBody),
            ),
            (
                json!({"kind": "ask", "body": "q", "provenance": {"model": "m", "client": "c"}}),
                false,
                None,
            ),
            (
                json!({"kind": "ask", "body": "q", "provenance": {"model": "m".repeat(201)}}),
                false,
                Some(InvalidBody),
            ),
            (
                json!({"kind": "ask", "body": "q", "provenance": {"model": "m".repeat(200)}}),
                false,
                None,
            ),
            (
                json!({"kind": "ask", "body": "q", "provenance": "m"}),
                false,
                Some(InvalidBody),
            ),
            (json!({"body": "q"}), false, Some(InvalidBody)),
            (json!({"kind": "ask"}), false, Some(InvalidBody)),
            (json!({"kind": "ask", "body": ""}), false, Some(InvalidBody)),
            (
                json!({"kind": "ask", "body": " \n\t "}),
                false,
                Some(InvalidBody),
            ),
            (json!({"kind": "ask", "body": 5}), false, Some(InvalidBody)),
            (json!({"kind": 5, "body": "q"}), false, Some(InvalidBody)),
            (json!(["ask"]), false, Some(InvalidBody)),
            (json!("ask"), false, Some(InvalidBody)),
            // PV-EN-4: server-set members are ignored, not unknown
            (
                json!({"kind": "ask", "body": "q", "id": "msg_1", "author_kind": "human", "created_at": "x", "from": {"identity": "human:eve"}}),
                false,
                None,
            ),
            // PV-EN-2
            (json!({"kind": "ask", "body": b500}), false, None),
            (
                json!({"kind": "ask", "body": b501}),
                false,
                Some(BodyTooLong),
            ),
            // PV-EN-3, PV-DI-8
            (
                json!({"kind": "shout", "body": "q"}),
                false,
                Some(KindUnknown),
            ),
            (
                json!({"kind": "Ask", "body": "q"}),
                false,
                Some(KindUnknown),
            ),
            (
                json!({"kind": "assert", "body": "q", "evidence": ev()}),
                false,
                Some(KindUnknown),
            ),
            // PV-EN-5 (syntax; existence is the store's)
            (
                json!({"kind": "inform", "body": "q", "thread": "th_3"}),
                false,
                None,
            ),
            (
                json!({"kind": "inform", "body": "q", "thread": 3}),
                false,
                None,
            ),
            (
                json!({"kind": "inform", "body": "q", "thread": "3"}),
                false,
                None,
            ),
            (
                json!({"kind": "inform", "body": "q", "parent": "msg_3"}),
                false,
                None,
            ),
            (
                json!({"kind": "inform", "body": "q", "thread": "msg_3"}),
                false,
                Some(InvalidBody),
            ),
            (
                json!({"kind": "inform", "body": "q", "thread": true}),
                false,
                Some(InvalidBody),
            ),
            // PV-EN-6
            (
                json!({"kind": "inform", "body": "q"}),
                false,
                Some(ThreadRequired),
            ),
            (
                json!({"kind": "decide", "body": "q"}),
                false,
                Some(ThreadRequired),
            ),
            (
                json!({"kind": "assert", "body": "q", "evidence": ev()}),
                true,
                None,
            ),
            (
                json!({"kind": "attest", "body": "q", "claim": "cl_1", "evidence": ev()}),
                true,
                Some(ThreadRequired),
            ),
            // PV-EN-7
            (
                json!({"kind": "ask", "body": "q", "from": {"extension": "Bad"}}),
                false,
                Some(InvalidBody),
            ),
            (
                json!({"kind": "ask", "body": "q", "from": {"extension": ""}}),
                false,
                Some(InvalidBody),
            ),
            (
                json!({"kind": "ask", "body": "q", "from": {"extension": "worker-2"}}),
                false,
                None,
            ),
            // PV-RS-3 misplaced dialectic members
            (
                json!({"kind": "ask", "body": "q", "evidence": ev()}),
                true,
                Some(InvalidBody),
            ),
            (
                json!({"kind": "ask", "body": "q", "claim": "cl_1"}),
                true,
                Some(InvalidBody),
            ),
            (
                json!({"kind": "answer", "body": "q", "thread": 1, "supersedes": []}),
                true,
                Some(InvalidBody),
            ),
            (
                json!({"kind": "ask", "body": "q", "valid_until": "2030-01-01T00:00:00Z"}),
                true,
                Some(InvalidBody),
            ),
            (
                json!({"kind": "attest", "body": "q", "thread": 1, "claim": 1, "evidence": ev(), "supersedes": ["cl_2"]}),
                true,
                Some(InvalidBody),
            ),
            (
                json!({"kind": "assert", "body": "q", "evidence": ev(), "claim": "cl_1"}),
                true,
                Some(InvalidBody),
            ),
            (
                json!({"kind": "attest", "body": "q", "thread": 1, "evidence": ev()}),
                true,
                Some(InvalidBody),
            ),
            // PV-DI-2
            (
                json!({"kind": "assert", "body": "q", "evidence": ev(), "valid_until": "2030-01-01T00:00:00Z"}),
                true,
                None,
            ),
            (
                json!({"kind": "assert", "body": "q", "evidence": ev(), "valid_until": "2020-01-01T00:00:00Z"}),
                true,
                Some(InvalidBody),
            ),
            (
                json!({"kind": "assert", "body": "q", "evidence": ev(), "valid_until": "tomorrow"}),
                true,
                Some(InvalidBody),
            ),
            // PV-DI-1
            (
                json!({"kind": "assert", "body": "q"}),
                true,
                Some(EvidenceRequired),
            ),
            (
                json!({"kind": "assert", "body": "q", "evidence": []}),
                true,
                Some(EvidenceRequired),
            ),
            (
                json!({"kind": "assert", "body": "q", "evidence": [{"kind": "url", "ref": "nope"}]}),
                true,
                Some(EvidenceInvalid),
            ),
            (
                json!({"kind": "refute", "body": "q", "thread": 1, "claim": "1", "evidence": ev()}),
                true,
                None,
            ),
            (
                json!({"kind": "assert", "body": "q", "evidence": ev(), "supersedes": ["cl_1", 2, "3"]}),
                true,
                None,
            ),
            (
                json!({"kind": "assert", "body": "q", "evidence": ev(), "supersedes": ["th_1"]}),
                true,
                Some(InvalidBody),
            ),
            // null = absent
            (
                json!({"kind": "ask", "body": "q", "thread": null, "from": null}),
                false,
                None,
            ),
        ];
        for (v, dialectic, want) in table {
            assert_eq!(check(v.clone(), dialectic).err(), want, "{v}");
        }
    }

    #[test]
    fn supersedes_deduplicated() {
        let e = check(
            json!({"kind": "assert", "body": "q", "evidence": ev(), "supersedes": ["cl_2", 1, "2"]}),
            true,
        );
        assert_eq!(e.map(|e| e.supersedes), Ok(vec![2, 1]));
    }

    #[test]
    fn server_set_members_are_dropped() {
        // PV-EN-4
        let e = check(
            json!({"kind": "ask", "body": "q", "from": {"identity": "human:eve", "extension": "w1"}}),
            false,
        );
        assert_eq!(e.map(|e| e.extension), Ok(Some("w1".to_string())));
    }
}
