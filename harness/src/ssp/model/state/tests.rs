//! The rule book on small hand-written worlds and sequences: each prediction accepts
//! what the notes allow and refuses a breach, on the right rule IDs.
use super::*;
use crate::ssp::model::lifecycle::Track;
use crate::ssp::model::ops::Op;
use ExecutionStatus::{Completed, Failed, Running, Timeout as T};

fn skill(
    id: &str,
    cap: CapabilityType,
    access: AccessPolicy,
    auth: AuthType,
    timeout: f64,
) -> Skill {
    Skill {
        id: id.into(),
        capability: cap,
        access,
        auth,
        timeout_ms: Some(timeout),
        endpoint: format!("http://p/invoke/{id}"),
        method: "POST".into(),
        status_url: Some("http://p/status/{execution_id}".into()),
        result_url: Some("http://p/result/{execution_id}".into()),
        descriptor_url: format!("http://p/skills/{id}.json"),
        header: (auth == AuthType::ApiKey).then(|| "X-API-Key".into()),
        name_version: (id.into(), "1.0.0".into()),
        inputs: vec![("message".into(), true)],
    }
}

/// echo (public, none, instant), task (restricted, api_key, slow), digest (private,
/// oauth2), overrun (public, none, 200 ms).
fn world() -> World {
    use AccessPolicy::*;
    use CapabilityType::*;
    let skills = vec![
        skill("echo", Api, Public, AuthType::None, 5000.0),
        skill("task", Task, Restricted, AuthType::ApiKey, 15000.0),
        skill("digest", Plugin, Private, AuthType::Oauth2, 5000.0),
        skill("overrun", Task, Public, AuthType::None, 200.0),
    ];
    let unit = |skill, lifecycle| Unit {
        skill,
        role: "r".into(),
        inputs: Map::from_iter([("message".to_string(), json!("hi"))]),
        lifecycle,
    };
    let units = vec![
        unit(0, Some(Lifecycle::Instant)),
        unit(1, Some(Lifecycle::Slow)),
        unit(2, None),
        unit(3, Some(Lifecycle::Overrun)),
    ];
    let callers = vec![
        Caller::Anonymous,
        Caller::ApiKey { limited: false },
        Caller::ApiKey { limited: true },
        Caller::Oauth2 { limited: false },
        Caller::Wrong,
    ];
    let all: BTreeSet<String> = ["echo", "task", "digest", "overrun"]
        .map(String::from)
        .into();
    let seen = vec![None, Some(all.clone()), Some(all.clone()), Some(all), None];
    World::new(skills, units, callers, seen)
}

fn ids(v: &[&str]) -> BTreeSet<String> {
    v.iter().map(|s| (*s).to_string()).collect()
}

fn err(status: u16, code: &str) -> Value {
    json!({"error": {"code": code, "message": format!("HTTP {status}")}})
}

#[test]
fn discovery_hides_private_from_anonymous_and_filters_exactly() {
    let w = world();
    let anon = discovery(&w, 0, Filter::None);
    assert_eq!(anon.exactly, Some(ids(&["echo", "overrun", "task"])));
    let e = judge_index(
        &w,
        0,
        Filter::None,
        anon.exactly.as_ref(),
        &ids(&["echo", "overrun", "task", "digest"]),
    );
    assert_eq!(e.map_err(|m| m.rules), Err(vec!["SSP-DISC-2".to_string()]));
    // A credential's filtered view: its matching entries; a private one may be listed
    // or omitted (seed §4.4: "PEUVENT être incluses"), never judged.
    let plug = discovery(&w, 1, Filter::Capability(CapabilityType::Plugin, true));
    assert_eq!(plug.exactly, Some(ids(&["digest"])));
    for got in [BTreeSet::new(), ids(&["digest"])] {
        let e = judge_index(
            &w,
            1,
            Filter::Capability(CapabilityType::Plugin, true),
            plug.exactly.as_ref(),
            &got,
        );
        assert!(e.is_ok(), "{got:?}");
    }
    // The public and restricted entries are never optional (SSP-DISC-2/3).
    let all = discovery(&w, 1, Filter::None);
    let e = judge_index(
        &w,
        1,
        Filter::None,
        all.exactly.as_ref(),
        &ids(&["echo", "digest"]),
    );
    assert_eq!(e.map_err(|m| m.rules), Err(vec!["SSP-DISC-2".to_string()]));
    // Unknown filter: 400 VALIDATION_ERROR or an empty 200.
    let unknown = discovery(&w, 0, Filter::Unknown);
    assert!(unknown.empty_ok && unknown.refusals.contains(&INVALID));
    assert!(
        check_error(
            400,
            Some(&err(400, "VALIDATION_ERROR")),
            &unknown.refusals,
            &["SSP-DISC-3"],
            "x"
        )
        .is_ok()
    );
    // A wrong credential: refused 401 or treated as anonymous.
    let wrong = discovery(&w, 4, Filter::None);
    assert_eq!(wrong.exactly, anon.exactly);
    assert!(wrong.refusals.contains(&AUTH_REQUIRED));
}

