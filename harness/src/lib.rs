//! `conform` — conformance suite for Parley v1 and SSP 1.0, and any protocol that plugs in.
//!
//! Data flow (architecture.md): target profile → each protocol's pre-flight → plan (suites ×
//! checks × transports) → bounded concurrent execution with every exchange recorded →
//! typed verdicts → one serde [`engine::report::Report`] → JSON | JUnit | Markdown | HTML.
//!
//! Layers, each importing only those below it (`tests/layering.rs` enforces it, and no
//! import circle): [`json`] (neutral helpers) and [`transport`] (bytes and JSON-RPC) →
//! [`engine`] (the protocol-free core) → [`capability`] (what a protocol may offer beyond
//! it) → the protocol wings [`parley`], [`ssp`], [`mcp`] (apart from one another) →
//! [`registry`] (the one list of protocols and their capabilities) → the CLI. The harness never imports
//! `reference_impl::domain`: it uses the reference crate only to spawn the server in process
//! (`--spawn-reference`, default feature `reference`) and to read its fault catalogue.

#![deny(clippy::print_stdout, clippy::print_stderr)] // the library prints nothing: see term.rs

pub mod capability;
pub mod engine;
/// Suite power: seeded faults of the reference server (cargo feature `faults`).
#[cfg(feature = "faults")]
pub mod faults;
pub mod json;
pub mod launcher;
pub mod mcp;
pub mod parley;
#[cfg(feature = "reference")]
pub mod reference;
#[cfg(feature = "faults")]
pub mod reference_runs;
pub mod registry;
pub mod ssp;
pub mod transport;
/// Suite power: legal variants of the reference server the suite must accept (feature `variants`).
#[cfg(feature = "variants")]
pub mod variants;
