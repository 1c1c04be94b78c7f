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
use crate::engine::counterexample::{
    AsFoundCase, Counterexamples, SequenceCase, search_config, search_rng,
};
use crate::engine::verdict::Cause;

use super::driver::{Driver, Secrets, SeenIds, StepLog};
use super::generate::sequences;
use super::idle::Idle;
use super::ops::Op;
use super::setup::{Cast, SetupError, cast};
use super::state::{Finding, World};
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
    /// Sequences played at once, at most (see [`Budget::LANES`]); the same seed tries the
    /// same sequences whatever the count.
    pub lanes: usize,
}

impl Budget {
    /// The budget inside `conform run`: a few seconds against a local provider. One lane:
    /// there the run's other checks already overlap the model's waits (measured on the
    /// reference, dev build: twelve lanes made the main job 5 % slower, 4.76 s
    /// against 4.52 s median of 9, for no gain on its critical path).
    pub const DEFAULT: Self = Self {
        seed: 10,
        cases: 12,
        steps: 40,
        found: Counterexamples::Shrunk,
        lanes: 1,
    };

    /// Lanes of the model run alone (`conform model --suite ssp`): one lane's wait for an
    /// execution to end overlaps the others' work. Alone in one lane the model spent two
    /// thirds of its wall time pausing between polls (issue 25); measured on the reference
    /// with `conform run`'s twelve sequences, 4 lanes left 42 % of the wall time idle,
    /// 8 lanes 40 %, 12 lanes 14–21 %. A target sees at most this many sequences at once.
    pub const LANES: usize = 12;

    /// The lanes a search with this budget plays in: [`Budget::lanes`], at most one per
    /// case, at least one.
    pub fn lanes_used(self) -> usize {
        let cases = usize::try_from(self.cases).unwrap_or(usize::MAX);
        self.lanes.min(cases).max(1)
    }
}

/// A counterexample (shrunk unless `how` says as found).
#[derive(Debug, Clone)]
pub struct Counterexample {
    /// The sequence, up to the step that broke: its operations resolved, but "the owner"
    /// or "the creator" kept as such (`by: None`), so that another cast resolves its own
    /// (a sequence vector's operations).
    pub ops: Vec<Op>,
    /// The steps of its replay, in order (the last one broke the model).
    pub steps: Vec<StepLog>,
    /// What broke.
    pub mismatch: Finding,
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
    /// Wall time during which every lane was pausing between polls of running executions
    /// (waiting on the provider's clock and doing nothing else; see [`super::idle`]).
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
    /// Pauses of every lane: the run's idle time.
    idle: Idle,
    /// The run's stop: once set, no further step is sent (see `CheckCtx::stop`).
    stop: Option<Stop>,
}

type Failure = Box<(Finding, Vec<StepLog>)>;

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
        let mut drv = Driver::new(self.env(), &self.secrets, &self.seen_ids, &self.idle);
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
    let (parts, world) = match prepare(handle, target, nonce, budget.lanes_used(), stop) {
        Ok(p) => p,
        Err(result) => return finished(result, 0, started, Vec::new()),
    };
    let result = search(&parts, world, budget, stop);
    parts.finish(result, started)
}

/// Plays one fixed sequence (a promoted counterexample, `vectors/ssp/sequences/`) once,
/// as found: its mismatch, or a pass when every step agreed with the model (blocking).
pub fn replay(
    handle: &tokio::runtime::Handle,
    target: &Target,
    ops: &[Op],
    nonce: &str,
    stop: Option<&Stop>,
) -> ModelRun {
    let started = Instant::now();
    let (parts, world) = match prepare(handle, target, nonce, 1, stop) {
        Ok(p) => p,
        Err(result) => return finished(result, 0, started, Vec::new()),
    };
    let played = parts.play(world.clone(), ops, None);
    parts.idle.lane_done();
    let sent = parts.counter.load(Ordering::Relaxed);
    let result = match played {
        // A mismatch seen before a stop is kept (`play` stops with `Ok`).
        Err(f) => {
            let (mismatch, steps) = *f;
            counterexample(
                (world, ops.to_vec(), mismatch, steps),
                // The sequence was shrunk when it was promoted.
                Budget::DEFAULT,
            )
        }
        // Nobody read the end of a stopped replay: it judged nothing.
        _ if CheckCtx::stopped(stop) => ModelResult::Error("the run stopped".into()),
        // An operation this cast cannot send (no such unit, execution or `status_url`) was
        // skipped: the sequence is not the one written, and its pass would show nothing.
        Ok(_) if sent < ops.len() => ModelResult::Unsupported(
            Cause::Target,
            format!(
                "{} of the sequence's {} operations do not apply to this target's cast (its skills, units, callers and executions)",
                ops.len() - sent,
                ops.len()
            ),
        ),
        Ok(_) => ModelResult::Passed,
    };
    parts.finish(result, started)
}

