//! SSP's state-machine model (issue 10): a second, independent reading of `ssp.md` and the
//! seed — discovery per credential × `capability_type` filter, descriptor reads, invocation
//! and its refusals, the forward-only execution lifecycle with the effective timeout,
//! privacy of executions per credential, unique execution ids and the unified error — run
//! against any provider as random operation sequences (proptest + proptest-state-machine),
//! shrunk to a minimal counterexample when the provider disagrees.
//!
//! - `state`: the pure rule book (the World, every prediction, the unified error);
//! - `lifecycle`: the pure tracker of one execution's answers (forward-only, timestamps,
//!   final state, timeout error);
//! - `ops`: the operations of a sequence, resolved against the live model;
//! - `generate`: the sequence strategy (operations by every caller, valid and invalid
//!   arguments) with its preconditions;
//! - `setup`: reading the target's index, descriptors and profile roles before a run;
//! - `driver`: one step against a provider, its answers checked against `state`;
//! - `runner`: the seeded search with shrinking ([`runner::run_model`] is the entry of
//!   `conform model --suite ssp`);
//! - `transcript`: the counterexample as a numbered transcript with curl lines;
//! - `sequences`: counterexamples kept as vectors (`--promote`) and replayed.
//!
//! [`ModelCheck`] is the same search as an ordinary check of `conform run`, with a small
//! fixed budget, or the replay of one promoted sequence. The model never reads the reference implementation's SSP code.

pub mod cli;
pub mod driver;
pub mod generate;
pub mod idle;
pub mod lifecycle;
pub mod ops;
pub mod runner;
pub mod sequences;
pub mod setup;
pub mod state;
pub mod transcript;

use std::collections::BTreeSet;
use std::sync::Arc;

use futures::FutureExt as _;
use futures::future::BoxFuture;

use crate::engine::check::{Bindings, Check, CheckCtx, CheckOutcome};
use crate::engine::finding::{self, Finding, Source};
use crate::engine::requirements::Catalogue;
use crate::engine::verdict::Verdict;
use runner::{Budget, ModelResult, run_model};
use serde_json::json;

/// Check id of the model in `conform run`.
pub const CHECK_ID: &str = "model/ssp-lifecycle";

/// Every requirement the model exercises (the first is the primary one).
pub const REQUIREMENTS: &[&str] = &[
    "SSP-INV-3",
    "SSP-INV-1",
    "SSP-INV-2",
    "SSP-INV-4",
    "SSP-INV-5",
    "SSP-INV-6",
    "SSP-INV-7",
    "SSP-DISC-1",
    "SSP-DISC-2",
    "SSP-DISC-3",
    "SSP-DISC-4",
    "SSP-AUTH-1",
    "SSP-AUTH-2",
    "SSP-AUTH-3",
    "SSP-ERR-1",
    "SSP-ERR-2",
    "SSP-ERR-3",
];

/// The model as one check of the SSP suite: a seeded search, or one promoted sequence
/// replayed.
pub struct ModelCheck {
    id: String,
    title: String,
    requirements: Vec<String>,
    required: BTreeSet<String>,
    mode: Mode,
}

/// What a model check plays.
enum Mode {
    /// A seeded search with this budget.
    Search(Budget),
    /// One sequence, as found (from this file).
    Replay(sequences::Loaded),
}

/// The rules of the model that are required by `catalogue`.
fn required(catalogue: &Catalogue) -> BTreeSet<String> {
    (REQUIREMENTS.iter())
        .filter(|r| catalogue.any_required(&[**r]))
        .map(|r| (*r).to_string())
        .collect()
}

impl ModelCheck {
    /// The check with `budget`, citing the model's IDs the catalogue knows.
    pub fn new(budget: Budget, catalogue: &Catalogue) -> Self {
        let requirements: Vec<String> = REQUIREMENTS
            .iter()
            .filter(|r| catalogue.get(r).is_some())
            .map(|r| (*r).to_string())
            .collect();
        Self {
            id: CHECK_ID.into(),
            title: format!(
                "SSP state-machine model: random sequences of discovery, descriptor reads, invocations and polls by every credential (seed {}, {} cases × ≤{} steps)",
                budget.seed, budget.cases, budget.steps
            ),
            requirements,
            required: required(catalogue),
            mode: Mode::Search(budget),
        }
    }

    /// The replay of one promoted sequence, citing the rules its counterexample broke.
    pub fn replaying(loaded: sequences::Loaded, catalogue: &Catalogue) -> Self {
        let s = &loaded.sequence;
        Self {
            id: format!("model/ssp-sequence/{}", s.id),
            title: s.title.clone(),
            requirements: s.requirements.clone(),
            required: required(catalogue),
            mode: Mode::Replay(loaded),
        }
    }

    fn outcome(&self, run: runner::ModelRun, replay: &str) -> CheckOutcome {
        let made = run.exchanges;
        let mut outcome = self.verdict_of(run, replay);
        outcome.unkept = made.saturating_sub(outcome.exchanges.len() as u64);
        outcome
    }

