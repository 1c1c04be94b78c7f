//! Assembling the router and running it on a socket.
//!
//! [`app`] builds everything over one database: the Parley HTTP routes, the MCP endpoint and
//! the SSP provider, with one 404/405 fallback, a request deadline, a URI limit and the
//! DNS-rebinding `Host` / `Origin` checks ([`rebinding`]), and `Connection: close` on the
//! answer to a request whose body was left unread ([`unread`]). [`spawn`]
//! serves it on a real socket with its own HTTP/1.1 accept loop: a cap on concurrent
//! connections ([`Limits`]), and per connection ([`conn`]) an idle deadline that closes a
//! socket which has not delivered a complete request head in time, whatever it sent. Every
//! refusal the transport emits is in the refusal shape ([`refusal`]).

mod conn;
pub mod rebinding;
pub mod refusal;
mod unread;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use hyper_util::rt::TokioTimer;
use tokio::net::TcpListener;
use tokio::sync::{Semaphore, oneshot};
use tokio::task::JoinHandle;

use crate::config::{Config, demo_listen_allowed};
use crate::parley::service::ParleyService;
use crate::store::Db;
use rebinding::Rebinding;
use refusal::TransportRefusal;

/// Connections over the cap being answered `503` at once; more are closed without a word.
const REFUSING_AT_ONCE: usize = 64;

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The database could not be opened or migrated.
    #[error("database: {0}")]
    Store(#[from] crate::store::StoreError),
    /// The listen socket could not be bound.
    #[error("bind {addr}: {source}")]
    Bind {
        /// Requested address.
        addr: SocketAddr,
        /// OS error.
        source: std::io::Error,
    },
    /// Any other invalid configuration (e.g. an invalid SSP descriptor, demo on non-loopback).
    #[error("{0}")]
    Config(String),
}

/// Whole-request deadline: a client that has not finished its request (or a request that
/// has not been answered) by then gets `408` and the connection is released.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// A connection must deliver a complete request head within this time of opening or of its
/// previous response; otherwise it is closed, whatever it sent (slowloris, idle sockets).
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// How long [`RunningServer::shutdown`] waits for in-flight requests.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);
/// Default cap on concurrent connections (beyond it: `503 server_busy`).
pub const MAX_CONNECTIONS: usize = 512;
/// Default limit of a request head (request line + header fields), bytes (beyond: `431`).
pub const MAX_HEAD_BYTES: usize = 64 * 1024;
/// Default limit of the request target (path + query), bytes (beyond: `414`).
pub const MAX_URI_BYTES: usize = 8 * 1024;
/// Default limit on the number of header fields (beyond: `431`).
pub const MAX_HEADERS: usize = 100;

/// The transport limits of a running server (README "Limits you can rely on").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Whole-request deadline (→ JSON `408`, connection closed).
    pub request_timeout: Duration,
    /// Deadline for a complete request head on an idle connection (→ closed; a JSON `408`
    /// first when part of a head had arrived).
    pub head_timeout: Duration,
    /// Concurrent connections served; one more gets a JSON `503` and is closed.
    pub max_connections: usize,
    /// Request line + header fields, bytes (→ JSON `431`).
    pub max_head_bytes: usize,
    /// Request target, bytes (→ JSON `414`).
    pub max_uri_bytes: usize,
    /// Number of header fields (→ JSON `431`).
    pub max_headers: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            request_timeout: REQUEST_TIMEOUT,
            head_timeout: HEADER_READ_TIMEOUT,
            max_connections: MAX_CONNECTIONS,
            max_head_bytes: MAX_HEAD_BYTES,
            max_uri_bytes: MAX_URI_BYTES,
            max_headers: MAX_HEADERS,
        }
    }
}

/// Builds the whole application (Parley HTTP + MCP, SSP provider) over one database.
///
/// No socket here: the server counts as bound to loopback unless its public base URL names
/// another host (what [`spawn`] decides from the real address).
pub fn app(config: Config) -> Result<Router, StartError> {
    let loopback = base_url_is_loopback(&config);
    build(config, loopback, Limits::default())
}

/// True when the base URL is absent or names a loopback host.
fn base_url_is_loopback(config: &Config) -> bool {
    let host = config
        .base_url
        .as_deref()
        .and_then(|u| url::Url::parse(u).ok())
        .and_then(|u| u.host_str().map(str::to_owned));
    // Compared as the Host check compares names (no IPv6 brackets, no trailing dot).
    host.is_none_or(|h| rebinding::is_loopback_name(&rebinding::normalize(&h)))
}

