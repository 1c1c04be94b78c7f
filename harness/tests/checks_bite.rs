//! Proof that the checks bite: a server breaking one rule gets failures, and every failure
//! cites a requirement that the broken rule violates (no collateral noise elsewhere).
//! Also exercises the baseline (expected failures, stale entries) on a real failure set.
#![expect(clippy::expect_used, clippy::unwrap_used)] // tests: a panic is the failure report

mod support;

use std::collections::BTreeSet;
use std::sync::Arc;

use conform::engine::baseline::{Baseline, Entry};
use conform::engine::run::{RunError, RunOptions, run};
use conform::engine::target::{ConnectOptions, Profile, Target};
use conform::engine::verdict::Verdict;
use conform::reference::demo_profile;
use conform::transport::TransportKind;
use support::broken::{self, Fault};

/// The Parley pre-flight over HTTP only (the broken servers speak no MCP).
async fn connect(profile: Profile) -> Result<Target, conform::engine::target::TargetError> {
    let opts = ConnectOptions {
        transports: vec![TransportKind::Http.into()],
        ..ConnectOptions::default()
    };
    conform::registry::connect(profile, &opts, &["parley"]).await
}

async fn failures_against(fault: Fault) -> (Vec<(String, Vec<String>)>, i32) {
    let server = broken::start(fault).await;
    let target = connect(demo_profile(&server.base_url))
        .await
        .expect("pre-flight");
    // None of the faults touches quotas (the quota vectors are left out).
    let report = support::reference::parley_over_http(target).await;
    assert_one_blame(&report);
    let fails = report
        .checks
        .iter()
        .filter(|c| matches!(c.verdict, Verdict::Fail(_) | Verdict::HarnessError { .. }))
        .map(|c| (c.check.clone(), c.requirements.clone()))
        .collect();
    (fails, report.exit_code())
}

