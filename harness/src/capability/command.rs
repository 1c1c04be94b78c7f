//! A protocol's own subcommands (SSP's `conform validate`) and how every command a wing runs
//! — its model, its fuzz campaign — reaches its target without knowing the registry or the
//! bundled reference, which sit above the wings.

use std::path::Path;
use std::sync::Arc;

use futures::future::BoxFuture;

use crate::engine::protocol::Protocol;
use crate::engine::target::{ConnectOptions, Profile, Target, TargetError};

/// How a protocol's own subcommand (`conform fuzz`, `conform model`) reaches its target
/// without knowing the registry or the bundled reference, which sit above the wings: the
/// CLI hands one down ([`crate::launcher::Registered`]).
pub trait Launcher: Send + Sync {
    /// Reads a profile file, its sections validated by every registered protocol.
    fn load_profile(&self, path: &Path) -> Result<Profile, TargetError>;
    /// Spawns the bundled reference with the seeded `faults` named (empty: none) and
    /// pre-flights it for `protocols`.
    fn spawn_reference<'a>(
        &'a self,
        opts: &'a ConnectOptions,
        protocols: &'a [Arc<dyn Protocol>],
        faults: &'a [String],
    ) -> BoxFuture<'a, Result<Target, TargetError>>;
}

/// Why a protocol's subcommand could not run (exit code 2).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct CommandError(pub String);

/// A protocol that adds `conform` subcommands of its own.
pub trait Commands: Protocol {
    /// The subcommands (e.g. SSP's `validate`).
    fn commands(&self) -> Vec<clap::Command>;
    /// Runs one of [`Commands::commands`]: the process exit code, or why it could not run.
    /// `launcher` reaches targets (profile files, the bundled reference) for it.
    fn run_command(
        &self,
        name: &str,
        args: &clap::ArgMatches,
        launcher: &dyn Launcher,
    ) -> Result<u8, CommandError>;
}
