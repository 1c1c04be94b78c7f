//! Markdown renderer: summary, requirement matrix, and every failure with its reproduction.

use std::fmt::Write as _;

use super::renderer::{Links, RenderError, Renderer};
use super::{BaselineMark, CheckResult, Report, Reproduction};
use crate::engine::repro::compact;
use crate::engine::verdict::Verdict;

fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// Declared / executed / complete per suite.
fn completeness(o: &mut String, report: &Report) {
    let c = &report.completeness;
    let _ = writeln!(o, "## Completeness\n");
    let _ = writeln!(
        o,
        "| suite | declared | executed | untested MUST/REC | complete |"
    );
    let _ = writeln!(o, "|---|---:|---:|---:|---|");
    for s in &c.suites {
        let _ = writeln!(
            o,
            "| {} | {} | {} | {} | {} |",
            s.suite,
            s.declared,
            s.executed,
            s.untested_required,
            if s.complete { "yes" } else { "**no**" }
        );
    }
    if !c.partial.is_empty() {
        let _ = writeln!(o, "\nPartial run chosen: {}.", cell(&c.partial.join(", ")));
    }
    let _ = writeln!(o);
}

/// Failures grouped by their first violated fact: one bug, one row.
fn groups(o: &mut String, report: &Report) {
    let groups = report.failure_groups();
    if groups.is_empty() {
        return;
    }
    let _ = writeln!(o, "## Failure groups ({})\n", groups.len());
    let _ = writeln!(
        o,
        "| checks | fails the run | rules: expected, got | results |"
    );
    let _ = writeln!(o, "|---:|---|---|---|");
    for g in &groups {
        let links: Vec<String> = (g.checks.iter())
            .map(|id| format!("`{}`", cell(id)))
            .collect();
        let _ = writeln!(
            o,
            "| {} | {} | `{}` | {} |",
            g.checks.len(),
            if g.fails_run { "yes" } else { "no" },
            cell(&g.fact).replace('`', "'"),
            links.join(" ")
        );
    }
    let _ = writeln!(o);
}

/// Title and the run's metadata table.
fn header(o: &mut String, report: &Report) {
    let _ = writeln!(o, "# conform report — {}\n", cell(&report.target.name));
    let _ = writeln!(o, "| | |\n|---|---|");
    target_rows(o, report);
    run_rows(o, report);
}

/// The metadata rows about the target: URLs, server version, TLS, time scale.
fn target_rows(o: &mut String, report: &Report) {
    let t = &report.target;
    let _ = writeln!(o, "| target | `{}` |", t.base_url);
    let _ = writeln!(o, "| MCP | `{}` (revision {}) |", t.mcp_url, t.mcp_revision);
    if let Some(v) = &t.server_version {
        let _ = writeln!(o, "| server version | {} |", cell(v));
    }
    if let Some(tls) = &t.tls {
        let _ = writeln!(o, "| TLS | {} |", cell(&tls.describe()));
    }
    if !t.time_scale.is_one() {
        let _ = writeln!(
            o,
            "| time scale | ×{} (every timeout and waiting bound) |",
            t.time_scale
        );
    }
}

/// The metadata rows about the run itself: suites, transports, timing, filter, exit code.
fn run_rows(o: &mut String, report: &Report) {
    let _ = writeln!(o, "| suites | {} |", report.suites.join(", "));
    let ts: Vec<&str> = report.transports.iter().map(|t| t.as_str()).collect();
    let _ = writeln!(o, "| transports | {} |", ts.join(", "));
    let _ = writeln!(o, "| started | {} |", report.started_at);
    let _ = writeln!(
        o,
        "| wall time | {:.3} s |",
        report.wall_time_ms as f64 / 1000.0
    );
    let _ = writeln!(
        o,
        "| exchanges | {} ({:.0}/s, {} jobs) |",
        report.exchanges, report.exchanges_per_second, report.jobs
    );
    if let Some(f) = &report.filter {
        let _ = writeln!(o, "| filter | `{}` |", cell(f));
    }
    if let Some(b) = &report.baseline {
        let _ = writeln!(o, "| baseline | `{}` ({} entries) |", b.path, b.entries);
    }
    let _ = writeln!(o, "| exit code | {} |\n", report.exit_code());
}

