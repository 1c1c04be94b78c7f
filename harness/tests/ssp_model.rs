//! Issue 10: the SSP state-machine model against the in-process reference, at a fixed seed,
//! passes with at least 2,000 steps; the ignored test runs 20 other seeds. A failure prints
//! the seed, the shrunk counterexample as a numbered transcript with curl lines and its
//! replay command.
#![expect(clippy::unwrap_used, reason = "tests: a panic is the failure report")]

mod support;

use conform::engine::target::{ConnectOptions, Target};
use conform::ssp::model::runner::{Budget, ModelResult, ModelRun, run_model};
use conform::ssp::model::transcript;

/// The CI seed (any seed must pass; the ignored test runs 20 more).
const SEED: u64 = 2026;

fn reference(rt: &tokio::runtime::Runtime) -> Target {
    rt.block_on(support::reference::spawn_with(
        reference_impl::Config::demo_in_memory(),
        &ConnectOptions::default(),
        &["ssp"],
    ))
    .unwrap()
}

fn passes(target: &Target, rt: &tokio::runtime::Runtime, budget: Budget) -> ModelRun {
    let run = run_model(
        rt.handle(),
        target,
        budget,
        &format!("t{}", budget.seed),
        None,
    );
    let replay = transcript::replay_command(target, budget);
    match &run.result {
        ModelResult::Passed => run,
        ModelResult::Failed(cx) => panic!(
            "seed {}: {}",
            budget.seed,
            transcript::render(cx, &replay, true)
        ),
        other => panic!("seed {}: {other:?}", budget.seed),
    }
}

#[test]
fn fixed_seed_passes_with_2000_steps() {
    let rt = support::runtime(2).unwrap();
    let target = reference(&rt);
    // In `conform model`'s lanes: concurrent sequences must pass a correct provider too.
    let budget = Budget {
        seed: SEED,
        cases: 25,
        steps: 100,
        lanes: Budget::LANES,
        ..Budget::DEFAULT
    };
    let run = passes(&target, &rt, budget);
    eprintln!(
        "seed {SEED}: {} steps in {:.1} s ({:.0} steps/s)",
        run.steps_run,
        run.elapsed.as_secs_f64(),
        run.steps_run as f64 / run.elapsed.as_secs_f64().max(1e-3)
    );
    assert!(
        run.steps_run >= 2000,
        "seed {SEED}: only {} steps ran (want ≥ 2000)",
        run.steps_run
    );
}

/// The default budget of `conform run` finishes within a few seconds.
#[test]
fn default_budget_is_fast() {
    let rt = support::runtime(2).unwrap();
    let target = reference(&rt);
    let run = passes(&target, &rt, Budget::DEFAULT);
    assert!(
        run.elapsed < std::time::Duration::from_secs(15),
        "the default budget took {:?}",
        run.elapsed
    );
}

/// `cargo test -p conform --all-features --test ssp_model -- --ignored`: 20 seeds, each on
/// its own reference.
#[test]
#[ignore = "about two minutes: 20 seeds × 1,000 steps"]
fn twenty_seeds_pass() {
    let rt = support::runtime(2).unwrap();
    let mut total = 0;
    let started = std::time::Instant::now();
    for seed in 1..=20 {
        let target = reference(&rt);
        let run = passes(
            &target,
            &rt,
            Budget {
                seed,
                cases: 10,
                steps: 100,
                ..Budget::DEFAULT
            },
        );
        total += run.steps_run;
    }
    eprintln!(
        "20 seeds: {total} steps in {:.1} s",
        started.elapsed().as_secs_f64()
    );
}

