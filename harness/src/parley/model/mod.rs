//! Parley's state-machine model (issue 10): a second, independent reading of
//! `parley-v1.md` and the seed — threads (state, proposal vs confirmation, origin, lock,
//! awaiting), authority per role, identity/extensions and self-reply, the refusal order,
//! events, the inbox — run against any target over HTTP and MCP as random operation
//! sequences (proptest + proptest-state-machine), shrunk to a minimal counterexample when
//! the target disagrees. With the `dialectic` profile (`claims`, `claim_steps`): claims,
//! attest/verify/refute by every role, supersede chains and `valid_until` expiry.
//!
//! `party` (actors and the parties they speak as), `dialectic` (claims and their statuses) and
//! `state` (threads, messages, events, the world) hold the model; `predict` (threads) and
//! `claims` (claim acts) are the pure rule book; `generate` the sequence strategy, `driver` one
//! step against a target (`driver/request`, `driver/judge`), `observe` reading answers, `quota` the model's own write count, `runner` the
//! seeded search, `transcript` the failure as a numbered transcript, and `cli` the
//! `conform model` command. The quota focus plays the quota role (`limited`) alone and
//! judges its small quota's enforcement per sequence (PV-TR-5). [`ModelCheck`] is the same
//! search as an ordinary check of
//! `conform run`, with a small fixed budget.

pub mod claim_steps;
pub mod claims;
pub mod cli;
pub mod clock;
pub mod dialectic;
pub mod driver;
pub mod generate;
pub mod observe;
pub mod party;
pub mod predict;
pub mod promote;
pub mod quota;
pub mod resolve;
pub mod runner;
pub mod state;
pub mod transcript;

use std::sync::Arc;

use futures::FutureExt as _;
use futures::future::BoxFuture;

use crate::engine::check::{Bindings, Check, CheckCtx, CheckOutcome};
use crate::engine::finding;
use crate::engine::requirements::Catalogue;
use crate::engine::verdict::Verdict;
use crate::parley::pacing::Pacer;
use crate::parley::preflight::ParleyTarget;
use generate::Focus;
use runner::{Budget, ModelResult, run_model};

/// Check id of the thread model in `conform run`.
pub const CHECK_ID: &str = "model/parley-threads";

/// Check id of the claims model (the dialectic profile) in `conform run`.
pub const CLAIMS_CHECK_ID: &str = "model/parley-claims";

/// Check id of the quota model in `conform run`.
pub const QUOTA_CHECK_ID: &str = "model/parley-quota";

/// The requirements the quota model exercises beyond the thread model's (the first is its
/// primary one).
pub const QUOTA_REQUIREMENTS: &[&str] = &["PV-TR-5", "PV-AU-6"];

/// Every requirement the thread model exercises (the first is the primary one).
pub const REQUIREMENTS: &[&str] = &[
    "PV-ST-1", "PV-ST-2", "PV-ST-3", "PV-ST-4", "PV-ST-5", "PV-ST-6", "PV-ST-7", "PV-AU-1",
    "PV-AU-2", "PV-AU-3", "PV-AU-4", "PV-AU-5", "PV-AU-6", "PV-ID-1", "PV-ID-2", "PV-KD-2",
    "PV-EN-1", "PV-EN-2", "PV-EN-5", "PV-EN-6", "PV-RD-1", "PV-RD-2", "PV-RD-3", "PV-RS-2",
    "PV-TR-2", "PV-TR-3", "PV-TR-4", "PV-TR-5",
];

/// The requirements the claims model exercises beyond the thread model's (the first is
/// its primary one): its sequences also carry every thread operation, so the check cites
/// both lists ([`ModelCheck::new`]).
pub const CLAIM_REQUIREMENTS: &[&str] = &[
    "PV-DI-3", "PV-DI-1", "PV-DI-2", "PV-DI-4", "PV-DI-5", "PV-DI-6", "PV-DI-7", "PV-RS-3",
    "PV-ST-4", "PV-ID-2", "PV-KD-2", "PV-AU-1", "PV-AU-6", "PV-EN-6", "PV-RS-2",
];

/// The model as one check of the Parley suite.
pub struct ModelCheck {
    id: String,
    title: String,
    requirements: Vec<String>,
    derived: Vec<String>,
    budget: Budget,
}

impl ModelCheck {
    /// The check with `budget`, citing the model's IDs the catalogue knows.
    pub fn new(budget: Budget, catalogue: &Catalogue) -> Self {
        let (id, what, own) = match budget.focus {
            Focus::Threads => (
                CHECK_ID,
                "posts, marks, reopens and reads by every role",
                &[][..],
            ),
            Focus::Claims => (
                CLAIMS_CHECK_ID,
                "asserts, attests, verifies, refutes, supersedes and claim reads among thread operations by every role",
                CLAIM_REQUIREMENTS,
            ),
            Focus::Quota => (
                QUOTA_CHECK_ID,
                "posts, marks, reopens and reads by the quota role alone, judging its quota's enforcement",
                QUOTA_REQUIREMENTS,
            ),
        };
        // Every focus plays the thread operations (boundary bodies, marks, reads...): a
        // failure of one of those must cite its own rule, whichever focus found it.
        let mut ids: Vec<&str> = Vec::new();
        for r in own.iter().chain(REQUIREMENTS) {
            if !ids.contains(r) {
                ids.push(r);
            }
        }
        Self {
            id: id.into(),
            title: format!(
                "Parley state-machine model: random sequences of {what} (seed {}, {} cases × ≤{} steps)",
                budget.seed,
                budget.cases,
                steps_in_words(budget)
            ),
            requirements: ids
                .iter()
                .filter(|r| catalogue.get(r).is_some())
                .map(|r| (*r).to_string())
                .collect(),
            // PV-TR-1 compares the bindings' steps up to the first quota refusal; the quota
            // role's first write may already meet one (the quota vectors share its token),
            // which leaves the quota focus nothing to compare.
            derived: if budget.focus == Focus::Quota {
                Vec::new()
            } else {
                vec!["PV-TR-1".into()]
            },
            budget,
        }
    }
}

