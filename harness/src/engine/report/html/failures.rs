//! The failures section: every result that is not a pass (nor merely not applicable), the
//! ones failing the run first — an index of one line each, then one article each with what
//! was expected and what came back, how to reproduce it, and its full transcript.

use std::fmt::Write as _;

use super::verdicts::{Kind, clip, verdict_word};
use crate::engine::report::junit::escape;
use crate::engine::report::{CheckResult, Report, Reproduction, anchor};
use crate::engine::verdict::{Verdict, Violation};
use crate::transport::Exchange;

/// Longest body or JSON value shown in full (characters); the JSON report keeps everything.
const MAX_TEXT: usize = 6000;
/// The first failures show their reproduction and transcript open; the rest stay one click
/// away (the index above them lists every one).
const OPEN_TRANSCRIPTS: usize = 3;

/// Where a kind of problem sorts: what fails the run first.
fn rank(k: Kind) -> Option<u8> {
    match k {
        Kind::Fail => Some(0),
        Kind::HarnessError => Some(1),
        Kind::Warn => Some(2),
        Kind::ExpectedFail => Some(3),
        Kind::Pass | Kind::NotApplicable => None,
    }
}

/// Writes the section.
pub(super) fn render(o: &mut String, r: &Report) {
    let mut problems: Vec<(u8, &CheckResult)> = r
        .checks
        .iter()
        .filter_map(|c| rank(Kind::of(c)).map(|k| (k, c)))
        .collect();
    // Stable: plan order within a rank.
    problems.sort_by_key(|&(k, _)| k);
    let _ = writeln!(
        o,
        "<section id=\"failures\"><h2>Failures, harness errors and warnings ({})</h2>",
        problems.len()
    );
    if problems.is_empty() {
        o.push_str("<p class=\"ok\">Nothing failed, warned or went wrong in the harness.</p>");
    }
    groups(o, r);
    if problems.len() > 1 {
        index(o, &problems);
    }
    for (i, (_, c)) in problems.iter().enumerate() {
        article(o, c, i < OPEN_TRANSCRIPTS);
    }
    o.push_str("</section>\n");
}

/// Failures grouped by their first violated fact (issue 26): one bug reads as one row,
/// with its count and links to every result it explains.
fn groups(o: &mut String, r: &Report) {
    let groups = r.failure_groups();
    if groups.is_empty() {
        return;
    }
    let _ = writeln!(
        o,
        "<h3 id=\"groups\">Failure groups ({}) — one row per expected fact (one bug, many checks)</h3>\
<table class=\"groups\"><thead><tr><th scope=\"col\">checks</th><th scope=\"col\">rules: expected, got</th>\
<th scope=\"col\">results</th></tr></thead><tbody>",
        groups.len()
    );
    for g in &groups {
        let links: Vec<String> = (g.checks.iter())
            .map(|id| format!("<a href=\"#{}\">{}</a>", anchor(id), escape(id)))
            .collect();
        let _ = writeln!(
            o,
            "<tr class=\"{}\"><td>{}<td><code>{}</code><td>{}",
            if g.fails_run { "fail" } else { "warn" },
            g.checks.len(),
            escape(&g.fact),
            links.join(" ")
        );
    }
    o.push_str("</tbody></table>\n");
}

/// One line per problem, linked to its article: the whole list before the details.
fn index(o: &mut String, problems: &[(u8, &CheckResult)]) {
    o.push_str(
        "<table class=\"index\"><thead><tr><th scope=\"col\">verdict</th><th scope=\"col\">check</th>\
<th scope=\"col\">requirements</th><th scope=\"col\">what went wrong</th></tr></thead><tbody>\n",
    );
    for (_, c) in problems {
        let what = match &c.verdict {
            Verdict::Fail(v) | Verdict::Warn(v) => v.message.as_str(),
            Verdict::HarnessError { message } => message.as_str(),
            Verdict::Pass | Verdict::Unsupported { .. } | Verdict::Skipped { .. } => "",
        };
        let _ = writeln!(
            o,
            "<tr class=\"fi\"><td class={}>{}<td><a href=\"#{}\">{}</a><td>{}<td>{}",
            Kind::of(c).class(),
            escape(&verdict_word(c)),
            c.anchor(),
            escape(&c.id),
            escape(&c.requirements.join(" ")),
            escape(&clip(what, 300))
        );
    }
    o.push_str("</tbody></table>\n");
}

