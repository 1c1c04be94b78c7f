//! `conform` CLI: parse arguments, call the library, map outcomes to exit codes.
//!
//! Exit codes: 0 = every required check passed; 1 = a required (MUST) check failed;
//! 2 = usage, profile, pre-flight or harness error.

use std::io::IsTerminal as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context as _, bail};
use clap::{CommandFactory as _, FromArgMatches as _, Parser, Subcommand, ValueEnum};
use conform::engine::baseline::Baseline;
use conform::engine::estimate;
use conform::engine::protocol::{Protocol, Suite, connect, default_vectors_dir, load_profile};
use conform::engine::report::{self, Report};
use conform::engine::run::{RunOptions, run};
use conform::engine::shard::Shard;
use conform::engine::target::{ConnectOptions, Profile, Target};
use conform::engine::{diff, merge};
use conform::registry;
use conform::transport::{McpRevision, TransportKind};

const EXIT_HELP: &str = "EXIT CODES:\n  0  every required (MUST) check passed (warnings, expected failures allowed)\n  1  a required check failed\n  2  usage, profile, pre-flight or harness error";

#[derive(Parser, Debug)]
#[command(name = "conform", version, about = "Conformance suite for Parley v1 and SSP 1.0", after_help = EXIT_HELP)]
struct Cli {
    /// Directory holding requirements/, schemas/ and the vectors (default: ./vectors or the source tree's).
    #[arg(long, global = true, value_name = "DIR")]
    vectors: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run the checks against a target and write reports.
    #[command(after_help = EXIT_HELP)]
    Run(RunArgs),
    /// List the requirement catalogue(s) with coverage.
    List {
        /// Suite to list (a registered protocol, or `all`).
        #[arg(long, default_value = "all", value_parser = parse_suite)]
        suite: String,
    },
    /// Write a commented target profile for a server (roles from `whoami`, SSP fixture
    /// roles from its descriptors, what is missing and which checks it leaves unsupported).
    Init(conform::engine::init::InitArgs),
    /// Explain a requirement ID (rule, seed text, the vectors that test it) or a vector id.
    Explain {
        /// Requirement ID (PV-ST-4) or vector id.
        id: String,
    },
    /// Fuzz a server with hostile requests (each protocol's black-box campaign); the
    /// oracles are checks of the report (exit 1 on a finding).
    #[command(after_help = EXIT_HELP)]
    Fuzz(conform::engine::fuzz::cli::FuzzArgs),
    /// Run a protocol's state-machine model against a target: seeded random operation
    /// sequences, shrunk to a minimal counterexample (exit 1) when the target disagrees
    Model(conform::engine::model::ModelArgs),
    /// Suite power: run the suites against the reference with each seeded fault in turn
    /// (built with `--features faults`; exit 0 only if every fault is caught on its own IDs).
    #[cfg(feature = "faults")]
    Faults(conform::faults::FaultsArgs),
    /// Run the whole suite against the reference with each legal variant on, one at a time
    /// (built with `--features variants`; exit 0 only if every variant gives no failure).
    #[cfg(feature = "variants")]
    Variants(conform::variants::VariantsArgs),
    /// Compare two report.json files: new failures, fixes, requirement changes, latency
    /// (Markdown for a PR comment; exit 1 on a regression).
    Diff(DiffArgs),
    /// Merge the report.json files of every shard of a `run --shard k/n` into one report.
    Merge(MergeArgs),
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
enum TransportSel {
    Http,
    Mcp,
    Both,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
enum Format {
    Json,
    Junit,
    Md,
    Html,
    /// SARIF 2.1.0 (`report.sarif`) for code-scanning UIs.
    Sarif,
    /// Status badge (`badge.svg`).
    Badge,
}

#[derive(clap::Args, Debug)]
struct RunArgs {
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
    /// Suite to run: a registered protocol (parley, ssp) or `all`.
    #[arg(long, default_value = "all", value_parser = parse_suite)]
    suite: String,
    /// Glob over check ids and requirement IDs (e.g. 'envelope/*', 'PV-ST-4').
    #[arg(long, value_name = "GLOB")]
    filter: Option<String>,
    /// Transport(s) to run every vector on.
    #[arg(long, value_enum, default_value_t = TransportSel::Both)]
    transport: TransportSel,
    /// MCP revision (overrides the profile).
    #[arg(long, value_name = "REV", value_parser = parse_revision)]
    mcp_revision: Option<McpRevision>,
    #[command(flatten)]
    reports: ReportArgs,
    /// Output directory.
    #[arg(long, value_name = "DIR", default_value = "reports/latest")]
    out: PathBuf,
    /// Concurrent checks (default: the profile's concurrency, else 8).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=256))]
    jobs: Option<u16>,
    /// Expected-failure baseline (TOML).
    #[arg(long, value_name = "FILE")]
    baseline: Option<PathBuf>,
    /// Run only shard K of N (stable assignment by check id; `conform merge` joins them).
    #[arg(long, value_name = "K/N")]
    shard: Option<Shard>,
    #[command(flatten)]
    tls: conform::transport::tls::TlsOptions,
}

/// An absolute URL (SARIF's `helpUri` must be one), kept as text: a `Url` would make `RunArgs`
/// the one large variant of `Command`.
fn parse_report_url(s: &str) -> Result<String, String> {
    url::Url::parse(s).map(|_| s.to_string()).map_err(|e| {
        format!("--report-url {s:?}: {e} (an absolute URL, e.g. https://host/report.html)")
    })
}

fn parse_revision(s: &str) -> Result<McpRevision, String> {
    McpRevision::parse(s)
        .ok_or_else(|| format!("unknown MCP revision {s:?} (2025-11-25 or 2026-07-28)"))
}

/// `--suite`: a registered protocol or `all`, checked by the registry that knows them.
fn parse_suite(s: &str) -> Result<String, String> {
    registry::select(&[s.to_string()])
        .map(|_| s.to_string())
        .map_err(|e| e.to_string())
}

fn load_suites(sel: &str, dir: &std::path::Path) -> anyhow::Result<Vec<Suite>> {
    let protocols = registry::select(&[sel.to_string()])?;
    Ok(registry::load(&protocols, dir)?)
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let protocols = registry::protocols();
    let mut command = Cli::command();
    for p in &protocols {
        for sub in p.commands() {
            command = command.subcommand(sub);
        }
    }
    let matches = command.get_matches();
    let result = match protocol_command(&protocols, &matches) {
        Some(r) => r,
        None => match Cli::from_arg_matches(&matches) {
            Ok(cli) => dispatch(cli),
            Err(e) => e.exit(),
        },
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

/// A subcommand a protocol added (SSP's `validate`), run by that protocol.
fn protocol_command(
    protocols: &[Arc<dyn Protocol>],
    matches: &clap::ArgMatches,
) -> Option<anyhow::Result<u8>> {
    let (name, sub) = matches.subcommand()?;
    let p = protocols
        .iter()
        .find(|p| p.commands().iter().any(|c| c.get_name() == name))?;
    Some(
        p.run_command(name, sub, &conform::launcher::Registered)
            .map_err(anyhow::Error::from),
    )
}

fn dispatch(cli: Cli) -> anyhow::Result<u8> {
    let dir = cli.vectors.clone().unwrap_or_else(default_vectors_dir);
    match cli.command {
        Command::Run(args) => cmd_run(args, &dir),
        Command::List { suite } => cmd_list(&suite, &dir).map(|()| 0),
        Command::Init(args) => Ok(conform::engine::init::execute(
            &args,
            &registry::protocols(),
            &dir,
        )?),
        Command::Explain { id } => cmd_explain(&id, &dir).map(|()| 0),
        Command::Fuzz(args) => {
            let protocols = registry::select(std::slice::from_ref(&args.suite))?;
            Ok(conform::engine::fuzz::cli::execute(
                &args,
                &protocols,
                &dir,
                &conform::launcher::Registered,
            )?)
        }
        Command::Model(args) => Ok(conform::engine::model::execute(
            &args,
            &registry::protocols(),
            &conform::launcher::Registered,
        )?),
        #[cfg(feature = "faults")]
        Command::Faults(args) => conform::faults::execute(&args, &dir).map_err(anyhow::Error::from),
        #[cfg(feature = "variants")]
        Command::Variants(args) => {
            conform::variants::execute(&args, &dir).map_err(anyhow::Error::from)
        }
        Command::Diff(args) => cmd_diff(&args),
        Command::Merge(args) => cmd_merge(&args),
    }
}

fn cmd_run(args: RunArgs, dir: &std::path::Path) -> anyhow::Result<u8> {
    let suites = load_suites(&args.suite, dir)?;
    let protocols: Vec<Arc<dyn Protocol>> = suites.iter().map(|s| s.protocol.clone()).collect();
    let baseline = args.baseline.as_deref().map(Baseline::load).transpose()?;
    let transports = match args.transport {
        TransportSel::Http => vec![TransportKind::Http],
        TransportSel::Mcp => vec![TransportKind::Mcp],
        TransportSel::Both => vec![TransportKind::Http, TransportKind::Mcp],
    };
    let registered = registry::protocols();
    let profile = (args.target.as_deref())
        .map(|p| load_profile(p, &registered))
        .transpose()?;
    let command = match &args.target {
        Some(p) => format!(
            "conform run --target {} --suite {}",
            report::shell_quote(&p.display().to_string()),
            args.suite
        ),
        None => format!("conform run --spawn-reference --suite {}", args.suite),
    };
    let jobs = (args.jobs.map(usize::from))
        .or(profile.as_ref().and_then(|p| p.concurrency))
        .unwrap_or(8);
    let connect = ConnectOptions {
        revision_override: args.mcp_revision,
        profile_path: args.target.as_ref().map(|t| t.display().to_string()),
        transports: transports.clone(),
        tls: args.tls.clone(),
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let report: Report = rt.block_on(async {
        let target = connect_target(profile, &connect, &protocols).await?;
        print_estimate(&target, &suites, &args, &transports);
        let progress = progress_reporter();
        let opts = RunOptions {
            filter: args.filter.clone(),
            transports,
            jobs,
            baseline,
            command,
            progress: Some(progress.0),
            shard: args.shard,
        };
        let r = run(Arc::new(target), &suites, &opts).await;
        if let Some(bar) = progress.1 {
            bar.finish_and_clear();
        }
        anyhow::Ok(r?)
    })?;
    write_reports(&report, &args.out, &args.reports)?;
    Ok(u8::try_from(report.exit_code()).unwrap_or(2))
}

/// Prints, before the run, the least time the target's budgets (write quotas) impose.
fn print_estimate(target: &Target, suites: &[Suite], args: &RunArgs, t: &[TransportKind]) {
    let filter = args.filter.as_deref();
    for (suite, e) in estimate::estimate(target, suites, filter, t, args.shard) {
        eprintln!(
            "estimate ({suite}): at least {} under the target's quotas",
            estimate::human(e.at_least)
        );
        for line in &e.detail {
            eprintln!("  {line}");
        }
    }
}

/// The target of a profile, or (`--spawn-reference`) the bundled reference in process.
async fn connect_target(
    profile: Option<Profile>,
    opts: &ConnectOptions,
    protocols: &[Arc<dyn Protocol>],
) -> anyhow::Result<Target> {
    match profile {
        Some(p) => Ok(connect(p, opts, protocols).await?),
        #[cfg(feature = "reference")]
        None => Ok(conform::reference::spawn(opts, protocols).await?),
        #[cfg(not(feature = "reference"))]
        None => bail!(
            "--spawn-reference needs the bundled reference server: build conform with its \
             default feature `reference`"
        ),
    }
}

/// The reports `run` and `merge` write (one definition, so both write the same set).
#[derive(clap::Args, Debug)]
struct ReportArgs {
    /// Report formats to write.
    #[arg(long, value_enum, value_delimiter = ',', default_values_t = [Format::Json, Format::Junit, Format::Md, Format::Html, Format::Sarif, Format::Badge])]
    format: Vec<Format>,
    /// Absolute URL report.html will be published at: SARIF rules link their requirement row there.
    #[arg(long, value_name = "URL", env = "CONFORM_REPORT_URL", value_parser = parse_report_url)]
    report_url: Option<String>,
    /// Print only the summary (no failure details).
    #[arg(long)]
    quiet: bool,
}

fn write_reports(report: &Report, out: &Path, o: &ReportArgs) -> anyhow::Result<()> {
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let report_url = (o.report_url.as_deref())
        .map(url::Url::parse)
        .transpose()
        .context("--report-url")?;
    for f in &o.format {
        let (name, text) = match f {
            Format::Json => ("report.json", report::json::render(report)?),
            Format::Junit => ("junit.xml", report::junit::render(report)),
            Format::Md => ("report.md", report::markdown::render(report)),
            Format::Html => ("report.html", report::html::render(report)),
            Format::Sarif => (
                "report.sarif",
                report::sarif::render(report, report_url.as_ref()),
            ),
            Format::Badge => ("badge.svg", report::badge::render(report)),
        };
        let path = out.join(name);
        std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
    }
    if !o.quiet {
        print!("{}", report.failure_details());
    }
    println!();
    print!("{}", report.summary_table());
    println!("reports written to {}", out.display());
    Ok(())
}

type Progress = (
    conform::engine::run::ProgressFn,
    Option<indicatif::ProgressBar>,
);

fn progress_reporter() -> Progress {
    if std::io::stderr().is_terminal() {
        let bar = indicatif::ProgressBar::new(0);
        if let Ok(style) = indicatif::ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {bar:40} {pos}/{len} {msg}",
        ) {
            bar.set_style(style);
        }
        let b = bar.clone();
        let f: conform::engine::run::ProgressFn = Arc::new(move |r, done, total| {
            b.set_length(total as u64);
            b.set_position(done as u64);
            if !r.verdict.is_pass() {
                b.set_message(format!("last problem: {} {}", r.verdict.name(), r.id));
            }
        });
        (f, Some(bar))
    } else {
        let f: conform::engine::run::ProgressFn = Arc::new(|r, done, total| {
            eprintln!("[{done}/{total}] {} {}", r.verdict.name(), r.id);
        });
        (f, None)
    }
}

fn cmd_list(sel: &str, dir: &std::path::Path) -> anyhow::Result<()> {
    for s in load_suites(sel, dir)? {
        println!(
            "suite {} — {} requirements, {} checks",
            s.name,
            s.catalogue.requirements.len(),
            s.checks.len()
        );
        println!(
            "{:<14} {:<6} {:<12} {:>7}  rule",
            "id", "level", "area", "checks"
        );
        for r in &s.catalogue.requirements {
            let n = s
                .checks
                .iter()
                .filter(|c| c.requirements().iter().any(|x| x == &r.id))
                .count();
            println!(
                "{:<14} {:<6} {:<12} {:>7}  {}",
                r.id,
                r.level.to_string(),
                r.area,
                n,
                r.rule
            );
        }
        println!();
    }
    Ok(())
}

fn cmd_explain(id: &str, dir: &std::path::Path) -> anyhow::Result<()> {
    let suites = load_suites("all", dir)?;
    for s in &suites {
        if let Some(r) = s.catalogue.get(id) {
            println!(
                "{} ({}, {}) — suite {}, area {}",
                r.id, r.level, r.source, s.name, r.area
            );
            println!("\n  {}\n", r.rule);
            if let Some(t) = &r.seed_text {
                println!("seed text:\n  \"{}\"\n", t.trim());
            }
            if let Some(m) = r.method {
                println!("method: {m:?}");
            }
            let checks: Vec<_> = s
                .checks
                .iter()
                .filter(|c| c.requirements().iter().any(|x| x == id))
                .collect();
            println!("checks citing it ({}):", checks.len());
            for c in checks {
                println!("  {:<48} {}", c.id(), c.title());
            }
            for extra in &r.checks {
                println!("  {extra:<48} (non-vector check)");
            }
            return Ok(());
        }
        if let Some(c) = s.checks.iter().find(|c| c.id() == id) {
            match c.describe() {
                Some(text) => println!("{text}"),
                None => println!(
                    "check {} (suite {}, area {})\n  {}",
                    c.id(),
                    s.name,
                    c.area(),
                    c.title()
                ),
            }
            for r in c.requirements() {
                let rule = s.catalogue.get(r).map(|x| x.rule.as_str()).unwrap_or("?");
                println!("  {r}: {rule}");
            }
            return Ok(());
        }
    }
    bail!("{id} is neither a requirement ID nor a check id")
}

#[derive(clap::Args, Debug)]
struct DiffArgs {
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

#[derive(clap::Args, Debug)]
struct MergeArgs {
    /// The report.json of every shard (any order).
    #[arg(required = true, value_name = "SHARD.json")]
    shards: Vec<PathBuf>,
    /// Output directory.
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    #[command(flatten)]
    reports: ReportArgs,
}

fn cmd_diff(args: &DiffArgs) -> anyhow::Result<u8> {
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
    print!("{text}");
    Ok(u8::try_from(d.exit_code()).unwrap_or(2))
}

fn cmd_merge(args: &MergeArgs) -> anyhow::Result<u8> {
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
    Ok(u8::try_from(report.exit_code()).unwrap_or(2))
}