fn build(config: Config, loopback: bool, limits: Limits) -> Result<Router, StartError> {
    let rebinding =
        Rebinding::new(&config, loopback).map_err(|e| StartError::Config(e.to_string()))?;
    // Seeded faults (issue 6, cargo feature `faults`): an unknown name refuses to start.
    let faults = crate::faults::Faults::from_names(&config.faults)
        .map_err(|e| StartError::Config(e.to_string()))?;
    // Legal variants (issue 14, cargo feature `variants`): an unknown name refuses to start.
    let variants = crate::variants::Variants::from_names(&config.variants)
        .map_err(|e| StartError::Config(e.to_string()))?;
    let db = Db::open(&config.db_path)?;
    let tokens = variants.tokens(config.tokens.clone());
    let mut parley = ParleyService::with_faults(db.clone(), tokens, faults)
        .with_limits(variants.limits(crate::domain::parley::REFERENCE));
    if !config.dialectic {
        parley = parley.without_dialectic();
    }
    let router = Router::new()
        .merge(crate::parley::api::http::routes(parley.clone()))
        .merge(crate::openapi::routes(&parley))
        .merge(crate::parley::api::mcp::routes(parley.for_mcp()));
    let router = merge_ssp(router, db, &config, parley)?;
    let router = crate::faults::layer(router, faults, &config)
        .fallback(crate::parley::api::http::not_found)
        .method_not_allowed_fallback(crate::parley::api::http::method_not_allowed);
    // The rebinding check is the outermost layer: a foreign page learns nothing, not even
    // whether a route exists.
    Ok(crate::variants::layer(router, variants)
        .layer(axum::middleware::from_fn_with_state(
            Guard {
                limits,
                faults,
                plain: variants.plain_transport_refusals(),
            },
            guard,
        ))
        .layer(axum::middleware::from_fn_with_state(
            rebinding,
            rebinding::guard,
        ))
        .layer(axum::middleware::from_fn(unread::close_if_unread)))
}

/// What [`guard`] needs: the limits, the seeded faults and the refusal-shape variant.
#[derive(Clone)]
struct Guard {
    limits: Limits,
    faults: crate::faults::Faults,
    /// `transport-refusals-plain`: the stock plain-text refusals (PV-TR-6 allows them).
    plain: bool,
}

/// The request deadline and the URI limit, answered in the refusal shape of the path's
/// protocol (tower-http's timeout answers with an empty body). Applies to every route,
/// before routing.
async fn guard(
    axum::extract::State(g): axum::extract::State<Guard>,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    // SSP-ERR-4 (SHOULD): on an SSP path the refusal takes the unified shape.
    let ssp = crate::ssp::api::is_ssp_path(req.uri().path());
    let refuse = |r: TransportRefusal| match (g.plain, ssp) {
        (true, _) => r.plain(),
        (false, true) => crate::ssp::api::transport_refusal(r.status(), r.reason(), r.message()),
        (false, false) => r.response(),
    };
    let uri_len = req.uri().path_and_query().map_or(0, |p| p.as_str().len());
    if uri_len > g.limits.max_uri_bytes {
        if crate::faults::hooks::request::uri_limit_crashes(g.faults) {
            // A framework's error handler: JSON, with a reason of its own.
            return axum::response::IntoResponse::into_response((
                axum::http::StatusCode::INTERNAL_SERVER_ERROR,
                [(axum::http::header::CONTENT_TYPE, "application/json")],
                r#"{"error":{"reason":"internal_error","status":500,"message":"request target too long"}}"#,
            ));
        }
        return refuse(TransportRefusal::UriTooLong);
    }
    match tokio::time::timeout(g.limits.request_timeout, next.run(req)).await {
        Ok(resp) => resp,
        Err(_) => refuse(TransportRefusal::RequestTimeout),
    }
}

/// The SSP provider (issue 3) shares the database and reads Parley threads through the
/// same service (its `conform/forum-digest` skill).
fn merge_ssp(
    router: Router,
    db: Db,
    config: &Config,
    parley: ParleyService,
) -> Result<Router, StartError> {
    let state = crate::ssp::SspState::new(db, config, std::sync::Arc::new(parley))
        .map_err(|e| StartError::Config(e.to_string()))?;
    Ok(router.merge(crate::ssp::api::routes(state)))
}

/// The Parley service as the SSP provider's thread reader: implemented here, where the
/// server joins the two wings, so neither wing imports the other.
impl crate::ssp::ThreadReader for ParleyService {
    fn read_thread(&self, thread: &str) -> (u16, serde_json::Value) {
        let r = self.read_thread_as_system(thread);
        (r.status, r.body.into_value())
    }
}

/// A server running on a real socket; dropped or `shutdown()` stops it.
pub struct RunningServer {
    /// The bound address (the real port when asked for port 0).
    pub addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for RunningServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunningServer")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

impl RunningServer {
    /// The base URL clients use (`http://127.0.0.1:PORT`).
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Stops accepting, lets in-flight requests finish (at most [`SHUTDOWN_GRACE`]), returns.
    pub async fn shutdown(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }

