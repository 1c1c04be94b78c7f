//! Reference server for Parley v1 and Skill Sharing Protocol 1.0.
//!
//! The server every `conform` check must pass against, and the proof that the checks are
//! right. One wing per protocol, as in the harness: [`parley`] (its service, with exactly
//! one permission check behind both bindings, PV-TR-1, and its HTTP and MCP bindings) and
//! [`ssp`] (the provider and its routes), on the shared [`domain`] rules and [`store`]; [`api`]
//! holds what both wings' wire adapters share (the JSON media type, duplicate members) and
//! [`openapi`] the document of both wings' routes. The SSP provider lives in the same process
//! and database.

pub mod api;
pub mod config;
pub mod domain;
pub mod faults;
pub mod logging;
pub mod openapi;
pub mod parley;
pub mod server;
pub mod ssp;
pub mod store;
pub mod variants;

pub use config::Config;
pub use server::{RunningServer, app, spawn};
