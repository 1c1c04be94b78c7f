//! Promotion (`conform model --promote DIR`): a shrunk counterexample becomes a golden
//! vector file in the format of `vectors/README.md`, so it runs forever after in the plain
//! vector suite and against every other target. Each step's `expect` is the model's
//! prediction (where the notes allow several outcomes, a `one_of`); ids the target assigns
//! are captured (`$t1`, `$t1m2`, `$t1e3`) and reused by later steps.

use serde_json::{Map, Value, json};

use super::dialectic::{Act, Evidence, Until};
use super::driver::UNKNOWN_THREAD;
use super::party::{EXTENSIONS, Party};
use super::predict::predict;
use super::runner::Counterexample;
use super::state::{Awaiting, Body, Kind, Op, Outcome, World};
use crate::engine::requirements::Catalogue;
use crate::parley::role::Role;

/// Ids a vector step refers to: `$t<k>` for thread k, `$t<k>m<n>` for its message n.
fn t(k: usize) -> String {
    format!("$t{}", k + 1)
}

fn m(k: usize, n: usize) -> String {
    format!("$t{}m{}", k + 1, n + 1)
}

fn role(roles: &[Role], actor: usize) -> &'static str {
    roles.get(actor).map_or("anonymous", |r| r.as_str())
}

fn party(roles: &[Role], p: Party) -> Value {
    json!({
        "identity": format!("$identity.{}", role(roles, p.actor)),
        "extension": match p.ext {
            Some(e) => json!(EXTENSIONS[e]),
            None => json!({"$one_of": [null, ""]}),
        },
    })
}

/// The thread as the model predicts it (the members the model checks).
fn thread_match(w: &World, roles: &[Role], k: usize) -> Value {
    let th = &w.threads[k];
    json!({
        "id": t(k),
        "state": th.state.as_str(),
        "state_origin": if th.origin_user { "user" } else { "llm" },
        "state_confirmed_at": if th.confirmed { json!({"$type": "string"}) } else { Value::Null },
        "creator": {"identity": format!("$identity.{}", role(roles, th.creator.actor))},
        "awaiting": match th.awaiting {
            Awaiting::Nobody => Value::Null,
            Awaiting::AnyExcept(p) => json!({"any": true, "except": party(roles, p)}),
            Awaiting::Party(p) => party(roles, p),
        },
    })
}

fn tree(w: &World, k: usize, n: usize) -> Value {
    let replies: Vec<Value> = (0..w.threads[k].messages.len())
        .filter(|i| w.threads[k].messages[*i].parent == Some(n))
        .map(|i| tree(w, k, i))
        .collect();
    json!({"id": m(k, n), "replies": replies})
}

fn body(b: Body, max: Option<usize>) -> Value {
    match (b, max) {
        (Body::AtLimit, Some(n)) => json!({"$repeat": {"s": "é", "n": n}}),
        (Body::OverLimit, Some(n)) => json!({"$repeat": {"s": "é", "n": n + 1}}),
        (Body::Empty, _) => json!(""),
        _ => json!("model step ${run}"),
    }
}

fn with_from(mut args: Value, by: Party) -> Value {
    if let Some(e) = by.ext {
        args["from"] = json!({"extension": EXTENSIONS[e]});
    }
    args
}

/// The `expect` of a step from the model's allowed outcomes; `success` is the match of an
/// accepted answer.
fn expect(allowed: &[Outcome], status: u16, success: Value) -> Value {
    let one = |o: &Outcome| match o {
        Outcome::Accepted { .. } => json!({"status": status, "match": success}),
        Outcome::Refused((s, r)) => json!({"refusal": {"status": s, "reason": r}}),
    };
    match allowed {
        [o] => one(o),
        many => json!({"one_of": many.iter().map(one).collect::<Vec<_>>()}),
    }
}

/// What every step of one operation is built from: the model before it, the roles and the
/// model's prediction for it.
struct Ctx<'a> {
    /// The model before the operation.
    w: &'a World,
    roles: &'a [Role],
    /// The outcomes the notes allow.
    allowed: &'a [Outcome],
    /// The model after the operation.
    after: &'a World,
    /// Whether an acceptance is allowed: only then are ids captured.
    accepted: bool,
    /// The role sending the operation.
    who: &'static str,
}

