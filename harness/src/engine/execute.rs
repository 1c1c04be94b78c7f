//! Execute: bounded concurrent runs of the planned jobs.
//!
//! Shared jobs run `jobs` at a time, long-running ones first (their waits then overlap the
//! short checks instead of trailing them: the run's wall time is its longest check, not
//! that check's start plus its length); exclusive ones run alone afterwards, one by one
//! (they observe global state such as a quota window). A panicking check becomes a harness
//! error, never a lost result.

use std::sync::Arc;
use std::time::Instant;

use futures::FutureExt as _;
use tokio::sync::Semaphore;

use super::check::{CheckCtx, CheckOutcome, Stop};
use super::counterexample::Counterexamples;
use super::plan::Job;
use super::target::Target;
use super::verdict::Verdict;

/// What one job produced.
pub struct Done {
    /// Position of the job in the plan.
    pub order: usize,
    /// The check's outcome.
    pub outcome: CheckOutcome,
    /// Wall time of the check.
    pub duration_ms: u64,
}

/// How long a stopped run waits for its running checks before aborting them.
const STOP_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

/// Why a job has no outcome of its own after a stop.
pub const INTERRUPTED: &str = "interrupted: the run was stopped before this check finished";

/// Runs `jobs` against `target`; `on_done` sees each result as it arrives. Returns the
/// outcomes in plan order (a job whose task vanished is a harness error). When `stop` is
/// set, no job starts any more, the running ones are aborted, and every job without an
/// outcome is `skipped` as [`INTERRUPTED`]: the results so far are kept, none is lost.
pub async fn execute(
    target: &Arc<Target>,
    jobs: &[Job],
    concurrency: usize,
    run_nonce: &str,
    counterexamples: Counterexamples,
    stop: Option<Stop>,
    mut on_done: impl FnMut(&Done),
) -> Vec<Done> {
    let sem = Arc::new(Semaphore::new(concurrency.max(1)));
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Done>();
    let cancel = stop.clone();
    // A job takes its permit before it is spawned, in the order given: tokio's scheduler
    // would otherwise let any waiting task take a freed permit first.
    let spawn_job = |job: &Job, permit: tokio::sync::OwnedSemaphorePermit| {
        let ctx = CheckCtx {
            target: target.clone(),
            transport: job.transport,
            run_nonce: run_nonce.to_string(),
            counterexamples,
            stop: cancel.clone(),
        };
        spawn(job, permit, ctx, tx.clone())
    };
    let mut running: Vec<tokio::task::AbortHandle> = Vec::new();
    // Without a stop, one that never fires (its sender lives as long as this call).
    let (_never, idle) = tokio::sync::watch::channel(false);
    let mut stop = stop.unwrap_or(idle);
    let mut slots: Vec<Option<Done>> = (0..jobs.len()).map(|_| None).collect();
    let (exclusive, mut shared): (Vec<&Job>, Vec<&Job>) =
        jobs.iter().partition(|j| j.check.exclusive());
    // Stable: long-running first, plan order within each group.
    shared.sort_by_key(|j| !j.check.long_running());
    let mut next = shared.iter().peekable();
    let mut received = 0;
    let mut stopped = *stop.borrow();
    while received < shared.len() && !stopped {
        // While jobs wait, a freed permit goes to the next of them; results arrive meanwhile.
        let got = match next.peek() {
            Some(job) => tokio::select! {
                biased;
                Ok(()) = stop.changed() => { stopped = *stop.borrow(); continue; }
                d = rx.recv() => d,
                permit = sem.clone().acquire_owned() => {
                    let Ok(permit) = permit else { break };
                    running.push(spawn_job(job, permit));
                    next.next();
                    continue;
                }
            },
            None => tokio::select! {
                biased;
                Ok(()) = stop.changed() => { stopped = *stop.borrow(); continue; }
                d = rx.recv() => d,
            },
        };
        let Some(d) = got else { break };
        received += 1;
        record(d, &mut slots, &mut on_done);
    }
    // Exclusive jobs one at a time, after the others, each alone on the target.
    for job in exclusive {
        if stopped {
            break;
        }
        let Ok(permit) = sem.clone().acquire_owned().await else {
            break;
        };
        running.push(spawn_job(job, permit));
        tokio::select! {
            biased;
            Ok(()) = stop.changed() => stopped = *stop.borrow(),
            d = rx.recv() => if let Some(d) = d { record(d, &mut slots, &mut on_done) },
        }
    }
    if stopped {
        wind_down(&running, &mut rx, &mut slots, &mut on_done).await;
    }
    outcomes(slots, stopped)
}

