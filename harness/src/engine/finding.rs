//! Findings of scripted checks (any protocol): what one observation concluded, and how a
//! check's findings become its [`Verdict`].
//!
//! A scripted check runs steps that each either go on or stop with a [`Finding`]; warnings
//! may be collected on the way without stopping. The verdict rule is the same for every
//! protocol: a failure fails only when the check's cited rules include a required one.

use serde_json::Value;

use super::check::CheckOutcome;
use super::verdict::{Verdict, Violation};
use crate::transport::Exchange;

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    /// The rule is violated (a `Warn` verdict when the check's primary requirement is not a MUST).
    Fail,
    /// Reported, never fails the run (aliases, MAY-level behaviour).
    Warn,
    /// The target does not offer what the check needs (`n/a`).
    Unsupported,
    /// The profile lacks what the check needs (a role, a credential): `untested`.
    Untested,
    /// The harness itself failed.
    HarnessError,
}

/// One observation that stops (or, for warnings, annotates) a check.
#[derive(Debug, Clone)]
pub struct Finding {
    /// Severity.
    pub severity: Severity,
    /// JSON Pointer into the observed body (`""` = status/whole response).
    pub pointer: String,
    /// What the rule demands.
    pub expected: Value,
    /// What the provider did.
    pub observed: Value,
    /// One sentence.
    pub message: String,
    /// The requirement IDs this finding violates, when the step that found it knows
    /// (empty: the check's primary requirement).
    pub rules: Vec<String>,
}

impl Finding {
    fn boxed(
        severity: Severity,
        pointer: &str,
        expected: Value,
        observed: Value,
        message: String,
    ) -> Box<Self> {
        Box::new(Self {
            severity,
            pointer: pointer.into(),
            expected,
            observed,
            message,
            rules: Vec::new(),
        })
    }
    /// The same finding, naming the requirement IDs it violates.
    pub fn on(mut self: Box<Self>, rules: &[&str]) -> Box<Self> {
        self.rules = rules.iter().map(|r| (*r).to_string()).collect();
        self
    }
    /// A violation.
    pub fn fail(
        pointer: &str,
        expected: Value,
        observed: Value,
        message: impl Into<String>,
    ) -> Box<Self> {
        Self::boxed(Severity::Fail, pointer, expected, observed, message.into())
    }
    /// A warning.
    pub fn warn(
        pointer: &str,
        expected: Value,
        observed: Value,
        message: impl Into<String>,
    ) -> Box<Self> {
        Self::boxed(Severity::Warn, pointer, expected, observed, message.into())
    }
    /// The target does not offer what the check needs (it declares no such feature, skill
    /// or session): the rule does not apply to it.
    pub fn unsupported(reason: impl Into<String>) -> Box<Self> {
        Self::boxed(
            Severity::Unsupported,
            "",
            Value::Null,
            Value::Null,
            reason.into(),
        )
    }
    /// The profile lacks a role, credential or table the check needs: the rule stays untested.
    pub fn untested(reason: impl Into<String>) -> Box<Self> {
        Self::boxed(
            Severity::Untested,
            "",
            Value::Null,
            Value::Null,
            reason.into(),
        )
    }
    /// A harness fault.
    pub fn harness(message: impl Into<String>) -> Box<Self> {
        Self::boxed(
            Severity::HarnessError,
            "",
            Value::Null,
            Value::Null,
            message.into(),
        )
    }
}

/// Result of a check step.
pub type Step<T> = Result<T, Box<Finding>>;

/// The outcome of a scripted check: its [`verdict`] and the exchanges it made.
pub fn outcome(
    check: &str,
    requirements: &[String],
    must: bool,
    result: Step<()>,
    warnings: &[Box<Finding>],
    exchanges: Vec<Exchange>,
) -> CheckOutcome {
    let verdict = verdict(check, requirements, must, result, warnings, &exchanges);
    CheckOutcome {
        verdict,
        exchanges,
        steps: Vec::new(),
        unkept: 0,
    }
}

/// The verdict of a scripted check `check` citing `requirements` (`must` = one of them is
/// required) that ended with `result`, after collecting `warnings`, having made `exchanges`.
pub fn verdict(
    check: &str,
    requirements: &[String],
    must: bool,
    result: Step<()>,
    warnings: &[Box<Finding>],
    exchanges: &[Exchange],
) -> Verdict {
    // A finding names what it violated; one that cannot tell blames the check's primary
    // requirement, never every cited one (issue 26).
    let violation = |f: &Finding| Violation {
        check: check.to_owned(),
        requirements: if f.rules.is_empty() {
            requirements.iter().take(1).cloned().collect()
        } else {
            f.rules.clone()
        },
        step: None,
        pointer: f.pointer.clone(),
        expected: f.expected.clone(),
        observed: f.observed.clone(),
        message: f.message.clone(),
        transcript: exchanges.to_vec(),
        completed: false,
    };
    match result {
        // Warnings collected on the way: the check still judged everything else it cites,
        // and the violation names the rules of every warning (each one is `warn`).
        Ok(()) => match warnings.first() {
            Some(w) => {
                let mut named: Vec<String> = Vec::new();
                for r in warnings.iter().flat_map(|w| violation(w).requirements) {
                    if !named.contains(&r) {
                        named.push(r);
                    }
                }
                Verdict::Warn(Violation {
                    completed: true,
                    requirements: named,
                    ..violation(w)
                })
            }
            None => Verdict::Pass,
        },
        Err(f) => match f.severity {
            Severity::Fail if must => Verdict::Fail(violation(&f)),
            Severity::Fail | Severity::Warn => Verdict::Warn(violation(&f)),
            Severity::Unsupported => Verdict::not_offered(f.message),
            Severity::Untested => Verdict::untested(f.message),
            Severity::HarnessError => Verdict::HarnessError { message: f.message },
        },
    }
}