impl Ctx<'_> {
    /// A step sent as the operation's actor.
    fn step(&self, op_name: &str, args: Value, expect: Value) -> Value {
        json!({"as": self.who, "op": op_name, "args": args, "expect": expect})
    }

    /// The `expect` of a step from the allowed outcomes.
    fn expect(&self, status: u16, success: Value) -> Value {
        expect(self.allowed, status, success)
    }
}

/// The vector steps of one model operation (`w` = the model before it).
fn steps(w: &World, roles: &[Role], op: &Op) -> Vec<Value> {
    let pred = predict(w, op);
    let cx = Ctx {
        w,
        roles,
        allowed: &pred.allowed,
        after: &pred.next,
        accepted: pred
            .allowed
            .iter()
            .any(|o| matches!(o, Outcome::Accepted { .. })),
        who: role(roles, op.actor()),
    };
    match op {
        Op::Open { by, body: b } => vec![open_step(&cx, *by, *b)],
        Op::Post {
            by,
            thread,
            parent,
            kind,
            body: b,
        } => vec![post_step(&cx, *by, *thread, *parent, *kind, *b)],
        Op::Orphan { by, kind } => vec![stray_post_step(
            &cx,
            *by,
            json!({"kind": kind.as_str(), "body": "model step ${run}"}),
        )],
        Op::UnknownThread { by, kind } => vec![stray_post_step(
            &cx,
            *by,
            json!({"kind": kind.as_str(), "thread": UNKNOWN_THREAD, "body": "model step ${run}"}),
        )],
        Op::ForeignParent {
            by,
            thread,
            other,
            parent,
        } => vec![stray_post_step(
            &cx,
            *by,
            json!({"kind": "inform", "thread": t(*thread), "parent": m(*other, *parent), "body": "model step ${run}"}),
        )],
        Op::Mark { thread, .. } | Op::Reopen { thread, .. } => {
            vec![transition_step(&cx, op, *thread)]
        }
        Op::ReadThread { thread, .. } => vec![read_thread_step(&cx, *thread)],
        Op::ListEvents { thread, since, .. } => list_events_steps(&cx, *thread, *since),
        Op::Whoami { by } => vec![cx.step(
            "whoami",
            json!({}),
            cx.expect(
                200,
                json!({"identity": format!("$identity.{}", role(roles, *by))}),
            ),
        )],
        Op::Anonymous { write } => vec![anonymous_step(&cx, *write)],
        Op::Assert { .. } | Op::ClaimAct { .. } | Op::ReadClaim { .. } => {
            vec![claim_step(&cx, op)]
        }
        Op::Inbox { by } => inbox_steps(&cx, *by),
    }
}

/// The `post` of an `ask` opening a thread; it captures the thread's and root's ids.
fn open_step(cx: &Ctx<'_>, by: Party, b: Body) -> Value {
    let k = cx.w.threads.len();
    let args = with_from(json!({"kind": "ask", "body": body(b, cx.w.body_max)}), by);
    let success = if cx.accepted {
        // The id is captured by this very step.
        let mut th = thread_match(cx.after, cx.roles, k);
        th["id"] = json!({"$type": "string"});
        json!({"thread": th})
    } else {
        json!({})
    };
    let mut s = cx.step("post", args, cx.expect(201, success));
    if cx.accepted {
        s["capture"] = json!({ &t(k)[1..]: "/thread/id", &m(k, 0)[1..]: "/message/id" });
    }
    s
}

/// The `post` of a core act into a thread; it captures the new message's id.
fn post_step(
    cx: &Ctx<'_>,
    by: Party,
    thread: usize,
    parent: Option<usize>,
    kind: Kind,
    b: Body,
) -> Value {
    let mut args =
        json!({"kind": kind.as_str(), "thread": t(thread), "body": body(b, cx.w.body_max)});
    if let Some(p) = parent {
        args["parent"] = json!(m(thread, p));
    }
    let n = cx.w.threads[thread].messages.len();
    let success = if cx.accepted {
        json!({"thread": thread_match(cx.after, cx.roles, thread)})
    } else {
        json!({})
    };
    let mut s = cx.step("post", with_from(args, by), cx.expect(201, success));
    if cx.accepted {
        s["capture"] = json!({ &m(thread, n)[1..]: "/message/id" });
    }
    s
}

