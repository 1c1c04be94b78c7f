//! Reference server for Parley v1 and Skill Sharing Protocol 1.0.
//!
//! The server every `conform` check must pass against, and the proof that the checks are
//! right. Both Parley bindings (HTTP, MCP) call [`service`] only, so there is exactly one
//! permission check (PV-TR-1). The SSP provider lives in the same process and database.

pub mod api;
pub mod config;
pub mod domain;
pub mod faults;
pub mod logging;
pub mod server;
pub mod service;
pub mod ssp;
pub mod store;
pub mod variants;

pub use config::Config;
pub use server::{RunningServer, app, spawn};
