//! Driving one model step against a target: the operation becomes a request on one binding,
//! the answer is compared with [`predict`]'s allowed outcomes, and the returned objects
//! (thread, message, event, tree, event list, inbox) with the model after the step.
//! Server ids are mapped onto the model's indices here, and the invariants that span steps
//! (ids unique and never reused, events gap-free and in order) are kept.

mod judge;
mod request;

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use serde_json::{Value, json};

use super::observe::{Answer, str_at};
use super::quota::{Bound, Quota};
use chrono::{DateTime, Utc};

use super::clock::SharedClock;
use super::dialectic::Until;
use super::party::{EXTENSIONS, Party};
use super::predict::predict;
use super::state::{Op, Outcome, Prediction, World};
use crate::engine::check::StepSignature;
use crate::parley::pacing::Pacer;
use crate::parley::preflight::ParleyTarget;
use crate::parley::role::Role;
use crate::parley::tokens::token_env;
use crate::parley::vectors::runner::normalise;
use crate::transport::{Auth, Exchange, TransportKind};

/// The PV-TR-1 signature of an answer: outcome class, refusal status and reason, and the
/// success body with ids numbered by first appearance and times masked
/// ([`normalise`]; `ids` is the sequence's numbering). The same seed sends the same sequence
/// on each binding, so two conforming bindings give equal bodies ("same success payload
/// modulo ids/timestamps"). Inbox pages are not compared: they may list threads other checks
/// touched meanwhile, which differ between the two runs.
fn signature(answer: &Answer, op: &Op, ids: &mut HashMap<String, String>) -> StepSignature {
    let (class, status, reason) = match answer {
        Answer::Success(_) => ("success", None, None),
        Answer::Refusal { status, reason } => {
            ("refusal", Some(u64::from(*status)), Some(reason.clone()))
        }
        Answer::Other(_) => ("other", None, None),
    };
    let body = match (answer, op) {
        (Answer::Success(_), Op::Inbox { .. }) => None,
        (Answer::Success(b), _) => Some(mask_expiry(normalise(b, ids))),
        _ => None,
    };
    StepSignature {
        step: 0,
        class: class.into(),
        status,
        reason,
        body,
    }
}

/// The signature of a step that could not be judged (see [`StepSignature`]'s classes): the
/// two bindings' runs part there, and PV-TR-1 compares the steps before it only.
fn unjudged() -> StepSignature {
    StepSignature {
        step: 0,
        class: crate::engine::check::UNJUDGED.into(),
        status: None,
        reason: None,
        body: None,
    }
}

/// `expired` of a claim with a `valid_until` depends on when it was read (PV-DI-2), which
/// differs between the two runs: it is masked like a timestamp.
fn mask_expiry(mut v: Value) -> Value {
    fn walk(v: &mut Value) {
        match v {
            Value::Object(o) => {
                if o.get("valid_until").is_some_and(|u| !u.is_null()) && o.contains_key("expired") {
                    o.insert("expired".into(), json!("<time>"));
                }
                o.values_mut().for_each(walk);
            }
            Value::Array(a) => a.iter_mut().for_each(walk),
            _ => {}
        }
    }
    walk(&mut v);
    v
}

/// A thread id no sequence creates (PV-EN-5).
pub const UNKNOWN_THREAD: &str = "th_987654321";

pub use crate::engine::counterexample::StepLog;
pub(super) use crate::engine::counterexample::mismatch;
pub use crate::engine::finding::Finding;

