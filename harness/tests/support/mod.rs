//! Test support shared by the `harness/tests` binaries (and, for the fixtures, the bench):
//! spawning the reference server, the one shared in-process reference of the libtest-mimic
//! binaries, small HTTP servers, the vectors directory and its catalogues, fixtures, and
//! turning a verdict into a test failure. Each binary that needs it says `mod support;`.
//!
//! One submodule per concern, so a binary names what it uses (`support::http::serve`):
//! - [`http`]: serve an axum router on `127.0.0.1:0`, a refused base URL, JSON responses;
//! - [`ssp`]: SSP documents the fake providers answer with;
//! - [`fixtures`]: the seed's weather descriptor (also included by `benches/ssp_validate.rs`
//!   through `#[path]`, as it needs nothing else);
//! - [`vectors`]: the repository's `vectors/` directory, its catalogues and suites;
//! - [`verdicts`]: a verdict as a one-line description or as a test failure;
//! - [`reference`] (feature `reference`): the reference spawned with a config, one shared
//!   reference per libtest-mimic binary, the Parley suite run over HTTP;
//! - [`broken`] (feature `reference`): a Parley server that breaks exactly one rule;
//! - [`proxy`] (feature `reference`): the forwarding half of such rewriting proxies;
//! - [`tls`] (feature `reference`): the reference behind a TLS proxy with a generated CA.
//!
//! Every test binary is its own crate and compiles this module whole, but each uses only a
//! part of it: `dead_code` is allowed here, for the module alone, instead of marking items
//! per binary. The price: a helper no binary uses any more is not flagged — delete it with
//! its last use. Test support panics on broken set-up (a failed bind, an unreadable fixture):
//! that is the test failure, so `expect` is allowed here too.
#![expect(
    dead_code,
    reason = "each test binary compiles the whole support module and uses a part of it"
)]
#![expect(clippy::expect_used, reason = "a broken test set-up is a test failure")]
// The one `unwrap` of the module is in `tls.rs`, built with the bundled reference only.
#![cfg_attr(
    feature = "reference",
    expect(clippy::unwrap_used, reason = "a broken test set-up is a test failure")
)]

#[cfg(feature = "reference")]
pub(crate) mod broken;
pub(crate) mod fixtures;
pub(crate) mod http;
#[cfg(feature = "reference")]
pub(crate) mod proxy;
#[cfg(feature = "reference")]
pub(crate) mod reference;
pub(crate) mod ssp;
#[cfg(feature = "reference")]
pub(crate) mod tls;
pub(crate) mod vectors;
pub(crate) mod verdicts;

/// A multi-threaded runtime with `workers` threads for a libtest-mimic binary (whose trials
/// are plain functions that block on async checks).
pub(crate) fn runtime(workers: usize) -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build()
        .map_err(|e| format!("runtime: {e}"))
}
