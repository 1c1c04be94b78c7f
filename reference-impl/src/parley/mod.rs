//! The Parley wing of the reference (issue 27: the reference mirrors the harness, one
//! folder per protocol): [`service`], the one place every Parley decision is made (check
//! order PV-AU-6, refusals, persistence: one permission check), and [`api`], its two wire
//! bindings (HTTP, MCP), which only translate. The SSP wing is [`crate::ssp`].

pub mod api;
pub mod service;
