//! Service-level tests over `Db::open(":memory:")`: the (state × act × actor class) table of
//! §5–§6, every emitted reason of §10, the PV-AU-6 check order, shapes of §11, inbox,
//! dialectic.

// In tests a panic is the failure report.
#![expect(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use serde_json::{Value, json};

use super::*;
use crate::config::Config;
use crate::domain::parley::ThreadState;

fn svc() -> ParleyService {
    let db = Db::open(Path::new(":memory:")).expect("in-memory db");
    ParleyService::new(db, Config::demo_in_memory().tokens)
}

fn req(op: Operation, token: Option<&str>, args: Value) -> Request {
    Request {
        op,
        auth: token.map(|t| BearerToken::Token(t.to_string())),
        args: Args::Json(args),
        body_len: 0,
        content_type: ContentType::NotApplicable,
    }
}

fn call(s: &ParleyService, op: Operation, token: &str, args: Value) -> Response {
    s.handle(req(op, Some(token), args))
}

fn post(s: &ParleyService, token: &str, args: Value) -> Response {
    call(s, Operation::Post, token, args)
}

/// Posts and insists on 201; returns the body.
fn ok_post(s: &ParleyService, token: &str, args: Value) -> Value {
    let r = post(s, token, args.clone());
    assert_eq!(r.status, 201, "post {args} by {token}: {}", r.body);
    r.body.into_value()
}

fn reason(r: &Response) -> (u16, &str) {
    (r.status, r.reason().unwrap_or("-"))
}

const A: &str = "demo-agent-a";
const B: &str = "demo-agent-b";
const MOD: &str = "demo-moderator";
const HUMAN: &str = "demo-human";
const READER: &str = "demo-reader";
const VERIFIER: &str = "demo-verifier";
const LIMITED: &str = "demo-limited";

/// Opens a thread by agent-a (no extension) and returns its id.
fn open_thread(s: &ParleyService) -> String {
    let b = ok_post(s, A, json!({"kind": "ask", "body": "what is X?"}));
    b["thread"]["id"].as_str().unwrap_or_default().to_string()
}

fn thread_of(s: &ParleyService, th: &str) -> Value {
    let r = call(s, Operation::ReadThread, A, json!({"thread": th}));
    assert_eq!(r.status, 200, "{}", r.body);
    r.body["thread"].clone()
}

fn events_of(s: &ParleyService, th: &str) -> Vec<Value> {
    let r = call(s, Operation::ListEvents, A, json!({"thread": th}));
    assert_eq!(r.status, 200, "{}", r.body);
    r.body["events"].as_array().cloned().unwrap_or_default()
}

fn ev() -> Value {
    json!([{"kind": "url", "ref": "https://example.org/proof"}])
}

// ---------------------------------------------------------------------------------------
// §5–§6: every (state × act × actor class)

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Creator,
    OtherWriter,
    LockHolder,
    Human,
    Reader,
}