/// `Ok` when the target's `observed` equals the model's `expected`, else the mismatch.
pub(super) fn agree(
    rules: &[&'static str],
    message: &str,
    expected: Value,
    observed: Value,
) -> Result<(), Box<Finding>> {
    if expected == observed {
        Ok(())
    } else {
        Err(mismatch(rules, message, expected, observed))
    }
}

/// Server ids of the model's threads, messages and events, and every id seen.
#[derive(Debug, Default)]
pub(super) struct Ids {
    pub(super) threads: Vec<String>,
    pub(super) messages: Vec<Vec<String>>,
    events: Vec<Vec<Option<String>>>,
    seen_messages: HashSet<String>,
    seen_events: HashMap<String, usize>,
    /// Claim ids (PV-DI).
    pub(super) claims: Vec<String>,
    /// Each claim's `valid_until` as sent (`None`: none).
    pub(super) until: Vec<Option<DateTime<Utc>>>,
}

/// Inbox cursors per caller `(actor, extension)`, each taken before the sequence that pages
/// from it began: a sequence's threads are all newer than it (PV-RD-3's cursor is a position
/// in the activity sequence), so an inbox read from it finds them all.
pub type InboxBase = HashMap<(usize, Option<usize>), Value>;

/// Pages `caller`'s inbox from `from` (its start when `None`) to its end: the last cursor
/// (PV-RD-3), for [`InboxBase`].
pub async fn inbox_end(
    target: &ParleyTarget,
    kind: TransportKind,
    role: Role,
    ext: Option<usize>,
    from: Option<Value>,
) -> Option<Value> {
    let auth = target.auth(role)?;
    let limit = target
        .manifest
        .raw
        .pointer("/limits/inbox_limit_max")
        .and_then(Value::as_u64)
        .unwrap_or(50)
        .clamp(1, 200);
    let mut cursor = from;
    for _ in 0..100_000 {
        let mut args = json!({"limit": limit});
        if let Some(e) = ext {
            args["extension"] = json!(EXTENSIONS[e]);
        }
        if let Some(c) = &cursor {
            args["since"] = c.clone();
        }
        let mut reply = target
            .transport(kind)
            .call("inbox", &args, &auth)
            .await
            .ok()?;
        let Answer::Success(page) = Answer::read(kind, &mut reply) else {
            return None;
        };
        let n = page["items"].as_array().map_or(0, Vec::len) as u64;
        match page.get("cursor") {
            Some(c) if !c.is_null() => cursor = Some(c.clone()),
            _ => return cursor,
        }
        if n < limit {
            return cursor;
        }
    }
    cursor
}

/// Runs model steps against one binding of a target.
pub struct Driver<'a> {
    target: &'a ParleyTarget,
    kind: TransportKind,
    roles: &'a [Role],
    pub(super) quota: &'a Quota,
    /// This sequence's count of the quota role's posts (PV-TR-5), when it plays that role.
    bounds: Vec<Bound<'a>>,
    inbox_limit: u64,
    /// Per caller `(actor, extension)`: the inbox cursor taken before this sequence began
    /// (a copy of `ends` then), so an inbox read pages only through threads active since.
    base: InboxBase,
    /// Where an inbox read that paged to the end records its last cursor, the base of the
    /// later sequences: without it every read paged through every thread the run (and the
    /// checks beside it) had opened, a cost that grew with the square of the steps (issue 25).
    ends: &'a Mutex<InboxBase>,
    pub(super) ids: Ids,
    /// The PV-TR-1 numbering of the ids met in success bodies.
    normalised: HashMap<String, String>,
    /// The target's clock and the run's expiry deadline (`valid_until`, PV-DI-2).
    pub(super) clock: &'a SharedClock,
    /// When the current step's request was sent (harness time).
    pub(super) step_sent: DateTime<Utc>,
    /// The `valid_until` of the assert being sent.
    pub(super) pending_until: Option<DateTime<Utc>>,
    /// The run's write budgets, shared with the other checks.
    pacer: Option<&'a Pacer>,
    /// The token the last call's write was paced on.
    paced: Option<String>,
    /// The steps run so far.
    pub log: Vec<StepLog>,
    /// Each step's binding-independent outcome (class, status, reason), compared across
    /// the bindings for PV-TR-1.
    pub signatures: Vec<StepSignature>,
}

