//! The HTML report, written for a person (issue 15): the verdict and a picture of where the
//! target stands first, then the failures with their transcripts, then the requirement
//! matrix and every check, collapsed and grouped.
//!
//! One self-contained page: inline CSS, inline SVG charts and a small inline script for the
//! filter box; no external resource, so it works offline and as a CI artifact, and it reads
//! without JavaScript. The engine knows no protocol: areas come from requirement IDs and the
//! check grouping from check ids, never from protocol names.

mod areas;
mod charts;
mod checks;
mod failures;
mod matrix;
mod not_run;
mod power;
mod style;
mod summary;

use std::fmt::Write as _;

use super::junit::escape;
use super::renderer::{Links, RenderError, Renderer};
use super::{BaselineMark, CheckResult, Report};
use crate::engine::verdict::Verdict;

/// Renders the report as one self-contained HTML page.
pub fn render(report: &Report) -> String {
    let mut o = String::with_capacity(128 * 1024);
    let _ = write!(
        o,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
<title>conform report — {}</title><style>{}</style></head><body>\n",
        escape(&report.target.name),
        style::CSS
    );
    summary::render(&mut o, report);
    o.push_str("<main>\n");
    let areas = areas::derive(report);
    areas::render(&mut o, report, &areas);
    failures::render(&mut o, report);
    not_run::render(&mut o, report);
    charts::latency_section(&mut o, report);
    matrix::render(&mut o, report, &areas);
    checks::render(&mut o, report);
    if let Some(p) = &report.suite_power {
        power::render(&mut o, p);
    }
    let _ = write!(
        o,
        "</main>\n<script>{}</script>\n</body></html>\n",
        style::SCRIPT
    );
    o
}

/// How one result counts in the page's tallies and colours.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
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
    fn of(c: &CheckResult) -> Kind {
        match &c.verdict {
            Verdict::Pass => Kind::Pass,
            Verdict::Fail(_) if !c.fails_run() => Kind::ExpectedFail,
            Verdict::Fail(_) => Kind::Fail,
            Verdict::Warn(_) => Kind::Warn,
            Verdict::Unsupported { .. } | Verdict::Skipped { .. } => Kind::NotApplicable,
            Verdict::HarnessError { .. } => Kind::HarnessError,
        }
    }

    /// CSS class (also the colour key of the charts).
    fn class(self) -> &'static str {
        match self {
            Kind::Pass => "pass",
            Kind::Fail => "fail",
            Kind::ExpectedFail => "xfail",
            Kind::Warn => "warn",
            Kind::NotApplicable => "na",
            Kind::HarnessError => "err",
        }
    }

    /// Words shown next to a count.
    fn label(self) -> &'static str {
        match self {
            Kind::Pass => "pass",
            Kind::Fail => "fail",
            Kind::ExpectedFail => "expected failure",
            Kind::Warn => "warn",
            Kind::NotApplicable => "n/a",
            Kind::HarnessError => "harness error",
        }
    }

    /// Display order: what needs attention first.
    const ALL: [Kind; 6] = [
        Kind::Fail,
        Kind::HarnessError,
        Kind::Warn,
        Kind::ExpectedFail,
        Kind::Pass,
        Kind::NotApplicable,
    ];
}

/// Results counted by [`Kind`]: the evidence behind an area or a requirement.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Tally([usize; 6]);

impl Tally {
    fn add(&mut self, c: &CheckResult) {
        self.0[Kind::of(c) as usize] += 1;
    }

    fn get(&self, k: Kind) -> usize {
        self.0[k as usize]
    }

    fn total(&self) -> usize {
        self.0.iter().sum()
    }

    /// Non-zero counts in display order.
    fn parts(&self) -> Vec<(Kind, usize)> {
        Kind::ALL
            .iter()
            .map(|&k| (k, self.get(k)))
            .filter(|&(_, n)| n > 0)
            .collect()
    }

    /// `12 pass · 1 fail` (or `no evidence`).
    fn text(&self) -> String {
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
fn verdict_word(c: &CheckResult) -> String {
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
fn clip(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        None => s.to_string(),
        Some((at, _)) => format!(
            "{}\n… ({} more bytes in report.json)",
            &s[..at],
            s.len() - at
        ),
    }
}

/// The html format ([`Renderer`]).
#[derive(Debug, Clone, Copy)]
pub struct Html;

impl Renderer for Html {
    fn name(&self) -> &'static str {
        "html"
    }

    fn about(&self) -> &'static str {
        "`report.html`, one self-contained page"
    }

    fn file_name(&self) -> &'static str {
        "report.html"
    }

    fn render(&self, report: &Report, _links: Links<'_>) -> Result<String, RenderError> {
        Ok(render(report))
    }
}
