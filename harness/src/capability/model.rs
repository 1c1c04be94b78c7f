//! The `conform model` command's arguments and dispatch: one protocol's state-machine model
//! (`--suite`, Parley by default) against a target with an explicit seed and budget. Each
//! protocol runs its own model ([`Modelled::model_command`]); this only parses the arguments
//! and finds the protocol.

use std::path::PathBuf;
use std::sync::Arc;

use super::command::{CommandError, Launcher};
use crate::engine::protocol::Protocol;

/// Arguments of `conform model`.
#[derive(clap::Args, Debug, Clone)]
pub struct ModelArgs {
    /// The protocol whose model runs (`parley`, `ssp`).
    #[arg(long, default_value = "parley")]
    pub suite: String,
    /// Target profile (TOML).
    #[arg(
        long,
        value_name = "FILE",
        conflicts_with = "spawn_reference",
        required_unless_present = "spawn_reference"
    )]
    pub target: Option<PathBuf>,
    /// Start the bundled reference server in process.
    #[arg(long)]
    pub spawn_reference: bool,
    /// Binding(s): http, mcp or both (protocols with one binding ignore it).
    #[arg(long, default_value = "both", value_parser = ["http", "mcp", "both"])]
    pub transport: String,
    /// MCP revision (overrides the profile): 2025-11-25 or 2026-07-28.
    #[arg(long, value_name = "REV")]
    pub mcp_revision: Option<String>,
    /// Seed of the search (the same seed replays the same sequences; default: the
    /// protocol's `conform run` budget).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Sequences to try (default: the protocol's `conform run` budget).
    #[arg(long)]
    pub cases: Option<u32>,
    /// Operations per sequence, at most (default: the protocol's `conform run` budget).
    #[arg(long)]
    pub steps: Option<usize>,
    /// What the sequences concentrate on, where the protocol's model has several foci
    /// (Parley: `threads`, the default, `claims` or `quota`).
    #[arg(long, value_name = "NAME")]
    pub focus: Option<String>,
    /// Write each shrunk counterexample as a golden vector file into DIR, the formats of
    /// `vectors/README.md` (Parley: `model-seed-<seed>-<binding>.json`; SSP: a sequence
    /// vector, `ssp-model-seed-<seed>.json`, when the sequence fails again alone), where the
    /// protocol's vectors can express it.
    #[arg(long, value_name = "DIR")]
    pub promote: Option<PathBuf>,
    /// With `--spawn-reference`: switch on a seeded fault of the reference (cargo feature
    /// `faults`); repeatable. For measuring the model and its shrinking.
    #[cfg(feature = "faults")]
    #[arg(long = "fault", value_name = "NAME", requires = "spawn_reference")]
    pub faults: Vec<String>,
    /// `--ca-cert`/`--insecure` for an `https://` target.
    #[command(flatten)]
    pub tls: crate::transport::tls::TlsOptions,
    /// Multiply every timeout and waiting bound by F (a slow runner or server; overrides
    /// the profile's `time_scale`; recorded in the report).
    #[arg(long, value_name = "F")]
    pub time_scale: Option<crate::transport::budget::TimeScale>,
}

impl ModelArgs {
    /// The seeded faults `--fault` names (only the `faults` build has the option).
    pub fn faults(&self) -> &[String] {
        #[cfg(feature = "faults")]
        let named: &[String] = &self.faults;
        #[cfg(not(feature = "faults"))]
        let named: &[String] = &[];
        named
    }
}

/// A protocol with a state-machine model (`conform model --suite <it>`).
pub trait Modelled: Protocol {
    /// Runs the model as `args` ask: the exit code (0 pass, 1 counterexample, 2 could not
    /// run).
    fn model_command(&self, args: &ModelArgs, launcher: &dyn Launcher) -> Result<u8, CommandError>;
}

/// Runs `conform model` with the protocol `--suite` names among `models` (the registered
/// protocols that have one; `registered` names them all): its exit code (0 pass,
/// 1 counterexample, 2 could not run).
pub fn execute(
    args: &ModelArgs,
    models: &[Arc<dyn Modelled>],
    registered: &[&str],
    launcher: &dyn Launcher,
) -> Result<u8, CommandError> {
    match models.iter().find(|p| p.name() == args.suite) {
        Some(p) => p.model_command(args, launcher),
        None if registered.contains(&args.suite.as_str()) => Err(CommandError(format!(
            "the {} protocol has no state-machine model",
            args.suite
        ))),
        None => Err(CommandError(format!("no protocol named {:?}", args.suite))),
    }
}
