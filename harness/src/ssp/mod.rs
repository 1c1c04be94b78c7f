//! Skill Sharing Protocol 1.0 — the harness's SSP side (issue 5, `shared/design/ssp.md`).
//!
//! - [`types`]: typed protocol documents;
//! - [`validator`]: the Schema Validator over the single protocol schema file (VAL rules);
//! - [`document`]: `parse` / `serialize`;
//! - [`cli`]: the `conform validate` subcommand;
//! - [`consumer`]: discovery client, compatibility check, invoker (CONS rules);
//! - [`vectors`]: the SSP validator vectors (model, loader, per-vector check);
//! - [`model`]: the state-machine model of a provider (`model/ssp-lifecycle`);
//! - [`provider`]: scripted checks of a provider (HTTP rules) and the `[ssp]` profile table;
//! - [`requests`]: request vectors (promoted fuzz findings, hand-written regressions);
//! - [`suite`]: every SSP check for the engine (`conform run --suite ssp`).

pub mod cli;
pub mod codes;
pub mod consumer;
pub mod document;
pub mod fingerprint;
pub mod fuzz;
pub mod history;
pub mod init;
pub mod model;
pub mod protocol;
pub mod provider;
pub mod requests;
pub mod suite;
pub mod timeout_error;
pub mod types;
pub mod validator;
pub mod vector_files;
pub mod vectors;

pub use document::{ParseError, SspDocument, parse, parse_str, parse_with, serialize};
pub use validator::{DocType, Mode, SspValidator, ValidationIssue, ValidationReport, validate};