/// What [`Driver::send_op`] sent and got back.
struct Sent {
    answer: Answer,
    /// Every attempt's exchanges.
    exchanges: Vec<Exchange>,
    /// When the answered attempt was sent.
    sent: DateTime<Utc>,
    /// Attempts sent again because the assert arrived after its `valid_until`.
    retries: u32,
    /// The last attempt may have arrived late too: its refusal is not judged.
    still_late: bool,
}

/// How many times an assert that reached the target after its own deadline is sent again
/// (each time with twice the lead, see [`Driver::send_op`]).
const LATE_RETRIES: u32 = 3;

/// The refusal reasons' rules (cited when a target gives a reason the model did not expect).
fn reason_rules(reason: &str) -> &'static [&'static str] {
    match reason {
        "token_right_missing" => &["PV-AU-1"],
        "thread_authority_missing" => &["PV-AU-2", "PV-AU-3"],
        "thread_locked" => &["PV-ST-4"],
        "invalid_transition" => &["PV-ST-1", "PV-ST-2", "PV-ST-3", "PV-ST-6"],
        "self_reply" => &["PV-ID-2"],
        "thread_required" => &["PV-EN-6"],
        "invalid_body" => &["PV-EN-1", "PV-EN-5"],
        "body_too_long" => &["PV-EN-2"],
        "thread_not_found" | "message_not_found" => &["PV-EN-5"],
        "rate_limited" => &["PV-TR-5"],
        "self_attest" => &["PV-DI-3", "PV-DI-4"],
        "evidence_required" | "evidence_invalid" => &["PV-DI-1"],
        "claim_not_found" => &["PV-DI-7"],
        _ => &[],
    }
}

fn outcome_json(o: &Outcome) -> Value {
    match o {
        Outcome::Accepted { event } => json!({"accepted": true, "event": event}),
        Outcome::Refused((s, r)) => json!({"status": s, "reason": r}),
    }
}

impl<'a> Driver<'a> {
    /// A driver for the actors `roles` (index = actor) on binding `kind`.
    pub fn new(
        target: &'a ParleyTarget,
        kind: TransportKind,
        roles: &'a [Role],
        quota: &'a Quota,
        base: &'a Mutex<InboxBase>,
        clock: &'a SharedClock,
    ) -> Self {
        let inbox_limit = target
            .manifest
            .raw
            .pointer("/limits/inbox_limit_max")
            .and_then(Value::as_u64)
            .unwrap_or(50)
            .clamp(1, 200);
        Self {
            target,
            kind,
            roles,
            quota,
            bounds: (0..roles.len()).filter_map(|a| quota.bound(a)).collect(),
            inbox_limit,
            // A poisoned lock (a panicking sequence) leaves no base: pages from the start.
            base: base.lock().map(|b| b.clone()).unwrap_or_default(),
            ends: base,
            ids: Ids::default(),
            normalised: HashMap::new(),
            clock,
            step_sent: Utc::now(),
            pending_until: None,
            pacer: None,
            paced: None,
            log: Vec::new(),
            signatures: Vec::new(),
        }
    }

    /// The `limit` of `by`'s inbox reads: ten when it reads as its second extension, the
    /// manifest's maximum otherwise. A read starts from the caller's last end cursor, so at
    /// the maximum it rarely crosses a page: the small pages keep PV-RD-3's paging (cursor, no
    /// item lost or repeated) in every run, at the price of a few hundred requests (pages of
    /// two cost twelve thousand in the main job: the other checks' threads are paged too).
    fn page_limit(&self, by: Party) -> u64 {
        if by.ext == Some(1) {
            self.inbox_limit.min(10)
        } else {
            self.inbox_limit
        }
    }

    fn role(&self, actor: usize) -> Role {
        self.roles.get(actor).copied().unwrap_or(Role::Anonymous)
    }

