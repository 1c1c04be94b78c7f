//! Issue 10: concurrent histories checked for linearizability against the Parley model.
//! The fault-free reference passes every group on HTTP and MCP over many seeds; with the
//! `faults` feature, each race fault is caught on its IDs while the sequential model misses
//! it. No sleeps: every wait is a request with its timeout.
#![expect(clippy::unwrap_used, reason = "tests: a panic is the failure report")]

mod support;

use std::time::Instant;

use conform::capability::history::Bound;
use conform::engine::target::{ConnectOptions, Target};
use conform::parley::history::groups::Settings;
use conform::parley::history::run::{HistoryRun, run_histories};
use conform::parley::preflight::ParleyTarget;
use conform::transport::{McpRevision, TransportKind};

fn spawn(rt: &tokio::runtime::Runtime, config: reference_impl::Config) -> Target {
    rt.block_on(support::reference::spawn_with(
        config,
        &ConnectOptions::revision(McpRevision::V2025_11_25),
        &["parley"],
    ))
    .unwrap()
}

fn settings(seed: u64, groups: usize) -> Settings {
    Settings {
        seed,
        groups,
        bound: Bound::default(),
    }
}

fn histories(
    rt: &tokio::runtime::Runtime,
    target: &Target,
    kind: TransportKind,
    s: Settings,
) -> HistoryRun {
    let part = target.part::<ParleyTarget>().unwrap();
    rt.block_on(run_histories(part, kind, s, target.part()))
}

fn assert_clean(run: &HistoryRun, what: &str) {
    if let Some(f) = &run.failure {
        panic!(
            "{what}: false failure on the reference {:?}\n{}",
            f.finding.rules, f.finding.message
        );
    }
    assert!(run.unsupported.is_none(), "{what}: {:?}", run.unsupported);
    assert!(run.undecided.is_empty(), "{what}: {:?}", run.undecided);
    assert_eq!(run.decided, run.groups_run, "{what}");
}

#[test]
fn reference_is_linearizable_over_twenty_seeds_on_both_bindings() {
    let rt = support::runtime(2).unwrap();
    let target = spawn(&rt, reference_impl::Config::demo_in_memory());
    let started = Instant::now();
    let mut overlapped = 0;
    let (mut groups, mut nodes, mut check_time, mut slowest) =
        (0, 0, std::time::Duration::ZERO, std::time::Duration::ZERO);
    for seed in 0..20 {
        for kind in [TransportKind::Http, TransportKind::Mcp] {
            let run = histories(&rt, &target, kind, settings(seed, 12));
            assert_clean(&run, &format!("seed {seed} on {}", kind.as_str()));
            groups += run.groups_run;
            overlapped += run.overlapped;
            nodes += run.nodes;
            check_time += run.check_time;
            slowest = slowest.max(run.slowest_check);
        }
    }
    // The races were really run: most groups' concurrent steps overlapped in time.
    assert!(
        overlapped * 2 > groups,
        "{overlapped} of {groups} groups overlapped"
    );
    println!(
        "20 seeds × 2 bindings: {groups} groups ({overlapped} with every concurrent step overlapping the others), {groups} histories linearizable, {nodes} nodes, checker {check_time:?} in all (slowest {slowest:?}), wall {:?}",
        started.elapsed()
    );
}

/// The same seed draws the same groups.
#[test]
fn same_seed_same_groups() {
    use conform::parley::history::groups::{Cast, TEMPLATES, draw};
    let rt = support::runtime(1).unwrap();
    let target = spawn(&rt, reference_impl::Config::demo_in_memory());
    let cast =
        conform::parley::model::runner::cast(target.part::<ParleyTarget>().unwrap()).unwrap();
    let parties = Cast::of(&cast.world.actors).with_dialectic(cast.world.dialectic);
    assert_eq!(draw(7, 12, parties), draw(7, 12, parties));
    assert_ne!(draw(7, 12, parties), draw(8, 12, parties));
    let templates: std::collections::BTreeSet<_> =
        draw(7, 12, parties).iter().map(|g| g.name).collect();
    assert_eq!(
        templates.len(),
        TEMPLATES.len(),
        "the demo profile offers every template: {templates:?}"
    );
}

/// SSP-INV-7 as a history: concurrent invocations of the echo skill with distinct inputs
/// get distinct ids and each its own result, on the reference.
#[test]
fn ssp_concurrent_invocations_are_independent_on_the_reference() {
    use conform::engine::check::{Check, CheckCtx};
    use conform::ssp::history::SspHistoryCheck;
    let rt = support::runtime(2).unwrap();
    let target = rt
        .block_on(support::reference::spawn_with(
            reference_impl::Config::demo_in_memory(),
            &ConnectOptions::revision(McpRevision::V2025_11_25),
            &["ssp"],
        ))
        .unwrap();
    let check = SspHistoryCheck::default();
    let ctx = CheckCtx {
        target: std::sync::Arc::new(target),
        transport: None,
        run_nonce: "histories".into(),
        counterexamples: Default::default(),
        stop: None,
    };
    let out = rt.block_on(check.run(&ctx));
    assert!(out.verdict.is_pass(), "{:?}", out.verdict);
    let invocations = out.exchanges.iter().filter(|e| e.method == "POST").count();
    assert!(
        invocations >= 9,
        "4 variants alone + 1 probe + 4 at once: {invocations}"
    );
}

