//! Hand-written Parley histories against the model as a specification.
#![expect(clippy::unwrap_used, reason = "tests: a panic is the failure report")]

use super::groups::{Cast, TEMPLATES, build, draw};
use super::spec::{Model, Observed, ParleySpec, Step, View, view_of};
use crate::capability::history::{Bound, History, Linearizability, check};
use crate::parley::model::dialectic::{Act, Evidence, Until};
use crate::parley::model::party::{Actor, Party};
use crate::parley::model::predict::predict;
use crate::parley::model::state::{Body, Op, St, World};

const A: usize = 0;
const B: usize = 1;
const MOD: usize = 2;
const HUMAN: usize = 3;

fn world() -> World {
    let actor = |role: &str, identity: &str, human, lock| Actor {
        role: role.into(),
        identity: identity.into(),
        human,
        write: true,
        read: true,
        lock,
        verify: human,
    };
    World::new(
        vec![
            actor("agent_a", "ainotes:a", false, false),
            actor("agent_b", "ainotes:b", false, false),
            actor("moderator", "ainotes:mod", false, true),
            actor("human", "human:alice", true, false),
        ],
        Some(500),
    )
    .with_dialectic(true)
}

fn open() -> Step {
    Step::Op(Op::Open {
        by: Party {
            actor: A,
            ext: None,
        },
        body: Body::Short,
    })
}

fn mark(by: usize, state: St) -> Step {
    Step::Op(Op::Mark {
        by,
        thread: 0,
        state,
    })
}

fn ok(event: bool) -> Observed {
    Observed::Accepted { event }
}

fn refused(reason: &str) -> Observed {
    Observed::Refused(409, reason.into())
}

fn verdict(h: &History<Step, Observed>) -> Linearizability {
    check(&ParleySpec, &Model(world()), h, Bound::default())
}

#[test]
fn one_of_two_rival_lateral_marks_wins_either_way() {
    for (a, m) in [
        (ok(true), refused("invalid_transition")),
        (refused("invalid_transition"), ok(true)),
    ] {
        let mut h = History::new();
        h.done(0, open(), 0, 10, ok(false));
        h.done(1, mark(A, St::Deferred), 20, 50, a);
        h.done(2, mark(MOD, St::Rejected), 21, 49, m);
        assert!(matches!(verdict(&h), Linearizability::Linearizable { .. }));
    }
}

