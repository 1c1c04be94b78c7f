//! The harness survives a hostile target (issue 11 item 3): a server that is silent, answers
//! an endless body, drips one byte at a time, sends garbage, 200k-deep JSON, thousands of
//! headers or closes mid-response costs a verdict or a pre-flight error — with the right
//! exit code, in bounded time and bounded memory — never a hang or gigabytes of buffer.
//!
//! The hostile server answers raw bytes on `127.0.0.1:0`. Pre-flight scenarios make the
//! manifest route hostile (exit 2); check scenarios serve a valid manifest that routes
//! `get_manifest` to `/hostile`, so the hostility reaches a check (verdict `fail`, exit 1).
#![expect(clippy::expect_used, clippy::unwrap_used)] // tests: a panic is the failure report

use std::sync::Arc;
use std::time::Duration;

use conform::engine::protocol::{connect, default_vectors_dir, parse_profile};
use conform::engine::run::{RunOptions, run};
use conform::engine::target::ConnectOptions;
use conform::engine::verdict::Verdict;
use conform::registry;
use conform::transport::TransportKind;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};

/// What the hostile route does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Reads the request, never answers.
    Silent,
    /// 200 with a chunked body that never ends.
    Endless,
    /// 200, then one body byte every 20 ms.
    Drip,
    /// Bytes that are not HTTP.
    Garbage,
    /// 200 with `[` × 200,000 then `]` × 200,000.
    DeepJson,
    /// 200 with 5,000 header fields.
    ManyHeaders,
    /// Declares 100,000 bytes, sends 10, closes.
    CloseMid,
    /// A valid 2 KiB manifest (for a profile's lower body limit).
    BigManifest,
}

const MANIFEST: &str = r#"{"parley":"1","version":"1.0.0","operations":[{"name":"get_manifest","http":{"method":"GET","path":"/hostile"}}]}"#;

async fn answer(mut s: TcpStream, mode: Mode) -> std::io::Result<()> {
    let head = |extra: &str| {
        format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\n{extra}\r\n"
        )
        .into_bytes()
    };
    match mode {
        Mode::Silent => {
            // Hold the connection until the client gives up.
            let mut sink = [0u8; 1024];
            while s.read(&mut sink).await? > 0 {}
        }
        Mode::Endless => {
            s.write_all(&head("transfer-encoding: chunked\r\n")).await?;
            let chunk = format!("10000\r\n{}\r\n", "[".repeat(0x10000));
            loop {
                s.write_all(chunk.as_bytes()).await?;
            }
        }
        Mode::Drip => {
            s.write_all(&head("content-length: 100000\r\n")).await?;
            let mut tick = tokio::time::interval(Duration::from_millis(20));
            loop {
                tick.tick().await;
                s.write_all(b" ").await?;
            }
        }
        Mode::Garbage => {
            let bytes: Vec<u8> = (0..4096u32).map(|i| (i * 7919 % 251) as u8).collect();
            s.write_all(&bytes).await?;
        }
        Mode::DeepJson => {
            let body = format!("{}{}", "[".repeat(200_000), "]".repeat(200_000));
            let len = format!("content-length: {}\r\n", body.len());
            s.write_all(&head(&len)).await?;
            s.write_all(body.as_bytes()).await?;
        }
        Mode::ManyHeaders => {
            let many: String = (0..5000).map(|i| format!("x-h{i}: v\r\n")).collect();
            s.write_all(&head(&format!("{many}content-length: 2\r\n")))
                .await?;
            s.write_all(b"{}").await?;
        }
        Mode::CloseMid => {
            s.write_all(&head("content-length: 100000\r\n")).await?;
            s.write_all(b"{\"parley\":").await?;
        }
        Mode::BigManifest => {
            let body = MANIFEST.replacen('{', &format!("{{\"pad\":\"{}\",", "x".repeat(2048)), 1);
            s.write_all(&head(&format!("content-length: {}\r\n", body.len())))
                .await?;
            s.write_all(body.as_bytes()).await?;
        }
    }
    s.shutdown().await
}

/// Reads a request head (bounded) and returns its path.
async fn request_path(s: &mut TcpStream) -> Option<String> {
    let mut buf = Vec::new();
    let mut byte = [0u8; 1];
    while !buf.ends_with(b"\r\n\r\n") && buf.len() < 64 * 1024 {
        if s.read(&mut byte).await.ok()? == 0 {
            return None;
        }
        buf.push(byte[0]);
    }
    let text = String::from_utf8_lossy(&buf);
    text.split(' ').nth(1).map(str::to_string)
}

