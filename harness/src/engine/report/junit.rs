//! JUnit XML renderer: one `<testsuite>` per suite, one `<testcase>` per result, so CI systems
//! show every vector × transport as its own test.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::renderer::{Links, RenderError, Renderer};
use super::{BaselineMark, CheckResult, Report};
use crate::engine::repro::compact;
use crate::engine::verdict::Verdict;

/// Escapes text for XML attributes and content.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c if (c as u32) < 0x20 && !matches!(c, '\n' | '\r' | '\t') => {
                out.push_str(&format!("&#x{:x};", c as u32));
            }
            c => out.push(c),
        }
    }
    out
}

fn case(out: &mut String, c: &CheckResult) {
    let class = format!(
        "{}.{}",
        c.suite,
        if c.area.is_empty() { "checks" } else { &c.area }
    );
    let _ = write!(
        out,
        "    <testcase classname=\"{}\" name=\"{}\" time=\"{:.3}\"",
        escape(&class),
        escape(&c.id),
        c.duration_ms as f64 / 1000.0
    );
    let body = match (&c.verdict, &c.baseline) {
        (Verdict::Pass, Some(BaselineMark::UnexpectedPass { reason })) => {
            format!(
                "      <system-out>{}</system-out>\n",
                escape(&format!("unexpected pass (baseline: {reason})"))
            )
        }
        (Verdict::Pass, _) => String::new(),
        (Verdict::Fail(v) | Verdict::Warn(v), Some(BaselineMark::ExpectedFailure { reason })) => {
            format!(
                "      <skipped message=\"{}\"/>\n",
                escape(&format!("expected failure ({reason}): {}", v.message))
            )
        }
        (Verdict::Fail(v), _) => {
            let mut detail = format!(
                "requirements: {}\nstep: {}\npointer: {}\nexpected: {}\nobserved: {}\n",
                c.requirements.join(", "),
                v.step.map(|s| s.to_string()).unwrap_or_default(),
                v.pointer,
                compact(&v.expected, 4000),
                compact(&v.observed, 4000)
            );
            if let Some(r) = &c.reproduction {
                let _ = writeln!(detail, "re-run: {}", r.command);
                for cmd in &r.curl {
                    let _ = writeln!(detail, "{cmd}");
                }
            }
            format!(
                "      <failure message=\"{}\" type=\"{}\">{}</failure>\n",
                escape(&v.message),
                escape(c.requirements.first().map(String::as_str).unwrap_or("fail")),
                escape(&detail)
            )
        }
        (Verdict::Warn(v), _) => {
            format!(
                "      <system-out>{}</system-out>\n",
                escape(&format!("warning: {} at {:?}", v.message, v.pointer))
            )
        }
        (Verdict::Unsupported { reason, .. }, _) => format!(
            "      <skipped message=\"{}\"/>\n",
            escape(&format!("unsupported: {reason}"))
        ),
        (Verdict::Skipped { reason }, _) => {
            format!("      <skipped message=\"{}\"/>\n", escape(reason))
        }
        (Verdict::HarnessError { message }, _) => {
            format!(
                "      <error message=\"{}\" type=\"harness_error\"/>\n",
                escape(message)
            )
        }
    };
    if body.is_empty() {
        out.push_str("/>\n");
    } else {
        out.push_str(">\n");
        out.push_str(&body);
        out.push_str("    </testcase>\n");
    }
}

/// Renders the report as JUnit XML.
pub fn render(report: &Report) -> String {
    let mut groups: BTreeMap<&str, Vec<&CheckResult>> = BTreeMap::new();
    for c in &report.checks {
        groups.entry(c.suite.as_str()).or_default().push(c);
    }
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let s = &report.summary;
    let _ = writeln!(
        out,
        "<testsuites name=\"conform\" tests=\"{}\" failures=\"{}\" errors=\"{}\" time=\"{:.3}\">",
        s.total,
        s.fail - s.expected_failure.min(s.fail),
        s.harness_error,
        report.wall_time_ms as f64 / 1000.0
    );
    for (suite, cs) in groups {
        let failures = cs.iter().filter(|c| c.fails_run()).count();
        let errors = cs
            .iter()
            .filter(|c| matches!(c.verdict, Verdict::HarnessError { .. }))
            .count();
        let skipped = cs
            .iter()
            .filter(|c| {
                matches!(
                    c.verdict,
                    Verdict::Unsupported { .. } | Verdict::Skipped { .. }
                ) || matches!(c.baseline, Some(BaselineMark::ExpectedFailure { .. }))
            })
            .count();
        let _ = writeln!(
            out,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"{skipped}\">",
            escape(suite),
            cs.len()
        );
        let _ = writeln!(
            out,
            "    <properties>\n      <property name=\"target\" value=\"{}\"/>\n      <property name=\"mcp_revision\" value=\"{}\"/>\n    </properties>",
            escape(&report.target.base_url),
            report.target.mcp_revision
        );
        for c in cs {
            case(&mut out, c);
        }
        out.push_str("  </testsuite>\n");
    }
    out.push_str("</testsuites>\n");
    out
}

/// The junit format ([`Renderer`]).
#[derive(Debug, Clone, Copy)]
pub struct Junit;

impl Renderer for Junit {
    fn name(&self) -> &'static str {
        "junit"
    }

    fn about(&self) -> &'static str {
        "`junit.xml` for CI test views"
    }

    fn file_name(&self) -> &'static str {
        "junit.xml"
    }

    fn render(&self, report: &Report, _links: Links<'_>) -> Result<String, RenderError> {
        Ok(render(report))
    }
}
