//! Execute: bounded concurrent runs of the planned jobs.
//!
//! Shared jobs run `jobs` at a time; exclusive ones run alone afterwards, one by one (they
//! observe global state such as a quota window). A panicking check becomes a harness error,
//! never a lost result.

use std::sync::Arc;
use std::time::Instant;

use futures::FutureExt as _;
use tokio::sync::Semaphore;

use super::check::{CheckCtx, CheckOutcome};
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

/// Runs `jobs` against `target`; `on_done` sees each result as it arrives. Returns the
/// outcomes in plan order (a job whose task vanished is a harness error).
pub async fn execute(
    target: &Arc<Target>,
    jobs: &[Job],
    concurrency: usize,
    run_nonce: &str,
    mut on_done: impl FnMut(&Done),
) -> Vec<Done> {
    let sem = Arc::new(Semaphore::new(concurrency.max(1)));
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Done>();
    let spawn_job = |job: &Job| {
        let ctx = CheckCtx {
            target: target.clone(),
            transport: job.transport,
            run_nonce: run_nonce.to_string(),
        };
        let (tx, sem, check, order) = (tx.clone(), sem.clone(), job.check.clone(), job.order);
        tokio::spawn(async move {
            let _permit = sem.acquire_owned().await;
            let t0 = Instant::now();
            let outcome = std::panic::AssertUnwindSafe(check.run(&ctx))
                .catch_unwind()
                .await
                .unwrap_or_else(|_| panicked());
            let _ = tx.send(Done {
                order,
                outcome,
                duration_ms: t0.elapsed().as_millis() as u64,
            });
        })
    };
    let mut slots: Vec<Option<Done>> = (0..jobs.len()).map(|_| None).collect();
    let (exclusive, shared): (Vec<&Job>, Vec<&Job>) =
        jobs.iter().partition(|j| j.check.exclusive());
    for job in &shared {
        spawn_job(job);
    }
    for _ in 0..shared.len() {
        let Some(d) = rx.recv().await else { break };
        on_done(&d);
        let i = d.order;
        slots[i] = Some(d);
    }
    for job in exclusive {
        spawn_job(job);
        if let Some(d) = rx.recv().await {
            on_done(&d);
            let i = d.order;
            slots[i] = Some(d);
        }
    }
    slots
        .into_iter()
        .enumerate()
        .map(|(order, d)| {
            d.unwrap_or(Done {
                order,
                outcome: panicked(),
                duration_ms: 0,
            })
        })
        .collect()
}

fn panicked() -> CheckOutcome {
    CheckOutcome::verdict(Verdict::HarnessError {
        message: "the check panicked".into(),
    })
}
