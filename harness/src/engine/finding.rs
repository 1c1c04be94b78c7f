//! The one failure vocabulary (issue 27 item 4): a [`Finding`] is what any kind of check
//! concluded against the target — a scripted check's step, a vector's expectation, a
//! model's postcondition, a history, a fuzz oracle, a comparison of bindings ([`Source`]) —
//! with the rule IDs it broke, and [`Finding::violation`] is the one way it becomes the
//! report's [`Violation`].
//!
//! A scripted check runs steps that each either go on or stop with a [`Finding`]; warnings
//! may be collected on the way without stopping. The verdict rule is the same for every
//! protocol: a failure fails only when the check's cited rules include a required one.

use serde_json::Value;

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

/// What kind of check found it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Source {
    /// A step of a scripted check (SSP provider, MCP layer, Parley pre-routing).
    Scripted,
    /// An expectation of a golden vector.
    Vector,
    /// A postcondition of a state-machine model.
    Model,
    /// A concurrent history no sequential order explains.
    History,
    /// A fuzz oracle (its name).
    Fuzz(&'static str),
    /// Two bindings' outcomes of one check compared.
    Comparison,
}

impl Source {
    /// The fuzz oracle's name, for a finding of one.
    pub fn oracle(self) -> Option<&'static str> {
        match self {
            Self::Fuzz(name) => Some(name),
            _ => None,
        }
    }
}

/// One observation that stops (or, for warnings, annotates) a check.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    /// Severity.
    pub severity: Severity,
    /// What found it.
    pub source: Source,
    /// 1-based step of the check where it was seen (a vector's step, a model's sequence).
    pub step: Option<usize>,
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
            source: Source::Scripted,
            step: None,
            pointer: pointer.into(),
            expected,
            observed,
            message,
            rules: Vec::new(),
        })
    }
    /// The same finding, naming the requirement IDs it violates.
    pub fn on<S: AsRef<str>>(mut self: Box<Self>, rules: &[S]) -> Box<Self> {
        self.rules = rules.iter().map(|r| r.as_ref().to_string()).collect();
        self
    }
    /// The same finding, found by `source`.
    pub fn by(mut self: Box<Self>, source: Source) -> Box<Self> {
        self.source = source;
        self
    }
    /// The same finding, seen at `step` (1-based).
    pub fn at(mut self: Box<Self>, step: usize) -> Box<Self> {
        self.step = Some(step);
        self
    }
    /// A broken rule of `rules` found by `source` (a model's postcondition, an oracle).
    pub fn broke(
        source: Source,
        rules: &[&str],
        message: impl Into<String>,
        expected: Value,
        observed: Value,
    ) -> Box<Self> {
        Self::fail("", expected, observed, message)
            .on(rules)
            .by(source)
    }
    /// What tells this finding apart from another of its source: its source and what was
    /// observed (a fuzz campaign keeps one finding per operation and this key).
    pub fn key(&self) -> (Source, String) {
        (self.source, self.observed.to_string())
    }
    /// The report's form of this finding, made by `check` citing `requirements` with the
    /// exchanges `transcript`: it names the rules the finding broke, or, when it cannot tell,
    /// the check's primary requirement — never every cited one (issue 26).
    pub fn violation(
        &self,
        check: &str,
        requirements: &[String],
        transcript: &[Exchange],
    ) -> Violation {
        Violation {
            check: check.to_owned(),
            requirements: self.blamed(requirements),
            step: self.step,
            pointer: self.pointer.clone(),
            expected: self.expected.clone(),
            observed: self.observed.clone(),
            message: self.message.clone(),
            transcript: transcript.to_vec(),
            completed: false,
        }
    }
    /// The rules this finding blames when its check cites `requirements`: the rules it
    /// names; when it names none, the check's primary requirement — but none for a model's
    /// or a history's finding, whose check cites many rules, its primary one no better a
    /// guess than another.
    pub fn blamed(&self, requirements: &[String]) -> Vec<String> {
        if !self.rules.is_empty() {
            self.rules.clone()
        } else if matches!(self.source, Source::Model | Source::History) {
            Vec::new()
        } else {
            requirements.iter().take(1).cloned().collect()
        }
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

/// The verdict of `check` (citing `requirements`; `must` = a required rule is at stake) that
/// stopped on `finding`, having made `exchanges`: [`verdict`] with no warnings, for the
/// checks that judge one finding at the end (a model's counterexample, a history, a
/// comparison, a fuzz oracle).
pub fn found(
    check: &str,
    requirements: &[String],
    must: bool,
    finding: Box<Finding>,
    exchanges: &[Exchange],
) -> Verdict {
    verdict(check, requirements, must, Err(finding), &[], exchanges)
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
    let violation = |f: &Finding| f.violation(check, requirements, exchanges);
    match result {
        // Warnings collected on the way: the check still judged everything else it cites,
        // and the violation names the rules of every warning (each one is `warn`).
        Ok(()) => match warnings.first() {
            Some(w) => {
                let mut named: Vec<String> = Vec::new();
                for r in warnings.iter().flat_map(|w| w.blamed(requirements)) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_finding_blames_its_rules_else_the_primary_one_but_a_model_none() {
        let cited = ["PV-ST-1".to_string(), "PV-ST-4".to_string()];
        let bare = || Finding::fail("", Value::Null, Value::Null, "m");
        assert_eq!(bare().on(&["PV-ID-2"]).blamed(&cited), ["PV-ID-2"]);
        assert_eq!(
            bare().blamed(&cited),
            ["PV-ST-1"],
            "a scripted check's primary rule"
        );
        for source in [Source::Model, Source::History] {
            assert!(bare().by(source).blamed(&cited).is_empty(), "{source:?}");
        }
        assert_eq!(bare().by(Source::Vector).blamed(&cited), ["PV-ST-1"]);
    }
}
