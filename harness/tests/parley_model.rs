//! Issue 10: the Parley state-machine model against the reference, at a fixed seed, passes
//! with at least 2,000 steps on HTTP and on MCP (both eras). A failure prints the seed, the
//! shrunk counterexample as a numbered transcript and its replay command.
#![expect(clippy::unwrap_used, reason = "tests: a panic is the failure report")]

mod support;

use conform::engine::target::ConnectOptions;
use conform::parley::model::runner::{Budget, ModelResult, run_model};
use conform::parley::model::transcript;
use conform::parley::preflight::ParleyTarget;
use conform::transport::{McpRevision, TransportKind};

/// The CI seed (any seed must pass; see the README for the 20-seed figure).
const SEED: u64 = 2026;

fn passes(kind: TransportKind, revision: McpRevision, budget: Budget, min_steps: usize) {
    let rt = support::runtime(2).unwrap();
    let target = rt
        .block_on(support::reference::spawn_with(
            reference_impl::Config::demo_in_memory(),
            &ConnectOptions::revision(revision),
            &["parley"],
        ))
        .unwrap();
    let part = target.part::<ParleyTarget>().unwrap();
    let run = run_model(rt.handle(), part, kind, budget, target.part(), None);
    let replay = transcript::replay_command(&target, kind, budget);
    match run.result {
        ModelResult::Passed => {}
        ModelResult::Failed(cx) => panic!(
            "seed {}: {}",
            budget.seed,
            transcript::render(&cx, &replay, true)
        ),
        other => panic!("seed {}: {other:?}", budget.seed),
    }
    assert!(
        run.steps_run >= min_steps,
        "seed {}: only {} steps ran (want ≥ {min_steps})",
        budget.seed,
        run.steps_run
    );
}

#[test]
fn fixed_seed_passes_on_http() {
    let budget = Budget {
        seed: SEED,
        cases: 20,
        steps: 110,
        ..Budget::DEFAULT
    };
    passes(TransportKind::Http, McpRevision::V2025_11_25, budget, 2000);
}

#[test]
fn fixed_seed_passes_on_mcp_handshake_era() {
    let budget = Budget {
        seed: SEED,
        cases: 20,
        steps: 110,
        ..Budget::DEFAULT
    };
    passes(TransportKind::Mcp, McpRevision::V2025_11_25, budget, 2000);
}

#[test]
fn fixed_seed_passes_on_mcp_stateless_era() {
    let budget = Budget {
        seed: SEED + 1,
        cases: 5,
        steps: 100,
        ..Budget::DEFAULT
    };
    passes(TransportKind::Mcp, McpRevision::V2026_07_28, budget, 400);
}

/// The counterexample the model finds with `budget` on HTTP against the reference with
/// `fault` switched on (a panic naming the seed when it finds none).
#[cfg(feature = "faults")]
fn counterexample(fault: &str, budget: Budget) -> conform::parley::model::runner::Counterexample {
    let rt = support::runtime(2).unwrap();
    let mut config = reference_impl::Config::demo_in_memory();
    config.faults = vec![fault.into()];
    let target = rt
        .block_on(support::reference::spawn_with(
            config,
            &ConnectOptions::default(),
            &["parley"],
        ))
        .unwrap();
    let part = target.part::<ParleyTarget>().unwrap();
    let run = run_model(
        rt.handle(),
        part,
        TransportKind::Http,
        budget,
        target.part(),
        None,
    );
    let ModelResult::Failed(cx) = run.result else {
        panic!(
            "seed {}: {fault} was not caught: {:?}",
            budget.seed, run.result
        );
    };
    *cx
}

/// The quota focus passes against the reference, with evidence: its sequences sent more than
/// twice the quota role's quota of posts within a minute (else the check is `unsupported`).
#[test]
fn quota_focus_passes_on_http() {
    passes(
        TransportKind::Http,
        McpRevision::V2025_11_25,
        Budget::QUOTA,
        100,
    );
}

/// `--promote`: the shrunk counterexample of a seeded fault becomes a vector file that the
/// vector loader accepts (schema, catalogue IDs, captures before use).
#[cfg(feature = "faults")]
#[test]
fn counterexample_promotes_to_a_loadable_vector() {
    use conform::engine::requirements::Catalogue;
    use conform::parley::model::promote::vector_file;
    use conform::parley::vectors::loader::{SchemaValidator, load_dir};

    let budget = Budget::DEFAULT;
    let cx = counterexample("relock-after-reopen-missed", budget);
    assert!(
        cx.mismatch.rules.iter().any(|r| r == "PV-ST-4"),
        "{:?}",
        cx.mismatch.rules
    );
    let vectors = conform::engine::protocol::default_vectors_dir();
    let catalogue = Catalogue::load(&vectors.join("requirements/parley.toml")).unwrap();
    let schema = SchemaValidator::load(&vectors.join("schemas/vector.schema.json")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = vector_file(&cx, &cx.world, budget.seed, "http", &catalogue).unwrap();
    std::fs::write(
        dir.path().join("promoted.json"),
        serde_json::to_string_pretty(&file).unwrap(),
    )
    .unwrap();
    let loaded = load_dir(dir.path(), Some(&schema), Some(&catalogue)).unwrap();
    assert_eq!(loaded.len(), 1);
    assert_eq!(loaded[0].vector.requirements[0], cx.mismatch.rules[0]);
}

/// The quota focus (PV-TR-5) against a reference that never enforces its quota: the
/// quota role's writes are shrunk to the fewest that show it (more than twice the quota of
/// 5 past the quota check within a minute), and that counterexample is never promoted (its
/// answers depend on a window other clients share).
#[cfg(feature = "faults")]
#[test]
fn quota_model_catches_an_unenforced_quota() {
    use conform::engine::requirements::Catalogue;
    use conform::parley::model::promote::vector_file;

    let budget = Budget::QUOTA;
    let cx = counterexample("quota-not-enforced", budget);
    assert_eq!(cx.mismatch.rules, vec!["PV-TR-5".to_string()]);
    let posts = cx.ops.iter().filter(|o| o.is_post()).count();
    assert!(
        posts == 11 && cx.ops.len() <= 12,
        "shrunk to 2 × 5 + 1 posts: {posts} posts in {} steps",
        cx.ops.len()
    );
    let vectors = conform::engine::protocol::default_vectors_dir();
    let catalogue = Catalogue::load(&vectors.join("requirements/parley.toml")).unwrap();
    let refused = vector_file(&cx, &cx.world, budget.seed, "http", &catalogue).unwrap_err();
    assert!(refused.contains("quota role"), "{refused}");
}
