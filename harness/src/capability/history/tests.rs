//! Hand-written histories of a register, a counter and a queue.

use std::collections::VecDeque;

use super::*;

/// A register: `Write(v)` answers `None`, `Read` answers `Some(v)`.
struct Register;

#[derive(Debug, Clone, Copy)]
enum Reg {
    Write(u8),
    Read,
}

impl Spec for Register {
    type State = u8;
    type Input = Reg;
    type Output = Option<u8>;
    type Expected = Option<u8>;
    fn step(&self, s: &u8, i: &Reg) -> Vec<(u8, Option<u8>)> {
        match *i {
            Reg::Write(v) => vec![(v, None)],
            Reg::Read => vec![(*s, Some(*s))],
        }
    }
    fn matches(&self, e: &Option<u8>, o: &Option<u8>) -> bool {
        e == o
    }
}

/// A counter whose `Add` answers the new value, and a `Bump` the notes leave open: it adds
/// 1 or 2 (non-deterministic) and answers nothing.
struct Counter;

#[derive(Debug, Clone, Copy)]
enum Ctr {
    Add,
    Bump,
    Get,
}

impl Spec for Counter {
    type State = u32;
    type Input = Ctr;
    type Output = Option<u32>;
    type Expected = Option<u32>;
    fn step(&self, s: &u32, i: &Ctr) -> Vec<(u32, Option<u32>)> {
        match i {
            Ctr::Add => vec![(s + 1, Some(s + 1))],
            Ctr::Bump => vec![(s + 1, None), (s + 2, None)],
            Ctr::Get => vec![(*s, Some(*s))],
        }
    }
    fn matches(&self, e: &Option<u32>, o: &Option<u32>) -> bool {
        e == o
    }
}

/// A FIFO queue: `Enq(v)` answers `None`, `Deq` answers the head (`None` when empty).
struct Queue;

#[derive(Debug, Clone, Copy)]
enum Q {
    Enq(u8),
    Deq,
}

impl Spec for Queue {
    type State = VecDeque<u8>;
    type Input = Q;
    type Output = Option<u8>;
    type Expected = Option<u8>;
    fn step(&self, s: &VecDeque<u8>, i: &Q) -> Vec<(VecDeque<u8>, Option<u8>)> {
        let mut next = s.clone();
        match *i {
            Q::Enq(v) => {
                next.push_back(v);
                vec![(next, None)]
            }
            Q::Deq => {
                let head = next.pop_front();
                vec![(next, head)]
            }
        }
    }
    fn matches(&self, e: &Option<u8>, o: &Option<u8>) -> bool {
        e == o
    }
}

fn order(r: &Linearizability) -> Vec<usize> {
    match r {
        Linearizability::Linearizable { order, .. } => order.clone(),
        other => panic!("expected linearizable, got {other:?}"),
    }
}

fn explanation(r: Linearizability) -> Explanation {
    match r {
        Linearizability::NotLinearizable(e) => *e,
        other => panic!("expected not linearizable, got {other:?}"),
    }
}

#[test]
fn sequential_register_history_is_linearizable_in_its_own_order() {
    let mut h = History::new();
    h.done(0, Reg::Write(1), 0, 10, None);
    h.done(1, Reg::Read, 20, 30, Some(1));
    h.done(0, Reg::Write(2), 40, 50, None);
    h.done(1, Reg::Read, 60, 70, Some(2));
    assert_eq!(
        order(&check(&Register, &0, &h, Bound::default())),
        vec![0, 1, 2, 3]
    );
}

#[test]
fn stale_read_after_a_completed_write_is_not_linearizable() {
    let mut h = History::new();
    h.done(0, Reg::Write(1), 0, 10, None);
    h.done(1, Reg::Read, 20, 30, Some(0));
    let e = explanation(check(&Register, &0, &h, Bound::default()));
    assert_eq!(e.prefix, vec![0]);
    assert_eq!(e.stuck.len(), 1);
    assert_eq!(e.stuck[0].op, 1);
    assert!(e.stuck[0].why.contains("Some(0)"), "{}", e.stuck[0].why);
}

#[test]
fn overlapping_operations_linearize_only_in_the_order_the_results_show() {
    // The read overlaps the write and sees the new value: write, then read — although the
    // read was invoked first.
    let mut h = History::new();
    h.done(1, Reg::Read, 0, 100, Some(5));
    h.done(0, Reg::Write(5), 10, 50, None);
    assert_eq!(
        order(&check(&Register, &0, &h, Bound::default())),
        vec![1, 0]
    );
    // Two overlapping enqueues and a later dequeue that saw 2 first: enq(2) before enq(1).
    let mut q = History::new();
    q.done(0, Q::Enq(1), 0, 100, None);
    q.done(1, Q::Enq(2), 5, 100, None);
    q.done(2, Q::Deq, 200, 210, Some(2));
    q.done(2, Q::Deq, 220, 230, Some(1));
    assert_eq!(
        order(&check(&Queue, &VecDeque::new(), &q, Bound::default())),
        vec![1, 0, 2, 3]
    );
}

