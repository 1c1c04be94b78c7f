//! One accepted TCP connection, from accept to close: HTTP/1.1 only, an idle deadline, and
//! transport refusals in the refusal shape.
//!
//! Three pieces share one [`Shared`] state:
//! - [`ConnIo`] is the socket hyper reads and writes. It counts the bytes read, notices an
//!   HTTP/2 preface, and replaces hyper's empty-bodied automatic refusals (400/414/431) with
//!   the JSON refusal of [`TransportRefusal`].
//! - [`Tracked`] is the service hyper calls once per complete request head. It marks the
//!   connection busy until the response body has been handed over ([`Busy`]).
//! - [`watch`] drives the connection and closes it when it has been idle — no request in
//!   flight — for the head deadline, whatever the client sent meanwhile (nothing, part of a
//!   head, an h2 preface). A client that had sent part of a head gets a JSON 408 first.
//!
//! Why not hyper's `header_read_timeout`: it only runs while hyper is reading an HTTP/1
//! head, not before the first byte under the auto builder, and not on an HTTP/2 connection;
//! one deadline over "no complete head yet" covers every case.

use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, ready};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use hyper::body::{Frame, Incoming, SizeHint};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::TcpStream;
use tokio::time::Instant;
use tower::ServiceExt;

use super::refusal::{TransportRefusal, hyper_refusal};

/// How long a refusal written by the server itself (and the lingering close after it) may
/// hold the socket.
const REFUSAL_WRITE: Duration = Duration::from_secs(1);
/// At most this much unread input is drained during a lingering close.
const LINGER_BYTES: usize = 256 * 1024;

/// Connection state shared by the socket wrapper, the service wrapper and the watchdog.
#[derive(Debug)]
pub(super) struct Shared {
    in_flight: AtomicUsize,
    /// Bytes read from the socket so far.
    read_total: AtomicU64,
    /// `read_total` when the connection last became idle: more means a head is under way.
    idle_mark: AtomicU64,
    /// When the connection last turned idle or busy.
    since: Mutex<Instant>,
    h2_preface: AtomicBool,
    wrote_any: AtomicBool,
    /// An automatic hyper refusal was replaced (the connection is ending).
    refused: AtomicBool,
    changed: tokio::sync::Notify,
}

impl Shared {
    fn new() -> Arc<Self> {
        Arc::new(Self {
            in_flight: AtomicUsize::new(0),
            read_total: AtomicU64::new(0),
            idle_mark: AtomicU64::new(0),
            since: Mutex::new(Instant::now()),
            h2_preface: AtomicBool::new(false),
            wrote_any: AtomicBool::new(false),
            refused: AtomicBool::new(false),
            changed: tokio::sync::Notify::new(),
        })
    }

    fn since(&self) -> Instant {
        // A poisoned lock only means a panic while storing an `Instant`: the value is whole.
        *self.since.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn mark_since(&self) {
        *self.since.lock().unwrap_or_else(|p| p.into_inner()) = Instant::now();
    }

    fn head_under_way(&self) -> bool {
        self.read_total.load(Ordering::Acquire) > self.idle_mark.load(Ordering::Acquire)
    }
}

/// Marks the connection busy from the complete request head until the response body is
/// dropped (fully handed to hyper, or abandoned).
struct Busy(Arc<Shared>);

impl Busy {
    fn new(shared: Arc<Shared>) -> Self {
        if shared.in_flight.fetch_add(1, Ordering::AcqRel) == 0 {
            shared.mark_since();
        }
        shared.changed.notify_one();
        Self(shared)
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        let s = &self.0;
        s.idle_mark
            .store(s.read_total.load(Ordering::Acquire), Ordering::Release);
        if s.in_flight.fetch_sub(1, Ordering::AcqRel) == 1 {
            s.mark_since();
        }
        s.changed.notify_one();
    }
}

/// A response body that keeps the connection busy while it is being sent.
struct TrackedBody {
    inner: Body,
    _busy: Busy,
}

impl hyper::body::Body for TrackedBody {
    type Data = bytes::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// The hyper service of one connection: the router, with the connection marked busy.
#[derive(Clone)]
pub(super) struct Tracked {
    router: Router,
    shared: Arc<Shared>,
    /// The client's address, given to handlers as `ConnectInfo` (the SSP invocation rate
    /// limit keys anonymous clients by it).
    peer: Option<std::net::SocketAddr>,
}

impl hyper::service::Service<hyper::Request<Incoming>> for Tracked {
    type Response = hyper::Response<Body>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Infallible>> + Send>>;