#[cfg(feature = "faults")]
mod races {
    use super::*;
    use conform::faults::CONCURRENCY_ONLY;
    use conform::parley::model::runner::{Budget, ModelResult, run_model};
    use reference_impl::faults::Fault;

    fn faulty(rt: &tokio::runtime::Runtime, fault: &str) -> Target {
        let mut config = reference_impl::Config::demo_in_memory();
        config.faults = vec![fault.to_string()];
        spawn(rt, config)
    }

    /// The history check catches the fault on its own IDs within the default settings.
    fn caught(fault: &str, kind: TransportKind) {
        let rt = support::runtime(2).unwrap();
        let target = faulty(&rt, fault);
        let ids = Fault::from_name(fault).unwrap().requirements();
        let started = Instant::now();
        let run = histories(&rt, &target, kind, Settings::DEFAULT);
        let f = run
            .failure
            .unwrap_or_else(|| panic!("{fault} missed on {}: {:?}", kind.as_str(), run.log));
        assert!(
            f.finding.rules.iter().any(|r| ids.contains(&r.as_str())),
            "{fault}: caught on {:?}, not on its IDs {ids:?}\n{}",
            f.finding.rules,
            f.finding.message
        );
        println!(
            "{fault} on {}: caught after {} of {} groups, {} nodes, {:?}\n{}",
            kind.as_str(),
            run.groups_run,
            Settings::DEFAULT.groups,
            run.nodes,
            started.elapsed(),
            f.finding.message
        );
    }

    #[test]
    fn mark_race_is_caught_on_http_and_mcp() {
        caught("mark-decides-on-stale-state", TransportKind::Http);
        caught("mark-decides-on-stale-state", TransportKind::Mcp);
    }

    #[test]
    fn post_race_is_caught_on_http_and_mcp() {
        caught("post-decides-on-stale-thread", TransportKind::Http);
        caught("post-decides-on-stale-thread", TransportKind::Mcp);
    }

    /// The claim race bites: with `refute-of-verified-refused` (a verified claim cannot be
    /// refuted), a group whose verify lands before its refute shows an answer no order
    /// allows. Which lands first is the target's doing, so the groups are bounded (a few
    /// seeds of 28 groups, four of them claim races), not a single draw.
    #[test]
    fn claim_race_catches_a_claim_status_fault_on_http_and_mcp() {
        let fault = "refute-of-verified-refused";
        let ids = Fault::from_name(fault).unwrap().requirements();
        for kind in [TransportKind::Http, TransportKind::Mcp] {
            let rt = support::runtime(2).unwrap();
            let target = faulty(&rt, fault);
            let caught = (0..5u64).find_map(|seed| {
                let run = histories(&rt, &target, kind, settings(seed, 28));
                run.failure.map(|f| (seed, f))
            });
            let (seed, f) = caught
                .unwrap_or_else(|| panic!("{fault} missed on {} over 5 seeds", kind.as_str()));
            assert!(
                f.finding.rules.iter().any(|r| ids.contains(&r.as_str())),
                "{fault}: caught on {:?}, not on its IDs {ids:?}\n{}",
                f.finding.rules,
                f.finding.message
            );
            assert_eq!(f.run.group.name, "claim-acts-race", "{}", f.finding.message);
            println!(
                "{fault} on {}: caught at seed {seed}\n{}",
                kind.as_str(),
                f.finding.message
            );
        }
    }

    /// One client at a time never sees the race: the sequential model passes on each fault
    /// (the vectors' miss is `faults_caught`'s `sequential-misses/<fault>`).
    #[test]
    fn sequential_model_misses_every_race_fault() {
        let budget = Budget {
            seed: 2026,
            cases: 4,
            steps: 60,
            ..Budget::DEFAULT
        };
        for fault in CONCURRENCY_ONLY {
            let rt = support::runtime(2).unwrap();
            let target = faulty(&rt, fault);
            let part = target.part::<ParleyTarget>().unwrap();
            let run = run_model(
                rt.handle(),
                part,
                TransportKind::Http,
                budget,
                target.part(),
                None,
            );
            assert!(
                matches!(run.result, ModelResult::Passed),
                "{fault}: the sequential model was meant to miss it: {:?}",
                run.result
            );
        }
    }
}
