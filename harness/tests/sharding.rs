//! Sharding (issue 15, item 6): the merge of n shard reports equals the unsharded run's report
//! — check ids, verdicts, requirement matrix and counts — on a selection with vectors on both
//! bindings (and their derived PV-TR-1 comparisons), exclusive vectors and SSP checks; and
//! `conform run --shard` / `conform merge` / `conform diff` work from the command line as the
//! README shows them.
#![expect(clippy::expect_used, clippy::unwrap_used, clippy::panic)] // tests: a panic is the failure report

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::Instant;

use conform::engine::merge::{ShardReport, merge};
use conform::engine::protocol::Suite;
use conform::engine::report::{Report, json};
use conform::engine::run::{RunOptions, run};
use conform::engine::shard::Shard;
use conform::engine::target::ConnectOptions;

/// Vectors of one area on both bindings, the exclusive inbox vectors, and every SSP check.
const FILTER: &str = "{envelope/*,reading/inbox-*,SSP-*}";

/// One run of `FILTER` (one shard of it, or all) against a freshly spawned reference, as
/// each CI job of a matrix would make it; the report goes through JSON as `conform merge`
/// reads it.
async fn run_once(suites: &[Suite], shard: Option<Shard>) -> Report {
    let protocols = conform::registry::protocols();
    let target = conform::reference::spawn(&ConnectOptions::default(), &protocols)
        .await
        .expect("reference spawns");
    let opts = RunOptions {
        filter: Some(FILTER.into()),
        shard,
        command: "conform run --spawn-reference --suite all".into(),
        ..RunOptions::default()
    };
    let report = run(Arc::new(target), suites, &opts).await.expect("run");
    serde_json::from_str(&json::render(&report).expect("renders")).expect("reads back")
}

fn verdicts(r: &Report) -> Vec<(String, String)> {
    (r.checks.iter())
        .map(|c| (c.id.clone(), c.verdict.name().to_string()))
        .collect()
}

