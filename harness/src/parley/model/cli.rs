//! `conform model`: the Parley model against a target (a profile or the spawned reference)
//! with an explicit seed and budget, on one or both bindings. Prints the seed first, then
//! per binding the verdict, the steps run and their rate, and on failure the shrunk
//! counterexample as a numbered transcript with its requirement IDs, the replay command and
//! the curl line of every request. Exit 0 = the model passed on every binding, 1 = a
//! counterexample, 2 = the model could not run (profile, pre-flight, unsupported).

use std::io::Write as _;
use std::path::PathBuf;
use std::sync::Arc;

use super::runner::{Budget, ModelResult, run_model};
use super::transcript;
use crate::engine::protocol::{CommandError, Launcher, Protocol, connect};
use crate::engine::target::{ConnectOptions, Target};
use crate::parley::pacing::Pacer;
use crate::parley::preflight::ParleyTarget;
use crate::transport::{McpRevision, TransportKind};

/// Arguments of `conform model`.
#[derive(clap::Args, Debug, Clone)]
pub struct ModelArgs {
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
    /// Binding(s): http, mcp or both.
    #[arg(long, default_value = "both", value_parser = ["http", "mcp", "both"])]
    pub transport: String,
    /// MCP revision (overrides the profile): 2025-11-25 or 2026-07-28.
    #[arg(long, value_name = "REV")]
    pub mcp_revision: Option<String>,
    /// Seed of the search (the same seed replays the same sequences).
    #[arg(long, default_value_t = Budget::DEFAULT.seed)]
    pub seed: u64,
    /// Sequences to try.
    #[arg(long, default_value_t = Budget::DEFAULT.cases)]
    pub cases: u32,
    /// Operations per sequence (at most).
    #[arg(long, default_value_t = Budget::DEFAULT.steps)]
    pub steps: usize,
    /// Write each shrunk counterexample as a golden vector file into DIR
    /// (`model-seed-<seed>-<binding>.json`, the format of `vectors/README.md`).
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
}

/// The transports `--transport` names.
fn transports(sel: &str) -> Vec<TransportKind> {
    match sel {
        "http" => vec![TransportKind::Http],
        "mcp" => vec![TransportKind::Mcp],
        _ => vec![TransportKind::Http, TransportKind::Mcp],
    }
}

async fn target(
    args: &ModelArgs,
    opts: &ConnectOptions,
    protocols: &[Arc<dyn Protocol>],
    launcher: &dyn Launcher,
) -> Result<Target, CommandError> {
    let err = |e: &dyn std::fmt::Display| CommandError(e.to_string());
    match &args.target {
        Some(path) => {
            let profile = launcher.load_profile(path).map_err(|e| err(&e))?;
            connect(profile, opts, protocols).await.map_err(|e| err(&e))
        }
        None => launcher
            .spawn_reference(opts, protocols, faults(args))
            .await
            .map_err(|e| err(&e)),
    }
}

/// The seeded faults `--fault` names (only the `faults` build has the option).
fn faults(args: &ModelArgs) -> &[String] {
    #[cfg(feature = "faults")]
    let named: &[String] = &args.faults;
    #[cfg(not(feature = "faults"))]
    let named: &[String] = {
        let _ = args;
        &[]
    };
    named
}

/// Runs `conform model`: the exit code.
pub fn execute(args: &ModelArgs, launcher: &dyn Launcher) -> Result<u8, CommandError> {
    let revision = match &args.mcp_revision {
        Some(r) => Some(
            McpRevision::parse(r)
                .ok_or_else(|| CommandError(format!("unknown MCP revision {r:?}")))?,
        ),
        None => None,
    };
    let kinds = transports(&args.transport);
    let opts = ConnectOptions {
        revision_override: revision,
        profile_path: args.target.as_ref().map(|p| p.display().to_string()),
        transports: kinds.clone(),
        tls: args.tls.clone(),
    };
    let budget = Budget {
        seed: args.seed,
        cases: args.cases,
        steps: args.steps,
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| CommandError(format!("starting the async runtime: {e}")))?;
    let protocols: Vec<Arc<dyn Protocol>> = vec![Arc::new(crate::parley::Parley)];
    let target = rt.block_on(target(args, &opts, &protocols, launcher))?;
    let out = &mut std::io::stdout();
    let _ = writeln!(
        out,
        "conform model: seed {}, {} cases × ≤{} steps, target {}",
        budget.seed, budget.cases, budget.steps, target.info.base_url
    );
    let mut code = 0u8;
    for kind in kinds {
        let Some(part) = target.part::<ParleyTarget>() else {
            return Err(CommandError("the Parley pre-flight did not run".into()));
        };
        if !part.manifest.offers(kind) {
            let _ = writeln!(
                out,
                "{kind}: unsupported (the target does not offer this binding)"
            );
            code = code.max(2);
            continue;
        }
        // Not inside the runtime: the model's steps block on it from this thread.
        let run = run_model(rt.handle(), part, kind, budget, target.part::<Pacer>());
        let rate = run.steps_run as f64 / run.elapsed.as_secs_f64().max(1e-9);
        let stats = format!(
            "{} steps in {:.2} s ({rate:.0} steps/s)",
            run.steps_run,
            run.elapsed.as_secs_f64()
        );
        match run.result {
            ModelResult::Passed => {
                let _ = writeln!(out, "{kind}: pass — {stats}");
            }
            ModelResult::Unsupported(r) => {
                let _ = writeln!(out, "{kind}: unsupported — {r}");
                code = code.max(2);
            }
            ModelResult::Error(e) => {
                let _ = writeln!(out, "{kind}: harness error — {e} ({stats})");
                code = code.max(2);
            }
            ModelResult::Failed(cx) => {
                let shrink = run
                    .shrink_time
                    .map(|d| format!(", shrinking {:.2} s", d.as_secs_f64()))
                    .unwrap_or_default();
                let _ = writeln!(out, "{kind}: FAIL — {stats}{shrink}");
                let replay = transcript::replay_command(&target, kind, budget);
                let _ = writeln!(out, "{}", transcript::render(&cx, &replay, true));
                if let Some(dir) = &args.promote {
                    let path = promote(dir, &cx, budget.seed, kind)?;
                    let _ = writeln!(out, "promoted to {}", path.display());
                }
                code = code.max(1);
            }
        }
    }
    Ok(code)
}

/// Writes `cx` as a vector file into `dir`; the file's path.
fn promote(
    dir: &std::path::Path,
    cx: &super::runner::Counterexample,
    seed: u64,
    kind: TransportKind,
) -> Result<PathBuf, CommandError> {
    let vectors = crate::engine::protocol::default_vectors_dir();
    let catalogue =
        crate::engine::requirements::Catalogue::load(&vectors.join("requirements/parley.toml"))
            .map_err(|e| CommandError(e.to_string()))?;
    let file = super::promote::vector_file(cx, &cx.world, seed, kind.as_str(), &catalogue);
    std::fs::create_dir_all(dir)
        .map_err(|e| CommandError(format!("creating {}: {e}", dir.display())))?;
    let path = dir.join(format!("model-seed-{seed}-{kind}.json"));
    let text = serde_json::to_string_pretty(&file).map_err(|e| CommandError(e.to_string()))?;
    std::fs::write(&path, text + "\n")
        .map_err(|e| CommandError(format!("writing {}: {e}", path.display())))?;
    Ok(path)
}
