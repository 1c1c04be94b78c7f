//! The "not run" section (issue 26): every result that judged nothing — `unsupported` (by the
//! target's choice or for want of something in the profile) and `skipped` — grouped by its
//! reason, so the summary's counts lead somewhere instead of being a dead end.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::engine::report::Report;
use crate::engine::report::junit::escape;
use crate::engine::verdict::{Cause, Verdict};

/// Writes the section (nothing when every result judged the target).
pub(super) fn render(o: &mut String, r: &Report) {
    let mut by_reason: BTreeMap<(u8, &str), Vec<&str>> = BTreeMap::new();
    for c in &r.checks {
        let key = match &c.verdict {
            // The profile's gaps first: they are what the user can fix.
            Verdict::Unsupported {
                reason,
                cause: Cause::Profile,
            } => (0, reason.as_str()),
            Verdict::Unsupported { reason, .. } => (1, reason.as_str()),
            Verdict::Skipped { reason } => (2, reason.as_str()),
            _ => continue,
        };
        by_reason.entry(key).or_default().push(c.id.as_str());
    }
    if by_reason.is_empty() {
        return;
    }
    let total: usize = by_reason.values().map(Vec::len).sum();
    let _ = writeln!(
        o,
        "<section id=\"not-run\"><h2>Not run: unsupported and skipped ({total})</h2>\
<p>These results judged nothing about the target. <em>Untested</em> ones lacked something \
the profile supplies (a token, a credential): give it, and they run. <em>Not applicable</em> \
ones need a feature the target declares it does not offer.</p>"
    );
    for ((kind, reason), ids) in &by_reason {
        let what = match kind {
            0 => "untested — the profile lacks it",
            1 => "not applicable to this target",
            _ => "skipped",
        };
        let _ = write!(
            o,
            "<details class=\"not-run\"><summary><strong>{}</strong> × {} <span class=\"muted\">({what})</span></summary><p>",
            ids.len(),
            escape(reason)
        );
        let listed: Vec<String> = ids
            .iter()
            .map(|id| format!("<code>{}</code>", escape(id)))
            .collect();
        let _ = write!(o, "{}</p></details>", listed.join(" "));
    }
    o.push_str("</section>\n");
}
