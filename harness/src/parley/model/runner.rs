//! Running the Parley model against one binding of a target with proptest: a seeded search
//! over operation sequences, shrinking to a minimal counterexample, then one more replay of
//! that counterexample to record its numbered transcript.
//!
//! proptest drives a synchronous closure; each step's request runs on the caller's tokio
//! runtime through [`tokio::runtime::Handle::block_on`], so [`run_model`] must be called
//! from a blocking thread (`spawn_blocking`), never from inside an async task.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use proptest::test_runner::{TestCaseError, TestError, TestRunner};

use crate::engine::check::CheckCtx;
use crate::engine::check::Stop;
use crate::engine::counterexample::{
    AsFoundCase, Counterexamples, SequenceCase, search_config, search_rng,
};
use crate::engine::verdict::Cause;

use super::clock::SharedClock;
pub use super::driver::InboxBase;
use super::driver::{Driver, Finding, StepLog, inbox_end};
use super::generate::{Focus, sequences};
use super::party::{Actor, EXTENSIONS};
use super::quota::Quota;
use super::state::{Op, World};
use crate::parley::pacing::Pacer;
use crate::parley::preflight::ParleyTarget;
use crate::parley::role::Role;
use crate::transport::TransportKind;

/// A model run's size and seed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    /// Seed of the search (printed; the same seed replays the same sequences).
    pub seed: u64,
    /// Sequences tried.
    pub cases: u32,
    /// Operations per sequence (at most).
    pub steps: usize,
    /// What the sequences concentrate on.
    pub focus: Focus,
    /// Whether a failing sequence is shrunk before it is reported.
    pub found: Counterexamples,
}

impl Budget {
    /// The budget inside `conform run`: a few seconds per binding.
    pub const DEFAULT: Self = Self {
        seed: 10,
        cases: 20,
        steps: 100,
        focus: Focus::Threads,
        found: Counterexamples::Shrunk,
    };

    /// The claims model inside `conform run`.
    pub const CLAIMS: Self = Self {
        focus: Focus::Claims,
        ..Self::DEFAULT
    };

    /// The quota model inside `conform run`: few cases, since the quota role's writes meet
    /// its 429 within the first sequence on a correct target.
    pub const QUOTA: Self = Self {
        focus: Focus::Quota,
        cases: 6,
        steps: 60,
        ..Self::DEFAULT
    };

    /// The budget of `focus`'s model inside `conform run`.
    pub fn of(focus: Focus) -> Self {
        match focus {
            Focus::Threads => Self::DEFAULT,
            Focus::Claims => Self::CLAIMS,
            Focus::Quota => Self::QUOTA,
        }
    }
}

/// A counterexample (shrunk unless `how` says as found).
#[derive(Debug, Clone)]
pub struct Counterexample {
    /// The sequence, up to the step that broke.
    pub ops: Vec<Op>,
    /// The steps of its replay, in order (the last one broke the model).
    pub steps: Vec<StepLog>,
    /// What broke.
    pub mismatch: Finding,
    /// The actors (index = role).
    pub roles: Vec<Role>,
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
    /// Exchanges those operations made.
    pub exchanges: u64,
    /// Wall time of the search.
    pub elapsed: Duration,
    /// Wall time spent waiting for claims to expire (the rest is work).
    pub waited: Duration,
    /// Wall time spent shrinking (from the first failure to the minimal one).
    pub shrink_time: Option<Duration>,
    /// Every step's outcome signature, in the order sent (the same seed sends the same
    /// sequences on each binding, so these are compared across bindings for PV-TR-1).
    pub signatures: Vec<crate::engine::check::StepSignature>,
}

/// Whether the model plays `role` in `focus`: the quota focus plays the quota role
/// (`limited`) alone; the others every role of the profile but that one, whose small quota
/// the quota vectors exhaust at any moment.
fn plays(focus: Focus, role: Role) -> bool {
    match focus {
        Focus::Quota => role == Role::Limited,
        Focus::Threads | Focus::Claims => !matches!(role, Role::Limited | Role::Anonymous),
    }
}

/// The roles the model plays in `focus` ([`plays`]), with their actors.
pub fn actors(target: &ParleyTarget, focus: Focus) -> (Vec<Role>, Vec<Actor>) {
    target
        .identities
        .iter()
        .filter(|(r, _)| plays(focus, **r))
        .map(|(r, id)| {
            let human =
                id.author_kind.as_deref() == Some("human") || id.identity.starts_with("human:");
            let has = |x: &str| id.rights.iter().any(|y| y == x);
            (
                *r,
                Actor {
                    role: r.as_str().to_string(),
                    identity: id.identity.clone(),
                    human,
                    write: has("write") || human,
                    read: has("read") || human,
                    lock: has("lock"),
                    verify: has("verify") || human,
                },
            )
        })
        .unzip()
}

