//! §11 response shapes (PV-RS-2), built from store rows. One place, so HTTP and MCP bodies
//! are byte-identical JSON (PV-TR-1, PV-TR-3).

use chrono::{DateTime, Utc};
use serde::ser::{Serialize, SerializeMap as _, SerializeSeq as _, Serializer};
use serde_json::{Map, Value, json};

use crate::domain::parley::ids::{Id, IdKind, format_id};
use crate::domain::parley::operation::Body;
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
    // Serialising these rows cannot fail: strings, numbers and derived `Serialize` types.
    serde_json::to_value(MessageOut { m, replies: None }).unwrap_or(Value::Null)
}

/// One message's members in wire order: the one definition behind [`message`] and
/// [`message_tree`] (values) and [`thread_read`] and [`post_created`] (text), with its
/// `replies` when it is written as part of a tree.
struct MessageOut<'a> {
    m: &'a MessageRow,
    replies: Option<Replies<'a>>,
}

impl Serialize for MessageOut<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let m = self.m;
        let mut map = s.serialize_map(None)?;
        map.serialize_entry("id", &Id(IdKind::Message, m.id))?;
        map.serialize_entry("thread", &Id(IdKind::Thread, m.thread_id))?;
        map.serialize_entry("parent", &m.parent_id.map(|p| Id(IdKind::Message, p)))?;
        map.serialize_entry("kind", &m.kind)?;
        map.serialize_entry("from", &m.author)?;
        map.serialize_entry("author_kind", &m.author_kind)?;
        map.serialize_entry("body", &m.body)?;
        map.serialize_entry("provenance", &m.provenance)?;
        map.serialize_entry("created_at", &m.created_at)?;
        if Kind::parse(&m.kind, true).is_some_and(Kind::is_dialectic) {
            map.serialize_entry("evidence", m.evidence.as_deref().unwrap_or_default())?;
            map.serialize_entry("claim", &m.claim_id.map(|c| Id(IdKind::Claim, c)))?;
        }
        if let Some(replies) = &self.replies {
            map.serialize_entry("replies", replies)?;
        }
        map.end()
    }
}

/// PV-RD-1: messages nested by `parent`, siblings in creation order: the messages at
/// `of` (indices into `rows`), each with its own replies. Written recursively, one level
/// per reply level: `Limits::reply_depth_max` bounds the depth (as it bounds any client's
/// parser).
#[derive(Clone, Copy)]
struct Replies<'a> {
    rows: &'a [MessageRow],
    children: &'a [Vec<usize>],
    of: &'a [usize],
}

impl Serialize for Replies<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.of.len()))?;
        for &i in self.of {
            // Indices come from `MessageTree::new` over these very rows.
            let (Some(m), Some(of)) = (self.rows.get(i), self.children.get(i)) else {
                continue;
            };
            let replies = Some(Replies { of, ..*self });
            seq.serialize_element(&MessageOut { m, replies })?;
        }
        seq.end()
    }
}

/// PV-RD-1: a thread's messages as a tree: the roots and each message's replies, as
/// indices into `rows` (in creation order). A message whose parent is not an earlier
/// message of the thread is a root.
struct MessageTree<'a> {
    rows: &'a [MessageRow],
    roots: Vec<usize>,
    children: Vec<Vec<usize>>,
}

impl<'a> MessageTree<'a> {
    fn new(rows: &'a [MessageRow]) -> Self {
        let index: std::collections::HashMap<i64, usize> =
            rows.iter().enumerate().map(|(i, m)| (m.id, i)).collect();
        let mut children = vec![Vec::new(); rows.len()];
        let mut roots = Vec::new();
        for (i, m) in rows.iter().enumerate() {
            match m.parent_id.and_then(|p| index.get(&p)) {
                Some(&pi) if pi < i => children[pi].push(i),
                _ => roots.push(i),
            }
        }
        Self {
            rows,
            roots,
            children,
        }
    }
}

impl Serialize for MessageTree<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        Replies {
            rows: self.rows,
            children: &self.children,
            of: &self.roots,
        }
        .serialize(s)
    }
}

/// Thread `{id, state, state_origin, state_confirmed_at, state_label, creator, awaiting,
/// created_at, last_activity_at}`.
pub(crate) fn thread(t: &ThreadRow) -> Value {
    // Infallible, as for `message`.
    serde_json::to_value(ThreadOut(t)).unwrap_or(Value::Null)
}

/// A thread's members in wire order: the one definition behind [`thread`] (a value) and
/// the bodies written straight to text ([`thread_read`], [`post_created`]).
struct ThreadOut<'a>(&'a ThreadRow);

impl Serialize for ThreadOut<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let t = self.0;
        let mut map = s.serialize_map(None)?;
        map.serialize_entry("id", &Id(IdKind::Thread, t.id))?;
        map.serialize_entry("state", t.state.as_str())?;
        map.serialize_entry("state_origin", t.state_origin.as_str())?;
        map.serialize_entry("state_confirmed_at", &t.state_confirmed_at)?;
        map.serialize_entry("state_label", &t.state_label)?;
        map.serialize_entry("creator", &t.creator)?;
        map.serialize_entry("awaiting", &t.awaiting)?;
        map.serialize_entry("created_at", &t.created_at)?;
        map.serialize_entry("last_activity_at", &t.last_activity_at)?;
        map.end()
    }
}

/// A post's 201 body `{message, thread}` written straight to text (no claim: a dialectic
/// act's body is built as values, for the seeded faults that edit a claim).
pub(crate) fn post_created(m: &MessageRow, t: &ThreadRow) -> Body {
    #[derive(serde::Serialize)]
    struct Created<'a> {
        message: MessageOut<'a>,
        thread: ThreadOut<'a>,
    }
    Body::serialized(&Created {
        message: MessageOut { m, replies: None },
        thread: ThreadOut(t),
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

/// PV-RD-1: the thread's messages as a tree of values (for the seeded faults that edit
/// it; [`thread_read`] writes the same JSON without building it).
pub(crate) fn message_tree(messages: &[MessageRow]) -> Vec<Value> {
    match serde_json::to_value(MessageTree::new(messages)) {
        Ok(Value::Array(tree)) => tree,
        // Unreachable: a sequence of the infallible messages above.
        _ => Vec::new(),
    }
}

/// `read_thread`'s body `{thread, messages}` written straight from the rows: a
/// 1,000-message read builds no tree of values, which was most of its cost (see
/// `benches/README.md`). The same bytes as [`object`] over [`thread`] and [`message_tree`].
pub(crate) fn thread_read(t: &ThreadRow, messages: &[MessageRow]) -> Body {
    #[derive(serde::Serialize)]
    struct ThreadRead<'a> {
        thread: ThreadOut<'a>,
        messages: MessageTree<'a>,
    }
    Body::serialized(&ThreadRead {
        thread: ThreadOut(t),
        messages: MessageTree::new(messages),
    })
}

/// An empty JSON object.
pub(crate) fn empty() -> Value {
    Value::Object(Map::new())
}