/// Every job's result in plan order: one without a result was interrupted by the stop, or,
/// without a stop, lost its task (a panic the task did not survive).
fn outcomes(slots: Vec<Option<Done>>, stopped: bool) -> Vec<Done> {
    let missing = if stopped { interrupted } else { panicked };
    slots
        .into_iter()
        .enumerate()
        .map(|(order, d)| {
            d.unwrap_or_else(|| Done {
                order,
                outcome: missing(),
                duration_ms: 0,
            })
        })
        .collect()
}

/// Runs `job` in its own task holding `permit`; its result goes to `tx`, a panic included.
fn spawn(
    job: &Job,
    permit: tokio::sync::OwnedSemaphorePermit,
    ctx: CheckCtx,
    tx: tokio::sync::mpsc::UnboundedSender<Done>,
) -> tokio::task::AbortHandle {
    let (check, order) = (job.check.clone(), job.order);
    let task = tokio::spawn(async move {
        let _permit = permit;
        let t0 = Instant::now();
        // `run` is called inside the caught future, so a panic in its synchronous part
        // is caught too (it would otherwise kill the task and hang the result channel).
        let outcome = std::panic::AssertUnwindSafe(async { check.run(&ctx).await })
            .catch_unwind()
            .await
            .unwrap_or_else(|_| panicked());
        let _ = tx.send(Done {
            order,
            outcome,
            duration_ms: t0.elapsed().as_millis() as u64,
        });
    });
    task.abort_handle()
}

/// After a stop: a check that hands its work to a blocking thread (a model's search) sees
/// the stop between two requests and ends then; an aborted task's blocking work would
/// outlive it and fail its requests once the runtime shuts down. Waiting a bounded moment
/// ([`STOP_GRACE`]) lets that work end first; what answers meanwhile is kept, the rest of
/// `running` is aborted.
async fn wind_down(
    running: &[tokio::task::AbortHandle],
    rx: &mut tokio::sync::mpsc::UnboundedReceiver<Done>,
    slots: &mut [Option<Done>],
    on_done: &mut impl FnMut(&Done),
) {
    let mut outstanding = running.len() - slots.iter().filter(|s| s.is_some()).count();
    let grace = tokio::time::sleep(STOP_GRACE);
    tokio::pin!(grace);
    while outstanding > 0 {
        tokio::select! {
            _ = &mut grace => break,
            d = rx.recv() => {
                let Some(d) = d else { break };
                outstanding -= 1;
                record(d, slots, on_done);
            }
        }
    }
    running.iter().for_each(tokio::task::AbortHandle::abort);
    // Results that arrived between the stop and the aborts are kept.
    while let Ok(d) = rx.try_recv() {
        record(d, slots, on_done);
    }
}

/// The outcome of a check that saw the run stop before it could judge anything.
pub fn interrupted() -> CheckOutcome {
    CheckOutcome::verdict(Verdict::Skipped {
        reason: INTERRUPTED.into(),
    })
}

/// Shows `d` to `on_done` and keeps it in its plan slot.
fn record(d: Done, slots: &mut [Option<Done>], on_done: &mut impl FnMut(&Done)) {
    on_done(&d);
    let i = d.order;
    if let Some(slot) = slots.get_mut(i) {
        *slot = Some(d);
    }
}

fn panicked() -> CheckOutcome {
    CheckOutcome::verdict(Verdict::HarnessError {
        message: "the check panicked".into(),
    })
}

