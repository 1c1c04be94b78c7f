//! Server configuration: database, Parley tokens, SSP credentials and limits, public base
//! URL.

use std::net::SocketAddr;
use std::path::PathBuf;

use serde::Deserialize;

use crate::domain::parley::Actor;
/// The Parley rights are a domain notion; re-exported here because token rows name them.
pub use crate::domain::parley::Right;

/// One row of the token table: the identity and rights a bearer token stands for.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TokenRow {
    /// The bearer token.
    pub token: String,
    /// `<realm>:<handle>` or `human:<name>` (a human implicitly holds every right).
    pub identity: String,
    /// Rights of the row (ignored for humans: they hold all).
    #[serde(default)]
    pub rights: Vec<Right>,
    /// Shown as `KI · <label>` on states set by this lock holder.
    #[serde(default)]
    pub lock_label: Option<String>,
    /// Writes per minute; `None` = the manifest's `writes_per_minute`.
    #[serde(default)]
    pub quota_per_minute: Option<u32>,
}

impl TokenRow {
    /// True for `human:<name>` identities.
    pub fn is_human(&self) -> bool {
        self.identity.starts_with("human:")
    }

    /// The actor this row stands for (PV-AU-5: rights belong to the row).
    pub fn actor(&self) -> Actor {
        Actor {
            identity: self.identity.clone(),
            rights: self.rights.clone(),
            lock_label: self.lock_label.clone(),
        }
    }
}

/// The `--tokens FILE` format: `[[token]]` rows.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TokenFile {
    /// The rows.
    #[serde(default)]
    pub token: Vec<TokenRow>,
}

/// Credentials the SSP provider accepts (seed §7, `ssp.md` §5).
#[derive(Debug, Clone, Default)]
pub struct SspCredentials {
    /// API keys with permission to invoke `api_key` skills (`--demo`'s, and every
    /// `serve --ssp-api-key`).
    pub api_keys_allowed: Vec<String>,
    /// API keys that are valid but lack permission (→ 403).
    pub api_keys_limited: Vec<String>,
    /// OAuth2 bearer tokens and the scopes each was granted.
    pub bearer_tokens: Vec<(String, Vec<String>)>,
    /// Shared secret for the custom HMAC-SHA256 scheme (`X-Signature`).
    pub hmac_secret: Option<String>,
}

/// The SSP provider's resource limits (issue 13 §2–§3), with the documented defaults of
/// the README ("SSP limits").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SspLimits {
    /// Bytes of live executions kept in memory; beyond it, polls read SQLite.
    pub cache_max_bytes: usize,
    /// Terminal executions completed longer ago than this are deleted; `None`: no age limit.
    pub retention_max_age: Option<std::time::Duration>,
    /// At most this many terminal executions are kept, the oldest deleted first; `None`: no
    /// count limit.
    pub retention_max_count: Option<u64>,
    /// Sustained invocations per minute per client (credential, else IP address); `None`:
    /// no rate limit.
    pub invocations_per_minute: Option<u32>,
    /// Invocations a client may make in a burst before the sustained rate applies.
    pub invocation_burst: u32,
}

impl SspLimits {
    /// Default cache bound: 64 MiB.
    pub const CACHE_MAX_BYTES: usize = 64 * 1024 * 1024;
    /// Default retention age: 24 hours.
    pub const RETENTION_MAX_AGE: std::time::Duration = std::time::Duration::from_secs(24 * 3600);
    /// Default retention count: 10,000 terminal executions.
    pub const RETENTION_MAX_COUNT: u64 = 10_000;
    /// Default sustained rate: 3,000 invocations per minute (50/s) per client.
    pub const INVOCATIONS_PER_MINUTE: u32 = 3_000;
    /// Default burst: 1,000 invocations (a whole conformance run fits in it).
    pub const INVOCATION_BURST: u32 = 1_000;
}

