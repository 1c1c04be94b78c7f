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

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)] // tests: a panic is the failure report
mod tests {
    use super::*;
    use crate::engine::check::{Bindings, Check};
    use crate::engine::target::{ConnectOptions, Profile};
    use futures::future::BoxFuture;

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
        let run = execute(&target, &jobs, 2, "r", |_| {});
        let done = tokio::time::timeout(std::time::Duration::from_secs(10), run)
            .await
            .unwrap();
        assert!(matches!(
            done[0].outcome.verdict,
            Verdict::HarnessError { .. }
        ));
    }
}