/// A `post` outside any valid thread (orphan, unknown thread, foreign parent): nothing to
/// match on acceptance and nothing to capture.
fn stray_post_step(cx: &Ctx<'_>, by: Party, args: Value) -> Value {
    cx.step("post", with_from(args, by), cx.expect(201, json!({})))
}

/// A `mark` or `reopen`: an accepted one carries the state change's event, if any.
fn transition_step(cx: &Ctx<'_>, op: &Op, thread: usize) -> Value {
    let (name, args) = match op {
        Op::Mark { .. } => (
            "mark",
            json!({"thread": t(thread), "state": state_name(op)}),
        ),
        _ => ("reopen", json!({"thread": t(thread)})),
    };
    let event = cx.allowed.iter().find_map(|o| match o {
        Outcome::Accepted { event } => Some(*event),
        Outcome::Refused(_) => None,
    });
    let success = match event {
        Some(true) => {
            json!({"thread": thread_match(cx.after, cx.roles, thread), "event": {"to_state": cx.after.threads[thread].state.as_str()}})
        }
        Some(false) => {
            json!({"thread": thread_match(cx.after, cx.roles, thread), "event": null})
        }
        None => json!({}),
    };
    cx.step(name, args, cx.expect(200, success))
}

/// A `read_thread`: the thread and its message tree as the model has them.
fn read_thread_step(cx: &Ctx<'_>, thread: usize) -> Value {
    cx.step(
        "read_thread",
        json!({"thread": t(thread)}),
        cx.expect(
            200,
            json!({"thread": thread_match(cx.after, cx.roles, thread), "messages": [tree(cx.after, thread, 0)]}),
        ),
    )
}

/// A `list_events`; with `since`, a second one from the event id the first captures.
fn list_events_steps(cx: &Ctx<'_>, thread: usize, since: Option<usize>) -> Vec<Value> {
    let events: Vec<Value> = cx.after.threads[thread]
        .events
        .iter()
        .map(|e| json!({"to_state": e.to.as_str()}))
        .collect();
    let mut first = cx.step(
        "list_events",
        json!({"thread": t(thread)}),
        cx.expect(200, json!({"events": events})),
    );
    let Some(k) = since else { return vec![first] };
    let name = format!("t{}e{}", thread + 1, k + 1);
    first["capture"] = json!({ &name: format!("/events/{k}/id") });
    let later: Vec<Value> = events[k + 1..].to_vec();
    vec![
        first,
        cx.step(
            "list_events",
            json!({"thread": t(thread), "since": format!("${name}")}),
            cx.expect(200, json!({"events": later})),
        ),
    ]
}

/// A read (`inbox`) or a write (`post`) without a token, whoever the actor.
fn anonymous_step(cx: &Ctx<'_>, write: bool) -> Value {
    let (name, args) = if write {
        ("post", json!({"kind": "ask", "body": "model step ${run}"}))
    } else {
        ("inbox", json!({}))
    };
    json!({"as": "anonymous", "op": name, "args": args, "expect": cx.expect(200, json!({}))})
}

/// The `inbox`, paged to the end: one step for the threads listed, one for those hidden.
fn inbox_steps(cx: &Ctx<'_>, by: Party) -> Vec<Value> {
    let after = cx.after;
    let mut args = json!({});
    if let Some(e) = by.ext {
        args["extension"] = json!(EXTENSIONS[e]);
    }
    let (listed, hidden): (Vec<usize>, Vec<usize>) =
        (0..after.threads.len()).partition(|k| after.in_inbox(by, &after.threads[*k]));
    let ids = |v: &[usize]| {
        v.iter()
            .map(|k| json!({"thread": t(*k)}))
            .collect::<Vec<_>>()
    };
    // One matcher operator per array: the listed threads, then the hidden ones.
    [("$contains", ids(&listed)), ("$not_contains", ids(&hidden))]
        .into_iter()
        .map(|(operator, threads)| {
            let mut s = cx.step(
                "inbox",
                args.clone(),
                cx.expect(200, json!({"items": {operator: threads}})),
            );
            s["paginate"] = json!(true);
            s
        })
        .collect()
}

