//! Connection reuse (RFC 9112 §9.3): a server may close an idle keep-alive connection at any
//! moment, so a request sent on a pooled connection can meet the close. A request that may
//! be repeated is sent again once when the connection closed before any of its response
//! came; a write never is — its answer may have been lost, not its effect. (Writes are kept
//! off connections old enough to be at risk by the pool's idle timeout, `Client::with_tls`.)

/// RFC 9110 §9.2.2: the methods whose repetition has the effect of one request.
pub(super) fn idempotent(method: &str) -> bool {
    matches!(
        method,
        "GET" | "HEAD" | "OPTIONS" | "TRACE" | "PUT" | "DELETE"
    )
}

/// Whether `e` says the connection closed before any byte of the response came (hyper's
/// "connection closed before message completed", or a reset or broken pipe while sending)
/// — not a timeout, not a refused connection, not a malformed answer.
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
#[allow(clippy::unwrap_used, clippy::expect_used)] // tests: a panic is the failure report
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
            body: (method == "POST").then(|| b"{}".to_vec()),
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
        for i in 0..3 {
            let (ex, resp) = send_recorded(&c, TransportKind::Http, get(&base, "GET")).await;
            assert_eq!(resp.map(|r| r.0), Some(200), "GET {i}: {:?}", ex.error);
        }
        // The second and third each met a closed connection first.
        assert_eq!(seen.load(Ordering::SeqCst), 5);
    }

    #[tokio::test]
    async fn a_write_is_never_sent_twice() {
        let (base, seen) = crossing_server().await;
        let c = client(BOUND).unwrap();
        let (_, first) = send_recorded(&c, TransportKind::Http, get(&base, "POST")).await;
        assert_eq!(first.map(|r| r.0), Some(200));
        let (ex, second) = send_recorded(&c, TransportKind::Http, get(&base, "POST")).await;
        assert!(second.is_none(), "the closed connection is reported");
        assert!(ex.error.is_some());
        assert_eq!(seen.load(Ordering::SeqCst), 2, "the POST went out once");
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
