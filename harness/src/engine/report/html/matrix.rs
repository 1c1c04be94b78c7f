//! The requirement matrix, grouped by area: one collapsible row per requirement with its
//! status and evidence counts; opened, the rule's source and the results that did not pass
//! (linked to their failure). Passing evidence is counted, not listed: the filter box finds
//! those checks by requirement ID.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::areas::Area;
use super::verdicts::{Kind, Tally};
use crate::engine::report::junit::escape;
use crate::engine::report::{CheckResult, MatrixStatus, Report, RequirementRow, anchor};
use crate::engine::verdict::Verdict;

/// Writes the section.
pub(super) fn render(o: &mut String, r: &Report, areas: &[Area<'_>]) {
    let by_id = r.by_id();
    let _ = writeln!(
        o,
        "<section id=\"requirements\"><h2>Requirements ({})</h2>\n<p class=\"small\">Open a row for its \
source and the results that did not pass; type its ID in the filter to list every check citing it.</p>",
        r.requirements.len()
    );
    for a in areas {
        let _ = writeln!(
            o,
            "<h3 id=\"a-{p}\">{p} <span class=\"small\">{name} — {n} requirements</span></h3>",
            p = escape(a.prefix),
            name = escape(a.name),
            n = a.rows.len()
        );
        for row in &a.rows {
            requirement(o, row, &by_id);
        }
    }
    o.push_str("</section>\n");
}

fn requirement(o: &mut String, row: &RequirementRow, by_id: &BTreeMap<&str, &CheckResult>) {
    let cited: Vec<&CheckResult> = row
        .checks
        .iter()
        .filter_map(|id| by_id.get(id.as_str()).copied())
        .collect();
    let mut tally = Tally::default();
    for c in &cited {
        tally.add(c);
    }
    let open = matches!(row.status, MatrixStatus::Fail | MatrixStatus::Warn);
    let cls = row.status.css_class();
    let _ = write!(
        o,
        "<details class=\"req fi\" id=\"{}\"{}><summary><code>{}</code> <span class=\"lvl\">{}</span> \
<span class=\"badge {cls}\">{}</span> <span class=\"small\">{}</span><span class=\"rule\">{}</span></summary>",
        anchor(&row.id),
        if open { " open" } else { "" },
        escape(&row.id),
        row.level,
        row.status.as_str(),
        tally.text(),
        escape(&row.rule)
    );
    let _ = write!(
        o,
        "<p class=\"small\">source: {} · {} results cite it</p>",
        escape(&row.source),
        cited.len()
    );
    let not_passed: Vec<String> = cited
        .iter()
        .filter(|c| !matches!(Kind::of(c), Kind::Pass))
        .map(|c| evidence_item(c))
        .collect();
    if !not_passed.is_empty() {
        let _ = write!(o, "<ul class=\"ev-list\">{}</ul>", not_passed.join(""));
    }
    o.push_str("</details>\n");
}

/// One result that did not pass: problems link to their article in the failures section,
/// results that did not apply say why.
fn evidence_item(c: &CheckResult) -> String {
    let k = Kind::of(c);
    let what = match &c.verdict {
        Verdict::Unsupported { reason, .. } | Verdict::Skipped { reason } => {
            format!("<code>{}</code>: {}", escape(&c.id), escape(reason))
        }
        _ => format!("<a href=\"#{}\">{}</a>", c.anchor(), escape(&c.id)),
    };
    format!(
        "<li><span class=\"badge {}\">{}</span> {what}</li>",
        k.class(),
        k.label()
    )
}