/// A credential whose index left out a public skill when the run began is still held
/// to list it, unfiltered and filtered (SSP-DISC-2: anonymous ⊆ authenticated).
#[test]
fn a_credential_sees_every_public_and_restricted_skill_under_every_filter() {
    let mut w = world();
    w.seen[1] = Some(ids(&["task", "digest", "overrun"]));
    let all = discovery(&w, 1, Filter::None);
    assert_eq!(
        all.exactly,
        Some(ids(&["digest", "echo", "overrun", "task"]))
    );
    let api = Filter::Capability(CapabilityType::Api, true);
    let d = discovery(&w, 1, api);
    assert_eq!(d.exactly, Some(ids(&["echo"])));
    let e = judge_index(&w, 1, api, d.exactly.as_ref(), &BTreeSet::new());
    assert_eq!(e.map_err(|m| m.rules), Err(vec!["SSP-DISC-3".to_string()]));
    // A private skill it did not see stays out of what it must list.
    w.seen[1] = Some(ids(&["echo", "task", "overrun"]));
    let plug = Filter::Capability(CapabilityType::Plugin, true);
    assert_eq!(discovery(&w, 1, plug).exactly, Some(BTreeSet::new()));
}

#[test]
fn private_descriptor_needs_credentials_401_or_404() {
    let w = world();
    let Read::Refuse(allowed) = descriptor(&w, 0, 2) else {
        panic!("anonymous must be refused")
    };
    assert!(
        check_error(
            401,
            Some(&err(401, "AUTH_REQUIRED")),
            &allowed,
            &["SSP-DISC-4"],
            "d"
        )
        .is_ok()
    );
    assert!(
        check_error(
            404,
            Some(&err(404, "SKILL_NOT_FOUND")),
            &allowed,
            &["SSP-DISC-4"],
            "d"
        )
        .is_ok()
    );
    // SSP-ERR-3: a code outside the seven fails, whatever the status.
    let e = check_error(
        404,
        Some(&err(404, "NOT_HERE")),
        &allowed,
        &["SSP-DISC-4"],
        "d",
    );
    assert_eq!(e.map_err(|m| m.rules), Err(vec!["SSP-ERR-3".to_string()]));
    let e = check_error(
        200,
        Some(&json!({"id": "digest"})),
        &allowed,
        &["SSP-DISC-4"],
        "d",
    );
    assert_eq!(e.map_err(|m| m.rules), Err(vec!["SSP-DISC-4".to_string()]));
    assert_eq!(
        descriptor(&w, 3, 2),
        Read::Ok,
        "listed to oauth2 at the start"
    );
    assert_eq!(descriptor(&w, 0, 1), Read::Ok, "restricted is readable");
}

#[test]
fn invocation_auth_predictions_refuse_breaches() {
    let w = world();
    assert_eq!(
        invoke(&w, 0, 0, Timeout::Absent),
        Invoke::Accept,
        "SSP-AUTH-1"
    );
    let Invoke::Refuse(l, rules) = invoke(&w, 0, 1, Timeout::Absent) else {
        panic!()
    };
    assert_eq!(l, vec![AUTH_REQUIRED]);
    let e = check_error(202, None, &l, rules, "invoke");
    assert!(e.is_err_and(|m| m.rules.iter().any(|r| r == "SSP-AUTH-2")));
    let Invoke::Refuse(l, rules) = invoke(&w, 2, 1, Timeout::Absent) else {
        panic!()
    };
    assert_eq!(l, vec![PERMISSION_DENIED], "valid key without permission");
    assert!(check_error(401, Some(&err(401, "AUTH_REQUIRED")), &l, rules, "i").is_err());
    // Private: 401 or 404; the api key (another scheme) is not an oauth2 credential.
    let Invoke::Refuse(l, _) = invoke(&w, 1, 2, Timeout::Absent) else {
        panic!()
    };
    assert_eq!(l, vec![AUTH_REQUIRED, HIDDEN]);
    // A string timeout breaks the schema; 0 or negative may be refused or accepted.
    assert_eq!(
        invoke(&w, 0, 0, Timeout::Text),
        Invoke::Refuse(vec![INVALID], INV2)
    );
    assert!(matches!(
        invoke(&w, 0, 0, Timeout::Odd(0.0)),
        Invoke::Either(..)
    ));
    assert_eq!(invalid(Invalid::OtherSkill(1)), vec![NOT_FOUND]);
    assert!(
        !invalid_applies(&w, 0, Invalid::OtherSkill(0)),
        "its own id is no foreign id"
    );
}

