//! Parley v1 — everything the harness knows about it: roles and the profile's `[tokens]`,
//! the manifest, the pre-flight, the golden vectors (typed model, loader, runner), the
//! PV-TR-1 cross-binding comparison and the PV-TR-1a bindings check. It registers itself
//! with the engine as [`protocol::Parley`].
//!
//! Next kinds of check get their own folders here: `model/` (proptest-state-machine models
//! of threads, authority, inbox and claims); `history/` races small groups of clients and
//! checks each history for linearizability against that model; `fuzz/` holds `conform fuzz` (mutators and oracles).

pub mod bindings_offered;
pub mod compare;
pub mod fuzz;
pub mod history;
pub mod init;
pub mod manifest;
pub mod model;
pub mod pacing;
pub mod pre_routing;
pub mod preflight;
pub mod protocol;
pub mod refusal;
pub mod role;
pub mod tokens;
pub mod vectors;
