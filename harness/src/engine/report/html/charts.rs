//! Inline SVG charts (no chart library, no script): stacked evidence bars and the latency
//! chart.
//!
//! The report records, per result, its duration and how many exchanges it made, so the
//! latency shown is a check's duration divided by its exchanges, grouped by check area and
//! binding: the median as a bar, the 95th percentile as a whisker.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::verdicts::Tally;
use crate::engine::report::Report;
use crate::engine::report::junit::escape;

/// A stacked bar of a tally, `width` pixels wide, each segment titled with its count.
pub(super) fn tally_bar(o: &mut String, t: &Tally, width: u32) {
    let total = t.total();
    let _ = write!(
        o,
        "<svg class=\"bar\" width=\"{width}\" height=\"12\" viewBox=\"0 0 {width} 12\" role=\"img\" aria-label=\"{}\">",
        t.text()
    );
    if total == 0 {
        let _ = write!(
            o,
            "<rect width=\"{width}\" height=\"12\" class=\"f-none\"/>"
        );
    }
    let mut x = 0.0_f64;
    for (k, n) in t.parts() {
        let w = f64::from(width) * n as f64 / total as f64;
        let _ = write!(
            o,
            "<rect x=\"{x:.1}\" width=\"{w:.1}\" height=\"12\" class=\"f-{}\"><title>{n} {}</title></rect>",
            k.class(),
            k.label()
        );
        x += w;
    }
    o.push_str("</svg>");
}

/// Latency statistics of one group, milliseconds per exchange.
struct Stats {
    label: String,
    n: usize,
    median: f64,
    p95: f64,
}

/// Per-exchange latency by (area, binding), in the order groups first appear.
fn latency_groups(r: &Report) -> Vec<Stats> {
    let mut order: Vec<String> = Vec::new();
    let mut samples: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for c in &r.checks {
        if c.exchanges == 0 {
            continue;
        }
        let binding = c.transport.map(|t| t.as_str()).unwrap_or("both");
        let key = format!("{} · {binding}", c.area);
        let v = samples.entry(key.clone()).or_insert_with(|| {
            order.push(key);
            Vec::new()
        });
        v.push(c.duration_ms as f64 / c.exchanges as f64);
    }
    order
        .into_iter()
        .filter_map(|label| {
            let mut v = samples.remove(&label)?;
            v.sort_by(f64::total_cmp);
            let at = |q: f64| v[((v.len() - 1) as f64 * q).round() as usize];
            Some(Stats {
                n: v.len(),
                median: at(0.5),
                p95: at(0.95),
                label,
            })
        })
        .collect()
}

/// The latency section: one row per group, a bar to the median, a whisker to the p95.
pub(super) fn latency_section(o: &mut String, r: &Report) {
    o.push_str("<section id=\"latency\"><h2>Latency</h2>\n");
    let groups = latency_groups(r);
    let top = groups.iter().map(|g| g.p95).fold(0.0_f64, f64::max);
    if groups.is_empty() || top <= 0.0 {
        o.push_str("<p>No timings recorded in this report.</p></section>\n");
        return;
    }
    let _ = writeln!(
        o,
        "<p class=\"small\">Milliseconds per exchange (a result's duration divided by its exchanges, \
waits for the target's quotas included), by check area and binding: bar = median, whisker = 95th \
percentile, n = results.</p>"
    );
    let (label_w, plot_w, row_h) = (230.0_f64, 420.0_f64, 16.0_f64);
    let height = row_h * groups.len() as f64 + 8.0;
    let _ = write!(
        o,
        "<svg class=\"chart\" width=\"{w}\" height=\"{height}\" viewBox=\"0 0 {w} {height}\" role=\"img\" \
aria-labelledby=\"lat-t\"><title id=\"lat-t\">Median and 95th percentile milliseconds per exchange \
by area and binding</title>",
        w = label_w + plot_w + 190.0
    );
    for (i, g) in groups.iter().enumerate() {
        let y = row_h * i as f64 + 4.0;
        let bar = plot_w * g.median / top;
        let whisker = plot_w * g.p95 / top;
        let _ = write!(
            o,
            "<text x=\"{tx}\" y=\"{ty:.0}\" text-anchor=\"end\">{label}</text>\
<rect x=\"{label_w}\" y=\"{y:.0}\" width=\"{bar:.1}\" height=\"10\" class=\"f-lat\"/>\
<line x1=\"{label_w}\" x2=\"{wx:.1}\" y1=\"{ly:.0}\" y2=\"{ly:.0}\" class=\"whisker\"/>\
<text x=\"{vx:.1}\" y=\"{ty:.0}\">{med:.2} / {p95:.2} ms, n={n}</text>",
            tx = label_w - 6.0,
            ty = y + 9.0,
            label = escape(&g.label),
            wx = label_w + whisker,
            ly = y + 5.0,
            vx = label_w + whisker.max(bar) + 6.0,
            med = g.median,
            p95 = g.p95,
            n = g.n
        );
    }
    o.push_str("</svg></section>\n");
}