impl Default for SspLimits {
    fn default() -> Self {
        Self {
            cache_max_bytes: Self::CACHE_MAX_BYTES,
            retention_max_age: Some(Self::RETENTION_MAX_AGE),
            retention_max_count: Some(Self::RETENTION_MAX_COUNT),
            invocations_per_minute: Some(Self::INVOCATIONS_PER_MINUTE),
            invocation_burst: Self::INVOCATION_BURST,
        }
    }
}

/// The `reference-server serve` flags of [`SspLimits`] (0 switches a limit off).
#[derive(Debug, Clone, clap::Args)]
pub struct SspLimitArgs {
    /// SSP: bytes of live executions kept in memory (beyond: served from SQLite).
    #[arg(long, value_name = "BYTES", default_value_t = SspLimits::CACHE_MAX_BYTES)]
    pub ssp_cache_bytes: usize,
    /// SSP: delete terminal executions completed more than this many seconds ago (0: never).
    #[arg(long, value_name = "SECONDS", default_value_t = SspLimits::RETENTION_MAX_AGE.as_secs())]
    pub ssp_retention_secs: u64,
    /// SSP: keep at most this many terminal executions, the oldest deleted first (0: all).
    #[arg(long, value_name = "N", default_value_t = SspLimits::RETENTION_MAX_COUNT)]
    pub ssp_retention_count: u64,
    /// SSP: sustained invocations per minute per client (credential, else IP) (0: no limit).
    #[arg(long, value_name = "N", default_value_t = SspLimits::INVOCATIONS_PER_MINUTE)]
    pub ssp_rate_per_minute: u32,
    /// SSP: invocations per client in a burst before the sustained rate applies.
    #[arg(long, value_name = "N", default_value_t = SspLimits::INVOCATION_BURST)]
    pub ssp_rate_burst: u32,
}

impl From<SspLimitArgs> for SspLimits {
    fn from(a: SspLimitArgs) -> Self {
        let nonzero = |n: u64| (n > 0).then_some(n);
        Self {
            cache_max_bytes: a.ssp_cache_bytes,
            retention_max_age: nonzero(a.ssp_retention_secs).map(std::time::Duration::from_secs),
            retention_max_count: nonzero(a.ssp_retention_count),
            invocations_per_minute: (a.ssp_rate_per_minute > 0).then_some(a.ssp_rate_per_minute),
            invocation_burst: a.ssp_rate_burst,
        }
    }
}

/// Everything needed to build the server.
#[derive(Debug, Clone)]
pub struct Config {
    /// SQLite file, or `:memory:`.
    pub db_path: PathBuf,
    /// Parley token rows.
    pub tokens: Vec<TokenRow>,
    /// SSP credentials.
    pub ssp: SspCredentials,
    /// SSP memory, retention and rate limits.
    pub ssp_limits: SspLimits,
    /// Absolute base URL used in SSP descriptor/endpoint URLs (`http://127.0.0.1:8080`).
    /// `spawn` fills it from the bound address when `None`.
    pub base_url: Option<String>,
    /// Named seeded faults to switch on (cargo feature `faults`; empty otherwise).
    pub faults: Vec<String>,
    /// Named legal variants to switch on (cargo feature `variants`; empty otherwise).
    pub variants: Vec<String>,
    /// Enable the Parley dialectic profile (default). Off, the manifest lists no profile and
    /// the four dialectic kinds are `kind_unknown` (PV-DI-8) — the suite checks both sides.
    pub dialectic: bool,
    /// Extra `Host` values served besides the loopback names and the base URL's host
    /// (`host` or `host:port`; `*` = any): DNS-rebinding protection of every route
    /// (`crate::server::rebinding`).
    pub allowed_hosts: Vec<String>,
    /// Extra `Origin` values allowed besides loopback origins and the base URL's origin
    /// (`scheme://host[:port|:*]`, `null`; `*` = any).
    pub allowed_origins: Vec<String>,
}

