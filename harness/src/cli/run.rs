//! `conform run`: the selected suites against a target (a profile, or the bundled reference
//! spawned in process), every report written, the summary printed; Ctrl-C stops early with
//! a partial report (exit 130).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context as _, bail};
use conform::capability::estimate;
use conform::engine::baseline::Baseline;
use conform::engine::binding::{self, Binding};
use conform::engine::protocol::{Protocol, Suite, connect, declared_bindings};
use conform::engine::report::{self, Report};
use conform::engine::run::{RunOptions, run};
use conform::engine::shard::Shard;
use conform::engine::target::{ConnectOptions, Profile, Target};
use conform::registry;
use conform::transport::McpRevision;
use conform::transport::budget::TimeScale;

use super::reports::{ReportArgs, print_summary, write_reports};
use super::{load_suites, parse_suite, suite_help};
use crate::term;

#[derive(clap::Args, Debug)]
pub(crate) struct RunArgs {
    /// Target profile (TOML).
    #[arg(
        long,
        value_name = "FILE",
        conflicts_with = "spawn_reference",
        required_unless_present = "spawn_reference"
    )]
    target: Option<PathBuf>,
    /// Start the bundled reference server in process (ephemeral port, demo tokens).
    #[arg(long)]
    spawn_reference: bool,
    #[arg(long, default_value = "all", value_parser = parse_suite, help = suite_help("Suite to run"))]
    suite: String,
    /// Glob over check ids and requirement IDs (e.g. 'envelope/*', 'PV-ST-4').
    #[arg(long, value_name = "GLOB")]
    filter: Option<String>,
    /// Binding(s) to run every check on: one the selected protocols declare, or `both`
    /// (every one; Parley's are `http` and `mcp`).
    #[arg(long, value_name = "BINDING", default_value = "both", value_parser = binding_values())]
    transport: String,
    /// MCP revision (overrides the profile).
    #[arg(long, value_name = "REV", value_parser = parse_revision)]
    mcp_revision: Option<McpRevision>,
    #[command(flatten)]
    reports: ReportArgs,
    /// Output directory.
    #[arg(long, value_name = "DIR", default_value = "reports/latest")]
    out: PathBuf,
    /// One `[n/total] verdict id` line per result on stderr (off a terminal nothing is shown
    /// per check otherwise; on a terminal, a progress bar).
    #[arg(long, conflicts_with = "quiet")]
    verbose: bool,
    /// Concurrent checks (default: the profile's concurrency, else 8).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=256))]
    jobs: Option<u16>,
    /// Expected-failure baseline (TOML).
    #[arg(long, value_name = "FILE")]
    baseline: Option<PathBuf>,
    /// Run only shard K of N (stable assignment by check id; `conform merge` joins them).
    #[arg(long, value_name = "K/N")]
    shard: Option<Shard>,
    /// Accept a partial run: a selected suite left incomplete (nothing executed, or a
    /// MUST/REC rule untested for want of a token or credential) does not fail the run; the
    /// report records the choice. `--filter`, `--shard` and a single `--transport` imply it.
    #[arg(long)]
    partial: bool,
    /// A baseline entry whose check now passes is a warning instead of a failure (exit 1).
    #[arg(long, requires = "baseline")]
    allow_stale_baseline: bool,
    /// Sign report.json with this Ed25519 private key (PKCS#8 PEM, as `openssl genpkey
    /// -algorithm ed25519` writes it); `conform verify` checks the signature offline.
    #[arg(long, value_name = "KEYFILE")]
    sign: Option<PathBuf>,
    #[command(flatten)]
    tls: conform::transport::tls::TlsOptions,
    /// Multiply every timeout and waiting bound of checks, models and histories by F (a slow
    /// runner or server; overrides the profile's `time_scale`; recorded in the report).
    #[arg(long, value_name = "F")]
    time_scale: Option<conform::transport::budget::TimeScale>,
}

fn parse_revision(s: &str) -> Result<McpRevision, String> {
    McpRevision::parse(s)
        .ok_or_else(|| format!("unknown MCP revision {s:?} (2025-11-25 or 2026-07-28)"))
}