fn c(k: usize) -> String {
    format!("$c{}", k + 1)
}

fn evidence(e: Evidence) -> Option<Value> {
    match e {
        Evidence::Valid => Some(json!([{"kind": "url", "ref": "https://example.org/model"}])),
        Evidence::Invalid => Some(json!([{"kind": "url", "ref": "/relative/model"}])),
        Evidence::Missing => None,
    }
}

/// What a dialectic step is made of before the common `as`, `expect` and `capture`.
struct ClaimCall {
    name: &'static str,
    args: Value,
    status: u16,
    success: Value,
    /// The ids an acceptance captures (`null`: none).
    capture: Value,
}

/// The vector step of a dialectic operation (PV-DI): claim ids are captured as `$c<k>`.
fn claim_step(cx: &Ctx<'_>, op: &Op) -> Value {
    let call = match op {
        Op::Assert {
            by,
            thread,
            supersedes,
            until,
            evidence: e,
        } => assert_call(cx, *by, *thread, *supersedes, *until, *e),
        Op::ClaimAct {
            by,
            claim,
            act,
            evidence: e,
        } => claim_act_call(cx, *by, *claim, *act, *e),
        Op::ReadClaim { claim, .. } => read_claim_call(cx, *claim),
        _ => ClaimCall {
            name: "read_claim",
            args: json!({}),
            status: 200,
            success: json!({}),
            capture: json!(null),
        },
    };
    let mut s = cx.step(call.name, call.args, cx.expect(call.status, call.success));
    if cx.accepted && !call.capture.is_null() {
        s["capture"] = call.capture;
    }
    s
}

/// An `assert`, into `thread` or opening a new one when it is `None`.
fn assert_call(
    cx: &Ctx<'_>,
    by: Party,
    thread: Option<usize>,
    supersedes: Option<usize>,
    until: Until,
    e: Evidence,
) -> ClaimCall {
    let args = assert_args(thread, supersedes, until, e);
    let k = thread.unwrap_or(cx.w.threads.len());
    let capture = assert_capture(cx, thread, k);
    let mut th = cx
        .after
        .threads
        .get(k)
        .map(|_| thread_match(cx.after, cx.roles, k));
    if let (Some(th), None) = (th.as_mut(), thread) {
        th["id"] = json!({"$type": "string"});
    }
    ClaimCall {
        name: "post",
        args: with_from(args, by),
        status: 201,
        success: json!({"thread": th}),
        capture,
    }
}

/// The arguments of an `assert`, before its `from`.
fn assert_args(
    thread: Option<usize>,
    supersedes: Option<usize>,
    until: Until,
    e: Evidence,
) -> Value {
    let mut args = json!({"kind": "assert", "body": "model step ${run}"});
    if let Some(t0) = thread {
        args["thread"] = json!(t(t0));
    }
    if let Some(x) = supersedes {
        args["supersedes"] = json!([c(x)]);
    }
    match until {
        Until::Never => {}
        Until::Soon => args["valid_until"] = json!({"$time_from_now": 60}),
        Until::Past => args["valid_until"] = json!({"$time_from_now": -86400}),
    }
    if let Some(e) = evidence(e) {
        args["evidence"] = e;
    }
    args
}

/// The ids an accepted `assert` into thread `k` yields: the claim, its message and, when it
/// opens the thread, the thread.
fn assert_capture(cx: &Ctx<'_>, thread: Option<usize>, k: usize) -> Value {
    let mut capture = json!({ &c(cx.w.claims.len())[1..]: "/message/claim" });
    let n = cx
        .after
        .threads
        .get(k)
        .map_or(0, |th| th.messages.len().max(1) - 1);
    capture[&m(k, n)[1..]] = json!("/message/id");
    if thread.is_none() {
        capture[&t(k)[1..]] = json!("/thread/id");
    }
    capture
}

