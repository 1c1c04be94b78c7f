//! Sending one history step to the target as one client: the request (ids mapped from the
//! model's indices), the write paced under the token's quota with the run's [`Pacer`]
//! (PV-TR-5), a per-request timeout, and the answer as an [`Observed`] outcome class.

use std::time::Duration;

use serde_json::{Value, json};

use super::spec::{ClaimView, Observed, View};
use crate::parley::model::claim_steps::evidence_json;
use crate::parley::model::observe::{Answer, extension_of, str_at};
use crate::parley::model::state::Op;
use crate::parley::pacing::Pacer;
use crate::parley::preflight::ParleyTarget;
use crate::parley::role::Role;
use crate::parley::tokens::token_env;
use crate::transport::{Auth, Exchange, TransportKind};

/// Longest wait for one answer; past it the step is recorded as unanswered.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// Server ids of the group's thread and of its messages (index = model message index).
#[derive(Debug, Clone, Default)]
pub struct Ids {
    /// The thread id, once opened.
    pub thread: Option<String>,
    /// Message ids in model order.
    pub messages: Vec<String>,
    /// Claim ids in model order, with the model index of the message carrying each.
    pub claims: Vec<(String, usize)>,
}

/// What one request produced: the answer (`None`: none within the timeout or the
/// connection failed) and the exchanges.
pub struct Sent {
    /// The answer.
    pub answer: Option<Answer>,
    /// The requests made.
    pub exchanges: Vec<Exchange>,
}

/// The operation name and arguments of a model operation of a group.
pub fn request(op: &Op, ids: &Ids) -> Option<(&'static str, Value)> {
    let tid = || json!(ids.thread.clone().unwrap_or_default());
    let mid = |m: usize| ids.messages.get(m).cloned();
    Some(match op {
        Op::Open { .. } => ("post", json!({"kind": "ask", "body": "history step"})),
        Op::Post {
            thread: 0,
            parent,
            kind,
            ..
        } => {
            let mut v = json!({"kind": kind.as_str(), "thread": tid(), "body": "history step"});
            if let Some(p) = parent {
                v["parent"] = json!(mid(*p)?);
            }
            ("post", v)
        }
        Op::Mark {
            thread: 0, state, ..
        } => ("mark", json!({"thread": tid(), "state": state.as_str()})),
        Op::Reopen { thread: 0, .. } => ("reopen", json!({"thread": tid()})),
        Op::Assert {
            thread: None,
            supersedes: None,
            evidence,
            ..
        } => {
            let mut v = json!({"kind": "assert", "body": "history step"});
            if let Some(e) = evidence_json(*evidence) {
                v["evidence"] = e;
            }
            ("post", v)
        }
        Op::ClaimAct {
            claim,
            act,
            evidence,
            ..
        } => {
            let (id, message) = ids.claims.get(*claim)?;
            let mut v = json!({"kind": act.kind().as_str(), "thread": tid(), "parent": mid(*message)?, "claim": id, "body": "history step"});
            if let Some(e) = evidence_json(*evidence) {
                v["evidence"] = e;
            }
            ("post", v)
        }
        _ => return None,
    })
}

/// The auth of `role` for one call; a write waits for room in the token's quota (or another
/// token of the role's pool) first.
pub async fn auth(target: &ParleyTarget, role: Role, write: bool, pacer: Option<&Pacer>) -> Auth {
    let auth = target.auth(role).unwrap_or(Auth::None);
    if let (true, Some(p), Auth::Bearer { token, .. }) = (write, pacer, &auth)
        && p.paces(token)
    {
        let i = p.admit(token).await;
        if i > 0 {
            return Auth::Bearer {
                token: p.pooled(token, i).to_string(),
                env: Some(token_env(role, i)),
            };
        }
    }
    auth
}

/// Sends `op` with `args` and waits at most [`REQUEST_TIMEOUT`] times the run's time scale.
pub async fn send(
    target: &ParleyTarget,
    kind: TransportKind,
    op: &str,
    args: &Value,
    auth: &Auth,
) -> Sent {
    let call = target.transport(kind).call(op, args, auth);
    let bound = target
        .time_scale
        .budget("history step bound", REQUEST_TIMEOUT);
    match tokio::time::timeout(bound.limit(), call).await {
        Ok(Ok(mut reply)) => Sent {
            answer: Some(Answer::read(kind, &mut reply)),
            exchanges: reply.exchanges,
        },
        Ok(Err(e)) => {
            tracing::debug!(error = %e, op, "history step got no answer");
            Sent {
                answer: None,
                exchanges: e.exchanges().to_vec(),
            }
        }
        Err(_) => {
            // An unknown outcome, as any step without an answer: the history judges it so.
            tracing::debug!(op, "history step got no answer within {bound}");
            Sent {
                answer: None,
                exchanges: Vec::new(),
            }
        }
    }
}

