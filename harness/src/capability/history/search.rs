//! The bounded Wing–Gong search (Porcupine's variant) and its verdict.
//!
//! A node is the set of operations linearized so far (a `u64` bitset over the history,
//! sorted by invocation) and the specification's state after them. From a node, an
//! operation may come next when it is not linearized yet and no other pending-in-the-search
//! operation *returned* before it was *invoked* (real-time order; equal instants count as
//! overlapping, the lenient reading). For each such operation and each successor the
//! specification allows whose expected result matches the observed one, the search goes
//! deeper; a node already explored (same set, same state) is not explored again. The
//! history is linearizable when a node holds every operation that answered (an operation
//! without answer may be placed anywhere after its invocation, or left out).
//!
//! Bound: at most [`MAX_OPS`] operations, and [`Bound::nodes`] nodes visited; past either
//! the verdict is [`Linearizability::Unknown`]. On a non-linearizable history the
//! explanation is the longest linearizable prefix found and, for every operation that could
//! not be placed after it, why.

use std::collections::HashSet;

use super::{History, Spec};

/// The most operations one history may hold (the linearized set is a `u64`).
pub const MAX_OPS: usize = 64;

/// How far the search may go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bound {
    /// Operations per history (at most [`MAX_OPS`]).
    pub ops: usize,
    /// Nodes the search may expand before giving up.
    pub nodes: u64,
}

impl Default for Bound {
    fn default() -> Self {
        Self {
            ops: MAX_OPS,
            nodes: 100_000,
        }
    }
}

/// What one search did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Nodes expanded (distinct (set, state) pairs; what the budget counts).
    pub nodes: u64,
    /// Nodes skipped because the same (set, state) was explored before.
    pub memo_hits: u64,
}

/// Why one operation could not be placed after the longest linearizable prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stuck {
    /// Index of the operation in the history.
    pub op: usize,
    /// One sentence.
    pub why: String,
}

/// Why a history is not linearizable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Explanation {
    /// The longest linearizable prefix found (indices into the history, in order).
    pub prefix: Vec<usize>,
    /// The state after that prefix, as `Debug` shows it.
    pub state: String,
    /// Every answered operation outside the prefix, with why it cannot come next.
    pub stuck: Vec<Stuck>,
    /// What the search did.
    pub stats: Stats,
}

/// The checker's verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Linearizability {
    /// A sequential order explaining every observed result (indices into the history;
    /// operations without answer that were left out do not appear).
    Linearizable {
        /// The order.
        order: Vec<usize>,
        /// What the search did.
        stats: Stats,
    },
    /// No order explains the history.
    NotLinearizable(Box<Explanation>),
    /// The bound was reached before a decision: says nothing about the target.
    Unknown {
        /// Why.
        reason: String,
        /// What the search did.
        stats: Stats,
    },
}

/// Checks `history` against `spec` from `init`, within `bound`.
pub fn check<S: Spec>(
    spec: &S,
    init: &S::State,
    history: &History<S::Input, S::Output>,
    bound: Bound,
) -> Linearizability {
    let n = history.ops.len();
    let limit = bound.ops.min(MAX_OPS);
    if n > limit {
        return Linearizability::Unknown {
            reason: format!("{n} operations, over the bound of {limit}"),
            stats: Stats::default(),
        };
    }
    if let Some(i) = history
        .ops
        .iter()
        .position(|o| o.response.as_ref().is_some_and(|r| r.at < o.invoked))
    {
        return Linearizability::Unknown {
            reason: format!(
                "operation #{i} returned before it was invoked (a harness clock error)"
            ),
            stats: Stats::default(),
        };
    }
    let mut search = Search::new(spec, history, bound.nodes);
    match search.dfs(0, init.clone()) {
        Ok(true) => Linearizability::Linearizable {
            order: search.path.iter().map(|&k| search.order[k]).collect(),
            stats: search.stats,
        },
        Ok(false) => Linearizability::NotLinearizable(Box::new(search.explain(init))),
        Err(Exhausted) => Linearizability::Unknown {
            reason: format!(
                "the search visited its budget of {} nodes without a decision",
                bound.nodes
            ),
            stats: search.stats,
        },
    }
}

/// The node budget ran out.
struct Exhausted;

struct Search<'a, S: Spec> {
    spec: &'a S,
    history: &'a History<S::Input, S::Output>,
    /// History indices sorted by invocation; the search works on positions in this order.
    order: Vec<usize>,
    invoked: Vec<u64>,
    /// Return instants (`u64::MAX`: no answer).
    returned: Vec<u64>,
    /// Positions of the operations that answered.
    answered: u64,
    budget: u64,
    stats: Stats,
    seen: HashSet<(u64, S::State)>,
    path: Vec<usize>,
    /// The longest prefix reached and its state.
    best: (Vec<usize>, Option<S::State>),
}