#[cfg(test)]
#[expect(clippy::unwrap_used, clippy::panic)] // tests: a panic is the failure report
mod tests {
    use super::*;
    use crate::engine::check::{Bindings, Check};
    use crate::engine::target::{ConnectOptions, Profile};
    use futures::future::BoxFuture;

    /// `execute` with no stop and no callback.
    fn plain<'a>(
        target: &'a Arc<Target>,
        jobs: &'a [Job],
        concurrency: usize,
    ) -> impl std::future::Future<Output = Vec<Done>> + 'a {
        execute(
            target,
            jobs,
            concurrency,
            "r",
            Counterexamples::Shrunk,
            None,
            |_| {},
        )
    }

    /// A check whose `run` panics before returning its future.
    struct PanicsEagerly(Vec<String>);

    impl Check for PanicsEagerly {
        fn id(&self) -> &str {
            "panics"
        }
        fn title(&self) -> &str {
            "panics"
        }
        fn requirements(&self) -> &[String] {
            &self.0
        }
        fn bindings(&self) -> Bindings {
            Bindings::Once
        }
        fn run<'a>(&'a self, _ctx: &'a CheckCtx) -> BoxFuture<'a, CheckOutcome> {
            panic!("synchronous panic in run")
        }
    }

    /// A check that records when it started, long-running or not.
    struct Records {
        id: &'static str,
        long: bool,
        started: Arc<std::sync::Mutex<Vec<&'static str>>>,
    }

    impl Check for Records {
        fn id(&self) -> &str {
            self.id
        }
        fn title(&self) -> &str {
            self.id
        }
        fn requirements(&self) -> &[String] {
            &[]
        }
        fn long_running(&self) -> bool {
            self.long
        }
        fn bindings(&self) -> Bindings {
            Bindings::Once
        }
        fn run<'a>(&'a self, _ctx: &'a CheckCtx) -> BoxFuture<'a, CheckOutcome> {
            Box::pin(async move {
                self.started.lock().unwrap().push(self.id);
                CheckOutcome::verdict(Verdict::Pass)
            })
        }
    }

    /// Long-running checks start before the short ones planned ahead of them; the results
    /// still come back in plan order.
    #[tokio::test]
    async fn long_running_checks_start_first() {
        let target = Target::new(
            Profile::new("http://127.0.0.1:9"),
            &ConnectOptions::default(),
        );
        let target = Arc::new(target.unwrap());
        let started = Arc::new(std::sync::Mutex::new(Vec::new()));
        let plan = [("short-1", false), ("long", true), ("short-2", false)];
        let jobs: Vec<Job> = plan
            .iter()
            .enumerate()
            .map(|(order, (id, long))| Job {
                suite: 0,
                check: Arc::new(Records {
                    id,
                    long: *long,
                    started: started.clone(),
                }),
                transport: None,
                order,
            })
            .collect();
        let done = plain(&target, &jobs, 1).await;
        assert_eq!(*started.lock().unwrap(), ["long", "short-1", "short-2"]);
        assert_eq!(done.iter().map(|d| d.order).collect::<Vec<_>>(), [0, 1, 2]);
    }

    /// A panic in the synchronous part of `run` is a harness error, and the run ends.
    #[tokio::test]
    async fn an_eager_panic_is_a_harness_error_not_a_hang() {
        let target = Target::new(
            Profile::new("http://127.0.0.1:9"),
            &ConnectOptions::default(),
        );
        let target = Arc::new(target.unwrap());
        let jobs = vec![Job {
            suite: 0,
            check: Arc::new(PanicsEagerly(Vec::new())),
            transport: None,
            order: 0,
        }];
        let run = plain(&target, &jobs, 2);
        let done = tokio::time::timeout(std::time::Duration::from_secs(10), run)
            .await
            .unwrap();
        assert!(matches!(
            done[0].outcome.verdict,
            Verdict::HarnessError { .. }
        ));
    }
}