impl Check for ModelCheck {
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
        "model"
    }
    fn long_running(&self) -> bool {
        true
    }
    fn bindings(&self) -> Bindings {
        Bindings::Each(crate::capability::transports::BOTH.to_vec())
    }
    fn compare_transports(&self) -> bool {
        !self.derived.is_empty()
    }
    fn derived_requirements(&self) -> &[String] {
        &self.derived
    }
    fn describe(&self) -> Option<String> {
        let b = self.budget;
        // The quota focus's steps grow with the target's quota (`runner::steps_for`), and
        // `conform model` grows them the same way only when `--steps` is not given.
        let steps = match b.focus {
            Focus::Quota => String::new(),
            _ => format!(" --steps {}", b.steps),
        };
        Some(format!(
            "harness/src/parley/model/: seed {}, {} cases of at most {} steps; replay with `conform model --seed {} --cases {}{steps} --focus {}`",
            b.seed,
            b.cases,
            steps_in_words(b),
            b.seed,
            b.cases,
            b.focus.as_str()
        ))
    }
    fn run<'a>(&'a self, ctx: &'a CheckCtx) -> BoxFuture<'a, CheckOutcome> {
        async move {
            let Some(kind) = ctx.transport.and_then(crate::capability::transports::kind) else {
                return CheckOutcome::verdict(Verdict::HarnessError {
                    message: "the model runs on a binding".into(),
                });
            };
            let target = ctx.target.clone();
            let mut budget = Budget {
                found: ctx.counterexamples,
                ..self.budget
            };
            if let Some(p) = target.part::<ParleyTarget>() {
                budget.steps = runner::steps_for(p, budget);
            }
            let handle = tokio::runtime::Handle::current();
            let stop = ctx.stop.clone();
            let run = tokio::task::spawn_blocking(move || {
                target.part::<ParleyTarget>().map(|p| {
                    run_model(
                        &handle,
                        p,
                        kind,
                        budget,
                        target.part::<Pacer>(),
                        stop.as_ref(),
                    )
                })
            })
            .await;
            // A search that ended at the stop judged nothing: never a pass, nor a harness
            // error; a failure it found before the stop is kept.
            let found = matches!(&run, Ok(Some(r)) if matches!(r.result, ModelResult::Failed(_)));
            if CheckCtx::stopped(ctx.stop.as_ref()) && !found {
                return crate::engine::execute::interrupted();
            }
            let run = match run {
                Ok(Some(r)) => r,
                Ok(None) => {
                    return CheckOutcome::verdict(Verdict::HarnessError {
                        message: "the Parley pre-flight did not run".into(),
                    });
                }
                Err(e) => {
                    return CheckOutcome::verdict(Verdict::HarnessError {
                        message: format!("the model run panicked: {e}"),
                    });
                }
            };
            let replay = transcript::replay_command(&ctx.target, kind, budget);
            self.outcome(run, &replay)
        }
        .boxed()
    }
}

impl ModelCheck {
    /// The check's outcome from the model's run: a counterexample's numbered steps are its
    /// transcript; the exchanges not kept are counted.
    fn outcome(&self, run: super::model::runner::ModelRun, replay: &str) -> CheckOutcome {
        let steps = run.signatures;
        let made = run.exchanges;
        let mut outcome = match run.result {
            ModelResult::Passed => CheckOutcome {
                verdict: Verdict::Pass,
                exchanges: Vec::new(),
                steps,
                unkept: 0,
            },
            ModelResult::Unsupported(cause, reason) => {
                CheckOutcome::verdict(Verdict::Unsupported { reason, cause })
            }
            ModelResult::Error(message) => CheckOutcome::verdict(Verdict::HarnessError { message }),
            ModelResult::Failed(cx) => {
                let exchanges: Vec<_> = cx.steps.iter().flat_map(|s| s.exchanges.clone()).collect();
                // The numbered steps are the message: they show the sequence that broke.
                let mut f = Box::new(cx.mismatch.clone()).at(cx.steps.len());
                f.message = transcript::render(&cx, replay, false);
                CheckOutcome {
                    // The Parley models' findings fail the check whatever the rule's level,
                    // as they always have (the SSP model's warn below a required rule).
                    verdict: finding::found(&self.id, &self.requirements, true, f, &exchanges),
                    exchanges,
                    steps,
                    unkept: 0,
                }
            }
        };
        outcome.unkept = made.saturating_sub(outcome.exchanges.len() as u64);
        outcome
    }
}

/// A sequence's most steps: the budget's, or for the quota focus what the target's quota
/// makes of it (`runner::steps_for`), known only once the target is.
fn steps_in_words(budget: Budget) -> String {
    match budget.focus {
        Focus::Quota => format!(
            "max({}, {} × the quota role's quota)",
            budget.steps,
            runner::QUOTA_STEPS_PER_UNIT
        ),
        _ => budget.steps.to_string(),
    }
}

/// The model checks of the Parley suite.
pub fn checks(catalogue: &Catalogue) -> Vec<Arc<dyn Check>> {
    [Focus::Threads, Focus::Claims, Focus::Quota]
        .into_iter()
        .map(|f| Arc::new(ModelCheck::new(Budget::of(f), catalogue)) as Arc<dyn Check>)
        .collect()
}
