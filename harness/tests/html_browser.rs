//! The HTML report in a real browser (issue 15, item 4): headless Chromium loads a report
//! with failures and the test asserts on what a person sees — no console error, the verdict
//! and the failure count inside the first 1280×800 viewport, hostile text left inert, the
//! filter box filtering, the page readable with scripts off — and keeps a screenshot
//! (printed path, under `target/tmp/html-report/`). A second test loads the full suite's
//! page (rendered from the committed `reports/reference/report.json`), checks its size
//! budget and prints its load time.
//!
//! Chromium is Debian's `chromium` (`CONFORM_CHROMIUM` overrides the path). Without it the
//! tests skip loudly, unless `CONFORM_REQUIRE_BROWSER` is set (`.ci/run` sets it and
//! installs the browser), in which case they fail.
#![expect(clippy::unwrap_used)] // tests: a panic is the failure report

#[path = "browser/cdp.rs"]
mod cdp;
#[path = "browser/fixture.rs"]
mod fixture;

use std::path::{Path, PathBuf};

use conform::engine::report::{Report, html};
use serde_json::{Value, json};

/// The page budget of the full suite: issue 15 asked "under 300 KB" (read as 300,000 bytes).
/// The page measured 308,147 bytes on 2026-12-05 (2,293 results); a check row's title in a
/// `<p>` instead of `<br><small>…</small>` and a passing cell's class `p` brought it under
/// (the figure is in the closing note of that session). Never raise it without a new reason.
const FULL_SUITE_BUDGET: usize = 300_000;

fn chromium(test: &str) -> Option<PathBuf> {
    let found = std::env::var_os("CONFORM_CHROMIUM")
        .map(PathBuf::from)
        .or_else(|| {
            ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
                .iter()
                .map(PathBuf::from)
                .find(|p| p.exists())
        });
    match found {
        Some(p) => Some(p),
        None if std::env::var_os("CONFORM_REQUIRE_BROWSER").is_some() => panic!(
            "CONFORM_REQUIRE_BROWSER is set but no chromium was found \
             (apt-get install chromium, or set CONFORM_CHROMIUM)"
        ),
        None => {
            eprintln!(
                "\n\n*** SKIPPED {test}: no chromium at /usr/bin/chromium (install Debian's \
                 `chromium` or set CONFORM_CHROMIUM); set CONFORM_REQUIRE_BROWSER=1 to make \
                 this a failure ***\n"
            );
            None
        }
    }
}

/// `target/tmp/html-report/`, kept after the test for a person to look at.
fn artifacts() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("html-report");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn write_page(name: &str, report: &Report) -> (PathBuf, String) {
    let path = artifacts().join(name);
    let page = html::render(report);
    std::fs::write(&path, &page).unwrap();
    let url = format!("file://{}", path.display());
    (path, url)
}

/// Where an element is and what it says, relative to the viewport.
const PLACE: &str = "(id) => { const e = document.getElementById(id); if (!e) return null; \
const r = e.getBoundingClientRect(); return {text: e.innerText, top: r.top, bottom: r.bottom, \
in_view: r.width > 0 && r.height > 0 && r.top >= 0 && r.bottom <= window.innerHeight}; }";

fn place(b: &mut cdp::Browser, id: &str) -> Value {
    b.eval(&format!("({PLACE})('{id}')")).unwrap()
}

/// How many of the elements matching `selector` are rendered (`checkVisibility`: not
/// hidden, not inside a closed `<details>`), and whether one rendered element contains `text`.
fn rendered(b: &mut cdp::Browser, selector: &str, text: &str) -> (u64, bool) {
    let v = b
        .eval(&format!(
            "(() => {{ const shown = [...document.querySelectorAll({sel})]\
.filter(e => e.checkVisibility()); return [shown.length, \
shown.some(e => e.textContent.includes({text}))]; }})()",
            sel = json!(selector),
            text = json!(text)
        ))
        .unwrap();
    (v[0].as_u64().unwrap(), v[1].as_bool().unwrap())
}

fn type_filter(b: &mut cdp::Browser, text: &str) {
    b.eval("(() => { const i = document.getElementById('filter'); i.value = ''; i.focus(); })()")
        .unwrap();
    if text.is_empty() {
        b.eval("document.getElementById('filter').dispatchEvent(new Event('input'))")
            .unwrap();
    } else {
        // Typed as a person would: the browser fires the `input` events itself.
        b.call("Input.insertText", json!({"text": text})).unwrap();
    }
}