    /// The credential `actor`'s next call goes out with, once the run's pacer admits it:
    /// writes share the run's per-token budgets with the other checks (PV-TR-5), so the
    /// model meets no 429 that the vectors' writes provoked. The wait for admission comes
    /// before anything time-bound of the request is computed (an assert's `valid_until`).
    pub(super) async fn admit(&mut self, actor: usize, write: bool) -> Auth {
        let role = self.role(actor);
        let mut auth = self.target.auth(role).unwrap_or(Auth::None);
        self.paced = None;
        if let (true, Some(p), Auth::Bearer { token, .. }) = (write, self.pacer, &auth)
            && p.paces(token)
        {
            let i = p.admit(token).await;
            self.paced = Some(p.pooled(token, i).to_string());
            if i > 0 {
                auth = Auth::Bearer {
                    token: p.pooled(token, i).to_string(),
                    env: Some(token_env(role, i)),
                };
            }
        }
        auth
    }

    pub(super) async fn call(
        &mut self,
        auth: Auth,
        op: &str,
        args: Value,
    ) -> (Answer, Vec<Exchange>) {
        match self
            .target
            .transport(self.kind)
            .call(op, &args, &auth)
            .await
        {
            Ok(mut reply) => (Answer::read(self.kind, &mut reply), reply.exchanges),
            Err(e) => (
                Answer::Other(format!("no answer: {e}")),
                e.exchanges().to_vec(),
            ),
        }
    }

    /// Paces this driver's writes with the run's [`Pacer`] (when the target has one).
    pub fn paced_by(mut self, pacer: Option<&'a Pacer>) -> Self {
        self.pacer = pacer;
        self
    }

    /// Whether the last write was paced: then its `429` was not provoked by this run (the
    /// pacer kept the run under the token's quota) but by writes the target's window holds
    /// from elsewhere — a pause, and the pacer is told so.
    fn unprovoked_429(&self) -> bool {
        match (&self.paced, self.pacer) {
            (Some(token), Some(p)) => {
                p.saturate(token);
                true
            }
            _ => false,
        }
    }

    /// Sends `op`'s request: the answer, every exchange, and when the answered request was
    /// sent. An assert refused 400 `invalid_body` (PV-DI-2: `valid_until` must be future)
    /// when its deadline may already have passed on the target as it arrived — the harness
    /// was late (a stalled request on a loaded machine), the refusal was right — is sent
    /// again with a fresh deadline and a doubled lead, at most [`LATE_RETRIES`] times. One
    /// refused while certainly on time is not sent again: the model judges that answer.
    async fn send_op(&mut self, world: &World, op: &Op, auth: Auth) -> Sent {
        let actor = op.actor();
        let writer = world.actors.get(actor).is_some_and(|a| a.write || a.human);
        let mut auth = auth;
        let mut exchanges = Vec::new();
        let mut retries = 0;
        loop {
            let (op_name, args) = self.request(world, op);
            if op.is_write() && writer {
                self.quota.attempt(actor);
            }
            let sent = Utc::now();
            self.step_sent = sent;
            let (answer, got) = self.call(auth, op_name, args).await;
            exchanges.extend(got);
            let late = self.late_assert(&answer, sent);
            if retries == LATE_RETRIES || !late {
                return Sent {
                    answer,
                    exchanges,
                    sent,
                    retries,
                    still_late: late,
                };
            }
            retries += 1;
            tracing::debug!(
                retries,
                "an assert reached the target after its valid_until: sent again"
            );
            // Admitted before the new deadline is taken, as in `step`.
            auth = self.admit(actor, op.is_write()).await;
            self.pending_until = Some(self.clock.late());
        }
    }

