//! What a protocol may offer beyond the engine core, one trait per capability, each beside
//! the code that uses it: a black-box fuzz campaign ([`fuzz::Fuzzable`]), a state-machine
//! model ([`model::Modelled`]), its sections of `conform init` ([`init::Initialisable`]),
//! a duration estimate under the target's budgets ([`estimate::Paced`]), its own
//! subcommands ([`command::Commands`]), the linearizability search its histories use
//! ([`history`]), and the harness's HTTP and MCP transports as bindings ([`transports`]).
//!
//! The engine core never imports this layer; a protocol implements the traits it offers in
//! its own folder and names them on its line of [`crate::registry`].

pub mod command;
pub mod estimate;
pub mod fuzz;
pub mod history;
pub mod init;
pub mod model;
pub mod transports;
