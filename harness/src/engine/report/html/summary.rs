//! The page header: the overall verdict and what its exit code means, the counts (the
//! failure count links to the failures), the run's facts, then the sticky navigation with the
//! filter box.

use std::fmt::Write as _;

use crate::engine::report::Report;
use crate::engine::report::junit::escape;

/// Writes the `<header>`.
pub(super) fn render(o: &mut String, r: &Report) {
    let code = r.exit_code();
    let (class, word, meaning) = match code {
        0 => ("pass", "PASS", "every required check passed"),
        1 => ("fail", "FAIL", "a required check failed"),
        _ => (
            "err",
            "HARNESS ERROR",
            "the harness could not judge some checks",
        ),
    };
    let _ = write!(
        o,
        "<header>\n<h1>conform report — {}</h1>\n\
<p id=\"verdict\" class=\"verdict {class}\"><strong>{word}</strong> \
<span>exit {code}: {meaning}</span></p>\n",
        escape(&r.target.name)
    );
    counts(o, r);
    facts(o, r);
    o.push_str("</header>\n");
    o.push_str(
        "<nav aria-label=\"sections\"><a href=\"#areas\">Areas</a> · <a href=\"#failures\">Failures</a> · \
<a href=\"#latency\">Latency</a> · <a href=\"#requirements\">Requirements</a> · <a href=\"#checks\">Checks</a>\
<span id=\"filter-box\" hidden> · <label for=\"filter\">Filter</label> \
<input id=\"filter\" type=\"search\" placeholder=\"check, requirement, verdict…\" autocomplete=\"off\"> \
<output id=\"filter-count\" for=\"filter\"></output></span></nav>\n",
    );
}

/// The counts line: failures first (linked to their section), then what else is worth a look.
fn counts(o: &mut String, r: &Report) {
    let s = &r.summary;
    let fail_class = if s.required_failures > 0 {
        "fail"
    } else {
        "pass"
    };
    let _ = write!(
        o,
        "<ul class=\"counts\"><li id=\"failure-count\" class=\"{fail_class}\"><a href=\"#failures\">\
<strong>{}</strong> failed</a> ({} fail the run)</li>",
        s.fail, s.required_failures
    );
    let rest = [
        (s.harness_error, "harness error", "harness errors", "err"),
        (s.warn, "warning", "warnings", "warn"),
        (
            s.expected_failure,
            "expected failure",
            "expected failures",
            "xfail",
        ),
        (
            s.unexpected_pass,
            "unexpected pass",
            "unexpected passes",
            "warn",
        ),
        (
            s.untested_must,
            "untested required rule",
            "untested required rules",
            "warn",
        ),
        (s.pass, "passed", "passed", "pass"),
        (s.unsupported, "unsupported", "unsupported", "na"),
        (s.skipped, "skipped", "skipped", "na"),
    ];
    for (n, one, many, class) in rest {
        // Zero counts of the rarer kinds are noise; passes are always shown.
        if n > 0 || class == "pass" {
            let label = if n == 1 { one } else { many };
            // Results that judged nothing lead to the list of why (issue 26).
            let label = if class == "na" {
                format!("<a href=\"#not-run\">{label}</a>")
            } else {
                label.to_string()
            };
            let _ = write!(o, "<li class=\"{class}\"><strong>{n}</strong> {label}</li>");
        }
    }
    let _ = writeln!(
        o,
        "<li class=\"plain\">of <strong>{}</strong> results, {} requirements</li></ul>",
        s.total,
        r.requirements.len()
    );
}

/// What was tested, how and when.
fn facts(o: &mut String, r: &Report) {
    let transports: Vec<&str> = r.transports.iter().map(|t| t.as_str()).collect();
    let mut items = vec![
        (
            "target",
            format!("<code>{}</code>", escape(&r.target.base_url)),
        ),
        (
            "MCP",
            format!(
                "<code>{}</code> revision {}",
                escape(&r.target.mcp_url),
                r.target.mcp_revision
            ),
        ),
        ("suites", escape(&r.suites.join(", "))),
        ("transports", escape(&transports.join(", "))),
        (
            "server",
            escape(r.target.server_version.as_deref().unwrap_or("—")),
        ),
        ("started", escape(&r.started_at)),
        (
            "wall time",
            format!("{:.3} s", r.wall_time_ms as f64 / 1000.0),
        ),
        (
            "exchanges",
            format!(
                "{} ({:.0}/s, {} jobs)",
                r.exchanges, r.exchanges_per_second, r.jobs
            ),
        ),
    ];
    if let Some(t) = &r.target.tls {
        // An `--insecure` run must say so wherever the report is read.
        items.push(("TLS", escape(&t.describe())));
    }
    if !r.target.time_scale.is_one() {
        // A verdict reached under larger budgets says so where it is read.
        items.push((
            "time scale",
            format!("×{} (every timeout and waiting bound)", r.target.time_scale),
        ));
    }
    if let Some(f) = &r.filter {
        items.push(("filter", format!("<code>{}</code>", escape(f))));
    }
    if let Some(b) = &r.baseline {
        items.push((
            "baseline",
            format!("<code>{}</code> ({} entries)", escape(&b.path), b.entries),
        ));
    }
    o.push_str("<dl class=\"facts\">");
    for (k, v) in items {
        let _ = write!(o, "<div><dt>{k}</dt><dd>{v}</dd></div>");
    }
    o.push_str("</dl>\n");
}
