//! The matrix as one self-contained HTML page (`matrix.html`): inline CSS, no script, no
//! external resource, so it works offline and as a CI artifact. Each status carries a mark
//! as well as a colour (✓ ✗ ! ?), and `untested` is grey: a requirement nobody judged never
//! reads as passed.

use std::fmt::Write as _;

use super::markdown::{rate_text, run_text, status_mark};
use super::model::{Cell, Column, Matrix, Row};
use crate::engine::report::anchor;
use crate::engine::report::junit::escape;

const CSS: &str = "body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#1a1a1a}\
h1{font-size:1.4em;margin:0 0 .3em}h2{font-size:1.15em;margin:1.4em 0 .4em}\
table{border-collapse:collapse}th,td{border:1px solid #ccc;padding:.25em .45em;vertical-align:top}\
thead th{position:sticky;top:0;background:#f4f4f4}tr.grp th{background:#eef;text-align:left}\
.muted{color:#666}.badge{display:inline-block;color:#fff;border-radius:3px;padding:0 .4em;\
font-size:.85em;white-space:nowrap}.incomplete{background:#fff3cd}\
td.pass{background:#e6f4ea}td.fail{background:#fde2e1}td.warn{background:#fff3cd}\
td.na{background:#f4f4f4;color:#555}td.untested{background:#fff;color:#777;\
background-image:repeating-linear-gradient(45deg,#fff 0 6px,#f0f0f0 6px 12px)}\
td.r{white-space:nowrap}td a{display:block;font-size:.8em;word-break:break-all}.n{font-size:.8em;color:#444}";

fn implementations(o: &mut String, m: &Matrix) {
    o.push_str(
        "<section id=\"implementations\"><h2>Implementations</h2><table><thead><tr><th>implementation</th>\
<th>MUST + REC passed</th><th>SHOULD passed</th><th>badge</th><th>run</th></tr></thead><tbody>\n",
    );
    for (i, c) in m.columns.iter().enumerate() {
        let cls = if c.complete {
            ""
        } else {
            " class=\"incomplete\""
        };
        let _ = writeln!(
            o,
            "<tr id=\"impl-{i}\"{cls}><th>{}</th><td class=\"r\">{}</td><td class=\"r\">{}</td><td>{}</td><td>{}</td></tr>",
            name_html(c),
            rate_text(c.required),
            rate_text(c.should),
            badge_html(c),
            escape(&run_text(c))
        );
    }
    o.push_str("</tbody></table></section>\n");
}

fn name_html(c: &Column) -> String {
    let version = (c.server_version.as_deref())
        .map(|v| format!(" <span class=\"muted\">{}</span>", escape(v)))
        .unwrap_or_default();
    match &c.html {
        Some(h) => format!("<a href=\"{}\">{}</a>{version}", escape(h), escape(&c.name)),
        None => format!("{}{version}", escape(&c.name)),
    }
}

fn badge_html(c: &Column) -> String {
    format!(
        "<span class=\"badge\" style=\"background:{}\">conform: {}</span>",
        escape(&c.badge.1),
        escape(&c.badge.0)
    )
}

fn cell_html(o: &mut String, c: &Cell, col: &Column) {
    let _ = write!(
        o,
        "<td class=\"{}\">{}",
        c.status.css_class(),
        status_mark(c.status)
    );
    if c.passed + c.failed + c.warned > 0 {
        let _ = write!(
            o,
            " <span class=\"n\">{}✓ {}✗ {}!</span>",
            c.passed, c.failed, c.warned
        );
    }
    for id in &c.listed {
        match &col.html {
            Some(h) => {
                let _ = write!(
                    o,
                    "<a href=\"{}#{}\">{}</a>",
                    escape(h),
                    anchor(id),
                    escape(id)
                );
            }
            None => {
                let _ = write!(o, "<code class=\"n\">{}</code>", escape(id));
            }
        }
    }
    match (c.more, &col.html) {
        (0, _) => {}
        (n, Some(h)) => {
            let _ = write!(o, "<a href=\"{}#failures\">+{n} more</a>", escape(h));
        }
        (n, None) => {
            let _ = write!(o, "<span class=\"n\">+{n} more</span>");
        }
    }
    o.push_str("</td>");
}

fn row_html(o: &mut String, r: &Row, m: &Matrix) {
    let _ = write!(
        o,
        "<tr><th title=\"{}\"><code>{}</code>{} <span class=\"muted\">{}</span></th>",
        escape(&r.rule),
        escape(&r.id),
        if r.disagree { " ≠" } else { "" },
        r.level
    );
    for (cell, col) in r.cells.iter().zip(&m.columns) {
        cell_html(o, cell, col);
    }
    o.push_str("</tr>\n");
}

fn matrix_table(o: &mut String, m: &Matrix) {
    let width = m.columns.len() + 1;
    let disagree = m.rows.iter().filter(|r| r.disagree).count();
    let _ = write!(
        o,
        "<section id=\"matrix\"><h2>Requirements ({} rows, {disagree} where the implementations disagree)</h2>\
<table><thead><tr><th>requirement</th>",
        m.rows.len()
    );
    for c in &m.columns {
        let _ = write!(o, "<th>{}</th>", escape(&c.name));
    }
    o.push_str("</tr></thead><tbody>\n");
    let mut group: Option<(bool, &str, &str)> = None;
    for r in &m.rows {
        let g = if r.disagree {
            (true, "", "")
        } else {
            (false, r.suite.as_str(), r.area.as_str())
        };
        if group != Some(g) {
            let title = if r.disagree {
                format!("Where the implementations disagree ({disagree})")
            } else {
                format!("{} — {}", r.suite, r.area)
            };
            let _ = writeln!(
                o,
                "<tr class=\"grp\"><th colspan=\"{width}\">{}</th></tr>",
                escape(&title)
            );
            group = Some(g);
        }
        row_html(o, r, m);
    }
    o.push_str("</tbody></table></section>\n");
}

/// Renders `m` as one self-contained HTML page.
pub fn render(m: &Matrix) -> String {
    let mut o = String::with_capacity(64 * 1024);
    let _ = write!(
        o,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
<title>conform matrix — {} implementations</title><style>{CSS}</style></head><body>\n\
<h1>Conformance matrix</h1><p class=\"muted\" id=\"suite\">{} implementations, suite <code>{}</code> \
({} files), made by conform {}. Cells: ✓ pass, ✗ fail, ! warn, n/a (the implementation does not \
offer it), ? untested (no evidence: never counted as passed). Hover a requirement for its rule.</p>\n",
        m.columns.len(),
        m.columns.len(),
        escape(&m.suite_digest.sha256),
        m.suite_digest.files,
        escape(&m.tool.version)
    );
    implementations(&mut o, m);
    matrix_table(&mut o, m);
    o.push_str("</body></html>\n");
    o
}
