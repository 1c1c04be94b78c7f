//! The short, fixed-time soak of CI (issue 13): `reference-server soak` for 12 s — quiet,
//! attack with a `kill -9` + restart every 3 s, after — must pass every bound it checks
//! (acknowledged posts kept, ids unique, RSS, fds, shaped refusals, answers after the
//! attack, no unexpected answer) with the SSP rate limit on (issue 29 item 3): the
//! anonymous flood answered 429 and held to the limit, no 429 to a well-behaved client's
//! SSP invocation — and the latency bounds (issue 29): p99 under attack ≤ 3 × quiet, as in
//! the 10-minute run, and the p50 of the last 1.2 s ≤ 1.5 × the first 1.2 s' (1.3 × in the
//! 10-minute run). Both are ratios measured in one run; CI (`tools/ci/run_tests.py`) runs this
//! binary alone because a neighbour's load arriving mid-run moves them by itself. Measured
//! alone, debug build, 2026-12-06: drift 0.95–1.09 ×, p99 1.0–1.15 ×; hence 1.5 × for the
//! drift's 1.2 s windows (a fraction of the 10-minute run's minute), the p99 bound unchanged.

#![expect(clippy::unwrap_used)] // tests: a panic is the failure report

use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

#[test]
fn short_soak_passes_every_bound() {
    let child = Command::new(env!("CARGO_BIN_EXE_reference-server"))
        .args([
            "soak",
            "--duration-secs",
            "12",
            "--kill-every-secs",
            "3",
            "--attackers",
            "4",
            "--head-timeout-secs",
            "2",
            "--drift-factor",
            "1.5",
        ])
        .env("RUST_BACKTRACE", "0")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let Ok(out) = rx.recv_timeout(Duration::from_secs(90)) else {
        let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
        panic!("the soak did not finish within 90 s");
    };
    let out = out.unwrap();
    let table = String::from_utf8_lossy(&out.stdout);
    println!("{table}");
    assert!(
        out.status.success(),
        "soak failed:\n{table}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(table.contains("| lost after kill -9 | 0 |"), "{table}");
    assert!(!table.contains("FAIL"), "{table}");
    // Both latency bounds judged, not only reported.
    assert_eq!(row(&table, "under attack")[3], "ok", "{table}");
    assert_eq!(row(&table, "p50 drift")[3], "ok", "{table}");
    // The rate limit on: the anonymous flood refused (in the SSP shape, with Retry-After)
    // and held to what the limit admits; the well-behaved clients, each with its own key,
    // never refused.
    let flood = row(&table, "attackers: anonymous SSP flood");
    let limited: u64 = flood[1]
        .split(" · ")
        .find_map(|part| part.strip_suffix(" answered 429 (SSP shape, Retry-After)"))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no 429 count in the flood row:\n{table}"));
    assert!(limited > 0, "the flood was never rate limited:\n{table}");
    assert_eq!(flood[3], "ok", "{table}");
    assert_eq!(
        row(&table, "well-behaved SSP answered 429")[1..],
        ["0", "0", "ok"],
        "{table}"
    );
}

/// The cells of the table row whose name starts with `name` (panics when there is none).
fn row<'t>(table: &'t str, name: &str) -> Vec<&'t str> {
    let line = table
        .lines()
        .find(|l| l.starts_with(&format!("| {name}")))
        .unwrap_or_else(|| panic!("no row {name:?} in the table:\n{table}"));
    line.trim_matches('|').split(" | ").map(str::trim).collect()
}