/// Serves: `/v1/manifest` hostile when `pre` is set, else the manifest; `/hostile` per `mode`.
async fn serve(pre: Option<Mode>, mode: Mode) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = listener.accept().await {
            tokio::spawn(async move {
                let path = request_path(&mut s).await;
                let _ = match (path.as_deref(), pre) {
                    (Some("/v1/manifest"), Some(m)) => answer(s, m).await,
                    (Some("/v1/manifest"), None) => {
                        // One request per connection, without saying so (issue 29): the
                        // client may reuse the connection for the hostile request just as
                        // this task drops it, and must then send that GET again on a fresh
                        // connection (RFC 9112 §9.3.1), never report the closed one.
                        let h = format!(
                            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{MANIFEST}",
                            MANIFEST.len()
                        );
                        s.write_all(h.as_bytes()).await
                    }
                    _ => answer(s, mode).await,
                };
            });
        }
    });
    format!("http://{addr}")
}

fn profile_text(base: &str, extra: &str) -> String {
    format!("format_version = 1\nbase_url = \"{base}\"\ntimeout_ms = 1500\n{extra}")
}

/// Runs the `conform` binary on the Parley manifest check over HTTP: exit code and output.
async fn conform_cli(base: &str, extra: &str) -> (i32, String) {
    let dir = tempfile::tempdir().unwrap();
    let profile = dir.path().join("target.toml");
    std::fs::write(&profile, profile_text(base, extra)).unwrap();
    let child = tokio::process::Command::new(env!("CARGO_BIN_EXE_conform"))
        .arg("--vectors")
        .arg(default_vectors_dir())
        .args(["run", "--suite", "parley", "--transport", "http"])
        .args(["--filter", "manifest/core-members", "--format", "json"])
        .arg("--target")
        .arg(&profile)
        .arg("--out")
        .arg(dir.path().join("out"))
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(Duration::from_secs(60), child)
        .await
        .expect("conform ended within 60 s")
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), text)
}

/// The verdict of the manifest check run in process against `base`.
async fn verdict_in_process(base: &str) -> Verdict {
    let protocols = registry::select(&["parley".to_string()]).unwrap();
    let suites = registry::load(&protocols, &default_vectors_dir()).unwrap();
    let profile = parse_profile(&profile_text(base, ""), &protocols).unwrap();
    let opts = ConnectOptions {
        transports: vec![TransportKind::Http.into()],
        ..ConnectOptions::default()
    };
    let target = connect(profile, &opts, &protocols)
        .await
        .expect("pre-flight");
    let run_opts = RunOptions {
        filter: Some("manifest/core-members".into()),
        transports: vec![TransportKind::Http.into()],
        jobs: 1,
        baseline: None,
        command: "hostile".into(),
        progress: None,
        shard: None,
        ..RunOptions::default()
    };
    let report = run(Arc::new(target), &suites, &run_opts).await.unwrap();
    assert_eq!(report.checks.len(), 1, "one check ran");
    report.checks[0].verdict.clone()
}

/// Peak resident memory of this process (`VmHWM`), in KiB.
fn peak_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_preflight_is_exit_2_with_the_cause() {
    for (mode, cause) in [
        (Mode::Silent, "timeout"),
        (Mode::Endless, "exceeds the limit of 16777216 bytes"),
        (Mode::Drip, "timeout"),
        (Mode::Garbage, "/v1/manifest"),
        (Mode::DeepJson, "nests deeper than 128 levels"),
        (Mode::ManyHeaders, "/v1/manifest"),
        (Mode::CloseMid, "/v1/manifest"),
    ] {
        let base = serve(Some(mode), mode).await;
        let (code, out) = conform_cli(&base, "").await;
        assert_eq!(code, 2, "{mode:?}: exit code; output:\n{out}");
        assert!(out.contains(cause), "{mode:?}: {cause:?} in\n{out}");
    }
    // The profile's [limits] lower the cap: a 2 KiB manifest is then too long.
    let base = serve(Some(Mode::BigManifest), Mode::Silent).await;
    let (code, out) = conform_cli(&base, "[limits]\nresponse_body_bytes = 1024\n").await;
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("exceeds the limit of 1024 bytes"), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_answers_are_verdicts_in_bounded_memory() {
    let base = serve(None, Mode::Endless).await;
    let (code, out) = conform_cli(&base, "").await;
    assert_eq!(code, 1, "a failed MUST check: {out}");
    assert!(out.contains("exceeds the limit"), "{out}");
    for (mode, cause) in [
        (Mode::Endless, "exceeds the limit of 16777216 bytes"),
        (Mode::DeepJson, "nests deeper than 128 levels"),
        (Mode::Drip, "timeout"),
        (Mode::Silent, "timeout"),
        (Mode::CloseMid, "request failed"),
    ] {
        let base = serve(None, mode).await;
        match verdict_in_process(&base).await {
            Verdict::Fail(v) => {
                let text = format!("{v:?}");
                assert!(text.contains(cause), "{mode:?}: {cause:?} in {text}");
            }
            other => panic!("{mode:?}: expected a failure, got {other:?}"),
        }
    }
    // 16 MiB cap, copies for the text and the transcript: far below what an unbounded read
    // buffers in the 1.5 s timeout on loopback (gigabytes).
    let peak = peak_rss_kib();
    assert!(peak < 256 * 1024, "peak RSS {peak} KiB");
}
