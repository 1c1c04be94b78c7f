//! Hand-written SSP histories: N fresh ids and N independent results, or not.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use super::spec::{Observed, SspSpec, Step};
use crate::capability::history::{Bound, History, Linearizability, check};

fn spec() -> SspSpec {
    SspSpec {
        skill: "conform/echo".into(),
        alone: (0..2)
            .map(|k| {
                (
                    Some(json!("completed")),
                    Some(json!({"echo": format!("m {k}")})),
                )
            })
            .collect(),
    }
}

fn invoke(k: usize, id: &str) -> Step {
    Step::Invoke {
        input: k,
        id: Some(id.into()),
    }
}

fn end(k: usize, id: &str, reported: &str, output: Value) -> (Step, Observed) {
    (
        Step::Final {
            input: k,
            id: id.into(),
        },
        Observed::Final(Box::new([
            json!(reported),
            json!("conform/echo"),
            json!("completed"),
            output,
        ])),
    )
}

fn verdict(h: &History<Step, Observed>) -> Linearizability {
    check(&spec(), &BTreeSet::new(), h, Bound::default())
}

fn history(ids: [&str; 2], outputs: [usize; 2]) -> History<Step, Observed> {
    let mut h = History::new();
    h.done(0, invoke(0, ids[0]), 0, 10, Observed::Accepted);
    h.done(1, invoke(1, ids[1]), 1, 9, Observed::Accepted);
    for k in 0..2 {
        let (s, o) = end(
            k,
            ids[k],
            ids[k],
            json!({"echo": format!("m {}", outputs[k])}),
        );
        h.done(k, s, 20 + 10 * k as u64, 25 + 10 * k as u64, o);
    }
    h
}

#[test]
fn distinct_ids_and_own_results_are_linearizable() {
    assert!(matches!(
        verdict(&history(["ex_1", "ex_2"], [0, 1])),
        Linearizability::Linearizable { .. }
    ));
}

#[test]
fn a_shared_id_or_swapped_results_are_not() {
    assert!(matches!(
        verdict(&history(["ex_1", "ex_1"], [0, 1])),
        Linearizability::NotLinearizable(_)
    ));
    assert!(matches!(
        verdict(&history(["ex_1", "ex_2"], [1, 0])),
        Linearizability::NotLinearizable(_)
    ));
}

#[test]
fn an_unstable_skill_is_compared_on_ids_and_skill_only() {
    let mut s = spec();
    s.alone = vec![(None, None), (None, None)];
    let h = history(["ex_1", "ex_2"], [1, 0]);
    assert!(matches!(
        check(&s, &BTreeSet::new(), &h, Bound::default()),
        Linearizability::Linearizable { .. }
    ));
}
