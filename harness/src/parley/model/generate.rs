//! Generation: the proptest strategy of operation sequences over a [`World`], from the
//! model's live indices plus deliberately invalid references (unknown thread, another
//! thread's message, boundary bodies), with [`World::valid`] as the precondition that keeps
//! shrunk sequences legal.

use std::sync::Arc;

use proptest::prelude::*;
use proptest::strategy::Union;
use proptest_state_machine::strategy::Sequential;

use super::dialectic::{Act, Evidence, Until};
use super::party::{EXTENSIONS, Party};
use super::predict::predict;
use super::state::{Body, Kind, Op, St, World};

/// Most threads one sequence opens (keeps threads long enough for deep states).
pub const MAX_THREADS: usize = 3;

/// What a run's sequences concentrate on: the thread state machine, or the dialectic
/// profile's claims (in threads, among the same thread operations), or the quota role's
/// writes. Separate foci keep each one's deep corners within a small budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Focus {
    /// Posts, marks, reopens, reads, inbox, whoami, missing tokens.
    Threads,
    /// The same, plus asserts, attests, verifies, refutes, supersedes and claim reads.
    Claims,
    /// The thread operations by the quota role alone (`limited`), whose enforcement of a
    /// small quota is judged per sequence (PV-TR-5, [`super::quota::Bound`]).
    Quota,
}

impl Focus {
    /// Its `--focus` name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Threads => "threads",
            Self::Claims => "claims",
            Self::Quota => "quota",
        }
    }

    /// The focus `--focus` names.
    pub fn parse(s: &str) -> Option<Self> {
        [Self::Threads, Self::Claims, Self::Quota]
            .into_iter()
            .find(|f| f.as_str() == s)
    }
}

/// The sequence strategy: `steps` operations from an empty model of `world`'s actors.
pub fn sequences(
    world: World,
    steps: usize,
    focus: Focus,
) -> Sequential<World, Op, BoxedStrategy<World>, BoxedStrategy<Op>> {
    let init = Arc::new(world);
    Sequential::new(
        steps.max(1).into(),
        move || Just((*init).clone()).boxed(),
        |w: &World, op: &Op| w.resolve(op).is_some(),
        move |w: &World| transitions(w, focus),
        |w: World, op: &Op| match w.resolve(op) {
            Some(op) => predict(&w, &op).next,
            None => w,
        },
    )
}

fn party(actors: usize) -> impl Strategy<Value = Party> {
    (
        0..actors,
        prop_oneof![Just(None), (0..EXTENSIONS.len()).prop_map(Some)],
    )
        .prop_map(|(actor, ext)| Party { actor, ext })
}

fn body() -> impl Strategy<Value = Body> {
    prop_oneof![
        20 => Just(Body::Short),
        1 => Just(Body::AtLimit),
        1 => Just(Body::OverLimit),
        1 => Just(Body::Empty),
    ]
}

fn kind() -> impl Strategy<Value = Kind> {
    prop_oneof![
        3 => Just(Kind::Answer),
        2 => Just(Kind::Decide),
        2 => Just(Kind::Close),
        1 => Just(Kind::Ask),
        1 => Just(Kind::Clarify),
        1 => Just(Kind::Inform),
        1 => Just(Kind::Propose),
        1 => Just(Kind::Agree),
        1 => Just(Kind::Object),
    ]
}

fn state() -> impl Strategy<Value = St> {
    proptest::sample::select(St::ALL.to_vec())
}

