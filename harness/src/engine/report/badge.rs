//! Status badge: a self-contained flat SVG (shields.io style, no external fonts, images or
//! links) stating, per suite, which requirement levels passed — for a README or a CI summary.
//!
//! Per suite and level (MUST, REC, SHOULD; MAY rules are optional and not shown), from the
//! requirement matrix: `✓` when no requirement at that level failed (or, below MUST, warned)
//! and none was left untested (`n/a` counts as passed: the target does not offer the
//! feature); `✗N` when N requirements failed or warned; `?N` when none failed but N were not
//! tested in this run (a `--filter` run). The run's exit code picks the colour and, when not 0,
//! prefixes the failing check count: red for a required failure, orange for harness errors,
//! yellow for any `✗`/`?` that does not fail the run (warnings, baseline-listed failures,
//! partial runs), green otherwise.

use std::fmt::Write as _;

use super::junit::escape;
use super::renderer::{Links, RenderError, Renderer};
use super::{MatrixStatus, Report};
use crate::engine::requirements::Level;

const GREEN: &str = "#4c1";
const YELLOW: &str = "#dfb317";
const RED: &str = "#e05d44";
const ORANGE: &str = "#fe7d37";
const LABEL: &str = "conform";

/// The state of one level of one suite.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LevelState {
    /// Every requirement at the level passed (or did not apply).
    Passed,
    /// This many requirements failed (or warned, below MUST).
    Failed(usize),
    /// None failed, but this many were not tested in this run.
    Untested(usize),
}

/// Per suite (in report order), the state of each level it has requirements at.
pub fn levels(report: &Report) -> Vec<(String, Vec<(Level, LevelState)>)> {
    let mut out = Vec::new();
    for suite in &report.suites {
        let mut states = Vec::new();
        for level in [Level::Must, Level::Rec, Level::Should] {
            let rows: Vec<_> = (report.requirements.iter())
                .filter(|r| &r.suite == suite && r.level == level)
                .collect();
            if rows.is_empty() {
                continue;
            }
            let failed = (rows.iter())
                .filter(|r| matches!(r.status, MatrixStatus::Fail | MatrixStatus::Warn))
                .count();
            let untested = (rows.iter())
                .filter(|r| r.status == MatrixStatus::Untested)
                .count();
            let state = if failed > 0 {
                LevelState::Failed(failed)
            } else if untested > 0 {
                LevelState::Untested(untested)
            } else {
                LevelState::Passed
            };
            states.push((level, state));
        }
        out.push((suite.clone(), states));
    }
    out
}

/// The badge's message and colour.
pub fn message(report: &Report) -> (String, &'static str) {
    let per_suite = levels(report);
    let mut parts = Vec::new();
    let mut doubtful = false;
    for (suite, states) in &per_suite {
        let mut seg = suite.clone();
        for (level, state) in states {
            let mark = match state {
                LevelState::Passed => "✓".to_string(),
                LevelState::Failed(n) => format!("✗{n}"),
                LevelState::Untested(n) => format!("?{n}"),
            };
            doubtful |= *state != LevelState::Passed;
            let _ = write!(seg, " {level} {mark}");
        }
        parts.push(seg);
    }
    let s = &report.summary;
    let (prefix, colour) = match report.exit_code() {
        0 if doubtful => (None, YELLOW),
        0 => (None, GREEN),
        1 if s.required_failures > 0 => (Some(format!("{} failing", s.required_failures)), RED),
        // Exit 1 without a failing check: a full run left a suite incomplete, or a baseline
        // entry went stale (issue 26).
        1 if report.completeness.fails_run() => (Some("incomplete".into()), RED),
        1 => (Some("stale baseline".into()), RED),
        _ => (Some(format!("{} harness errors", s.harness_error)), ORANGE),
    };
    let mut msg = prefix.into_iter().collect::<Vec<_>>();
    msg.extend(parts);
    if msg.is_empty() {
        msg.push("no suite".into());
    }
    (msg.join(" · "), colour)
}

/// Approximate width in pixels of text in 11px Verdana (the shields.io font), enough to size
/// the two boxes without measuring glyphs.
fn text_width(s: &str) -> u32 {
    s.chars()
        .map(|c| match c {
            'i' | 'j' | 'l' | '.' | ',' | ':' | ';' | '\'' | '|' | '!' | '·' | ' ' => 4,
            'f' | 'r' | 't' | 'I' | '(' | ')' | '[' | ']' | '-' => 5,
            'm' | 'w' | 'M' | 'W' | '%' | '@' => 11,
            c if c.is_ascii_uppercase() => 8,
            c if c.is_ascii() => 7,
            // ✓ ✗ and other symbols.
            _ => 9,
        })
        .sum()
}

/// Renders the badge as one self-contained SVG document.
pub fn render(report: &Report) -> String {
    let (msg, colour) = message(report);
    let lw = text_width(LABEL) + 12;
    let mw = text_width(&msg) + 12;
    let w = lw + mw;
    let (label, text) = (escape(LABEL), escape(&msg));
    let mut o = String::new();
    let _ = writeln!(
        o,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"20\" role=\"img\" aria-label=\"{label}: {text}\">"
    );
    let _ = writeln!(o, "  <title>{label}: {text}</title>");
    let _ = writeln!(
        o,
        "  <linearGradient id=\"s\" x2=\"0\" y2=\"100%\"><stop offset=\"0\" stop-color=\"#bbb\" stop-opacity=\".1\"/><stop offset=\"1\" stop-opacity=\".1\"/></linearGradient>"
    );
    let _ = writeln!(
        o,
        "  <clipPath id=\"r\"><rect width=\"{w}\" height=\"20\" rx=\"3\" fill=\"#fff\"/></clipPath>"
    );
    let _ = writeln!(
        o,
        "  <g clip-path=\"url(#r)\"><rect width=\"{lw}\" height=\"20\" fill=\"#555\"/><rect x=\"{lw}\" width=\"{mw}\" height=\"20\" fill=\"{colour}\"/><rect width=\"{w}\" height=\"20\" fill=\"url(#s)\"/></g>"
    );
    let _ = writeln!(
        o,
        "  <g fill=\"#fff\" text-anchor=\"middle\" font-family=\"Verdana,Geneva,DejaVu Sans,sans-serif\" font-size=\"11\">"
    );
    for (x, t) in [(lw / 2, &label), (lw + mw / 2, &text)] {
        let _ = writeln!(
            o,
            "    <text x=\"{x}\" y=\"15\" fill=\"#010101\" fill-opacity=\".3\">{t}</text><text x=\"{x}\" y=\"14\">{t}</text>"
        );
    }
    o.push_str("  </g>\n</svg>\n");
    o
}

/// The badge format ([`Renderer`]).
#[derive(Debug, Clone, Copy)]
pub struct Badge;

impl Renderer for Badge {
    fn name(&self) -> &'static str {
        "badge"
    }

    fn about(&self) -> &'static str {
        "Status badge (`badge.svg`)"
    }

    fn file_name(&self) -> &'static str {
        "badge.svg"
    }

    fn render(&self, report: &Report, _links: Links<'_>) -> Result<String, RenderError> {
        Ok(render(report))
    }
}
