//! Issue 26: verdicts a certifier can trust. A run against the reference with a profile that
//! holds one Parley token and no `[ssp]` table: the suite never contacted is `untested` (its
//! validator self-tests are no evidence), the run is incomplete (exit 1) unless the user chose
//! a partial run, a PV-TR-1 comparison of two unjudged runs is never a pass, and a vector
//! naming a role the profile lacks is `unsupported`, never a harness error. Also the
//! attribution rule of the matrix on a hand-made report.
#![expect(clippy::expect_used, clippy::unwrap_used)] // tests: a panic is the failure report

mod support;

use std::net::SocketAddr;
use std::sync::Arc;

use conform::engine::report::{MatrixStatus, Report, badge};
use conform::engine::run::{RunOptions, run};
use conform::engine::target::{ConnectOptions, Profile};
use conform::engine::verdict::{Cause, Verdict};
use conform::reference::demo_profile;

/// The demo profile of `base_url` with only agent_a's token and no `[ssp]` table.
fn one_token_profile(base_url: &str) -> Profile {
    let mut profile = demo_profile(base_url);
    profile.sections.remove("ssp");
    let tokens = profile
        .sections
        .get_mut("tokens")
        .and_then(toml::Value::as_table_mut)
        .expect("demo tokens");
    tokens.retain(|role, _| role == "agent_a");
    profile
}

