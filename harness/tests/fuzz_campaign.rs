//! `conform fuzz` (issue 11 item 2) against the in-process reference: a seeded campaign finds
//! nothing on the fault-free reference, and finds the seeded faults that concern hostile
//! input. The seed is fixed and printed by every failure, so a failure replays with
//! `conform fuzz --spawn-reference --seed <seed>`.
#![expect(clippy::expect_used, clippy::unwrap_used)] // tests: a panic is the failure report

use std::sync::Arc;
use std::time::Duration;

use conform::capability::fuzz::cli::fuzz;
use conform::capability::fuzz::{Settings, Shared};
use conform::engine::protocol::Suite;
use conform::engine::protocol::default_vectors_dir;
use conform::engine::requirements::Catalogue;
use conform::engine::target::ConnectOptions;
use conform::parley::fuzz::ParleyCampaign;
use conform::parley::fuzz::campaign::Outcomes;
use conform::parley::protocol::Parley;
use conform::transport::TransportKind;

const SEED: u64 = 11;

async fn campaign(faults: &[&str], duration: Duration) -> (Outcomes, i32) {
    let mut config = reference_impl::Config::demo_in_memory();
    config.faults = faults.iter().map(|f| (*f).to_string()).collect();
    let protocols: Vec<Arc<dyn conform::engine::protocol::Protocol>> = vec![Arc::new(Parley)];
    let target = conform::reference::spawn_with(config, &ConnectOptions::default(), &protocols)
        .await
        .expect("pre-flight");
    let catalogue =
        Catalogue::load(&default_vectors_dir().join("requirements/parley.toml")).unwrap();
    let settings = Settings {
        duration,
        seed: SEED,
        transports: vec![TransportKind::Http.into(), TransportKind::Mcp.into()],
    };
    let campaign = Arc::new(ParleyCampaign::new(settings.clone()));
    let shared = Shared::new(campaign.clone());
    let suite = Suite::new(Arc::new(Parley), catalogue, shared.checks());
    let (report, _) = fuzz(target, vec![(suite, shared)], &settings, "test".into())
        .await
        .unwrap();
    let outcomes = campaign.outcomes().unwrap().clone();
    (outcomes, report.exit_code())
}

/// The in-process reference with `faults`, pre-flighted for SSP.
async fn ssp_reference(faults: &[&str]) -> conform::engine::target::Target {
    let mut config = reference_impl::Config::demo_in_memory();
    config.faults = faults.iter().map(|f| (*f).to_string()).collect();
    let ssp: Arc<dyn conform::engine::protocol::Protocol> = Arc::new(conform::ssp::protocol::Ssp);
    conform::reference::spawn_with(config, &ConnectOptions::default(), &[ssp])
        .await
        .expect("pre-flight")
}

/// The SSP campaign against the reference with `faults` (its engine-level outcomes).
async fn ssp_campaign(
    faults: &[&str],
    duration: Duration,
) -> (conform::capability::fuzz::Outcomes, i32) {
    let target = ssp_reference(faults).await;
    let ssp: Arc<dyn conform::engine::protocol::Protocol> = Arc::new(conform::ssp::protocol::Ssp);
    let catalogue = Catalogue::load(&default_vectors_dir().join("requirements/ssp.toml")).unwrap();
    let settings = Settings {
        duration,
        seed: SEED,
        transports: vec![TransportKind::Http.into()],
    };
    let shared = Shared::new(Arc::new(conform::ssp::fuzz::SspCampaign::new(
        settings.clone(),
    )));
    let suite = Suite::new(ssp, catalogue, shared.checks());
    let (report, shared) = fuzz(target, vec![(suite, shared)], &settings, "test".into())
        .await
        .unwrap();
    let outcomes = shared[0].finished().unwrap().clone().unwrap();
    (outcomes, report.exit_code())
}