/// The values of `--transport`: every binding a registered protocol declares, and `both`.
fn binding_values() -> clap::builder::PossibleValuesParser {
    let declared = declared_bindings(&registry::protocols());
    let mut names: Vec<&'static str> = declared.iter().map(|b| b.as_str()).collect();
    names.push(binding::EVERY);
    clap::builder::PossibleValuesParser::new(names)
}

/// Runs `conform run`: its exit code (0, 1, 130 interrupted; 2 is an error).
pub(crate) fn execute(args: RunArgs, dir: &Path) -> anyhow::Result<u8> {
    let suites = load_suites(&args.suite, dir)?;
    let protocols: Vec<Arc<dyn Protocol>> = suites.iter().map(|s| s.protocol.clone()).collect();
    let baseline = args.baseline.as_deref().map(Baseline::load).transpose()?;
    if let Some(b) = &baseline {
        conform::engine::run::check_baseline(b, &suites)?;
    }
    let transports = binding::selection(&args.transport);
    let profile = (args.target.as_deref())
        .map(conform::launcher::load_profile)
        .transpose()?;
    let command = repro_prefix(&args);
    let jobs = (args.jobs.map(usize::from))
        .or(profile.as_ref().and_then(|p| p.concurrency))
        .unwrap_or(8);
    let connect = ConnectOptions {
        revision_override: args.mcp_revision,
        profile_path: args.target.as_ref().map(|t| t.display().to_string()),
        transports: transports.clone(),
        tls: args.tls.clone(),
        time_scale: args.time_scale,
    };
    // Before the first request: a run whose reports cannot be written (or signed) is not
    // started.
    prepare_out(&args.out)?;
    let signer = signer(&args)?;
    if args.spawn_reference {
        term::log_reference_to(args.out.join(REFERENCE_LOG));
    }
    let feedback =
        term::Feedback::choose(args.reports.quiet, args.verbose, term::stderr_is_terminal());
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let report: Report = rt.block_on(async {
        let target = connect_target(profile, &connect, &protocols).await?;
        if !args.reports.quiet {
            print_estimate(&target, &suites, &args, &transports);
        }
        let (progress, bar) = feedback.reporter();
        let opts = RunOptions {
            filter: args.filter.clone(),
            transports,
            jobs,
            baseline,
            command,
            progress,
            shard: args.shard,
            partial: (args.partial.then(|| "--partial".to_string()))
                .into_iter()
                .collect(),
            allow_stale_baseline: args.allow_stale_baseline,
            stop: Some(stop_on_ctrl_c()),
            ..RunOptions::default()
        };
        let r = run(Arc::new(target), &suites, &opts).await;
        if let Some(bar) = bar {
            bar.finish_and_clear();
        }
        anyhow::Ok(r?)
    })?;
    let mut report = report;
    if let Some(key) = &signer {
        // Over the report exactly as report.json writes it (its JSON read back), so the
        // verifier's canonical form of the file is the one signed here.
        let written: serde_json::Value = serde_json::from_str(&report::json::render(&report)?)?;
        report.signature = Some(report::evidence::sign(&written, key)?);
    }
    write_reports(&report, &args.out, &args.reports)?;
    let log = term::reference_log().map(|p| format!("reference server log: {}\n", p.display()));
    print_summary(&report, &args.out, &args.reports, log.as_deref())?;
    Ok(u8::try_from(report.exit_code()).unwrap_or(2))
}

/// The `conform run …` prefix that re-targets the same server (for reproductions).
fn repro_prefix(args: &RunArgs) -> String {
    let on = match &args.target {
        Some(p) => format!(
            "--target {}",
            conform::engine::repro::shell_quote(&p.display().to_string())
        ),
        None => "--spawn-reference".into(),
    };
    let scale = args.time_scale.map(TimeScale::flag).unwrap_or_default();
    format!("conform run {on} --suite {}{scale}", args.suite)
}

/// The `--sign` key, read before the run: a key that cannot sign report.json (unreadable,
/// or json not among the formats) stops the run before its first request.
fn signer(args: &RunArgs) -> anyhow::Result<Option<ed25519_dalek::SigningKey>> {
    let signer = (args.sign.as_deref())
        .map(report::evidence::signing_key)
        .transpose()?;
    if signer.is_some()
        && !args
            .reports
            .format
            .iter()
            .any(|f| f.file_name() == "report.json")
    {
        bail!("--sign signs report.json: add json to --format");
    }
    Ok(signer)
}

