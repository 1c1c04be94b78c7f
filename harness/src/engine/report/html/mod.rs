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
mod verdicts;

use std::fmt::Write as _;

use super::Report;
use super::junit::escape;
use super::renderer::{Links, RenderError, Renderer};

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
