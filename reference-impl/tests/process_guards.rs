//! The real binary against two process-level abuses (issue 13): a second server on the same
//! database is refused at start-up with a clear message (§5), and client-sized values never
//! reach the logs in full (§4). Every wait is bounded.

#![expect(clippy::unwrap_used)] // tests: a panic is the failure report

mod support;

use support::binary;

use std::io::Read;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::json;

const BOUND: Duration = Duration::from_secs(20);

/// Runs the binary with `args` to its end (bounded: killed and reported past [`BOUND`]).
fn run_to_end(args: &[&str], env: &[(&str, &str)]) -> (Option<i32>, String, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_reference-server"));
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let child = cmd.spawn().unwrap();
    let pid = child.id();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(BOUND) {
        Ok(out) => {
            let out = out.unwrap();
            (
                out.status.code(),
                String::from_utf8_lossy(&out.stdout).into_owned(),
                String::from_utf8_lossy(&out.stderr).into_owned(),
            )
        }
        Err(_) => {
            let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
            panic!("reference-server {args:?} did not exit within {BOUND:?}");
        }
    }
}

#[tokio::test]
async fn a_second_server_on_the_same_database_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("shared.db");
    let first = binary::Server::start(&db);
    let db_arg = db.to_str().unwrap().to_owned();
    let (code, stdout, stderr) = tokio::task::spawn_blocking(move || {
        run_to_end(
            &[
                "serve",
                "--listen",
                "127.0.0.1:0",
                "--demo",
                "--db",
                &db_arg,
            ],
            &[("RUST_LOG", "warn")],
        )
    })
    .await
    .unwrap();
    assert_ne!(code, Some(0), "the second server must not start");
    assert!(!stdout.contains("listening"), "{stdout}");
    assert!(stderr.contains("in use by another process"), "{stderr}");
    // The first one is undisturbed.
    let manifest = reqwest::get(format!("{}/v1/manifest", first.base))
        .await
        .unwrap();
    assert_eq!(manifest.status(), 200);
    // stdio on the same file is refused just the same.
    let db_arg = db.to_str().unwrap().to_owned();
    let (code, _, stderr) = tokio::task::spawn_blocking(move || {
        run_to_end(
            &["stdio", "--demo", "--db", &db_arg],
            &[("RUST_LOG", "warn"), ("PARLEY_TOKEN", "demo-agent-a")],
        )
    })
    .await
    .unwrap();
    assert_ne!(code, Some(0));
    assert!(stderr.contains("in use by another process"), "{stderr}");
    first.terminate();
}

#[tokio::test]
async fn client_sized_values_are_truncated_in_the_logs() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_reference-server"))
        .args(["serve", "--listen", "127.0.0.1:0", "--demo", "--db"])
        .arg(dir.path().join("logs.db"))
        // The default filter of the binary, stated so that a caller's RUST_LOG cannot hide
        // (or multiply) what is being measured.
        .env("RUST_LOG", "info,rmcp=warn")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let (line_tx, line_rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut line = Vec::new();
        let mut byte = [0u8; 1];
        while stdout.read(&mut byte).map(|n| n == 1).unwrap_or(false) && byte[0] != b'\n' {
            line.push(byte[0]);
        }
        let _ = line_tx.send(String::from_utf8_lossy(&line).into_owned());
    });
    let (err_tx, err_rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut all = Vec::new();
        let _ = stderr.read_to_end(&mut all);
        let _ = err_tx.send(all);
    });
    let line = line_rx.recv_timeout(BOUND).unwrap();
    let base = line.strip_prefix("listening on ").unwrap().to_owned();

    let huge = "m".repeat(300_000);
    let http = reqwest::Client::new();
    for (i, body) in [
        json!({"jsonrpc": "2.0", "id": 1, "method": huge, "params": {}}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
               "params": {"name": huge, "arguments": {}}}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "notifications/x", "params": {"v": huge}}),
    ]
    .iter()
    .cycle()
    .take(12)
    .enumerate()
    {
        let resp = http
            .post(format!("{base}/mcp"))
            .bearer_auth("demo-agent-a")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-11-25")
            .json(body)
            .send()
            .await
            .unwrap();
        assert!(
            resp.status().as_u16() < 500,
            "request {i}: {}",
            resp.status()
        );
    }
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let logged = err_rx.recv_timeout(BOUND).unwrap();
    let _ = child.wait();
    // 12 requests carrying 300 kB each: in full that would be megabytes.
    assert!(
        logged.len() < 64 * 1024,
        "{} bytes of logs; first 2 kB: {}",
        logged.len(),
        String::from_utf8_lossy(&logged[..logged.len().min(2048)])
    );
}
