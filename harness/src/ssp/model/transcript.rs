//! A counterexample as people read it: the numbered steps of the shrunk sequence with each
//! answer, the broken postcondition with its rule IDs, the command that replays it, and
//! (on request) the curl line of every request.

use std::fmt::Write as _;

use super::runner::{Budget, Counterexample};
use crate::engine::report::{compact, curl_command, shell_quote};
use crate::engine::target::Target;

/// The `conform model --suite ssp` command replaying a run of `budget` on `target`.
pub fn replay_command(target: &Target, budget: Budget) -> String {
    let on = if target.info.spawned_reference {
        "--spawn-reference".to_string()
    } else {
        match &target.info.profile_path {
            Some(p) => format!("--target {}", shell_quote(p)),
            None => "--target <profile.toml>".to_string(),
        }
    };
    format!(
        "conform model --suite ssp {on} --seed {} --cases {} --steps {}",
        budget.seed, budget.cases, budget.steps
    )
}

/// The numbered transcript of `cx`, the broken rule and the replay command; `curl` adds
/// the curl line of every request.
pub fn render(cx: &Counterexample, replay: &str, curl: bool) -> String {
    let mut out = String::new();
    let m = &cx.mismatch;
    let _ = writeln!(
        out,
        "the SSP model disagrees at step {} of a shrunk {}-step sequence [{}]: {}",
        cx.steps.len(),
        cx.ops.len(),
        m.rules.join(", "),
        m.message
    );
    for (i, s) in cx.steps.iter().enumerate() {
        let _ = writeln!(
            out,
            "  {:>3}. {}  →  {}",
            i + 1,
            s.text,
            compact(&s.answer, 160)
        );
        if curl {
            for ex in &s.exchanges {
                let _ = writeln!(out, "       {}", curl_command(ex));
            }
        }
    }
    let _ = writeln!(out, "  expected: {}", compact(&m.expected, 400));
    let _ = writeln!(out, "  observed: {}", compact(&m.observed, 400));
    let _ = write!(out, "  replay:   {replay}");
    out
}
