#![expect(clippy::unwrap_used)] // tests: a panic is the failure report

use std::path::Path;

use super::*;
use crate::engine::report::{CheckResult, MatrixStatus, Report, RequirementRow};
use crate::engine::verdict::Verdict;
use crate::engine::verdict::Violation;

/// The committed full-suite report against the reference (2,000+ results).
fn reference() -> Report {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../reports/reference/report.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn input(report: Report, name: Option<&str>) -> Input {
    Input {
        name: name.map(str::to_string),
        report,
        html: Some("./impl/report.html".into()),
    }
}

fn row<'a>(r: &'a mut Report, id: &str) -> &'a mut RequirementRow {
    r.requirements.iter_mut().find(|q| q.id == id).unwrap()
}

/// `r` with `id` failed by one new check result named `check`.
fn failing(mut r: Report, id: &str, check: &str) -> Report {
    let q = row(&mut r, id);
    q.status = MatrixStatus::Fail;
    q.failed += 1;
    let mut c: CheckResult = r.checks[0].clone();
    c.id = check.into();
    c.requirements = vec![id.into()];
    c.verdict = Verdict::Fail(Violation {
        check: check.into(),
        requirements: vec![id.into()],
        step: None,
        pointer: String::new(),
        expected: serde_json::Value::Null,
        observed: serde_json::Value::Null,
        message: "broken".into(),
        transcript: Vec::new(),
        completed: false,
    });
    r.checks.push(c);
    r
}

#[test]
fn disagreements_come_first_and_failures_are_listed() {
    let clean = reference();
    let id = "PV-TR-1";
    let broken = failing(reference(), id, "transport/<b>x</b>@http");
    let m = build(&[input(clean, Some("a")), input(broken, Some("b"))]).unwrap();
    assert_eq!(m.rows[0].id, id, "the one disagreement leads");
    assert!(m.rows[0].disagree && !m.rows[1].disagree);
    let cell = &m.rows[0].cells[1];
    assert_eq!(cell.status, MatrixStatus::Fail);
    assert_eq!(cell.listed, vec!["transport/<b>x</b>@http".to_string()]);
    assert_eq!(m.rows[0].cells[0].status, MatrixStatus::Pass);
    assert_eq!(
        m.columns[1].required.passed + 1,
        m.columns[0].required.passed
    );
    let page = html::render(&m);
    assert!(
        page.contains("./impl/report.html#c-transport--b-x--b--http"),
        "links the failure"
    );
    assert!(!page.contains("<b>x</b>"), "ids are escaped");
    let md = markdown::render(&m);
    assert!(md.contains(&format!("| `{id}` ≠")), "{md}");
}

#[test]
fn a_suite_not_run_is_untested_never_passed() {
    let full = reference();
    let mut ssp_only = reference();
    ssp_only.requirements.retain(|q| q.suite == "ssp");
    ssp_only.completeness.partial = vec!["--suite ssp".into()];
    let m = build(&[input(full, None), input(ssp_only, Some("ssp only"))]).unwrap();
    let parley = m.rows.iter().find(|r| r.suite == "parley").unwrap();
    assert_eq!(parley.cells[1].status, MatrixStatus::Untested);
    assert!(parley.disagree);
    assert_eq!(
        m.columns[1].caveats,
        vec!["partial: --suite ssp".to_string()]
    );
    let page = html::render(&m);
    assert!(page.contains("NOT COMPLETE: partial: --suite ssp"));
    assert!(page.contains("<td class=\"untested\">? untested</td>"));
}

#[test]
fn reports_of_different_suites_are_refused_with_each_digest() {
    let a = reference();
    let mut b = reference();
    b.suite_digest.as_mut().unwrap().sha256 = "sha256:other".into();
    let e = build(&[input(a.clone(), Some("a")), input(b, Some("b"))]).unwrap_err();
    let text = e.to_string();
    assert!(
        text.contains("sha256:other") && text.contains(": b"),
        "{text}"
    );
    let mut old = reference();
    old.suite_digest = None;
    let e = build(&[input(a, None), input(old, Some("old"))]).unwrap_err();
    assert!(matches!(e, MatrixError::NoDigest(n) if n == "old"));
    assert!(matches!(build(&[]), Err(MatrixError::Empty)));
}

#[test]
fn repeated_target_names_are_numbered() {
    let m = build(&[input(reference(), None), input(reference(), None)]).unwrap();
    let names: Vec<_> = m.columns.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "reference (spawned in process) #1",
            "reference (spawned in process) #2"
        ]
    );
    assert!(m.rows.iter().all(|r| !r.disagree));
}

#[test]
fn a_run_under_a_time_scale_says_so_in_its_column() {
    let mut slow = reference();
    slow.target.time_scale = crate::transport::budget::TimeScale::new(5.0).unwrap();
    let m = build(&[input(reference(), None), input(slow, None)]).unwrap();
    let texts: Vec<String> = m.columns.iter().map(markdown::run_text).collect();
    assert!(!texts[0].contains("time scale"), "{}", texts[0]);
    assert!(texts[1].contains("time scale ×5"), "{}", texts[1]);
}

#[test]
fn relative_paths_join_two_folders() {
    assert_eq!(
        relative(Path::new("/a/b/r/report.html"), Path::new("/a/m")).as_deref(),
        Some("../b/r/report.html")
    );
    assert_eq!(
        relative(Path::new("/a/m/x/report.html"), Path::new("/a/m/./")).as_deref(),
        Some("./x/report.html")
    );
    assert_eq!(
        relative(Path::new("/a/m/variant a#1/r?.html"), Path::new("/a/m")).as_deref(),
        Some("./variant%20a%231/r%3F.html")
    );
}
