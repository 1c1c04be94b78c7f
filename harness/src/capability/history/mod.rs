//! Concurrent histories checked for linearizability (issue 10), protocol-free.
//!
//! A [`History`] records operations sent by several clients at once: each with its client,
//! the instant it was invoked, the instant its answer came back (monotonic, nanoseconds
//! from the history's start) and what was observed — or no answer at all (a timeout), in
//! which case the operation may have taken effect at any point after its invocation, or
//! never. A protocol states what one operation does to a state in a [`Spec`] (possibly
//! several allowed successors where its notes leave a point open), and [`check`] searches
//! for a *linearization*: one sequential order, consistent with real time (an operation
//! that returned before another was invoked comes first), in which every observed result
//! is one the sequential specification allows.
//!
//! The search ([`search`]) is Wing & Gong's, as Porcupine runs it: depth-first over the
//! operations that may come next, memoising the (linearized set, state) pairs already
//! explored, backtracking on a mismatch. It is exponential in the worst case, so it is
//! bounded ([`Bound`]: at most 64 operations per history — the linearized set is a `u64`
//! bitset — and a node budget): beyond the bound the answer is [`Linearizability::Unknown`],
//! which a check reports as `unsupported`, never as a failure.
//!
//! - `spec`: the sequential specification a protocol implements;
//! - `search`: the bounded search and its verdict, with the explanation of a failure.

pub mod search;
pub mod spec;

use std::time::Instant;

pub use search::{Bound, Explanation, Linearizability, Stats, Stuck, check};
pub use spec::Spec;

/// What came back for one operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response<O> {
    /// When the answer arrived (nanoseconds from the history's start).
    pub at: u64,
    /// What was observed.
    pub output: O,
}

/// One operation of a history.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Operation<I, O> {
    /// The client that sent it (a client sends one operation at a time).
    pub client: usize,
    /// What was asked.
    pub input: I,
    /// When it was sent (nanoseconds from the history's start).
    pub invoked: u64,
    /// The answer, or `None` when none came (it may or may not have taken effect).
    pub response: Option<Response<O>>,
}

/// A concurrent history: operations in any order (the checker sorts by invocation).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct History<I, O> {
    /// The operations.
    pub ops: Vec<Operation<I, O>>,
}

impl<I, O> Default for History<I, O> {
    fn default() -> Self {
        Self { ops: Vec::new() }
    }
}

impl<I, O> History<I, O> {
    /// An empty history.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a completed operation (hand-written histories, tests).
    pub fn done(&mut self, client: usize, input: I, invoked: u64, returned: u64, output: O) {
        self.ops.push(Operation {
            client,
            input,
            invoked,
            response: Some(Response {
                at: returned,
                output,
            }),
        });
    }

    /// Adds an operation that never answered.
    pub fn pending(&mut self, client: usize, input: I, invoked: u64) {
        self.ops.push(Operation {
            client,
            input,
            invoked,
            response: None,
        });
    }
}

/// The monotonic clock of one history: instants as nanoseconds from its start.
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    start: Instant,
}

impl Default for Clock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock {
    /// A clock starting now.
    pub fn new() -> Self {
        Self {
            start: Instant::now(),
        }
    }

    /// Nanoseconds since the start (saturating: a history lasting 584 years is clipped).
    pub fn now(&self) -> u64 {
        u64::try_from(self.start.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }
}

#[cfg(test)]
mod tests;