/// The outcome class of an answer to `op`. A claim post's `event` is not read: whether a
/// claim's creation or status change returns one is a point the notes leave open.
pub fn observed(op: &Op, answer: &Answer) -> Observed {
    let claim_post = matches!(op, Op::Assert { .. } | Op::ClaimAct { .. });
    match answer {
        Answer::Success(body) => Observed::Accepted {
            event: !claim_post && body.get("event").is_some_and(|e| !e.is_null()),
        },
        Answer::Refusal { status, reason } => Observed::Refused(*status, reason.clone()),
        Answer::Other(s) => Observed::Other(s.clone()),
    }
}

/// Records the ids an accepted open or post created.
pub fn remember(op: &Op, answer: &Answer, ids: &mut Ids) {
    let Answer::Success(body) = answer else {
        return;
    };
    if let Op::Open { .. } | Op::Assert { thread: None, .. } = op {
        ids.thread = str_at(body, "/thread/id").map(str::to_string);
    }
    if let Op::Assert { .. } = op
        && let Some(c) = str_at(body, "/message/claim")
    {
        ids.claims.push((c.to_string(), ids.messages.len()));
    }
    if matches!(
        op,
        Op::Open { .. } | Op::Post { .. } | Op::Assert { .. } | Op::ClaimAct { .. }
    ) && let Some(m) = str_at(body, "/message/id")
    {
        ids.messages.push(m.to_string());
    }
}

/// A claim as a `read_claim` body shows it (PV-DI-7), with its status events from a
/// `list_events` body: events of subject `claim` naming it, a creation event (to
/// `unverified`, which no transition reaches) not counted, since the notes call only status
/// *changes* events.
pub fn claim_view(body: &Value, id: &str, events: &Value) -> ClaimView {
    let status_events = events["events"].as_array().map(|all| {
        all.iter()
            .filter(|e| e["subject"] == "claim" && e["claim"] == id)
            .filter(|e| e["to_state"] != "unverified")
            .map(|e| e["to_state"].as_str().unwrap_or_default().to_string())
            .collect()
    });
    ClaimView {
        status: body["status"].as_str().unwrap_or_default().to_string(),
        support: body["support"].as_u64(),
        refutations: body["refutations"].as_array().map(Vec::len),
        status_events,
    }
}

fn obs_party(p: &Value) -> Value {
    json!({"identity": p.get("identity").cloned().unwrap_or(Value::Null), "extension": extension_of(p)})
}

fn count_tree(messages: &Value, ids: &mut Vec<String>) {
    for m in messages.as_array().into_iter().flatten() {
        ids.push(str_at(m, "/id").unwrap_or_default().to_string());
        count_tree(&m["replies"], ids);
    }
}

/// The read-back view of a `read_thread` body, a `list_events` body (thread events only)
/// and the thread's claims as `read_claim` showed them.
pub fn view(tree: &Value, events: &Value, claims: Vec<ClaimView>) -> View {
    let t = &tree["thread"];
    let awaiting = match t.get("awaiting") {
        None | Some(Value::Null) => Value::Null,
        Some(a) if a.get("any").is_some() => {
            json!({"any": a["any"], "except": obs_party(&a["except"])})
        }
        Some(a) => obs_party(a),
    };
    let mut ids = Vec::new();
    count_tree(&tree["messages"], &mut ids);
    let distinct = ids.iter().collect::<std::collections::HashSet<_>>().len();
    let s = |v: &Value| v.as_str().map(str::to_string);
    View {
        state: s(&t["state"]).unwrap_or_default(),
        confirmed: !t["state_confirmed_at"].is_null(),
        origin: s(&t["state_origin"]).unwrap_or_default(),
        awaiting,
        messages: ids.len(),
        distinct_messages: distinct,
        events: events["events"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|e| {
                e.get("subject")
                    .and_then(Value::as_str)
                    .is_none_or(|s| s == "thread")
            })
            .map(|e| {
                (
                    s(&e["from_state"]),
                    s(&e["to_state"]).unwrap_or_default(),
                    !e["confirmed_at"].is_null(),
                )
            })
            .collect(),
        claims,
    }
}
