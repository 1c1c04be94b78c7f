//! `conform diff OLD.json NEW.json`: what changed between two reports, as Markdown (exit 1
//! on a regression).

use std::path::PathBuf;

use anyhow::Context as _;
use conform::engine::diff;
use conform::engine::report;

use super::out;

#[derive(clap::Args, Debug)]
pub(crate) struct DiffArgs {
    /// The earlier report.json (e.g. of the main branch).
    old: PathBuf,
    /// The later report.json (e.g. of the pull request).
    new: PathBuf,
    /// Also write the Markdown to FILE.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Flag a result or area slower by more than PCT (`50%`) — and by `--latency-min-ms`.
    #[arg(long, value_name = "PCT", value_parser = diff::parse_percent)]
    latency_threshold: Option<f64>,
    /// The absolute part of the latency threshold, in milliseconds (with --latency-threshold).
    #[arg(long, value_name = "MS", default_value_t = 250)]
    latency_min_ms: u64,
    /// New warnings (SHOULD/MAY) are regressions too.
    #[arg(long)]
    fail_on_warn: bool,
    /// Rows per table (0 = all).
    #[arg(long, value_name = "N", default_value_t = 100)]
    max_rows: usize,
}

pub(crate) fn cmd_diff(args: &DiffArgs) -> anyhow::Result<u8> {
    let (old, new) = (
        report::json::read(&args.old)?,
        report::json::read(&args.new)?,
    );
    let opts = diff::DiffOptions {
        latency: args.latency_threshold.map(|percent| diff::LatencyRule {
            percent,
            min_delta_ms: args.latency_min_ms,
        }),
        fail_on_warn: args.fail_on_warn,
        max_rows: args.max_rows,
    };
    let names = (
        args.old.display().to_string(),
        args.new.display().to_string(),
    );
    let d = diff::diff((&names.0, &old), (&names.1, &new), &opts);
    let text = d.to_markdown();
    if let Some(path) = &args.out {
        std::fs::write(path, &text).with_context(|| format!("writing {}", path.display()))?;
    }
    out(&text)?;
    Ok(u8::try_from(d.exit_code()).unwrap_or(2))
}
