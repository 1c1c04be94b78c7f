//! Every result, collapsed by default: one table per suite and check area, one row per
//! check, one column per binding it ran on.
//!
//! A result without a binding whose id is `<prefix>/<other check id>` (a comparison of that
//! check across bindings) joins the other check's row in a `<prefix>` column: the grouping is
//! read from the ids, not from protocol knowledge. A row costs one title and one verdict word
//! per column, which keeps a suite of thousands of results in a page of a few hundred KB;
//! for the same reason the rows use HTML's optional end tags (`</td>`, `</tr>`) and
//! unquoted class names.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use super::verdicts::{Kind, Tally};
use crate::engine::report::junit::escape;
use crate::engine::report::{CheckResult, Report};
use crate::engine::verdict::Verdict;

/// One check's results across bindings.
struct Row<'a> {
    key: &'a str,
    /// The result the row's title, suite and area come from.
    head: &'a CheckResult,
    cells: Vec<(String, &'a CheckResult)>,
}

/// Rows in plan order, and the column labels (bindings first, as the run listed them).
fn rows(r: &Report) -> (Vec<Row<'_>>, Vec<String>) {
    let ids: BTreeSet<&str> = r.checks.iter().map(|c| c.check.as_str()).collect();
    let mut columns: Vec<String> = r.transports.iter().map(|t| t.as_str().into()).collect();
    let mut rows: Vec<Row<'_>> = Vec::new();
    let mut index: BTreeMap<&str, usize> = BTreeMap::new();
    for c in &r.checks {
        let (mut key, col) = match c.transport {
            Some(t) => (c.check.as_str(), t.as_str().to_string()),
            None => match c.check.split_once('/') {
                Some((p, rest)) if ids.contains(rest) => (rest, p.to_string()),
                _ => (c.check.as_str(), "result".to_string()),
            },
        };
        // A cell already taken (two results claiming one check and column) never hides a
        // result: the second gets a row of its own.
        let taken = |k: &str| {
            index
                .get(k)
                .is_some_and(|&i| rows[i].cells.iter().any(|(c, _)| *c == col))
        };
        if taken(key) {
            key = c.id.as_str();
        }
        if !columns.contains(&col) {
            columns.push(col.clone());
        }
        let i = *index.entry(key).or_insert_with(|| {
            rows.push(Row {
                key,
                head: c,
                cells: Vec::new(),
            });
            rows.len() - 1
        });
        if c.check == key && rows[i].head.check != key {
            rows[i].head = c;
        }
        rows[i].cells.push((col, c));
    }
    (rows, columns)
}

/// Writes the section.
pub(super) fn render(o: &mut String, r: &Report) {
    let (rows, columns) = rows(r);
    let mut groups: Vec<((&str, &str), Vec<&Row<'_>>)> = Vec::new();
    for row in &rows {
        let g = (row.head.suite.as_str(), row.head.area.as_str());
        match groups.iter_mut().find(|(k, _)| *k == g) {
            Some((_, v)) => v.push(row),
            None => groups.push((g, vec![row])),
        }
    }
    let _ = writeln!(
        o,
        "<section id=\"checks\"><h2>Checks ({} checks, {} results)</h2>\n<p class=\"small\">Grouped by \
suite and area; groups with a problem start open. Columns are the bindings a check ran on (and \
comparisons across them); ms is the slowest of the row's results.</p>",
        rows.len(),
        r.checks.len()
    );
    for ((suite, area), group) in &groups {
        render_group(o, suite, area, group, &columns);
    }
    o.push_str("</section>\n");
}

fn render_group(o: &mut String, suite: &str, area: &str, group: &[&Row<'_>], columns: &[String]) {
    let mut tally = Tally::default();
    for row in group {
        for (_, c) in &row.cells {
            tally.add(c);
        }
    }
    let used: Vec<&String> = columns
        .iter()
        .filter(|col| group.iter().any(|r| r.cells.iter().any(|(c, _)| c == *col)))
        .collect();
    let open = tally.total() > tally.get(Kind::Pass) + tally.get(Kind::NotApplicable);
    let _ = write!(
        o,
        "<details class=\"grp\"{}><summary><h3>{} · {} <span class=\"small\">{} checks · {}</span></h3></summary>\
<table class=\"checks\"><thead><tr><th scope=\"col\">check</th><th scope=\"col\">requirements</th>",
        if open { " open" } else { "" },
        escape(suite),
        escape(area),
        group.len(),
        tally.text()
    );
    for col in &used {
        let _ = write!(o, "<th scope=\"col\">{}</th>", escape(col));
    }
    o.push_str("<th scope=\"col\">ms</th></tr></thead><tbody>\n");
    for row in group {
        render_row(o, row, &used);
    }
    o.push_str("</tbody></table></details>\n");
}

fn render_row(o: &mut String, row: &Row<'_>, columns: &[&String]) {
    let reqs: BTreeSet<&str> = row
        .cells
        .iter()
        .flat_map(|(_, c)| c.requirements.iter().map(String::as_str))
        .collect();
    let reqs: Vec<&str> = reqs.into_iter().collect();
    let _ = write!(
        o,
        // `<p>` rather than `<br><small>…</small>`: its end tag is implied by the next cell,
        // and 852 rows × 16 bytes kept the full suite's page over its 300 KB budget.
        "<tr><td>{}<p>{}<td>{}",
        escape(row.key),
        escape(&row.head.title),
        escape(&reqs.join(" "))
    );
    for col in columns {
        match row.cells.iter().find(|(c, _)| c == *col) {
            Some((_, c)) => cell(o, c),
            None => o.push_str("<td>"),
        }
    }
    let ms = row
        .cells
        .iter()
        .map(|(_, c)| c.duration_ms)
        .max()
        .unwrap_or(0);
    let _ = writeln!(o, "<td>{ms}");
}

/// One verdict: problems link to their failure article, n/a says why on hover.
fn cell(o: &mut String, c: &CheckResult) {
    let k = Kind::of(c);
    match (&c.verdict, k) {
        (_, Kind::Pass) => {
            let _ = write!(
                o,
                // `p`, not `pass`: the commonest cell of the page, one per passing result.
                "<td class=p>{}",
                escape(&super::verdicts::verdict_word(c))
            );
        }
        (Verdict::Unsupported { reason, .. } | Verdict::Skipped { reason }, _) => {
            let _ = write!(
                o,
                "<td class=na title=\"{}\">{}",
                escape(reason),
                c.verdict.name()
            );
        }
        _ => {
            let _ = write!(
                o,
                "<td class={}><a href=\"#{}\">{}</a>",
                k.class(),
                c.anchor(),
                escape(&super::verdicts::verdict_word(c))
            );
        }
    }
}
