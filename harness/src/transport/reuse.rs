//! Connection reuse (RFC 9112 §9.3): a server may close an idle keep-alive connection at any
//! moment, so a request sent on a pooled connection can meet the close. A safe request
//! (GET, HEAD, OPTIONS) is sent again once, on a client of its own (a fresh connection,
//! within what is left of the timeout), when the connection closed before a complete
//! response came; the exchange records the first attempt's error (`resent_after`). Nothing
//! else is sent again — a write's answer may have been lost, not its effect, and PUT or
//! DELETE may start or end something (an SSP endpoint, an MCP session). Writes are kept off
//! connections old enough to be at risk by the pool's idle timeout (`Client::with_tls`).

use std::time::{Duration, Instant};

use super::{Client, tls};

/// RFC 9110 §9.2.1: the methods that ask for no change (TRACE aside, never sent).
fn safe(method: &reqwest::Method) -> bool {
    matches!(
        *method,
        reqwest::Method::GET | reqwest::Method::HEAD | reqwest::Method::OPTIONS
    )
}

/// Sends the request `build` makes on `client`, and once more on a fresh client when it is
/// safe and its connection closed before an answer: the outcome, and the first attempt's
/// error when there were two.
pub(super) async fn send(
    client: &Client,
    method: &reqwest::Method,
    build: &(dyn Fn(&reqwest::Client) -> reqwest::RequestBuilder + Sync),
    started: Instant,
) -> (Result<reqwest::Response, reqwest::Error>, Option<String>) {
    let e = match build(&client.http).send().await {
        Err(e) if safe(method) && closed_before_answer(&e) => e,
        other => return (other, None),
    };
    let left = client.timeout().saturating_sub(started.elapsed());
    if left == Duration::ZERO {
        return (Err(e), None);
    }
    let Ok(fresh) = client.renewed() else {
        return (Err(e), None);
    };
    let why = tls::error_chain(&e);
    tracing::debug!(error = %why, "connection closed before an answer: sent again once");
    (build(&fresh.http).timeout(left).send().await, Some(why))
}

/// Whether `e` says the connection closed before a complete response came (hyper's
/// "connection closed before message completed" — possibly after part of a head — or a
/// reset, broken pipe or abort on the way) — not a timeout, not a refused connection.
pub(super) fn closed_before_answer(e: &reqwest::Error) -> bool {
    if e.is_timeout() || e.is_connect() {
        return false;
    }
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = source {
        if let Some(h) = err.downcast_ref::<hyper::Error>()
            && (h.is_incomplete_message() || h.is_closed())
        {
            return true;
        }
        if let Some(io) = err.downcast_ref::<std::io::Error>()
            && matches!(
                io.kind(),
                std::io::ErrorKind::ConnectionReset
                    | std::io::ErrorKind::BrokenPipe
                    | std::io::ErrorKind::ConnectionAborted
            )
        {
            return true;
        }
        source = err.source();
    }
    false
}