/// Fails with the entries only one side has (a few), not two lists of hundreds.
fn assert_same<T: PartialEq + std::fmt::Debug>(merged: &[T], whole: &[T], what: &str) {
    if merged == whole {
        return;
    }
    let only = |a: &[T], b: &[T]| -> Vec<String> {
        (a.iter().filter(|x| !b.contains(x)).take(10))
            .map(|x| format!("{x:?}"))
            .collect()
    };
    panic!(
        "{what}: the merge has {} entries, the unsharded run {}\n  only merged: {:?}\n  only \
         unsharded: {:?}\n  (same entries: the order differs)",
        merged.len(),
        whole.len(),
        only(merged, whole),
        only(whole, merged)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn three_shards_merge_into_the_unsharded_report() {
    let vectors = conform::engine::protocol::default_vectors_dir();
    let suites = conform::registry::load(&conform::registry::protocols(), &vectors).expect("load");

    let t0 = Instant::now();
    let whole = run_once(&suites, None).await;
    let unsharded = t0.elapsed();
    let mut shards = Vec::new();
    let mut times = Vec::new();
    for index in 1..=3 {
        let t = Instant::now();
        let report = run_once(&suites, Some(Shard { index, count: 3 })).await;
        times.push(t.elapsed());
        shards.push(ShardReport {
            name: format!("shard {index}/3"),
            report,
        });
    }
    eprintln!(
        "unsharded: {} results in {unsharded:.2?}; shards: {:?} results in {times:.2?}",
        whole.checks.len(),
        shards
            .iter()
            .map(|s| s.report.checks.len())
            .collect::<Vec<_>>()
    );

    // The selection holds what sharding must keep together.
    let has =
        |f: &dyn Fn(&conform::engine::report::CheckResult) -> bool| whole.checks.iter().any(f);
    assert!(has(
        &|c| c.id.starts_with("envelope/") && c.id.ends_with("@mcp")
    ));
    assert!(
        has(&|c| c.check.starts_with("PV-TR-1/envelope/")),
        "derived comparisons"
    );
    assert!(
        has(&|c| c.check == "reading/inbox-cursor-no-repeat"),
        "exclusive vectors"
    );
    assert!(has(&|c| c.suite == "ssp"), "SSP checks");
    for s in &shards {
        assert!(
            !s.report.checks.is_empty() && s.report.checks.len() < whole.checks.len(),
            "{} holds {} of {} results",
            s.name,
            s.report.checks.len(),
            whole.checks.len()
        );
    }

    let merged = merge(shards).expect("the three shards merge");
    assert_same(
        &verdicts(&merged),
        &verdicts(&whole),
        "ids, verdicts and order",
    );
    assert_same(
        &merged.requirements,
        &whole.requirements,
        "requirement matrix",
    );
    assert_eq!(merged.summary, whole.summary);
    // Everything else too, modulo what varies between two runs on one server.
    let (m, w) = (merged.volatile_redacted(), whole.volatile_redacted());
    assert_eq!(
        json::render(&m).expect("renders"),
        json::render(&w).expect("renders")
    );
    assert_eq!(merged.exit_code(), 0);
}

fn conform(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_conform"))
        .args(args)
        .output()
        .expect("conform starts");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn path(dir: &Path, rel: &str) -> String {
    dir.join(rel).display().to_string()
}

/// The README's commands: two shards, merged; the merge diffed against itself, against a
/// copy with one result failing, and against a file that is not a report.
#[test]
fn shard_merge_and_diff_from_the_command_line() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    for k in ["1", "2"] {
        let (code, _, err) = conform(&[
            "run",
            "--spawn-reference",
            "--filter",
            "envelope/body-*",
            "--shard",
            &format!("{k}/2"),
            "--format",
            "json",
            "--quiet",
            "--out",
            &path(dir, &format!("shard-{k}")),
        ]);
        assert_eq!(code, 0, "shard {k}: {err}");
    }
    let (s1, s2) = (
        path(dir, "shard-1/report.json"),
        path(dir, "shard-2/report.json"),
    );
    let merged = path(dir, "merged/report.json");

    let (code, _, err) = conform(&["merge", &s1, "--out", &path(dir, "bad")]);
    assert_eq!(code, 2);
    assert!(err.contains("missing shard 2/2"), "{err}");

    let (code, out, err) = conform(&["merge", &s2, &s1, "--out", &path(dir, "merged")]);
    assert_eq!(code, 0, "{out}{err}");
    for f in ["report.json", "junit.xml", "report.md", "report.html"] {
        assert!(dir.join("merged").join(f).is_file(), "{f} written");
    }

    let (code, out, _) = conform(&["diff", &merged, &merged]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("no regression (exit 0)"), "{out}");

    // NEW: one passing result turned into a failure.
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&merged).unwrap()).unwrap();
    let check = &mut v["checks"][0];
    let id = check["id"].as_str().unwrap().to_string();
    check["verdict"] = serde_json::json!({
        "verdict": "fail", "check": id, "requirements": [], "pointer": "",
        "expected": 200, "observed": 500, "message": "status 500, expected 200"
    });
    let worse = path(dir, "worse.json");
    std::fs::write(&worse, v.to_string()).unwrap();
    let md = path(dir, "diff.md");
    let (code, out, _) = conform(&["diff", &merged, &worse, "--out", &md]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains(&format!("| `{id}` |")), "{out}");
    assert_eq!(std::fs::read_to_string(&md).unwrap(), out);
    // …and back: a fix.
    let (code, out, _) = conform(&["diff", &worse, &merged]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("### Fixed (1)"), "{out}");

    let (code, _, err) = conform(&["diff", &merged, &path(dir, "missing.json")]);
    assert_eq!(code, 2);
    assert!(err.contains("missing.json"), "{err}");
    std::fs::write(path(dir, "junk.json"), "{\"format_version\": 1}").unwrap();
    let (code, _, err) = conform(&["diff", &path(dir, "junk.json"), &merged]);
    assert_eq!(code, 2);
    assert!(err.contains("not a conform report.json"), "{err}");
}
