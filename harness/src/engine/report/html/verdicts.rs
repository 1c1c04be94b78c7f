//! The page's verdict vocabulary, shared by its sections: the kinds of verdict and their
//! words and colours, a tally of results by kind, and clipping of long text.

use crate::engine::report::{BaselineMark, CheckResult};
use crate::engine::verdict::Verdict;

/// How one result counts in the page's tallies and colours.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Pass,
    Fail,
    /// A failure the baseline lists: shown, does not fail the run.
    ExpectedFail,
    Warn,
    /// Unsupported or skipped.
    NotApplicable,
    HarnessError,
}

impl Kind {
    pub(super) fn of(c: &CheckResult) -> Self {
        match &c.verdict {
            Verdict::Pass => Self::Pass,
            Verdict::Fail(_) if !c.fails_run() => Self::ExpectedFail,
            Verdict::Fail(_) => Self::Fail,
            Verdict::Warn(_) => Self::Warn,
            Verdict::Unsupported { .. } | Verdict::Skipped { .. } => Self::NotApplicable,
            Verdict::HarnessError { .. } => Self::HarnessError,
        }
    }

    /// CSS class (also the colour key of the charts).
    pub(super) fn class(self) -> &'static str {
        match self {
            Self::Pass => "pass",
            Self::Fail => "fail",
            Self::ExpectedFail => "xfail",
            Self::Warn => "warn",
            Self::NotApplicable => "na",
            Self::HarnessError => "err",
        }
    }

    /// Words shown next to a count.
    pub(super) fn label(self) -> &'static str {
        match self {
            Self::Pass => "pass",
            Self::Fail => "fail",
            Self::ExpectedFail => "expected failure",
            Self::Warn => "warn",
            Self::NotApplicable => "n/a",
            Self::HarnessError => "harness error",
        }
    }

    /// Display order: what needs attention first.
    const ALL: [Self; 6] = [
        Self::Fail,
        Self::HarnessError,
        Self::Warn,
        Self::ExpectedFail,
        Self::Pass,
        Self::NotApplicable,
    ];
}

/// Results counted by [`Kind`]: the evidence behind an area or a requirement.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Tally(pub(super) [usize; 6]);

impl Tally {
    pub(super) fn add(&mut self, c: &CheckResult) {
        self.0[Kind::of(c) as usize] += 1;
    }

    pub(super) fn get(&self, k: Kind) -> usize {
        self.0[k as usize]
    }

    pub(super) fn total(&self) -> usize {
        self.0.iter().sum()
    }

    /// Non-zero counts in display order.
    pub(super) fn parts(&self) -> Vec<(Kind, usize)> {
        Kind::ALL
            .iter()
            .map(|&k| (k, self.get(k)))
            .filter(|&(_, n)| n > 0)
            .collect()
    }

    /// `12 pass · 1 fail` (or `no evidence`).
    pub(super) fn text(&self) -> String {
        let parts: Vec<String> = self
            .parts()
            .iter()
            .map(|(k, n)| format!("{n} {}", k.label()))
            .collect();
        if parts.is_empty() {
            "no evidence".into()
        } else {
            parts.join(" · ")
        }
    }
}

/// The verdict word of a result, with its baseline judgement.
pub(super) fn verdict_word(c: &CheckResult) -> String {
    let mut v = c.verdict.name().to_string();
    match &c.baseline {
        Some(BaselineMark::ExpectedFailure { .. }) => v.push_str(" (expected)"),
        Some(BaselineMark::UnexpectedPass { .. }) => v.push_str(" (unexpected pass)"),
        None => {}
    }
    v
}

/// Truncates text shown in a `<pre>` so one huge body cannot bloat the page; the JSON
/// report keeps it whole.
pub(super) fn clip(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        None => s.to_string(),
        Some((at, _)) => format!(
            "{}\n… ({} more bytes in report.json)",
            &s[..at],
            s.len() - at
        ),
    }
}
