//! The protocol-free engine: plan → execute → judge → report.
//!
//! It knows checks ([`check::Check`]), suites and the [`protocol::Protocol`] trait through
//! which each protocol wing plugs in, targets and their profiles, verdicts, requirement
//! catalogues, baselines, and the report with its renderers. It imports no protocol module:
//! a new protocol or a new kind of check (vector, model, fuzz, history) needs no change here,
//! and it imports nothing of [`crate::capability`] (`tests/layering.rs`).

pub mod baseline;
pub mod binding;
pub mod check;
pub mod counterexample;
pub mod diff;
pub mod execute;
pub mod finding;
pub mod judge;
pub mod merge;
pub mod plan;
pub mod protocol;
pub mod report;
pub mod repro;
pub mod requirements;
pub mod run;
pub mod shard;
pub mod target;
pub mod vectors_dir;
pub mod verdict;