/// Verdict counts.
fn summary(o: &mut String, report: &Report) {
    let s = &report.summary;
    let _ = writeln!(o, "## Summary\n");
    let _ = writeln!(
        o,
        "| pass | fail | warn | unsupported | skipped | harness error | expected failure | unexpected pass | total |"
    );
    let _ = writeln!(o, "|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    let _ = writeln!(
        o,
        "| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
        s.pass,
        s.fail,
        s.warn,
        s.unsupported,
        s.skipped,
        s.harness_error,
        s.expected_failure,
        s.unexpected_pass,
        s.total
    );
}

/// One row per requirement: level, status and counts.
fn requirement_matrix(o: &mut String, report: &Report) {
    let _ = writeln!(o, "## Requirement matrix\n");
    let _ = writeln!(
        o,
        "| requirement | level | status | pass | fail | warn | rule |"
    );
    let _ = writeln!(o, "|---|---|---|---:|---:|---:|---|");
    for r in &report.requirements {
        let _ = writeln!(
            o,
            "| {} | {} | {} | {} | {} | {} | {} |",
            r.id,
            r.level,
            r.status.as_str(),
            r.passed,
            r.failed,
            r.warned,
            cell(&r.rule)
        );
    }
}

/// Every result that is not a plain pass, or carries a baseline mark.
fn findings(o: &mut String, report: &Report) {
    let problems: Vec<_> = report
        .checks
        .iter()
        .filter(|c| !c.verdict.is_pass() || c.baseline.is_some())
        .collect();
    if !problems.is_empty() {
        let _ = writeln!(o, "\n## Findings\n");
    }
    for c in problems {
        finding(o, c);
    }
}

/// One finding: heading, verdict details and reproduction.
fn finding(o: &mut String, c: &CheckResult) {
    let tag = match (&c.verdict, &c.baseline) {
        (_, Some(BaselineMark::ExpectedFailure { reason })) => {
            format!("expected failure ({})", cell(reason))
        }
        (Verdict::Pass, Some(BaselineMark::UnexpectedPass { reason })) => {
            format!("unexpected pass (baseline: {})", cell(reason))
        }
        (v, _) => v.name().to_string(),
    };
    let _ = writeln!(o, "### `{}` — {}\n", c.id, tag);
    let _ = writeln!(o, "{} — {}\n", cell(&c.title), c.requirements.join(", "));
    verdict_details(o, &c.verdict);
    if let Some(r) = &c.reproduction {
        reproduction(o, r);
    }
}

/// The bullet list explaining a verdict (message, expected and observed values).
fn verdict_details(o: &mut String, verdict: &Verdict) {
    match verdict {
        Verdict::Fail(v) | Verdict::Warn(v) => {
            let step = v.step.map(|s| format!("step {s}: ")).unwrap_or_default();
            let _ = writeln!(o, "- {step}{} (at `{}`)", cell(&v.message), v.pointer);
            let _ = writeln!(
                o,
                "- expected: `{}`",
                compact(&v.expected, 500).replace('`', "'")
            );
            let _ = writeln!(
                o,
                "- observed: `{}`\n",
                compact(&v.observed, 500).replace('`', "'")
            );
        }
        Verdict::Unsupported { reason, .. } | Verdict::Skipped { reason } => {
            let _ = writeln!(o, "- {}\n", cell(reason));
        }
        Verdict::HarnessError { message } => {
            let _ = writeln!(o, "- {}\n", cell(message));
        }
        Verdict::Pass => {}
    }
}

/// The shell block reproducing a finding.
fn reproduction(o: &mut String, r: &Reproduction) {
    let _ = writeln!(o, "```sh\n{}", r.command);
    for (k, v) in &r.env {
        let _ = writeln!(o, "export {k}={v}");
    }
    for cmd in &r.curl {
        let _ = writeln!(o, "{cmd}");
    }
    let _ = writeln!(o, "```\n");
}

/// Renders the report as Markdown.
pub fn render(report: &Report) -> String {
    let mut o = String::new();
    header(&mut o, report);
    summary(&mut o, report);
    completeness(&mut o, report);
    groups(&mut o, report);
    requirement_matrix(&mut o, report);
    findings(&mut o, report);
    if let Some(p) = &report.suite_power {
        o.push_str(&super::power::render_markdown(p));
    }
    o
}

/// The md format ([`Renderer`]).
#[derive(Debug, Clone, Copy)]
pub struct Markdown;

impl Renderer for Markdown {
    fn name(&self) -> &'static str {
        "md"
    }

    fn about(&self) -> &'static str {
        "`report.md`"
    }

    fn file_name(&self) -> &'static str {
        "report.md"
    }

    fn render(&self, report: &Report, _links: Links<'_>) -> Result<String, RenderError> {
        Ok(render(report))
    }
}
