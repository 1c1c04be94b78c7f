//! The Parley sequential model ([`predict`]) as a [`Spec`] for the linearizability checker:
//! an operation's allowed outcomes are the model's (every reading the notes allow), compared
//! by outcome class — accepted (with or without an event) or refused with status and reason;
//! ids and timestamps are the target's. The read-back after a group is one more operation
//! whose result is the thread as the model holds it ([`View`]), its claims included.

use std::hash::{Hash, Hasher};

use serde_json::{Value, json};

use crate::capability::history::Spec;
use crate::parley::model::party::{EXTENSIONS, Party};
use crate::parley::model::predict::predict;
use crate::parley::model::state::{Awaiting, Op, Outcome, Prediction, World};

/// The model as the checker's state: `World`'s own equality, and a hash of the fields a
/// Parley operation changes (equal worlds hash equally, which is all `Hash` must ensure).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Model(pub World);

impl Hash for Model {
    fn hash<H: Hasher>(&self, h: &mut H) {
        self.0.threads.len().hash(h);
        for t in &self.0.threads {
            (t.state, t.confirmed, t.origin_user).hash(h);
            (t.messages.len(), t.events.len()).hash(h);
        }
    }
}

/// One operation of a Parley history.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// A model operation (concrete indices).
    Op(Op),
    /// Reading thread `thread` back (`read_thread` then `list_events`) as actor `by`.
    ReadBack {
        /// Actor index.
        by: usize,
        /// Thread index.
        thread: usize,
    },
}

/// A thread as a read-back shows it (what must equal the linearized model's).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct View {
    /// `state`.
    pub state: String,
    /// `state_confirmed_at` is set.
    pub confirmed: bool,
    /// `state_origin`.
    pub origin: String,
    /// `awaiting` as `{identity, extension}` parties (`null`, a party, or `{any, except}`).
    pub awaiting: Value,
    /// Messages in the tree.
    pub messages: usize,
    /// Distinct message ids in the tree.
    pub distinct_messages: usize,
    /// Thread events in order: `(from_state, to_state, confirmed)`.
    pub events: Vec<(Option<String>, String, bool)>,
    /// The thread's claims in creation order (PV-DI-3/4/5, PV-DI-7).
    pub claims: Vec<ClaimView>,
}

/// A claim as a read-back shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimView {
    /// `status`.
    pub status: String,
    /// `support` (attestations counted).
    pub support: Option<u64>,
    /// The number of `refutations`.
    pub refutations: Option<usize>,
    /// The `to_state` of each claim status event for it in `list_events` (PV-DI-7), in
    /// order, a creation event aside: one per status change, none for an accepted repeat
    /// (PV-DI-9).
    pub status_events: Option<Vec<String>>,
}

/// What the target did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Observed {
    /// Accepted; `event` is a non-null `event` member (mark, reopen).
    Accepted {
        /// Event returned.
        event: bool,
    },
    /// Refused with status and reason.
    Refused(u16, String),
    /// Not a Parley answer (a 5xx, a JSON-RPC error): no reading allows it.
    Other(String),
    /// The read-back.
    View(View),
}

/// What the model allows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expected {
    /// One allowed outcome of an operation.
    Outcome(Outcome),
    /// The thread after the operations linearized so far.
    View(View),
}

/// The Parley model as a sequential specification.
#[derive(Debug, Clone, Copy, Default)]
pub struct ParleySpec;

impl Spec for ParleySpec {
    type State = Model;
    type Input = Step;
    type Output = Observed;
    type Expected = Expected;

    fn step(&self, state: &Model, input: &Step) -> Vec<(Model, Expected)> {
        match input {
            // An operation naming what does not exist (a set-up step was refused): no path.
            Step::Op(op) if !state.0.exists(op) => Vec::new(),
            Step::Op(op) => {
                // An outcome leaves `Prediction::next`, except an acceptance where the notes
                // allow refusing too (PV-DI-9's repeats): that one leaves `accepted_next`.
                let p = predict(&state.0, op);
                p.allowed
                    .iter()
                    .map(|o| {
                        let accepted = matches!(o, Outcome::Accepted { .. });
                        (
                            Model(after(&p, accepted).clone()),
                            Expected::Outcome(o.clone()),
                        )
                    })
                    .collect()
            }
            Step::ReadBack { thread, .. } => state
                .0
                .threads
                .get(*thread)
                .map(|_| (state.clone(), Expected::View(view_of(&state.0, *thread))))
                .into_iter()
                .collect(),
        }
    }

