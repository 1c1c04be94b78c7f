//! The transport under hostile clients (issue 13, items 1 and 7): idle sockets, partial heads
//! and HTTP/2 prefaces are closed after the head deadline; a connection over the cap gets a
//! `503`; every refusal the transport emits — hyper's own 400/414/431 included — carries the
//! refusal body `{"error":{"reason","status","message"}}` as `application/json`.
//!
//! Short deadlines through `spawn_with`; every wait is bounded by `tokio::time::timeout`.

#![expect(clippy::unwrap_used)] // tests: a panic is the failure report

use std::net::SocketAddr;
use std::time::Duration;

use reference_impl::server::{Limits, RunningServer, spawn_with};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Upper bound for any wait of these tests (far above every deadline they set).
const BOUND: Duration = Duration::from_secs(10);

fn short() -> Limits {
    Limits {
        head_timeout: Duration::from_millis(300),
        request_timeout: Duration::from_millis(2_000),
        ..Limits::default()
    }
}

async fn server(limits: Limits) -> RunningServer {
    spawn_with(
        reference_impl::Config::demo_in_memory(),
        "127.0.0.1:0".parse().unwrap(),
        limits,
    )
    .await
    .unwrap()
}

/// Reads until the server closes (bounded): what it sent.
async fn read_to_close(stream: &mut TcpStream) -> Vec<u8> {
    let mut out = Vec::new();
    let read = tokio::time::timeout(BOUND, stream.read_to_end(&mut out)).await;
    assert!(read.is_ok(), "the server must close the connection");
    out
}

/// Sends `bytes` (the server may stop reading early) and returns everything it answers.
async fn exchange(addr: SocketAddr, bytes: &[u8]) -> Vec<u8> {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let _ = stream.write_all(bytes).await;
    read_to_close(&mut stream).await
}

/// Asserts `raw` is one response with `status`, a JSON content type and the refusal body.
fn assert_refusal(raw: &[u8], status: u16, reason: &str) {
    let text = String::from_utf8_lossy(raw);
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or(("", ""));
    assert!(
        head.starts_with(&format!("HTTP/1.1 {status} ")),
        "want {status}, got: {text}"
    );
    let head = head.to_ascii_lowercase();
    assert!(
        head.contains("\r\ncontent-type: application/json"),
        "not JSON: {text}"
    );
    let v: Value = serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {text}"));
    assert_eq!(v["error"]["status"], status, "{text}");
    assert_eq!(v["error"]["reason"], reason, "{text}");
    assert!(
        v["error"]["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty())
    );
}

#[tokio::test]
async fn a_silent_socket_is_closed_after_the_head_deadline() {
    let server = server(short()).await;
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    // Nothing was sent, so nothing is answered: the socket is simply closed.
    assert!(read_to_close(&mut stream).await.is_empty());
    server.shutdown().await;
}

#[tokio::test]
async fn a_partial_head_gets_a_json_408_then_close() {
    let server = server(short()).await;
    let got = exchange(
        server.addr,
        b"GET /v1/manifest HTTP/1.1\r\nHost: 127.0.0.1\r\n",
    )
    .await;
    assert_refusal(&got, 408, "request_timeout");
    server.shutdown().await;
}

#[tokio::test]
async fn http2_prefaces_are_refused_or_closed() {
    let server = server(short()).await;
    // A whole h2c preface: HTTP/1.1 only, said in JSON.
    let got = exchange(server.addr, b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n").await;
    assert_refusal(&got, 505, "http_version_not_supported");
    // Half a preface: a request line with an unknown version, refused like any bad head.
    let got = exchange(server.addr, b"PRI * HTTP/2.0\r\n").await;
    assert_refusal(&got, 400, "invalid_request");
    server.shutdown().await;
}

/// Reads one response with a `content-length` body from a kept-alive connection.
async fn read_one_response(stream: &mut TcpStream) -> String {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let text = String::from_utf8_lossy(&buf).into_owned();
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let len: usize = head
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase()
                        .strip_prefix("content-length: ")
                        .map(str::to_owned)
                })
                .and_then(|v| v.trim().parse().ok())
                .unwrap();
            if body.len() >= len {
                return text;
            }
        }
        let n = tokio::time::timeout(BOUND, stream.read(&mut chunk))
            .await
            .unwrap()
            .unwrap();
        assert!(n > 0, "closed mid-response");
        buf.extend_from_slice(&chunk[..n]);
    }
}