async fn run_one_token() -> Report {
    let server = reference_impl::spawn(
        reference_impl::Config::demo_in_memory(),
        SocketAddr::from(([127, 0, 0, 1], 0)),
    )
    .await
    .expect("reference");
    let opts = ConnectOptions::default();
    let mut target = conform::registry::connect(
        one_token_profile(&server.base_url()),
        &opts,
        &["parley", "ssp"],
    )
    .await
    .expect("pre-flight");
    target.keep_alive(Box::new(server));
    let mut parley = support::vectors::suite("parley").expect("parley");
    // The quota vectors wait out the one token's write window (PV-TR-5): minutes, and
    // nothing this test looks at.
    parley
        .checks
        .retain(|c| !c.requirements().iter().any(|r| r == "PV-TR-5"));
    let suites = vec![parley, support::vectors::suite("ssp").expect("ssp")];
    run(Arc::new(target), &suites, &RunOptions::default())
        .await
        .expect("run")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_suite_never_contacted_is_untested_and_the_run_incomplete() {
    let report = run_one_token().await;
    let ssp = (report.completeness.suites.iter())
        .find(|s| s.suite == "ssp")
        .expect("ssp completeness");
    assert_eq!(ssp.executed, 0, "{ssp:?}");
    assert!(!ssp.complete && !report.completeness.complete);
    assert_eq!(report.exit_code(), 1, "an incomplete full run fails");
    let summary = report.summary_table();
    assert!(summary.contains("INCOMPLETE"), "{summary}");

    // No SSP rule passes: the validator vectors test conform, not the target.
    let passed: Vec<&str> = (report.requirements.iter())
        .filter(|r| r.suite == "ssp" && r.status == MatrixStatus::Pass)
        .map(|r| r.id.as_str())
        .collect();
    assert!(
        passed.is_empty(),
        "SSP rules passed without evidence: {passed:?}"
    );
    let disc1 = report
        .requirements
        .iter()
        .find(|r| r.id == "SSP-DISC-1")
        .expect("row");
    assert_eq!(disc1.status, MatrixStatus::Untested);
    let (message, _) = badge::message(&report);
    assert!(
        message.contains("ssp MUST ?"),
        "the badge shows untested rules: {message}"
    );

    // A comparison with nothing compared is never a pass.
    let unsupported: std::collections::BTreeSet<String> = (report.checks.iter())
        .filter(|c| matches!(c.verdict, Verdict::Unsupported { .. }) && c.transport.is_some())
        .map(|c| c.check.clone())
        .collect();
    let hollow: Vec<&str> = (report.checks.iter())
        .filter(|c| c.verdict.is_pass())
        .filter_map(|c| c.check.strip_prefix("PV-TR-1/"))
        .filter(|v| unsupported.contains(*v))
        .collect();
    assert!(
        hollow.is_empty(),
        "PV-TR-1 passed without both runs: {hollow:?}"
    );

    // A vector naming agent_b's identity: unsupported for want of the role, no harness error.
    let errors: Vec<&str> = (report.checks.iter())
        .filter(|c| matches!(c.verdict, Verdict::HarnessError { .. }))
        .map(|c| c.id.as_str())
        .collect();
    assert!(errors.is_empty(), "harness errors: {errors:?}");
    let spoof = (report.checks.iter())
        .find(|c| c.id == "envelope/spoofed-identity-cannot-dodge-self-reply@http")
        .expect("the vector ran");
    assert!(
        matches!(
            spoof.verdict,
            Verdict::Unsupported {
                cause: Cause::Profile,
                ..
            }
        ),
        "{:?}",
        spoof.verdict
    );
    chosen_partial(&report);
}

/// The same results, had the user chosen a partial run: recorded, and the run passes.
fn chosen_partial(report: &Report) {
    let mut partial = report.clone();
    partial.completeness.partial = vec!["--partial".into()];
    partial.recount();
    assert!(!partial.completeness.complete);
    assert_eq!(partial.exit_code(), 0, "{}", partial.summary_table());
    let json: serde_json::Value =
        serde_json::from_str(&conform::engine::report::json::render(&partial).unwrap()).unwrap();
    assert_eq!(json["completeness"]["partial"][0], "--partial");
    assert_eq!(json["completeness"]["complete"], false);
    assert!(
        partial
            .summary_table()
            .contains("partial run chosen: --partial")
    );
}

mod attribution {
    use conform::engine::judge::judge_matrix;
    use conform::engine::report::{CheckResult, MatrixStatus, RequirementRow};
    use conform::engine::requirements::Level;
    use conform::engine::verdict::{Verdict, Violation};
    use serde_json::Value;

    fn result(id: &str, cites: &[&str], verdict: Verdict) -> CheckResult {
        CheckResult {
            id: id.into(),
            check: id.into(),
            suite: "parley".into(),
            area: "model".into(),
            title: id.into(),
            transport: None,
            requirements: cites.iter().map(|s| (*s).to_string()).collect(),
            required: true,
            verdict,
            baseline: None,
            duration_ms: 1,
            exchanges: 3,
            self_test: false,
            reproduction: None,
        }
    }

    fn row(id: &str) -> RequirementRow {
        RequirementRow {
            id: id.into(),
            suite: "parley".into(),
            level: Level::Must,
            area: "a".into(),
            rule: String::new(),
            source: String::new(),
            library: false,
            status: MatrixStatus::Untested,
            checks: Vec::new(),
            passed: 0,
            failed: 0,
            warned: 0,
        }
    }

    #[test]
    fn a_failure_fails_only_the_ids_it_violated() {
        let violation = Violation {
            check: "model/x".into(),
            requirements: vec!["PV-DI-6".into()],
            step: Some(4),
            pointer: String::new(),
            expected: Value::Null,
            observed: Value::Null,
            message: "counterexample".into(),
            transcript: Vec::new(),
            completed: false,
        };
        let model = result(
            "model/x",
            &["PV-ST-1", "PV-EN-1", "PV-DI-6"],
            Verdict::Fail(violation),
        );
        let vector = result("state/y", &["PV-ST-1"], Verdict::Pass);
        let mut without_evidence = result("state/z", &["PV-ST-2"], Verdict::Pass);
        without_evidence.exchanges = 0;
        let mut rows = vec![
            row("PV-ST-1"),
            row("PV-EN-1"),
            row("PV-DI-6"),
            row("PV-ST-2"),
        ];
        judge_matrix(&mut rows, &[model, vector, without_evidence]);
        let status: Vec<(&str, MatrixStatus)> =
            rows.iter().map(|r| (r.id.as_str(), r.status)).collect();
        assert_eq!(
            status,
            [
                ("PV-ST-1", MatrixStatus::Pass),
                ("PV-EN-1", MatrixStatus::Untested),
                ("PV-DI-6", MatrixStatus::Fail),
                ("PV-ST-2", MatrixStatus::Untested),
            ],
            "only the violated ID is red; the others keep their other evidence; a pass \
             without exchanges is no evidence"
        );
    }

    /// A warning collected by a check that ran to its end (SSP-INV-5/overrun warning on
    /// SSP-ERR-3 for the `EXECUTION_TIMEOUT` alias) is evidence for the rules it does not
    /// name; a warning that stopped its check is not. Found by the conformance matrix of the
    /// legal variant `ssp-execution-timeout-alias`: SSP-INV-5 was `untested` and the run of a
    /// correct server exited 1 as incomplete.
    #[test]
    fn a_completed_warning_is_evidence_for_the_rules_it_does_not_name() {
        let warning = |completed| Violation {
            check: "SSP-INV-5/overrun".into(),
            requirements: vec!["SSP-ERR-3".into()],
            step: None,
            pointer: String::new(),
            expected: Value::Null,
            observed: Value::Null,
            message: "EXECUTION_TIMEOUT is an alias".into(),
            transcript: Vec::new(),
            completed,
        };
        for (completed, inv5) in [(true, MatrixStatus::Pass), (false, MatrixStatus::Untested)] {
            let check = result(
                "SSP-INV-5/overrun",
                &["SSP-INV-5", "SSP-ERR-3"],
                Verdict::Warn(warning(completed)),
            );
            let mut rows = vec![row("SSP-INV-5"), row("SSP-ERR-3")];
            judge_matrix(&mut rows, &[check]);
            let status: Vec<MatrixStatus> = rows.iter().map(|r| r.status).collect();
            assert_eq!(status, [inv5, MatrixStatus::Warn], "completed: {completed}");
        }
    }

    /// Every collected warning's rule is named, not only the first one's: SSP-INV-5/overrun
    /// warning on SSP-ERR-3 (the alias) and then on SSP-INV-5 (no `retry`) leaves SSP-INV-5
    /// `warn`, never credited as passed by the check having run to its end.
    #[test]
    fn every_warning_of_a_completed_check_is_named() {
        use conform::engine::finding::{Finding, verdict};
        let warnings = vec![
            Finding::warn("", Value::Null, Value::Null, "alias").on(&["SSP-ERR-3"]),
            Finding::warn("", Value::Null, Value::Null, "no retry").on(&["SSP-INV-5"]),
        ];
        let cited = ["SSP-INV-5".to_string(), "SSP-ERR-3".to_string()];
        let v = verdict("SSP-INV-5/overrun", &cited, true, Ok(()), &warnings, &[]);
        let Verdict::Warn(violation) = &v else {
            panic!("{v:?}")
        };
        assert!(violation.completed);
        assert_eq!(violation.requirements, ["SSP-ERR-3", "SSP-INV-5"]);
        let mut check = result("SSP-INV-5/overrun", &["SSP-INV-5", "SSP-ERR-3"], v.clone());
        check.exchanges = 3;
        let mut rows = vec![row("SSP-INV-5"), row("SSP-ERR-3")];
        judge_matrix(&mut rows, &[check]);
        let status: Vec<MatrixStatus> = rows.iter().map(|r| r.status).collect();
        assert_eq!(status, [MatrixStatus::Warn, MatrixStatus::Warn]);
    }
}
