//! Slow clients never hold the server (issue 2 §9): an unfinished request head is cut off
//! after the header-read deadline, an unfinished body gets `408` after the request deadline.
//! Short deadlines via `spawn_with`; every wait is bounded.

#![expect(clippy::unwrap_used, clippy::expect_used)] // tests: a panic is the failure report

use std::time::Duration;

use reference_impl::server::{Limits, spawn_with};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

fn short() -> Limits {
    Limits {
        request_timeout: Duration::from_millis(400),
        head_timeout: Duration::from_millis(400),
        ..Limits::default()
    }
}

/// Reads until EOF (bounded by 10 s) and returns what the server sent.
async fn read_to_close(stream: &mut TcpStream) -> Vec<u8> {
    let mut out = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut out))
        .await
        .expect("the server must close a stalled connection")
        .ok();
    out
}

#[tokio::test]
async fn unfinished_request_head_is_cut_off() {
    let server = spawn_with(
        reference_impl::Config::demo_in_memory(),
        "127.0.0.1:0".parse().unwrap(),
        short(),
    )
    .await
    .unwrap();
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    stream
        .write_all(b"GET /v1/manifest HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        .await
        .unwrap();
    let got = read_to_close(&mut stream).await;
    // hyper closes the connection (possibly after a 408); it never answers the request.
    assert!(
        got.is_empty() || got.starts_with(b"HTTP/1.1 408"),
        "{}",
        String::from_utf8_lossy(&got)
    );
    server.shutdown().await;
}

#[tokio::test]
async fn unfinished_body_gets_408() {
    let server = spawn_with(
        reference_impl::Config::demo_in_memory(),
        "127.0.0.1:0".parse().unwrap(),
        short(),
    )
    .await
    .unwrap();
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    stream
        .write_all(
            b"POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer demo-agent-a\r\n\
              Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"kind\":",
        )
        .await
        .unwrap();
    let got = read_to_close(&mut stream).await;
    assert!(
        got.starts_with(b"HTTP/1.1 408"),
        "{}",
        String::from_utf8_lossy(&got)
    );
    // The server still serves others.
    let ok = reqwest::get(format!("http://{}/v1/manifest", server.addr))
        .await
        .unwrap();
    assert_eq!(ok.status(), 200);
    server.shutdown().await;
}
