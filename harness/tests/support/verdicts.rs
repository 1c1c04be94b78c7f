//! A check's verdict as a test sees it: a one-line description for assertion messages, and
//! the judgement of a check that must pass against the reference.

use conform::engine::check::CheckOutcome;
use conform::engine::repro::curl_command;
use conform::engine::verdict::Verdict;
use libtest_mimic::Failed;

/// One line: the verdict's name and, for a violation, message, pointer, expected, observed.
pub(crate) fn describe(v: &Verdict) -> String {
    match v {
        Verdict::Fail(x) | Verdict::Warn(x) => format!(
            "{}: {} at {:?} (expected {}, observed {})",
            v.name(),
            x.message,
            x.pointer,
            x.expected,
            x.observed
        ),
        Verdict::Unsupported { reason, .. } | Verdict::Skipped { reason } => {
            format!("{}: {reason}", v.name())
        }
        Verdict::HarnessError { message } => format!("harness_error: {message}"),
        Verdict::Pass => "pass".into(),
    }
}

/// Passes only on [`Verdict::Pass`]. The reference holds every role, profile and fixture
/// skill: a check it cannot run is a silent gap, not a pass. A violation fails with its
/// requirements, step, message, pointer, expected and observed values and its transcript as
/// curl commands.
pub(crate) fn must_pass(outcome: &CheckOutcome) -> Result<(), Failed> {
    match &outcome.verdict {
        Verdict::Pass => Ok(()),
        Verdict::Unsupported { reason, .. } | Verdict::Skipped { reason } => {
            Err(format!("not run against the reference: {reason}").into())
        }
        Verdict::HarnessError { message } => Err(format!("harness error: {message}").into()),
        Verdict::Fail(v) | Verdict::Warn(v) => {
            let mut msg = format!(
                "[{}] step {:?}: {} at {:?}\n  expected: {}\n  observed: {}\n",
                v.requirements.join(", "),
                v.step,
                v.message,
                v.pointer,
                v.expected,
                v.observed
            );
            for ex in &v.transcript {
                msg.push_str(&format!(
                    "  {}\n    -> {:?} {}\n",
                    curl_command(ex),
                    ex.status,
                    ex.response_body.as_deref().unwrap_or("")
                ));
            }
            Err(msg.into())
        }
    }
}