#[test]
fn errors_need_the_unified_shape_and_the_seed_status() {
    let (hidden, any) = ([HIDDEN], [INVALID]);
    // (status, body, allowed, the step's rules, the rule broken, why)
    let breaches = [
        (
            404,
            json!({"error": {"code": "X"}}),
            &hidden,
            "SSP-INV-6",
            "SSP-ERR-1",
            "message is required",
        ),
        (
            404,
            json!({"error": {"code": "X", "message": "m", "retry": {"max_attempts": 1}}}),
            &hidden,
            "SSP-INV-6",
            "SSP-ERR-1",
            "retry needs both members",
        ),
        (
            400,
            err(400, "SKILL_NOT_FOUND"),
            &any,
            "SSP-INV-2",
            "SSP-ERR-2",
            "SKILL_NOT_FOUND is a 404",
        ),
        (
            400,
            err(400, "MY_OWN_CODE"),
            &any,
            "SSP-INV-2",
            "SSP-ERR-3",
            "a code outside the seven",
        ),
    ];
    for (status, body, allowed, cites, broken, why) in breaches {
        let e = check_error(status, Some(&body), allowed, &[cites], "r");
        assert_eq!(
            e.map_err(|m| m.rules),
            Err(vec![broken.to_string()]),
            "{why}"
        );
    }
    // Another of the seven where the table names VALIDATION_ERROR: a warning.
    let e = check_error(
        409,
        Some(&err(409, "SKILL_NOT_FOUND")),
        &[refuse(409, Condition::Invalid)],
        &["SSP-INV-4"],
        "r",
    );
    assert!(e.is_ok_and(|j| j.warning.is_some()));
}

fn answer(id: &str, status: &str, created: &str, updated: &str, done: bool) -> Value {
    let mut v = json!({"execution_id": id, "status": status, "skill_id": "echo",
        "timestamps": {"created_at": created, "updated_at": updated}});
    if done {
        v["timestamps"]["completed_at"] = json!(updated);
    }
    match status {
        "completed" => v["output"] = json!({"echo": "hi"}),
        "failed" => {
            v["error"] = json!({"code": "ENDPOINT_UNREACHABLE", "message": "m"});
        }
        "timeout" => {
            v["error"] = json!({"code": "INVOCATION_TIMEOUT", "message": "m",
                "details": {"timeout_ms": 20, "execution_id": id},
                "retry": {"suggested_delay_ms": 0, "max_attempts": 1}});
        }
        _ => {}
    }
    v
}

const T0: &str = "2026-01-01T00:00:00.000Z";
const T1: &str = "2026-01-01T00:00:00.100Z";
const T2: &str = "2026-01-01T00:00:00.200Z";

fn instant_exec() -> (World, Exec, Track) {
    let mut w = world();
    let n = create(&mut w, 0, 0, Timeout::Absent);
    let e = w.execs[n].clone();
    let t = Track::new("x1", "echo", &e);
    (w, e, t)
}

