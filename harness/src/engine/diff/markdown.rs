//! The diff as Markdown for a pull-request comment: verdict, counts side by side, notes on
//! comparability, then one table per kind of change, regressions first. Tables are capped at
//! `max_rows` rows so that a comment stays under the forges' size limits.

use std::fmt::Write as _;

use super::{Change, Diff, Kind, RequirementChange};
use crate::engine::report::{MatrixStatus, Report};

fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

fn status(s: Option<MatrixStatus>) -> &'static str {
    s.map_or("absent", MatrixStatus::as_str)
}

/// Renders `d`.
pub(super) fn render(d: &Diff<'_>) -> String {
    let mut o = String::new();
    let verdict = if d.regressed() {
        "**regression** (exit 1)"
    } else {
        "no regression (exit 0)"
    };
    let _ = writeln!(o, "## conform diff: {verdict}\n");
    counts(&mut o, d);
    if !d.notes.is_empty() {
        let _ = writeln!(o, "**Notes**\n");
        for n in &d.notes {
            let _ = writeln!(o, "- {n}");
        }
        let _ = writeln!(o);
    }
    let warn_regresses = if d.opts.fail_on_warn {
        " — regressions (`--fail-on-warn`)"
    } else {
        ""
    };
    let sections: [(Kind, String); 8] = [
        (Kind::NewFailure, "New failures — regressions".into()),
        (Kind::NewWarning, format!("New warnings{warn_regresses}")),
        (Kind::Fixed, "Fixed".into()),
        (Kind::Baselined, "Now expected by the baseline".into()),
        (
            Kind::CoverageLost,
            "Coverage lost (now unsupported or skipped)".into(),
        ),
        (Kind::CoverageGained, "Coverage gained".into()),
        (
            Kind::HarnessError,
            "New harness errors (judge nothing; NEW exits 2)".into(),
        ),
        (Kind::Other, "Other verdict changes".into()),
    ];
    new_failure_groups(&mut o, d);
    for (kind, title) in &sections[..1] {
        change_table(&mut o, d, title, d.of(*kind));
    }
    let degraded: Vec<&RequirementChange> = d.degraded().collect();
    requirement_table(&mut o, d, "Requirements degraded — regressions", &degraded);
    latency_table(&mut o, d);
    for (kind, title) in &sections[1..] {
        change_table(&mut o, d, title, d.of(*kind));
    }
    change_table(&mut o, d, "Results added", &d.added);
    change_table(&mut o, d, "Results removed", &d.removed);
    let all: Vec<&RequirementChange> = d.requirements.iter().collect();
    requirement_table(&mut o, d, "Requirement status changes", &all);
    if d.changes.is_empty() && d.added.is_empty() && d.removed.is_empty() {
        let _ = writeln!(o, "No result changed its verdict.");
    }
    o
}

/// The header: the two reports and their counts side by side.
fn counts(o: &mut String, d: &Diff<'_>) {
    let (on, or) = d.old;
    let (nn, nr) = d.new;
    let who = |r: &Report| {
        format!(
            "conform {}, target {}, started {}",
            r.tool.version,
            cell(&r.target.name),
            r.started_at
        )
    };
    let _ = writeln!(o, "- OLD `{}`: {}", cell(on), who(or));
    let _ = writeln!(o, "- NEW `{}`: {}\n", cell(nn), who(nr));
    let _ = writeln!(o, "| | OLD | NEW | change |\n|---|---:|---:|---:|");
    let (a, b) = (&or.summary, &nr.summary);
    for (name, x, y) in [
        ("results", a.total, b.total),
        ("pass", a.pass, b.pass),
        ("fail", a.fail, b.fail),
        ("warn", a.warn, b.warn),
        ("unsupported", a.unsupported, b.unsupported),
        ("skipped", a.skipped, b.skipped),
        ("harness_error", a.harness_error, b.harness_error),
        ("expected_failure", a.expected_failure, b.expected_failure),
        (
            "required failures",
            a.required_failures,
            b.required_failures,
        ),
        ("untested MUST", a.untested_must, b.untested_must),
    ] {
        let _ = writeln!(o, "| {name} | {x} | {y} | {:+} |", y as i64 - x as i64);
    }
    let secs = |r: &Report| r.wall_time_ms as f64 / 1000.0;
    let _ = writeln!(
        o,
        "| wall time | {:.1} s | {:.1} s | {:+.1} s |\n",
        secs(or),
        secs(nr),
        secs(nr) - secs(or)
    );
}