/// The cast of a run against `target` and the parts its sequences share, or the run's
/// result when the model cannot run there.
fn prepare<'a>(
    handle: &'a tokio::runtime::Handle,
    target: &Target,
    nonce: &str,
    lanes: usize,
    stop: Option<&Stop>,
) -> Result<(Parts<'a>, World), ModelResult> {
    let (client, base, profile) =
        reach(target).map_err(|r| ModelResult::Unsupported(Cause::Profile, r))?;
    let mut env = Env::new(client.clone(), &base, profile.clone(), nonce);
    let Cast { world, secrets } = match handle.block_on(cast(&mut env)) {
        Ok(c) => c,
        Err(SetupError::Unsupported(cause, reason)) => {
            return Err(ModelResult::Unsupported(cause, reason));
        }
        Err(SetupError::Throttled(reason)) => return Err(ModelResult::Error(reason)),
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
        idle: Idle::new(lanes),
        stop: stop.cloned(),
    };
    Ok((parts, world))
}

impl Parts<'_> {
    /// The finished run of these parts with `result`.
    fn finish(&self, result: ModelResult, started: Instant) -> ModelRun {
        let warnings = self.warnings.lock().map(|w| w.clone()).unwrap_or_default();
        let mut run = finished(
            result,
            self.counter.load(Ordering::Relaxed),
            started,
            warnings,
        );
        run.waited = self.idle.total();
        run.exchanges = self.exchanges.load(Ordering::Relaxed);
        run
    }
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
type Found = (World, Vec<Op>, Finding, Vec<StepLog>);

/// What one lane ended with: the case it shrank (if it failed), proptest's outcome, and
/// its last failing run.
struct LaneEnd {
    case: Option<usize>,
    outcome: Result<(), TestError<SequenceCase<World, Op>>>,
    last: Option<Found>,
}

/// The seeded search and the shrinking, in [`Budget::lanes`] lanes, each on its own
/// thread. Case `i` of the seeded search runs in lane `i % lanes`. The failure reported is
/// the lowest failing case's, as one lane would have found first; a lane that finds a later
/// one stops shrinking it. The counterexample is the last failing run itself
/// (shrinking only moves to failing runs, so it is the minimal one), as observed: not a
/// replay, since a provider's state left by other sequences (ids already handed out) can
/// be part of what broke.
fn search(parts: &Parts<'_>, world: World, budget: Budget, stop: Option<&Stop>) -> ModelResult {
    let lanes = budget.lanes_used();
    let first_fail = AtomicUsize::new(usize::MAX);
    let ends: Vec<Option<LaneEnd>> = std::thread::scope(|scope| {
        let running: Vec<_> = (0..lanes)
            .map(|index| {
                let (world, first_fail) = (world.clone(), &first_fail);
                scope.spawn(move || {
                    let lane = Lane {
                        index,
                        of: lanes,
                        first_fail,
                    };
                    let end = lane.search(parts, world, budget, stop);
                    parts.idle.lane_done();
                    end
                })
            })
            .collect();
        running.into_iter().map(|h| h.join().ok()).collect()
    });
    let Some(mut ends) = ends.into_iter().collect::<Option<Vec<LaneEnd>>>() else {
        return ModelResult::Error("a lane of the search panicked".into());
    };
    let first = first_fail.load(Ordering::SeqCst);
    if let Some(i) = ends.iter().position(|e| e.case == Some(first)) {
        let end = ends.swap_remove(i);
        return match (end.outcome, end.last) {
            (Err(TestError::Abort(reason)), _) => {
                ModelResult::Error(format!("the search stopped: {reason}"))
            }
            (_, Some(found)) => counterexample(found, budget),
            (_, None) => ModelResult::Error("the search failed without a recorded run".into()),
        };
    }
    match ends.into_iter().find_map(|e| e.outcome.err()) {
        Some(TestError::Abort(reason)) => {
            ModelResult::Error(format!("the search stopped: {reason}"))
        }
        Some(TestError::Fail(reason, _)) => ModelResult::Error(format!(
            "the search failed without a recorded run: {reason}"
        )),
        None => ModelResult::Passed,
    }
}

