//! Diff rules on synthetic reports, and the report builder the merge tests share.
#![expect(clippy::unwrap_used)] // tests: a panic is the failure report

use serde_json::json;

use super::*;
use crate::engine::binding::Binding;
use crate::engine::judge::judge_matrix;
use crate::engine::verdict::Violation;

/// The catalogue of the synthetic reports: (ID, level).
const CATALOGUE: [(&str, Level); 4] = [
    ("R-A-1", Level::Must),
    ("R-A-2", Level::Must),
    ("R-B-1", Level::Should),
    ("R-C-1", Level::Must),
];

/// A violation with `message`.
pub(crate) fn violation(message: &str) -> Violation {
    Violation {
        check: "c".into(),
        requirements: Vec::new(),
        step: Some(1),
        pointer: String::new(),
        expected: json!(200),
        observed: json!(500),
        message: message.into(),
        transcript: Vec::new(),
        completed: false,
    }
}

/// One result `id` (`<check>@<transport>` or a check run once) citing `reqs`.
pub(crate) fn result(id: &str, verdict: Verdict, reqs: &[&str], ms: u64) -> CheckResult {
    let (check, transport) = match id.split_once('@') {
        Some((c, b)) => (c, Some(Binding::named(b))),
        None => (id, None),
    };
    CheckResult {
        id: id.into(),
        check: check.into(),
        suite: "alpha".into(),
        area: check.split('/').next().unwrap_or("").into(),
        title: format!("title of {check}"),
        transport,
        requirements: reqs.iter().map(|r| r.to_string()).collect(),
        required: reqs.iter().any(|r| !r.starts_with("R-B")),
        verdict,
        baseline: None,
        duration_ms: ms,
        exchanges: 1,
        self_test: false,
        reproduction: None,
    }
}

/// A report of `checks` with its matrix judged and summary counted.
pub(crate) fn report(checks: Vec<CheckResult>) -> Report {
    let mut requirements: Vec<RequirementRow> = CATALOGUE
        .iter()
        .map(|(id, level)| RequirementRow {
            id: (*id).into(),
            suite: "alpha".into(),
            level: *level,
            area: "a".into(),
            rule: format!("rule {id}"),
            source: "notes".into(),
            library: false,
            status: MatrixStatus::Untested,
            checks: Vec::new(),
            passed: 0,
            failed: 0,
            warned: 0,
        })
        .collect();
    judge_matrix(&mut requirements, &checks);
    let mut r = crate::engine::report::tests::empty_report();
    r.tool.version = "0.1.0".into();
    r.wall_time_ms = 1000;
    r.exchanges = checks.len() as u64;
    r.exchanges_per_second = 1.0;
    r.suites = vec!["alpha".into()];
    r.transports = vec![Binding::new("http"), Binding::new("mcp")];
    r.jobs = 8;
    r.checks = checks;
    r.requirements = requirements;
    r.recount();
    r
}

fn pass(id: &str, reqs: &[&str]) -> CheckResult {
    result(id, Verdict::Pass, reqs, 10)
}

/// OLD: three passing checks on R-A-1 / R-A-2 / R-B-1.
fn old() -> Report {
    report(vec![
        pass("env/a@http", &["R-A-1"]),
        pass("env/a@mcp", &["R-A-1"]),
        pass("env/b@http", &["R-A-2"]),
        pass("env/s@http", &["R-B-1"]),
    ])
}

fn run(old: &Report, new: &Report, opts: &DiffOptions) -> (i32, String, Vec<Kind>) {
    let d = diff(("old.json", old), ("new.json", new), opts);
    let kinds = d.changes.keys().copied().collect();
    (d.exit_code(), d.to_markdown(), kinds)
}

#[test]
fn identical_reports_are_no_regression() {
    let (code, md, kinds) = run(&old(), &old(), &DiffOptions::default());
    assert_eq!(code, 0);
    assert!(kinds.is_empty());
    assert!(md.contains("no regression (exit 0)"), "{md}");
    assert!(md.contains("No result changed its verdict."), "{md}");
}

