//! Typed verdicts: what one check concluded about the target.
//!
//! A verdict is an enum, never a bool plus a string: the report, the exit code and the
//! baseline all branch on it, and a harness fault must never be mistaken for a target
//! failure (architecture.md, "Conventions").

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::transport::Exchange;

/// The outcome of one check on one transport.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "verdict", rename_all = "snake_case", deny_unknown_fields)]
pub enum Verdict {
    /// The target did what the rule says.
    Pass,
    /// A MUST-level rule was violated.
    Fail(Violation),
    /// Only SHOULD/MAY/REC-level rules were violated: reported, never fails the run.
    Warn(Violation),
    /// The check could not apply: the target does not offer what it needs, or the run
    /// lacked what the user's profile supplies ([`Cause`] says which).
    Unsupported {
        /// Why the check could not apply.
        reason: String,
        /// Whose side the gap is on: it decides between `n/a` and `untested` in the matrix.
        #[serde(default, skip_serializing_if = "Cause::is_target")]
        cause: Cause,
    },
    /// The check was deliberately not run.
    Skipped {
        /// Why it was skipped.
        reason: String,
    },
    /// The harness itself failed (bad vector, unresolvable placeholder, internal bug):
    /// says nothing about the target.
    HarnessError {
        /// What went wrong inside the harness.
        message: String,
    },
}

/// Why an `unsupported` check could not apply (issue 26: no pass without evidence).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Cause {
    /// The target declares it does not offer what the check needs (an optional profile,
    /// sessions, a stdio server, a declared limit other than the vector's): the rule does not
    /// apply to it, and the matrix shows `n/a`.
    #[default]
    Target,
    /// The run lacked what the user's profile supplies (a role's token or identity, a
    /// credential, the `[ssp]` table, budgets long enough for the target's answers): the
    /// rule stays `untested`, never passed.
    Profile,
}

impl Cause {
    // serde's `skip_serializing_if` hands the field by reference.
    #[expect(clippy::trivially_copy_pass_by_ref)]
    fn is_target(&self) -> bool {
        *self == Self::Target
    }
}

impl Verdict {
    /// `unsupported` because the target does not offer what the check needs (`n/a`).
    pub fn not_offered(reason: impl Into<String>) -> Self {
        Self::Unsupported {
            reason: reason.into(),
            cause: Cause::Target,
        }
    }

    /// `unsupported` because the profile lacks what the check needs (`untested`).
    pub fn untested(reason: impl Into<String>) -> Self {
        Self::Unsupported {
            reason: reason.into(),
            cause: Cause::Profile,
        }
    }

    /// Short lowercase name used in tables and JUnit.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Pass => "pass",
            Self::Fail(_) => "fail",
            Self::Warn(_) => "warn",
            Self::Unsupported { .. } => "unsupported",
            Self::Skipped { .. } => "skipped",
            Self::HarnessError { .. } => "harness_error",
        }
    }

    /// The violation, for `Fail` and `Warn`.
    pub fn violation(&self) -> Option<&Violation> {
        match self {
            Self::Fail(v) | Self::Warn(v) => Some(v),
            _ => None,
        }
    }

    /// True for `Pass`.
    pub fn is_pass(&self) -> bool {
        matches!(self, Self::Pass)
    }
}

/// What went wrong and where: enough to understand a failure without re-running it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Violation {
    /// The check (vector id, `PV-TR-1/<vector>`, scripted check id).
    pub check: String,
    /// Requirement IDs the check cites (the first is the primary one).
    pub requirements: Vec<String>,
    /// 1-based step number inside a vector, when the check is a vector.
    #[serde(default)]
    pub step: Option<usize>,
    /// JSON pointer into the observed body (empty = the whole response/status).
    pub pointer: String,
    /// What the rule demands at `pointer`.
    pub expected: Value,
    /// What the target produced at `pointer` (`null` when absent).
    pub observed: Value,
    /// One human sentence.
    pub message: String,
    /// Every request/response exchanged by the check, in order.
    #[serde(default)]
    pub transcript: Vec<Exchange>,
    /// The check ran to its end and only collected this as a warning: the rules it cites
    /// that this violation does not name were judged and held (evidence for them). `false`
    /// when it stopped here: those rules went unjudged.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub completed: bool,
}
