//! The suite-power section (issue 6) and its legal-variants part (issue 14), present in the
//! reports `conform faults` writes: every seeded fault and whether a check citing one of its
//! requirement IDs failed, then per requirement whether some fault for it is caught.

use std::fmt::Write as _;

use crate::engine::report::anchor;
use crate::engine::report::junit::escape;
use crate::engine::report::power::{RequirementPowerStatus, SuitePower, VariantsAccepted};

/// Writes the section.
pub(super) fn render(o: &mut String, p: &SuitePower) {
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
            RequirementPowerStatus::Caught => "caught",
            RequirementPowerStatus::NotCaught => "NOT caught",
            RequirementPowerStatus::NoFault => "no fault yet",
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
fn variants(o: &mut String, v: &VariantsAccepted) {
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