#[test]
fn a_new_failure_is_a_regression_and_degrades_its_requirement() {
    let mut new = old();
    new.checks[2].verdict = Verdict::Fail(violation("status 500, expected 200"));
    let new = report(new.checks);
    let was = old();
    let d = diff(
        ("old.json", &was),
        ("new.json", &new),
        &DiffOptions::default(),
    );
    assert_eq!(d.exit_code(), 1);
    assert_eq!(d.of(Kind::NewFailure).len(), 1);
    assert_eq!(d.of(Kind::NewFailure)[0].id, "env/b@http");
    let degraded: Vec<&str> = d.degraded().map(|r| r.id.as_str()).collect();
    assert_eq!(degraded, ["R-A-2"]);
    let md = d.to_markdown();
    assert!(md.contains("**regression** (exit 1)"), "{md}");
    assert!(
        md.contains("### New failures by cause (1)")
            && md.contains("| 1 | `R-A-2: expected status = 200, got 500` | env/b@http |"),
        "{md}"
    );
    assert!(
        md.contains(
            "| `env/b@http` | R-A-2 | pass | fail | status 500, expected 200 — status: expected 200, got 500 |"
        ),
        "{md}"
    );
    assert!(
        md.contains("| R-A-2 | MUST | pass | fail | `env/b@http` |"),
        "{md}"
    );
}

#[test]
fn a_fix_is_no_regression() {
    let mut was = old();
    was.checks[2].verdict = Verdict::Fail(violation("broken"));
    let was = report(was.checks);
    let (code, md, kinds) = run(&was, &old(), &DiffOptions::default());
    assert_eq!(code, 0, "{md}");
    assert_eq!(kinds, [Kind::Fixed]);
    assert!(md.contains("### Fixed (1)"), "{md}");
    assert!(md.contains("| R-A-2 | MUST | fail | pass |  |"), "{md}");
}

#[test]
fn a_failure_the_baseline_now_expects_is_listed_not_a_regression() {
    let mut new = old().checks;
    new[2].verdict = Verdict::Fail(violation("known"));
    new[2].baseline = Some(BaselineMark::ExpectedFailure {
        reason: "acme#42".into(),
    });
    let new = report(new);
    let was = old();
    let d = diff(("o", &was), ("n", &new), &DiffOptions::default());
    assert_eq!(d.exit_code(), 0);
    assert_eq!(d.of(Kind::Baselined).len(), 1);
    // The matrix shows R-A-2 failing, but no result fails the run: not degraded.
    assert_eq!(d.requirements[0].now, Some(MatrixStatus::Fail));
    assert_eq!(d.degraded().count(), 0);
    // Removing the entry while the check still fails is a new failure.
    let mut later = new.checks.clone();
    later[2].baseline = None;
    let later = report(later);
    let d = diff(("n", &new), ("l", &later), &DiffOptions::default());
    assert_eq!(d.exit_code(), 1);
    assert_eq!(d.of(Kind::NewFailure)[0].was, State::ExpectedFailure);
}

#[test]
fn unsupported_is_coverage_lost_not_a_regression() {
    let mut new = old().checks;
    for c in &mut new[..2] {
        c.verdict = Verdict::untested("no moderator token");
    }
    let new = report(new);
    let was = old();
    let d = diff(("o", &was), ("n", &new), &DiffOptions::default());
    assert_eq!(d.exit_code(), 0);
    assert_eq!(d.of(Kind::CoverageLost).len(), 2);
    let md = d.to_markdown();
    assert!(
        md.contains("| `env/a@http` | R-A-1 | pass | unsupported | no moderator token |"),
        "{md}"
    );
    let r = &d.requirements[0];
    assert_eq!(
        (r.id.as_str(), r.was, r.now),
        (
            "R-A-1",
            Some(MatrixStatus::Pass),
            // A missing token is the profile's gap: the rule is untested, not n/a (issue 26).
            Some(MatrixStatus::Untested)
        )
    );
}

#[test]
fn warnings_regress_only_with_fail_on_warn() {
    let mut new = old().checks;
    new[3].verdict = Verdict::Warn(violation("should"));
    let new = report(new);
    let (code, md, kinds) = run(&old(), &new, &DiffOptions::default());
    assert_eq!((code, kinds), (0, vec![Kind::NewWarning]), "{md}");
    let strict = DiffOptions {
        fail_on_warn: true,
        ..DiffOptions::default()
    };
    let (code, md, _) = run(&old(), &new, &strict);
    assert_eq!(code, 1, "{md}");
    assert!(
        md.contains("New warnings — regressions (`--fail-on-warn`) (1)"),
        "{md}"
    );
}

#[test]
fn harness_errors_are_listed_not_regressions() {
    let mut new = old().checks;
    new[0].verdict = Verdict::HarnessError {
        message: "bad vector".into(),
    };
    let new = report(new);
    let was = old();
    let d = diff(("o", &was), ("n", &new), &DiffOptions::default());
    assert_eq!(d.of(Kind::HarnessError).len(), 1);
    // The matrix counts a harness error as failed, yet no result fails the run.
    assert_eq!(d.degraded().count(), 0);
    assert_eq!(d.exit_code(), 0);
}