#[test]
fn report_with_failures_reads_in_a_real_browser() {
    let Some(chromium) = chromium("report_with_failures_reads_in_a_real_browser") else {
        return;
    };
    let report = fixture::report();
    assert_eq!(report.exit_code(), 1, "the fixture fails the run");
    let (_, url) = write_page("report.html", &report);
    let mut b = cdp::Browser::launch(&chromium, 1280, 800).unwrap();
    b.navigate(&url).unwrap();
    let shot = artifacts().join("html-report.png");
    std::fs::write(&shot, b.screenshot().unwrap()).unwrap();
    eprintln!(
        "screenshot of the report's first viewport: {}",
        shot.display()
    );

    assert_eq!(b.errors(), Vec::<String>::new(), "console errors on load");
    assert_eq!(
        b.eval("document.documentElement.dataset.filterReady")
            .unwrap(),
        json!("1"),
        "the filter script ran"
    );
    let verdict = place(&mut b, "verdict");
    assert_eq!(
        verdict["in_view"],
        json!(true),
        "verdict above the fold: {verdict}"
    );
    let text = verdict["text"].as_str().unwrap();
    assert!(text.contains("FAIL") && text.contains("exit 1"), "{text}");
    let count = place(&mut b, "failure-count");
    assert_eq!(
        count["in_view"],
        json!(true),
        "failure count above the fold: {count}"
    );
    let text = count["text"].as_str().unwrap();
    assert!(
        text.contains(&format!("{} failed", report.summary.fail)),
        "{text}"
    );

    // Hostile text (a check id and a server message with a <script>) is shown, never run.
    assert_eq!(b.eval("typeof window.pwned").unwrap(), json!("undefined"));
    assert_eq!(b.eval("document.scripts.length").unwrap(), json!(1));
    let shown = b
        .eval(&format!(
            "document.body.innerText.includes({})",
            json!(fixture::HOSTILE)
        ))
        .unwrap();
    assert_eq!(shown, json!(true), "the hostile text is displayed as text");

    not_run_and_groups(&mut b);
    filter_box_filters(&mut b);
    assert_eq!(
        b.errors(),
        Vec::<String>::new(),
        "console errors while filtering"
    );
}

/// Issue 26: "unsupported" in the summary leads to the results that judged nothing, with
/// their reasons; failures are grouped by what they expected; a multi-line message (a
/// model's numbered counterexample) keeps its lines.
fn not_run_and_groups(b: &mut cdp::Browser) {
    let link = b
        .eval("(() => { const a = document.querySelector('#verdict a[href=\"#not-run\"], a[href=\"#not-run\"]'); return a && a.textContent })()")
        .unwrap();
    assert!(
        link.as_str().is_some_and(|t| t.contains("unsupported")),
        "the unsupported count links to the list: {link}"
    );
    let listed = b
        .eval("document.getElementById('not-run').textContent")
        .unwrap();
    let listed = listed.as_str().unwrap_or_default();
    assert!(
        listed.contains("state/optional-part@http")
            && listed.contains("the target does not enable the optional part"),
        "{listed}"
    );
    let groups = b
        .eval("document.querySelectorAll('table.groups tbody tr').length")
        .unwrap();
    assert!(
        groups.as_u64().is_some_and(|n| n >= 1),
        "failure groups: {groups}"
    );
    let wrap = b
        .eval("getComputedStyle(document.querySelector('article.failure .msg')).whiteSpace")
        .unwrap();
    assert_eq!(wrap, json!("pre-wrap"), "numbered steps keep their lines");
}

/// Failures are shown first and passing checks start collapsed; the filter narrows to what
/// was typed (opening the group holding it) and clearing it restores the page.
fn filter_box_filters(b: &mut cdp::Browser) {
    let (failures, _) = rendered(b, "article.failure", "");
    assert_eq!(
        failures, 3,
        "two failures and a warning, each in an article"
    );
    let (_, needle) = rendered(b, "#checks tr", fixture::NEEDLE);
    assert!(!needle, "passing checks start collapsed");

    type_filter(b, fixture::NEEDLE);
    let (rows, needle) = rendered(b, "#checks tbody tr", fixture::NEEDLE);
    assert_eq!((rows, needle), (1, true), "only the typed check is listed");
    let (failures, _) = rendered(b, "article.failure", "");
    assert_eq!(failures, 0, "failures not matching the filter are hidden");
    let out = b
        .eval("document.getElementById('filter-count').textContent")
        .unwrap();
    assert!(out.as_str().unwrap().starts_with("1 of "), "{out}");

    type_filter(b, &format!("{} http", fixture::FAILING));
    let (failures, failing) = rendered(b, "article.failure", fixture::FAILING);
    assert_eq!((failures, failing), (1, true), "terms are ANDed");

    // Issue 26: a verdict word finds that verdict, not a reason that contains it.
    type_filter(b, "unsupported");
    let (rows, optional) = rendered(b, "#checks tbody tr", "state/optional-part");
    assert_eq!((rows, optional), (1, true), "only the unsupported result");

    type_filter(b, "");
    let (failures, _) = rendered(b, "article.failure", "");
    assert_eq!(failures, 3, "clearing the filter shows everything again");
    let (_, needle) = rendered(b, "#checks tr", fixture::NEEDLE);
    assert!(!needle, "and closes the groups it opened");
}