#[cfg(test)]
#[expect(clippy::unwrap_used)] // tests: a panic is the failure report
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    use tokio::net::{TcpListener, TcpStream};
    use tokio::sync::mpsc;

    use super::super::{Prepared, TransportKind, client, send_recorded};

    /// Upper bound of every wait here (far above what any step needs).
    const BOUND: Duration = Duration::from_secs(10);

    /// Reads one request head (bounded); `None` when the client closed or went quiet.
    async fn head(s: &mut TcpStream, idle: Duration) -> Option<String> {
        let mut buf = Vec::new();
        let mut byte = [0u8; 1];
        while !buf.ends_with(b"\r\n\r\n") && buf.len() < 16 * 1024 {
            let n = tokio::time::timeout(idle, s.read(&mut byte))
                .await
                .ok()?
                .ok()?;
            if n == 0 {
                return None;
            }
            buf.push(byte[0]);
        }
        Some(String::from_utf8_lossy(&buf).into_owned())
    }

    async fn ok(s: &mut TcpStream) -> std::io::Result<()> {
        s.write_all(
            b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}",
        )
        .await
    }

    fn get(base: &str, method: &str) -> Prepared {
        Prepared {
            method: method.into(),
            url: format!("{base}/x"),
            headers: Vec::new(),
            recorded_headers: Vec::new(),
            body: (method != "GET").then(|| b"{}".to_vec()),
            shown_body: None,
        }
    }

    /// Answers the first request of each connection and keeps it open; a second request on
    /// the same connection is read and the connection closed unanswered — an idle close
    /// crossing a reused connection's request, every time. Counts the requests read.
    async fn crossing_server() -> (String, Arc<AtomicUsize>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let seen = Arc::new(AtomicUsize::new(0));
        let count = seen.clone();
        tokio::spawn(async move {
            while let Ok((mut s, _)) = listener.accept().await {
                let count = count.clone();
                tokio::spawn(async move {
                    if head(&mut s, BOUND).await.is_some() {
                        count.fetch_add(1, Ordering::SeqCst);
                        let _ = ok(&mut s).await;
                    }
                    if head(&mut s, BOUND).await.is_some() {
                        count.fetch_add(1, Ordering::SeqCst);
                    }
                });
            }
        });
        (base, seen)
    }

    #[tokio::test]
    async fn a_get_on_a_connection_closed_under_it_is_sent_again_once() {
        let (base, seen) = crossing_server().await;
        let c = client(BOUND).unwrap();
        // Odd GETs reuse the connection the even one before them opened, meet its close,
        // and go out again on a client of their own; the failed connection leaves the pool.
        for i in 0..4 {
            let (ex, resp) = send_recorded(&c, TransportKind::Http, get(&base, "GET")).await;
            assert_eq!(resp.map(|r| r.0), Some(200), "GET {i}: {:?}", ex.error);
            let resent = ex.resent_after.as_deref();
            assert_eq!(resent.is_some(), i % 2 == 1, "GET {i}: {resent:?}");
        }
        assert_eq!(
            seen.load(Ordering::SeqCst),
            6,
            "each odd GET was read twice"
        );
    }

    #[tokio::test]
    async fn a_write_or_a_delete_is_never_sent_twice() {
        for method in ["POST", "PUT", "DELETE"] {
            let (base, seen) = crossing_server().await;
            let c = client(BOUND).unwrap();
            let (_, first) = send_recorded(&c, TransportKind::Http, get(&base, method)).await;
            assert_eq!(first.map(|r| r.0), Some(200));
            let (ex, second) = send_recorded(&c, TransportKind::Http, get(&base, method)).await;
            assert!(
                second.is_none(),
                "{method}: the closed connection is reported"
            );
            assert!(ex.error.is_some() && ex.resent_after.is_none());
            assert_eq!(seen.load(Ordering::SeqCst), 2, "the {method} went out once");
        }
    }

    /// Keeps connections alive and closes each after 1 s without a request, telling the
    /// test when it did.
    async fn idle_closing_server() -> (String, mpsc::UnboundedReceiver<()>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let (tx, rx) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            while let Ok((mut s, _)) = listener.accept().await {
                let tx = tx.clone();
                tokio::spawn(async move {
                    while head(&mut s, Duration::from_secs(1)).await.is_some() {
                        if ok(&mut s).await.is_err() {
                            return;
                        }
                    }
                    drop(s);
                    let _ = tx.send(());
                });
            }
        });
        (base, rx)
    }

    /// The issue 29 case: a server closing idle connections after 1 s; each GET goes out
    /// the moment the previous connection is closed, whether or not the client noticed.
    #[tokio::test]
    async fn gets_survive_a_server_closing_idle_connections_after_a_second() {
        let (base, mut closed) = idle_closing_server().await;
        let c = client(BOUND).unwrap();
        for i in 0..3 {
            let (ex, resp) = send_recorded(&c, TransportKind::Http, get(&base, "GET")).await;
            assert_eq!(resp.map(|r| r.0), Some(200), "GET {i}: {:?}", ex.error);
            let signal = tokio::time::timeout(BOUND, closed.recv()).await;
            assert!(
                matches!(signal, Ok(Some(()))),
                "the server closed the idle connection"
            );
        }
    }
}
