//! Golden vectors: typed model, loader (with JSON Schema validation), placeholders, matcher, runner.

pub mod loader;
pub mod matcher;
pub mod model;
pub mod placeholders;
pub mod runner;
