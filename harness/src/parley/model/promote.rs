//! Promotion (`conform model --promote DIR`): a shrunk counterexample becomes a golden
//! vector file in the format of `vectors/README.md`, so it runs forever after in the plain
//! vector suite and against every other target. Each step's `expect` is the model's
//! prediction (where the notes allow several outcomes, a `one_of`); ids the target assigns
//! are captured (`$t1`, `$t1m2`, `$t1e3`) and reused by later steps.

use serde_json::{Map, Value, json};

use super::dialectic::{Evidence, Until};
use super::driver::UNKNOWN_THREAD;
use super::party::{EXTENSIONS, Party};
use super::predict::predict;
use super::runner::Counterexample;
use super::state::{Awaiting, Body, Op, Outcome, World};
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

/// The vector steps of one model operation (`w` = the model before it).
fn steps(w: &World, roles: &[Role], op: &Op) -> Vec<Value> {
    let pred = predict(w, op);
    let after = &pred.next;
    let accepted = pred
        .allowed
        .iter()
        .any(|o| matches!(o, Outcome::Accepted { .. }));
    let who = role(roles, op.actor());
    let step = |op_name: &str, args: Value, expect: Value| json!({"as": who, "op": op_name, "args": args, "expect": expect});
    match op {
        Op::Open { by, body: b } => {
            let k = w.threads.len();
            let args = with_from(json!({"kind": "ask", "body": body(*b, w.body_max)}), *by);
            let success = if accepted {
                {
                    // The id is captured by this very step.
                    let mut th = thread_match(after, roles, k);
                    th["id"] = json!({"$type": "string"});
                    json!({"thread": th})
                }
            } else {
                json!({})
            };
            let mut s = step("post", args, expect(&pred.allowed, 201, success));
            if accepted {
                s["capture"] = json!({ &t(k)[1..]: "/thread/id", &m(k, 0)[1..]: "/message/id" });
            }
            vec![s]
        }
        Op::Post {
            by,
            thread,
            parent,
            kind,
            body: b,
        } => {
            let mut args =
                json!({"kind": kind.as_str(), "thread": t(*thread), "body": body(*b, w.body_max)});
            if let Some(p) = parent {
                args["parent"] = json!(m(*thread, *p));
            }
            let n = w.threads[*thread].messages.len();
            let success = if accepted {
                json!({"thread": thread_match(after, roles, *thread)})
            } else {
                json!({})
            };
            let mut s = step(
                "post",
                with_from(args, *by),
                expect(&pred.allowed, 201, success),
            );
            if accepted {
                s["capture"] = json!({ &m(*thread, n)[1..]: "/message/id" });
            }
            vec![s]
        }
        Op::Orphan { by, kind } => vec![step(
            "post",
            with_from(
                json!({"kind": kind.as_str(), "body": "model step ${run}"}),
                *by,
            ),
            expect(&pred.allowed, 201, json!({})),
        )],
        Op::UnknownThread { by, kind } => vec![step(
            "post",
            with_from(
                json!({"kind": kind.as_str(), "thread": UNKNOWN_THREAD, "body": "model step ${run}"}),
                *by,
            ),
            expect(&pred.allowed, 201, json!({})),
        )],
        Op::ForeignParent {
            by,
            thread,
            other,
            parent,
        } => vec![step(
            "post",
            with_from(
                json!({"kind": "inform", "thread": t(*thread), "parent": m(*other, *parent), "body": "model step ${run}"}),
                *by,
            ),
            expect(&pred.allowed, 201, json!({})),
        )],
        Op::Mark { thread, .. } | Op::Reopen { thread, .. } => {
            let (name, args) = match op {
                Op::Mark { .. } => (
                    "mark",
                    json!({"thread": t(*thread), "state": state_name(op)}),
                ),
                _ => ("reopen", json!({"thread": t(*thread)})),
            };
            let event = pred.allowed.iter().find_map(|o| match o {
                Outcome::Accepted { event } => Some(*event),
                Outcome::Refused(_) => None,
            });
            let success = match event {
                Some(true) => {
                    json!({"thread": thread_match(after, roles, *thread), "event": {"to_state": after.threads[*thread].state.as_str()}})
                }
                Some(false) => {
                    json!({"thread": thread_match(after, roles, *thread), "event": null})
                }
                None => json!({}),
            };
            vec![step(name, args, expect(&pred.allowed, 200, success))]
        }
        Op::ReadThread { thread, .. } => vec![step(
            "read_thread",
            json!({"thread": t(*thread)}),
            expect(
                &pred.allowed,
                200,
                json!({"thread": thread_match(after, roles, *thread), "messages": [tree(after, *thread, 0)]}),
            ),
        )],
        Op::ListEvents { thread, since, .. } => {
            let events: Vec<Value> = after.threads[*thread]
                .events
                .iter()
                .map(|e| json!({"to_state": e.to.as_str()}))
                .collect();
            let mut first = step(
                "list_events",
                json!({"thread": t(*thread)}),
                expect(&pred.allowed, 200, json!({"events": events})),
            );
            let Some(k) = since else { return vec![first] };
            let name = format!("t{}e{}", thread + 1, k + 1);
            first["capture"] = json!({ &name: format!("/events/{k}/id") });
            let later: Vec<Value> = events[k + 1..].to_vec();
            vec![
                first,
                step(
                    "list_events",
                    json!({"thread": t(*thread), "since": format!("${name}")}),
                    expect(&pred.allowed, 200, json!({"events": later})),
                ),
            ]
        }
        Op::Whoami { by } => vec![step(
            "whoami",
            json!({}),
            expect(
                &pred.allowed,
                200,
                json!({"identity": format!("$identity.{}", role(roles, *by))}),
            ),
        )],
        Op::Anonymous { write } => {
            let (name, args) = if *write {
                ("post", json!({"kind": "ask", "body": "model step ${run}"}))
            } else {
                ("inbox", json!({}))
            };
            vec![
                json!({"as": "anonymous", "op": name, "args": args, "expect": expect(&pred.allowed, 200, json!({}))}),
            ]
        }
        Op::Assert { .. } | Op::ClaimAct { .. } | Op::ReadClaim { .. } => {
            vec![claim_step(w, roles, op, &pred.allowed, after)]
        }
        Op::Inbox { by } => {
            let mut args = json!({});
            if let Some(e) = by.ext {
                args["extension"] = json!(EXTENSIONS[e]);
            }
            let (listed, hidden): (Vec<usize>, Vec<usize>) =
                (0..after.threads.len()).partition(|k| after.in_inbox(*by, &after.threads[*k]));
            let ids = |v: &[usize]| {
                v.iter()
                    .map(|k| json!({"thread": t(*k)}))
                    .collect::<Vec<_>>()
            };
            // One matcher operator per array: the listed threads, then the hidden ones.
            [("$contains", ids(&listed)), ("$not_contains", ids(&hidden))]
                .into_iter()
                .map(|(operator, threads)| {
                    let mut s = step(
                        "inbox",
                        args.clone(),
                        expect(&pred.allowed, 200, json!({"items": {operator: threads}})),
                    );
                    s["paginate"] = json!(true);
                    s
                })
                .collect()
        }
    }
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

/// The vector step of a dialectic operation (PV-DI): claim ids are captured as `$c<k>`.
fn claim_step(w: &World, roles: &[Role], op: &Op, allowed: &[Outcome], after: &World) -> Value {
    let accepted = allowed
        .iter()
        .any(|o| matches!(o, Outcome::Accepted { .. }));
    let who = role(roles, op.actor());
    let (name, args, status, success, capture) = match op {
        Op::Assert {
            by,
            thread,
            supersedes,
            until,
            evidence: e,
        } => {
            let mut args = json!({"kind": "assert", "body": "model step ${run}"});
            let k = thread.unwrap_or(w.threads.len());
            if let Some(t0) = thread {
                args["thread"] = json!(t(*t0));
            }
            if let Some(x) = supersedes {
                args["supersedes"] = json!([c(*x)]);
            }
            match until {
                Until::Never => {}
                Until::Soon => args["valid_until"] = json!({"$time_from_now": 60}),
                Until::Past => args["valid_until"] = json!({"$time_from_now": -86400}),
            }
            if let Some(e) = evidence(*e) {
                args["evidence"] = e;
            }
            let mut capture = json!({ &c(w.claims.len())[1..]: "/message/claim" });
            let n = after
                .threads
                .get(k)
                .map_or(0, |th| th.messages.len().max(1) - 1);
            capture[&m(k, n)[1..]] = json!("/message/id");
            if thread.is_none() {
                capture[&t(k)[1..]] = json!("/thread/id");
            }
            let mut th = after.threads.get(k).map(|_| thread_match(after, roles, k));
            if let (Some(th), None) = (th.as_mut(), thread) {
                th["id"] = json!({"$type": "string"});
            }
            (
                "post",
                with_from(args, *by),
                201,
                json!({"thread": th}),
                capture,
            )
        }
        Op::ClaimAct {
            by,
            claim,
            act,
            evidence: e,
        } => {
            let cl = &w.claims[*claim];
            let mut args = json!({"kind": act.kind().as_str(), "thread": t(cl.thread), "parent": m(cl.thread, cl.message), "claim": c(*claim), "body": "model step ${run}"});
            if let Some(e) = evidence(*e) {
                args["evidence"] = e;
            }
            let n = w.threads[cl.thread].messages.len();
            let capture = json!({ &m(cl.thread, n)[1..]: "/message/id" });
            let success = json!({"thread": thread_match(after, roles, cl.thread), "message": {"claim": c(*claim)}});
            ("post", with_from(args, *by), 201, success, capture)
        }
        Op::ReadClaim { claim, .. } => {
            let cl = &after.claims[*claim];
            let mut success = json!({"id": c(*claim), "status": cl.status.as_str(), "support": cl.support, "refutations": {"$len": cl.refutations}});
            if cl.until == Until::Never {
                success["expired"] = json!(false);
            }
            (
                "read_claim",
                json!({"claim": c(*claim)}),
                200,
                success,
                json!(null),
            )
        }
        _ => ("read_claim", json!({}), 200, json!({}), json!(null)),
    };
    let mut s =
        json!({"as": who, "op": name, "args": args, "expect": expect(allowed, status, success)});
    if accepted && !capture.is_null() {
        s["capture"] = capture;
    }
    s
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
            requirements.push((*r).to_string());
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