    fn verdict_of(&self, run: runner::ModelRun, replay: &str) -> CheckOutcome {
        match run.result {
            // The search ran to its end; the warnings were collected on the way, and the
            // verdict names every warning's rule (each one is `warn`, none passed).
            ModelResult::Passed => {
                let warnings: Vec<Box<Finding>> = (run.warnings.iter())
                    .map(|(rule, w)| {
                        Finding::warn("", json!(rule), json!(w), w.clone())
                            .on(&[rule])
                            .by(Source::Model)
                    })
                    .collect();
                // `must` is moot: warnings never fail.
                let v =
                    finding::verdict(&self.id, &self.requirements, false, Ok(()), &warnings, &[]);
                CheckOutcome::verdict(v)
            }
            ModelResult::Unsupported(cause, reason) => {
                CheckOutcome::verdict(Verdict::Unsupported { reason, cause })
            }
            ModelResult::Error(message) => CheckOutcome::verdict(Verdict::HarnessError { message }),
            ModelResult::Failed(cx) => {
                let exchanges: Vec<_> = cx.steps.iter().flat_map(|s| s.exchanges.clone()).collect();
                // A broken rule fails the check only when it is required (else a warning).
                let must = cx.mismatch.rules.iter().any(|r| self.required.contains(r));
                // The numbered steps are the message: they show the sequence that broke.
                let mut f = Box::new(cx.mismatch.clone()).at(cx.steps.len());
                f.message = transcript::render(&cx, replay, false);
                CheckOutcome {
                    verdict: finding::found(&self.id, &self.requirements, must, f, &exchanges),
                    exchanges,
                    steps: Vec::new(),
                    unkept: 0,
                }
            }
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
        match &self.mode {
            Mode::Search(_) => true,
            // Polling an execution to its end waits on the provider's clock.
            Mode::Replay(l) => (l.sequence.ops.iter()).any(|o| matches!(o, ops::Op::Await { .. })),
        }
    }
    fn bindings(&self) -> Bindings {
        Bindings::Once
    }
    fn describe(&self) -> Option<String> {
        Some(match &self.mode {
            Mode::Search(b) => format!(
                "harness/src/ssp/model/: seed {}, {} cases of at most {} steps; replay with `conform model --suite ssp --seed {} --cases {} --steps {}`",
                b.seed, b.cases, b.steps, b.seed, b.cases, b.steps
            ),
            Mode::Replay(l) => format!(
                "{}: {} operation(s) of the SSP model, replayed as written",
                l.file.display(),
                l.sequence.ops.len()
            ),
        })
    }
    fn run<'a>(&'a self, ctx: &'a CheckCtx) -> BoxFuture<'a, CheckOutcome> {
        async move {
            let target = ctx.target.clone();
            let nonce = ctx.run_nonce.clone();
            let stop = ctx.stop.clone();
            let handle = tokio::runtime::Handle::current();
            let (run, replay) = match &self.mode {
                Mode::Search(budget) => {
                    let budget = Budget {
                        found: ctx.counterexamples,
                        ..*budget
                    };
                    let run = tokio::task::spawn_blocking(move || {
                        run_model(&handle, &target, budget, &nonce, stop.as_ref())
                    });
                    (run.await, transcript::replay_command(&ctx.target, budget))
                }
                Mode::Replay(l) => {
                    let ops = l.sequence.ops.clone();
                    let run = tokio::task::spawn_blocking(move || {
                        runner::replay(&handle, &target, &ops, &nonce, stop.as_ref())
                    });
                    (run.await, transcript::rerun_command(&ctx.target, &self.id))
                }
            };
            // A search that ended at the stop judged nothing: never a pass, nor a harness
            // error; a failure it found before the stop is kept.
            let found = matches!(&run, Ok(r) if matches!(r.result, ModelResult::Failed(_)));
            if CheckCtx::stopped(ctx.stop.as_ref()) && !found {
                return crate::engine::execute::interrupted();
            }
            match run {
                Ok(run) => self.outcome(run, &replay),
                Err(e) => CheckOutcome::verdict(Verdict::HarnessError {
                    message: format!("the model run panicked: {e}"),
                }),
            }
        }
        .boxed()
    }
}

/// The model checks of the SSP suite: the search, and one replay per sequence vector of
/// `vectors_dir/ssp/sequences`.
pub fn checks(
    vectors_dir: &std::path::Path,
    catalogue: &Catalogue,
) -> Result<Vec<Arc<dyn Check>>, crate::ssp::vectors::VectorError> {
    let mut out: Vec<Arc<dyn Check>> = vec![Arc::new(ModelCheck::new(Budget::DEFAULT, catalogue))];
    for l in sequences::load_dir(&vectors_dir.join("ssp/sequences"), catalogue)? {
        out.push(Arc::new(ModelCheck::replaying(l, catalogue)));
    }
    Ok(out)
}