    /// Records a sent step: the target's clock from a message's `created_at` (PV-DI-2),
    /// the step's PV-TR-1 signature and its log line. The answer and its summary.
    fn record(&mut self, op: &Op, mut text: String, sent: Sent) -> (Answer, Value) {
        let Sent {
            answer,
            exchanges,
            sent,
            retries,
            still_late,
        } = sent;
        if let Answer::Success(b) = &answer
            && let Some(created) = str_at(b, "/message/created_at")
        {
            self.clock.observe(created, sent, Utc::now());
        }
        if retries > 0 {
            let verdict = if still_late {
                "; still late: not judged"
            } else {
                ""
            };
            text.push_str(&format!(
                " [sent {retries} more time(s) with a longer lead: it reached the target after its valid_until{verdict}]"
            ));
        }
        self.signatures.push(if still_late {
            unjudged()
        } else {
            signature(&answer, op, &mut self.normalised)
        });
        let summary = answer.summary();
        self.log.push(StepLog {
            text,
            answer: summary.clone(),
            exchanges,
        });
        (answer, summary)
    }

    /// Whether `answer` refuses an assert whose `valid_until` may have passed on the
    /// target before the request sent at `sent` was handled (see [`Driver::send_op`]).
    fn late_assert(&self, answer: &Answer, sent: DateTime<Utc>) -> bool {
        let Some(until) = self.pending_until else {
            return false;
        };
        matches!(answer, Answer::Refusal { status: 400, reason } if reason == "invalid_body")
            && self.clock.expired(until, sent, Utc::now()) != Some(false)
    }

    /// Runs `op` on the model `world`: the model after it, or the disagreement.
    pub async fn step(&mut self, world: &World, op: &Op) -> Result<World, Box<Finding>> {
        let pred = predict(world, op);
        let actor = op.actor();
        // Admitted first: a paced write may wait long enough for a deadline taken before
        // the wait to pass before the assert reaches the target.
        let auth = self.admit(actor, op.is_write()).await;
        self.pending_until = match op {
            Op::Assert {
                until: Until::Soon, ..
            } => Some(self.clock.soon()),
            _ => None,
        };
        if let Op::ReadClaim {
            claim,
            after_expiry: true,
            ..
        } = op
        {
            self.await_expiry(*claim).await;
        }
        let text = describe(world, op, self.roles);
        let sent_at = std::time::Instant::now();
        let sent = self.send_op(world, op, auth).await;
        let still_late = sent.still_late;
        let (answer, summary) = self.record(op, text, sent);
        for bound in &mut self.bounds {
            bound.judge(op, sent_at, &answer)?;
        }
        if still_late {
            // Refused for a deadline that passed on the way, after every retry: the right
            // answer to what arrived, and nothing this step can be judged on. The claim was
            // not made; later steps pick among the claims that were
            // (`World::resolve`).
            return Ok(world.clone());
        }
        self.judge_answer(world, op, pred, answer, summary).await
    }

    /// Judges the target's `answer` to `op` (logged as `summary`) against the model's
    /// prediction `pred`: the model after the step, or the disagreement.
    async fn judge_answer(
        &mut self,
        world: &World,
        op: &Op,
        pred: Prediction,
        answer: Answer,
        summary: Value,
    ) -> Result<World, Box<Finding>> {
        let actor = op.actor();
        let expected = json!(pred.allowed.iter().map(outcome_json).collect::<Vec<_>>());
        match answer {
            Answer::Refusal { status, reason } => {
                if status == 429
                    && reason == "rate_limited"
                    && op.is_write()
                    && (self.quota.tolerates(actor) || self.unprovoked_429())
                {
                    return Ok(world.clone());
                }
                if pred
                    .allowed
                    .iter()
                    .any(|o| matches!(o, Outcome::Refused((s, r)) if *s == status && *r == reason))
                {
                    return Ok(pred.next);
                }
                let mut rules = pred.rules.clone();
                rules.extend(reason_rules(&reason));
                Err(mismatch(
                    &rules,
                    format!("refused {status} {reason}, the model expects otherwise"),
                    expected,
                    summary,
                ))
            }
            Answer::Other(s) => Err(mismatch(
                &["PV-TR-2", "PV-TR-3"],
                format!("not a Parley answer: {s}"),
                expected,
                summary,
            )),
            Answer::Success(body) => {
                let event = pred.allowed.iter().find_map(|o| match o {
                    Outcome::Accepted { event } => Some(*event),
                    Outcome::Refused(_) => None,
                });
                let Some(event) = event else {
                    return Err(mismatch(
                        &pred.rules,
                        "accepted, the model expects a refusal",
                        expected,
                        summary,
                    ));
                };
                let after = pred.accepted_next.unwrap_or(pred.next);
                self.check_success(world, &after, op, event, body).await?;
                Ok(after)
            }
        }
    }
}