#[tokio::test]
async fn a_kept_alive_connection_idle_after_a_response_is_closed() {
    let server = server(short()).await;
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    stream
        .write_all(b"GET /v1/manifest HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        .await
        .unwrap();
    let first = read_one_response(&mut stream).await;
    assert!(first.starts_with("HTTP/1.1 200 "), "{first}");
    // No next request: closed without a word (no unsolicited 408 on an idle connection).
    assert!(read_to_close(&mut stream).await.is_empty());
    server.shutdown().await;
}

#[tokio::test]
async fn connections_over_the_cap_get_a_json_503_and_slots_come_back() {
    let server = server(Limits {
        max_connections: 2,
        ..Limits::default()
    })
    .await;
    let idle_a = TcpStream::connect(server.addr).await.unwrap();
    let idle_b = TcpStream::connect(server.addr).await.unwrap();
    let got = exchange(
        server.addr,
        b"GET /v1/manifest HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
    )
    .await;
    assert_refusal(&got, 503, "server_busy");
    assert!(
        String::from_utf8_lossy(&got)
            .to_ascii_lowercase()
            .contains("\r\nretry-after: 1\r\n")
    );
    drop((idle_a, idle_b));
    // The slots are released as soon as the server sees the closes (bounded retries).
    let mut served = false;
    for _ in 0..500 {
        let got = exchange(
            server.addr,
            b"GET /v1/manifest HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
        )
        .await;
        if got.starts_with(b"HTTP/1.1 200 ") {
            served = true;
            break;
        }
        assert_refusal(&got, 503, "server_busy");
        tokio::task::yield_now().await;
    }
    assert!(served, "slots never came back");
    server.shutdown().await;
}

#[tokio::test]
async fn oversized_heads_get_json_431() {
    let server = server(short()).await;
    let big = format!(
        "GET /v1/manifest HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: {}\r\n\r\n",
        "a".repeat(70 * 1024)
    );
    assert_refusal(
        &exchange(server.addr, big.as_bytes()).await,
        431,
        "headers_too_large",
    );
    let many: String = (0..150).map(|i| format!("X-H{i}: v\r\n")).collect();
    let many = format!("GET /v1/manifest HTTP/1.1\r\nHost: 127.0.0.1\r\n{many}\r\n");
    assert_refusal(
        &exchange(server.addr, many.as_bytes()).await,
        431,
        "headers_too_large",
    );
    // A request line beyond the head limit is refused by hyper before any URI check.
    let huge_uri = format!(
        "GET /v1/{} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
        "u".repeat(80 * 1024)
    );
    assert_refusal(
        &exchange(server.addr, huge_uri.as_bytes()).await,
        431,
        "headers_too_large",
    );
    server.shutdown().await;
}

#[tokio::test]
async fn long_uris_get_json_414() {
    let server = server(short()).await;
    let long = format!(
        "GET /v1/threads/{} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
        "t".repeat(9 * 1024)
    );
    assert_refusal(
        &exchange(server.addr, long.as_bytes()).await,
        414,
        "uri_too_long",
    );
    server.shutdown().await;
}

/// On an SSP path the same refusal takes SSP's unified shape (SSP-ERR-4, SHOULD), its
/// code one of the seed's seven and the transport reason in `details`.
#[tokio::test]
async fn long_uris_on_ssp_paths_get_the_unified_shape() {
    let server = server(short()).await;
    let long = format!(
        "GET /.well-known/skill-sharing?q={} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
        "q".repeat(9 * 1024)
    );
    let raw = exchange(server.addr, long.as_bytes()).await;
    let text = String::from_utf8_lossy(&raw);
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or(("", ""));
    assert!(head.starts_with("HTTP/1.1 414 "), "{text}");
    assert!(
        head.to_ascii_lowercase()
            .contains("\r\ncontent-type: application/json")
    );
    let v: Value = serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {text}"));
    assert_eq!(v["error"]["code"], "VALIDATION_ERROR", "{text}");
    assert_eq!(v["error"]["details"]["reason"], "uri_too_long", "{text}");
    assert!(
        v["error"]["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty())
    );
    server.shutdown().await;
}

#[tokio::test]
async fn malformed_heads_get_json_400() {
    let server = server(short()).await;
    for garbage in [
        &b"NOT AN HTTP REQUEST\r\n\r\n"[..],
        b"GET /v1/manifest HTTP/1.1\r\nBad Header Without Colon\r\n\r\n",
        b"GET /v1/manifest HTTP/9.9\r\nHost: 127.0.0.1\r\n\r\n",
    ] {
        let got = exchange(server.addr, garbage).await;
        assert_refusal(&got, 400, "invalid_request");
    }
    server.shutdown().await;
}

#[tokio::test]
async fn a_stalled_body_gets_a_json_408() {
    let server = server(Limits {
        request_timeout: Duration::from_millis(300),
        ..Limits::default()
    })
    .await;
    let got = exchange(
        server.addr,
        b"POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer demo-agent-a\r\n\
          Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"kind\":",
    )
    .await;
    assert_refusal(&got, 408, "request_timeout");
    server.shutdown().await;
}
