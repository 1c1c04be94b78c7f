//! Assembling the router and running it on a socket.

use std::net::SocketAddr;

use crate::config::Config;

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

/// Builds the whole application (Parley HTTP + MCP, SSP provider) over one database.
pub fn app(_config: Config) -> Result<axum::Router, StartError> {
    Ok(axum::Router::new())
}

/// A server running on a real socket; dropped or `shutdown()` stops it.
#[derive(Debug)]
pub struct RunningServer {
    /// The bound address (the real port when asked for port 0).
    pub addr: SocketAddr,
}

/// Binds `listen` (port 0 allowed) and serves [`app`] until shut down.
pub async fn spawn(_config: Config, listen: SocketAddr) -> Result<RunningServer, StartError> {
    Ok(RunningServer { addr: listen })
}
