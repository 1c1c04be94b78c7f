//! A counterexample as people read it: the numbered steps of the shrunk sequence with each
//! answer, the broken postcondition with its requirement IDs, the `conform model` command
//! that replays it, and (on request) the curl lines of every request.

use super::runner::{Budget, Counterexample};
use crate::engine::target::Target;
use crate::transport::TransportKind;

/// The `conform model` command replaying a run of `budget` on `kind`.
pub fn replay_command(target: &Target, kind: TransportKind, budget: Budget) -> String {
    let on = if target.info.spawned_reference {
        "--spawn-reference".to_string()
    } else {
        match &target.info.profile_path {
            Some(p) => format!("--target {}", crate::engine::repro::shell_quote(p)),
            None => "--target <profile.toml>".to_string(),
        }
    };
    let mut cmd = format!(
        "conform model {on} --transport {kind} --seed {} --cases {} --steps {}",
        budget.seed, budget.cases, budget.steps
    );
    if budget.focus != Budget::DEFAULT.focus {
        cmd.push_str(&format!(" --focus {}", budget.focus.as_str()));
    }
    cmd.push_str(&crate::parley::preflight::revision_flag(target, kind));
    cmd.push_str(&target.time_scale().flag());
    cmd
}

/// The numbered transcript of `cx`, the broken rule and the replay command; `curl` adds
/// the curl line of every request.
pub fn render(cx: &Counterexample, replay: &str, curl: bool) -> String {
    let (ops, steps) = ((cx.ops.len(), cx.how), &cx.steps);
    crate::engine::counterexample::render("the model", ops, steps, &cx.mismatch, replay, curl)
}
