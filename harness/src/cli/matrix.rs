//! `conform matrix REPORT.json… --out DIR` (issue 30): several implementations' reports of
//! one suite as one page (`matrix.html`, `.md`, `.json`; the model and the pages are
//! `engine::report::matrix`'s). Exit 0 when written — the matrix states verdicts, it has
//! none of its own — and 2 when a report cannot be read or the reports are of different
//! suites.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use conform::engine::report::Report;
use conform::engine::report::matrix::{self, Input, MatrixError};

/// Arguments of `conform matrix`.
#[derive(Debug, clap::Args)]
pub(crate) struct MatrixArgs {
    /// The report.json of each implementation (one column each, in this order).
    #[arg(value_name = "REPORT.json", required = true)]
    reports: Vec<PathBuf>,
    /// Column names, one per report in the same order (default: each report's target name).
    #[arg(long = "name", value_name = "NAME")]
    names: Vec<String>,
    /// Output folder: matrix.html, matrix.md, matrix.json.
    #[arg(long, value_name = "DIR", default_value = "reports/matrix")]
    out: PathBuf,
}

fn read(path: &Path, out: &Path) -> anyhow::Result<(Report, Option<String>)> {
    let shown = path.display();
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {shown}"))?;
    let report: Report = serde_json::from_str(&text)
        .with_context(|| format!("{shown} is not a conform report of this format"))?;
    // Cells link the failing checks in the report's own page, when it sits beside it
    // under the same name (`conform run` writes report.json and report.html).
    let html = path.with_extension("html");
    let link = if html.is_file() {
        matrix::relative(&html, out)
    } else {
        None
    };
    Ok((report, link))
}

/// Runs the command: writes the pages and prints where, with one line per column.
pub(crate) fn execute(args: &MatrixArgs) -> anyhow::Result<u8> {
    if !args.names.is_empty() && args.names.len() != args.reports.len() {
        return Err(MatrixError::Names {
            names: args.names.len(),
            reports: args.reports.len(),
        }
        .into());
    }
    let mut inputs = Vec::new();
    for (i, path) in args.reports.iter().enumerate() {
        let (report, html) = read(path, &args.out)?;
        inputs.push(Input {
            name: args.names.get(i).cloned(),
            report,
            html,
        });
    }
    let m = matrix::build(&inputs)?;
    let written = matrix::write(&m, &args.out)
        .with_context(|| format!("writing the matrix into {}", args.out.display()))?;
    let disagree = m.rows.iter().filter(|r| r.disagree).count();
    let mut lines = vec![format!(
        "matrix of {} implementations × {} requirements ({disagree} where they disagree), suite {}",
        m.columns.len(),
        m.rows.len(),
        m.suite_digest.sha256
    )];
    for c in &m.columns {
        lines.push(format!(
            "  {}: MUST + REC {}/{}, SHOULD {}/{}, exit {}{}",
            c.name,
            c.required.passed,
            c.required.of,
            c.should.passed,
            c.should.of,
            c.exit_code,
            if c.complete { "" } else { " — NOT COMPLETE" }
        ));
    }
    for p in written {
        lines.push(format!("written: {}", p.display()));
    }
    super::out(&(lines.join("\n") + "\n"))?;
    Ok(0)
}
