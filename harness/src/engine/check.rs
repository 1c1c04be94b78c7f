//! Checks: the one trait every kind of check implements (golden vectors, scripted checks,
//! state-machine models, fuzz campaigns), and what running one produces.
//!
//! A check has a stable id, cites requirement IDs and runs asynchronously against a target,
//! yielding a [`Verdict`]. The engine plans, executes and judges checks without knowing
//! which protocol or which kind of check they are.

use std::sync::Arc;

use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::binding::Binding;
use super::finding::{self, Finding, Step};
use super::target::Target;
use super::verdict::Verdict;
use crate::transport::Exchange;

/// The binding-independent outcome of one step of a check, recorded so that a protocol can
/// compare the same check across its bindings (Parley's PV-TR-1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepSignature {
    /// 1-based step number.
    pub step: usize,
    /// `success`, `refusal`, `jsonrpc_error`, `no_response`, `other`, or [`UNJUDGED`].
    pub class: String,
    /// Refusal status (from `error.status`).
    #[serde(default)]
    pub status: Option<u64>,
    /// Refusal reason.
    #[serde(default)]
    pub reason: Option<String>,
    /// Success body with ids, timestamps and cursors normalised (`None` = not compared).
    #[serde(default)]
    pub body: Option<Value>,
}

/// The class of a step whose outcome the harness could not judge (its own timing): the
/// runs of the two bindings part there, so PV-TR-1 compares the steps before it only.
pub const UNJUDGED: &str = "unjudged";

/// The class of a step the target did not answer (within the per-request timeout): no
/// outcome to compare either.
pub const NO_RESPONSE: &str = "no_response";

/// Where a check runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Bindings {
    /// Once per listed binding the target offers and the run selects.
    Each(Vec<Binding>),
    /// Once, independent of transports.
    Once,
}

/// A request to stop a run early (Ctrl-C): set once, seen by every waiter.
pub type Stop = tokio::sync::watch::Receiver<bool>;

/// Everything a check may use while running.
#[derive(Clone)]
pub struct CheckCtx {
    /// The target.
    pub target: Arc<Target>,
    /// The binding of this run of the check (`None` for `Bindings::Once`).
    pub transport: Option<Binding>,
    /// Unique nonce of this run (`$run`).
    pub run_nonce: String,
    /// Whether a model shrinks what it found ([`RunOptions::counterexamples`]).
    ///
    /// [`RunOptions::counterexamples`]: super::run::RunOptions::counterexamples
    pub counterexamples: super::counterexample::Counterexamples,
    /// Set when the run stops early: the check's task is aborted then, but work it handed
    /// to a blocking thread (a model's search) checks it between steps and races each step
    /// against it ([`CheckCtx::unless_stopped`]), so that it ends as well.
    pub stop: Option<Stop>,
}

impl CheckCtx {
    /// Whether the run was asked to stop.
    pub fn stopped(stop: Option<&Stop>) -> bool {
        stop.is_some_and(|s| *s.borrow())
    }

    /// `work`'s result, or `None` as soon as the run stops (a step of a blocking search
    /// may wait long: an execution's polling, a quota window).
    pub async fn unless_stopped<T>(
        stop: Option<&Stop>,
        work: impl std::future::Future<Output = T>,
    ) -> Option<T> {
        let Some(stop) = stop else {
            return Some(work.await);
        };
        let mut stop = stop.clone();
        tokio::select! {
            biased;
            // A closed channel (the run ended) disables this branch: the work goes on.
            Ok(_) = stop.wait_for(|s| *s) => None,
            t = work => Some(t),
        }
    }
}

/// What running a check produced.
#[derive(Debug, Clone)]
pub struct CheckOutcome {
    /// The verdict.
    pub verdict: Verdict,
    /// Every exchange made.
    pub exchanges: Vec<Exchange>,
    /// Per-step outcome signatures (vectors; compared across transports for PV-TR-1).
    pub steps: Vec<StepSignature>,
    /// Exchanges made but not kept in `exchanges` (a model or a history keeps only its
    /// counterexample's transcript): counted, so no check that talked to the target reports
    /// zero exchanges (issue 26).
    pub unkept: u64,
}

impl CheckOutcome {
    /// An outcome with only a verdict.
    pub fn verdict(verdict: Verdict) -> Self {
        Self {
            verdict,
            exchanges: Vec::new(),
            steps: Vec::new(),
            unkept: 0,
        }
    }

    /// The outcome of a scripted check `check` (citing `requirements`; `must` = a required
    /// rule is at stake) that ended with `result` after collecting `warnings`: its
    /// [`finding::verdict`] and the `exchanges` it made.
    pub fn scripted(
        check: &str,
        requirements: &[String],
        must: bool,
        result: Step<()>,
        warnings: &[Box<Finding>],
        exchanges: Vec<Exchange>,
    ) -> Self {
        let verdict = finding::verdict(check, requirements, must, result, warnings, &exchanges);
        Self {
            verdict,
            exchanges,
            steps: Vec::new(),
            unkept: 0,
        }
    }

    /// Every exchange the check made, kept or not.
    pub fn exchange_count(&self) -> u64 {
        self.exchanges.len() as u64 + self.unkept
    }
}

/// One check of a suite.
pub trait Check: Send + Sync {
    /// Stable id (vector id, `PV-TR-1a/bindings`, …): the `--filter` key and baseline key.
    fn id(&self) -> &str;
    /// One line.
    fn title(&self) -> &str;
    /// Cited requirement IDs (first = primary).
    fn requirements(&self) -> &[String];
    /// Area for grouping (file area for vectors).
    fn area(&self) -> &str {
        ""
    }
    /// `Some(reason)` when the notes fix nothing for what the check looks at but it is still
    /// worth having: its violations are warnings whatever the cited levels (issue 14).
    fn advisory(&self) -> Option<&str> {
        None
    }
    /// True for a check that tests conform itself (its validator, its consumer) rather than
    /// the target: its verdict is reported but is no evidence about the target, so it stays
    /// out of the requirement matrix (issue 26: no pass without evidence).
    fn self_test(&self) -> bool {
        false
    }
    /// Run alone (no concurrent checks).
    fn exclusive(&self) -> bool {
        false
    }
    /// Takes seconds where most checks take milliseconds (a model search, a history, a wait
    /// on the target's clock): started before the short checks, so its time overlaps theirs
    /// instead of trailing the run.
    fn long_running(&self) -> bool {
        false
    }
    /// Where it runs.
    fn bindings(&self) -> Bindings;
    /// Whether its outcomes on the two transports must agree (its protocol judges the
    /// comparison after the run, e.g. Parley's PV-TR-1).
    fn compare_transports(&self) -> bool {
        false
    }
    /// Requirement IDs judged from this check's outcomes by a derived check of its protocol
    /// (the cross-binding comparison): a fault on those IDs is shown by running this check.
    fn derived_requirements(&self) -> &[String] {
        &[]
    }
    /// A few lines for `conform explain <check id>` (what the check does, where it lives).
    fn describe(&self) -> Option<String> {
        None
    }
    /// What one run of this check (on one binding) draws from budgets its protocol paces,
    /// by budget name (a Parley vector: its writes per role, under PV-TR-5 quotas) — for
    /// the duration estimate printed before a run ([`crate::capability::estimate`]).
    fn budget_use(&self) -> Vec<(String, u64)> {
        Vec::new()
    }
    /// Runs the check. Must not panic; every wait is bounded by the transports' timeouts.
    fn run<'a>(&'a self, ctx: &'a CheckCtx) -> BoxFuture<'a, CheckOutcome>;
}
