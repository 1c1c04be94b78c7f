//! Single-file HTML renderer (no external assets): summary, requirement matrix with links to
//! the evidence, every result, and the transcripts of failures.

use std::fmt::Write as _;

use super::junit::escape;
use super::{BaselineMark, Report, anchor, compact};
use crate::engine::verdict::Verdict;

const STYLE: &str = "body{font:14px/1.45 system-ui,sans-serif;margin:2em;color:#222}\
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:3px 7px;vertical-align:top}\
th{background:#f3f3f3;text-align:left}.pass{background:#e3f6e3}.fail{background:#fadede}.warn{background:#fff3cd}\
.na{background:#eee}.untested{background:#f6e3f6}.err{background:#ffd0a8}pre{background:#f7f7f7;padding:.6em;\
overflow-x:auto;white-space:pre-wrap;word-break:break-all}code{font-size:12px}a{color:#0645ad}\
details{margin:.3em 0}.small{font-size:12px;color:#555}";

fn class(v: &str) -> &'static str {
    match v {
        "pass" => "pass",
        "fail" => "fail",
        "warn" => "warn",
        "n/a" | "unsupported" | "skipped" => "na",
        "untested" => "untested",
        _ => "err",
    }
}

/// Renders the report as one self-contained HTML page.
pub fn render(report: &Report) -> String {
    let mut o = String::new();
    let s = &report.summary;
    let _ = write!(
        o,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>conform report — {}</title><style>{STYLE}</style></head><body>\n",
        escape(&report.target.name)
    );
    let _ = writeln!(
        o,
        "<h1>conform report — {}</h1>",
        escape(&report.target.name)
    );
    let verdict = match report.exit_code() {
        0 => "<span class=\"pass\">PASS</span>",
        1 => "<span class=\"fail\">FAIL</span>",
        _ => "<span class=\"err\">HARNESS ERROR</span>",
    };
    let ts: Vec<&str> = report.transports.iter().map(|t| t.as_str()).collect();
    let _ = writeln!(
        o,
        "<table><tr><th>verdict</th><td>{verdict} (exit {})</td></tr><tr><th>target</th><td><code>{}</code></td></tr>\
<tr><th>MCP</th><td><code>{}</code> revision {}</td></tr><tr><th>server version</th><td>{}</td></tr>\
<tr><th>suites</th><td>{}</td></tr><tr><th>transports</th><td>{}</td></tr><tr><th>started</th><td>{}</td></tr>\
<tr><th>wall time</th><td>{:.3} s</td></tr><tr><th>exchanges</th><td>{} ({:.0}/s, {} jobs)</td></tr>{}</table>",
        report.exit_code(),
        escape(&report.target.base_url),
        escape(&report.target.mcp_url),
        report.target.mcp_revision,
        escape(report.target.server_version.as_deref().unwrap_or("—")),
        escape(&report.suites.join(", ")),
        ts.join(", "),
        escape(&report.started_at),
        report.wall_time_ms as f64 / 1000.0,
        report.exchanges,
        report.exchanges_per_second,
        report.jobs,
        report
            .target
            .tls
            .as_ref()
            .map_or(String::new(), |t| format!(
                "<tr><th>TLS</th><td>{}</td></tr>",
                escape(&t.describe())
            ))
    );
    let _ = writeln!(
        o,
        "<h2>Summary</h2><table><tr><th>pass</th><th>fail</th><th>warn</th><th>unsupported</th><th>skipped</th><th>harness error</th><th>expected failure</th><th>unexpected pass</th><th>total</th></tr>\
<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr></table>",
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
    let _ = writeln!(o, "<h2 id=\"matrix\">Requirement matrix</h2>");
    let _ = writeln!(
        o,
        "<table><tr><th>requirement</th><th>level</th><th>status</th><th>rule</th><th>evidence</th></tr>"
    );
    for r in &report.requirements {
        let links: Vec<String> = r
            .checks
            .iter()
            .map(|c| format!("<a href=\"#{}\">{}</a>", anchor(c), escape(c)))
            .collect();
        let _ = writeln!(
            o,
            "<tr id=\"{}\"><td>{}</td><td>{}</td><td class=\"{}\">{}</td><td>{}<div class=\"small\">{}</div></td><td class=\"small\">{}</td></tr>",
            anchor(&r.id),
            escape(&r.id),
            r.level,
            class(r.status.as_str()),
            r.status.as_str(),
            escape(&r.rule),
            escape(&r.source),
            links.join(" ")
        );
    }
    o.push_str("</table>\n<h2 id=\"checks\">Checks</h2>\n<table><tr><th>check</th><th>verdict</th><th>requirements</th><th>title</th><th>ms</th></tr>\n");
    for c in &report.checks {
        let mut v = c.verdict.name().to_string();
        match &c.baseline {
            Some(BaselineMark::ExpectedFailure { .. }) => v.push_str(" (expected)"),
            Some(BaselineMark::UnexpectedPass { .. }) => v.push_str(" (unexpected pass)"),
            None => {}
        }
        let reqs: Vec<String> = c
            .requirements
            .iter()
            .map(|r| format!("<a href=\"#{}\">{}</a>", anchor(r), escape(r)))
            .collect();
        let _ = writeln!(
            o,
            "<tr id=\"{}\"><td><code>{}</code></td><td class=\"{}\">{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            c.anchor(),
            escape(&c.id),
            class(c.verdict.name()),
            escape(&v),
            reqs.join(" "),
            escape(&c.title),
            c.duration_ms
        );
        if let Some(detail) = details(c) {
            let _ = writeln!(o, "<tr><td colspan=\"5\">{detail}</td></tr>");
        }
    }
    o.push_str("</table>\n");
    if let Some(p) = &report.suite_power {
        suite_power(&mut o, p);
    }
    o.push_str("</body></html>\n");
    o
}

/// The "suite power" section (issue 6): every seeded fault and whether a check citing one of
/// its requirement IDs failed, then per requirement whether some fault for it is caught.
fn suite_power(o: &mut String, p: &super::power::SuitePower) {
    let _ = writeln!(
        o,
        "<h2 id=\"suite-power\">Suite power</h2><p>{} of {} seeded faults caught on their own requirement IDs ({} as warnings on rules below MUST); caught elsewhere: {}; missed: {}; harness errors: {}.</p>",
        p.caught + p.caught_as_warning,
        p.total,
        p.caught_as_warning,
        p.caught_elsewhere,
        p.missed,
        p.harness_errors
    );
    o.push_str("<table><tr><th>fault</th><th>suite</th><th>violates</th><th>result</th><th>failing checks on its IDs</th></tr>\n");
    for f in &p.faults {
        let by: Vec<String> = f
            .caught_by
            .iter()
            .chain(&f.warned_by)
            .map(|c| format!("<a href=\"#{}\">{}</a>", anchor(&c.id), escape(&c.id)))
            .collect();
        let _ = writeln!(
            o,
            "<tr><td><code>{}</code><br><span class=\"small\">{}</span></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(&f.name),
            escape(&f.description),
            escape(&f.suite),
            escape(&f.requirements.join(", ")),
            f.detection.name(),
            by.join(" ")
        );
    }
    o.push_str("</table>\n<table><tr><th>requirement</th><th>faults</th><th>caught</th></tr>\n");
    for r in &p.requirements {
        let status = match r.status {
            super::power::RequirementPowerStatus::Caught => "caught",
            super::power::RequirementPowerStatus::NotCaught => "NOT caught",
            super::power::RequirementPowerStatus::NoFault => "no fault yet",
        };
        let _ = writeln!(
            o,
            "<tr><td>{}</td><td>{}</td><td>{status}</td></tr>",
            escape(&r.id),
            escape(&r.faults.join(", "))
        );
    }
    o.push_str("</table>\n");
    if let Some(v) = &p.variants {
        variants(o, v);
    }
}

/// The legal-variants section (issue 14): every variant, the sentence allowing it, and the
/// false failures it drew (none, when the suite is right).
fn variants(o: &mut String, v: &super::power::VariantsAccepted) {
    let _ = writeln!(
        o,
        "<h2 id=\"variants\">Legal variants accepted</h2><p>{} of {} legal variants accepted with no failure.</p>",
        v.accepted, v.total
    );
    o.push_str(
        "<table><tr><th>variant</th><th>suite</th><th>result</th><th>allowed by</th></tr>\n",
    );
    for r in &v.variants {
        let result = if r.is_accepted() {
            "accepted".to_string()
        } else {
            let ids: Vec<String> = r.failures.iter().map(|f| escape(&f.id)).collect();
            format!(
                "NOT accepted: {} {}",
                escape(r.error.as_deref().unwrap_or("")),
                ids.join(" ")
            )
        };
        let _ = writeln!(
            o,
            "<tr><td><code>{}</code><br><span class=\"small\">{}</span></td><td>{}</td><td>{result}</td><td>{}</td></tr>",
            escape(&r.name),
            escape(&r.description),
            escape(&r.suite),
            escape(&r.allowed_by)
        );
    }
    o.push_str("</table>\n");
}

fn details(c: &super::CheckResult) -> Option<String> {
    let mut d = String::new();
    match &c.verdict {
        Verdict::Fail(v) | Verdict::Warn(v) => {
            let step = v.step.map(|s| format!("step {s}: ")).unwrap_or_default();
            let _ = write!(
                d,
                "<p>{}{} at <code>{}</code></p><p>expected <code>{}</code><br>observed <code>{}</code></p>",
                step,
                escape(&v.message),
                escape(&v.pointer),
                escape(&compact(&v.expected, 2000)),
                escape(&compact(&v.observed, 2000))
            );
            if let Some(r) = &c.reproduction {
                let mut sh = format!("{}\n", r.command);
                for (k, val) in &r.env {
                    let _ = writeln!(sh, "export {k}={val}");
                }
                for cmd in &r.curl {
                    let _ = writeln!(sh, "{cmd}");
                }
                let _ = write!(
                    d,
                    "<details><summary>reproduce</summary><pre>{}</pre></details>",
                    escape(&sh)
                );
            }
            if !v.transcript.is_empty() {
                let mut t = String::new();
                for ex in &v.transcript {
                    let _ = writeln!(t, "{} {}", ex.method, ex.url);
                    for (k, val) in &ex.request_headers {
                        let _ = writeln!(t, "{k}: {val}");
                    }
                    if let Some(b) = &ex.request_body {
                        let _ = writeln!(t, "\n{b}");
                    }
                    match ex.status {
                        Some(st) => {
                            let _ = writeln!(t, "\n→ {st}");
                        }
                        None => {
                            let _ = writeln!(
                                t,
                                "\n→ no response: {}",
                                ex.error.as_deref().unwrap_or("")
                            );
                        }
                    }
                    for (k, val) in &ex.response_headers {
                        let _ = writeln!(t, "{k}: {val}");
                    }
                    if let Some(b) = &ex.response_body {
                        let _ = writeln!(t, "\n{b}");
                    }
                    t.push_str("\n────────\n");
                }
                let _ = write!(
                    d,
                    "<details><summary>transcript ({} exchanges)</summary><pre>{}</pre></details>",
                    v.transcript.len(),
                    escape(&t)
                );
            }
        }
        Verdict::Unsupported { reason } | Verdict::Skipped { reason } => {
            let _ = write!(d, "<span class=\"small\">{}</span>", escape(reason));
        }
        Verdict::HarnessError { message } => {
            let _ = write!(d, "<span class=\"small\">{}</span>", escape(message));
        }
        Verdict::Pass => {
            if let Some(BaselineMark::UnexpectedPass { reason }) = &c.baseline {
                let _ = write!(
                    d,
                    "<span class=\"small\">listed in the baseline ({}) but passed</span>",
                    escape(reason)
                );
            }
        }
    }
    (!d.is_empty()).then_some(d)
}
