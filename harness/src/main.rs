//! `conform` CLI: parse arguments, call the library, map outcomes to exit codes.
//!
//! Exit codes: 0 = every required check passed; 1 = a required (MUST) check failed, a
//! selected suite is incomplete (not `--partial`) or a baseline entry is stale (not
//! `--allow-stale-baseline`); 2 = usage, profile, vectors, pre-flight or harness error. Standard output is written through
//! [`out`]: a reader that goes away (`conform list | head -1`) ends it quietly, with the
//! command's own exit code.

mod cli;
mod term;

/// The whole run (harness and the in-process reference) allocates and frees JSON values on
/// every exchange; glibc's allocator spent a third of the main job's CPU on it (issue 25).
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::fmt::Write as _;
use std::io::IsTerminal as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context as _, bail};
use clap::{CommandFactory as _, FromArgMatches as _, Parser, Subcommand, ValueEnum};
use conform::capability::command::Commands;
use conform::capability::estimate;
use conform::engine::baseline::Baseline;
use conform::engine::merge;
use conform::engine::protocol::{Protocol, Suite, connect, load_profile};
use conform::engine::report::write::Format;
use conform::engine::report::{self, Report};
use conform::engine::run::{RunOptions, run};
use conform::engine::shard::Shard;
use conform::engine::target::{ConnectOptions, Profile, Target};
use conform::engine::vectors_dir;
use conform::registry;
use conform::transport::budget::TimeScale;
use conform::transport::{McpRevision, TransportKind};

use cli::{load_suites, out};

const EXIT_HELP: &str = "EXIT CODES:\n  0  every required (MUST, REC) check passed and every selected suite is complete (warnings,\n     expected failures allowed)\n  1  a required check failed; or a selected suite is incomplete (nothing executed, or a\n     MUST/REC rule untested for want of a token or credential) without --partial; or a\n     baseline entry is stale (an expected failure passed) without --allow-stale-baseline\n  2  usage, profile, pre-flight or harness error\n  130  interrupted (Ctrl-C): the reports hold the results so far, the rest skipped";

#[derive(Parser, Debug)]
#[command(name = "conform", version, about = "Conformance suite for Parley v1 and SSP 1.0", after_help = EXIT_HELP)]
struct Cli {
    /// Directory holding requirements/, schemas/ and the vectors. Default, the first found:
    /// $CONFORM_VECTORS, ./vectors, vectors/ beside the executable,
    /// <exe dir>/../share/conform/vectors, the source tree of a binary still in cargo's
    /// target directory.
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
        #[arg(long, default_value = "all", value_parser = parse_suite, help = suite_help("Suite to list"))]
        suite: String,
    },
    /// Write a commented target profile for a server (roles from `whoami`, SSP fixture
    /// roles from its descriptors, what is missing and which checks it leaves unsupported).
    Init(conform::capability::init::InitArgs),
    /// Explain a requirement ID (rule, seed text, the checks that test it) or a check: any id
    /// the output prints.
    Explain {
        /// A requirement ID (`PV-ST-4`, any case), a check or vector id, a result id
        /// (`<check>@http`) or a derived check (`PV-TR-1/<vector>`).
        id: String,
    },
    /// Fuzz a server with hostile requests (each protocol's black-box campaign); the
    /// oracles are checks of the report (exit 1 on a finding).
    #[command(after_help = EXIT_HELP)]
    Fuzz(conform::capability::fuzz::cli::FuzzArgs),
    /// Run a protocol's state-machine model against a target: seeded random operation
    /// sequences, shrunk to a minimal counterexample (exit 1) when the target disagrees
    Model(conform::capability::model::ModelArgs),
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
    Diff(cli::diff::DiffArgs),
    /// Merge the report.json files of every shard of a `run --shard k/n` into one report.
    Merge(MergeArgs),
    /// Check a report offline: its Ed25519 signature against a key you trust, its suite
    /// digest against this conform's suite, and that its run was complete (exit 1 with the
    /// reasons on any mismatch).
    Verify(cli::verify::VerifyArgs),
    /// Put several implementations' reports of one suite side by side: requirements as
    /// rows, implementations as columns (matrix.html, .md, .json; reports of different
    /// suites are refused).
    Matrix(cli::matrix::MatrixArgs),
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
enum TransportSel {
    Http,
    Mcp,
    Both,
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
    #[arg(long, default_value = "all", value_parser = parse_suite, help = suite_help("Suite to run"))]
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

/// The help of a `--suite` option: the registered protocols, from the registry.
fn suite_help(what: &str) -> String {
    format!(
        "{what}: a registered protocol ({}) or `all`",
        registry::names().join(", ")
    )
}

/// `--suite`: a registered protocol or `all`, checked by the registry that knows them.
fn parse_suite(s: &str) -> Result<String, String> {
    registry::select(&[s.to_string()])
        .map(|_| s.to_string())
        .map_err(|e| e.to_string())
}

fn main() -> ExitCode {
    term::init_tracing();
    let protocols = registry::capabilities().commands;
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
            term::note(&format!("error: {}", error_text(&e)));
            ExitCode::from(2)
        }
    }
}