    fn matches(&self, expected: &Expected, observed: &Observed) -> bool {
        match (expected, observed) {
            (Expected::Outcome(Outcome::Accepted { event }), Observed::Accepted { event: e }) => {
                event == e
            }
            (Expected::Outcome(Outcome::Refused((s, r))), Observed::Refused(s2, r2)) => {
                s == s2 && r == r2
            }
            (Expected::View(e), Observed::View(o)) => views_match(e, o),
            _ => false,
        }
    }
}

/// The model after a prediction's operation was `accepted` or not (the two-outcome repeat
/// of PV-DI-9: an acceptance stores the message and, for a refute, the refutation).
pub fn after(p: &Prediction, accepted: bool) -> &World {
    match (accepted, &p.accepted_next) {
        (true, Some(next)) => next,
        _ => &p.next,
    }
}

/// The requirement IDs deciding `step` from `state` (for a violation).
pub fn rules(state: &World, step: &Step) -> Vec<&'static str> {
    match step {
        Step::Op(op) => predict(state, op).rules,
        Step::ReadBack { thread, .. } => {
            let mut r = vec![
                "PV-ST-1", "PV-ST-5", "PV-ST-7", "PV-KD-2", "PV-RD-1", "PV-RD-2",
            ];
            if state.claims.iter().any(|c| c.thread == *thread) {
                r.extend(["PV-DI-3", "PV-DI-4", "PV-DI-5", "PV-DI-7", "PV-DI-9"]);
            }
            r
        }
    }
}

/// A party as the wire shows it.
fn party(w: &World, p: Party) -> Value {
    json!({"identity": w.actors[p.actor].identity, "extension": p.ext.map(|e| EXTENSIONS[e])})
}

/// The model's thread `t` as a read-back must show it. A confirmation event's `from_state`
/// is `None` here: the notes do not say whether it repeats the state, so it is not compared.
pub fn view_of(w: &World, t: usize) -> View {
    let th = &w.threads[t];
    let awaiting = match th.awaiting {
        Awaiting::Nobody => Value::Null,
        Awaiting::AnyExcept(p) => json!({"any": true, "except": party(w, p)}),
        Awaiting::Party(p) => party(w, p),
    };
    View {
        state: th.state.as_str().into(),
        confirmed: th.confirmed,
        origin: if th.origin_user { "user" } else { "llm" }.into(),
        awaiting,
        messages: th.messages.len(),
        distinct_messages: th.messages.len(),
        events: th
            .events
            .iter()
            .map(|e| {
                let from = match e.from {
                    Some(f) if f == e.to => None,
                    other => other.map(|s| s.as_str().to_string()),
                };
                (from, e.to.as_str().to_string(), e.confirmed)
            })
            .collect(),
        claims: w
            .claims
            .iter()
            .filter(|c| c.thread == t)
            .map(|c| ClaimView {
                status: c.status.as_str().into(),
                support: Some(u64::from(c.support)),
                refutations: usize::try_from(c.refutations).ok(),
                status_events: Some(c.changes.iter().map(|s| s.as_str().to_string()).collect()),
            })
            .collect(),
    }
}

/// Equal, except that an expected confirmation event (`from` `None` after creation)
/// accepts any `from_state`.
fn views_match(e: &View, o: &View) -> bool {
    let head = (
        &e.state,
        e.confirmed,
        &e.origin,
        &e.awaiting,
        e.messages,
        e.distinct_messages,
    ) == (
        &o.state,
        o.confirmed,
        &o.origin,
        &o.awaiting,
        o.messages,
        o.distinct_messages,
    );
    head && e.claims == o.claims
        && e.events.len() == o.events.len()
        && e.events
            .iter()
            .zip(&o.events)
            .enumerate()
            .all(|(i, (x, y))| {
                let from_ok = x.0 == y.0 || (i > 0 && x.0.is_none());
                from_ok && x.1 == y.1 && x.2 == y.2
            })
}
