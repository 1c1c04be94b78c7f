//! Parley's golden vectors: typed model, loader (with JSON Schema validation) and runner.
//! The partial matcher and placeholders they use are protocol-neutral (`crate::json`).

pub mod loader;
pub mod model;
pub mod runner;
