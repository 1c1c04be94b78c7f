//! `reports/reference/` is current (issue 9, item 6): the committed report of the full suite
//! against the reference must equal a fresh run, modulo what varies between runs on one
//! server (times, ports, durations, exchange counts: `Report::volatile_redacted`), and its
//! Markdown, JUnit and HTML must be exactly what today's renderers make of its JSON.
//!
//! On failure it prints the command that rewrites the committed report (CONTRIBUTING.md, "The committed reference report").
#![expect(clippy::expect_used)] // tests: a panic is the failure report

use std::path::{Path, PathBuf};
use std::sync::Arc;

use conform::engine::report::{Report, html, json, junit, markdown};
use conform::engine::run::{RunOptions, run};
use conform::engine::target::ConnectOptions;

const REGENERATE: &str =
    "cargo run --release -p conform -- run --spawn-reference --out reports/reference --quiet";

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../reports/reference")
}

fn read(name: &str) -> String {
    let path = dir().join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}\nwrite the committed report with: {REGENERATE}",
            path.display()
        )
    })
}

fn committed() -> Report {
    serde_json::from_str(&read("report.json"))
        .unwrap_or_else(|e| panic!("reports/reference/report.json: {e}\nregenerate: {REGENERATE}"))
}

/// The first differing line of two texts, for a readable failure.
fn first_difference(a: &str, b: &str) -> String {
    for (i, (x, y)) in a.lines().zip(b.lines()).enumerate() {
        if x != y {
            return format!("line {}:\n  committed: {x}\n  now:       {y}", i + 1);
        }
    }
    format!(
        "one text is a prefix of the other ({} vs {} lines)",
        a.lines().count(),
        b.lines().count()
    )
}

#[test]
fn renderings_match_the_committed_json() {
    let report = committed();
    for (name, now) in [
        ("report.md", markdown::render(&report)),
        ("junit.xml", junit::render(&report)),
        ("report.html", html::render(&report)),
    ] {
        let was = read(name);
        assert!(
            was == now,
            "reports/reference/{name} is stale: {}\nregenerate: {REGENERATE}",
            first_difference(&was, &now)
        );
    }
    let json_now = json::render(&report).expect("renders");
    assert_eq!(
        read("report.json").trim_end(),
        json_now.trim_end(),
        "report.json is not in the renderer's canonical form\nregenerate: {REGENERATE}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn committed_report_equals_a_fresh_run() {
    let was = committed();
    let vectors = conform::engine::protocol::default_vectors_dir();
    let protocols = conform::registry::protocols();
    let suites = conform::registry::load(&protocols, &vectors).expect("suites load");
    let target = conform::reference::spawn(&ConnectOptions::default(), &protocols)
        .await
        .expect("reference spawns");
    let opts = RunOptions {
        jobs: was.jobs,
        command: "conform run --spawn-reference --suite all".into(),
        ..RunOptions::default()
    };
    let now = run(Arc::new(target), &suites, &opts).await.expect("run");
    let (was, now) = (was.volatile_redacted(), now.volatile_redacted());
    let (was_json, now_json) = (
        json::render(&was).expect("renders"),
        json::render(&now).expect("renders"),
    );
    assert!(
        was_json == now_json,
        "reports/reference/report.json is stale: {}\nregenerate: {REGENERATE}",
        first_difference(&was_json, &now_json)
    );
}
