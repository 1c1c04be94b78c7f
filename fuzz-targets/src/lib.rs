//! The bodies of the fuzz targets of `fuzz/` (issue 11): each takes the fuzzer's bytes,
//! drives one library entry point and panics only when an oracle is violated. `fuzz/` wraps
//! each in `fuzz_target!` (libFuzzer, nightly); `tests/replay.rs` runs every target over its
//! seed corpus (generated from the golden vectors) and any saved corpus on stable.
//!
//! - [`parley`]: envelope parsing and validation, HTTP requests through the reference's
//!   `app()` in process, the MCP JSON-RPC front layer;
//! - [`ssp`]: SSP document validation (`conform validate`'s library), invocation requests
//!   through the provider routes;
//! - [`harness`]: the harness's own parsers (vector files, target profiles, baselines);
//! - [`differential`]: operation sequences against the reference and the harness's Parley
//!   model, which must agree;
//! - [`seeds`]: seed corpora from the golden vectors.

pub mod app;
pub mod differential;
pub mod harness;
pub mod parley;
pub mod seeds;
pub mod ssp;

/// A target: a name (the `fuzz/fuzz_targets/<name>.rs` binary) and its body.
pub type Target = (&'static str, fn(&[u8]));

/// Every target.
pub const TARGETS: [Target; 7] = [
    ("parley_envelope", parley::envelope),
    ("parley_http", parley::http),
    ("parley_mcp", parley::mcp),
    ("ssp_documents", ssp::documents),
    ("ssp_invocation", ssp::invocation),
    ("harness_parsers", harness::parsers),
    ("parley_model", differential::model),
];