impl Class {
    const ALL: [Self; 5] = [
        Self::Creator,
        Self::OtherWriter,
        Self::LockHolder,
        Self::Human,
        Self::Reader,
    ];
    fn token(self) -> &'static str {
        match self {
            Self::Creator => A,
            Self::OtherWriter => B,
            Self::LockHolder => MOD,
            Self::Human => HUMAN,
            Self::Reader => READER,
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum Act {
    Post(&'static str),
    Mark(ThreadState),
    Reopen,
}

fn all_acts() -> Vec<Act> {
    let mut acts: Vec<Act> = [
        "ask", "answer", "clarify", "inform", "propose", "agree", "object", "decide", "close",
    ]
    .into_iter()
    .map(Act::Post)
    .collect();
    acts.extend(ThreadState::ALL.into_iter().map(Act::Mark));
    acts.push(Act::Reopen);
    acts
}

/// Expected outcome: Ok((state, confirmed, event written)) or Err((status, reason)).
type Expect = Result<(ThreadState, bool, bool), (u16, &'static str)>;

/// The oracle, written from the text of §5–§6 (independently of `domain::parley::state`).
fn oracle(st: ThreadState, confirmed: bool, act: Act, class: Class) -> Expect {
    use ThreadState::*;
    if class == Class::Reader {
        return Err((403, "token_right_missing"));
    }
    let confirms = matches!(class, Class::LockHolder | Class::Human);
    let authority = class != Class::OtherWriter;
    let lateral = matches!(st, Deferred | Obsolete | Rejected);
    let locked = st == Closed && confirmed;
    let rank = |s: ThreadState| {
        [Open, Answered, Decided, Closed]
            .iter()
            .position(|x| *x == s)
    };
    let mark = |target: ThreadState| -> Expect {
        if locked {
            return Err((409, "thread_locked"));
        }
        if target == st {
            return Ok(if confirmed || !confirms {
                (st, confirmed, false)
            } else {
                (st, true, true)
            });
        }
        if lateral || target == Open {
            return Err((409, "invalid_transition"));
        }
        if let (Some(from), Some(to)) = (rank(st), rank(target))
            && to < from
        {
            return Err((409, "invalid_transition"));
        }
        Ok((target, confirms, true))
    };
    match act {
        Act::Post(kind) => {
            let target = match kind {
                "answer" => Some(Answered),
                "decide" => Some(Decided),
                "close" => Some(Closed),
                _ => None,
            };
            if matches!(kind, "decide" | "close") && !authority {
                return Err((403, "thread_authority_missing"));
            }
            if locked {
                return Err((409, "thread_locked"));
            }
            match target {
                Some(t) => mark(t),
                None => Ok((st, confirmed, false)),
            }
        }
        Act::Mark(target) => {
            if !authority {
                return Err((403, "thread_authority_missing"));
            }
            mark(target)
        }
        Act::Reopen => {
            let may = if lateral { confirms } else { authority };
            if !may {
                return Err((403, "thread_authority_missing"));
            }
            if st == Closed || lateral {
                Ok((Open, confirms, true))
            } else {
                Err((409, "invalid_transition"))
            }
        }
    }
}

/// Brings a fresh thread (opened by agent-a) into `st`, proposed or confirmed.
fn thread_in(s: &ParleyService, st: ThreadState, confirmed: bool) -> String {
    let th = open_thread(s);
    if st != ThreadState::Open {
        // The creator proposes (PV-ST-5), then the human confirms if asked.
        let r = call(
            s,
            Operation::Mark,
            A,
            json!({"thread": th, "state": st.as_str()}),
        );
        assert_eq!(r.status, 200, "setup mark {st:?}: {}", r.body);
    }
    if confirmed {
        let r = call(
            s,
            Operation::Mark,
            HUMAN,
            json!({"thread": th, "state": st.as_str()}),
        );
        assert_eq!(r.status, 200, "setup confirm {st:?}: {}", r.body);
    }
    let t = thread_of(s, &th);
    assert_eq!(t["state"], st.as_str());
    assert_eq!(t["state_confirmed_at"].is_string(), confirmed);
    th
}

#[test]
fn state_act_actor_table() {
    let s = svc();
    let mut checked = 0;
    for st in ThreadState::ALL {
        for confirmed in [false, true] {
            for act in all_acts() {
                for class in Class::ALL {
                    let th = thread_in(&s, st, confirmed);
                    let before = events_of(&s, &th).len();
                    let r = match act {
                        // Extension "x" keeps PV-ID-2 (self-reply) out of this table: the
                        // root was written by (agent-a, empty extension).
                        Act::Post(kind) => post(
                            &s,
                            class.token(),
                            json!({"kind": kind, "body": "b", "thread": th, "from": {"extension": "x"}}),
                        ),
                        Act::Mark(target) => call(
                            &s,
                            Operation::Mark,
                            class.token(),
                            json!({"thread": th, "state": target.as_str()}),
                        ),
                        Act::Reopen => {
                            call(&s, Operation::Reopen, class.token(), json!({"thread": th}))
                        }
                    };
                    let ctx = format!(
                        "{st:?} confirmed={confirmed} {act:?} by {class:?}: {}",
                        r.body
                    );
                    let t = thread_of(&s, &th);
                    let after = events_of(&s, &th).len();
                    match oracle(st, confirmed, act, class) {
                        Err((status, why)) => {
                            assert_eq!(reason(&r), (status, why), "{ctx}");
                            assert_eq!(after, before, "{ctx}");
                            assert_eq!(t["state"], st.as_str(), "{ctx}");
                        }
                        Ok((to, to_confirmed, event)) => {
                            assert!(r.status == 200 || r.status == 201, "{ctx}");
                            assert_eq!(t["state"], to.as_str(), "{ctx}");
                            assert_eq!(t["state_confirmed_at"].is_string(), to_confirmed, "{ctx}");
                            assert_eq!(after, before + usize::from(event), "{ctx}");
                            if let Act::Mark(_) | Act::Reopen = act {
                                assert_eq!(r.body["event"].is_object(), event, "{ctx}");
                            }
                            if event {
                                let e = &events_of(&s, &th)[after - 1];
                                assert_eq!(e["to_state"], to.as_str(), "{ctx}");
                                assert_eq!(
                                    e["origin"],
                                    if class == Class::Human { "user" } else { "llm" },
                                    "{ctx}"
                                );
                                assert_eq!(t["state_origin"], e["origin"], "{ctx}");
                                let label = match class {
                                    Class::Human => "alice",
                                    Class::LockHolder => "KI · mod",
                                    Class::Creator => "ainotes:agent-a",
                                    _ => "ainotes:agent-b",
                                };
                                assert_eq!(e["label"], label, "{ctx}");
                                assert_eq!(t["state_label"], label, "{ctx}");
                                assert_eq!(e["confirmed_at"].is_string(), to_confirmed, "{ctx}");
                            }
                        }
                    }
                    checked += 1;
                }
            }
        }
    }
    assert_eq!(checked, 7 * 2 * 17 * 5);
}

// ---------------------------------------------------------------------------------------
// §10: every reason the service emits, provoked at least once

#[test]
fn every_service_reason_is_emitted() {
    let s = svc();
    let th = open_thread(&s);
    let root = thread_of(&s, &th);
    let _ = root;
    let claim = ok_post(
        &s,
        A,
        json!({"kind": "assert", "body": "X holds", "thread": th, "from": {"extension": "c"}, "evidence": ev()}),
    );
    let cl = claim["claim"]["id"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let mut seen = std::collections::BTreeSet::new();
    let mut expect = |r: Response, status: u16, why: &str| {
        assert_eq!(reason(&r), (status, why), "{}", r.body);
        assert_eq!(r.body["error"]["status"], status);
        assert!(r.body["error"]["message"].is_string());
        assert_eq!(r.body.as_object().map(|o| o.len()), Some(1));
        seen.insert(why.to_string());
    };
    let good = json!({"kind": "inform", "body": "b", "thread": th, "from": {"extension": "z"}});
    expect(
        s.handle(req(Operation::Post, None, good.clone())),
        401,
        "token_missing",
    );
    expect(post(&s, "nope", good.clone()), 401, "token_invalid");
    let mut malformed = req(Operation::Post, None, good.clone());
    malformed.auth = Some(BearerToken::Malformed);
    expect(s.handle(malformed), 401, "token_invalid");
    expect(post(&s, READER, good.clone()), 403, "token_right_missing");
    expect(
        post(&s, B, json!({"kind": "decide", "body": "d", "thread": th})),
        403,
        "thread_authority_missing",
    );
    expect(
        post(
            &s,
            A,
            json!({"kind": "attest", "body": "me", "thread": th, "claim": cl, "evidence": ev()}),
        ),
        403,
        "self_attest",
    );
    expect(
        call(&s, Operation::ReadThread, A, json!({"thread": "th_999"})),
        404,
        "thread_not_found",
    );
    expect(
        post(
            &s,
            B,
            json!({"kind": "inform", "body": "b", "parent": "msg_999"}),
        ),
        404,
        "message_not_found",
    );
    expect(
        call(&s, Operation::ReadClaim, A, json!({"claim": "cl_999"})),
        404,
        "claim_not_found",
    );
    let mut big = req(Operation::Post, Some(B), good.clone());
    big.body_len = 65537;
    expect(s.handle(big), 413, "payload_too_large");
    let mut text = req(Operation::Post, Some(B), good);
    text.content_type = ContentType::NotJson;
    expect(s.handle(text), 415, "unsupported_media_type");
    expect(
        post(
            &s,
            B,
            json!({"kind": "inform", "body": "b", "thread": th, "x": 1}),
        ),
        400,
        "invalid_body",
    );
    expect(
        post(
            &s,
            B,
            json!({"kind": "inform", "body": "é".repeat(501), "thread": th}),
        ),
        400,
        "body_too_long",
    );
    expect(
        post(&s, B, json!({"kind": "shout", "body": "b", "thread": th})),
        400,
        "kind_unknown",
    );
    expect(
        post(&s, B, json!({"kind": "inform", "body": "b"})),
        400,
        "thread_required",
    );
    expect(
        post(
            &s,
            B,
            json!({"kind": "refute", "body": "b", "thread": th, "claim": cl}),
        ),
        400,
        "evidence_required",
    );
    expect(
        post(
            &s,
            B,
            json!({"kind": "refute", "body": "b", "thread": th, "claim": cl, "evidence": [{"kind": "commit", "ref": "zz"}]}),
        ),
        400,
        "evidence_invalid",
    );
    expect(
        call(&s, Operation::Reopen, A, json!({"thread": th})),
        409,
        "invalid_transition",
    );
    expect(
        post(&s, A, json!({"kind": "inform", "body": "b", "thread": th})),
        409,
        "self_reply",
    );
    ok_post(
        &s,
        HUMAN,
        json!({"kind": "close", "body": "done", "thread": th}),
    );
    expect(
        post(
            &s,
            HUMAN,
            json!({"kind": "inform", "body": "b", "thread": th}),
        ),
        409,
        "thread_locked",
    );
    let mut last = None;
    for _ in 0..6 {
        last = Some(post(&s, LIMITED, json!({"kind": "ask", "body": "q"})));
    }
    let limited = last.unwrap_or_else(|| Response::ok(200, Value::Null));
    assert!(
        limited
            .retry_after_secs
            .is_some_and(|s| (1..=60).contains(&s))
    );
    expect(limited, 429, "rate_limited");
    // Every reason of §10 except the binding-level ones.
    let binding_level = ["not_found", "method_not_allowed"];
    for r in crate::domain::parley::Reason::ALL {
        if !binding_level.contains(&r.as_str()) {
            assert!(seen.contains(r.as_str()), "{} never provoked", r.as_str());
        }
    }
}

// ---------------------------------------------------------------------------------------
// PV-AU-6 check order

#[test]
fn check_order() {
    let s = svc();
    let th = open_thread(&s);
    let bad = json!({"kind": "inform", "body": "   ", "thread": th});
    // 401 before everything
    let mut r = req(Operation::Post, None, bad.clone());
    r.body_len = 1 << 20;
    r.content_type = ContentType::NotJson;
    assert_eq!(reason(&s.handle(r)), (401, "token_missing"));
    // 403 right before 400 (reader posting an invalid body)
    assert_eq!(
        reason(&post(&s, READER, bad.clone())),
        (403, "token_right_missing")
    );
    // 403 right before 413/415
    let mut r = req(Operation::Post, Some(READER), bad.clone());
    r.body_len = 1 << 20;
    assert_eq!(reason(&s.handle(r)), (403, "token_right_missing"));
    // verify needs the verify right, read from the kind, before 400
    assert_eq!(
        reason(&post(&s, B, json!({"kind": "verify", "body": " "}))),
        (403, "token_right_missing")
    );
    let mut r = req(Operation::Post, Some(B), Value::Null);
    r.args = Args::Malformed("eof".into());
    assert_eq!(reason(&s.handle(r)), (400, "invalid_body"));
    // 413 before 415 before 400
    let mut r = req(Operation::Post, Some(B), bad.clone());
    r.body_len = 65537;
    r.content_type = ContentType::NotJson;
    assert_eq!(reason(&s.handle(r)), (413, "payload_too_large"));
    let mut r = req(Operation::Post, Some(B), bad);
    r.body_len = 65536;
    r.content_type = ContentType::NotJson;
    assert_eq!(reason(&s.handle(r)), (415, "unsupported_media_type"));
    // 400 before 404
    assert_eq!(
        reason(&post(
            &s,
            B,
            json!({"kind": "inform", "body": "", "thread": "th_999"})
        )),
        (400, "invalid_body")
    );
    // 404 before 403 authority
    assert_eq!(
        reason(&post(
            &s,
            B,
            json!({"kind": "decide", "body": "d", "thread": "th_999"})
        )),
        (404, "thread_not_found")
    );
    assert_eq!(
        reason(&call(
            &s,
            Operation::Mark,
            B,
            json!({"thread": 999, "state": "closed"})
        )),
        (404, "thread_not_found")
    );
    // 403 authority before 409 locked
    ok_post(&s, MOD, json!({"kind": "close", "body": "c", "thread": th}));
    assert_eq!(
        reason(&post(
            &s,
            B,
            json!({"kind": "decide", "body": "d", "thread": th})
        )),
        (403, "thread_authority_missing")
    );
    assert_eq!(
        reason(&call(
            &s,
            Operation::Mark,
            B,
            json!({"thread": th, "state": "closed"})
        )),
        (403, "thread_authority_missing")
    );
    // 409 locked before self_reply
    assert_eq!(
        reason(&post(
            &s,
            A,
            json!({"kind": "inform", "body": "i", "thread": th})
        )),
        (409, "thread_locked")
    );
    // 429 before 400 (over-quota invalid body); refused attempts counted up to the quota
    for i in 0..5 {
        let r = post(&s, LIMITED, json!({"kind": "inform", "body": ""}));
        assert_eq!(reason(&r), (400, "invalid_body"), "attempt {i}");
    }
    let r = post(&s, LIMITED, json!({"kind": "inform", "body": ""}));
    assert_eq!(reason(&r), (429, "rate_limited"));
    // reads are not quota-counted
    assert_eq!(call(&s, Operation::Inbox, LIMITED, json!({})).status, 200);
}

// ---------------------------------------------------------------------------------------
// Envelope over the service (PV-EN)

#[test]
fn envelope_rules() {
    let s = svc();
    let th = open_thread(&s);
    let n = th.trim_start_matches("th_").to_string();
    // PV-EN-2: exactly 500 scalar values accepted (multi-byte), 501 refused
    ok_post(
        &s,
        B,
        json!({"kind": "inform", "body": "😀".repeat(500), "thread": th}),
    );
    assert_eq!(
        reason(&post(
            &s,
            B,
            json!({"kind": "inform", "body": "😀".repeat(501), "thread": th})
        )),
        (400, "body_too_long")
    );
    // PV-EN-5: thread as key, integer, digit string
    let num: i64 = n.parse().unwrap_or_default();
    for t in [json!(th), json!(num), json!(n)] {
        let b = ok_post(&s, B, json!({"kind": "agree", "body": "b", "thread": t}));
        assert_eq!(b["message"]["thread"], th);
    }
    // parent as number; parent without thread → the parent's thread
    let root =
        call(&s, Operation::ReadThread, A, json!({"thread": th})).body["messages"][0]["id"].clone();
    let root_n: i64 = root
        .as_str()
        .unwrap_or_default()
        .trim_start_matches("msg_")
        .parse()
        .unwrap_or_default();
    let b = ok_post(
        &s,
        B,
        json!({"kind": "clarify", "body": "c", "parent": root_n}),
    );
    assert_eq!(b["message"]["thread"], th);
    assert_eq!(b["message"]["parent"], root);
    // parent not in thread → 400
    let other = open_thread(&s);
    assert_eq!(
        reason(&post(
            &s,
            B,
            json!({"kind": "inform", "body": "b", "thread": other, "parent": root})
        )),
        (400, "invalid_body")
    );
    // PV-EN-4: client-sent server fields are ignored, identity cannot be spoofed
    let b = ok_post(
        &s,
        B,
        json!({"kind": "inform", "body": "b", "thread": th, "id": "msg_1", "author_kind": "human", "created_at": "1999-01-01T00:00:00Z", "from": {"identity": "human:alice", "extension": "w1"}}),
    );
    let m = &b["message"];
    assert_eq!(
        m["from"],
        json!({"identity": "ainotes:agent-b", "extension": "w1"})
    );
    assert_eq!(m["author_kind"], "llm");
    assert_ne!(m["id"], "msg_1");
    assert_ne!(m["created_at"], "1999-01-01T00:00:00Z");
    // Message shape (§11)
    let keys: Vec<&str> = m
        .as_object()
        .map(|o| o.keys().map(String::as_str).collect())
        .unwrap_or_default();
    assert_eq!(
        keys,
        [
            "id",
            "thread",
            "parent",
            "kind",
            "from",
            "author_kind",
            "body",
            "provenance",
            "created_at"
        ]
    );
    // unknown fields at every level
    for bad in [
        json!({"kind": "inform", "body": "b", "thread": th, "extra": true}),
        json!({"kind": "inform", "body": "b", "thread": th, "from": {"extension": "w", "role": "x"}}),
        json!({"kind": "inform", "body": "b", "thread": th, "provenance": {"model": "m", "temperature": 1}}),
        json!({"kind": "assert", "body": "b", "thread": th, "evidence": [{"kind": "note", "ref": "r", "weight": 1}]}),
    ] {
        assert_eq!(
            reason(&post(&s, B, bad.clone())),
            (400, "invalid_body"),
            "{bad}"
        );
    }
    // provenance round-trips
    let b = ok_post(
        &s,
        B,
        json!({"kind": "inform", "body": "b", "thread": th, "provenance": {"model": "m1", "client": "c1"}}),
    );
    assert_eq!(
        b["message"]["provenance"],
        json!({"model": "m1", "client": "c1"})
    );
    // PV-EN-6: opening kinds; others need a thread
    assert_eq!(
        reason(&post(&s, B, json!({"kind": "answer", "body": "b"}))),
        (400, "thread_required")
    );
    // PV-RS-3: dialectic members on core kinds
    assert_eq!(
        reason(&post(
            &s,
            B,
            json!({"kind": "inform", "body": "b", "thread": th, "evidence": ev()})
        )),
        (400, "invalid_body")
    );
    // id forms that are not ids
    assert_eq!(
        reason(&post(
            &s,
            B,
            json!({"kind": "inform", "body": "b", "thread": "msg_1"})
        )),
        (400, "invalid_body")
    );
    assert_eq!(
        reason(&call(
            &s,
            Operation::ReadThread,
            A,
            json!({"thread": "abc"})
        )),
        (400, "invalid_body")
    );
    assert_eq!(
        reason(&call(
            &s,
            Operation::ReadThread,
            A,
            json!({"thread": th, "x": 1})
        )),
        (400, "invalid_body")
    );
    assert_eq!(
        reason(&call(
            &s,
            Operation::Mark,
            A,
            json!({"thread": th, "state": "done"})
        )),
        (400, "invalid_body")
    );
    assert_eq!(
        reason(&call(&s, Operation::Mark, A, json!({"thread": th}))),
        (400, "invalid_body")
    );
}

#[test]
fn self_reply_rules() {
    // PV-ID-2
    let s = svc();
    let b = ok_post(
        &s,
        A,
        json!({"kind": "ask", "body": "q", "from": {"extension": "w1"}}),
    );
    let th = b["thread"]["id"].clone();
    let root = b["message"]["id"].clone();
    assert_eq!(
        reason(&post(
            &s,
            A,
            json!({"kind": "inform", "body": "i", "parent": root, "from": {"extension": "w1"}})
        )),
        (409, "self_reply")
    );
    // implicit root parent counts too
    assert_eq!(
        reason(&post(
            &s,
            A,
            json!({"kind": "inform", "body": "i", "thread": th, "from": {"extension": "w1"}})
        )),
        (409, "self_reply")
    );
    // another extension of the same identity may reply; so may the empty extension
    let r2 = ok_post(
        &s,
        A,
        json!({"kind": "inform", "body": "i", "parent": root, "from": {"extension": "w2"}}),
    );
    ok_post(&s, A, json!({"kind": "agree", "body": "i", "parent": root}));
    // ...and w1 may reply to w2
    ok_post(
        &s,
        A,
        json!({"kind": "agree", "body": "i", "parent": r2["message"]["id"], "from": {"extension": "w1"}}),
    );
    // decide and close are exempt
    ok_post(
        &s,
        A,
        json!({"kind": "decide", "body": "d", "parent": root, "from": {"extension": "w1"}}),
    );
    ok_post(
        &s,
        A,
        json!({"kind": "close", "body": "c", "parent": root, "from": {"extension": "w1"}}),
    );
}

// ---------------------------------------------------------------------------------------
// PV-KD-2 awaiting, PV-RD-1 tree, PV-RD-2 events

#[test]
fn awaiting_derivation_and_reading() {
    let s = svc();
    let b = ok_post(
        &s,
        A,
        json!({"kind": "ask", "body": "q", "from": {"extension": "w1"}}),
    );
    let th = b["thread"]["id"].as_str().unwrap_or_default().to_string();
    let root = b["message"]["id"].clone();
    let a_w1 = json!({"identity": "ainotes:agent-a", "extension": "w1"});
    assert_eq!(
        b["thread"]["awaiting"],
        json!({"any": true, "except": a_w1})
    );
    assert_eq!(b["thread"]["state"], "open");
    assert_eq!(b["thread"]["state_origin"], "llm");
    assert_eq!(b["thread"]["state_confirmed_at"], Value::Null);
    assert_eq!(b["thread"]["creator"], a_w1);
    // clarify (awaiting) with a parent → the parent's author
    let c = ok_post(
        &s,
        B,
        json!({"kind": "clarify", "body": "c", "parent": root}),
    );
    assert_eq!(c["thread"]["awaiting"], a_w1);
    // answer (non-awaiting) → null, even though the thread had an awaited party
    let ans = ok_post(
        &s,
        A,
        json!({"kind": "answer", "body": "a", "parent": c["message"]["id"], "from": {"extension": "w1"}}),
    );
    assert_eq!(ans["thread"]["awaiting"], Value::Null);
    assert_eq!(ans["thread"]["state"], "answered");
    // object → the parent's author
    let o = ok_post(
        &s,
        B,
        json!({"kind": "object", "body": "o", "parent": ans["message"]["id"]}),
    );
    assert_eq!(o["thread"]["awaiting"], a_w1);
    // ask inside a thread with only `thread` → the root's author
    let q = ok_post(&s, MOD, json!({"kind": "ask", "body": "q2", "thread": th}));
    assert_eq!(q["thread"]["awaiting"], a_w1);
    // read_thread: nested tree, siblings in creation order
    let r = call(&s, Operation::ReadThread, B, json!({"thread": th}));
    let msgs = &r.body["messages"];
    assert_eq!(msgs.as_array().map(Vec::len), Some(1));
    assert_eq!(msgs[0]["id"], root);
    assert_eq!(msgs[0]["parent"], Value::Null);
    let replies = &msgs[0]["replies"];
    assert_eq!(replies[0]["kind"], "clarify");
    assert_eq!(replies[1]["kind"], "ask");
    assert_eq!(replies[0]["replies"][0]["kind"], "answer");
    assert_eq!(replies[0]["replies"][0]["replies"][0]["kind"], "object");
    assert_eq!(replies[0]["replies"][0]["replies"][0]["replies"], json!([]));
    // events: creation (proposed open) then the proposed answered
    let evs = events_of(&s, &th);
    assert_eq!(evs.len(), 2);
    assert_eq!(evs[0]["from_state"], Value::Null);
    assert_eq!(evs[0]["to_state"], "open");
    assert_eq!(evs[0]["subject"], "thread");
    assert_eq!(evs[0]["claim"], Value::Null);
    assert_eq!(evs[0]["confirmed_at"], Value::Null);
    assert_eq!(evs[1]["from_state"], "open");
    assert_eq!(evs[1]["to_state"], "answered");
    assert_eq!(evs[1]["actor"], a_w1);
    let keys: Vec<&str> = evs[0]
        .as_object()
        .map(|o| o.keys().map(String::as_str).collect())
        .unwrap_or_default();
    assert_eq!(
        keys,
        [
            "id",
            "subject",
            "thread",
            "claim",
            "from_state",
            "to_state",
            "origin",
            "label",
            "actor",
            "at",
            "confirmed_at"
        ]
    );
    // since → only later events
    let since = call(
        &s,
        Operation::ListEvents,
        A,
        json!({"thread": th, "since": evs[0]["id"]}),
    );
    assert_eq!(since.body["events"].as_array().map(Vec::len), Some(1));
    assert_eq!(
        call(
            &s,
            Operation::ListEvents,
            A,
            json!({"thread": th, "since": evs[1]["id"]})
        )
        .body["events"],
        json!([])
    );
    assert_eq!(
        reason(&call(
            &s,
            Operation::ListEvents,
            A,
            json!({"thread": th, "since": "x"})
        )),
        (400, "invalid_body")
    );
    // thread shape
    let tv = thread_of(&s, &th);
    let keys: Vec<&str> = tv
        .as_object()
        .map(|o| o.keys().map(String::as_str).collect())
        .unwrap_or_default();
    assert_eq!(
        keys,
        [
            "id",
            "state",
            "state_origin",
            "state_confirmed_at",
            "state_label",
            "creator",
            "awaiting",
            "created_at",
            "last_activity_at"
        ]
    );
    // a human-opened thread starts confirmed (PV-ST-5)
    let h = ok_post(&s, HUMAN, json!({"kind": "ask", "body": "q"}));
    assert_eq!(h["thread"]["state_origin"], "user");
    assert!(h["thread"]["state_confirmed_at"].is_string());
    assert_eq!(h["message"]["author_kind"], "human");
}

#[test]
fn mark_same_confirmed_state_is_null_event_and_confirmation_rules() {
    // PV-ST-2, PV-ST-5
    let s = svc();
    let th = open_thread(&s);
    let r = call(
        &s,
        Operation::Mark,
        A,
        json!({"thread": th, "state": "open"}),
    );
    assert_eq!(r.status, 200);
    assert_eq!(r.body["event"], Value::Null);
    let r = call(
        &s,
        Operation::Mark,
        MOD,
        json!({"thread": th, "state": "open"}),
    );
    assert_eq!(r.body["event"]["from_state"], "open");
    assert_eq!(r.body["event"]["to_state"], "open");
    assert!(r.body["thread"]["state_confirmed_at"].is_string());
    for who in [A, MOD, HUMAN] {
        let r = call(
            &s,
            Operation::Mark,
            who,
            json!({"thread": th, "state": "open"}),
        );
        assert_eq!(
            (r.status, r.body["event"].clone()),
            (200, Value::Null),
            "{who}"
        );
    }
    // a proposal on a confirmed state replaces it with a proposal
    let r = call(
        &s,
        Operation::Mark,
        A,
        json!({"thread": th, "state": "decided"}),
    );
    assert_eq!(r.body["thread"]["state_confirmed_at"], Value::Null);
    // proposed closed does not lock; posts still accepted
    call(
        &s,
        Operation::Mark,
        A,
        json!({"thread": th, "state": "closed"}),
    );
    ok_post(
        &s,
        B,
        json!({"kind": "inform", "body": "still open for talk", "thread": th}),
    );
    // human confirms → locked for everyone incl. the human; reopen by the creator unlocks
    let r = call(
        &s,
        Operation::Mark,
        HUMAN,
        json!({"thread": th, "state": "closed"}),
    );
    assert_eq!(r.body["thread"]["state_origin"], "user");
    assert_eq!(
        reason(&post(
            &s,
            HUMAN,
            json!({"kind": "inform", "body": "x", "thread": th})
        )),
        (409, "thread_locked")
    );
    let r = call(&s, Operation::Reopen, A, json!({"thread": th}));
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["thread"]["state"], "open");
    assert_eq!(r.body["thread"]["state_confirmed_at"], Value::Null);
    ok_post(
        &s,
        B,
        json!({"kind": "inform", "body": "back", "thread": th}),
    );
}

// ---------------------------------------------------------------------------------------
// PV-RD-3 inbox

#[test]
fn inbox_semantics_and_cursor() {
    let s = svc();
    let items = |token: &str, args: Value| -> (Vec<Value>, String) {
        let r = call(&s, Operation::Inbox, token, args);
        assert_eq!(r.status, 200, "{}", r.body);
        (
            r.body["items"].as_array().cloned().unwrap_or_default(),
            r.body["cursor"].as_str().unwrap_or_default().to_string(),
        )
    };
    let t1 = ok_post(
        &s,
        A,
        json!({"kind": "ask", "body": "q1", "from": {"extension": "w1"}}),
    );
    let th1 = t1["thread"]["id"].clone();
    let t2 = ok_post(&s, B, json!({"kind": "ask", "body": "q2"}));
    let th2 = t2["thread"]["id"].clone();
    // B sees th1 (any except a/w1) but not its own th2
    let (it, _) = items(B, json!({}));
    assert_eq!(
        it.iter().map(|i| i["thread"].clone()).collect::<Vec<_>>(),
        vec![th1.clone()]
    );
    let keys: Vec<&str> = it[0]
        .as_object()
        .map(|o| o.keys().map(String::as_str).collect())
        .unwrap_or_default();
    assert!(
        ["thread", "state", "awaiting", "last_message"]
            .iter()
            .all(|k| keys.contains(k))
    );
    assert_eq!(it[0]["last_message"]["body"], "q1");
    // A without extension is the party (a, empty) ≠ (a, w1): sees both, oldest activity first
    let (it, _) = items(A, json!({}));
    assert_eq!(
        it.iter().map(|i| i["thread"].clone()).collect::<Vec<_>>(),
        vec![th1.clone(), th2.clone()]
    );
    // A with extension w1: its own thread is hidden
    let (it, _) = items(A, json!({"extension": "w1"}));
    assert_eq!(
        it.iter().map(|i| i["thread"].clone()).collect::<Vec<_>>(),
        vec![th2.clone()]
    );
    // B clarifies on th1 → awaits a/w1: A with w2 does not see it, with w1 and without ext does
    ok_post(
        &s,
        B,
        json!({"kind": "clarify", "body": "c", "thread": th1}),
    );
    let ids = |it: Vec<Value>| it.iter().map(|i| i["thread"].clone()).collect::<Vec<_>>();
    assert!(!ids(items(A, json!({"extension": "w2"})).0).contains(&th1));
    assert!(ids(items(A, json!({"extension": "w1"})).0).contains(&th1));
    assert!(ids(items(A, json!({})).0).contains(&th1));
    assert!(
        !ids(items(MOD, json!({})).0).contains(&th1),
        "awaits a party, not anyone"
    );
    // cursor: repeating with the returned cursor and no new activity returns nothing
    let (it, cursor) = items(MOD, json!({}));
    assert_eq!(ids(it), vec![th2]);
    let (it, cursor2) = items(MOD, json!({"since": cursor}));
    assert!(it.is_empty());
    assert_eq!(cursor2, cursor);
    // new activity on th2 (an inform by a third party keeps awaiting? no: inform → null)
    ok_post(&s, HUMAN, json!({"kind": "ask", "body": "q3"}));
    let (it, _) = items(MOD, json!({"since": cursor}));
    assert_eq!(it.len(), 1);
    assert_eq!(it[0]["last_message"]["body"], "q3");
    // paging with limit: no loss, no repeats
    let s2 = svc();
    let mut expected = Vec::new();
    for i in 0..7 {
        expected.push(
            ok_post(&s2, A, json!({"kind": "ask", "body": format!("q{i}")}))["thread"]["id"]
                .clone(),
        );
    }
    let mut got = Vec::new();
    let mut since = String::new();
    for _ in 0..10 {
        let r = call(
            &s2,
            Operation::Inbox,
            B,
            json!({"limit": "3", "since": since}),
        );
        let page = r.body["items"].as_array().cloned().unwrap_or_default();
        assert!(page.len() <= 3);
        if page.is_empty() {
            break;
        }
        got.extend(page.iter().map(|i| i["thread"].clone()));
        since = r.body["cursor"].as_str().unwrap_or_default().to_string();
    }
    assert_eq!(got, expected);
    // locked and lateral threads are hidden
    ok_post(
        &s2,
        MOD,
        json!({"kind": "close", "body": "c", "thread": expected[0]}),
    );
    call(
        &s2,
        Operation::Mark,
        A,
        json!({"thread": expected[1], "state": "deferred"}),
    );
    let r = call(&s2, Operation::Inbox, B, json!({"limit": 200}));
    let got: Vec<Value> = r.body["items"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|i| i["thread"].clone())
        .collect();
    assert!(
        !got.contains(&expected[0]) && !got.contains(&expected[1]) && got.contains(&expected[2])
    );
    // limit validation
    assert_eq!(
        reason(&call(&s2, Operation::Inbox, B, json!({"limit": 0}))),
        (400, "invalid_body")
    );
    assert_eq!(
        reason(&call(&s2, Operation::Inbox, B, json!({"limit": "lots"}))),
        (400, "invalid_body")
    );
    assert_eq!(
        call(&s2, Operation::Inbox, B, json!({"limit": 1000})).status,
        200
    );
    assert_eq!(
        reason(&call(&s2, Operation::Inbox, B, json!({"since": "garbage"}))),
        (400, "invalid_body")
    );
}

// ---------------------------------------------------------------------------------------
// PV-DI dialectic

#[test]
fn dialectic_lifecycle() {
    let s = svc();
    // assert opens a thread, awaits anyone but the author
    let a = ok_post(
        &s,
        A,
        json!({"kind": "assert", "body": "X holds", "evidence": ev(), "valid_until": "2999-01-01T00:00:00Z"}),
    );
    let th = a["thread"]["id"].clone();
    let cl = a["claim"]["id"].clone();
    assert_eq!(a["message"]["claim"], cl);
    assert_eq!(a["message"]["evidence"], ev());
    assert_eq!(a["claim"]["status"], "unverified");
    assert_eq!(a["claim"]["expired"], false);
    assert_eq!(a["claim"]["valid_until"], "2999-01-01T00:00:00Z");
    assert_eq!(a["thread"]["awaiting"]["any"], true);
    let keys: Vec<&str> = a["claim"]
        .as_object()
        .map(|o| o.keys().map(String::as_str).collect())
        .unwrap_or_default();
    for k in [
        "id",
        "thread",
        "message",
        "author",
        "status",
        "support",
        "evidence",
        "attestations",
        "refutations",
        "supersedes",
        "superseded_by",
        "valid_until",
        "expired",
    ] {
        assert!(keys.contains(&k), "claim lacks {k}");
    }
    // attest by the author → 403 self_attest (any extension); by B → supported
    assert_eq!(
        reason(&post(
            &s,
            A,
            json!({"kind": "attest", "body": "me", "thread": th, "claim": cl, "evidence": ev(), "from": {"extension": "other"}})
        )),
        (403, "self_attest")
    );
    let at = ok_post(
        &s,
        B,
        json!({"kind": "attest", "body": "yes", "thread": th, "claim": cl, "evidence": ev()}),
    );
    assert_eq!(at["claim"]["status"], "supported");
    assert_eq!(at["claim"]["support"], 1);
    assert_eq!(at["thread"]["awaiting"], Value::Null);
    let at2 = ok_post(
        &s,
        MOD,
        json!({"kind": "attest", "body": "yes", "thread": th, "claim": cl, "evidence": ev()}),
    );
    assert_eq!(
        (
            at2["claim"]["status"].clone(),
            at2["claim"]["support"].clone()
        ),
        (json!("supported"), json!(2))
    );
    // verify: needs the verify right (B lacks it), not by the author, → verified, no support
    assert_eq!(
        reason(&post(
            &s,
            B,
            json!({"kind": "verify", "body": "v", "thread": th, "claim": cl, "evidence": ev()})
        )),
        (403, "token_right_missing")
    );
    let v = ok_post(
        &s,
        VERIFIER,
        json!({"kind": "verify", "body": "v", "thread": th, "claim": cl, "evidence": ev()}),
    );
    assert_eq!(
        (v["claim"]["status"].clone(), v["claim"]["support"].clone()),
        (json!("verified"), json!(2))
    );
    // refute works on verified; awaits the claim's author
    let rf = ok_post(
        &s,
        B,
        json!({"kind": "refute", "body": "no", "parent": v["message"]["id"], "claim": cl, "evidence": ev()}),
    );
    assert_eq!(rf["claim"]["status"], "refuted");
    assert_eq!(
        rf["thread"]["awaiting"],
        json!({"identity": "ainotes:agent-a", "extension": null})
    );
    assert_eq!(rf["claim"]["refutations"].as_array().map(Vec::len), Some(1));
    // nothing leaves refuted
    assert_eq!(
        reason(&post(
            &s,
            MOD,
            json!({"kind": "attest", "body": "y", "thread": th, "claim": cl, "evidence": ev()})
        )),
        (409, "invalid_transition")
    );
    assert_eq!(
        reason(&post(
            &s,
            HUMAN,
            json!({"kind": "verify", "body": "y", "thread": th, "claim": cl, "evidence": ev()})
        )),
        (409, "invalid_transition")
    );
    let c = call(&s, Operation::ReadClaim, B, json!({"claim": cl}));
    assert_eq!(c.body["status"], "refuted");
    // 403 self_attest comes before 409 (PV-AU-6), and the human verifies without a
    // listed verify right (PV-AU-4) — here refused only by the claim state.
    assert_eq!(
        reason(&post(
            &s,
            A,
            json!({"kind": "attest", "body": "y", "thread": th, "claim": cl, "evidence": ev(), "from": {"extension": "q"}})
        )),
        (403, "self_attest")
    );
    // verify right is checked before 404 (the kind is read at the 403-right step)
    assert_eq!(
        reason(&post(
            &s,
            B,
            json!({"kind": "verify", "body": "v", "thread": "th_999", "claim": "cl_999", "evidence": ev()})
        )),
        (403, "token_right_missing")
    );
    // claim events, subject "claim"
    let claim_events: Vec<Value> = events_of(&s, th.as_str().unwrap_or_default())
        .into_iter()
        .filter(|e| e["subject"] == "claim")
        .collect();
    let tos: Vec<&str> = claim_events
        .iter()
        .filter_map(|e| e["to_state"].as_str())
        .collect();
    assert_eq!(tos, ["unverified", "supported", "verified", "refuted"]);
    assert_eq!(claim_events[1]["claim"], cl);
    // read_claim 404 and forms
    assert_eq!(
        reason(&call(
            &s,
            Operation::ReadClaim,
            B,
            json!({"claim": "cl_404"})
        )),
        (404, "claim_not_found")
    );
    let n = cl
        .as_str()
        .unwrap_or_default()
        .trim_start_matches("cl_")
        .to_string();
    assert_eq!(
        call(&s, Operation::ReadClaim, B, json!({"claim": n})).status,
        200
    );
}

#[test]
fn supersede_rules() {
    // PV-DI-6
    let s = svc();
    let a1 = ok_post(
        &s,
        A,
        json!({"kind": "assert", "body": "v1", "evidence": ev()}),
    );
    let th = a1["thread"]["id"].clone();
    let cl1 = a1["claim"]["id"].clone();
    let b1 = ok_post(
        &s,
        B,
        json!({"kind": "assert", "body": "b's", "thread": th, "evidence": ev()}),
    );
    let clb = b1["claim"]["id"].clone();
    // A cannot supersede B's claim
    assert_eq!(
        reason(&post(
            &s,
            A,
            json!({"kind": "assert", "body": "v2", "thread": th, "evidence": ev(), "supersedes": [clb], "from": {"extension": "z"}})
        )),
        (403, "thread_authority_missing")
    );
    assert_eq!(
        reason(&post(
            &s,
            A,
            json!({"kind": "assert", "body": "v2", "thread": th, "evidence": ev(), "supersedes": ["cl_999"], "from": {"extension": "z"}})
        )),
        (404, "claim_not_found")
    );
    // A supersedes its own claim
    let a2 = ok_post(
        &s,
        A,
        json!({"kind": "assert", "body": "v2", "thread": th, "evidence": ev(), "supersedes": [cl1], "from": {"extension": "z"}}),
    );
    let cl2 = a2["claim"]["id"].clone();
    assert_eq!(a2["claim"]["supersedes"], json!([cl1]));
    let old = call(&s, Operation::ReadClaim, A, json!({"claim": cl1})).body;
    assert_eq!(
        (old["status"].clone(), old["superseded_by"].clone()),
        (json!("superseded"), cl2.clone())
    );
    assert_eq!(
        reason(&post(
            &s,
            B,
            json!({"kind": "attest", "body": "y", "thread": th, "claim": cl1, "evidence": ev()})
        )),
        (409, "invalid_transition")
    );
    assert_eq!(
        reason(&post(
            &s,
            B,
            json!({"kind": "refute", "body": "y", "thread": th, "claim": cl1, "evidence": ev()})
        )),
        (409, "invalid_transition")
    );
    // refuted claims stay refuted; the moderator may supersede anyone's
    ok_post(
        &s,
        A,
        json!({"kind": "refute", "body": "no", "thread": th, "claim": clb, "evidence": ev(), "from": {"extension": "r"}}),
    );
    ok_post(
        &s,
        MOD,
        json!({"kind": "assert", "body": "m", "thread": th, "evidence": ev(), "supersedes": [clb, cl2]}),
    );
    assert_eq!(
        call(&s, Operation::ReadClaim, A, json!({"claim": clb})).body["status"],
        "refuted"
    );
    assert_eq!(
        call(&s, Operation::ReadClaim, A, json!({"claim": cl2})).body["status"],
        "superseded"
    );
    // valid_until in the past → 400; expired flag computed from the clock
    assert_eq!(
        reason(&post(
            &s,
            A,
            json!({"kind": "assert", "body": "old", "evidence": ev(), "valid_until": "2001-01-01T00:00:00Z"})
        )),
        (400, "invalid_body")
    );
    let t = chrono::DateTime::parse_from_rfc3339("2030-01-01T00:00:00Z")
        .map(|t| t.with_timezone(&chrono::Utc))
        .unwrap_or_default();
    assert!(render::expired(Some("2029-12-31T23:59:59Z"), t));
    assert!(!render::expired(Some("2030-01-01T00:00:01Z"), t));
    assert!(!render::expired(None, t));
}

// ---------------------------------------------------------------------------------------
// whoami, manifest, system read, durability

#[test]
fn whoami_manifest_and_system_read() {
    let s = svc();
    let w = call(&s, Operation::Whoami, MOD, json!({}));
    assert_eq!(
        w.body,
        json!({"identity": "ainotes:moderator", "author_kind": "llm", "rights": ["read", "write", "lock"], "lock_label": "mod", "quota_per_minute": 6000})
    );
    let w = call(&s, Operation::Whoami, LIMITED, Value::Null);
    assert_eq!(w.body["quota_per_minute"], 5);
    let w = call(&s, Operation::Whoami, HUMAN, json!({}));
    assert_eq!(
        (w.body["author_kind"].clone(), w.body["rights"].clone()),
        (json!("human"), json!(["read", "write", "lock", "verify"]))
    );
    assert_eq!(
        reason(&s.handle(req(Operation::Whoami, None, json!({})))),
        (401, "token_missing")
    );
    // get_manifest needs no token
    let m = s.handle(req(Operation::GetManifest, None, Value::Null));
    assert_eq!(m.status, 200);
    assert_eq!(m.body, s.manifest());
    assert_eq!(m.body["profiles"][0]["name"], "dialectic");
    // system read
    let th = open_thread(&s);
    let sys = s.read_thread_as_system(&th);
    assert_eq!(
        sys.body,
        call(&s, Operation::ReadThread, A, json!({"thread": th})).body
    );
    assert_eq!(
        reason(&s.read_thread_as_system("th_999")),
        (404, "thread_not_found")
    );
    // reads need read
    let db = Db::open(Path::new(":memory:")).expect("db");
    let mut rows = Config::demo_in_memory().tokens;
    rows.push(crate::config::TokenRow {
        token: "w-only".into(),
        identity: "ainotes:w".into(),
        rights: vec![crate::config::Right::Write],
        lock_label: None,
        quota_per_minute: None,
    });
    let s2 = ParleyService::new(db, rows);
    assert_eq!(
        reason(&call(&s2, Operation::Inbox, "w-only", json!({}))),
        (403, "token_right_missing")
    );
    assert_eq!(
        call(&s2, Operation::Whoami, "w-only", json!({})).status,
        200
    );
}

#[test]
fn ids_unique_across_restart() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("parley.db");
    let tokens = Config::demo_in_memory().tokens;
    let first = {
        let s = ParleyService::new(Db::open(&path).expect("db"), tokens.clone());
        ok_post(&s, A, json!({"kind": "ask", "body": "q"}))
    };
    let s = ParleyService::new(Db::open(&path).expect("db"), tokens);
    let th = first["thread"]["id"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert_eq!(thread_of(&s, &th)["id"], th);
    let second = ok_post(&s, A, json!({"kind": "ask", "body": "q"}));
    assert_ne!(second["thread"]["id"], first["thread"]["id"]);
    assert_ne!(second["message"]["id"], first["message"]["id"]);
}

#[test]
fn reply_depth_limit_keeps_bodies_parseable() {
    // limits.reply_depth_max (reference addition, declared in the manifest, PV-MF-2).
    let s = svc();
    let max = s.manifest()["limits"]["reply_depth_max"].as_u64().unwrap() as usize;
    let b = ok_post(&s, A, json!({"kind": "ask", "body": "q"}));
    let th = b["thread"]["id"].as_str().unwrap().to_string();
    let mut parent = b["message"]["id"].clone();
    for i in 0..max {
        let who = if i.is_multiple_of(2) { B } else { A };
        let r = ok_post(
            &s,
            who,
            json!({"kind": "inform", "body": "x", "parent": parent}),
        );
        parent = r["message"]["id"].clone();
    }
    let who = if max.is_multiple_of(2) { B } else { A };
    let r = post(
        &s,
        who,
        json!({"kind": "inform", "body": "x", "parent": parent}),
    );
    assert_eq!(reason(&r), (400, "invalid_body"), "{}", r.body);
    // The deepest thread still parses with serde_json's default 128-level limit, also
    // wrapped in a JSON-RPC result (+3 levels: response, result, structuredContent).
    let body = s.read_thread_as_system(&th).body.into_value();
    let wrapped = json!({"jsonrpc": "2.0", "id": 1, "result": {"structuredContent": body}});
    let text = serde_json::to_string(&wrapped).unwrap();
    assert!(serde_json::from_str::<Value>(&text).is_ok());
}

/// The renderers before `render::MessageOut`/`ThreadOut` (`json!`, member by member): the
/// oracle the text written from the rows is compared with (PV-RS-2).
fn oracle_message(m: &crate::store::parley::MessageRow) -> Value {
    let mut v = json!({
        "id": format!("msg_{}", m.id),
        "thread": format!("th_{}", m.thread_id),
        "parent": m.parent_id.map(|p| format!("msg_{p}")),
        "kind": m.kind,
        "from": {"identity": m.author.identity, "extension": m.author.extension},
        "author_kind": m.author_kind,
        "body": m.body,
        "provenance": m.provenance,
        "created_at": m.created_at,
    });
    if m.kind == "assert" {
        v["evidence"] = json!(m.evidence.clone().unwrap_or_default());
        v["claim"] = json!(m.claim_id.map(|c| format!("cl_{c}")));
    }
    v
}

fn oracle_thread(t: &crate::store::parley::ThreadRow) -> Value {
    json!({
        "id": format!("th_{}", t.id),
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

/// A thread's row and its messages' rows, as stored.
fn rows_of(
    s: &ParleyService,
    th: &str,
) -> (
    crate::store::parley::ThreadRow,
    Vec<crate::store::parley::MessageRow>,
) {
    use crate::domain::parley::ids::{IdKind, parse_id};
    let id = parse_id(IdKind::Thread, &json!(th)).unwrap();
    s.inner
        .db
        .read(|conn| {
            let t = crate::store::parley::get_thread(conn, id)?.unwrap();
            let m = crate::store::parley::thread_messages(conn, id)?;
            Ok::<_, crate::store::StoreError>((t, m))
        })
        .unwrap()
}

/// `read_thread` and a plain post's 201 body are written straight from the rows unless a
/// seeded fault edits them (`render::thread_read`, `render::post_created`): the text must be
/// what the renderers of values wrote before, member for member (nested replies, a reply to
/// an earlier sibling, dialectic members, extensions, provenance).
#[test]
fn bodies_written_from_rows_match_the_renderers_they_replace() {
    let s = svc();
    let th = open_thread(&s);
    let first = ok_post(
        &s,
        B,
        json!({"kind": "answer", "body": "X is \"quoted\" ✓", "thread": th,
               "from": {"extension": "e1"}, "provenance": {"model": "m-1", "client": "c"}}),
    );
    let m1 = first["message"]["id"].clone();
    ok_post(
        &s,
        A,
        json!({"kind": "inform", "body": "deeper", "parent": m1}),
    );
    ok_post(
        &s,
        B,
        json!({"kind": "assert", "body": "X holds", "thread": th, "evidence": ev()}),
    );
    let r = call(&s, Operation::ReadThread, A, json!({"thread": th}));
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(
        matches!(r.body, Body::Encoded { .. }),
        "written from the rows"
    );
    let (t, messages) = rows_of(&s, &th);
    assert_eq!(messages.len(), 4);
    // Member for member, against the oracle: the root, its first reply with that reply's
    // reply, then its second reply (siblings in creation order, PV-RD-1).
    let node = |i: usize, replies: Vec<Value>| {
        let mut v = oracle_message(&messages[i]);
        v["replies"] = Value::Array(replies);
        v
    };
    let tree = json!([node(
        0,
        vec![node(1, vec![node(2, vec![])]), node(3, vec![])]
    )]);
    let oracle = json!({"thread": oracle_thread(&t), "messages": tree});
    assert_eq!(r.body.to_string(), oracle.to_string());
    assert_eq!(messages[2].body, "deeper");
    assert_eq!(messages[3].kind, "assert");
    // A plain post's 201 body.
    let created = post(
        &s,
        A,
        json!({"kind": "inform", "body": "last", "parent": format!("msg_{}", messages[1].id)}),
    );
    assert_eq!(created.status, 201, "{}", created.body);
    assert!(matches!(created.body, Body::Encoded { .. }));
    let (t, messages) = rows_of(&s, &th);
    let last = messages.last().unwrap();
    let oracle = json!({"message": oracle_message(last), "thread": oracle_thread(&t)});
    assert_eq!(created.body.to_string(), oracle.to_string());
}