/// Moves every caller's inbox cursor in `base` to the inbox's current end (see
/// [`InboxBase`]): from the start on an empty base, from where it stopped otherwise, so a
/// long-lived target is not paged from its beginning again for every sequence.
pub fn advance_inbox_base(
    handle: &tokio::runtime::Handle,
    target: &ParleyTarget,
    kind: TransportKind,
    roles: &[Role],
    base: &mut InboxBase,
) {
    for (actor, role) in roles.iter().enumerate() {
        for ext in std::iter::once(None).chain((0..EXTENSIONS.len()).map(Some)) {
            let from = base.get(&(actor, ext)).cloned();
            if let Some(c) = handle.block_on(inbox_end(target, kind, *role, ext, from)) {
                base.insert((actor, ext), c);
            }
        }
    }
}

/// Where [`play`] appends the signatures of the steps it sends.
type Signatures = std::sync::Mutex<Vec<crate::engine::check::StepSignature>>;

/// What each sequence's [`Driver`] is made of (the pacer: the run's write budgets).
type DriverParts<'a> = (
    &'a ParleyTarget,
    TransportKind,
    &'a [Role],
    &'a Quota,
    &'a std::sync::Mutex<InboxBase>,
    Option<&'a Pacer>,
    &'a SharedClock,
);

