//! JSON renderer: the [`Report`] itself, pretty-printed (the machine-readable source of truth).

use super::Report;

/// Renders the report as pretty JSON.
pub fn render(report: &Report) -> Result<String, serde_json::Error> {
    serde_json::to_string_pretty(report).map(|mut s| {
        s.push('\n');
        s
    })
}
