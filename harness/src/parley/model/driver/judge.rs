//! Judging an accepted operation's answer against the model: the thread, its messages,
//! events and claims as the target serves them afterwards, the inbox of every party, and
//! `whoami`.

use std::collections::{HashMap, HashSet};

use serde_json::{Value, json};

use crate::parley::model::observe::{Answer, extension_of, str_at};

use crate::parley::model::dialectic::Until;
use crate::parley::model::party::{EXTENSIONS, Party};
use crate::parley::model::state::{Awaiting, Event, Kind, Op, World};

use super::{Driver, Finding, agree, mismatch};

impl Driver<'_> {
    /// An accepted operation's answer against the model: `before` and `after` are the model
    /// around it, `event` whether the model expects it to emit a state-change event.
    pub(super) async fn check_success(
        &mut self,
        before: &World,
        after: &World,
        op: &Op,
        event: bool,
        body: Value,
    ) -> Result<(), Box<Finding>> {
        match op {
            Op::Open { by, .. } => self.check_open(after, *by, &body),
            Op::Post {
                by, thread, kind, ..
            } => self.check_post(before, after, *by, *thread, *kind, &body),
            Op::Mark { thread, .. } | Op::Reopen { thread, .. } => {
                self.check_mark(after, *thread, event, &body)
            }
            Op::ReadThread { thread, .. } => self.check_read_thread(after, *thread, &body),
            Op::ListEvents { by, thread, since } => {
                self.check_events(after, *by, *thread, *since, &body).await
            }
            Op::Inbox { by } => self.check_inbox(after, *by, body).await,
            Op::Assert {
                by, thread, until, ..
            } => self.check_assert(before, after, *by, *thread, *until, &body),
            Op::ClaimAct { by, claim, act, .. } => {
                self.check_claim_act(after, *by, *claim, act.kind(), &body)
            }
            Op::ReadClaim { claim, .. } => self.check_claim(after, *claim, &body),
            Op::Whoami { by } => check_whoami(&after.actors[*by], &body),
            Op::Anonymous { .. } => Err(mismatch(
                &["PV-TR-4"],
                "accepted without a token",
                json!({"status": 401, "reason": "token_missing"}),
                json!("accepted"),
            )),
            Op::Orphan { .. } | Op::UnknownThread { .. } | Op::ForeignParent { .. } => {
                Err(mismatch(
                    &["PV-EN-5", "PV-EN-6"],
                    "accepted an invalid post",
                    json!("a refusal"),
                    json!("accepted"),
                ))
            }
        }
    }

    /// An accepted open: the fresh thread, its first message (an ask) and the thread itself.
    fn check_open(&mut self, after: &World, by: Party, body: &Value) -> Result<(), Box<Finding>> {
        self.new_thread(body)?;
        let t = after.threads.len() - 1;
        self.check_message(after, t, 0, Kind::Ask, by, body)?;
        self.check_thread(after, t, &body["thread"])
    }

    /// An accepted post: its message and the thread. A post returns no events, so those it
    /// caused get placeholders until `list_events` reveals their ids.
    fn check_post(
        &mut self,
        before: &World,
        after: &World,
        by: Party,
        thread: usize,
        kind: Kind,
        body: &Value,
    ) -> Result<(), Box<Finding>> {
        let m = after.threads[thread].messages.len() - 1;
        self.check_message(after, thread, m, kind, by, body)?;
        let new_events = after.threads[thread].events.len() - before.threads[thread].events.len();
        self.ids.events[thread].extend(std::iter::repeat_n(None, new_events));
        self.check_thread(after, thread, &body["thread"])
    }

    /// An accepted mark or reopen: the thread, and an event exactly when the state changed
    /// (PV-ST-2, PV-ST-7), whose id is kept to recognise it in `list_events`.
    fn check_mark(
        &mut self,
        after: &World,
        thread: usize,
        event: bool,
        body: &Value,
    ) -> Result<(), Box<Finding>> {
        self.check_thread(after, thread, &body["thread"])?;
        let ev = &body["event"];
        match (event, ev.is_null()) {
            (false, true) => Ok(()),
            (false, false) => Err(mismatch(
                &["PV-ST-2", "PV-ST-7"],
                "an event for a mark that changes nothing",
                Value::Null,
                ev.clone(),
            )),
            (true, true) => Err(mismatch(
                &["PV-ST-7"],
                "no event for a state change",
                json!("an event"),
                Value::Null,
            )),
            (true, false) => {
                let t = &after.threads[thread];
                let ix = t.events.len() - 1;
                self.check_event(thread, ix, &t.events[ix], ev)?;
                self.ids.events[thread].push(str_at(ev, "/id").map(str::to_string));
                Ok(())
            }
        }
    }

    /// `read_thread`: the thread and its whole message tree, compared by shape (PV-RD-1).
    fn check_read_thread(
        &self,
        after: &World,
        thread: usize,
        body: &Value,
    ) -> Result<(), Box<Finding>> {
        self.check_thread(after, thread, &body["thread"])?;
        let expected = self.tree(after, thread, 0);
        let observed = json!(
            body["messages"]
                .as_array()
                .map(|ms| ms.iter().map(shape).collect::<Vec<_>>())
        );
        if json!([expected]) == observed {
            Ok(())
        } else {
            Err(mismatch(
                &["PV-RD-1"],
                "read_thread's message tree differs from the model's",
                json!([expected]),
                observed,
            ))
        }
    }

    /// An accepted claim act: the reply it posted, the claim it changed and the thread.
    fn check_claim_act(
        &mut self,
        after: &World,
        by: Party,
        claim: usize,
        kind: Kind,
        body: &Value,
    ) -> Result<(), Box<Finding>> {
        let t = after.claims[claim].thread;
        let m = after.threads[t].messages.len() - 1;
        self.check_message(after, t, m, kind, by, body)?;
        self.check_act_claim(claim, body)?;
        self.check_thread(after, t, &body["thread"])
    }

    /// An accepted assert: the thread it opened (or replied in), its message and its claim.
    fn check_assert(
        &mut self,
        before: &World,
        after: &World,
        by: Party,
        thread: Option<usize>,
        until: Until,
        body: &Value,
    ) -> Result<(), Box<Finding>> {
        let t = match thread {
            Some(t) => t,
            None => {
                self.new_thread(body)?;
                after.threads.len() - 1
            }
        };
        let m = after.threads[t].messages.len() - 1;
        self.check_message(after, t, m, Kind::Assert, by, body)?;
        let new_events =
            after.threads[t].events.len() - before.threads.get(t).map_or(0, |th| th.events.len());
        if thread.is_some() {
            self.ids.events[t].extend(std::iter::repeat_n(None, new_events));
        }
        self.record_claim(body, until)?;
        self.check_thread(after, t, &body["thread"])
    }

    /// Records the id of a thread a post opened: fresh, never seen before (PV-RS-2).
    fn new_thread(&mut self, body: &Value) -> Result<(), Box<Finding>> {
        let id = str_at(body, "/thread/id").unwrap_or_default().to_string();
        if id.is_empty() || self.ids.threads.contains(&id) {
            return Err(mismatch(
                &["PV-RS-2"],
                "a new thread's id is missing or reused",
                json!("a fresh thread id"),
                json!(id),
            ));
        }
        self.ids.threads.push(id);
        self.ids.messages.push(Vec::new());
        self.ids.events.push(vec![None]);
        Ok(())
    }

    fn check_message(
        &mut self,
        w: &World,
        t: usize,
        m: usize,
        kind: Kind,
        by: Party,
        body: &Value,
    ) -> Result<(), Box<Finding>> {
        let msg = &body["message"];
        let id = str_at(msg, "/id").unwrap_or_default().to_string();
        if id.is_empty() || !self.ids.seen_messages.insert(id.clone()) {
            return Err(mismatch(
                &["PV-RS-2"],
                "a new message's id is missing or reused",
                json!("a fresh message id"),
                json!(id),
            ));
        }
        self.ids.messages[t].push(id);
        let parent = w.threads[t].messages[m]
            .parent
            .map(|p| json!(self.ids.messages[t][p]))
            .unwrap_or(Value::Null);
        let expected = json!({
            "kind": kind.as_str(),
            "thread": self.ids.threads[t],
            "parent": parent,
            "identity": w.actors[by.actor].identity,
            "extension": by.ext.map(|e| EXTENSIONS[e]),
        });
        let observed = json!({
            "kind": msg["kind"],
            "thread": msg["thread"],
            "parent": msg.get("parent").cloned().unwrap_or(Value::Null),
            "identity": msg.pointer("/from/identity").cloned().unwrap_or(Value::Null),
            "extension": extension_of(&msg["from"]),
        });
        agree(
            &["PV-RS-2", "PV-EN-6", "PV-ID-1"],
            "the stored message differs from the model's",
            expected,
            observed,
        )
    }

    fn party_json(w: &World, p: Party) -> Value {
        json!({"identity": w.actors[p.actor].identity, "extension": p.ext.map(|e| EXTENSIONS[e])})
    }

    fn check_thread(&self, w: &World, t: usize, v: &Value) -> Result<(), Box<Finding>> {
        let th = &w.threads[t];
        let awaiting = match th.awaiting {
            Awaiting::Nobody => Value::Null,
            Awaiting::AnyExcept(p) => json!({"any": true, "except": Self::party_json(w, p)}),
            Awaiting::Party(p) => Self::party_json(w, p),
        };
        let obs_party = |p: &Value| json!({"identity": p.get("identity").cloned().unwrap_or(Value::Null), "extension": extension_of(p)});
        let obs_awaiting = match v.get("awaiting") {
            None | Some(Value::Null) => Value::Null,
            Some(a) if a.get("any").is_some() => {
                json!({"any": a["any"], "except": obs_party(&a["except"])})
            }
            Some(a) => obs_party(a),
        };
        let checks: [(&[&'static str], &str, Value, Value); 6] = [
            (
                &["PV-RS-2"],
                "id",
                json!(self.ids.threads[t]),
                v["id"].clone(),
            ),
            (
                &["PV-ST-1", "PV-ST-2", "PV-ST-3", "PV-ST-6"],
                "state",
                json!(th.state.as_str()),
                v["state"].clone(),
            ),
            (
                &["PV-ST-5", "PV-AU-4"],
                "state_confirmed_at set",
                json!(th.confirmed),
                json!(!v["state_confirmed_at"].is_null()),
            ),
            (
                &["PV-ST-5", "PV-AU-4"],
                "state_origin",
                json!(if th.origin_user { "user" } else { "llm" }),
                v["state_origin"].clone(),
            ),
            (
                &["PV-AU-2", "PV-RS-2"],
                "creator identity",
                json!(w.actors[th.creator.actor].identity),
                v.pointer("/creator/identity")
                    .cloned()
                    .unwrap_or(Value::Null),
            ),
            (&["PV-KD-2"], "awaiting", awaiting, obs_awaiting),
        ];
        for (rules, what, expected, observed) in checks {
            if expected != observed {
                return Err(mismatch(
                    rules,
                    format!("thread {what} differs from the model's"),
                    expected,
                    observed,
                ));
            }
        }
        Ok(())
    }

    fn check_event(&self, t: usize, ix: usize, e: &Event, v: &Value) -> Result<(), Box<Finding>> {
        let id = str_at(v, "/id").unwrap_or_default();
        if let Some(owner) = self.ids.seen_events.get(id)
            && *owner != t
        {
            return Err(mismatch(
                &["PV-ST-7"],
                "an event id of another thread is reused",
                json!("a fresh event id"),
                json!(id),
            ));
        }
        if let Some(Some(known)) = self.ids.events[t].get(ix)
            && known != id
        {
            return Err(mismatch(
                &["PV-ST-7", "PV-RD-2"],
                format!("event #{} is not the one returned when it happened", ix + 1),
                json!(known),
                json!(id),
            ));
        }
        let confirmation = e.from == Some(e.to);
        let mut expected = json!({"to_state": e.to.as_str(), "confirmed": e.confirmed});
        let mut observed =
            json!({"to_state": v["to_state"], "confirmed": !v["confirmed_at"].is_null()});
        if !confirmation {
            expected["from_state"] = json!(e.from.map(|s| s.as_str()));
            observed["from_state"] = v["from_state"].clone();
        }
        if expected == observed {
            Ok(())
        } else {
            Err(mismatch(
                &["PV-ST-7", "PV-ST-5"],
                format!("event #{} differs from the model's", ix + 1),
                expected,
                observed,
            ))
        }
    }

    async fn check_events(
        &mut self,
        w: &World,
        by: usize,
        t: usize,
        since: Option<usize>,
        body: &Value,
    ) -> Result<(), Box<Finding>> {
        let model = &w.threads[t].events;
        let got = body["events"].as_array().cloned().unwrap_or_default();
        let got: Vec<Value> = got
            .into_iter()
            .filter(|e| {
                e.get("subject")
                    .and_then(Value::as_str)
                    .is_none_or(|s| s == "thread")
            })
            .collect();
        if got.len() != model.len() {
            return Err(mismatch(
                &["PV-RD-2", "PV-ST-7"],
                "list_events does not return one event per state change",
                json!(model.len()),
                json!(got.len()),
            ));
        }
        for (ix, (e, v)) in model.iter().zip(&got).enumerate() {
            self.check_event(t, ix, e, v)?;
        }
        let ids: Vec<String> = got
            .iter()
            .map(|v| str_at(v, "/id").unwrap_or_default().to_string())
            .collect();
        for id in &ids {
            self.ids.seen_events.insert(id.clone(), t);
        }
        if ids.iter().collect::<HashSet<_>>().len() != ids.len() {
            return Err(mismatch(
                &["PV-ST-7"],
                "list_events repeats an event id",
                json!("distinct ids"),
                json!(ids),
            ));
        }
        self.ids.events[t] = ids.iter().cloned().map(Some).collect();
        let Some(k) = since else { return Ok(()) };
        let auth = self.admit(by, false).await;
        let args = json!({"thread": self.ids.threads[t], "since": ids[k]});
        let (answer, exchanges) = self.call(auth, "list_events", args).await;
        if let Some(l) = self.log.last_mut() {
            l.exchanges.extend(exchanges);
        }
        let expected = json!(ids[k + 1..]);
        let observed = match &answer {
            Answer::Success(b) => json!(b["events"].as_array().map(|es| {
                es.iter()
                    .filter(|e| {
                        e.get("subject")
                            .and_then(Value::as_str)
                            .is_none_or(|s| s == "thread")
                    })
                    .map(|e| e["id"].clone())
                    .collect::<Vec<_>>()
            })),
            other => other.summary(),
        };
        if expected == observed {
            Ok(())
        } else {
            Err(mismatch(
                &["PV-RD-2"],
                format!(
                    "list_events since event #{} does not return exactly the later ones",
                    k + 1
                ),
                expected,
                observed,
            ))
        }
    }

    /// An accepted inbox: every page of it, then the set of the model's threads it lists
    /// and their states (PV-RD-3).
    async fn check_inbox(
        &mut self,
        w: &World,
        by: Party,
        first: Value,
    ) -> Result<(), Box<Finding>> {
        let seen = self.page_inbox(by, first).await?;
        self.compare_inbox(w, by, &seen)
    }

    /// Pages through the inbox from its first page, keeping each item of a model thread
    /// by thread index; the bound stops a target whose cursor never ends.
    async fn page_inbox(
        &mut self,
        by: Party,
        first: Value,
    ) -> Result<HashMap<usize, Value>, Box<Finding>> {
        let mine: HashMap<String, usize> = self
            .ids
            .threads
            .iter()
            .enumerate()
            .map(|(i, id)| (id.clone(), i))
            .collect();
        let mut seen: HashMap<usize, Value> = HashMap::new();
        let mut page = first;
        for _ in 0..10_000 {
            let items = page["items"].as_array().map_or(&[][..], Vec::as_slice);
            note_inbox_items(&mine, items, &mut seen)?;
            let cursor = page.get("cursor").cloned().unwrap_or(Value::Null);
            if (items.len() as u64) < self.page_limit(by) || cursor.is_null() {
                self.remember_inbox_end(by, cursor);
                break;
            }
            page = self.next_inbox_page(by, cursor).await?;
        }
        Ok(seen)
    }

    /// Keeps the last page's cursor of `by`'s inbox (none when the target gave none).
    fn remember_inbox_end(&self, by: Party, cursor: Value) {
        if !cursor.is_null()
            && let Ok(mut ends) = self.ends.lock()
        {
            ends.insert((by.actor, by.ext), cursor);
        }
    }

    /// Fetches the inbox page after `cursor`, logging its exchanges with the operation's.
    async fn next_inbox_page(&mut self, by: Party, cursor: Value) -> Result<Value, Box<Finding>> {
        let mut args = json!({"limit": self.page_limit(by), "since": cursor});
        if let Some(e) = by.ext {
            args["extension"] = json!(EXTENSIONS[e]);
        }
        let auth = self.admit(by.actor, false).await;
        let (answer, exchanges) = self.call(auth, "inbox", args).await;
        if let Some(l) = self.log.last_mut() {
            l.exchanges.extend(exchanges);
        }
        match answer {
            Answer::Success(b) => Ok(b),
            other => Err(mismatch(
                &["PV-RD-3"],
                "a later inbox page was not served",
                json!("accepted"),
                other.summary(),
            )),
        }
    }

    /// The paged inbox against the model: exactly the threads in `by`'s inbox, each in the
    /// model's state (PV-RD-3, PV-ST-1).
    fn compare_inbox(
        &self,
        w: &World,
        by: Party,
        seen: &HashMap<usize, Value>,
    ) -> Result<(), Box<Finding>> {
        let expected: Vec<usize> = (0..w.threads.len())
            .filter(|t| w.in_inbox(by, &w.threads[*t]))
            .collect();
        let mut observed: Vec<usize> = seen.keys().copied().collect();
        observed.sort_unstable();
        if expected != observed {
            let names = |v: &[usize]| {
                json!(
                    v.iter()
                        .map(|t| self.ids.threads[*t].clone())
                        .collect::<Vec<_>>()
                )
            };
            return Err(mismatch(
                &["PV-RD-3"],
                "the inbox lists other threads of the model's than it should",
                names(&expected),
                names(&observed),
            ));
        }
        for t in expected {
            let it = &seen[&t];
            if it["state"] != json!(w.threads[t].state.as_str()) {
                return Err(mismatch(
                    &["PV-RD-3", "PV-ST-1"],
                    "an inbox item's state differs from the model's",
                    json!(w.threads[t].state.as_str()),
                    it["state"].clone(),
                ));
            }
        }
        Ok(())
    }

    fn tree(&self, w: &World, t: usize, m: usize) -> Value {
        let children: Vec<Value> = w.threads[t]
            .messages
            .iter()
            .enumerate()
            .filter(|(_, x)| x.parent == Some(m))
            .map(|(i, _)| self.tree(w, t, i))
            .collect();
        json!({"id": self.ids.messages[t][m], "replies": children})
    }
}

/// Records one inbox page's items of the model's threads (others' threads are ignored); a
/// thread listed twice across the pages is a mismatch (PV-RD-3).
fn note_inbox_items(
    mine: &HashMap<String, usize>,
    items: &[Value],
    seen: &mut HashMap<usize, Value>,
) -> Result<(), Box<Finding>> {
    for it in items {
        let Some(t) = str_at(it, "/thread").and_then(|id| mine.get(id).copied()) else {
            continue;
        };
        if seen.insert(t, it.clone()).is_some() {
            return Err(mismatch(
                &["PV-RD-3"],
                "the inbox lists a thread twice while paging",
                json!("each thread once"),
                it.clone(),
            ));
        }
    }
    Ok(())
}

/// `whoami` against the actor the pre-flight saw (PV-TR-5, PV-ID-1, PV-AU-5): identity, author
/// kind and, for a non-human, exactly the rights it holds among those the model uses (a human
/// holds every right implicitly, listed or not).
fn check_whoami(a: &crate::parley::model::party::Actor, body: &Value) -> Result<(), Box<Finding>> {
    let rights: Vec<&str> = body["rights"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let has = |r: &str| rights.contains(&r);
    let mut expected = json!({
        "identity": a.identity,
        "author_kind": if a.human { "human" } else { "llm" },
    });
    let mut observed = json!({"identity": body["identity"], "author_kind": body["author_kind"]});
    if !a.human {
        expected["rights"] = json!([a.read, a.write, a.lock, a.verify]);
        observed["rights"] = json!([has("read"), has("write"), has("lock"), has("verify")]);
    }
    agree(
        &["PV-TR-5", "PV-ID-1", "PV-AU-5"],
        "whoami differs from the identity and rights the pre-flight saw",
        expected,
        observed,
    )
}

/// The id/replies skeleton of a served message tree.
fn shape(v: &Value) -> Value {
    let replies: Vec<Value> = v["replies"]
        .as_array()
        .map(|r| r.iter().map(shape).collect())
        .unwrap_or_default();
    json!({"id": v["id"], "replies": replies})
}