/// An `attest`, `verify` or `refute` replying to the claim's message.
fn claim_act_call(cx: &Ctx<'_>, by: Party, claim: usize, act: Act, e: Evidence) -> ClaimCall {
    let cl = &cx.w.claims[claim];
    let mut args = json!({"kind": act.kind().as_str(), "thread": t(cl.thread), "parent": m(cl.thread, cl.message), "claim": c(claim), "body": "model step ${run}"});
    if let Some(e) = evidence(e) {
        args["evidence"] = e;
    }
    let n = cx.w.threads[cl.thread].messages.len();
    let capture = json!({ &m(cl.thread, n)[1..]: "/message/id" });
    let success = json!({"thread": thread_match(cx.after, cx.roles, cl.thread), "message": {"claim": c(claim)}});
    ClaimCall {
        name: "post",
        args: with_from(args, by),
        status: 201,
        success,
        capture,
    }
}

/// A `read_claim`: the claim's status and tallies after the operation.
fn read_claim_call(cx: &Ctx<'_>, claim: usize) -> ClaimCall {
    let cl = &cx.after.claims[claim];
    let mut success = json!({"id": c(claim), "status": cl.status.as_str(), "support": cl.support, "refutations": {"$len": cl.refutations}});
    if cl.until == Until::Never {
        success["expired"] = json!(false);
    }
    ClaimCall {
        name: "read_claim",
        args: json!({"claim": c(claim)}),
        status: 200,
        success,
        capture: json!(null),
    }
}

fn state_name(op: &Op) -> &'static str {
    match op {
        Op::Mark { state, .. } => state.as_str(),
        _ => "open",
    }
}

/// The vector file of a counterexample found on `seed` over `binding`: one vector citing the
/// broken postcondition's IDs (those the catalogue knows).
pub fn vector_file(
    cx: &Counterexample,
    world: &World,
    seed: u64,
    binding: &str,
    catalogue: &Catalogue,
) -> Result<Value, String> {
    // The quota role's writes pass or meet its 429 by a window other clients share: a
    // vector fixing either answer would fail a correct server (the quota vectors,
    // `transport/quota-*`, judge PV-TR-5 with `expect_seen`).
    if let Some(i) = cx
        .ops
        .iter()
        .position(|op| op.is_write() && cx.roles.get(op.actor()) == Some(&Role::Limited))
    {
        return Err(format!(
            "step {} is a write by the quota role, whose answer depends on a window other clients share; a vector cannot fix it",
            i + 1
        ));
    }
    let mut w = world.clone();
    let mut all = Vec::new();
    for (i, op) in cx.ops.iter().enumerate() {
        all.extend(steps(&w, &cx.roles, op));
        let pred = predict(&w, op);
        // Where the notes allow both accepting and refusing (PV-DI), what follows depends
        // on the target's choice: a vector fixing one reading would fail a correct server.
        if pred.accepted_next.is_some() && i + 1 < cx.ops.len() {
            return Err(format!(
                "step {} is a point the notes leave open (accepted or refused); a vector cannot fix what follows it",
                i + 1
            ));
        }
        w = pred.next;
    }
    let mut requirements: Vec<String> = Vec::new();
    for r in &cx.mismatch.rules {
        if catalogue.get(r).is_some() && !requirements.iter().any(|x| x == r) {
            requirements.push(r.clone());
        }
    }
    let mut roles: Vec<&str> = cx.roles.iter().map(|r| r.as_str()).collect();
    roles.sort_unstable();
    roles.dedup();
    let used: Vec<&str> = roles
        .into_iter()
        .filter(|r| all.iter().any(|s| s["as"] == json!(r)))
        .collect();
    let id = format!("model/seed-{seed}-{binding}");
    let mut v = Map::new();
    v.insert("id".into(), json!(id));
    v.insert("requirements".into(), json!(requirements));
    v.insert(
        "title".into(),
        json!(format!(
            "promoted model counterexample (seed {seed}, {binding}): {}",
            cx.mismatch.message
        )),
    );
    v.insert("roles".into(), json!(used));
    v.insert("steps".into(), Value::Array(all));
    Ok(
        json!({"format_version": 1, "suite": "parley", "area": "model", "vectors": [Value::Object(v)]}),
    )
}
