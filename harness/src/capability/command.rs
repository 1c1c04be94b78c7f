//! A protocol's own subcommands (SSP's `conform validate`) and how every command a wing runs
//! — its model, its fuzz campaign — reaches its target without knowing the registry or the
//! bundled reference, which sit above the wings, and writes without touching the terminal,
//! which belongs to the command layer (the library prints nothing).

use std::path::Path;
use std::sync::Arc;

use futures::future::BoxFuture;

use crate::engine::protocol::Protocol;
use crate::engine::target::{ConnectOptions, Profile, Target, TargetError};

/// How a protocol's own subcommand (`conform fuzz`, `conform model`) reaches its target
/// without knowing the registry or the bundled reference, which sit above the wings, and
/// where it writes: the CLI hands one down (its `Terminal`, over [`crate::launcher`]).
pub trait Launcher: Send + Sync {
    /// Writes `text` as the command's output (the CLI: standard output, quietly nothing once
    /// its reader went away); another write error is the command's to report.
    fn out(&self, text: &str) -> std::io::Result<()>;
    /// One line for the user beside the output (the CLI: standard error): progress,
    /// warnings, where a file went. Never fails: there is nowhere left to say so.
    fn note(&self, line: &str);
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

/// A launcher's output as an [`std::io::Write`], for code that formats with `writeln!`.
pub struct Output<'a>(pub &'a dyn Launcher);

impl std::io::Write for Output<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        // `write_fmt` hands over whole `str` pieces, so no character is split between calls.
        self.0.out(&String::from_utf8_lossy(buf))?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
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
    /// `launcher` reaches targets (profile files, the bundled reference) for it and is
    /// where it writes.
    fn run_command(
        &self,
        name: &str,
        args: &clap::ArgMatches,
        launcher: &dyn Launcher,
    ) -> Result<u8, CommandError>;
}

/// Writes `value` as pretty JSON (and a final newline) to `dir/name`, creating `dir`: the
/// file `--promote` leaves; its path.
pub fn write_json(
    dir: &std::path::Path,
    name: &str,
    value: &impl serde::Serialize,
) -> Result<std::path::PathBuf, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    let path = dir.join(name);
    let text = serde_json::to_string_pretty(value).map_err(|e| e.to_string())?;
    std::fs::write(&path, text + "\n").map_err(|e| format!("writing {}: {e}", path.display()))?;
    Ok(path)
}
