//! `conform model --suite ssp`: the SSP model against a provider (a profile with an `[ssp]`
//! table, or the spawned reference) with an explicit seed and budget. Prints the seed, the
//! verdict with the steps run and their rate, the readings worth a warning, and on failure
//! the shrunk counterexample as a numbered transcript with its rule IDs, the replay command
//! and the curl line of every request. Exit 0 pass, 1 counterexample, 2 could not run.

use std::io::Write as _;
use std::sync::Arc;

use super::runner::{Budget, ModelResult, ModelRun, run_model};
use super::sequences::promotable;
use super::transcript;
use crate::capability::command::{CommandError, Launcher};
use crate::capability::model::{ModelArgs, Modelled};
use crate::engine::protocol::{Protocol, connect};
use crate::engine::target::ConnectOptions;
use crate::ssp::protocol::Ssp;

/// Runs `conform model --suite ssp`: the exit code.
pub fn execute(args: &ModelArgs, launcher: &dyn Launcher) -> Result<u8, CommandError> {
    if let Some(f) = &args.focus {
        return Err(CommandError(format!("the SSP model has no focus {f:?}")));
    }
    let budget = Budget {
        seed: args.seed.unwrap_or(Budget::DEFAULT.seed),
        cases: args.cases.unwrap_or(Budget::DEFAULT.cases),
        steps: args.steps.unwrap_or(Budget::DEFAULT.steps),
        lanes: Budget::LANES,
        ..Budget::DEFAULT
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| CommandError(format!("starting the async runtime: {e}")))?;
    let opts = ConnectOptions {
        profile_path: args.target.as_ref().map(|p| p.display().to_string()),
        tls: args.tls.clone(),
        time_scale: args.time_scale,
        ..ConnectOptions::default()
    };
    let protocols: Vec<Arc<dyn Protocol>> = vec![Arc::new(Ssp)];
    let err = |e: &dyn std::fmt::Display| CommandError(e.to_string());
    let target = rt.block_on(async {
        match &args.target {
            Some(path) => {
                let profile = launcher.load_profile(path).map_err(|e| err(&e))?;
                connect(profile, &opts, &protocols)
                    .await
                    .map_err(|e| err(&e))
            }
            None => launcher
                .spawn_reference(&opts, &protocols, args.faults())
                .await
                .map_err(|e| err(&e)),
        }
    })?;
    let out = &mut crate::capability::command::Output(launcher);
    let _ = writeln!(
        out,
        "conform model --suite ssp: seed {}, {} cases × ≤{} steps, target {}",
        budget.seed, budget.cases, budget.steps, target.info.base_url
    );
    let nonce = format!("cli-{}-{}", budget.seed, std::process::id());
    // Not inside the runtime: the model's steps block on it from this thread.
    let run = run_model(rt.handle(), &target, budget, &nonce, None);
    let stats = stats(&run, budget);
    for (rule, w) in &run.warnings {
        let _ = writeln!(out, "warning [{rule}]: {w}");
    }
    Ok(match run.result {
        ModelResult::Passed => {
            let _ = writeln!(out, "http: pass — {stats}");
            0
        }
        ModelResult::Unsupported(_, r) => {
            let _ = writeln!(out, "http: unsupported — {r}");
            2
        }
        ModelResult::Error(e) => {
            let _ = writeln!(out, "http: harness error — {e} ({stats})");
            2
        }
        ModelResult::Failed(cx) => {
            let _ = writeln!(out, "http: FAIL — {stats}");
            let replay = transcript::replay_command(&target, budget);
            let _ = writeln!(out, "{}", transcript::render(&cx, &replay, true));
            if let Some(dir) = &args.promote {
                let line = match promotable(rt.handle(), &target, &cx, budget.seed) {
                    Ok(file) => {
                        let name = format!("ssp-model-seed-{}.json", budget.seed);
                        let path = crate::capability::command::write_json(dir, &name, &file)
                            .map_err(CommandError)?;
                        format!(
                            "promoted to {} (copy it into vectors/ssp/sequences/)",
                            path.display()
                        )
                    }
                    Err(why) => format!("not promoted: {why}"),
                };
                let _ = writeln!(out, "{line}");
            }
            1
        }
    })
}

/// The run's size, speed and idle share, for its verdict line.
fn stats(run: &ModelRun, budget: Budget) -> String {
    let wall = run.elapsed.as_secs_f64().max(1e-9);
    let idle = run.waited.as_secs_f64();
    format!(
        "{} steps in {wall:.2} s ({:.0} steps/s, {} lanes; {idle:.3} s, {:.0} % of the wall time, with every lane pausing between polls of running executions)",
        run.steps_run,
        run.steps_run as f64 / wall,
        budget.lanes_used(),
        100.0 * idle / wall
    )
}

impl Modelled for Ssp {
    fn model_command(&self, args: &ModelArgs, launcher: &dyn Launcher) -> Result<u8, CommandError> {
        execute(args, launcher)
    }
}