/// A stop set by the first Ctrl-C (SIGINT): the run then ends early with a partial report
/// marked interrupted (exit 130). A second Ctrl-C ends the process at once (exit 130), as a
/// user pressing it again expects.
///
/// The handler is registered here, before the run starts, not lazily in the spawned task: a
/// Ctrl-C that arrives before that task is first polled would otherwise kill the process with
/// no report at all.
fn stop_on_ctrl_c() -> conform::engine::check::Stop {
    let (tx, rx) = tokio::sync::watch::channel(false);
    let mut interrupts = Interrupts::register();
    tokio::spawn(async move {
        if interrupts.next().await {
            term::note(
                "\ninterrupted: stopping the checks, writing a partial report (Ctrl-C again quits)",
            );
            let _ = tx.send(true);
            if interrupts.next().await {
                std::process::exit(130);
            }
        }
    });
    rx
}

/// SIGINT as a stream registered at once (Unix); elsewhere tokio's `ctrl_c`, which has no
/// such stream.
enum Interrupts {
    #[cfg(unix)]
    Signal(Option<tokio::signal::unix::Signal>),
    #[cfg(not(unix))]
    CtrlC,
}

impl Interrupts {
    fn register() -> Self {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            match signal(SignalKind::interrupt()) {
                Ok(stream) => Self::Signal(Some(stream)),
                Err(err) => {
                    tracing::warn!(%err, "cannot handle Ctrl-C: it will end the run without a report");
                    Self::Signal(None)
                }
            }
        }
        #[cfg(not(unix))]
        Self::CtrlC
    }

    /// Whether a Ctrl-C came (false: none can come).
    async fn next(&mut self) -> bool {
        match self {
            #[cfg(unix)]
            Self::Signal(Some(stream)) => stream.recv().await.is_some(),
            #[cfg(unix)]
            Self::Signal(None) => false,
            #[cfg(not(unix))]
            Self::CtrlC => tokio::signal::ctrl_c().await.is_ok(),
        }
    }
}

/// The spawned reference server's log in `--out` (only when it logged something).
const REFERENCE_LOG: &str = "reference.log";

/// Creates `--out` and proves it writable (a probe file created and removed), and removes a
/// reference log a previous run left there: a run whose reports could not be written stops
/// here, before any request (exit 2).
fn prepare_out(out: &Path) -> anyhow::Result<()> {
    let shown = out.display();
    std::fs::create_dir_all(out)
        .with_context(|| format!("--out {shown}: cannot create the output directory"))?;
    let probe = out.join(format!(".conform-write-probe-{}", std::process::id()));
    std::fs::File::create_new(&probe)
        .with_context(|| format!("--out {shown}: the output directory is not writable"))?;
    std::fs::remove_file(&probe)
        .with_context(|| format!("--out {shown}: removing {}", probe.display()))?;
    match std::fs::remove_file(out.join(REFERENCE_LOG)) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(e).with_context(|| format!("--out {shown}: removing the old {REFERENCE_LOG}"))
        }
        _ => Ok(()),
    }
}

/// Prints, before the run, the least time the target's budgets (write quotas) impose (not
/// an estimate under a second: such budgets do not hold the run back).
fn print_estimate(target: &Target, suites: &[Suite], args: &RunArgs, t: &[Binding]) {
    let filter = args.filter.as_deref();
    let paced = registry::capabilities().estimate;
    let estimates = estimate::estimate(target, suites, filter, t, args.shard, &paced);
    for (suite, e) in estimates.iter().filter(|(_, e)| e.at_least.as_secs() >= 1) {
        term::note(&format!(
            "estimate ({suite}): at least {} under the target's quotas",
            estimate::human(e.at_least)
        ));
        for line in &e.detail {
            term::note(&format!("  {line}"));
        }
    }
}

/// The target of a profile, or (`--spawn-reference`) the bundled reference in process.
async fn connect_target(
    profile: Option<Profile>,
    opts: &ConnectOptions,
    protocols: &[Arc<dyn Protocol>],
) -> anyhow::Result<Target> {
    Ok(match profile {
        Some(p) => connect(p, opts, protocols).await?,
        None => conform::launcher::spawn_reference(opts, protocols, &[]).await?,
    })
}
