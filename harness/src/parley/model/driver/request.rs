//! The request each model operation becomes: tool or route arguments built from the model
//! state and the ids the target handed out (bodies at and over the manifest's limit,
//! unknown ids, pages from the inbox cursor).

use serde_json::{Value, json};

use crate::parley::model::party::{EXTENSIONS, Party};
use crate::parley::model::state::{Body, Op, World};

use super::{Driver, UNKNOWN_THREAD};

impl Driver<'_> {
    pub(super) fn request(&self, world: &World, op: &Op) -> (&'static str, Value) {
        let body_text = |b: Body| match (b, world.body_max) {
            (Body::AtLimit, Some(n)) => "é".repeat(n),
            (Body::OverLimit, Some(n)) => "é".repeat(n + 1),
            (Body::Empty, _) => String::new(),
            _ => "model step".to_string(),
        };
        let with_from = |mut v: Value, by: Party| {
            if let Some(e) = by.ext {
                v["from"] = json!({"extension": EXTENSIONS[e]});
            }
            v
        };
        let tid = |t: usize| self.ids.threads.get(t).cloned().unwrap_or_default();
        let mid = |t: usize, m: usize| {
            self.ids
                .messages
                .get(t)
                .and_then(|ms| ms.get(m))
                .cloned()
                .unwrap_or_default()
        };
        match op {
            Op::Open { by, body } => (
                "post",
                with_from(json!({"kind": "ask", "body": body_text(*body)}), *by),
            ),
            Op::Post {
                by,
                thread,
                parent,
                kind,
                body,
            } => {
                let mut v = json!({"kind": kind.as_str(), "thread": tid(*thread), "body": body_text(*body)});
                if let Some(p) = parent {
                    v["parent"] = json!(mid(*thread, *p));
                }
                ("post", with_from(v, *by))
            }
            Op::Orphan { by, kind } => (
                "post",
                with_from(json!({"kind": kind.as_str(), "body": "model step"}), *by),
            ),
            Op::UnknownThread { by, kind } => (
                "post",
                with_from(
                    json!({"kind": kind.as_str(), "thread": UNKNOWN_THREAD, "body": "model step"}),
                    *by,
                ),
            ),
            Op::ForeignParent {
                by,
                thread,
                other,
                parent,
            } => (
                "post",
                with_from(
                    json!({"kind": "inform", "thread": tid(*thread), "parent": mid(*other, *parent), "body": "model step"}),
                    *by,
                ),
            ),
            Op::Mark { thread, state, .. } => (
                "mark",
                json!({"thread": tid(*thread), "state": state.as_str()}),
            ),
            Op::Reopen { thread, .. } => ("reopen", json!({"thread": tid(*thread)})),
            Op::ReadThread { thread, .. } => ("read_thread", json!({"thread": tid(*thread)})),
            Op::ListEvents { thread, .. } => ("list_events", json!({"thread": tid(*thread)})),
            Op::Assert {
                by,
                thread,
                supersedes,
                until,
                evidence,
            } => (
                "post",
                with_from(
                    self.assert_args(*thread, *supersedes, *until, *evidence),
                    *by,
                ),
            ),
            Op::ClaimAct {
                by,
                claim,
                act,
                evidence,
            } => (
                "post",
                with_from(self.act_args(world, *claim, *act, *evidence), *by),
            ),
            Op::ReadClaim { claim, .. } => ("read_claim", json!({"claim": self.claim_id(*claim)})),
            Op::Whoami { .. } => ("whoami", json!({})),
            Op::Anonymous { write: true } => ("post", json!({"kind": "ask", "body": "model step"})),
            Op::Anonymous { write: false } => ("inbox", json!({})),
            Op::Inbox { by } => {
                let mut v = json!({"limit": self.page_limit(*by)});
                if let Some(e) = by.ext {
                    v["extension"] = json!(EXTENSIONS[e]);
                }
                if let Some(c) = self.base.get(&(by.actor, by.ext)) {
                    v["since"] = c.clone();
                }
                ("inbox", v)
            }
        }
    }
}
