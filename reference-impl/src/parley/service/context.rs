//! What every operation of the service works with: why it did not succeed ([`Fail`]), the
//! clock reading of one request ([`Now`]), the service's state ([`Inner`]) and the
//! authenticated caller ([`Caller`]). Apart from `mod.rs` so that the operations (`ops`,
//! `post`, `args`) take them without importing the service that calls them.

use std::collections::HashMap;

use chrono::{DateTime, SecondsFormat, Utc};

use crate::config::TokenRow;
use crate::domain::parley::{Actor, Limits, Reason, Refusal};
use crate::faults::Faults;
use crate::store::{Db, StoreError};

/// Why an operation did not succeed: a protocol refusal, or a storage fault (500).
#[derive(Debug, thiserror::Error)]
pub(crate) enum Fail {
    /// A §10 refusal; `retry_after` for 429.
    #[error("{0}")]
    Refused(Refusal, Option<u64>),
    /// Storage failure (never a protocol outcome).
    #[error("store: {0}")]
    Store(#[from] StoreError),
}

impl From<Refusal> for Fail {
    fn from(r: Refusal) -> Self {
        Self::Refused(r, None)
    }
}

impl From<rusqlite::Error> for Fail {
    fn from(e: rusqlite::Error) -> Self {
        Self::Store(StoreError::from(e))
    }
}

/// Shorthand for an early refusal.
pub(crate) fn refused<T>(reason: Reason, message: impl Into<String>) -> Result<T, Fail> {
    Err(Fail::Refused(Refusal::new(reason, message), None))
}

/// Clock reading shared by one request: the instant and its RFC 3339 UTC form.
#[derive(Debug, Clone)]
pub(crate) struct Now {
    pub(crate) time: DateTime<Utc>,
    pub(crate) text: String,
}

impl Now {
    pub(super) fn read() -> Self {
        let time = Utc::now();
        Self {
            text: time.to_rfc3339_opts(SecondsFormat::Millis, true),
            time,
        }
    }
}

pub(crate) struct Inner {
    pub(crate) db: Db,
    pub(super) tokens: HashMap<String, TokenRow>,
    pub(crate) limits: Limits,
    /// The dialectic profile is enabled in the reference (the manifest lists it).
    pub(crate) dialectic: bool,
    pub(super) quota: super::quota::Quota,
    /// Seeded faults of this instance (issue 6; always none without the `faults` feature).
    pub(crate) faults: Faults,
    /// Turns in the service for the Parley bindings' requests ([`turns`]; the SSP skill
    /// that reads a thread takes none): requests beyond them wait in the gate's FIFO
    /// queue instead of in the blocking pool, where they would all contend for the one
    /// database connection and the OS, not arrival order, would pick the next (issue 29:
    /// with 32 clients on one core, post p99 went from 11.5–13.5 ms to 10.0–11.6 ms).
    pub(crate) gate: std::sync::Arc<tokio::sync::Semaphore>,
}

/// How many requests run in the service at once: the cores, and at least two, so a request
/// that waits (a seeded race fault's widened window) never holds up every other one.
pub(crate) fn turns() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get().max(2))
}

/// The authenticated caller: the token row's actor, its token and quota.
pub(crate) struct Caller {
    pub(crate) actor: Actor,
    pub(super) token: String,
    pub(super) quota_per_minute: u32,
}