#[test]
fn report_reads_without_javascript() {
    let Some(chromium) = chromium("report_reads_without_javascript") else {
        return;
    };
    let (_, url) = write_page("report-nojs.html", &fixture::report());
    let mut b = cdp::Browser::launch(&chromium, 1280, 800).unwrap();
    b.call(
        "Emulation.setScriptExecutionDisabled",
        json!({"value": true}),
    )
    .unwrap();
    b.navigate(&url).unwrap();
    assert_eq!(
        b.eval("document.documentElement.dataset.filterReady ?? 'no'")
            .unwrap(),
        json!("no"),
        "the page script did not run"
    );
    let verdict = place(&mut b, "verdict");
    assert_eq!(verdict["in_view"], json!(true), "{verdict}");
    let (failures, failing) = rendered(&mut b, "article.failure", fixture::FAILING);
    assert_eq!(
        (failures, failing),
        (3, true),
        "failures readable without script"
    );
    let (boxes, _) = rendered(&mut b, "#filter-box", "");
    assert_eq!(boxes, 0, "no dead filter box without script");
}

/// The full suite against the reference (the committed report's JSON, 2,200+ results) fits
/// the page budget and loads in Chromium without error; prints size and load time.
#[test]
fn full_suite_page_fits_the_budget_and_loads() {
    let json_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../reports/reference/report.json");
    let report: Report =
        serde_json::from_str(&std::fs::read_to_string(&json_path).unwrap()).unwrap();
    assert!(report.checks.len() > 2000, "the full suite");
    let (path, url) = write_page("full-suite.html", &report);
    let size = std::fs::metadata(&path).unwrap().len() as usize;
    eprintln!(
        "full-suite page: {} results, {size} bytes ({:.0} KB), {}",
        report.checks.len(),
        size as f64 / 1024.0,
        path.display()
    );
    assert!(
        size < FULL_SUITE_BUDGET,
        "full-suite page is {size} bytes, budget {FULL_SUITE_BUDGET}"
    );
    let Some(chromium) = chromium("full_suite_page_fits_the_budget_and_loads") else {
        return;
    };
    let mut b = cdp::Browser::launch(&chromium, 1280, 800).unwrap();
    b.navigate(&url).unwrap();
    assert_eq!(b.errors(), Vec::<String>::new(), "console errors on load");
    let timing = b
        .eval(
            "(() => { const n = performance.getEntriesByType('navigation')[0]; \
return {dom: n.domContentLoadedEventEnd, load: n.loadEventEnd}; })()",
        )
        .unwrap();
    eprintln!("full-suite page load in Chromium (ms from navigation start): {timing}");
    let verdict = place(&mut b, "verdict");
    assert_eq!(verdict["in_view"], json!(true), "{verdict}");
    let shot = artifacts().join("full-suite.png");
    std::fs::write(&shot, b.screenshot().unwrap()).unwrap();
    eprintln!("screenshot: {}", shot.display());
}

/// The conformance matrix's page budget for ten implementations of the full suite (issue 30:
/// "stays small"; measured 2026-12-05 at the size printed by the test below).
const MATRIX_TEN_BUDGET: usize = 200_000;

/// `r` with requirement `id` failed by its first citing result (a failure the matrix links).
fn failing(mut r: Report, id: &str) -> (Report, String) {
    use conform::engine::report::MatrixStatus;
    use conform::engine::verdict::{Verdict, Violation};
    let c = r
        .checks
        .iter_mut()
        .find(|c| c.requirements.iter().any(|q| q == id))
        .unwrap();
    c.verdict = Verdict::Fail(Violation {
        check: c.check.clone(),
        requirements: vec![id.into()],
        step: None,
        pointer: String::new(),
        expected: Value::Null,
        observed: Value::Null,
        message: "broken on purpose".into(),
        transcript: Vec::new(),
        completed: false,
    });
    let failed = c.id.clone();
    let row = r.requirements.iter_mut().find(|q| q.id == id).unwrap();
    row.status = MatrixStatus::Fail;
    row.failed += 1;
    (r, failed)
}

