//! `conform` — the conformance engine for Parley v1 (and, via pluggable suites, SSP 1.0).
//!
//! Data flow (architecture.md): target profile → manifest + pre-flight → plan (suites ×
//! checks × transports) → bounded concurrent execution with every exchange recorded →
//! typed verdicts → one serde [`report::Report`] → JSON | JUnit | Markdown | HTML.
//!
//! The engine never imports `reference_impl::domain`: it may use the reference crate only
//! to spawn the server in process (`--spawn-reference`).

pub mod baseline;
/// Suite power: seeded faults of the reference server (issue 6; cargo feature `faults`).
#[cfg(feature = "faults")]
pub mod faults;
pub mod report;
pub mod requirements;
pub mod run;
pub mod ssp;
pub mod suite;
pub mod target;
pub mod transport;
pub mod vectors;
pub mod verdict;