#[test]
fn the_lifecycle_only_moves_forward_and_terminal_never_changes() {
    let (_, e, t) = instant_exec();
    let t = t
        .observe(&e, &answer("x1", "accepted", T0, T0, false))
        .map(|o| o.track)
        .unwrap();
    let t = t
        .observe(&e, &answer("x1", "running", T0, T1, false))
        .map(|o| o.track)
        .unwrap();
    assert_eq!(t.allowed, States::of(&[Running, Completed]));
    let back = t.observe(&e, &answer("x1", "accepted", T0, T1, false));
    assert!(back.is_err_and(|m| m.rules == ["SSP-INV-3"] && m.message.contains("forward")));
    let done = t
        .observe(&e, &answer("x1", "completed", T0, T2, true))
        .map(|o| o.track)
        .unwrap();
    assert!(
        done.observe(&e, &answer("x1", "completed", T0, T2, true))
            .is_ok()
    );
    let changed = done.observe(&e, &answer("x1", "running", T0, T2, false));
    assert!(changed.is_err_and(|m| m.message.contains("terminal state never changes")));
    let mut other = answer("x1", "completed", T0, T2, true);
    other["output"] = json!({"echo": "else"});
    assert!(
        done.observe(&e, &other)
            .is_err_and(|m| m.rules == ["SSP-INV-3"])
    );
}

#[test]
fn timestamps_created_constant_updated_monotone_completed_iff_terminal() {
    let (_, e, t) = instant_exec();
    let t = t
        .observe(&e, &answer("x1", "running", T0, T1, false))
        .map(|o| o.track)
        .unwrap();
    let moved = t.observe(&e, &answer("x1", "running", T1, T1, false));
    assert!(moved.is_err_and(|m| m.message.contains("created_at")));
    let back = t.observe(&e, &answer("x1", "running", T0, T0, false));
    assert!(back.is_err_and(|m| m.message.contains("updated_at")));
    let no_end = t.observe(&e, &answer("x1", "completed", T0, T2, false));
    assert!(no_end.is_err_and(|m| m.message.contains("completed_at")));
    let early_end = t.observe(&e, &answer("x1", "running", T0, T2, true));
    assert!(early_end.is_err_and(|m| m.message.contains("completed_at")));
    // The same instant in another spelling is the same created_at.
    assert!(
        t.observe(
            &e,
            &answer("x1", "running", "2026-01-01T00:00:00Z", T1, false)
        )
        .is_ok()
    );
}

#[test]
fn a_failed_execution_code_is_judged_and_an_early_timeout_fails() {
    let mut w = world();
    // Unit 2 has no declared lifecycle: it may fail.
    let n = create(&mut w, 2, 0, Timeout::Absent);
    let e = w.execs[n].clone();
    let t = Track::new("x2", "echo", &e);
    assert!(t.observe(&e, &answer("x2", "failed", T0, T1, true)).is_ok());
    let mut own = answer("x2", "failed", T0, T1, true);
    own["error"]["code"] = json!("SKILL_FAILED");
    assert!(
        t.observe(&e, &own).is_err_and(|m| m.rules == ["SSP-ERR-3"]),
        "SSP-ERR-3: a skill's own failure uses one of the seven"
    );
    let mut other = answer("x2", "failed", T0, T1, true);
    other["error"]["code"] = json!("PERMISSION_DENIED");
    assert_eq!(
        t.observe(&e, &other).map(|o| o.warnings),
        Ok(vec![(
            "SSP-ERR-3",
            "PERMISSION_DENIED is one of the seven, but this condition's code is ENDPOINT_UNREACHABLE or VALIDATION_ERROR (SSP-ERR-3 table)".to_string()
        )])
    );
    // SSP-INV-5's lower bound from created_at: the overrun fixture (200 ms) timing out
    // 100 ms after creation is early only beyond the one-second slack.
    let n = create(&mut w, 3, 0, Timeout::Ms(5000.0));
    let e = w.execs[n].clone();
    let t = Track::new("x3", "echo", &e);
    let mut early = answer("x3", "timeout", T0, T1, true);
    early["error"]["details"]["timeout_ms"] = json!(200);
    let r = t.observe(&e, &early);
    assert!(r.is_ok(), "within the slack: {r:?}");
    let mut w2 = world();
    let n = create(&mut w2, 1, 0, Timeout::Ms(3000.0));
    let e = w2.execs[n].clone();
    let t = Track::new("x4", "echo", &e);
    let mut early = answer("x4", "timeout", T0, T1, true);
    early["error"]["details"]["timeout_ms"] = json!(3000);
    assert!(
        t.observe(&e, &early)
            .is_err_and(|m| m.rules == ["SSP-INV-5"]),
        "a 3 s timeout reported 100 ms after creation"
    );
}

