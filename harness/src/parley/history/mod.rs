//! Parley under concurrency (issue 10): small groups of operations sent at once by 2–4
//! clients (each a role of the target profile), recorded as a history with invocation and
//! response instants, and checked for linearizability ([`crate::capability::history`]) against
//! the Parley sequential model — every answer must be one the model allows for *some*
//! sequential order consistent with real time, and the thread read back afterwards must be
//! that order's thread (state, confirmation, origin, awaiting, messages, events).
//!
//! `groups` draws the groups from a seed, `client` sends one step, `spec` is the model as
//! the checker's specification, `run` runs and checks the groups, `explain` renders a
//! failure. [`HistoryCheck`] is the whole as one check of `conform run`.

pub mod client;
pub mod explain;
pub mod groups;
pub mod run;
pub mod spec;

#[cfg(test)]
mod tests;

use std::sync::Arc;

use futures::FutureExt as _;
use futures::future::BoxFuture;

use crate::engine::check::{Bindings, Check, CheckCtx, CheckOutcome};
use crate::engine::finding;
use crate::engine::requirements::Catalogue;
use crate::engine::verdict::Verdict;
use crate::parley::pacing::Pacer;
use crate::parley::preflight::ParleyTarget;
use groups::Settings;
use run::{HistoryRun, run_histories};

/// Check id in `conform run`.
pub const CHECK_ID: &str = "history/parley-concurrency";

/// Every requirement the groups exercise (the first is the primary one).
pub const REQUIREMENTS: &[&str] = &[
    "PV-ST-1", "PV-ST-2", "PV-ST-3", "PV-ST-4", "PV-ST-5", "PV-ST-6", "PV-ST-7", "PV-AU-2",
    "PV-AU-3", "PV-AU-4", "PV-KD-2", "PV-ID-2", "PV-RD-1", "PV-RD-2",
];
// The claim race (PV-DI-3/4/5/7) runs only where the manifest lists `dialectic`: its IDs
// are cited by its failures (`spec::rules`), never claimed as passed on targets without it.

/// The concurrent histories as one check of the Parley suite.
pub struct HistoryCheck {
    id: String,
    title: String,
    requirements: Vec<String>,
    settings: Settings,
}

impl HistoryCheck {
    /// The check with `settings`, citing the IDs the catalogue knows.
    pub fn new(settings: Settings, catalogue: &Catalogue) -> Self {
        Self {
            id: CHECK_ID.into(),
            title: format!(
                "Parley concurrent histories: {} groups of 2–4 clients racing marks, reopens, replies and claim acts, checked for linearizability against the model (seed {})",
                settings.groups, settings.seed
            ),
            requirements: REQUIREMENTS
                .iter()
                .filter(|r| catalogue.get(r).is_some())
                .map(|r| (*r).to_string())
                .collect(),
            settings,
        }
    }

    fn verdict(&self, run: HistoryRun) -> CheckOutcome {
        let made = run.exchanges;
        let mut outcome = self.judge(run);
        outcome.unkept = made.saturating_sub(outcome.exchanges.len() as u64);
        outcome
    }

    fn judge(&self, run: HistoryRun) -> CheckOutcome {
        if let Some(reason) = run.unsupported {
            // No party to run a group with: the profile's gap (issue 26).
            return CheckOutcome::verdict(Verdict::untested(reason));
        }
        if let Some(f) = run.failure {
            let exchanges = &f.run.exchanges;
            return CheckOutcome {
                // A history's finding fails the check, as the models' do.
                verdict: finding::found(&self.id, &self.requirements, true, f.finding, exchanges),
                exchanges: f.run.exchanges,
                steps: Vec::new(),
                unkept: 0,
            };
        }
        if !run.undecided.is_empty() {
            return CheckOutcome::verdict(Verdict::not_offered(format!(
                "{} of {} groups could not be decided ({}); the {} decided were linearizable",
                run.undecided.len(),
                run.groups_run,
                run.undecided.join("; "),
                run.decided
            )));
        }
        CheckOutcome::verdict(Verdict::Pass)
    }
}

impl Check for HistoryCheck {
    fn id(&self) -> &str {
        &self.id
    }
    fn title(&self) -> &str {
        &self.title
    }
    fn requirements(&self) -> &[String] {
        &self.requirements
    }
    fn area(&self) -> &str {
        "history"
    }
    fn long_running(&self) -> bool {
        true
    }
    fn bindings(&self) -> Bindings {
        Bindings::Each(crate::capability::transports::BOTH.to_vec())
    }
    fn describe(&self) -> Option<String> {
        Some(format!(
            "harness/src/parley/history/: seed {}, {} groups per binding, checker bound {} operations / {} nodes per history; the same seed draws the same groups",
            self.settings.seed,
            self.settings.groups,
            self.settings.bound.ops,
            self.settings.bound.nodes
        ))
    }
    fn run<'a>(&'a self, ctx: &'a CheckCtx) -> BoxFuture<'a, CheckOutcome> {
        async move {
            let Some(kind) = ctx.transport.and_then(crate::capability::transports::kind) else {
                return CheckOutcome::verdict(Verdict::HarnessError {
                    message: "the history check runs on a binding".into(),
                });
            };
            let Some(target) = ctx.target.part::<ParleyTarget>() else {
                return CheckOutcome::verdict(Verdict::HarnessError {
                    message: "the Parley pre-flight did not run".into(),
                });
            };
            tracing::info!(
                seed = self.settings.seed,
                groups = self.settings.groups,
                "parley concurrent histories"
            );
            let run = run_histories(target, kind, self.settings, ctx.target.part::<Pacer>()).await;
            self.verdict(run)
        }
        .boxed()
    }
}

/// The history checks of the Parley suite.
pub fn checks(catalogue: &Catalogue) -> Vec<Arc<dyn Check>> {
    vec![Arc::new(HistoryCheck::new(Settings::DEFAULT, catalogue))]
}
