//! What every protocol's state-machine model reports when a target disagrees with it: the
//! broken postcondition (a [`Finding`] from [`mismatch`], with its requirement IDs), the steps of the failing
//! sequence ([`StepLog`]; shrunk unless the run takes it as found, [`Counterexamples`]) and
//! the numbered transcript people read ([`render`]).

use std::fmt::Write as _;

use serde_json::Value;

use crate::engine::finding::{Finding, Source};
use crate::engine::repro::{compact, curl_command};
use crate::transport::Exchange;

/// Why a step disagreed with the model: a [`Finding`] of the model on `rules` (the
/// requirement IDs of the broken postcondition), `expected` being what the model allowed
/// and `observed` what the target did.
pub fn mismatch(
    rules: &[&str],
    message: impl Into<String>,
    expected: Value,
    observed: Value,
) -> Box<Finding> {
    Finding::broke(Source::Model, rules, message, expected, observed)
}

/// One step as the transcript shows it.
#[derive(Debug, Clone)]
pub struct StepLog {
    /// The operation in words.
    pub text: String,
    /// The answer in short.
    pub answer: Value,
    /// The requests made.
    pub exchanges: Vec<Exchange>,
}

/// The numbered transcript of a counterexample of `model` (its `ops` operations, `how`
/// found, the `steps` played up to the disagreement), the broken rule and the replay
/// command; `curl` adds the curl line of every request.
pub fn render(
    model: &str,
    (ops, how): (usize, Counterexamples),
    steps: &[StepLog],
    m: &Finding,
    replay: &str,
    curl: bool,
) -> String {
    let mut out = String::new();
    // Writing to a String cannot fail: the results below are ignored on purpose.
    let _ = writeln!(
        out,
        "{model} disagrees at step {} of {} {} {ops}-step sequence [{}]: {}",
        steps.len(),
        if how == Counterexamples::AsFound {
            "an"
        } else {
            "a"
        },
        how.adjective(),
        m.rules.join(", "),
        m.message
    );
    for (i, s) in steps.iter().enumerate() {
        let _ = writeln!(
            out,
            "  {:>3}. {}  →  {}",
            i + 1,
            s.text,
            compact(&s.answer, 160)
        );
        if curl {
            for ex in &s.exchanges {
                let _ = writeln!(out, "       {}", curl_command(ex));
            }
        }
    }
    let _ = writeln!(out, "  expected: {}", compact(&m.expected, 400));
    let _ = writeln!(out, "  observed: {}", compact(&m.observed, 400));
    let _ = write!(out, "  replay:   {replay}");
    out
}

/// What a model run found, `C` being the protocol's counterexample.
#[derive(Debug, Clone)]
pub enum ModelResult<C> {
    /// Every sequence agreed with the model.
    Passed,
    /// A sequence disagreed; here it is (shrunk, unless the run took it as found).
    Failed(Box<C>),
    /// The target or the profile lacks what the model needs (`unsupported`, never a pass;
    /// the cause decides between `n/a` and `untested`).
    Unsupported(crate::engine::verdict::Cause, String),
    /// The search itself could not run (no answer, too many rejected sequences, a
    /// counterexample that passed when replayed).
    Error(String),
}

/// Whether a model shrinks the failing sequence it found before reporting it.
///
/// Shrinking replays the failing sequence many times against the target (with every wait
/// it holds, such as a claim's expiry) to find a minimal one; a person reading the report
/// needs that. A caller that only asks *whether* a rule is broken (suite power: is a seeded
/// fault caught on its IDs) discards the counterexample and takes the first one found: the
/// verdict and the broken rule are those of a sequence that really failed either way.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Counterexamples {
    /// Shrunk to a minimal sequence (`conform run`, `conform model`).
    #[default]
    Shrunk,
    /// The first failing sequence, as found.
    AsFound,
}

impl Counterexamples {
    /// How many shrink steps a search may take: `limit` when shrinking, none otherwise.
    pub fn shrink_iters(self, limit: u32) -> u32 {
        match self {
            Self::Shrunk => limit,
            Self::AsFound => 0,
        }
    }

    /// How the transcript names the sequence.
    pub fn adjective(self) -> &'static str {
        match self {
            Self::Shrunk => "shrunk",
            Self::AsFound => "unshrunk",
        }
    }
}

/// Held across one case of a search without shrinking: proptest-state-machine counts the
/// transitions a case saw (`seen`) and panics when asked for the failing value while that
/// count is set (only a shrink step resets it, and none comes). Dropping the guard zeroes
/// it after the case, also when the case panicked; the reported value is then the whole
/// generated sequence, which the caller cuts to the steps played.
pub struct AsFoundCase<'a>(pub Option<&'a std::sync::atomic::AtomicUsize>);

impl Drop for AsFoundCase<'_> {
    fn drop(&mut self) {
        if let Some(seen) = self.0 {
            seen.store(0, std::sync::atomic::Ordering::SeqCst);
        }
    }
}

impl<'a> AsFoundCase<'a> {
    /// A guard for `seen` when `found` is [`Counterexamples::AsFound`], else none.
    pub fn new(found: Counterexamples, seen: Option<&'a std::sync::atomic::AtomicUsize>) -> Self {
        Self(seen.filter(|_| found == Counterexamples::AsFound))
    }
}

/// One generated case of a model's search (proptest-state-machine's `Sequential` value):
/// the start state, the operations, and the count of operations reached (what it shrinks).
pub type SequenceCase<S, T> = (
    S,
    Vec<T>,
    Option<std::sync::Arc<std::sync::atomic::AtomicUsize>>,
);

/// The seeded random source of a model's search: the same seed draws the same sequences.
pub fn search_rng(seed: u64) -> proptest::test_runner::TestRng {
    let mut bytes = [0u8; 32];
    for (i, chunk) in bytes.chunks_mut(8).enumerate() {
        chunk.copy_from_slice(&(seed.wrapping_add(i as u64)).to_le_bytes());
    }
    proptest::test_runner::TestRng::from_seed(proptest::test_runner::RngAlgorithm::ChaCha, &bytes)
}

/// A model search's settings: `cases` sequences, no persistence file, no fork or
/// per-case timeout, shrinking bounded by a minute and by `shrink_iters` steps.
pub fn search_config(cases: u32, shrink_iters: u32) -> proptest::test_runner::Config {
    proptest::test_runner::Config {
        cases,
        failure_persistence: None,
        max_shrink_iters: shrink_iters,
        max_shrink_time: 60_000,
        max_global_rejects: 100_000,
        max_local_rejects: 100_000,
        fork: false,
        timeout: 0,
        verbose: 0,
        ..proptest::test_runner::Config::default()
    }
}