/// Issue 30: ten implementations of the full suite side by side — one that fails a rule,
/// one whose run was partial — fit a small page that loads in Chromium without error, puts
/// the disagreement first, links the failing check into that implementation's own report,
/// and never draws an untested cell as passed. Screenshot under `target/tmp/html-report/`.
#[test]
fn matrix_of_ten_implementations_reads_in_a_real_browser() {
    use conform::engine::report::matrix::{self, Input};
    let json_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../reports/reference/report.json");
    let clean: Report =
        serde_json::from_str(&std::fs::read_to_string(&json_path).unwrap()).unwrap();
    let (broken, failed_check) = failing(clean.clone(), "PV-EN-2");
    let broken_page = artifacts().join("matrix-broken-report.html");
    std::fs::write(&broken_page, html::render(&broken)).unwrap();
    let mut partial = clean.clone();
    partial.requirements.retain(|q| q.suite == "ssp");
    partial.completeness.partial = vec!["--suite ssp".into()];
    let mut inputs: Vec<Input> = (0..8)
        .map(|i| Input {
            name: Some(format!("implementation {i}")),
            report: clean.clone(),
            html: None,
        })
        .collect();
    inputs.push(Input {
        name: Some("broken".into()),
        report: broken,
        html: Some("matrix-broken-report.html".into()),
    });
    inputs.push(Input {
        name: Some("ssp only".into()),
        report: partial,
        html: None,
    });
    let m = matrix::build(&inputs).unwrap();
    let page = matrix::html::render(&m);
    let path = artifacts().join("matrix.html");
    std::fs::write(&path, &page).unwrap();
    eprintln!(
        "matrix page: {} implementations × {} requirements, {} bytes ({:.0} KB), {}",
        m.columns.len(),
        m.rows.len(),
        page.len(),
        page.len() as f64 / 1024.0,
        path.display()
    );
    assert!(
        page.len() < MATRIX_TEN_BUDGET,
        "matrix page is {} bytes, budget {MATRIX_TEN_BUDGET}",
        page.len()
    );
    let Some(chromium) = chromium("matrix_of_ten_implementations_reads_in_a_real_browser") else {
        return;
    };
    let mut b = cdp::Browser::launch(&chromium, 1280, 800).unwrap();
    b.navigate(&format!("file://{}", path.display())).unwrap();
    let shot = artifacts().join("matrix.png");
    std::fs::write(&shot, b.screenshot().unwrap()).unwrap();
    eprintln!("screenshot of the matrix: {}", shot.display());
    assert_eq!(b.errors(), Vec::<String>::new(), "console errors on load");
    matrix_reads(&mut b, &failed_check);
}

fn matrix_reads(b: &mut cdp::Browser, failed_check: &str) {
    // The rows up to the second group header: the disagreements, the failing one among them.
    let lead = b
        .eval("(() => { const rows = [...document.querySelectorAll('#matrix tbody tr')]; const next = rows.findIndex((r, i) => i > 0 && r.classList.contains('grp')); return [rows[0].innerText, rows.slice(1, next).map(r => r.innerText)]; })()")
        .unwrap();
    assert!(
        lead[0].as_str().unwrap().contains("disagree"),
        "the disagreements lead: {}",
        lead[0]
    );
    let rows = lead[1].as_array().unwrap();
    assert!(
        rows.iter()
            .any(|r| r.as_str().unwrap().starts_with("PV-EN-2")
                && r.as_str().unwrap().contains("✗ fail")),
        "the failed rule is among them"
    );
    assert!(
        rows.iter().all(|r| r.as_str().unwrap().contains('≠')),
        "only disagreements there"
    );
    let link = b
        .eval(&format!(
            "(() => {{ const a = [...document.querySelectorAll('#matrix a')].find(a => a.textContent === {}); return a && a.getAttribute('href'); }})()",
            json!(failed_check)
        ))
        .unwrap();
    let href = link.as_str().unwrap(); // null: the failing check is not linked
    let (file, anchor) = href.split_once('#').unwrap();
    let target = std::fs::read_to_string(artifacts().join(file)).unwrap();
    assert!(
        target.contains(&format!("id=\"{anchor}\"")),
        "{href} points at the failure in that report"
    );
    let colours = b
        .eval("(() => { const bg = s => getComputedStyle(document.querySelector(s)).backgroundColor; return [bg('td.pass'), bg('td.untested')]; })()")
        .unwrap();
    assert_ne!(colours[0], colours[1], "untested is never drawn as passed");
    let partial = b
        .eval("(() => { const r = document.querySelector('#implementations tr.incomplete'); return r && r.innerText; })()")
        .unwrap();
    assert!(
        partial
            .as_str()
            .is_some_and(|t| t.contains("ssp only") && t.contains("NOT COMPLETE")),
        "the partial run is marked: {partial}"
    );
}
