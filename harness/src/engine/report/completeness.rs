//! Completeness (issue 26): what each selected suite declared, what it executed against the
//! target, and whether that is enough to call the run a verdict on the whole suite.
//!
//! A run that executed nothing of a selected suite, or left a required rule `untested`,
//! proves nothing about it: such a run fails (exit 1) unless the user chose a partial run
//! (`--partial`, or a selection flag: `--filter`, `--shard`, one `--transport`), which the
//! report records in [`Completeness::partial`].

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use super::{CheckResult, RequirementRow};
use crate::engine::verdict::Verdict;

/// Declared / executed / complete, per suite and overall.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Completeness {
    /// One entry per selected suite, in report order.
    pub suites: Vec<SuiteCompleteness>,
    /// Every selected suite is complete.
    pub complete: bool,
    /// Why the user chose a partial run (empty: a full run, where incompleteness fails it).
    #[serde(default)]
    pub partial: Vec<String>,
}

/// The completeness of one suite.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SuiteCompleteness {
    /// Suite name.
    pub suite: String,
    /// Results the run planned for it (checks × bindings, derived comparisons included;
    /// self-tests of conform excluded).
    pub declared: usize,
    /// Of those, results that judged the target: a pass with exchanges, a failure, a warning.
    pub executed: usize,
    /// Required rules (MUST, REC) left `untested`.
    pub untested_required: usize,
    /// `executed > 0` and no required rule untested.
    pub complete: bool,
}

impl Completeness {
    /// What a report written before completeness was recorded reads as: nothing per suite,
    /// and not failing its run on that account (its exit code stays what it was).
    pub fn unrecorded() -> Self {
        Self {
            suites: Vec::new(),
            complete: true,
            partial: Vec::new(),
        }
    }

    /// Judges completeness from a run's results and matrix; `partial` is kept.
    pub fn judge(
        suites: &[String],
        checks: &[CheckResult],
        requirements: &[RequirementRow],
        partial: Vec<String>,
    ) -> Self {
        let per: Vec<SuiteCompleteness> = suites
            .iter()
            .map(|s| {
                let mine = || checks.iter().filter(|c| &c.suite == s && !c.self_test);
                let executed = mine().filter(|c| judged_target(c)).count();
                let untested_required = (requirements.iter())
                    .filter(|r| &r.suite == s && r.untested_required())
                    .count();
                SuiteCompleteness {
                    suite: s.clone(),
                    declared: mine().count(),
                    executed,
                    untested_required,
                    complete: executed > 0 && untested_required == 0,
                }
            })
            .collect();
        Self {
            complete: per.iter().all(|s| s.complete),
            suites: per,
            partial,
        }
    }

    /// Whether incompleteness fails the run: incomplete, and the user did not choose it.
    pub fn fails_run(&self) -> bool {
        !self.complete && self.partial.is_empty()
    }

    /// One line per suite for the terminal summary.
    pub fn lines(&self) -> String {
        let mut out = String::new();
        for s in &self.suites {
            let state = if s.complete {
                "complete".to_string()
            } else if s.executed == 0 {
                "INCOMPLETE: nothing executed against the target".to_string()
            } else {
                format!(
                    "INCOMPLETE: {} required rule(s) untested",
                    s.untested_required
                )
            };
            let _ = writeln!(
                out,
                "completeness {}: {} of {} results judged the target — {state}",
                s.suite, s.executed, s.declared
            );
        }
        if !self.complete {
            let _ = if self.partial.is_empty() {
                writeln!(
                    out,
                    "a full run must judge every required rule: give the profile what the \
                     `unsupported` checks name (`conform init` lists it), or pass --partial \
                     to accept a partial run"
                )
            } else {
                writeln!(out, "partial run chosen: {}", self.partial.join(", "))
            };
        }
        out
    }
}

/// A result that judged the target (the evidence rule of the matrix).
fn judged_target(c: &CheckResult) -> bool {
    match &c.verdict {
        Verdict::Pass => c.exchanges > 0,
        Verdict::Fail(_) | Verdict::Warn(_) => true,
        _ => false,
    }
}
