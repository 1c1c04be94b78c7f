//! `reference-server stdio`: MCP over stdin/stdout for clients that spawn their servers,
//! both eras, authenticated by the `PARLEY_TOKEN` environment variable.

#![expect(clippy::unwrap_used, clippy::expect_used)] // tests: a panic is the failure report

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

/// Runs one stdio session; responses sorted by id (rmcp answers concurrent requests in
/// completion order).
fn session(db: &str, token: Option<&str>, lines: &[Value]) -> Vec<Value> {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_reference-server"));
    cmd.args(["stdio", "--demo", "--db", db])
        .env("RUST_LOG", "warn")
        .env_remove("PARLEY_TOKEN")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    if let Some(t) = token {
        cmd.env("PARLEY_TOKEN", t);
    }
    let mut child = cmd.spawn().unwrap();
    {
        let mut stdin = child.stdin.take().unwrap();
        for line in lines {
            writeln!(stdin, "{line}").unwrap();
        }
        // Dropping stdin ends the session: the server answers what it got and exits.
    }
    let mut out: Vec<Value> = BufReader::new(child.stdout.take().unwrap())
        .lines()
        .map(|l| serde_json::from_str(&l.unwrap()).expect("every stdout line is JSON-RPC"))
        .collect();
    out.sort_by_key(|v| v["id"].as_u64());
    assert!(child.wait().unwrap().success());
    out
}

#[test]
fn legacy_handshake_then_tool_calls() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("stdio.db");
    let db = db.to_str().unwrap();
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let out = session(
        db,
        Some("demo-agent-a"),
        &[
            init.clone(),
            initialized.clone(),
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "post", "arguments": {"kind": "ask", "body": "over stdio"}}}),
        ],
    );
    assert_eq!(out.len(), 2, "{out:?}");
    assert_eq!(out[0]["result"]["protocolVersion"], "2025-11-25");
    assert_eq!(out[1]["result"]["isError"], false, "{out:?}");
    let thread = out[1]["result"]["structuredContent"]["thread"]["id"].clone();
    let out = session(
        db,
        Some("demo-agent-b"),
        &[
            init,
            initialized,
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "read_thread", "arguments": {"thread": thread}}}),
        ],
    );
    assert_eq!(
        out[1]["result"]["structuredContent"]["messages"][0]["body"], "over stdio",
        "{out:?}"
    );
}

#[test]
fn current_era_without_handshake_and_missing_token() {
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}});
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "whoami", "arguments": {}, "_meta": meta}});
    let out = session(
        ":memory:",
        Some("demo-verifier"),
        std::slice::from_ref(&call),
    );
    assert_eq!(
        out[0]["result"]["structuredContent"]["identity"], "ainotes:verifier",
        "{out:?}"
    );
    // No PARLEY_TOKEN: the refusal of PV-TR-4, as a tool result (PV-TR-2).
    let out = session(":memory:", None, &[call]);
    assert_eq!(out[0]["result"]["isError"], true, "{out:?}");
    assert_eq!(
        out[0]["result"]["structuredContent"]["error"]["reason"],
        "token_missing"
    );
}