#[test]
fn two_winning_rival_lateral_marks_are_not_linearizable() {
    let mut h = History::new();
    h.done(0, open(), 0, 10, ok(false));
    h.done(1, mark(A, St::Deferred), 20, 50, ok(true));
    h.done(2, mark(MOD, St::Rejected), 21, 49, ok(true));
    match verdict(&h) {
        Linearizability::NotLinearizable(e) => {
            assert_eq!(e.prefix.len(), 2);
            assert!(
                e.stuck[0].why.contains("invalid_transition"),
                "{:?}",
                e.stuck
            );
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_read_back_must_be_the_linearized_thread() {
    // The human's answered mark and the creator's deferred mark: only "answered, then
    // deferred" accepts both; the read-back must show that order's thread.
    let w = world();
    let after = [open(), mark(HUMAN, St::Answered), mark(A, St::Deferred)]
        .iter()
        .fold(w, |w, s| match s {
            Step::Op(op) => predict(&w, op).next,
            Step::ReadBack { .. } => w,
        });
    let mut h = History::new();
    h.done(0, open(), 0, 10, ok(false));
    h.done(1, mark(A, St::Deferred), 20, 50, ok(true));
    h.done(2, mark(HUMAN, St::Answered), 21, 49, ok(true));
    h.done(
        0,
        Step::ReadBack { by: A, thread: 0 },
        60,
        70,
        Observed::View(view_of(&after, 0)),
    );
    assert!(
        matches!(verdict(&h), Linearizability::Linearizable { order, .. } if order == vec![0, 2, 1, 3])
    );
    // The same answers with a thread left answered (the lateral mark lost): not linearizable.
    let mut lost = view_of(&after, 0);
    lost.state = "answered".into();
    h.ops[3].response.as_mut().unwrap().output = Observed::View(lost);
    assert!(matches!(verdict(&h), Linearizability::NotLinearizable(_)));
}

#[test]
fn a_step_naming_a_thread_never_opened_has_no_path() {
    // The model would index a thread that does not exist: the specification says "no
    // successor" instead (a set-up step was refused, the group went on).
    let mut h = History::new();
    h.done(0, mark(A, St::Closed), 0, 10, ok(true));
    match verdict(&h) {
        Linearizability::NotLinearizable(e) => {
            assert!(e.stuck[0].why.contains("allows no result"), "{:?}", e.stuck);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn templates_drop_with_the_parties_they_need() {
    let actors = world().actors;
    let all = Cast::of(&actors).with_dialectic(true);
    assert_eq!(
        (all.creator, all.other, all.lock, all.human, all.verifier),
        (Some(A), Some(B), Some(MOD), Some(HUMAN), Some(HUMAN))
    );
    let mut rng = fastrand::Rng::with_seed(1);
    assert!(TEMPLATES.iter().all(|t| build(t, all, &mut rng).is_some()));
    let no_lock = Cast { lock: None, ..all };
    let names: Vec<_> = draw(3, 12, no_lock).iter().map(|g| g.name).collect();
    assert!(
        names.iter().all(|n| [
            "replies-to-one-message",
            "twin-answers",
            "claim-acts-race",
            "verify-twice",
            "refute-twice"
        ]
        .contains(n)),
        "{names:?}"
    );
    // Without the dialectic profile, no claim race.
    let plain = Cast::of(&actors);
    assert!(build("claim-acts-race", plain, &mut rng).is_none());
    assert!(
        draw(3, 24, plain)
            .iter()
            .all(|g| g.name != "claim-acts-race")
    );
    assert!(draw(3, 12, Cast::default()).is_empty());
    for g in draw(5, 24, all) {
        assert!((2..=4).contains(&g.concurrent.len()), "{g:?}");
    }
}

fn claim_act(by: usize, act: Act) -> Step {
    Step::Op(Op::ClaimAct {
        by: Party {
            actor: by,
            ext: None,
        },
        claim: 0,
        act,
        evidence: Evidence::Valid,
    })
}

fn assert_claim() -> Step {
    Step::Op(Op::Assert {
        by: Party {
            actor: A,
            ext: None,
        },
        thread: None,
        supersedes: None,
        until: Until::Never,
        evidence: Evidence::Valid,
    })
}

/// The model after `steps` in this order (every step accepted or refused as predicted).
fn after(steps: &[Step]) -> World {
    steps.iter().fold(world(), |w, s| match s {
        Step::Op(op) => predict(&w, op).next,
        Step::ReadBack { .. } => w,
    })
}

#[test]
fn a_verify_and_a_refute_race_to_one_order_s_claim() {
    // PV-DI-4/5: verify then refute ends refuted (both accepted); refute then verify ends
    // refuted with the verify refused. Verified with both accepted is no order's.
    let verify = claim_act(HUMAN, Act::Verify);
    let refute = claim_act(MOD, Act::Refute);
    let final_view = view_of(&after(&[assert_claim(), verify.clone(), refute.clone()]), 0);
    assert_eq!(final_view.claims[0].status, "refuted");
    let history = |v: Observed, r: Observed, read: Observed| {
        let mut h = History::new();
        h.done(0, assert_claim(), 0, 10, ok(false));
        h.done(1, verify.clone(), 20, 50, v);
        h.done(2, refute.clone(), 21, 49, r);
        h.done(0, Step::ReadBack { by: A, thread: 0 }, 60, 70, read);
        h
    };
    let h = history(ok(false), ok(false), Observed::View(final_view.clone()));
    assert!(matches!(verdict(&h), Linearizability::Linearizable { .. }));
    // A refuted claim that accepted a verify and shows verified: not linearizable.
    let mut verified = final_view;
    verified.claims[0].status = "verified".into();
    let h = history(ok(false), ok(false), Observed::View(verified));
    assert!(matches!(verdict(&h), Linearizability::NotLinearizable(_)));
    // A verified claim that refused the refute (the Popperian asymmetry lost): no order.
    let kept = view_of(&after(&[assert_claim(), verify.clone()]), 0);
    let h = history(
        ok(false),
        refused("invalid_transition"),
        Observed::View(kept),
    );
    assert!(matches!(verdict(&h), Linearizability::NotLinearizable(_)));
}

/// The model after `steps`, each accepted (an act the notes let go either way included).
fn accepted(steps: &[Step]) -> World {
    steps.iter().fold(world(), |w, s| match s {
        Step::Op(op) => {
            let p = predict(&w, op);
            p.accepted_next.unwrap_or(p.next)
        }
        Step::ReadBack { .. } => w,
    })
}

/// A claim asserted, then `first` and `second` at once, then read back as `read`.
fn repeat_history(
    first: (&Step, Observed),
    second: (&Step, Observed),
    read: View,
) -> History<Step, Observed> {
    let mut h = History::new();
    h.done(0, assert_claim(), 0, 10, ok(false));
    h.done(1, first.0.clone(), 20, 50, first.1);
    h.done(2, second.0.clone(), 21, 49, second.1);
    h.done(
        0,
        Step::ReadBack { by: A, thread: 0 },
        60,
        70,
        Observed::View(read),
    );
    h
}

#[test]
fn two_verifies_race_to_one_status_event() {
    // PV-DI-9: the repeat is accepted without a change or refused; one status event.
    let v = claim_act(HUMAN, Act::Verify);
    let both = view_of(&accepted(&[assert_claim(), v.clone(), v.clone()]), 0);
    let one = view_of(&after(&[assert_claim(), v.clone()]), 0);
    assert_eq!(
        (
            both.claims[0].status.as_str(),
            both.claims[0].status_events.clone(),
            both.messages
        ),
        ("verified", Some(vec!["verified".to_string()]), 3)
    );
    let linearizable =
        |h: &History<Step, Observed>| matches!(verdict(h), Linearizability::Linearizable { .. });
    assert!(linearizable(&repeat_history(
        (&v, ok(false)),
        (&v, ok(false)),
        both.clone()
    )));
    let refusal = refused("invalid_transition");
    assert!(linearizable(&repeat_history(
        (&v, refusal.clone()),
        (&v, ok(false)),
        one
    )));
    // A second status event (fault repeat-verify-writes-event): no order gives it.
    let mut twice = both;
    twice.claims[0].status_events = Some(vec!["verified".into(), "verified".into()]);
    assert!(!linearizable(&repeat_history(
        (&v, ok(false)),
        (&v, ok(false)),
        twice
    )));
    // Both refused: the first to arrive is no repeat.
    let unverified = view_of(&after(&[assert_claim()]), 0);
    assert!(!linearizable(&repeat_history(
        (&v, refusal.clone()),
        (&v, refusal),
        unverified
    )));
}

#[test]
fn two_refutes_race_to_the_accepted_refutations() {
    // PV-DI-9: refutations[] holds exactly the accepted refutes, one status event.
    let (r1, r2) = (claim_act(MOD, Act::Refute), claim_act(B, Act::Refute));
    let both = view_of(&accepted(&[assert_claim(), r1.clone(), r2.clone()]), 0);
    assert_eq!(
        (
            both.claims[0].refutations,
            both.claims[0].status_events.clone()
        ),
        (Some(2), Some(vec!["refuted".to_string()]))
    );
    let linearizable =
        |h: &History<Step, Observed>| matches!(verdict(h), Linearizability::Linearizable { .. });
    assert!(linearizable(&repeat_history(
        (&r1, ok(false)),
        (&r2, ok(false)),
        both.clone()
    )));
    // Both accepted but one refutation recorded: no order.
    let mut lost = both;
    lost.claims[0].refutations = Some(1);
    assert!(!linearizable(&repeat_history(
        (&r1, ok(false)),
        (&r2, ok(false)),
        lost
    )));
}