/// An error and its causes on one line, each cause once: a library error that already
/// shows its source (`{path}: {source}`) does not get it appended a second time.
fn error_text(e: &anyhow::Error) -> String {
    let mut text = e.to_string();
    for cause in e.chain().skip(1) {
        let c = cause.to_string();
        if !text.contains(&c) {
            text = format!("{text}: {c}");
        }
    }
    text
}

#[test]
fn each_cause_is_printed_once() {
    let io = std::io::Error::new(std::io::ErrorKind::NotFound, "no such file");
    let shown = anyhow::Error::new(report::json::ReadError::Io {
        path: "/x".into(),
        source: io,
    });
    assert_eq!(error_text(&shown), "/x: no such file");
    let hidden = anyhow::anyhow!("inner").context("outer");
    assert_eq!(error_text(&hidden), "outer: inner");
}

/// A subcommand a protocol added (SSP's `validate`), run by that protocol.
fn protocol_command(
    protocols: &[Arc<dyn Commands>],
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
    // Only the commands that read the catalogues look for them (`diff` and `merge` run
    // anywhere); not found is exit 2 with where it looked.
    let dir = || vectors_dir::locate(cli.vectors.as_deref());
    match cli.command {
        Command::Run(args) => cmd_run(args, &dir()?),
        Command::List { suite } => cli::catalogue::cmd_list(&suite, &dir()?).map(|()| 0),
        Command::Init(args) => Ok(conform::capability::init::execute(
            &args,
            &registry::capabilities().init,
            &dir()?,
        )?),
        Command::Explain { id } => cli::catalogue::cmd_explain(&id, &dir()?).map(|()| 0),
        Command::Fuzz(args) => {
            let protocols = registry::selected(
                registry::capabilities().fuzz,
                std::slice::from_ref(&args.suite),
            )?;
            Ok(conform::capability::fuzz::cli::execute(
                &args,
                &protocols,
                &dir()?,
                &conform::launcher::Registered,
            )?)
        }
        Command::Model(args) => Ok(conform::capability::model::execute(
            &args,
            &registry::capabilities().model,
            &registry::names(),
            &conform::launcher::Registered,
        )?),
        #[cfg(feature = "faults")]
        Command::Faults(args) => {
            conform::faults::execute(&args, &dir()?).map_err(anyhow::Error::from)
        }
        #[cfg(feature = "variants")]
        Command::Variants(args) => {
            conform::variants::execute(&args, &dir()?).map_err(anyhow::Error::from)
        }
        Command::Diff(args) => cli::diff::cmd_diff(&args),
        Command::Merge(args) => cmd_merge(&args),
        Command::Verify(args) => cli::verify::execute(&args, &dir()?),
        Command::Matrix(args) => cli::matrix::execute(&args),
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
    let feedback = term::Feedback::choose(
        args.reports.quiet,
        args.verbose,
        std::io::stderr().is_terminal(),
    );
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
fn print_estimate(target: &Target, suites: &[Suite], args: &RunArgs, t: &[TransportKind]) {
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
    #[arg(long, value_enum, value_delimiter = ',', default_values_t = Format::ALL.to_vec())]
    format: Vec<Format>,
    /// Absolute URL report.html will be published at: SARIF rules link their requirement row there.
    #[arg(long, value_name = "URL", env = "CONFORM_REPORT_URL", value_parser = parse_report_url)]
    report_url: Option<String>,
    /// Print only the summary table and where the reports went: no failure details and, for
    /// `run`, no estimate, progress bar or per-check lines.
    #[arg(long)]
    quiet: bool,
    /// Colour the summary's verdict line: `auto` = on a terminal when `NO_COLOR` is not set.
    #[arg(long, value_enum, value_name = "WHEN", default_value_t = term::ColorChoice::Auto)]
    color: term::ColorChoice,
}

/// Writes the report files (before anything is printed: a closed stdout loses none of them).
fn write_reports(report: &Report, out: &Path, o: &ReportArgs) -> anyhow::Result<()> {
    let report_url = (o.report_url.as_deref())
        .map(url::Url::parse)
        .transpose()
        .context("--report-url")?;
    report::write::write_all(report, out, &o.format, report_url.as_ref())?;
    Ok(())
}

/// Prints the failure details (unless `--quiet`), the summary table (its verdict line in
/// colour per `--color`), where the reports went, and `footer`.
fn print_summary(
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
    print_summary(&report, &args.out, &args.reports, None)?;
    Ok(u8::try_from(report.exit_code()).unwrap_or(2))
}