/// SSP-INV-5 lets the clock start at acceptance: an instant skill queued past its
/// effective timeout may time out, but not before that timeout passed since creation,
/// and a terminal state still never changes.
#[test]
fn a_timeout_after_the_effective_timeout_since_creation_is_legal_for_any_role() {
    let (_, e, t) = instant_exec();
    assert_eq!(e.effective_ms, Some(5000.0), "the echo skill declares 5 s");
    let mut late = answer("x1", "timeout", T0, "2026-01-01T00:00:05.000Z", true);
    late["error"]["details"]["timeout_ms"] = json!(5000);
    let r = t.observe(&e, &late);
    assert!(r.is_ok(), "queued past its timeout: {r:?}");
    let mut early = answer("x1", "timeout", T0, "2026-01-01T00:00:02.000Z", true);
    early["error"]["details"]["timeout_ms"] = json!(5000);
    assert!(
        t.observe(&e, &early)
            .is_err_and(|m| m.rules == ["SSP-INV-5"]),
        "an instant skill timed out 2 s after creation, its timeout 5 s"
    );
    let done = t
        .observe(&e, &answer("x1", "completed", T0, T1, true))
        .map(|o| o.track)
        .unwrap();
    assert!(
        done.observe(&e, &late)
            .is_err_and(|m| m.rules == ["SSP-INV-3"]),
        "completed, then timeout"
    );
}

#[test]
fn the_final_state_follows_the_role_and_the_effective_timeout() {
    let (_, e, t) = instant_exec();
    let failed = t.observe(&e, &answer("x1", "failed", T0, T1, true));
    assert!(
        failed.is_err_and(|m| m.rules == ["SSP-INV-3"]),
        "an instant skill completes"
    );
    assert_eq!(
        effective(Some(15000.0), Timeout::Ms(20.0)),
        (Some(20.0), true)
    );
    assert_eq!(
        effective(Some(200.0), Timeout::Ms(1e9)),
        (Some(200.0), false),
        "min, not max"
    );
    assert_eq!(
        finals(Some(Lifecycle::Slow), Some(15000.0), Timeout::Ms(20.0)),
        States::of(&[T])
    );
    assert_eq!(
        finals(Some(Lifecycle::Slow), Some(15000.0), Timeout::Ms(500.0)),
        States::of(&[Completed, T])
    );
    assert_eq!(
        finals(Some(Lifecycle::Slow), Some(15000.0), Timeout::Absent),
        States::of(&[Completed])
    );
    assert_eq!(
        finals(Some(Lifecycle::Overrun), Some(200.0), Timeout::Absent),
        States::of(&[T])
    );
    assert_eq!(
        finals(None, Some(200.0), Timeout::Absent),
        States::of(&[Completed, Failed, T])
    );
    // A slow execution cut by a 20 ms context timeout: timeout, INVOCATION_TIMEOUT, 20 ms.
    let mut w = world();
    let n = create(&mut w, 1, 1, Timeout::Ms(20.0));
    let e = w.execs[n].clone();
    let t = Track::new("x1", "echo", &e);
    assert!(
        t.observe(&e, &answer("x1", "timeout", T0, T1, true))
            .is_ok()
    );
    let done = t.observe(&e, &answer("x1", "completed", T0, T1, true));
    assert!(done.is_err_and(|m| m.rules == ["SSP-INV-5"]));
    let mut alias = answer("x1", "timeout", T0, T1, true);
    alias["error"]["code"] = json!("EXECUTION_TIMEOUT");
    assert_eq!(
        t.observe(&e, &alias).map(|o| o.warnings.len()),
        Ok(1),
        "the alias is a warning"
    );
    // SSP-INV-5: details and retry SHOULD: each missing one is a warning, never a failure.
    let mut bare = answer("x1", "timeout", T0, T1, true);
    bare["error"] = json!({"code": "INVOCATION_TIMEOUT", "message": "m"});
    assert_eq!(t.observe(&e, &bare).map(|o| o.warnings.len()), Ok(3));
    // Which timeout details.timeout_ms reports is the binding's reading: a warning.
    let mut wrong_ms = answer("x1", "timeout", T0, T1, true);
    wrong_ms["error"]["details"]["timeout_ms"] = json!(15000);
    assert_eq!(t.observe(&e, &wrong_ms).map(|o| o.warnings.len()), Ok(1));
}