fn ssp_shown(o: &conform::capability::fuzz::Outcomes) -> String {
    (o.findings.iter())
        .map(|f| {
            format!(
                "{} {} {}: {}",
                f.oracle(),
                f.op,
                f.mutation,
                f.finding.message
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_ssp_reference_has_no_findings() {
    let (o, code) = ssp_campaign(&[], Duration::from_secs(5)).await;
    assert!(o.cases > 100, "seed {SEED}: only {} cases", o.cases);
    assert!(o.findings.is_empty(), "seed {SEED}:\n{}", ssp_shown(&o));
    assert_eq!(code, 0);
}

/// SSP faults that concern hostile input, and the oracle expected to see each.
#[cfg(feature = "faults")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn seeded_ssp_hostile_input_faults_are_found() {
    for (fault, oracle) in [
        ("ssp-api-key-any-header", "invalid-refused"),
        ("ssp-wrong-skill-executed", "invalid-refused"),
    ] {
        let (o, code) = ssp_campaign(&[fault], Duration::from_secs(4)).await;
        assert!(
            o.findings.iter().any(|f| f.oracle() == oracle),
            "{fault} (seed {SEED}) not found by {oracle}:\n{}",
            ssp_shown(&o)
        );
        assert_eq!(code, 1, "{fault}: a finding fails the run");
    }
}

fn shown(o: &Outcomes) -> String {
    o.findings
        .iter()
        .map(|f| {
            format!(
                "{:?} {} {}: {}",
                f.finding.source, f.op, f.mutation, f.finding.message
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_reference_has_no_findings() {
    let (o, code) = campaign(&[], Duration::from_secs(5)).await;
    assert!(o.cases > 100, "seed {SEED}: only {} cases", o.cases);
    assert!(o.findings.is_empty(), "seed {SEED}:\n{}", shown(&o));
    assert_eq!(code, 0);
}

/// Seeded faults of the catalogue that concern hostile input and the oracle expected to
/// see each.
#[cfg(feature = "faults")]
const FOUND: &[(&str, conform::parley::fuzz::oracles::Oracle)] = {
    use conform::parley::fuzz::oracles::Oracle;
    &[
        ("http-refusal-not-json", Oracle::RefusalShape),
        ("mcp-refusal-as-jsonrpc-error", Oracle::BindingsAgree),
        ("unknown-field-accepted", Oracle::InvalidRefused),
        ("thread-required-not-enforced", Oracle::InvalidRefused),
        ("body-accepts-one-over", Oracle::InvalidRefused),
    ]
};

#[cfg(feature = "faults")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn seeded_hostile_input_faults_are_found() {
    for (fault, oracle) in FOUND {
        let (o, code) = campaign(&[fault], Duration::from_secs(4)).await;
        assert!(
            o.findings
                .iter()
                .any(|f| conform::parley::fuzz::oracles::oracle_of(&f.finding) == Some(*oracle)),
            "{fault} (seed {SEED}) not found by {oracle:?}:\n{}",
            shown(&o)
        );
        assert_eq!(code, 1, "{fault}: a finding fails the run");
    }
}

/// Survey for the closing note: which seeded faults the Parley and SSP campaigns find,
/// `CONFORM_SURVEY_SECS` (default 3) per fault and protocol, both campaigns side by side;
/// `CONFORM_SURVEY_FAULTS` (comma-separated) limits the faults. Prints one line per fault.
/// `cargo test -p conform --features faults --test fuzz_campaign -- --ignored --nocapture`
#[cfg(feature = "faults")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a survey of every fault (minutes), not a pass/fail check"]
async fn survey_every_fault() {
    let secs = std::env::var("CONFORM_SURVEY_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3);
    let only = std::env::var("CONFORM_SURVEY_FAULTS").unwrap_or_default();
    let protocols = conform::registry::select(&["parley".into(), "ssp".into()]).unwrap();
    for fault in reference_impl::faults::Fault::ALL {
        if !only.is_empty() && !only.split(',').any(|f| f == fault.name()) {
            continue;
        }
        let settings = Settings {
            duration: Duration::from_secs(secs),
            seed: SEED,
            transports: vec![TransportKind::Http.into(), TransportKind::Mcp.into()],
        };
        let suites = conform::capability::fuzz::cli::campaign_suites(
            &[Arc::new(Parley) as Arc<dyn conform::capability::fuzz::Fuzzable>],
            &default_vectors_dir(),
            &settings,
        )
        .unwrap();
        let mut config = reference_impl::Config::demo_in_memory();
        config.faults = vec![fault.name().to_string()];
        let target = conform::reference::spawn_with(config, &ConnectOptions::default(), &protocols)
            .await
            .expect("pre-flight");
        let (_, shared) = fuzz(target, suites, &settings, "survey".into())
            .await
            .unwrap();
        let mut found = std::collections::BTreeSet::new();
        let mut requests = 0;
        for s in &shared {
            if let Some(Ok(o)) = s.finished() {
                requests += o.requests;
                let prefix = s.campaign().prefix();
                found.extend(
                    o.findings
                        .iter()
                        .map(|f| format!("{prefix}/{}", f.oracle())),
                );
            }
        }
        println!("{:40} {:>8} requests  {:?}", fault.name(), requests, found);
    }
}

/// A vectors directory holding the repository's catalogues and schemas and, as the whole
/// Parley suite, the promoted vector file `file`.
#[cfg(feature = "faults")]
fn promoted_dir(file: &serde_json::Value) -> tempfile::TempDir {
    let dir = catalogues_dir();
    std::fs::create_dir_all(dir.path().join("parley")).unwrap();
    let text = serde_json::to_string_pretty(file).unwrap();
    std::fs::write(dir.path().join("parley/fuzz-seed-11.json"), text).unwrap();
    dir
}

/// A vectors directory holding only the repository's catalogues and schemas.
#[cfg(feature = "faults")]
fn catalogues_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let src = default_vectors_dir();
    for sub in ["requirements", "schemas"] {
        std::fs::create_dir_all(dir.path().join(sub)).unwrap();
        for e in std::fs::read_dir(src.join(sub)).unwrap() {
            let e = e.unwrap();
            if e.file_type().unwrap().is_file() {
                std::fs::copy(e.path(), dir.path().join(sub).join(e.file_name())).unwrap();
            }
        }
    }
    dir
}

/// Runs the `suite` checks of `dir` matching `filter` against the reference with `faults`.
#[cfg(feature = "faults")]
async fn promoted_verdicts(
    dir: &std::path::Path,
    suite: &str,
    filter: &str,
    faults: &[&str],
) -> Vec<(String, conform::engine::verdict::Verdict)> {
    let suite = conform::registry::load_suite(suite, dir).expect("promoted vectors load");
    let mut config = reference_impl::Config::demo_in_memory();
    config.faults = faults.iter().map(|f| (*f).to_string()).collect();
    let target = conform::reference::spawn_with(
        config,
        &ConnectOptions::default(),
        std::slice::from_ref(&suite.protocol),
    )
    .await
    .expect("pre-flight");
    let opts = conform::engine::run::RunOptions {
        filter: Some(filter.into()),
        transports: vec![TransportKind::Http.into(), TransportKind::Mcp.into()],
        ..conform::engine::run::RunOptions::default()
    };
    let report = conform::engine::run::run(Arc::new(target), &[suite], &opts)
        .await
        .expect("run");
    report
        .checks
        .into_iter()
        .map(|c| (c.check, c.verdict))
        .collect()
}

/// `--promote`: the findings on a faulty reference become vectors that load, fail against
/// that fault and pass against the fault-free reference.
#[cfg(feature = "faults")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn promoted_findings_are_vectors_that_bite() {
    use conform::engine::verdict::Verdict;
    let fault = "http-refusal-not-json";
    let (o, _) = campaign(&[fault], Duration::from_secs(4)).await;
    let file = conform::parley::fuzz::promote::vector_file(&o.findings, SEED)
        .expect("a finding with a request");
    let dir = promoted_dir(&file);
    let faulty = promoted_verdicts(dir.path(), "parley", "fuzz/*", &[fault]).await;
    assert!(!faulty.is_empty(), "no promoted vector ran");
    assert!(
        faulty.iter().any(|(_, v)| matches!(v, Verdict::Fail(_))),
        "seed {SEED}: no promoted vector fails against {fault}: {faulty:#?}"
    );
    let clean = promoted_verdicts(dir.path(), "parley", "fuzz/*", &[]).await;
    let bad: Vec<_> = clean
        .iter()
        .filter(|(_, v)| !matches!(v, Verdict::Pass | Verdict::Unsupported { .. }))
        .collect();
    assert!(
        bad.is_empty(),
        "seed {SEED}: promoted vectors fail the fault-free reference: {bad:#?}"
    );
}

/// A target whose profile has no `[ssp]` table (a Parley-only server under the default
/// `--suite all`): every SSP oracle is unsupported, never a pass or a harness error.
#[tokio::test]
async fn ssp_without_a_profile_table_is_unsupported() {
    let profile = conform::engine::target::Profile::new("http://127.0.0.1:9");
    let target = conform::engine::target::Target::new(profile, &ConnectOptions::default()).unwrap();
    let settings = Settings {
        duration: Duration::from_secs(1),
        seed: SEED,
        transports: vec![TransportKind::Http.into()],
    };
    let (o, kept) = conform::ssp::fuzz::execute(&target, &settings)
        .await
        .unwrap();
    assert_eq!(o.cases, 0);
    assert!(kept.findings.is_empty());
    let names: Vec<&str> = o.unsupported.iter().map(|(n, _)| *n).collect();
    let all: Vec<&str> = conform::ssp::fuzz::oracles::ALL
        .iter()
        .map(|o| o.name)
        .collect();
    assert_eq!(names, all);
}

/// The SSP campaign against the reference with `faults`, keeping its cases (`--promote`).
#[cfg(feature = "faults")]
async fn ssp_kept(faults: &[&str]) -> conform::ssp::fuzz::Kept {
    let target = ssp_reference(faults).await;
    let settings = Settings {
        duration: Duration::from_secs(4),
        seed: SEED,
        transports: vec![TransportKind::Http.into()],
    };
    let (_, kept) = conform::ssp::fuzz::execute(&target, &settings)
        .await
        .unwrap();
    kept
}

/// SSP `--promote` (issue 28 item 16): the findings on a faulty reference become request
/// vectors that load, fail against that fault on the oracle's rules and pass against the
/// fault-free reference, with no secret of the profile in the file.
#[cfg(feature = "faults")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ssp_promoted_findings_are_vectors_that_bite() {
    use conform::engine::verdict::Verdict;
    for fault in ["ssp-api-key-any-header", "ssp-wrong-skill-executed"] {
        let kept = ssp_kept(&[fault]).await;
        let file = conform::ssp::fuzz::promote::vector_file(&kept)
            .unwrap_or_else(|| panic!("{fault} (seed {SEED}): no finding with a request"));
        let text = serde_json::to_string_pretty(&file).unwrap();
        for secret in ["demo-ssp-key", "demo-oauth-full"] {
            assert!(
                !text.contains(secret),
                "{fault}: the file holds {secret}:\n{text}"
            );
        }
        let dir = catalogues_dir();
        std::fs::create_dir_all(dir.path().join("ssp/validator")).unwrap();
        std::fs::create_dir_all(dir.path().join("ssp/requests")).unwrap();
        std::fs::write(dir.path().join("ssp/requests/promoted.json"), &text).unwrap();
        let faulty = promoted_verdicts(dir.path(), "ssp", "ssp-request/*", &[fault]).await;
        assert_eq!(faulty.len(), file.vectors.len(), "{fault}: {faulty:#?}");
        assert!(
            faulty.iter().any(|(_, v)| matches!(v, Verdict::Fail(_))),
            "{fault} (seed {SEED}): no promoted vector fails:\n{text}\n{faulty:#?}"
        );
        let clean = promoted_verdicts(dir.path(), "ssp", "ssp-request/*", &[]).await;
        let bad: Vec<_> = (clean.iter())
            .filter(|(_, v)| !matches!(v, Verdict::Pass))
            .collect();
        assert!(
            bad.is_empty(),
            "{fault} (seed {SEED}): promoted vectors do not pass the fault-free reference:\n{text}\n{bad:#?}"
        );
        println!("{fault}:\n{text}");
    }
}

/// The committed regressions (`vectors/ssp/requests/`, `vectors/ssp/sequences/`) each fail
/// the seeded fault they were promoted from (`faults_caught` stops at a fault's first
/// catch, so it does not show every one).
#[cfg(feature = "faults")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn committed_ssp_regressions_fail_their_faults() {
    use conform::engine::verdict::Verdict;
    let dir = default_vectors_dir();
    for (fault, check) in [
        (
            "ssp-api-key-any-header",
            "ssp-request/auth-api-key-in-another-header",
        ),
        (
            "ssp-wrong-skill-executed",
            "ssp-request/invoke-unknown-skill-id",
        ),
        (
            "ssp-filter-leaks-private",
            "model/ssp-sequence/private-hidden-from-filtered-anonymous-discovery",
        ),
        (
            "ssp-result-error-while-running",
            "model/ssp-sequence/result-before-the-end-is-not-an-error",
        ),
        (
            "ssp-status-changes-after-result",
            "model/ssp-sequence/terminal-state-stable-after-the-result-read",
        ),
        (
            "ssp-terminal-readable-by-others",
            "model/ssp-sequence/finished-execution-private-to-its-creator",
        ),
    ] {
        let got = promoted_verdicts(&dir, "ssp", check, &[fault]).await;
        assert!(
            matches!(got.as_slice(), [(id, Verdict::Fail(_))] if id == check),
            "{check} against {fault}: {got:#?}"
        );
    }
}
