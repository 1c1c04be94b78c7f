//! A counterexample as people read it: the numbered steps of the shrunk sequence with each
//! answer, the broken postcondition with its rule IDs, the command that replays it, and
//! (on request) the curl line of every request.

use super::runner::{Budget, Counterexample};
use crate::engine::repro::shell_quote;
use crate::engine::target::Target;

/// `--spawn-reference` or `--target <profile>`: how a command reaches `target` again.
fn target_flag(target: &Target) -> String {
    if target.info.spawned_reference {
        "--spawn-reference".to_string()
    } else {
        match &target.info.profile_path {
            Some(p) => format!("--target {}", shell_quote(p)),
            None => "--target <profile.toml>".to_string(),
        }
    }
}

/// The `conform run` command running the one check `check` (a sequence vector) again.
pub fn rerun_command(target: &Target, check: &str) -> String {
    format!(
        "conform run --suite ssp {} --filter {}{}",
        target_flag(target),
        shell_quote(check),
        target.time_scale().flag()
    )
}

/// The `conform model --suite ssp` command replaying a run of `budget` on `target`.
pub fn replay_command(target: &Target, budget: Budget) -> String {
    let on = target_flag(target);
    format!(
        "conform model --suite ssp {on} --seed {} --cases {} --steps {}{}",
        budget.seed,
        budget.cases,
        budget.steps,
        target.time_scale().flag()
    )
}

/// The numbered transcript of `cx`, the broken rule and the replay command; `curl` adds
/// the curl line of every request.
pub fn render(cx: &Counterexample, replay: &str, curl: bool) -> String {
    let (ops, steps) = ((cx.ops.len(), cx.how), &cx.steps);
    crate::engine::counterexample::render("the SSP model", ops, steps, &cx.mismatch, replay, curl)
}
