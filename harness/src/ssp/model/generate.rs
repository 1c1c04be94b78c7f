//! Generation: the proptest strategy of operation sequences over a [`World`] — every
//! operation by every caller the profile gives, on the model's live executions plus
//! deliberately invalid arguments (unknown execution ids and descriptor paths, another
//! caller's execution, another skill's id, a missing required or an undeclared input, odd
//! `timeout_ms`). [`World::resolve`] is the precondition that keeps shrunk sequences legal.

use std::sync::Arc;

use proptest::prelude::*;
use proptest::strategy::Union;
use proptest_state_machine::strategy::Sequential;

use super::ops::Op;
use super::state::{Filter, Invalid, Timeout, World};
use crate::ssp::types::CapabilityType;

/// Most executions one sequence creates (keeps reads on each of them frequent).
pub const MAX_EXECS: usize = 6;

/// The sequence strategy: at most `steps` operations from `world`.
pub fn sequences(
    world: World,
    steps: usize,
) -> Sequential<World, Op, BoxedStrategy<World>, BoxedStrategy<Op>> {
    let init = Arc::new(world);
    Sequential::new(
        steps.max(1).into(),
        move || Just((*init).clone()).boxed(),
        |w: &World, op: &Op| w.resolve(op).is_some(),
        transitions,
        |w: World, op: &Op| match w.resolve(op) {
            Some(op) => w.next(&op),
            None => w,
        },
    )
}

fn any_index() -> impl Strategy<Value = usize> {
    (0..=u16::MAX).prop_map(usize::from)
}

/// `None` (the credential that succeeds) half of the time.
fn who() -> impl Strategy<Value = Option<usize>> {
    prop_oneof![1 => Just(None), 1 => any_index().prop_map(Some)]
}

fn timeout() -> impl Strategy<Value = Timeout> {
    prop_oneof![
        8 => Just(Timeout::Absent),
        1 => (1u32..=20).prop_map(|n| Timeout::Ms(f64::from(n))),
        1 => (100u32..=3000).prop_map(|n| Timeout::Ms(f64::from(n))),
        1 => Just(Timeout::Ms(250.5)),
        1 => Just(Timeout::Ms(1e9)),
        1 => prop_oneof![Just(Timeout::Odd(0.0)), Just(Timeout::Odd(-5.0))],
    ]
}

fn filter() -> impl Strategy<Value = Filter> {
    prop_oneof![
        2 => Just(Filter::None),
        4 => (proptest::sample::select(CapabilityType::ALL.to_vec()), any::<bool>())
            .prop_map(|(t, registry)| Filter::Capability(t, registry)),
        1 => Just(Filter::Unknown),
    ]
}

fn invalid() -> impl Strategy<Value = Invalid> {
    prop_oneof![
        Just(Invalid::MissingRequired),
        Just(Invalid::Undeclared),
        Just(Invalid::UnknownSkill),
        any_index().prop_map(Invalid::OtherSkill),
        Just(Invalid::TextTimeout),
    ]
}

/// The operations possible from `w`.
fn transitions(w: &World) -> BoxedStrategy<Op> {
    let i = any_index;
    let mut arms: Vec<(u32, BoxedStrategy<Op>)> = vec![
        (
            3,
            (i(), filter())
                .prop_map(|(by, filter)| Op::Discover { by, filter })
                .boxed(),
        ),
        (
            2,
            (i(), i())
                .prop_map(|(by, skill)| Op::Descriptor { by, skill })
                .boxed(),
        ),
        (1, i().prop_map(|by| Op::UnknownDescriptor { by }).boxed()),
        (
            2,
            (i(), invalid())
                .prop_map(|(unit, what)| Op::Invalid { unit, what })
                .boxed(),
        ),
        (
            1,
            (who(), i(), any::<bool>())
                .prop_map(|(by, unit, result)| Op::UnknownExecution { by, unit, result })
                .boxed(),
        ),
    ];
    if w.execs.len() < MAX_EXECS {
        let weight = if w.execs.is_empty() { 12 } else { 5 };
        arms.push((
            weight,
            (who(), i(), timeout())
                .prop_map(|(by, unit, timeout)| Op::Invoke { by, unit, timeout })
                .boxed(),
        ));
    }
    if !w.execs.is_empty() {
        arms.push((
            8,
            (who(), i())
                .prop_map(|(by, exec)| Op::Status { by, exec })
                .boxed(),
        ));
        arms.push((
            5,
            (who(), i())
                .prop_map(|(by, exec)| Op::Result { by, exec })
                .boxed(),
        ));
        arms.push((2, i().prop_map(|exec| Op::Await { exec }).boxed()));
    }
    Union::new_weighted(arms).boxed()
}