    fn call(&self, mut req: hyper::Request<Incoming>) -> Self::Future {
        if let Some(peer) = self.peer {
            req.extensions_mut()
                .insert(axum::extract::ConnectInfo(peer));
        }
        let busy = Busy::new(self.shared.clone());
        let router = self.router.clone();
        Box::pin(async move {
            let resp = router.oneshot(req).await?;
            Ok(resp.map(|inner| Body::new(TrackedBody { inner, _busy: busy })))
        })
    }
}

/// The socket as hyper sees it (see the module documentation).
pub(super) struct ConnIo {
    stream: Arc<TcpStream>,
    shared: Arc<Shared>,
    /// A JSON refusal replacing an automatic hyper refusal, still to be written.
    pending: Vec<u8>,
}

impl ConnIo {
    fn drive_pending(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while !self.pending.is_empty() {
            ready!(self.stream.poll_write_ready(cx))?;
            match self.stream.try_write(&self.pending) {
                Ok(n) => {
                    self.pending.drain(..n);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
        Poll::Ready(Ok(()))
    }
}

impl AsyncRead for ConnIo {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        loop {
            ready!(self.stream.poll_read_ready(cx))?;
            let start = buf.filled().len();
            // Into the unfilled part as it is: `try_read(buf.initialize_unfilled())` zeroed
            // hyper's whole read buffer first, on every read (about 5 % of a post's
            // instructions; `benches/README.md`).
            match self.stream.try_read_buf(buf) {
                Ok(n) => {
                    let before = self.shared.read_total.fetch_add(n as u64, Ordering::AcqRel);
                    if before == 0 && buf.filled()[start..].starts_with(b"PRI * HTTP/2") {
                        self.shared.h2_preface.store(true, Ordering::Release);
                    }
                    return Poll::Ready(Ok(()));
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
    }
}

impl AsyncWrite for ConnIo {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        ready!(self.drive_pending(cx))?;
        self.shared.wrote_any.store(true, Ordering::Release);
        if let Some(refusal) = hyper_refusal(buf) {
            // hyper closes the connection after this head: the JSON refusal goes instead.
            self.pending = refusal.raw();
            self.shared.refused.store(true, Ordering::Release);
            return match self.drive_pending(cx) {
                Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
                _ => Poll::Ready(Ok(buf.len())),
            };
        }
        loop {
            ready!(self.stream.poll_write_ready(cx))?;
            match self.stream.try_write(buf) {
                Ok(n) => return Poll::Ready(Ok(n)),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.drive_pending(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        // The socket is closed when the last handle drops (right after the connection ends):
        // a shared `TcpStream` has no `&self` shutdown.
        self.drive_pending(cx)
    }

    fn is_write_vectored(&self) -> bool {
        // Heads must arrive whole in one `poll_write` to be recognised (see `hyper_refusal`).
        false
    }
}

/// Serves one accepted connection until it ends, is idle too long, or the server stops.
pub(super) async fn watch(
    stream: TcpStream,
    router: Router,
    http: Arc<hyper::server::conn::http1::Builder>,
    deadlines: Deadlines,
    graceful: hyper_util::server::graceful::Watcher,
) {
    let peer = stream.peer_addr().ok();
    let stream = Arc::new(stream);
    let shared = Shared::new();
    let io = ConnIo {
        stream: stream.clone(),
        shared: shared.clone(),
        pending: Vec::new(),
    };
    let service = Tracked {
        router,
        shared: shared.clone(),
        peer,
    };
    let conn = graceful.watch(http.serve_connection(hyper_util::rt::TokioIo::new(io), service));
    let outcome = drive(conn, &shared, deadlines).await;
    // The connection future (and its socket handle) is gone: this is the last handle.
    let Ok(stream) = Arc::try_unwrap(stream) else {
        return;
    };
    if outcome == Outcome::IdleTooLong && shared.head_under_way() {
        close_with(stream, Some(TransportRefusal::RequestTimeout)).await;
    } else if outcome == Outcome::Ended
        && shared.h2_preface.load(Ordering::Acquire)
        && !shared.wrote_any.load(Ordering::Acquire)
    {
        close_with(stream, Some(TransportRefusal::VersionNotSupported)).await;
    } else if shared.refused.load(Ordering::Acquire) {
        // The JSON refusal is written; the rest of the oversized head may still be unread.
        close_with(stream, None).await;
    }
}

/// Writes `refusal` (if any), closes the sending side and drains what the client still
/// sends for a moment (lingering close): closing a socket with unread input resets the
/// connection, and a reset can destroy the refusal before the client has read it.
async fn close_with(mut stream: TcpStream, refusal: Option<TransportRefusal>) {
    let _ = tokio::time::timeout(REFUSAL_WRITE, async {
        if let Some(refusal) = refusal {
            stream.write_all(&refusal.raw()).await?;
        }
        stream.shutdown().await?;
        let mut sink = [0u8; 4096];
        let mut drained = 0usize;
        while drained < LINGER_BYTES {
            let n = tokio::io::AsyncReadExt::read(&mut stream, &mut sink).await?;
            if n == 0 {
                break;
            }
            drained += n;
        }
        Ok::<(), io::Error>(())
    })
    .await;
}

/// How long a connection may stay in each state.
#[derive(Debug, Clone, Copy)]
pub(super) struct Deadlines {
    /// Idle (no request in flight): until a complete request head arrives.
    pub idle: Duration,
    /// Busy (a request in flight, or its response still being sent): the request deadline
    /// plus time for the client to read the answer. Bounds slow readers, which would
    /// otherwise hold a connection forever by never reading a large response.
    pub busy: Duration,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    /// The connection finished (client closed, protocol error, shutdown).
    Ended,
    /// No complete request head within the idle deadline.
    IdleTooLong,
    /// A request (or the sending of its response) outlived the busy deadline.
    BusyTooLong,
}

/// Polls the connection until it ends or outlives the deadline of its current state.
/// `Notify::notify_one` stores a permit, so no state change is missed.
async fn drive<F>(conn: F, shared: &Shared, deadlines: Deadlines) -> Outcome
where
    F: Future<Output = Result<(), hyper::Error>>,
{
    tokio::pin!(conn);
    loop {
        let busy = shared.in_flight.load(Ordering::Acquire) > 0;
        let limit = if busy { deadlines.busy } else { deadlines.idle };
        let deadline = shared.since() + limit;
        tokio::select! {
            res = &mut conn => {
                if let Err(err) = res {
                    tracing::debug!(%err, "connection ended with an error");
                }
                return Outcome::Ended;
            }
            _ = shared.changed.notified() => {}
            _ = tokio::time::sleep_until(deadline) => {
                let still = (shared.in_flight.load(Ordering::Acquire) > 0) == busy;
                if still && shared.since() + limit <= Instant::now() {
                    return if busy { Outcome::BusyTooLong } else { Outcome::IdleTooLong };
                }
            }
        }
    }
}

/// Refuses a connection over the cap: a JSON 503, then a lingering close.
pub(super) async fn refuse_busy(stream: TcpStream) {
    close_with(stream, Some(TransportRefusal::ServerBusy)).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEADLINES: Deadlines = Deadlines {
        idle: Duration::from_secs(10),
        busy: Duration::from_secs(40),
    };

    #[tokio::test(start_paused = true)]
    async fn an_idle_connection_is_given_up_after_the_idle_deadline() {
        let shared = Shared::new();
        let start = Instant::now();
        let out = drive(std::future::pending(), &shared, DEADLINES).await;
        assert_eq!(out, Outcome::IdleTooLong);
        assert_eq!(start.elapsed(), DEADLINES.idle);
    }

    #[tokio::test(start_paused = true)]
    async fn a_request_that_never_finishes_sending_is_given_up_after_the_busy_deadline() {
        let shared = Shared::new();
        let start = Instant::now();
        // A response body hyper cannot get rid of (the client never reads).
        let _stuck = Busy::new(shared.clone());
        let out = drive(std::future::pending(), &shared, DEADLINES).await;
        assert_eq!(out, Outcome::BusyTooLong);
        assert_eq!(start.elapsed(), DEADLINES.busy);
    }

    #[tokio::test(start_paused = true)]
    async fn each_response_restarts_the_idle_deadline() {
        let shared = Shared::new();
        let start = Instant::now();
        let activity = {
            let shared = shared.clone();
            async move {
                for _ in 0..3 {
                    tokio::time::sleep(Duration::from_secs(8)).await;
                    drop(Busy::new(shared.clone()));
                }
                std::future::pending::<Result<(), hyper::Error>>().await
            }
        };
        let out = drive(activity, &shared, DEADLINES).await;
        assert_eq!(out, Outcome::IdleTooLong);
        assert_eq!(start.elapsed(), Duration::from_secs(24) + DEADLINES.idle);
    }
}
