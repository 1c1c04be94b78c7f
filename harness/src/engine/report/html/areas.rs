//! Requirement areas and the "where the target stands" picture.
//!
//! An area is a requirement ID without its trailing number (`AB-CD-3` → `AB-CD`), so the
//! grouping follows whatever catalogue the run used. Each area gets a heat-map row (one cell
//! per requirement, coloured by its matrix status, linked to its row) and a bar of the
//! results citing its requirements.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use super::charts;
use super::verdicts::Tally;
use crate::engine::report::junit::escape;
use crate::engine::report::{Report, RequirementRow, anchor};

/// One area: its prefix, a name taken from its rows, and its requirements in report order.
pub(super) struct Area<'a> {
    /// `AB-CD`.
    pub(super) prefix: &'a str,
    /// The `area` most of its rows carry.
    pub(super) name: &'a str,
    /// Its rows.
    pub(super) rows: Vec<&'a RequirementRow>,
    /// Results citing one of its requirements (each result once).
    pub(super) evidence: Tally,
}

/// The area prefix of a requirement ID: the ID without a trailing `-<number…>` part.
pub(super) fn prefix(id: &str) -> &str {
    match id.rfind('-') {
        Some(i) if id[i + 1..].starts_with(|c: char| c.is_ascii_digit()) => &id[..i],
        _ => id,
    }
}

/// Groups the report's requirement rows into areas (in order of first appearance) and
/// counts the evidence of each.
pub(super) fn derive(r: &Report) -> Vec<Area<'_>> {
    let mut areas: Vec<Area<'_>> = Vec::new();
    let mut index: BTreeMap<&str, usize> = BTreeMap::new();
    for row in &r.requirements {
        let p = prefix(&row.id);
        let i = *index.entry(p).or_insert_with(|| {
            areas.push(Area {
                prefix: p,
                name: "",
                rows: Vec::new(),
                evidence: Tally::default(),
            });
            areas.len() - 1
        });
        areas[i].rows.push(row);
    }
    for a in &mut areas {
        a.name = most_common(a.rows.iter().map(|r| r.area.as_str()));
    }
    let by_req: BTreeMap<&str, usize> = r
        .requirements
        .iter()
        .filter_map(|row| index.get(prefix(&row.id)).map(|&i| (row.id.as_str(), i)))
        .collect();
    for c in &r.checks {
        let cited: BTreeSet<usize> = c
            .requirements
            .iter()
            .filter_map(|id| by_req.get(id.as_str()).copied())
            .collect();
        for i in cited {
            areas[i].evidence.add(c);
        }
    }
    areas
}

fn most_common<'a>(names: impl Iterator<Item = &'a str>) -> &'a str {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for n in names {
        *counts.entry(n).or_default() += 1;
    }
    counts
        .into_iter()
        .max_by_key(|&(_, n)| n)
        .map(|(name, _)| name)
        .unwrap_or("")
}

/// The heat map: a row per area.
pub(super) fn render(o: &mut String, r: &Report, areas: &[Area<'_>]) {
    let mut by_status: BTreeMap<&str, usize> = BTreeMap::new();
    for row in &r.requirements {
        *by_status.entry(row.status.as_str()).or_default() += 1;
    }
    let parts: Vec<String> = by_status.iter().map(|(k, v)| format!("{v} {k}")).collect();
    let _ = writeln!(
        o,
        "<section id=\"areas\"><h2>Where the target stands</h2>\n\
<p class=\"small\">{} requirements in {} areas: {}. One cell per requirement, coloured by its \
status (green pass, red fail, amber warn, grey n/a, violet untested); the bar counts the results \
citing the area's requirements.</p>",
        r.requirements.len(),
        areas.len(),
        escape(&parts.join(", "))
    );
    o.push_str(
        "<table class=\"areas\"><thead><tr><th scope=\"col\">area</th><th scope=\"col\">requirements</th>\
<th scope=\"col\">evidence</th></tr></thead><tbody>\n",
    );
    for a in areas {
        area_row(o, a);
    }
    o.push_str("</tbody></table></section>\n");
}

fn area_row(o: &mut String, a: &Area<'_>) {
    let _ = write!(
        o,
        "<tr class=\"fi\"><th scope=\"row\"><a href=\"#a-{}\">{}</a> <span class=\"small\">{}</span></th><td class=\"cells\">",
        escape(a.prefix),
        escape(a.prefix),
        escape(a.name)
    );
    for row in &a.rows {
        let suffix = row
            .id
            .strip_prefix(a.prefix)
            .map(|s| s.trim_start_matches('-'))
            .filter(|s| !s.is_empty())
            .unwrap_or(&row.id);
        // The cell shows the number; its name (read aloud, shown on hover) says it all.
        let name = escape(&format!(
            "{} {} — {}",
            row.id,
            row.level,
            row.status.as_str()
        ));
        let _ = write!(
            o,
            "<a class=\"cell {}\" href=\"#{}\" title=\"{name}\" aria-label=\"{name}\">{}</a>",
            row.status.css_class(),
            anchor(&row.id),
            escape(suffix)
        );
    }
    o.push_str("</td><td class=\"ev\">");
    charts::tally_bar(o, &a.evidence, 180);
    let _ = writeln!(
        o,
        " <span class=\"small\">{}</span></td></tr>",
        a.evidence.text()
    );
}
