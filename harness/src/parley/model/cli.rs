//! `conform model` (`--suite parley`, the default): the Parley model against a target (a profile or the spawned reference)
//! with an explicit seed and budget, on one or both bindings. Prints the seed first, then
//! per binding the verdict, the steps run and their rate, and on failure the shrunk
//! counterexample as a numbered transcript with its requirement IDs, the replay command and
//! the curl line of every request. Exit 0 = the model passed on every binding, 1 = a
//! counterexample, 2 = the model could not run (profile, pre-flight, unsupported).

use std::io::Write as _;
use std::path::PathBuf;
use std::sync::Arc;

use super::generate::Focus;
use super::runner::{Budget, ModelResult, ModelRun, run_model};
use super::transcript;
use crate::capability::command::{CommandError, Launcher};
use crate::capability::model::{ModelArgs, Modelled};
use crate::capability::transports;
use crate::engine::binding;
use crate::engine::protocol::{Protocol, connect};
use crate::engine::target::{ConnectOptions, Target};
use crate::parley::pacing::Pacer;
use crate::parley::preflight::ParleyTarget;
use crate::parley::protocol::Parley;
use crate::transport::{McpRevision, TransportKind};

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
            .spawn_reference(opts, protocols, args.faults())
            .await
            .map_err(|e| err(&e)),
    }
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
    let kinds = transports::kinds(&binding::selection(&args.transport));
    let opts = ConnectOptions {
        revision_override: revision,
        profile_path: args.target.as_ref().map(|p| p.display().to_string()),
        transports: kinds.iter().map(|k| (*k).into()).collect(),
        tls: args.tls.clone(),
        time_scale: args.time_scale,
    };
    let budget = budget(args)?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| CommandError(format!("starting the async runtime: {e}")))?;
    let protocols: Vec<Arc<dyn Protocol>> = vec![Arc::new(Parley)];
    let target = rt.block_on(target(args, &opts, &protocols, launcher))?;
    let mut budget = budget;
    if let (None, Some(p)) = (args.steps, target.part::<ParleyTarget>()) {
        budget.steps = super::runner::steps_for(p, budget);
    }
    let out = &mut crate::capability::command::Output(launcher);
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
        let run = run_model(
            rt.handle(),
            part,
            kind,
            budget,
            target.part::<Pacer>(),
            None,
        );
        code = code.max(verdict(out, kind, run, &target, budget, args)?);
    }
    Ok(code)
}

/// Prints one binding's verdict (and its counterexample, promoted when asked): the exit
/// code it calls for.
fn verdict(
    out: &mut dyn std::io::Write,
    kind: TransportKind,
    run: ModelRun,
    target: &Target,
    budget: Budget,
    args: &ModelArgs,
) -> Result<u8, CommandError> {
    let stats = stats(&run);
    Ok(match run.result {
        ModelResult::Passed => {
            let _ = writeln!(out, "{kind}: pass — {stats}");
            0
        }
        ModelResult::Unsupported(_, r) => {
            let _ = writeln!(out, "{kind}: unsupported — {r}");
            2
        }
        ModelResult::Error(e) => {
            let _ = writeln!(out, "{kind}: harness error — {e} ({stats})");
            2
        }
        ModelResult::Failed(cx) => {
            let shrink = run
                .shrink_time
                .map(|d| format!(", shrinking {:.2} s", d.as_secs_f64()))
                .unwrap_or_default();
            let _ = writeln!(out, "{kind}: FAIL — {stats}{shrink}");
            let replay = transcript::replay_command(target, kind, budget);
            let _ = writeln!(out, "{}", transcript::render(&cx, &replay, true));
            if let Some(dir) = &args.promote {
                let path = promote(dir, &cx, budget.seed, kind)?;
                let _ = writeln!(out, "promoted to {}", path.display());
            }
            1
        }
    })
}

/// The search's budget: the command line's, else the focus's budget in `conform run`.
fn budget(args: &ModelArgs) -> Result<Budget, CommandError> {
    let focus = match args.focus.as_deref() {
        None => Budget::DEFAULT.focus,
        Some(f) => Focus::parse(f)
            .ok_or_else(|| CommandError(format!("unknown focus {f:?} (threads, claims, quota)")))?,
    };
    if focus == Focus::Quota && args.promote.is_some() {
        // Refused before the search, not after a counterexample: `vector_file` refuses every
        // one of this focus (a write by the quota role depends on a shared window).
        return Err(CommandError(
            "--promote: the quota focus's counterexamples cannot be vectors (whether a write by the quota role passes depends on a window other clients share)".into(),
        ));
    }
    let base = Budget::of(focus);
    Ok(Budget {
        seed: args.seed.unwrap_or(base.seed),
        cases: args.cases.unwrap_or(base.cases),
        steps: args.steps.unwrap_or(base.steps),
        ..base
    })
}

/// A run's steps, time, rate and waiting, in words.
fn stats(run: &super::runner::ModelRun) -> String {
    let rate = run.steps_run as f64 / run.elapsed.as_secs_f64().max(1e-9);
    format!(
        "{} steps in {:.2} s ({rate:.0} steps/s; {:.2} s of it waiting on the target's clock)",
        run.steps_run,
        run.elapsed.as_secs_f64(),
        run.waited.as_secs_f64()
    )
}

/// Writes `cx` as a vector file into `dir`; the file's path.
fn promote(
    dir: &std::path::Path,
    cx: &super::runner::Counterexample,
    seed: u64,
    kind: TransportKind,
) -> Result<PathBuf, CommandError> {
    let vectors =
        crate::engine::vectors_dir::locate(None).map_err(|e| CommandError(e.to_string()))?;
    let catalogue =
        crate::engine::requirements::Catalogue::load(&vectors.join("requirements/parley.toml"))
            .map_err(|e| CommandError(e.to_string()))?;
    let file = super::promote::vector_file(cx, &cx.world, seed, kind.as_str(), &catalogue)
        .map_err(|e| CommandError(format!("not promoted: {e}")))?;
    let name = format!("model-seed-{seed}-{kind}.json");
    crate::capability::command::write_json(dir, &name, &file).map_err(CommandError)
}

impl Modelled for Parley {
    fn model_command(&self, args: &ModelArgs, launcher: &dyn Launcher) -> Result<u8, CommandError> {
        execute(args, launcher)
    }
}
