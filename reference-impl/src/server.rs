//! Assembling the router and running it on a socket.
//!
//! [`app`] builds everything over one database: the Parley HTTP routes, the MCP endpoint and
//! the SSP provider, with one 404/405 fallback and a request timeout. [`spawn`] serves it on
//! a real socket with its own accept loop (hyper-util) so that slow clients are cut off
//! while sending headers (header-read timeout) as well as mid-request (request timeout).

use std::net::SocketAddr;
use std::time::Duration;

use axum::Router;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto::Builder;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::api::mcp::AllowedHosts;
use crate::config::{Config, demo_listen_allowed};
use crate::service::ParleyService;
use crate::store::Db;

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
/// A client must have sent its complete request head within this time (slowloris).
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// How long [`RunningServer::shutdown`] waits for in-flight requests.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// The slow-client deadlines of a running server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// Whole-request deadline (→ `408`).
    pub request: Duration,
    /// Deadline for the complete request head (connection closed).
    pub header_read: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Self {
            request: REQUEST_TIMEOUT,
            header_read: HEADER_READ_TIMEOUT,
        }
    }
}

/// Builds the whole application (Parley HTTP + MCP, SSP provider) over one database.
pub fn app(config: Config) -> Result<Router, StartError> {
    let hosts = allowed_hosts(&config);
    build(config, hosts, REQUEST_TIMEOUT)
}

fn allowed_hosts(config: &Config) -> AllowedHosts {
    // The MCP endpoint keeps rmcp's DNS-rebinding protection (loopback `Host` only) for a
    // local server; a server whose public URL is not loopback accepts any `Host`.
    let host = config
        .base_url
        .as_deref()
        .and_then(|u| url::Url::parse(u).ok())
        .and_then(|u| u.host_str().map(str::to_owned));
    match host {
        None => AllowedHosts::Loopback,
        Some(h) if h == "localhost" || h == "[::1]" || h.starts_with("127.") => {
            AllowedHosts::Loopback
        }
        Some(_) => AllowedHosts::Any,
    }
}

fn build(
    config: Config,
    hosts: AllowedHosts,
    request_timeout: Duration,
) -> Result<Router, StartError> {
    // Seeded faults (issue 6, cargo feature `faults`): an unknown name refuses to start.
    let faults = crate::faults::Faults::from_names(&config.faults)
        .map_err(|e| StartError::Config(e.to_string()))?;
    let db = Db::open(&config.db_path)?;
    let mut parley = ParleyService::with_faults(db.clone(), config.tokens.clone(), faults);
    if !config.dialectic {
        parley = parley.without_dialectic();
    }
    let router = Router::new()
        .merge(crate::api::http::routes(parley.clone()))
        .merge(crate::api::mcp::routes(parley.for_mcp(), hosts));
    let router = merge_ssp(router, db, &config, parley)?;
    let router = crate::faults::layer(router, faults, &config);
    Ok(router
        .fallback(crate::api::http::not_found)
        .method_not_allowed_fallback(crate::api::http::method_not_allowed)
        .layer(tower_http::timeout::TimeoutLayer::with_status_code(
            axum::http::StatusCode::REQUEST_TIMEOUT,
            request_timeout,
        )))
}

/// The SSP provider (issue 3) shares the database and reads Parley threads through the
/// same service (its `conform/forum-digest` skill).
fn merge_ssp(
    router: Router,
    db: Db,
    config: &Config,
    parley: ParleyService,
) -> Result<Router, StartError> {
    let state = crate::ssp::SspState::new(db, config, parley).map_err(StartError::Config)?;
    Ok(router.merge(crate::api::ssp::routes(state)))
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
    spawn_with(config, listen, Timeouts::default()).await
}

/// [`spawn`] with explicit slow-client deadlines (tests use short ones).
pub async fn spawn_with(
    mut config: Config,
    listen: SocketAddr,
    timeouts: Timeouts,
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
    let hosts = if listen.ip().is_loopback() {
        AllowedHosts::Loopback
    } else {
        allowed_hosts(&config)
    };
    let router = build(config, hosts, timeouts.request)?;
    let (stop, stop_rx) = oneshot::channel();
    let task = tokio::spawn(accept_loop(listener, router, stop_rx, timeouts.header_read));
    tracing::info!(%addr, "listening");
    Ok(RunningServer {
        addr,
        stop: Some(stop),
        task: Some(task),
    })
}

async fn accept_loop(
    listener: TcpListener,
    router: Router,
    mut stop: oneshot::Receiver<()>,
    header_read: Duration,
) {
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let mut builder = Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(header_read);
    builder.http2().timer(TokioTimer::new());
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, peer)) => {
                    let _ = stream.set_nodelay(true);
                    let service =
                        TowerToHyperService::new(crate::api::with_peer(router.clone(), peer));
                    let conn = builder
                        .serve_connection_with_upgrades(TokioIo::new(stream), service)
                        .into_owned();
                    let conn = graceful.watch(conn);
                    tokio::spawn(async move {
                        if let Err(err) = conn.await {
                            tracing::debug!(%err, "connection ended with an error");
                        }
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