/// The first `max_rows` rows (all when 0) and how many are left out.
fn capped<'a, T>(d: &Diff<'_>, rows: &'a [T]) -> (&'a [T], usize) {
    let max = d.opts.max_rows;
    if max == 0 || rows.len() <= max {
        (rows, 0)
    } else {
        (&rows[..max], rows.len() - max)
    }
}

fn more(o: &mut String, hidden: usize) {
    if hidden > 0 {
        let _ = writeln!(o, "\n… and {hidden} more (`--max-rows 0` lists all).");
    }
    let _ = writeln!(o);
}

/// The new failures grouped by their first violated fact (issue 26): one bug, one row.
fn new_failure_groups(o: &mut String, d: &Diff<'_>) {
    let new: std::collections::BTreeSet<&str> = d
        .of(Kind::NewFailure)
        .iter()
        .map(|c| c.id.as_str())
        .collect();
    let groups: Vec<(String, Vec<String>)> = (d.new.1.failure_groups().into_iter())
        .map(|g| {
            let ids = g.checks.into_iter().filter(|id| new.contains(id.as_str()));
            (g.fact, ids.collect::<Vec<_>>())
        })
        .filter(|(_, ids)| !ids.is_empty())
        .collect();
    if groups.is_empty() {
        return;
    }
    let _ = writeln!(o, "### New failures by cause ({})\n", groups.len());
    let _ = writeln!(
        o,
        "| results | rules: expected, got | which |\n|---:|---|---|"
    );
    for (fact, ids) in &groups {
        let _ = writeln!(
            o,
            "| {} | `{}` | {} |",
            ids.len(),
            cell(fact).replace('`', "'"),
            cell(&crate::engine::report::groups::named(ids, 8))
        );
    }
    let _ = writeln!(o);
}

fn change_table(o: &mut String, d: &Diff<'_>, title: &str, rows: &[Change]) {
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(o, "### {title} ({})\n", rows.len());
    let _ = writeln!(
        o,
        "| result | requirements | OLD | NEW | why (NEW) |\n|---|---|---|---|---|"
    );
    let (shown, hidden) = capped(d, rows);
    for c in shown {
        let _ = writeln!(
            o,
            "| `{}` | {} | {} | {} | {} |",
            cell(&c.id),
            cell(&c.requirements.join(", ")),
            c.was.name(),
            c.now.name(),
            cell(c.message.as_deref().unwrap_or(""))
        );
    }
    more(o, hidden);
}

fn requirement_table(o: &mut String, d: &Diff<'_>, title: &str, rows: &[&RequirementChange]) {
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(o, "### {title} ({})\n", rows.len());
    let _ = writeln!(
        o,
        "| requirement | level | OLD | NEW | failing results |\n|---|---|---|---|---|"
    );
    let (shown, hidden) = capped(d, rows);
    for r in shown {
        let failing: Vec<String> = r.failing.iter().map(|f| format!("`{}`", cell(f))).collect();
        let _ = writeln!(
            o,
            "| {} | {} | {} | {} | {} |",
            cell(&r.id),
            r.level,
            status(r.was),
            status(r.now),
            failing.join(", ")
        );
    }
    more(o, hidden);
}

fn latency_table(o: &mut String, d: &Diff<'_>) {
    let Some(rule) = d.opts.latency else { return };
    if d.latency.is_empty() {
        let _ = writeln!(
            o,
            "No latency regression (threshold {}% and {} ms, over results passing in both).\n",
            rule.percent, rule.min_delta_ms
        );
        return;
    }
    let _ = writeln!(
        o,
        "### Latency regressions — slower by more than {}% and {} ms ({})\n",
        rule.percent,
        rule.min_delta_ms,
        d.latency.len()
    );
    let _ = writeln!(
        o,
        "| result or area | OLD ms | NEW ms | change |\n|---|---:|---:|---:|"
    );
    let (shown, hidden) = capped(d, &d.latency);
    for l in shown {
        let pct = if l.old_ms == 0 {
            "new".to_string()
        } else {
            format!("{:+.0}%", (l.new_ms as f64 / l.old_ms as f64 - 1.0) * 100.0)
        };
        let _ = writeln!(
            o,
            "| `{}` | {} | {} | {pct} |",
            cell(&l.what),
            l.old_ms,
            l.new_ms
        );
    }
    more(o, hidden);
}
