//! Running the SSP model against a provider with proptest: a seeded search over operation
//! sequences, shrinking to a minimal counterexample kept with the steps it was observed in.
//!
//! proptest drives a synchronous closure; each step's requests run on the caller's tokio
//! runtime through [`tokio::runtime::Handle::block_on`], so [`run_model`] must be called
//! from a blocking thread (`spawn_blocking`), never from inside an async task.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use proptest::test_runner::{TestCaseError, TestError, TestRunner};

use crate::engine::check::CheckCtx;
use crate::engine::check::Stop;
use crate::engine::counterexample::{AsFoundCase, Counterexamples, search_config, search_rng};
use crate::engine::verdict::Cause;

use super::driver::{Driver, Secrets, SeenIds, StepLog};
use super::generate::sequences;
use super::ops::Op;
use super::setup::{Cast, SetupError, cast};
use super::state::{Mismatch, World};
use crate::engine::target::Target;
use crate::ssp::provider::env::Env;
use crate::ssp::provider::profile::SspProfile;

/// A model run's size and seed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    /// Seed of the search (printed; the same seed replays the same sequences).
    pub seed: u64,
    /// Sequences tried.
    pub cases: u32,
    /// Operations per sequence (at most).
    pub steps: usize,
    /// Whether a failing sequence is shrunk before it is reported.
    pub found: Counterexamples,
}

impl Budget {
    /// The budget inside `conform run`: a few seconds against a local provider.
    pub const DEFAULT: Self = Self {
        seed: 10,
        cases: 12,
        steps: 40,
        found: Counterexamples::Shrunk,
    };
}

/// A counterexample (shrunk unless `how` says as found).
#[derive(Debug, Clone)]
pub struct Counterexample {
    /// The sequence (resolved operations), up to the step that broke.
    pub ops: Vec<Op>,
    /// The steps of its replay, in order (the last one broke the model).
    pub steps: Vec<StepLog>,
    /// What broke.
    pub mismatch: Mismatch,
    /// The model before the first step.
    pub world: World,
    /// Shrunk, or as found.
    pub how: Counterexamples,
}

/// What a model run found.
pub type ModelResult = crate::engine::counterexample::ModelResult<Counterexample>;

/// A finished run.
#[derive(Debug, Clone)]
pub struct ModelRun {
    /// The verdict.
    pub result: ModelResult,
    /// Operations sent (all cases, shrinking included).
    pub steps_run: usize,
    /// Wall time of the search.
    pub elapsed: Duration,
    /// Accepted readings worth reporting, with their rule (deduplicated).
    pub warnings: Vec<(&'static str, String)>,
    /// Time spent pausing between polls of running executions (the rest is work).
    pub waited: Duration,
    /// Exchanges the run made (all cases, shrinking included).
    pub exchanges: u64,
}

/// How each sequence reaches the target.
struct Parts<'a> {
    handle: &'a tokio::runtime::Handle,
    client: crate::transport::Client,
    base: String,
    profile: SspProfile,
    nonce: String,
    secrets: Secrets,
    seen_ids: SeenIds,
    counter: AtomicUsize,
    exchanges: AtomicU64,
    warnings: Mutex<Vec<(&'static str, String)>>,
    waited: Mutex<Duration>,
    /// The run's stop: once set, no further step is sent (see `CheckCtx::stop`).
    stop: Option<Stop>,
}

type Failure = Box<(Mismatch, Vec<StepLog>)>;

impl Parts<'_> {
    fn env(&self) -> Env {
        Env::new(
            self.client.clone(),
            &self.base,
            self.profile.clone(),
            &self.nonce,
        )
    }

    /// Plays `ops` once from `world`: the steps, or the mismatch and the steps so far.
    /// `seen` counts the operations reached (proptest-state-machine shrinks only those).
    fn play(
        &self,
        world: World,
        ops: &[Op],
        seen: Option<&AtomicUsize>,
    ) -> Result<Vec<StepLog>, Failure> {
        let mut drv = Driver::new(self.env(), &self.secrets, &self.seen_ids);
        let mut world = world;
        for op in ops {
            if let Some(s) = seen {
                s.fetch_add(1, Ordering::SeqCst);
            }
            let Some(op) = world.resolve(op) else {
                continue;
            };
            if CheckCtx::stopped(self.stop.as_ref()) {
                // Nobody reads this search any more: no request outlives the run.
                return Ok(drv.log);
            }
            self.counter.fetch_add(1, Ordering::Relaxed);
            let stop = self.stop.as_ref();
            let step = CheckCtx::unless_stopped(stop, drv.step(&world, &op));
            let Some(result) = self.handle.block_on(step) else {
                return Ok(drv.log);
            };
            let sent = std::mem::take(&mut drv.sent);
            self.exchanges.fetch_add(sent, Ordering::Relaxed);
            if let Ok(mut w) = self.waited.lock() {
                *w += std::mem::take(&mut drv.waited);
            }
            if let Ok(mut w) = self.warnings.lock() {
                for x in drv.warnings.drain(..) {
                    if !w.contains(&x) {
                        w.push(x);
                    }
                }
            }
            match result {
                Ok(()) => world = world.next(&op),
                Err(m) => return Err(Box::new((*m, drv.log))),
            }
        }
        Ok(drv.log)
    }
}