/// A sequence's driver, from the run's parts.
fn driver(drv_parts: DriverParts<'_>) -> Driver<'_> {
    let (target, kind, roles, quota, base, pacer, clock) = drv_parts;
    Driver::new(target, kind, roles, quota, base, clock).paced_by(pacer)
}

/// Plays `ops` once: `Ok` when every step agreed, else the mismatch and the steps so far.
fn play(
    handle: &tokio::runtime::Handle,
    drv_parts: DriverParts<'_>,
    world: World,
    ops: &[Op],
    counter: &Counts,
    seen: Option<&AtomicUsize>,
    sink: &Signatures,
) -> Result<Vec<StepLog>, Box<(Finding, Vec<StepLog>)>> {
    let mut drv = driver(drv_parts);
    let mut world = world;
    for op in ops {
        if let Some(s) = seen {
            s.fetch_add(1, Ordering::SeqCst);
        }
        let Some(op) = world.resolve(op) else {
            continue;
        };
        if CheckCtx::stopped(counter.stop.as_ref()) {
            // Nobody reads this search any more: no request outlives the run.
            return Ok(drv.log);
        }
        counter.steps.fetch_add(1, Ordering::Relaxed);
        let stop = counter.stop.as_ref();
        let Some(result) = handle.block_on(CheckCtx::unless_stopped(stop, drv.step(&world, &op)))
        else {
            return Ok(drv.log);
        };
        let sent = drv.log.last().map_or(0, |l| l.exchanges.len());
        counter.exchanges.fetch_add(sent as u64, Ordering::Relaxed);
        if let Ok(mut all) = sink.lock() {
            all.append(&mut drv.signatures);
        }
        match result {
            Ok(next) => world = next,
            Err(m) => return Err(Box::new((*m, drv.log))),
        }
    }
    Ok(drv.log)
}

/// The run's precision probe ([`Driver::probe_precision`]) by its first actor holding the
/// write and read rights, when its sequences assert claims with a deadline (the claims
/// focus, on a target with the dialectic profile).
fn probe_clock(
    handle: &tokio::runtime::Handle,
    drv_parts: DriverParts<'_>,
    world: &World,
    counter: &Counts,
) {
    let reads_and_writes = |a: &super::party::Actor| a.human || (a.write && a.read);
    let Some(actor) = world.actors.iter().position(reads_and_writes) else {
        return;
    };
    let mut drv = driver(drv_parts);
    let probe = drv.probe_precision(actor);
    if let Some(sent) = handle.block_on(CheckCtx::unless_stopped(counter.stop.as_ref(), probe)) {
        counter.exchanges.fetch_add(sent as u64, Ordering::Relaxed);
    }
}

/// What a model run plays with: the roles of its actors, the empty model and the
/// model's own count of writes (kept across sequences: the target's quota window is).
#[derive(Debug)]
pub struct Cast {
    /// The actors' roles (index = actor).
    pub roles: Vec<Role>,
    /// The model before any step.
    pub world: World,
    /// Write attempts per actor, with the quotas `whoami` showed.
    pub quota: Quota,
}

/// The cast of a target for the thread operations, or why the model cannot run on it
/// (`unsupported`).
pub fn cast(target: &ParleyTarget) -> Result<Cast, String> {
    cast_of(target, Focus::Threads)
}

/// The cast of a target for `focus`, or why the model cannot run on it (`unsupported`).
pub fn cast_of(target: &ParleyTarget, focus: Focus) -> Result<Cast, String> {
    let (roles, actors) = actors(target, focus);
    if !actors.iter().any(|a| a.write) {
        return Err(match focus {
            Focus::Quota => "the target profile has no quota role (`limited`) with the write right",
            Focus::Threads | Focus::Claims => "the target profile has no role with the write right",
        }
        .into());
    }
    let (per_minute, shared) = roles
        .iter()
        .map(|r| {
            let quota = target.identities.get(r).and_then(|id| id.quota_per_minute);
            (quota, *r == Role::Limited)
        })
        .unzip();
    let quota = Quota::new(per_minute, shared);
    // PV-MF-2: body_max_chars is "the one limit that is not the server's to choose": the
    // seed fixes 500 whatever the manifest declares (a declared other value fails
    // manifest/limits, not the model).
    let body_max = Some(500);
    Ok(Cast {
        roles,
        world: World::new(actors, body_max).with_dialectic(target.has_feature("dialectic")),
        quota,
    })
}

/// Plays one generated sequence once against `kind` from the empty model (no search, no
/// shrinking): the steps, or the first disagreement with the steps up to it. The entry of
/// the differential fuzz target (`fuzz-targets/src/differential.rs`), whose operations come
/// from libFuzzer's bytes instead of proptest. Blocking, like [`run_model`].
pub fn play_once(
    handle: &tokio::runtime::Handle,
    target: &ParleyTarget,
    kind: TransportKind,
    cast: &Cast,
    base: &mut InboxBase,
    ops: &[Op],
) -> Result<Vec<StepLog>, Box<(Finding, Vec<StepLog>)>> {
    // The inbox base moves before every sequence: the target keeps every earlier sequence's
    // threads, and an inbox read pages only through what is newer than the base.
    advance_inbox_base(handle, target, kind, &cast.roles, base);
    let shared = std::sync::Mutex::new(std::mem::take(base));
    let parts = (
        target,
        kind,
        cast.roles.as_slice(),
        &cast.quota,
        &shared,
        None,
        &SharedClock::scaled(target.time_scale),
    );
    let played = play(
        handle,
        parts,
        cast.world.clone(),
        ops,
        &Counts::default(),
        None,
        &Signatures::default(),
    );
    // The inbox reads' last cursors are the next sequence's starting points (a poisoned
    // lock leaves none: the next advance pages from the start).
    *base = shared.into_inner().unwrap_or_default();
    played
}

/// What the plays of one run sent: steps, and the exchanges they made (the report counts
/// a model's exchanges though it keeps only its counterexample's transcript).
#[derive(Debug, Default)]
struct Counts {
    steps: AtomicUsize,
    exchanges: AtomicU64,
    /// The run's stop: once set, no further step is sent (see `CheckCtx::stop`).
    stop: Option<Stop>,
}

/// What a run counts while it searches: its start, the steps sent and the signatures of
/// every step (for PV-TR-1's comparison across bindings).
struct Tally {
    started: Instant,
    counter: Counts,
    sink: Signatures,
    /// The target's clock, kept across the run's sequences (one expiry deadline per run).
    clock: SharedClock,
}

impl Tally {
    fn new(scale: crate::transport::budget::TimeScale) -> Self {
        Self {
            started: Instant::now(),
            counter: Counts::default(),
            sink: std::sync::Mutex::new(Vec::new()),
            clock: SharedClock::scaled(scale),
        }
    }

    /// The run's report, its signatures numbered in the order they were sent.
    fn finish(&self, result: ModelResult, shrink_time: Option<Duration>) -> ModelRun {
        let signatures = self
            .sink
            .lock()
            .map(|mut s| {
                let mut all = std::mem::take(&mut *s);
                for (i, sig) in all.iter_mut().enumerate() {
                    sig.step = i + 1;
                }
                all
            })
            .unwrap_or_default();
        ModelRun {
            result,
            steps_run: self.counter.steps.load(Ordering::Relaxed),
            exchanges: self.counter.exchanges.load(Ordering::Relaxed),
            elapsed: self.started.elapsed(),
            waited: self.clock.waited(),
            shrink_time,
            signatures,
        }
    }
}

/// Searches for a sequence on which `kind` disagrees with the model (blocking; see the
/// module docs).
pub fn run_model(
    handle: &tokio::runtime::Handle,
    target: &ParleyTarget,
    kind: TransportKind,
    budget: Budget,
    pacer: Option<&Pacer>,
    stop: Option<&Stop>,
) -> ModelRun {
    let mut tally = Tally::new(target.time_scale);
    tally.counter.stop = stop.cloned();
    let Cast {
        roles,
        world,
        quota,
    } = match cast_for(target, budget.focus) {
        Ok(c) => c,
        Err(unsupported) => return tally.finish(unsupported, None),
    };
    let mut runner = TestRunner::new_with_rng(
        search_config(budget.cases, budget.found.shrink_iters(100_000)),
        search_rng(budget.seed),
    );
    let failures = Failures::default();
    let base = std::sync::Mutex::new(InboxBase::new());
    let parts = (
        target,
        kind,
        roles.as_slice(),
        &quota,
        &base,
        pacer,
        &tally.clock,
    );
    if budget.focus == Focus::Claims {
        // Before the inbox base moves: the probe's thread lies behind every caller's cursor.
        probe_clock(handle, parts, &world, &tally.counter);
    }
    if !CheckCtx::stopped(stop) {
        start_inbox_base(handle, parts);
    }
    let strategy = sequences(world, budget.steps, budget.focus);
    let result = runner.run(&strategy, |(init, ops, seen): SequenceCase<World, Op>| {
        let _case = AsFoundCase::new(budget.found, seen.as_deref());
        if CheckCtx::stopped(stop) {
            // The run stopped and nobody reads this search's result: end it quickly.
            return Ok(());
        }
        let played = play(
            handle,
            parts,
            init.clone(),
            &ops,
            &tally.counter,
            seen.as_deref(),
            &tally.sink,
        );
        match played {
            Ok(_) => Ok(()),
            Err(failure) => Err(failures.record(init, ops, &failure.0)),
        }
    });
    let shrink_time = failures.since_first();
    let outcome = conclude(handle, parts, &tally, result, failures, budget.found);
    tally.finish(
        quota_evidence(outcome, budget.focus, (&roles, &quota)),
        shrink_time,
    )
}

/// The search's outcome as a verdict: a failure is replayed from its minimal sequence (the
/// last that failed) into the counterexample.
fn conclude(
    handle: &tokio::runtime::Handle,
    parts: DriverParts<'_>,
    tally: &Tally,
    result: Result<(), TestError<SequenceCase<World, Op>>>,
    failures: Failures,
    found: Counterexamples,
) -> ModelResult {
    match result {
        Ok(()) => ModelResult::Passed,
        Err(TestError::Abort(reason)) => {
            ModelResult::Error(format!("the search stopped: {reason}"))
        }
        Err(TestError::Fail(reason, value)) => {
            let minimal = failures.last.lock().ok().and_then(|mut l| l.take());
            let (init, generated) = minimal.unwrap_or((value.0, value.1));
            replay_counterexample(handle, parts, tally, init, (&generated, found), &reason)
        }
    }
}

/// The run's cast, or why the model cannot run on this target (`unsupported`: a profile
/// without the roles it needs, or the claims focus on a target without the dialectic).
fn cast_for(target: &ParleyTarget, focus: Focus) -> Result<Cast, ModelResult> {
    let c = cast_of(target, focus)
        .map_err(|reason| ModelResult::Unsupported(Cause::Profile, reason))?;
    if focus == Focus::Claims && !c.world.dialectic {
        let reason = "the manifest does not enable the dialectic profile (PV-DI)";
        return Err(ModelResult::Unsupported(Cause::Target, reason.into()));
    }
    if focus == Focus::Quota
        && quota_actor(&c.roles)
            .and_then(|a| c.quota.bound(a))
            .is_none()
    {
        let reason = "whoami shows the quota role (`limited`) no quota_per_minute above 0";
        return Err(ModelResult::Unsupported(Cause::Profile, reason.into()));
    }
    Ok(c)
}

/// Steps per unit of the quota role's quota in a quota-focus sequence ([`steps_for`]).
pub const QUOTA_STEPS_PER_UNIT: u64 = 7;

/// The steps of `budget`'s sequences against `target`: the quota focus needs room for more
/// than twice the quota role's quota of posts within one sequence (about 45 % of its
/// operations are posts), so its sequences grow with the quota the target declares (below
/// 50 per the pre-flight: at most 350 steps).
pub fn steps_for(target: &ParleyTarget, budget: Budget) -> usize {
    if budget.focus != Focus::Quota {
        return budget.steps;
    }
    let quota = target
        .identities
        .get(&Role::Limited)
        .and_then(|id| id.quota_per_minute)
        .unwrap_or(0);
    budget
        .steps
        .max(usize::try_from(quota.saturating_mul(QUOTA_STEPS_PER_UNIT)).unwrap_or(usize::MAX))
}

/// The actor that plays the quota role (`limited`), if one does.
fn quota_actor(roles: &[Role]) -> Option<usize> {
    roles.iter().position(|r| *r == Role::Limited)
}

/// The quota focus's pass needs evidence: some sequence sent more than twice the quota
/// role's quota of posts within a minute (counted or refused 429), else the bound was never
/// within reach and nothing was judged of its enforcement (`unsupported`, never a pass).
fn quota_evidence(result: ModelResult, focus: Focus, cast: (&[Role], &Quota)) -> ModelResult {
    let (roles, quota) = cast;
    if focus != Focus::Quota || !matches!(result, ModelResult::Passed) {
        return result;
    }
    match quota.reached(quota_actor(roles).unwrap_or(usize::MAX)) {
        Ok(_) => result,
        Err((most, q)) => ModelResult::Unsupported(
            Cause::Profile,
            format!(
                "no sequence sent more than twice the quota role's quota ({q} per minute) of posts within a minute (at most {most}): its enforcement was out of reach (--steps)"
            ),
        ),
    }
}

/// What a search remembers of its failing cases.
#[derive(Default)]
struct Failures {
    /// When the first case failed (shrinking starts then).
    first: std::sync::Mutex<Option<Instant>>,
    /// The last sequence that failed: shrinking only moves to failing sequences, so this is
    /// the minimal one (kept here rather than read back from the value tree).
    last: std::sync::Mutex<Option<(World, Vec<Op>)>>,
}

impl Failures {
    /// Records a failing case; the error that tells the search so.
    fn record(&self, init: World, ops: Vec<Op>, m: &Finding) -> TestCaseError {
        if let Ok(mut f) = self.first.lock() {
            f.get_or_insert_with(Instant::now);
        }
        if let Ok(mut l) = self.last.lock() {
            *l = Some((init, ops));
        }
        TestCaseError::fail(format!("{} ({})", m.message, m.rules.join(", ")))
    }

    /// Time since the first failure (the shrinking's time), if one happened.
    fn since_first(&self) -> Option<Duration> {
        self.first.lock().ok().and_then(|f| f.map(|t| t.elapsed()))
    }
}

/// Moves the run's inbox base past everything the target holds now, before the first
/// sequence: each caller's reads page only through what the run adds.
fn start_inbox_base(handle: &tokio::runtime::Handle, parts: DriverParts<'_>) {
    let (target, kind, roles, _, base, _, _) = parts;
    let mut start = InboxBase::new();
    advance_inbox_base(handle, target, kind, roles, &mut start);
    // Nobody else holds the lock yet; a poisoned one would leave the base empty (reads
    // then page from the start).
    if let Ok(mut b) = base.lock() {
        *b = start;
    }
}

/// Plays the shrunk (or first failing) sequence once more to record its numbered transcript: the
/// counterexample, or an error when it passes this time (a target not deterministic on it).
fn replay_counterexample(
    handle: &tokio::runtime::Handle,
    parts: DriverParts<'_>,
    tally: &Tally,
    init: World,
    (generated, how): (&[Op], Counterexamples),
    reason: &impl std::fmt::Display,
) -> ModelResult {
    // The concrete operations the replay applies (unresolvable picks dropped).
    let mut w = init.clone();
    let ops: Vec<Op> = generated
        .iter()
        .filter_map(|op| {
            let op = w.resolve(op)?;
            w = super::predict::predict(&w, &op).next;
            Some(op)
        })
        .collect();
    let replayed = play(
        handle,
        parts,
        init.clone(),
        generated,
        &tally.counter,
        None,
        &Signatures::default(),
    );
    match replayed {
        Err(failure) => {
            let (mismatch, steps) = *failure;
            // An unshrunk sequence goes on past the step that broke: keep what was played.
            let mut ops = ops;
            ops.truncate(steps.len());
            ModelResult::Failed(Box::new(Counterexample {
                ops,
                steps,
                mismatch,
                roles: parts.2.to_vec(),
                world: init,
                how,
            }))
        }
        Ok(_) => ModelResult::Error(format!(
            "the counterexample passed when replayed (the target is not deterministic for this sequence); the search saw: {reason}"
        )),
    }
}