#[test]
fn different_check_sets_are_noted_and_a_new_failing_check_counts() {
    let mut new = old().checks;
    new.remove(3);
    new.push(result(
        "env/new@http",
        Verdict::Fail(violation("x")),
        &["R-C-1"],
        5,
    ));
    new.push(pass("env/newer@http", &["R-A-1"]));
    let mut new = report(new);
    new.tool.version = "0.2.0".into();
    let was = old();
    let d = diff(("o", &was), ("n", &new), &DiffOptions::default());
    assert_eq!(d.added.len(), 2);
    assert_eq!(d.removed.len(), 1);
    assert_eq!(d.removed[0].id, "env/s@http");
    assert_eq!(d.of(Kind::NewFailure)[0].was, State::Absent);
    assert!(
        d.notes
            .iter()
            .any(|n| n.contains("different versions of conform (0.1.0 and 0.2.0)"))
    );
    assert!(
        d.notes
            .iter()
            .any(|n| n.contains("2 results only in NEW, 1 only in OLD"))
    );
    assert_eq!(d.exit_code(), 1);
    // R-B-1 lost its only check: untested now, which is listed but not a regression.
    let b = d.requirements.iter().find(|r| r.id == "R-B-1").unwrap();
    assert_eq!(b.now, Some(MatrixStatus::Untested));
}

#[test]
fn latency_needs_both_the_relative_and_the_absolute_threshold() {
    let rule = LatencyRule {
        percent: 50.0,
        min_delta_ms: 100,
    };
    assert!(!rule.regressed(2, 8), "300% of 2 ms is noise");
    assert!(!rule.regressed(1000, 1400), "40% is under the threshold");
    assert!(rule.regressed(1000, 1600));
    assert!(rule.regressed(150, 260));
    assert!(
        !rule.regressed(150, 240),
        "90 ms is under the absolute threshold"
    );
    let mut new = old().checks;
    new[0].duration_ms = 900; // was 10
    new[3].duration_ms = 14; // was 10: +40%, 4 ms
    let new = report(new);
    let opts = DiffOptions {
        latency: Some(rule),
        ..DiffOptions::default()
    };
    let was = old();
    let d = diff(("o", &was), ("n", &new), &opts);
    let what: Vec<&str> = d.latency.iter().map(|l| l.what.as_str()).collect();
    assert_eq!(what, ["env/a@http", "area alpha/env"]);
    assert_eq!(d.exit_code(), 1);
    // Off unless asked for.
    assert_eq!(run(&old(), &new, &DiffOptions::default()).0, 0);
}

#[test]
fn tables_are_capped() {
    let mut was = Vec::new();
    let mut now = Vec::new();
    for i in 0..30 {
        was.push(pass(&format!("env/x{i}@http"), &["R-A-1"]));
        now.push(result(
            &format!("env/x{i}@http"),
            Verdict::Fail(violation("x")),
            &["R-A-1"],
            1,
        ));
    }
    let opts = DiffOptions {
        max_rows: 10,
        ..DiffOptions::default()
    };
    let (code, md, _) = run(&report(was), &report(now), &opts);
    assert_eq!(code, 1);
    assert!(md.contains("### New failures — regressions (30)"), "{md}");
    assert!(md.contains("… and 20 more"), "{md}");
}

#[test]
fn percentages_parse() {
    assert_eq!(parse_percent("50%").unwrap(), 50.0);
    assert_eq!(parse_percent(" 12.5 ").unwrap(), 12.5);
    for bad in ["", "%", "-5%", "0", "abc", "NaN"] {
        assert!(parse_percent(bad).is_err(), "{bad:?} accepted");
    }
}

#[test]
fn classification_table() {
    use State::*;
    let cases = [
        (Pass, Fail, Some(Kind::NewFailure)),
        (Warn, Fail, Some(Kind::NewFailure)),
        (Absent, Fail, Some(Kind::NewFailure)),
        (Unsupported, Fail, Some(Kind::NewFailure)),
        (Fail, Warn, Some(Kind::Other)),
        (Pass, Warn, Some(Kind::NewWarning)),
        (Fail, Pass, Some(Kind::Fixed)),
        (ExpectedFailure, Pass, Some(Kind::Fixed)),
        (Pass, ExpectedFailure, Some(Kind::Baselined)),
        (Pass, Unsupported, Some(Kind::CoverageLost)),
        (Unsupported, Pass, Some(Kind::CoverageGained)),
        (Pass, HarnessError, Some(Kind::HarnessError)),
        (Pass, Absent, None),
        (Absent, Pass, None),
        (Unsupported, Skipped, Some(Kind::Other)),
        (Fail, Fail, None),
    ];
    for (was, now, want) in cases {
        assert_eq!(classify(was, now), want, "{was:?} -> {now:?}");
    }
}