/// The operations possible from `w` (weights favour the state machine's deep corners).
pub fn transitions(w: &World, focus: Focus) -> BoxedStrategy<Op> {
    let n = w.actors.len().max(1);
    let body_ok = w.body_max.is_some();
    let open_body = if body_ok {
        body().boxed()
    } else {
        Just(Body::Short).boxed()
    };
    let mut arms: Vec<(u32, BoxedStrategy<Op>)> = vec![
        (
            1,
            (
                party(n),
                kind().prop_filter("non-opening", |k| *k != Kind::Ask),
            )
                .prop_map(|(by, kind)| Op::Orphan { by, kind })
                .boxed(),
        ),
        (
            1,
            (party(n), kind())
                .prop_map(|(by, kind)| Op::UnknownThread { by, kind })
                .boxed(),
        ),
        (2, party(n).prop_map(|by| Op::Inbox { by }).boxed()),
        (
            1,
            prop_oneof![
                (0..n).prop_map(|by| Op::Whoami { by }),
                any::<bool>().prop_map(|write| Op::Anonymous { write }),
            ]
            .boxed(),
        ),
    ];
    if w.threads.len() < MAX_THREADS {
        let weight = if w.threads.is_empty() { 6 } else { 2 };
        arms.push((
            weight,
            (party(n), open_body.clone())
                .prop_map(|(by, body)| Op::Open { by, body })
                .boxed(),
        ));
    }
    if !w.threads.is_empty() {
        let p = || (0..=u32::MAX).prop_map(|x| x as usize);
        arms.push((
            10,
            (
                p(),
                prop_oneof![
                    3 => Just(None),
                    3 => Just(Some(u32::MAX as usize)), // the last message: deep chains
                    4 => p().prop_map(Some),
                ],
                party(n + 1),
                kind(),
                open_body,
            )
                .prop_map(|(thread, parent, by, kind, body)| Op::Post {
                    by,
                    thread,
                    parent,
                    kind,
                    body,
                })
                .boxed(),
        ));
        arms.push((
            6,
            (0..=n, p(), state())
                .prop_map(|(by, thread, state)| Op::Mark { by, thread, state })
                .boxed(),
        ));
        arms.push((
            4,
            (0..=n, p())
                .prop_map(|(by, thread)| Op::Reopen { by, thread })
                .boxed(),
        ));
        arms.push((
            2,
            (0..n, p())
                .prop_map(|(by, thread)| Op::ReadThread { by, thread })
                .boxed(),
        ));
        arms.push((
            2,
            (0..n, p(), proptest::option::of(p()))
                .prop_map(|(by, thread, since)| Op::ListEvents { by, thread, since })
                .boxed(),
        ));
        if w.threads.len() > 1 {
            arms.push((
                1,
                (party(n), p(), p(), p())
                    .prop_map(|(by, thread, other, parent)| Op::ForeignParent {
                        by,
                        thread,
                        other,
                        parent,
                    })
                    .boxed(),
            ));
        }
    }
    if focus == Focus::Claims && w.dialectic {
        arms.extend(claim_arms(w, n));
    }
    Union::new_weighted(arms).boxed()
}

/// The dialectic operations (PV-DI): asserts (opening or in a thread, superseding a live
/// claim, with a `valid_until` soon or in the past, with missing or invalid evidence), claim
/// acts by every role and claim reads, some after the claim's expiry.
fn claim_arms(w: &World, n: usize) -> Vec<(u32, BoxedStrategy<Op>)> {
    let p = || (0..=u32::MAX).prop_map(|x| x as usize);
    let thread = if w.threads.len() >= MAX_THREADS {
        p().prop_map(Some).boxed()
    } else if w.threads.is_empty() {
        Just(None).boxed()
    } else {
        proptest::option::of(p()).boxed()
    };
    let supersedes = if w.claims.is_empty() {
        Just(None).boxed()
    } else {
        // The last claim, often: supersede chains (PV-DI-6).
        prop_oneof![
            2 => Just(None),
            3 => Just(Some(u32::MAX as usize)),
            1 => p().prop_map(Some),
        ]
        .boxed()
    };
    let until = prop_oneof![
        12 => Just(Until::Never),
        2 => Just(Until::Soon),
        1 => Just(Until::Past),
    ];
    let mut arms = vec![(
        4,
        (party(n + 1), thread, supersedes, until, evidence())
            .prop_map(|(by, thread, supersedes, until, evidence)| Op::Assert {
                by,
                thread,
                supersedes,
                until,
                evidence,
            })
            .boxed(),
    )];
    if !w.claims.is_empty() {
        let act = prop_oneof![
            3 => Just(Act::Attest),
            2 => Just(Act::Verify),
            2 => Just(Act::Refute),
        ];
        arms.push((
            8,
            (party(n), p(), act, evidence())
                .prop_map(|(by, claim, act, evidence)| Op::ClaimAct {
                    by,
                    claim,
                    act,
                    evidence,
                })
                .boxed(),
        ));
        arms.push((
            3,
            (0..n, p(), proptest::bool::weighted(0.2))
                .prop_map(|(by, claim, after_expiry)| Op::ReadClaim {
                    by,
                    claim,
                    after_expiry,
                })
                .boxed(),
        ));
    }
    arms
}

fn evidence() -> impl Strategy<Value = Evidence> {
    prop_oneof![
        14 => Just(Evidence::Valid),
        1 => Just(Evidence::Missing),
        1 => Just(Evidence::Invalid),
    ]
}