/// Issue 26: the matrix, SARIF and the badge blame one set of requirements — the IDs the
/// failures violated, not every ID a failing check cites.
fn assert_one_blame(report: &conform::engine::report::Report) {
    use conform::engine::report::{MatrixStatus, sarif};
    let violated: BTreeSet<String> = (report.checks.iter())
        .filter(|c| matches!(c.verdict, Verdict::Fail(_) | Verdict::Warn(_)))
        .flat_map(|c| c.violated().unwrap_or_default().to_vec())
        .collect();
    let red: BTreeSet<String> = (report.requirements.iter())
        .filter(|r| matches!(r.status, MatrixStatus::Fail | MatrixStatus::Warn))
        .map(|r| r.id.clone())
        .collect();
    assert_eq!(
        red, violated,
        "the matrix blames what the failures violated"
    );
    let cited: BTreeSet<String> = (report.checks.iter())
        .filter(|c| matches!(c.verdict, Verdict::Fail(_)))
        .flat_map(|c| c.requirements.clone())
        .collect();
    eprintln!(
        "blamed {red:?} of {} cited by the failing checks",
        cited.len()
    );
    // One seeded bug reads as one failure group in every human format.
    // The summary prints its groups naming 6 results each: the same lines.
    let lines = report.group_lines(6);
    eprint!("{lines}");
    // The vectors' failures: one group. A history or a model may also catch the bug, with
    // its own counterexample (a fact of another shape), depending on how its race ran.
    let searched = |id: &str| id.starts_with("history/") || id.starts_with("model/");
    let vector_groups = (report.failure_groups().into_iter())
        .filter(|g| !g.checks.iter().all(|c| searched(c)))
        .count();
    assert_eq!(vector_groups, 1, "one bug, one group:\n{lines}");
    let summary = report.summary_table();
    assert!(
        summary.contains(&lines),
        "the summary shows the groups: {summary}"
    );
    let log: serde_json::Value =
        serde_json::from_str(&sarif::render(report, None)).expect("SARIF is JSON");
    let in_sarif: BTreeSet<String> = log["runs"][0]["results"]
        .as_array()
        .expect("results")
        .iter()
        .flat_map(|r| {
            r["properties"]["requirements"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .filter_map(|v| v.as_str().map(str::to_string))
        .collect();
    assert_eq!(in_sarif, red, "SARIF names the matrix's set");
}

fn assert_deserved(fault: Fault, fails: &[(String, Vec<String>)], primary: &str, allowed: &[&str]) {
    eprintln!(
        "{fault:?}: {} failing checks: {:?}",
        fails.len(),
        fails.iter().map(|f| &f.0).collect::<Vec<_>>()
    );
    assert!(
        !fails.is_empty(),
        "{fault:?}: the suite did not notice the broken rule"
    );
    assert!(
        fails
            .iter()
            .any(|(_, reqs)| reqs.iter().any(|r| r == primary)),
        "{fault:?}: no failing vector cites {primary}: {fails:?}"
    );
    let undeserved: Vec<_> = fails
        .iter()
        .filter(|(_, reqs)| !reqs.iter().any(|r| allowed.contains(&r.as_str())))
        .collect();
    assert!(
        undeserved.is_empty(),
        "{fault:?}: failures not explained by the broken rule: {undeserved:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn accepting_501_characters_fails_pv_en_2() {
    let (fails, code) = failures_against(Fault::AcceptsLongBody).await;
    assert_eq!(code, 1);
    // PV-MF-2: the declared limit is not the enforced one.
    assert_deserved(
        Fault::AcceptsLongBody,
        &fails,
        "PV-EN-2",
        &["PV-EN-2", "PV-MF-2"],
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_reader_posting_fails_pv_au_1() {
    let (fails, code) = failures_against(Fault::ReaderWrites).await;
    assert_eq!(code, 1);
    // PV-AU-6: the 403 comes first in the check order; PV-AU-5: rights belong to the token row;
    // PV-RD-1 `reading/refused-messages-absent` uses a reader's refused post as its refusal.
    assert_deserved(
        Fault::ReaderWrites,
        &fails,
        "PV-AU-1",
        &["PV-AU-1", "PV-AU-5", "PV-AU-6", "PV-RD-1"],
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn forgetting_the_lock_fails_pv_st_4() {
    let (fails, code) = failures_against(Fault::ForgetsLock).await;
    assert_eq!(code, 1);
    // PV-AU-4: locking binds the human too.
    assert_deserved(
        Fault::ForgetsLock,
        &fails,
        "PV-ST-4",
        &["PV-ST-4", "PV-AU-4"],
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn baseline_marks_expected_failures_and_rejects_stale_entries() {
    let server = broken::start(Fault::ReaderWrites).await;
    let suites = vec![support::vectors::suite("parley").expect("suite")];
    let target = Arc::new(
        connect(demo_profile(&server.base_url))
            .await
            .expect("pre-flight"),
    );
    let base = RunOptions {
        transports: vec![TransportKind::Http.into()],
        filter: Some("PV-AU-1".into()),
        ..RunOptions::default()
    };
    let first = run(target.clone(), &suites, &base).await.expect("run");
    let failing: BTreeSet<String> = first
        .checks
        .iter()
        .filter(|c| matches!(c.verdict, Verdict::Fail(_)))
        .map(|c| c.check.clone())
        .collect();
    assert!(!failing.is_empty());
    let passing = first
        .checks
        .iter()
        .find(|c| c.verdict.is_pass())
        .map(|c| c.check.clone());
    let mut entries: Vec<Entry> = failing
        .iter()
        .map(|c| Entry {
            check: c.clone(),
            transport: None,
            reason: "known: reader may post".into(),
        })
        .collect();
    if let Some(p) = &passing {
        entries.push(Entry {
            check: p.clone(),
            transport: Some(TransportKind::Http.into()),
            reason: "was flaky".into(),
        });
    }
    let opts = RunOptions {
        baseline: Some(Baseline::from_entries(entries.clone(), "inline".into()).unwrap()),
        ..base.clone()
    };
    let second = run(target.clone(), &suites, &opts).await.expect("run");
    assert_eq!(second.summary.expected_failure, failing.len());
    assert_eq!(
        second.summary.unexpected_pass,
        usize::from(passing.is_some())
    );
    // Issue 26: a baseline entry whose check now passes is stale and fails the run, named;
    // `--allow-stale-baseline` turns it into a warning.
    if let Some(p) = &passing {
        assert_eq!(second.exit_code(), 1, "a stale entry fails the run");
        assert_eq!(second.stale_entries(), [format!("{p}@http").as_str()]);
        assert!(second.summary_table().contains("stale baseline entries"));
        let allowed = RunOptions {
            allow_stale_baseline: true,
            ..opts.clone()
        };
        let third = run(target.clone(), &suites, &allowed).await.expect("run");
        assert_eq!(
            third.exit_code(),
            0,
            "every failure is expected, staleness allowed"
        );
    } else {
        assert_eq!(second.exit_code(), 0, "every failure is expected");
    }

    entries.push(Entry {
        check: "no/such-vector".into(),
        transport: None,
        reason: "stale".into(),
    });
    let opts = RunOptions {
        baseline: Some(Baseline::from_entries(entries, "inline".into()).unwrap()),
        ..base
    };
    match run(target, &suites, &opts).await {
        Err(RunError::Baseline(e)) => assert!(e.to_string().contains("no/such-vector")),
        other => panic!(
            "a stale baseline entry must be an error, got {:?}",
            other.map(|r| r.summary)
        ),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn preflight_stops_on_wrong_tokens_and_rights() {
    let server = broken::start(Fault::ReaderWrites).await;
    let mut profile = demo_profile(&server.base_url);
    let tokens = profile
        .sections
        .get_mut("tokens")
        .and_then(toml::Value::as_table_mut)
        .expect("demo tokens");
    tokens.insert("agent_b".into(), "not-a-token".into());
    // A "reader" that can write would turn every refusal vector into a false failure.
    tokens.insert("reader".into(), "shadow-reader-writes".into());
    let err = connect(profile).await.expect_err("pre-flight must fail");
    let msg = err.to_string();
    assert!(msg.contains("role agent_b: token rejected"), "{msg}");
    assert!(
        msg.contains("role reader must not hold the `write` right"),
        "{msg}"
    );

    let err = connect(demo_profile("http://127.0.0.1:9"))
        .await
        .expect_err("unreachable");
    assert!(err.to_string().contains("unreachable"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_http_only_server_fails_pv_tr_1a_only() {
    let server = broken::start(Fault::HttpOnly).await;
    let target = connect(demo_profile(&server.base_url))
        .await
        .expect("pre-flight");
    let suites = vec![support::vectors::suite("parley").expect("suite")];
    let opts = RunOptions {
        filter: Some("envelope/*".into()),
        ..RunOptions::default()
    };
    let report = run(Arc::new(target), &suites, &opts).await.expect("run");
    assert_eq!(
        report.transports,
        [TransportKind::Http.into()],
        "MCP is not exercised"
    );
    assert!(
        report
            .checks
            .iter()
            .all(|c| c.transport != Some(TransportKind::Mcp.into()))
    );
    let opts = RunOptions {
        filter: Some("PV-TR-1a".into()),
        ..RunOptions::default()
    };
    let target = connect(demo_profile(&server.base_url))
        .await
        .expect("pre-flight");
    let report = run(Arc::new(target), &suites, &opts).await.expect("run");
    let failed: Vec<_> = report
        .checks
        .iter()
        .filter(|c| matches!(c.verdict, Verdict::Fail(_)))
        .map(|c| c.check.as_str())
        .collect();
    assert!(failed.contains(&"PV-TR-1a/bindings"), "{failed:?}");
    let undeserved: Vec<_> = report
        .checks
        .iter()
        .filter(|c| !c.verdict.is_pass() && !c.requirements.iter().any(|r| r == "PV-TR-1a"))
        .map(|c| (c.id.as_str(), c.verdict.name()))
        .collect();
    assert!(
        undeserved.is_empty(),
        "only PV-TR-1a checks fail: {undeserved:?}"
    );
}
