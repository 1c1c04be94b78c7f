//! The reports `run` and `merge` write and the summary they print: one definition of the
//! options (`--format`, `--report-url`, `--quiet`, `--color`), so both write the same set
//! the same way.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::Context as _;
use conform::engine::report::write::Format;
use conform::engine::report::{self, Report};

use super::out;
use crate::term;

/// An absolute URL (SARIF's `helpUri` must be one), kept as text: a `Url` would make `RunArgs`
/// the one large variant of `Command`.
fn parse_report_url(s: &str) -> Result<String, String> {
    url::Url::parse(s).map(|_| s.to_string()).map_err(|e| {
        format!("--report-url {s:?}: {e} (an absolute URL, e.g. https://host/report.html)")
    })
}

/// The reports `run` and `merge` write (one definition, so both write the same set).
#[derive(clap::Args, Debug)]
pub(crate) struct ReportArgs {
    /// Report formats to write.
    #[arg(long, value_enum, value_delimiter = ',', default_values_t = Format::ALL.to_vec())]
    pub(crate) format: Vec<Format>,
    /// Absolute URL report.html will be published at: SARIF rules link their requirement row there.
    #[arg(long, value_name = "URL", env = "CONFORM_REPORT_URL", value_parser = parse_report_url)]
    pub(crate) report_url: Option<String>,
    /// Print only the summary table and where the reports went: no failure details and, for
    /// `run`, no estimate, progress bar or per-check lines.
    #[arg(long)]
    pub(crate) quiet: bool,
    /// Colour the summary's verdict line: `auto` = on a terminal when `NO_COLOR` is not set.
    #[arg(long, value_enum, value_name = "WHEN", default_value_t = term::ColorChoice::Auto)]
    pub(crate) color: term::ColorChoice,
}

/// Writes the report files (before anything is printed: a closed stdout loses none of them).
pub(crate) fn write_reports(report: &Report, out: &Path, o: &ReportArgs) -> anyhow::Result<()> {
    let report_url = (o.report_url.as_deref())
        .map(url::Url::parse)
        .transpose()
        .context("--report-url")?;
    report::write::write_all(report, out, &o.format, report_url.as_ref())?;
    Ok(())
}

/// Prints the failure details (unless `--quiet`), the summary table (its verdict line in
/// colour per `--color`), where the reports went, and `footer`.
pub(crate) fn print_summary(
    report: &Report,
    out_dir: &Path,
    o: &ReportArgs,
    footer: Option<&str>,
) -> anyhow::Result<()> {
    let mut text = String::new();
    if !o.quiet {
        let details = report.failure_details();
        if !details.is_empty() {
            text.push_str(&details);
            text.push('\n');
        }
    }
    let summary = report.summary_table();
    if o.color.for_stdout() {
        text.push_str(&term::paint_verdict(&summary));
    } else {
        text.push_str(&summary);
    }
    let _ = writeln!(text, "reports written to {}", out_dir.display());
    text.push_str(footer.unwrap_or_default());
    out(&text)
}