impl Config {
    /// The `--demo` token set of issue #2 and the SSP demo credentials of issue #3.
    pub fn demo(db_path: impl Into<PathBuf>) -> Self {
        let row = |token: &str, identity: &str, rights: &[Right]| TokenRow {
            token: token.into(),
            identity: identity.into(),
            rights: rights.to_vec(),
            lock_label: None,
            quota_per_minute: None,
        };
        use Right::*;
        let mut moderator = row("demo-moderator", "ainotes:moderator", &[Read, Write, Lock]);
        moderator.lock_label = Some("mod".into());
        let mut limited = row("demo-limited", "ainotes:limited", &[Read, Write]);
        limited.quota_per_minute = Some(5);
        Self {
            db_path: db_path.into(),
            tokens: vec![
                row("demo-agent-a", "ainotes:agent-a", &[Read, Write]),
                row("demo-agent-b", "ainotes:agent-b", &[Read, Write]),
                moderator,
                row("demo-verifier", "ainotes:verifier", &[Read, Write, Verify]),
                row("demo-reader", "ainotes:reader", &[Read]),
                row("demo-human", "human:alice", &[Read, Write, Lock, Verify]),
                limited,
            ],
            ssp: SspCredentials {
                api_keys_allowed: vec!["demo-ssp-key".into()],
                api_keys_limited: vec!["demo-ssp-key-limited".into()],
                bearer_tokens: vec![
                    (
                        "demo-oauth-full".into(),
                        vec!["skill:invoke".into(), "skill:read".into()],
                    ),
                    ("demo-oauth-read".into(), vec!["skill:read".into()]),
                ],
                hmac_secret: Some("demo-hmac-secret".into()),
            },
            ssp_limits: SspLimits::default(),
            base_url: None,
            faults: Vec::new(),
            variants: Vec::new(),
            dialectic: true,
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
        }
    }

    /// Demo configuration over a private in-memory database (tests, `--spawn-reference`).
    pub fn demo_in_memory() -> Self {
        Self::demo(":memory:")
    }
}

/// `--demo` credentials are public knowledge: refuse to expose them beyond loopback.
pub fn demo_listen_allowed(addr: &SocketAddr) -> bool {
    addr.ip().is_loopback()
}

/// Why a `--tokens FILE` could not be used.
#[derive(Debug, thiserror::Error)]
pub enum TokenFileError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// OS error.
        source: std::io::Error,
    },
    /// The file is not valid TOML of the `[[token]]` format.
    #[error("invalid token file {path}: {source}")]
    Toml {
        /// The file.
        path: PathBuf,
        /// Parser error.
        source: toml::de::Error,
    },
    /// The rows parse but cannot serve (no row, empty or duplicate token, bad identity).
    #[error("invalid token file {path}: {reason}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
}

impl TokenFile {
    /// Reads and checks a `--tokens FILE`: at least one row, every token non-empty and
    /// unique, every identity `<realm>:<handle>` (PV-ID-1). A server without tokens would
    /// refuse every operation but `get_manifest`, so an empty file is an error.
    pub fn load(path: &std::path::Path) -> Result<Vec<TokenRow>, TokenFileError> {
        let text = std::fs::read_to_string(path).map_err(|source| TokenFileError::Io {
            path: path.to_owned(),
            source,
        })?;
        let file: Self = toml::from_str(&text).map_err(|source| TokenFileError::Toml {
            path: path.to_owned(),
            source,
        })?;
        let invalid = |reason: String| TokenFileError::Invalid {
            path: path.to_owned(),
            reason,
        };
        if file.token.is_empty() {
            return Err(invalid("no [[token]] rows".into()));
        }
        let mut seen = std::collections::HashSet::new();
        for (i, row) in file.token.iter().enumerate() {
            if row.token.trim().is_empty() || row.token.contains(char::is_whitespace) {
                return Err(invalid(format!(
                    "row {}: empty token or token with whitespace",
                    i + 1
                )));
            }
            if !seen.insert(row.token.as_str()) {
                return Err(invalid(format!("row {}: duplicate token", i + 1)));
            }
            match row.identity.split_once(':') {
                Some((realm, handle)) if !realm.is_empty() && !handle.is_empty() => {}
                _ => {
                    return Err(invalid(format!(
                        "row {}: identity `{}` is not `<realm>:<handle>`",
                        i + 1,
                        row.identity
                    )));
                }
            }
        }
        Ok(file.token)
    }
}