/// One lane of a search.
struct Lane<'a> {
    index: usize,
    of: usize,
    /// The lowest case any lane has seen fail (`usize::MAX`: none yet).
    first_fail: &'a AtomicUsize,
}

impl Lane<'_> {
    /// Generates every case of the seeded search (generation is cheap), plays this lane's
    /// share, and shrinks its first failure unless a lower case fails in another lane.
    fn search(
        &self,
        parts: &Parts<'_>,
        world: World,
        budget: Budget,
        stop: Option<&Stop>,
    ) -> LaneEnd {
        let mut runner = TestRunner::new_with_rng(
            search_config(budget.cases, budget.found.shrink_iters(2_000)),
            search_rng(budget.seed),
        );
        let last: Mutex<Option<Found>> = Mutex::new(None);
        let calls = AtomicUsize::new(0);
        // The case this lane failed on and now shrinks (`usize::MAX`: none).
        let mine = AtomicUsize::new(usize::MAX);
        let strategy = sequences(world, budget.steps);
        let outcome = runner.run(&strategy, |(init, ops, seen): SequenceCase<World, Op>| {
            let _case = AsFoundCase::new(budget.found, seen.as_deref());
            let call = calls.fetch_add(1, Ordering::SeqCst);
            let shrinking = mine.load(Ordering::SeqCst);
            let case = if shrinking == usize::MAX {
                call
            } else {
                shrinking
            };
            // Another lane's case, a case after a failure already found, or a run that
            // stopped: passes untried (nobody reads its outcome).
            if (shrinking == usize::MAX && call % self.of != self.index)
                || case > self.first_fail.load(Ordering::SeqCst)
                || CheckCtx::stopped(stop)
            {
                return Ok(());
            }
            let (mismatch, steps) = match parts.play(init.clone(), &ops, seen.as_deref()) {
                Ok(_) => return Ok(()),
                Err(f) => *f,
            };
            if shrinking == usize::MAX {
                mine.store(call, Ordering::SeqCst);
                self.first_fail.fetch_min(call, Ordering::SeqCst);
            }
            let message = format!("{} ({})", mismatch.message, mismatch.rules.join(", "));
            if let Ok(mut l) = last.lock() {
                *l = Some((init, ops, mismatch, steps));
            }
            Err(TestCaseError::fail(message))
        });
        let case = mine.load(Ordering::SeqCst);
        LaneEnd {
            case: (case != usize::MAX).then_some(case),
            outcome,
            last: last.into_inner().ok().flatten(),
        }
    }
}

/// The counterexample of a failing run: the operations it sent, resolved, up to the one
/// that broke (a mismatch naming no rule is an error of the run, not a verdict).
fn counterexample(found: Found, budget: Budget) -> ModelResult {
    let (init, generated, mismatch, steps) = found;
    if mismatch.rules.is_empty() {
        return ModelResult::Error(mismatch.message);
    }
    let mut w = init.clone();
    let ops: Vec<Op> = generated
        .iter()
        .filter_map(|op| {
            let resolved = w.resolve(op)?;
            w = w.next(&resolved);
            Some(resolved.owner_kept(op))
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