/// One line naming the operation, its actor and its arguments by model index.
pub fn describe(w: &World, op: &Op, roles: &[Role]) -> String {
    let who = |a: usize| roles.get(a).map_or("?", |r| r.as_str()).to_string();
    let party = |p: Party| match p.ext {
        Some(e) => format!("{}/{}", who(p.actor), EXTENSIONS[e]),
        None => who(p.actor),
    };
    let _ = w;
    match op {
        Op::Open { by, body } => format!(
            "{} opens thread T{} with an ask (body {body:?})",
            party(*by),
            w.threads.len() + 1
        ),
        Op::Post {
            by,
            thread,
            parent,
            kind,
            body,
        } => format!(
            "{} posts {} in T{} {} (body {body:?})",
            party(*by),
            kind.as_str(),
            thread + 1,
            parent.map_or("to the root, implicitly".to_string(), |p| format!(
                "replying to message #{}",
                p + 1
            ))
        ),
        Op::Orphan { by, kind } => format!(
            "{} posts {} with neither thread nor parent",
            party(*by),
            kind.as_str()
        ),
        Op::UnknownThread { by, kind } => format!(
            "{} posts {} into unknown thread {UNKNOWN_THREAD}",
            party(*by),
            kind.as_str()
        ),
        Op::ForeignParent {
            by,
            thread,
            other,
            parent,
        } => {
            format!(
                "{} posts inform in T{} with parent message #{} of T{}",
                party(*by),
                thread + 1,
                parent + 1,
                other + 1
            )
        }
        Op::Mark { by, thread, state } => {
            format!("{} marks T{} {}", who(*by), thread + 1, state.as_str())
        }
        Op::Reopen { by, thread } => format!("{} reopens T{}", who(*by), thread + 1),
        Op::ReadThread { by, thread } => format!("{} reads T{}", who(*by), thread + 1),
        Op::ListEvents { by, thread, since } => match since {
            Some(k) => format!(
                "{} lists T{}'s events, then those since event #{}",
                who(*by),
                thread + 1,
                k + 1
            ),
            None => format!("{} lists T{}'s events", who(*by), thread + 1),
        },
        Op::Inbox { by } => format!("{} reads its inbox to the last page", party(*by)),
        Op::Assert {
            by,
            thread,
            supersedes,
            until,
            evidence,
        } => format!(
            "{} asserts claim C{} {}{} (valid_until {until:?}, evidence {evidence:?})",
            party(*by),
            w.claims.len() + 1,
            thread.map_or(format!("opening thread T{}", w.threads.len() + 1), |t| {
                format!("in T{}", t + 1)
            }),
            supersedes.map_or(String::new(), |c| format!(", superseding C{}", c + 1)),
        ),
        Op::ClaimAct {
            by,
            claim,
            act,
            evidence,
        } => format!(
            "{} posts {} of C{} (evidence {evidence:?})",
            party(*by),
            act.kind().as_str(),
            claim + 1
        ),
        Op::Whoami { by } => format!("{} asks whoami", who(*by)),
        Op::Anonymous { write } => format!(
            "a caller without a token {}",
            if *write {
                "posts an ask"
            } else {
                "reads its inbox"
            }
        ),
        Op::ReadClaim {
            by,
            claim,
            after_expiry,
        } => format!(
            "{} reads C{}{}",
            who(*by),
            claim + 1,
            if *after_expiry {
                " once its valid_until has passed"
            } else {
                ""
            }
        ),
    }
}