#[test]
fn a_run_is_timed_from_its_first_running_answer() {
    // A slow unit with a 500 ms context timeout may complete or time out (SSP-INV-5).
    let mut w = world();
    let n = create(&mut w, 1, 1, Timeout::Ms(500.0));
    let e = w.execs[n].clone();
    let at = |ms: u32| format!("2026-01-01T00:00:{:02}.{:03}Z", ms / 1000, ms % 1000);
    let t = Track::new("x1", "echo", &e);
    let queued = t
        .observe(&e, &answer("x1", "accepted", T0, T0, false))
        .map(|o| o.track);
    let queued = queued.unwrap_or_else(|m| panic!("accepted: {m:?}"));
    // Three seconds after creation, never seen running: it may have waited in a queue.
    let late = answer("x1", "completed", T0, &at(3000), true);
    assert!(queued.observe(&e, &late).is_ok(), "the start is unknown");
    // Seen running at 2.9 s, completed at 3 s: within the timeout.
    let run = |from: u32| {
        queued
            .observe(&e, &answer("x1", "running", T0, &at(from), false))
            .map(|o| o.track)
            .unwrap_or_else(|m| panic!("running: {m:?}"))
    };
    assert!(run(2900).observe(&e, &late).is_ok());
    // Seen running at 0.1 s, completed at 3 s: 2.9 s is past 500 ms (with its slack).
    assert!(
        run(100)
            .observe(&e, &late)
            .is_err_and(|m| m.rules == ["SSP-INV-5"])
    );
}

#[test]
fn a_terminal_answer_may_spell_completed_at_differently() {
    let (_, e, t) = instant_exec();
    let first = t.observe(&e, &answer("x1", "completed", T0, T1, true));
    let first = first.unwrap_or_else(|m| panic!("completed: {m:?}")).track;
    let respelled = answer("x1", "completed", T0, "2026-01-01T00:00:00.1Z", true);
    assert!(first.observe(&e, &respelled).is_ok(), "the same instant");
    let moved = answer("x1", "completed", T0, T2, true);
    assert!(
        first
            .observe(&e, &moved)
            .is_err_and(|m| m.rules == ["SSP-INV-3"])
    );
}

#[test]
fn a_protected_skill_without_auth_scheme_has_no_certain_owner() {
    let mut w = world();
    w.skills[0].access = AccessPolicy::Restricted;
    assert_eq!(w.owner_of(0), None, "no caller is certain to succeed");
}

#[test]
fn another_caller_never_reads_a_non_public_execution() {
    let mut w = world();
    let n = create(&mut w, 1, 1, Timeout::Absent);
    assert_eq!(read(&w, n, 1), Read::Ok);
    let Read::Refuse(l) = read(&w, n, 2) else {
        panic!("the limited key is another caller")
    };
    assert_eq!(l, vec![HIDDEN, OTHER_DENIED]);
    let e = check_error(
        200,
        Some(&json!({"status": "completed"})),
        &l,
        &["SSP-INV-6"],
        "r",
    );
    assert_eq!(e.map_err(|m| m.rules), Err(vec!["SSP-INV-6".to_string()]));
    assert_eq!(read(&w, n, 0), Read::Refuse(vec![AUTH_REQUIRED, HIDDEN]));
    // Public executions: the notes leave another caller's read open.
    let p = create(&mut w, 0, 0, Timeout::Absent);
    assert!(matches!(read(&w, p, 1), Read::Either(_)));
}

#[test]
fn operations_resolve_against_the_live_model() {
    let w = world();
    assert_eq!(
        w.resolve(&Op::Status { by: None, exec: 7 }),
        None,
        "no execution yet"
    );
    let op = w.resolve(&Op::Invoke {
        by: None,
        unit: 5,
        timeout: Timeout::Absent,
    });
    assert_eq!(
        op,
        Some(Op::Invoke {
            by: Some(1),
            unit: 1,
            timeout: Timeout::Absent
        }),
        "the owner of task is the api key"
    );
    let w2 = w.next(op.as_ref().unwrap());
    assert_eq!(w2.execs.len(), 1);
    let refused = Op::Invoke {
        by: Some(0),
        unit: 1,
        timeout: Timeout::Absent,
    };
    assert_eq!(
        w.next(&refused).execs.len(),
        0,
        "a refused invocation creates nothing"
    );
    assert_eq!(
        w2.resolve(&Op::Result { by: None, exec: 3 }),
        Some(Op::Result {
            by: Some(1),
            exec: 0
        })
    );
}