#[test]
fn real_time_order_forbids_what_overlap_would_allow() {
    // The same results, but enq(1) returned before enq(2) was invoked: FIFO is broken.
    let mut q = History::new();
    q.done(0, Q::Enq(1), 0, 10, None);
    q.done(1, Q::Enq(2), 20, 30, None);
    q.done(2, Q::Deq, 40, 50, Some(2));
    let e = explanation(check(&Queue, &VecDeque::new(), &q, Bound::default()));
    assert_eq!(e.prefix, vec![0, 1]);
    assert!(e.stuck[0].why.contains("only [Some(1)]"), "{:?}", e.stuck);
    // A read that must follow an earlier return says so.
    let mut h = History::new();
    h.done(0, Reg::Write(1), 0, 10, Some(9));
    h.done(1, Reg::Read, 20, 30, Some(1));
    let e = explanation(check(&Register, &0, &h, Bound::default()));
    assert!(e.prefix.is_empty());
    let why: Vec<_> = e.stuck.iter().map(|s| (s.op, s.why.as_str())).collect();
    assert!(
        why[1].1.starts_with("real-time order: it must follow #0"),
        "{why:?}"
    );
}

#[test]
fn lost_increment_is_not_linearizable_and_nondeterminism_is_explored() {
    // Two concurrent adds both answering 1: a lost update.
    let mut h = History::new();
    h.done(0, Ctr::Add, 0, 100, Some(1));
    h.done(1, Ctr::Add, 10, 90, Some(1));
    let e = explanation(check(&Counter, &0, &h, Bound::default()));
    assert_eq!(e.prefix.len(), 1);
    // A bump adds 1 or 2: a later get of 3 after a bump and an add is explained by "2".
    let mut h = History::new();
    h.done(0, Ctr::Bump, 0, 10, None);
    h.done(1, Ctr::Add, 5, 15, Some(3));
    h.done(2, Ctr::Get, 20, 30, Some(3));
    assert_eq!(
        order(&check(&Counter, &0, &h, Bound::default())),
        vec![0, 1, 2]
    );
    h.done(2, Ctr::Get, 40, 50, Some(4));
    assert!(matches!(
        check(&Counter, &0, &h, Bound::default()),
        Linearizability::NotLinearizable(_)
    ));
}

#[test]
fn an_unanswered_operation_may_take_effect_or_not() {
    let mut h = History::new();
    h.pending(0, Reg::Write(7), 0);
    h.done(1, Reg::Read, 10, 20, Some(7));
    assert_eq!(
        order(&check(&Register, &0, &h, Bound::default())),
        vec![0, 1]
    );
    let mut h = History::new();
    h.pending(0, Reg::Write(7), 0);
    h.done(1, Reg::Read, 10, 20, Some(0));
    assert_eq!(order(&check(&Register, &0, &h, Bound::default())), vec![1]);
    // But never before its invocation.
    let mut h = History::new();
    h.done(1, Reg::Read, 0, 5, Some(7));
    h.pending(0, Reg::Write(7), 10);
    assert!(matches!(
        check(&Register, &0, &h, Bound::default()),
        Linearizability::NotLinearizable(_)
    ));
}

#[test]
fn beyond_the_bound_the_answer_is_unknown() {
    let mut h = History::new();
    for c in 0..65 {
        h.done(c, Reg::Write(1), 0, 10, None);
    }
    assert!(matches!(
        check(&Register, &0, &h, Bound::default()),
        Linearizability::Unknown { .. }
    ));
    // Ten fully concurrent writes and a read of a value no write wrote: a small node
    // budget runs out before the search has tried every order.
    let mut h = History::new();
    for c in 0..10 {
        h.done(c, Reg::Write(c as u8 + 1), 0, 100, None);
    }
    h.done(10, Reg::Read, 200, 210, Some(99));
    let tight = Bound { ops: 64, nodes: 50 };
    match check(&Register, &0, &h, tight) {
        Linearizability::Unknown { stats, .. } => assert!(stats.nodes > 50),
        other => panic!("{other:?}"),
    }
    // Memoisation keeps the full search small: the register state after any set of writes
    // is the last write's, so nodes are (set, last) pairs, not orders.
    match check(&Register, &0, &h, Bound::default()) {
        Linearizability::NotLinearizable(e) => {
            assert_eq!(e.prefix.len(), 10);
            // 2^10 sets × their possible last write, far fewer than the 10! orders.
            assert!(e.stats.nodes < 20_000, "{:?}", e.stats);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_response_before_its_invocation_is_a_harness_error_not_a_verdict() {
    let mut h = History::new();
    h.done(0, Reg::Read, 10, 5, Some(0));
    assert!(matches!(
        check(&Register, &0, &h, Bound::default()),
        Linearizability::Unknown { .. }
    ));
}
