//! Model throughput and shrinking (issues 10, 25): steps per second of the Parley model
//! against the in-process reference over loopback HTTP and MCP (goal ≥ 2,000 steps/s on
//! HTTP, ≥ 1,500 on MCP, release, 2 cores), the share of their wall time the claims model
//! and the SSP model spend waiting on the target's clock (goal ≤ 20 %), the time to shrink a
//! failure found in 200-step sequences against a seeded fault (goal under 10 s), and the
//! process's peak memory.
//!
//! `cargo bench -p conform --features faults --bench model` — numbers, not pass/fail: a
//! timing target belongs here, never in a timed test (machines are noisy; compare ratios
//! measured in one run).

// Bench code: a failed set-up is a failed bench, so panicking helpers are the point.
#![expect(clippy::expect_used, clippy::unwrap_used)]

use std::sync::Arc;

use conform::engine::protocol::Protocol;
use conform::engine::target::{ConnectOptions, Target};
use conform::parley::model::generate::Focus;
use conform::parley::model::runner::{Budget, ModelResult, ModelRun, run_model};
use conform::parley::preflight::ParleyTarget;
use conform::parley::protocol::Parley;
use conform::transport::TransportKind;

fn spawn(rt: &tokio::runtime::Runtime, faults: &[&str]) -> Target {
    let mut config = reference_impl::Config::demo_in_memory();
    config.faults = faults.iter().map(|f| (*f).to_string()).collect();
    let protocols: Vec<Arc<dyn Protocol>> =
        vec![Arc::new(Parley), Arc::new(conform::ssp::protocol::Ssp)];
    rt.block_on(conform::reference::spawn_with(
        config,
        &ConnectOptions::default(),
        &protocols,
    ))
    .expect("reference")
}

fn model(
    rt: &tokio::runtime::Runtime,
    target: &Target,
    kind: TransportKind,
    b: Budget,
) -> ModelRun {
    let part = target.part::<ParleyTarget>().expect("pre-flight");
    run_model(rt.handle(), part, kind, b, None, None)
}

/// Peak resident memory of this process (Linux `VmHWM`), in MiB.
fn peak_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let kb: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kb / 1024.0)
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let clean = spawn(&rt, &[]);
    let budget = Budget {
        seed: 7,
        cases: 20,
        steps: 100,
        ..Budget::DEFAULT
    };
    for kind in [TransportKind::Http, TransportKind::Mcp] {
        let run = model(&rt, &clean, kind, budget);
        assert!(
            matches!(run.result, ModelResult::Passed),
            "{kind}: the reference must pass: {:?}",
            run.result
        );
        println!(
            "model {kind:<4} {:>6} steps in {:>6.2} s  {:>6.0} steps/s",
            run.steps_run,
            run.elapsed.as_secs_f64(),
            run.steps_run as f64 / run.elapsed.as_secs_f64().max(1e-9)
        );
    }
    for kind in [TransportKind::Http, TransportKind::Mcp] {
        let claims = Budget {
            focus: Focus::Claims,
            ..Budget::CLAIMS
        };
        let run = model(&rt, &clean, kind, claims);
        assert!(
            matches!(run.result, ModelResult::Passed),
            "{kind}: the reference must pass the claims model: {:?}",
            run.result
        );
        waits(
            &format!("claims {kind:<4}"),
            run.steps_run,
            run.elapsed,
            run.waited,
        );
    }
    let ssp = conform::ssp::model::runner::run_model(
        rt.handle(),
        &clean,
        conform::ssp::model::runner::Budget {
            lanes: conform::ssp::model::runner::Budget::LANES,
            ..conform::ssp::model::runner::Budget::DEFAULT
        },
        "bench",
        None,
    );
    assert!(
        matches!(ssp.result, conform::ssp::model::runner::ModelResult::Passed),
        "the reference must pass the SSP model: {:?}",
        ssp.result
    );
    waits("ssp model  ", ssp.steps_run, ssp.elapsed, ssp.waited);
    shrinking(&rt);
    match peak_mib() {
        Some(m) => println!("peak memory (bench process, reference included): {m:.0} MiB"),
        None => println!("peak memory: not available on this platform"),
    }
}

/// One model run's throughput and the share of its wall time spent waiting.
fn waits(name: &str, steps: usize, elapsed: std::time::Duration, waited: std::time::Duration) {
    let wall = elapsed.as_secs_f64().max(1e-9);
    println!(
        "{name} {steps:>6} steps in {wall:>6.2} s  {:>6.0} steps/s  waiting {:.2} s ({:.0} % of its wall time)",
        steps as f64 / wall,
        waited.as_secs_f64(),
        100.0 * waited.as_secs_f64() / wall
    );
}

/// A failure found in 200-step sequences against a fault only sequences reveal, shrunk.
#[cfg(feature = "faults")]
fn shrinking(rt: &tokio::runtime::Runtime) {
    let faulty = spawn(rt, &["second-reopen-refused"]);
    let budget = Budget {
        seed: 3,
        cases: 50,
        steps: 200,
        ..Budget::DEFAULT
    };
    let run = model(rt, &faulty, TransportKind::Http, budget);
    match (&run.result, run.shrink_time) {
        (ModelResult::Failed(cx), Some(t)) => println!(
            "shrink  http  200-step failure → {} steps in {:.2} s ({} steps sent in all)",
            cx.ops.len(),
            t.as_secs_f64(),
            run.steps_run
        ),
        (other, _) => println!("shrink: no failure found to shrink ({other:?})"),
    }
}

#[cfg(not(feature = "faults"))]
fn shrinking(_: &tokio::runtime::Runtime) {
    println!("shrink: needs `--features faults` (a seeded fault to shrink a failure of)");
}
