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