impl<'a, S: Spec> Search<'a, S> {
    fn new(spec: &'a S, history: &'a History<S::Input, S::Output>, budget: u64) -> Self {
        let mut order: Vec<usize> = (0..history.ops.len()).collect();
        order.sort_by_key(|&i| (history.ops[i].invoked, i));
        let invoked = order.iter().map(|&i| history.ops[i].invoked).collect();
        let returned: Vec<u64> = order
            .iter()
            .map(|&i| history.ops[i].response.as_ref().map_or(u64::MAX, |r| r.at))
            .collect();
        let answered = (0..order.len())
            .filter(|&k| returned[k] != u64::MAX)
            .fold(0u64, |m, k| m | (1 << k));
        Self {
            spec,
            history,
            order,
            invoked,
            returned,
            answered,
            budget,
            stats: Stats::default(),
            seen: HashSet::new(),
            path: Vec::new(),
            best: (Vec::new(), None),
        }
    }

    /// Positions that may come next after `done`: not linearized, invoked no later than
    /// the earliest return among the others not linearized.
    fn candidates(&self, done: u64) -> impl Iterator<Item = usize> + '_ {
        let earliest = (0..self.order.len())
            .filter(|&k| done & (1 << k) == 0)
            .map(|k| self.returned[k])
            .min()
            .unwrap_or(u64::MAX);
        (0..self.order.len()).filter(move |&k| done & (1 << k) == 0 && self.invoked[k] <= earliest)
    }

    fn dfs(&mut self, done: u64, state: S::State) -> Result<bool, Exhausted> {
        if self.answered & !done == 0 {
            return Ok(true);
        }
        if self.path.len() > self.best.0.len() || self.best.1.is_none() {
            self.best = (self.path.clone(), Some(state.clone()));
        }
        if !self.seen.insert((done, state.clone())) {
            self.stats.memo_hits += 1;
            return Ok(false);
        }
        self.stats.nodes += 1;
        if self.stats.nodes > self.budget {
            return Err(Exhausted);
        }
        let candidates: Vec<usize> = self.candidates(done).collect();
        for k in candidates {
            let op = &self.history.ops[self.order[k]];
            for (next, expected) in self.spec.step(&state, &op.input) {
                let fits = op
                    .response
                    .as_ref()
                    .is_none_or(|r| self.spec.matches(&expected, &r.output));
                if !fits {
                    continue;
                }
                self.path.push(k);
                if self.dfs(done | (1 << k), next)? {
                    return Ok(true);
                }
                self.path.pop();
            }
        }
        Ok(false)
    }

    /// Why each answered operation outside the longest prefix cannot come next.
    fn explain(&self, init: &S::State) -> Explanation {
        let (prefix, state) = (
            &self.best.0,
            self.best.1.clone().unwrap_or_else(|| init.clone()),
        );
        let done = prefix.iter().fold(0u64, |m, &k| m | (1 << k));
        let next: Vec<usize> = self.candidates(done).collect();
        let stuck = (0..self.order.len())
            .filter(|&k| done & (1 << k) == 0 && self.returned[k] != u64::MAX)
            .map(|k| Stuck {
                op: self.order[k],
                why: self.why(k, done, &next, &state),
            })
            .collect();
        Explanation {
            prefix: prefix.iter().map(|&k| self.order[k]).collect(),
            state: format!("{state:?}"),
            stuck,
            stats: self.stats,
        }
    }

    fn why(&self, k: usize, done: u64, next: &[usize], state: &S::State) -> String {
        let op = &self.history.ops[self.order[k]];
        if !next.contains(&k) {
            let before = (0..self.order.len())
                .filter(|&j| done & (1 << j) == 0 && self.returned[j] < self.invoked[k])
                .min_by_key(|&j| self.returned[j])
                .map_or(String::new(), |j| {
                    format!(
                        "#{} (client {}) returned at {} ns, before it was invoked at {} ns",
                        self.order[j],
                        self.history.ops[self.order[j]].client,
                        self.returned[j],
                        self.invoked[k]
                    )
                });
            return format!("real-time order: it must follow {before}");
        }
        let allowed: Vec<_> = self
            .spec
            .step(state, &op.input)
            .into_iter()
            .map(|(_, e)| e)
            .collect();
        let observed = op.response.as_ref().map(|r| &r.output);
        if allowed.is_empty() {
            return "the specification allows no result here".into();
        }
        if let Some(o) = observed
            && allowed.iter().any(|e| self.spec.matches(e, o))
        {
            return format!(
                "{o:?} is allowed here, but no order of the remaining operations follows"
            );
        }
        format!("observed {observed:?}; the specification allows here only {allowed:?}")
    }
}
