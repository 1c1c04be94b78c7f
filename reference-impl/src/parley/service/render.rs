//! §11 response shapes (PV-RS-2), built from store rows. One place, so HTTP and MCP bodies
//! are byte-identical JSON (PV-TR-1, PV-TR-3).

use chrono::{DateTime, Utc};
use serde_json::{Map, Value, json};

use crate::domain::parley::ids::{IdKind, format_id};
use crate::domain::parley::{Kind, Party};
use crate::store::parley::{ClaimActRow, ClaimRow, EventRow, MessageRow, ThreadRow};

/// Party `{identity, extension}` (`extension` null when absent).
pub(crate) fn party(p: &Party) -> Value {
    json!({"identity": p.identity, "extension": p.extension})
}

/// An object of already rendered values, in the given key order. Unlike `json!`, which
/// passes every value through `serde_json::to_value`, it moves them in without a copy:
/// `json!({"from": party(..)})` would render the party and then deep-copy it.
pub(crate) fn object<const N: usize>(entries: [(&str, Value); N]) -> Value {
    let mut map = Map::with_capacity(N);
    for (key, value) in entries {
        map.insert(key.to_owned(), value);
    }
    Value::Object(map)
}

/// Message `{id, thread, parent, kind, from, author_kind, body, provenance, created_at}`;
/// dialectic acts add `evidence` and `claim`.
pub(crate) fn message(m: &MessageRow) -> Value {
    let mut v = json!({
        "id": format_id(IdKind::Message, m.id),
        "thread": format_id(IdKind::Thread, m.thread_id),
        "parent": m.parent_id.map(|p| format_id(IdKind::Message, p)),
        "kind": m.kind,
        // Inline rather than `party(..)`: a nested `Value` in `json!` is deep-copied.
        "from": {"identity": m.author.identity, "extension": m.author.extension},
        "author_kind": m.author_kind,
        "body": m.body,
        "provenance": m.provenance,
        "created_at": m.created_at,
    });
    if Kind::parse(&m.kind, true).is_some_and(Kind::is_dialectic)
        && let Value::Object(map) = &mut v
    {
        map.insert(
            "evidence".into(),
            json!(m.evidence.clone().unwrap_or_default()),
        );
        map.insert(
            "claim".into(),
            json!(m.claim_id.map(|c| format_id(IdKind::Claim, c))),
        );
    }
    v
}

/// Thread `{id, state, state_origin, state_confirmed_at, state_label, creator, awaiting,
/// created_at, last_activity_at}`.
pub(crate) fn thread(t: &ThreadRow) -> Value {
    json!({
        "id": format_id(IdKind::Thread, t.id),
        "state": t.state.as_str(),
        "state_origin": t.state_origin.as_str(),
        "state_confirmed_at": t.state_confirmed_at,
        "state_label": t.state_label,
        "creator": {"identity": t.creator.identity, "extension": t.creator.extension},
        "awaiting": t.awaiting.to_json(),
        "created_at": t.created_at,
        "last_activity_at": t.last_activity_at,
    })
}

/// Event `{id, subject, thread, claim, from_state, to_state, origin, label, actor, at,
/// confirmed_at}`.
pub(crate) fn event(e: &EventRow) -> Value {
    json!({
        "id": format_id(IdKind::Event, e.id),
        "subject": e.subject,
        "thread": format_id(IdKind::Thread, e.thread_id),
        "claim": e.claim_id.map(|c| format_id(IdKind::Claim, c)),
        "from_state": e.from_state,
        "to_state": e.to_state,
        "origin": e.origin,
        "label": e.label,
        "actor": party(&e.actor),
        "at": e.at,
        "confirmed_at": e.confirmed_at,
    })
}

fn act(a: &ClaimActRow) -> Value {
    json!({
        "message": format_id(IdKind::Message, a.message_id),
        "by": party(&a.by),
        "evidence": a.evidence,
        "at": a.at,
    })
}

/// PV-DI-2: a claim is expired once `valid_until` has passed.
pub(crate) fn expired(valid_until: Option<&str>, now: DateTime<Utc>) -> bool {
    valid_until
        .and_then(|s| DateTime::parse_from_rfc3339(s).ok())
        .is_some_and(|t| t.with_timezone(&Utc) <= now)
}

/// Claim `{id, thread, message, author, status, support, evidence, attestations,
/// refutations, supersedes, superseded_by, valid_until, expired}` (+ `verifications`).
/// `support` counts attestations only (PV-RS-3: `verify` does not add to it).
pub(crate) fn claim(c: &ClaimRow, acts: &[ClaimActRow], now: DateTime<Utc>) -> Value {
    let of = |name: &str| {
        acts.iter()
            .filter(|a| a.act == name)
            .map(act)
            .collect::<Vec<_>>()
    };
    let attestations = of("attest");
    json!({
        "id": format_id(IdKind::Claim, c.id),
        "thread": format_id(IdKind::Thread, c.thread_id),
        "message": format_id(IdKind::Message, c.message_id),
        "author": party(&c.author),
        "status": c.status.as_str(),
        "support": attestations.len(),
        "evidence": c.evidence,
        "attestations": attestations,
        "refutations": of("refute"),
        "verifications": of("verify"),
        "supersedes": c.supersedes.iter().map(|s| format_id(IdKind::Claim, *s)).collect::<Vec<_>>(),
        "superseded_by": c.superseded_by.map(|s| format_id(IdKind::Claim, s)),
        "valid_until": c.valid_until,
        "expired": expired(c.valid_until.as_deref(), now),
    })
}

/// PV-RD-1: messages nested by `parent` (`replies`), siblings in creation order. Built
/// iteratively from the newest message back (a reply always has a larger id than its
/// parent), so a deep reply chain cannot exhaust the stack while building.
pub(crate) fn message_tree(messages: &[MessageRow]) -> Vec<Value> {
    let index: std::collections::HashMap<i64, usize> = messages
        .iter()
        .enumerate()
        .map(|(i, m)| (m.id, i))
        .collect();
    let mut replies: Vec<Vec<Value>> = vec![Vec::new(); messages.len()];
    let mut roots = Vec::new();
    for (i, m) in messages.iter().enumerate().rev() {
        let mut v = message(m);
        let mut children = std::mem::take(&mut replies[i]);
        children.reverse(); // collected newest first
        if let Value::Object(map) = &mut v {
            map.insert("replies".into(), Value::Array(children));
        }
        match m.parent_id.and_then(|p| index.get(&p)) {
            Some(&pi) if pi < i => replies[pi].push(v),
            _ => roots.push(v),
        }
    }
    roots.reverse();
    roots
}

/// An empty JSON object.
pub(crate) fn empty() -> Value {
    Value::Object(Map::new())
}
