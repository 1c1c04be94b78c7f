//! Issue 26, item 7: Ctrl-C stops a run without losing it — the checks stop, the summary is
//! printed, the reports are written from the results so far (the rest `skipped`, the report
//! marked interrupted), and the exit code is 130.
#![expect(clippy::expect_used, clippy::unwrap_used)] // tests: a panic is the failure report

use std::io::{BufRead as _, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use conform::engine::protocol::default_vectors_dir;

#[test]
fn ctrl_c_leaves_a_partial_report_marked_interrupted() {
    let out = std::env::temp_dir().join(format!("conform-interrupt-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let mut child = Command::new(env!("CARGO_BIN_EXE_conform"))
        .arg("--vectors")
        .arg(default_vectors_dir())
        .args([
            "run",
            "--spawn-reference",
            "--verbose",
            "--color",
            "never",
            "--out",
        ])
        .arg(&out)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("conform starts");
    // The run has started once the first result is reported (`--verbose`: `[n/total] …`).
    let stderr = BufReader::new(child.stderr.take().unwrap());
    let (started_tx, started_rx) = mpsc::channel();
    let drain = std::thread::spawn(move || {
        let mut seen = Vec::new();
        for line in stderr.lines().map_while(Result::ok) {
            if line.starts_with('[') && seen.iter().all(|l: &String| !l.starts_with('[')) {
                let _ = started_tx.send(());
            }
            seen.push(line);
        }
        seen
    });
    started_rx
        .recv_timeout(Duration::from_secs(120))
        .expect("the run reports its first result");
    let pid = child.id().to_string();
    let killed = Command::new("kill").args(["-INT", &pid]).status().unwrap();
    assert!(killed.success());
    let (done_tx, done_rx) = mpsc::channel();
    let waiter = std::thread::spawn(move || {
        let out = child.wait_with_output();
        let _ = done_tx.send(());
        out
    });
    done_rx
        .recv_timeout(Duration::from_secs(60))
        .expect("conform stops after Ctrl-C");
    let output = waiter.join().unwrap().unwrap();
    let stderr = drain.join().unwrap().join("\n");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(130), "{stdout}\n{stderr}");
    assert!(stdout.contains("INTERRUPTED"), "{stdout}");
    assert!(
        stderr.contains("interrupted: stopping the checks"),
        "{stderr}"
    );

    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    assert_eq!(report["interrupted"], true);
    let checks = report["checks"].as_array().unwrap();
    let skipped = (checks.iter())
        .filter(|c| {
            c["verdict"]["verdict"] == "skipped"
                && c["verdict"]["reason"]
                    .as_str()
                    .unwrap_or("")
                    .starts_with("interrupted")
        })
        .count();
    let judged = (checks.iter())
        .filter(|c| c["verdict"]["verdict"] == "pass")
        .count();
    assert!(skipped > 0, "the checks not run are kept as skipped");
    assert!(judged > 0, "the results before the stop are kept");
    for name in ["report.md", "report.html", "junit.xml"] {
        assert!(out.join(name).exists(), "{name} is written");
    }
    let _ = std::fs::remove_dir_all(&out);
}