fn article(o: &mut String, c: &CheckResult, open: bool) {
    let kind = Kind::of(c);
    // The rules the failure violated (a model's counterexample names one or two of the many
    // it exercises), not every rule the check cites (issue 26).
    let shown = c.violated().unwrap_or(&c.requirements);
    let mut reqs: Vec<String> = shown
        .iter()
        .map(|id| format!("<a href=\"#{}\">{}</a>", anchor(id), escape(id)))
        .collect();
    if shown.len() < c.requirements.len() || shown.iter().any(|id| !c.requirements.contains(id)) {
        reqs.push(format!(
            "<span class=\"muted\">(violated; the check cites {} rules)</span>",
            c.requirements.len()
        ));
    }
    let _ = write!(
        o,
        "<article class=\"failure fi {cls}\" id=\"{id}\"><h3><span class=\"badge {cls}\">{word}</span> \
<code>{cid}</code></h3><p>{title} — {reqs}{req}</p>",
        cls = kind.class(),
        id = c.anchor(),
        word = escape(&verdict_word(c)),
        cid = escape(&c.id),
        title = escape(&c.title),
        reqs = reqs.join(", "),
        req = if c.required { "" } else { " (not required)" }
    );
    match &c.verdict {
        Verdict::Fail(v) | Verdict::Warn(v) => {
            violation(o, v);
            if let Some(rep) = &c.reproduction {
                reproduction(o, rep, open);
            }
            transcript(o, &v.transcript, open);
        }
        Verdict::HarnessError { message } => {
            let _ = write!(o, "<p class=\"msg\">{}</p>", escape(message));
        }
        Verdict::Pass | Verdict::Unsupported { .. } | Verdict::Skipped { .. } => {}
    }
    o.push_str("</article>\n");
}

/// The message, then expected and observed side by side.
fn violation(o: &mut String, v: &Violation) {
    let step = v.step.map(|s| format!("step {s}: ")).unwrap_or_default();
    let at = if v.pointer.is_empty() {
        String::new()
    } else {
        format!(" at <code>{}</code>", escape(&v.pointer))
    };
    let _ = write!(
        o,
        "<p class=\"msg\">{}{}{at}</p><div class=\"vs\"><div><h4>expected</h4><pre>{}</pre></div>\
<div><h4>got</h4><pre>{}</pre></div></div>",
        escape(&step),
        escape(&v.message),
        escape(&clip(&pretty(&v.expected), MAX_TEXT)),
        escape(&clip(&pretty(&v.observed), MAX_TEXT))
    );
}

fn pretty(v: &serde_json::Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_else(|_| v.to_string())
}

fn reproduction(o: &mut String, r: &Reproduction, open: bool) {
    let mut sh = format!("{}\n", r.command);
    for (k, val) in &r.env {
        let _ = writeln!(sh, "export {k}={val}");
    }
    for cmd in &r.curl {
        let _ = writeln!(sh, "{cmd}");
    }
    let _ = write!(
        o,
        "<details class=\"repro\"{}><summary>reproduce</summary><pre>{}</pre></details>",
        if open { " open" } else { "" },
        escape(&clip(&sh, MAX_TEXT))
    );
}

fn transcript(o: &mut String, exchanges: &[Exchange], open: bool) {
    if exchanges.is_empty() {
        return;
    }
    let _ = write!(
        o,
        "<details class=\"transcript\"{}><summary>transcript ({} exchanges)</summary><ol>",
        if open { " open" } else { "" },
        exchanges.len()
    );
    for ex in exchanges {
        exchange(o, ex);
    }
    o.push_str("</ol></details>");
}

fn exchange(o: &mut String, ex: &Exchange) {
    let outcome = match ex.status {
        Some(st) => st.to_string(),
        None => format!("no response: {}", ex.error.as_deref().unwrap_or("")),
    };
    let _ = write!(
        o,
        "<li><p><code>{} {}</code> → <strong>{}</strong> <span class=\"small\">{} · {:.1} ms</span></p>",
        escape(&ex.method),
        escape(&ex.url),
        escape(&outcome),
        ex.transport.as_str(),
        ex.elapsed_us as f64 / 1000.0
    );
    let mut req = String::new();
    for (k, v) in &ex.request_headers {
        let _ = writeln!(req, "{k}: {v}");
    }
    if let Some(b) = &ex.request_body {
        let _ = write!(req, "\n{}", body(b));
    }
    let mut resp = String::new();
    for (k, v) in &ex.response_headers {
        let _ = writeln!(resp, "{k}: {v}");
    }
    if let Some(b) = &ex.response_body {
        let _ = write!(resp, "\n{}", body(b));
    }
    let _ = write!(
        o,
        "<div class=\"vs\"><div><h4>request</h4><pre>{}</pre></div><div><h4>response</h4><pre>{}</pre></div></div></li>",
        escape(&clip(&req, MAX_TEXT)),
        escape(&clip(&resp, MAX_TEXT))
    );
}

/// A body as a person reads it: JSON pretty-printed, anything else as recorded.
fn body(b: &str) -> String {
    serde_json::from_str::<serde_json::Value>(b)
        .ok()
        .filter(|v| v.is_object() || v.is_array())
        .map(|v| pretty(&v))
        .unwrap_or_else(|| b.to_string())
}
