//! `conform merge`: the report.json of every shard of a `run --shard k/n` joined into one
//! report, written and summarised like a run's.

use std::path::PathBuf;

use conform::engine::merge;
use conform::engine::report;

use super::reports::{ReportArgs, print_summary, write_reports};

#[derive(clap::Args, Debug)]
pub(crate) struct MergeArgs {
    /// The report.json of every shard (any order).
    #[arg(required = true, value_name = "SHARD.json")]
    shards: Vec<PathBuf>,
    /// Output directory.
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    #[command(flatten)]
    reports: ReportArgs,
}

/// Runs `conform merge`: the merged report's exit code.
pub(crate) fn execute(args: &MergeArgs) -> anyhow::Result<u8> {
    let shards = (args.shards.iter())
        .map(|p| {
            let report = report::json::read(p)?;
            anyhow::Ok(merge::ShardReport {
                name: p.display().to_string(),
                report,
            })
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let report = merge::merge(shards)?;
    write_reports(&report, &args.out, &args.reports)?;
    print_summary(&report, &args.out, &args.reports, None)?;
    Ok(u8::try_from(report.exit_code()).unwrap_or(2))
}