/// Issue 10: each SSP fault only a sequence reveals is caught by the model, at the default
/// budget of `conform run` in one lane and in `conform model`'s lanes (issue 25), on the
/// fault's own requirement IDs (`faults_caught` shows the
/// scripted checks miss them: `vectors-miss/<fault>`). Issue 28 item 16: each shrunk
/// counterexample, promoted to a sequence vector and replayed, fails that fault on the same
/// rules and passes the fault-free reference.
#[cfg(feature = "faults")]
#[test]
fn sequence_faults_are_caught_on_their_own_ids() {
    use reference_impl::faults::Fault;
    let rt = support::runtime(2).unwrap();
    let clean = reference(&rt);
    let mut promoted = Vec::new();
    for name in conform::faults::SSP_SEQUENCE_ONLY {
        let fault = Fault::from_name(name).unwrap();
        let mut config = reference_impl::Config::demo_in_memory();
        config.faults = vec![(*name).to_string()];
        // One lane (`conform run`) and `conform model`'s lanes: both catch it.
        for lanes in [1, Budget::LANES] {
            let target = rt
                .block_on(support::reference::spawn_with(
                    config.clone(),
                    &ConnectOptions::default(),
                    &["ssp"],
                ))
                .unwrap();
            let budget = Budget {
                lanes,
                ..Budget::DEFAULT
            };
            let run = run_model(rt.handle(), &target, budget, "fault", None);
            let ModelResult::Failed(cx) = run.result else {
                panic!(
                    "{name}, {lanes} lane(s): not caught by the model: {:?}",
                    run.result
                );
            };
            let own = fault.requirements();
            let shown =
                transcript::render(&cx, &transcript::replay_command(&target, budget), false);
            assert!(
                cx.mismatch.rules.iter().any(|r| own.contains(&r.as_str())),
                "{name} ({own:?}), {lanes} lane(s): caught on {:?}:\n{shown}",
                cx.mismatch.rules,
            );
            eprintln!(
                "{name}, {lanes} lane(s): caught on {:?} after {} steps; shrunk to {} steps:\n{shown}",
                cx.mismatch.rules,
                run.steps_run,
                cx.ops.len(),
            );
            if lanes == 1 && promotes(&rt, &target, &clean, &cx, name) {
                promoted.push(*name);
            }
        }
    }
    // Measured 2026-12-06: all but `ssp-id-reused-after-result`, whose shrunk sequence
    // meets an id another sequence left (it passes alone, so it is never promoted).
    let want = [
        "ssp-terminal-readable-by-others",
        "ssp-status-changes-after-result",
        "ssp-filter-leaks-private",
        "ssp-result-error-while-running",
    ];
    assert!(
        want.iter().all(|w| promoted.contains(w)),
        "promoted {promoted:?}, want at least {want:?}"
    );
}

/// Whether `cx`, or failing that a counterexample of one of the next seeds, promotes to a
/// sequence vector that bites. A shrunk counterexample sometimes still depends on timing or
/// on what another sequence left (`promotable` refuses it, and says so on stderr); the
/// promotion path is what is tested, so a few other seeds are tried, each printed.
#[cfg(feature = "faults")]
fn promotes(
    rt: &tokio::runtime::Runtime,
    faulty: &Target,
    clean: &Target,
    cx: &conform::ssp::model::runner::Counterexample,
    name: &str,
) -> bool {
    const OTHER_SEEDS: u64 = 3;
    if promoted_sequence_bites(rt, (faulty, clean), cx, Budget::DEFAULT.seed, name) {
        return true;
    }
    for k in 1..=OTHER_SEEDS {
        let budget = Budget {
            lanes: 1,
            seed: Budget::DEFAULT.seed + k,
            ..Budget::DEFAULT
        };
        eprintln!("{name}: trying seed {}", budget.seed);
        let run = run_model(rt.handle(), faulty, budget, "fault", None);
        if let ModelResult::Failed(cx) = run.result
            && promoted_sequence_bites(rt, (faulty, clean), &cx, budget.seed, name)
        {
            return true;
        }
    }
    false
}

/// The sequence vector promoted from `cx` (found against `faulty` with `seed`), when it reproduces
/// alone, round-trips through its JSON and passes `clean`; whether it reproduced (a
/// counterexample may hang on ids other sequences left).
#[cfg(feature = "faults")]
fn promoted_sequence_bites(
    rt: &tokio::runtime::Runtime,
    (faulty, clean): (&Target, &Target),
    cx: &conform::ssp::model::runner::Counterexample,
    seed: u64,
    name: &str,
) -> bool {
    use conform::ssp::model::runner::replay;
    use conform::ssp::model::sequences::{SequenceFile, promotable};
    let file = match promotable(rt.handle(), faulty, cx, seed) {
        Ok(f) => f,
        Err(why) => {
            eprintln!("{name}: not promoted: {why}");
            return false;
        }
    };
    let text = serde_json::to_string(&file).unwrap();
    let back: SequenceFile = serde_json::from_str(&text).unwrap();
    let ops = &back.sequences[0].ops;
    assert_eq!(
        ops, &cx.ops,
        "{name}: the operations do not round-trip: {text}"
    );
    let on_clean = replay(rt.handle(), clean, ops, "promoted-clean", None);
    assert!(
        matches!(on_clean.result, ModelResult::Passed) && on_clean.steps_run == ops.len(),
        "{name}: the promoted sequence does not pass the fault-free reference in {} steps: {:?} after {}\n{text}",
        ops.len(),
        on_clean.result,
        on_clean.steps_run
    );
    true
}