/// The target's HTTP client, origin and SSP profile, or why the model cannot run.
pub fn reach(target: &Target) -> Result<(crate::transport::Client, String, SspProfile), String> {
    let profile = match crate::ssp::provider::profile_of_target(target) {
        Ok(Some(p)) => p,
        Ok(None) => {
            return Err(
                "the target profile has no [ssp] table (fixture roles and credentials)".into(),
            );
        }
        Err(e) => return Err(e),
    };
    let client = target.client.renewed().map_err(|e| e.to_string())?;
    Ok((client, target.info.base_url.clone(), profile))
}

/// Searches for a sequence on which `target` disagrees with the model (blocking; see the
/// module docs). `nonce` makes the run's caller ids unique.
pub fn run_model(
    handle: &tokio::runtime::Handle,
    target: &Target,
    budget: Budget,
    nonce: &str,
    stop: Option<&Stop>,
) -> ModelRun {
    let started = Instant::now();
    let (client, base, profile) = match reach(target) {
        Ok(r) => r,
        Err(reason) => {
            let result = ModelResult::Unsupported(Cause::Profile, reason);
            return finished(result, 0, started, Vec::new());
        }
    };
    let mut env = Env::new(client.clone(), &base, profile.clone(), nonce);
    let Cast { world, secrets } = match handle.block_on(cast(&mut env)) {
        Ok(c) => c,
        Err(SetupError::Unsupported(cause, reason)) => {
            return finished(
                ModelResult::Unsupported(cause, reason),
                0,
                started,
                Vec::new(),
            );
        }
        Err(SetupError::Throttled(reason)) => {
            return finished(ModelResult::Error(reason), 0, started, Vec::new());
        }
    };
    let parts = Parts {
        handle,
        client,
        base,
        profile,
        nonce: format!("model-{nonce}"),
        secrets,
        seen_ids: SeenIds::default(),
        counter: AtomicUsize::new(0),
        exchanges: AtomicU64::new(0),
        warnings: Mutex::new(Vec::new()),
        waited: Mutex::new(Duration::ZERO),
        stop: stop.cloned(),
    };
    let result = search(&parts, world, budget, stop);
    let warnings = parts.warnings.lock().map(|w| w.clone()).unwrap_or_default();
    let mut run = finished(
        result,
        parts.counter.load(Ordering::Relaxed),
        started,
        warnings,
    );
    run.waited = parts.waited.lock().map(|w| *w).unwrap_or_default();
    run.exchanges = parts.exchanges.load(Ordering::Relaxed);
    run
}

fn finished(
    result: ModelResult,
    steps_run: usize,
    started: Instant,
    warnings: Vec<(&'static str, String)>,
) -> ModelRun {
    ModelRun {
        result,
        steps_run,
        elapsed: started.elapsed(),
        warnings,
        waited: Duration::ZERO,
        exchanges: 0,
    }
}

/// The last failing run: its start, its generated operations, what broke, its steps.
type LastFailure = Mutex<Option<(World, Vec<Op>, Mismatch, Vec<StepLog>)>>;

/// The seeded search and the shrinking. The counterexample is the last failing run itself
/// (shrinking only moves to failing runs, so it is the minimal one), as observed: not a
/// replay, since a provider's state left by earlier sequences (ids already handed out) can
/// be part of what broke.
fn search(parts: &Parts<'_>, world: World, budget: Budget, stop: Option<&Stop>) -> ModelResult {
    let mut runner = TestRunner::new_with_rng(
        search_config(budget.cases, budget.found.shrink_iters(2_000)),
        search_rng(budget.seed),
    );
    let last: LastFailure = Mutex::new(None);
    let strategy = sequences(world, budget.steps);
    let outcome = runner.run(
        &strategy,
        |(init, ops, seen): (World, Vec<Op>, Option<std::sync::Arc<AtomicUsize>>)| {
            let _case = AsFoundCase::new(budget.found, seen.as_deref());
            if CheckCtx::stopped(stop) {
                // The run stopped and nobody reads this search's result: end it quickly.
                return Ok(());
            }
            let failure = match parts.play(init.clone(), &ops, seen.as_deref()) {
                Ok(_) => return Ok(()),
                Err(f) => *f,
            };
            let (mismatch, steps) = failure;
            let message = format!("{} ({})", mismatch.message, mismatch.rules.join(", "));
            if let Ok(mut l) = last.lock() {
                *l = Some((init, ops, mismatch, steps));
            }
            Err(TestCaseError::fail(message))
        },
    );
    match outcome {
        Ok(()) => ModelResult::Passed,
        Err(TestError::Abort(reason)) => {
            ModelResult::Error(format!("the search stopped: {reason}"))
        }
        Err(TestError::Fail(reason, _)) => {
            let Some((init, generated, mismatch, steps)) =
                last.lock().ok().and_then(|mut l| l.take())
            else {
                return ModelResult::Error(format!(
                    "the search failed without a recorded run: {reason}"
                ));
            };
            if mismatch.rules.is_empty() {
                return ModelResult::Error(mismatch.message);
            }
            // The operations the run sent, resolved, up to the one that broke.
            let mut w = init.clone();
            let ops: Vec<Op> = generated
                .iter()
                .filter_map(|op| {
                    let op = w.resolve(op)?;
                    w = w.next(&op);
                    Some(op)
                })
                .take(steps.len())
                .collect();
            ModelResult::Failed(Box::new(Counterexample {
                ops,
                steps,
                mismatch,
                world: init,
                how: budget.found,
            }))
        }
    }
}
