//! The matrix as Markdown (`matrix.md`): one header row per implementation, then the
//! requirements, those where the implementations disagree first.

use std::fmt::Write as _;

use super::model::{Cell, Column, Matrix, Rate};
use crate::engine::report::MatrixStatus;

/// A table cell's text: `|` and line breaks would end the cell, and `<` could open raw
/// HTML (a target's name or version is the target's text).
fn cell_text(s: &str) -> String {
    s.replace('|', "\\|")
        .replace('<', "&lt;")
        .replace(['\n', '\r'], " ")
}

/// `12/14 (85 %)`, or `–` when no requirement applies. Rounded down: 100 % only when
/// every requirement passed.
pub(super) fn rate_text(r: Rate) -> String {
    if r.of == 0 {
        return "–".into();
    }
    format!("{}/{} ({} %)", r.passed, r.of, 100 * r.passed / r.of)
}

/// A status word with a mark a reader sees without colour.
pub(super) fn status_mark(s: MatrixStatus) -> &'static str {
    match s {
        MatrixStatus::Pass => "✓ pass",
        MatrixStatus::Fail => "✗ fail",
        MatrixStatus::Warn => "! warn",
        MatrixStatus::NotApplicable => "n/a",
        MatrixStatus::Untested => "? untested",
    }
}

fn header(o: &mut String, m: &Matrix) {
    let _ = writeln!(
        o,
        "# Conformance matrix\n\n{} implementations, suite `{}` ({} files), made by conform {}.\n",
        m.columns.len(),
        cell_text(&m.suite_digest.sha256),
        m.suite_digest.files,
        cell_text(&m.tool.version)
    );
    o.push_str(
        "| implementation | MUST + REC passed | SHOULD passed | badge | run |\n|---|---|---|---|---|\n",
    );
    for c in &m.columns {
        let _ = writeln!(
            o,
            "| {} | {} | {} | {} | {} |",
            column_label(c),
            rate_text(c.required),
            rate_text(c.should),
            cell_text(&c.badge.0),
            cell_text(&run_text(c))
        );
    }
}

fn column_label(c: &Column) -> String {
    let name = cell_text(&c.name);
    let version = (c.server_version.as_deref())
        .map(|v| format!(" {}", cell_text(v)))
        .unwrap_or_default();
    match &c.html {
        Some(h) => format!("[{name}]({h}){version}"),
        None => format!("{name}{version}"),
    }
}

/// Date, exit code, a time scale other than 1, and what makes the run partial.
pub(super) fn run_text(c: &Column) -> String {
    let mut s = format!("{}, exit {}", c.started_at, c.exit_code);
    if c.time_scale != 1.0 {
        s.push_str(&format!(", time scale ×{}", c.time_scale));
    }
    if c.caveats.is_empty() {
        s.push_str(", complete");
    } else {
        s.push_str(", NOT COMPLETE: ");
        s.push_str(&c.caveats.join("; "));
    }
    s
}

fn cell_md(c: &Cell, html: Option<&str>) -> String {
    let mut s = status_mark(c.status).to_string();
    let counts = format!("{}✓ {}✗ {}!", c.passed, c.failed, c.warned);
    if c.passed + c.failed + c.warned > 0 {
        let _ = write!(s, " {counts}");
    }
    for id in &c.listed {
        match html {
            Some(h) => {
                let _ = write!(
                    s,
                    " [{}]({h}#{})",
                    cell_text(id),
                    crate::engine::report::anchor(id)
                );
            }
            None => {
                let _ = write!(s, " `{}`", cell_text(id));
            }
        }
    }
    match (c.more, html) {
        (0, _) => {}
        (n, Some(h)) => {
            let _ = write!(s, " [+{n} more]({h}#failures)");
        }
        (n, None) => {
            let _ = write!(s, " +{n} more");
        }
    }
    s
}

/// Renders `m` as Markdown.
pub fn render(m: &Matrix) -> String {
    let mut o = String::new();
    header(&mut o, m);
    let disagree = m.rows.iter().filter(|r| r.disagree).count();
    let _ = writeln!(
        o,
        "\n## Requirements ({} rows; {disagree} where the implementations disagree, listed first)\n",
        m.rows.len()
    );
    o.push_str("| requirement | level |");
    for c in &m.columns {
        let _ = write!(o, " {} |", cell_text(&c.name));
    }
    o.push_str("\n|---|---|");
    o.push_str(&"---|".repeat(m.columns.len()));
    o.push('\n');
    for r in &m.rows {
        let mark = if r.disagree { " ≠" } else { "" };
        let _ = write!(
            o,
            "| `{}`{mark} ({}) | {} |",
            r.id,
            cell_text(&r.area),
            r.level
        );
        for (cell, col) in r.cells.iter().zip(&m.columns) {
            let _ = write!(o, " {} |", cell_md(cell, col.html.as_deref()));
        }
        o.push('\n');
    }
    o
}
