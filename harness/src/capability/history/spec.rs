//! The sequential specification a protocol gives the linearizability checker.

use std::fmt::Debug;
use std::hash::Hash;

/// What one operation does, sequentially: from a state, the allowed successors, each with
/// the result the operation returns on that path.
///
/// Non-determinism is explicit: where the protocol's notes allow several outcomes (two
/// refusal reasons, an accepted or refused repeat), [`Spec::step`] returns every one, and
/// the checker accepts the history if any path explains it. [`Spec::matches`] compares an
/// expected result with an observed one at the level the protocol cares about (an outcome
/// class, never server-chosen ids or times).
pub trait Spec {
    /// The state (memoised by the search: `Eq` and `Hash` must agree).
    type State: Clone + Eq + Hash + Debug;
    /// An operation as sent.
    type Input: Debug;
    /// A result as observed.
    type Output: Debug;
    /// A result as the specification predicts it.
    type Expected: Debug;

    /// Every allowed `(next state, expected result)` of `input` from `state` (at least one;
    /// an empty list means the operation cannot happen there).
    fn step(&self, state: &Self::State, input: &Self::Input) -> Vec<(Self::State, Self::Expected)>;

    /// Whether the observed result is the expected one.
    fn matches(&self, expected: &Self::Expected, observed: &Self::Output) -> bool;
}