    /// Resolves when the server stopped on its own (accept loop ended).
    pub async fn stopped(&mut self) {
        if let Some(task) = self.task.as_mut() {
            let _ = task.await;
            self.task = None;
        }
    }
}

impl Drop for RunningServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// True when `config` carries credentials of the public `--demo` set: those must never be
/// exposed beyond loopback.
pub fn uses_demo_credentials(config: &Config) -> bool {
    let demo = Config::demo(":memory:");
    config
        .tokens
        .iter()
        .any(|t| demo.tokens.iter().any(|d| d.token == t.token))
        || config
            .ssp
            .api_keys_allowed
            .iter()
            .chain(&config.ssp.api_keys_limited)
            .any(|k| demo.ssp.api_keys_allowed.contains(k) || demo.ssp.api_keys_limited.contains(k))
        || config
            .ssp
            .bearer_tokens
            .iter()
            .any(|(t, _)| demo.ssp.bearer_tokens.iter().any(|(d, _)| d == t))
}

/// Binds `listen` (port 0 allowed) and serves [`app`] until shut down.
///
/// Fills `config.base_url` from the bound address when `None`. Refuses to expose demo
/// credentials on a non-loopback address.
pub async fn spawn(config: Config, listen: SocketAddr) -> Result<RunningServer, StartError> {
    spawn_with(config, listen, Limits::default()).await
}

/// [`spawn`] with explicit transport limits (the CLI flags; tests use short deadlines).
pub async fn spawn_with(
    mut config: Config,
    listen: SocketAddr,
    limits: Limits,
) -> Result<RunningServer, StartError> {
    if !demo_listen_allowed(&listen) && uses_demo_credentials(&config) {
        return Err(StartError::Config(format!(
            "refusing to listen on non-loopback address {listen} with the public demo credentials"
        )));
    }
    let listener = TcpListener::bind(listen)
        .await
        .map_err(|source| StartError::Bind {
            addr: listen,
            source,
        })?;
    let addr = listener.local_addr().map_err(|source| StartError::Bind {
        addr: listen,
        source,
    })?;
    if config.base_url.is_none() {
        config.base_url = Some(format!("http://{addr}"));
    }
    // The socket decides: a server listening beyond loopback (0.0.0.0 in a container) is
    // reached by names it cannot know, whatever its public base URL says.
    let loopback = listen.ip().is_loopback();
    // An unknown variant name is refused by `build` just below.
    let connection = crate::variants::Variants::from_names(&config.variants)
        .map(|v| v.connection())
        .unwrap_or((false, true));
    let router = build(config, loopback, limits)?;
    let (stop, stop_rx) = oneshot::channel();
    let task = tokio::spawn(accept_loop(listener, router, stop_rx, limits, connection));
    tracing::info!(%addr, "listening");
    Ok(RunningServer {
        addr,
        stop: Some(stop),
        task: Some(task),
    })
}

/// HTTP/1.1 only: nothing in either protocol needs h2c, and one protocol keeps one idle
/// deadline and one refusal path (an h2 preface gets a JSON `505`).
///
/// `(title_case, keep_alive)` come from the connection variants (issue 14); the reference
/// itself writes lowercase names and keeps connections alive.
fn http1(
    limits: &Limits,
    (title_case, keep_alive): (bool, bool),
) -> hyper::server::conn::http1::Builder {
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        // The idle deadline of `conn::watch` replaces it (it also covers the first byte).
        .header_read_timeout(None)
        .max_header_size(limits.max_head_bytes)
        .max_headers(limits.max_headers)
        // Whole heads in one write: see `refusal::hyper_refusal`.
        .writev(false)
        .title_case_headers(title_case)
        .keep_alive(keep_alive);
    http
}

async fn accept_loop(
    listener: TcpListener,
    router: Router,
    mut stop: oneshot::Receiver<()>,
    limits: Limits,
    connection: (bool, bool),
) {
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let http = Arc::new(http1(&limits, connection));
    let slots = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    // Refusing also holds a socket for a moment; beyond this many at once, just close.
    let refusing = Arc::new(Semaphore::new(REFUSING_AT_ONCE));
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _peer)) => {
                    let _ = stream.set_nodelay(true);
                    let Ok(slot) = slots.clone().try_acquire_owned() else {
                        if let Ok(permit) = refusing.clone().try_acquire_owned() {
                            tokio::spawn(async move {
                                conn::refuse_busy(stream).await;
                                drop(permit);
                            });
                        }
                        continue;
                    };
                    let conn = conn::watch(
                        stream,
                        router.clone(),
                        http.clone(),
                        conn::Deadlines {
                            idle: limits.head_timeout,
                            busy: limits.request_timeout + limits.head_timeout,
                        },
                        graceful.watcher(),
                    );
                    tokio::spawn(async move {
                        conn.await;
                        drop(slot);
                    });
                }
                Err(err) => {
                    // Out of file descriptors and similar: keep serving the open connections
                    // and retry shortly instead of spinning.
                    tracing::warn!(%err, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            },
            _ = &mut stop => break,
        }
    }
    drop(listener);
    if tokio::time::timeout(SHUTDOWN_GRACE, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!("shutdown grace period elapsed with connections still open");
    }
}
