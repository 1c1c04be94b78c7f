//! The `conform fuzz` command: arguments, the target, one run of the oracle checks of every
//! selected protocol's campaign, the reports (the same formats and exit codes as
//! `conform run`) and `--promote`.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use super::{Fuzzable, Settings, Shared};
use crate::capability::command::{CommandError, Launcher};
use crate::engine::binding;
use crate::engine::protocol::{Protocol, Suite, connect, declared_bindings};
use crate::engine::report::{self, Report};
use crate::engine::run::{RunOptions, run};
use crate::engine::target::{ConnectOptions, Target};

/// Arguments of `conform fuzz`.
#[derive(Debug, Clone, clap::Args)]
pub struct FuzzArgs {
    /// Target profile (TOML), as for `conform run`.
    #[arg(
        long,
        value_name = "FILE",
        conflicts_with = "spawn_reference",
        required_unless_present = "spawn_reference"
    )]
    pub target: Option<PathBuf>,
    /// Fuzz the bundled reference server, started in process.
    #[arg(long)]
    pub spawn_reference: bool,
    /// Protocol(s) to fuzz: a registered protocol with a campaign, or `all`.
    #[arg(long, default_value = "all")]
    pub suite: String,
    /// How long to send hostile requests (`90s`, `10m`, `1h`; a bare number is seconds),
    /// per protocol.
    #[arg(long, default_value = "60s", value_parser = parse_duration)]
    pub duration: Duration,
    /// RNG seed (default: from the clock; always printed, so a run can be replayed).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Binding(s) to fuzz (protocols with two, like Parley: `http`, `mcp`), or `both`.
    #[arg(long, value_name = "BINDING", default_value = "both")]
    pub transport: String,
    /// Output directory of the reports.
    #[arg(long, value_name = "DIR", default_value = "reports/fuzz")]
    pub out: PathBuf,
    /// Write every finding as a golden vector file into DIR (Parley: `fuzz-seed-<S>.json`,
    /// to copy into `vectors/parley/`; SSP: `ssp-fuzz-seed-<S>.json`, to copy into
    /// `vectors/ssp/requests/`), so the case stays in the plain suite.
    #[arg(long, value_name = "DIR")]
    pub promote: Option<PathBuf>,
    /// `--ca-cert`/`--insecure` for an `https://` target.
    #[command(flatten)]
    pub tls: crate::transport::tls::TlsOptions,
    /// Multiply every timeout and waiting bound by F (a slow runner or server; overrides
    /// the profile's `time_scale`; recorded in the report).
    #[arg(long, value_name = "F")]
    pub time_scale: Option<crate::transport::budget::TimeScale>,
}

/// `90s`, `10m`, `1h`, `250ms`, or a bare number of seconds.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (n, unit) = s.split_at(split);
    let n: u64 = n.parse().map_err(|_| format!("invalid duration {s:?}"))?;
    let scaled = |k: u64| {
        n.checked_mul(k)
            .map(Duration::from_secs)
            .ok_or_else(|| format!("duration {s:?} is too long"))
    };
    match unit {
        "" | "s" => Ok(Duration::from_secs(n)),
        "ms" => Ok(Duration::from_millis(n)),
        "m" => scaled(60),
        "h" => scaled(3600),
        _ => Err(format!("invalid duration unit in {s:?} (ms, s, m, h)")),
    }
}

/// The run's settings from the arguments.
pub fn settings(args: &FuzzArgs) -> Settings {
    let seed = args.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs())
    });
    let transports = binding::selection(&args.transport);
    Settings {
        duration: args.duration,
        seed,
        transports,
    }
}

/// Runs the oracle checks of each protocol's campaign against a prepared target: the
/// report and the campaigns (their outcomes, for summaries and `--promote`).
pub async fn fuzz(
    target: Target,
    suites: Vec<(Suite, Arc<Shared>)>,
    settings: &Settings,
    command: String,
) -> Result<(Report, Vec<Arc<Shared>>), CommandError> {
    let (suites, shared): (Vec<Suite>, Vec<Arc<Shared>>) = suites.into_iter().unzip();
    // Every campaign runs now, side by side: the checks only read their outcomes (were the
    // checks to start them, the first protocol's checks would hold every job slot and the
    // campaigns would run one after the other).
    let target = Arc::new(target);
    let started = std::time::Instant::now();
    let campaigns = futures::future::join_all(shared.iter().map(|s| s.outcomes(&target))).await;
    let requests: u64 = (campaigns.iter())
        .filter_map(|o| o.as_ref().ok())
        .map(|o| o.requests)
        .sum();
    let opts = RunOptions {
        filter: None,
        transports: settings.transports.clone(),
        jobs: 6,
        baseline: None,
        command,
        progress: None,
        shard: None,
        // The oracle checks only: every other check of the suites is left out by design.
        partial: vec!["conform fuzz (its oracle checks only)".into()],
        allow_stale_baseline: false,
        stop: None,
        ..RunOptions::default()
    };
    let mut report = run(target, &suites, &opts)
        .await
        .map_err(|e| CommandError(e.to_string()))?;
    // The run itself only reads the campaigns' outcomes: the report states the campaigns'
    // time and requests (each oracle check counts the requests it judged, all of them).
    let wall = started.elapsed();
    report.wall_time_ms = wall.as_millis() as u64;
    report.exchanges = requests;
    report.exchanges_per_second =
        (requests as f64 / wall.as_secs_f64().max(1e-9) * 10.0).round() / 10.0;
    Ok((report, shared))
}

/// The campaign of each of `protocols`, as a suite of its oracle checks.
pub fn campaign_suites(
    protocols: &[Arc<dyn Fuzzable>],
    vectors_dir: &Path,
    settings: &Settings,
) -> Result<Vec<(Suite, Arc<Shared>)>, CommandError> {
    let mut out = Vec::new();
    for p in protocols {
        let campaign = p.campaign(settings);
        // The catalogue alone: the protocol's vectors and checks are not run here.
        let catalogue = p
            .catalogue(vectors_dir)
            .map_err(|e| CommandError(e.to_string()))?;
        let shared = Shared::new(campaign);
        let protocol: Arc<dyn Protocol> = p.clone();
        out.push((Suite::new(protocol, catalogue, shared.checks()), shared));
    }
    if out.is_empty() {
        return Err(CommandError(
            "none of the selected protocols has a fuzz campaign".into(),
        ));
    }
    Ok(out)
}

/// `conform fuzz` over `protocols` (the registered ones with a campaign that `--suite`
/// selects): exit 0 when no oracle failed, 1 when one did, 2 on errors.
pub fn execute(
    args: &FuzzArgs,
    protocols: &[Arc<dyn Fuzzable>],
    vectors_dir: &Path,
    launcher: &dyn Launcher,
) -> Result<u8, CommandError> {
    let err = |e: &dyn std::fmt::Display| CommandError(e.to_string());
    let settings = settings(args);
    let suites = campaign_suites(protocols, vectors_dir, &settings)?;
    let fuzzed: Vec<Arc<dyn Protocol>> = suites.iter().map(|(s, _)| s.protocol.clone()).collect();
    // A binding the fuzzed protocols do not declare would fuzz nothing of theirs: refused,
    // not run empty. Protocols with no bindings (SSP) ignore `--transport`.
    let declared = declared_bindings(&fuzzed);
    let undeclared = settings.transports.iter().find(|b| !declared.contains(b));
    if let (Some(b), false) = (undeclared, declared.is_empty()) {
        let known: Vec<&str> = declared.iter().map(|b| b.as_str()).collect();
        return Err(CommandError(format!(
            "--transport {b}: not a binding of the fuzzed protocols (known: {}, {})",
            known.join(", "),
            binding::EVERY
        )));
    }
    let opts = ConnectOptions {
        transports: settings.transports.clone(),
        profile_path: args.target.as_ref().map(|p| p.display().to_string()),
        tls: args.tls.clone(),
        time_scale: args.time_scale,
        ..ConnectOptions::default()
    };
    let command = command_line(args, settings.seed);
    say(
        launcher,
        &format!(
            "conform fuzz: seed {} for {:?} per protocol ({}) on {}",
            settings.seed,
            settings.duration,
            fuzzed
                .iter()
                .map(|p| p.name())
                .collect::<Vec<_>>()
                .join(", "),
            args.transport
        ),
        true,
    )?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| err(&e))?;
    let (report, shared) = rt.block_on(async {
        let target = match &args.target {
            Some(path) => {
                let profile = launcher.load_profile(path).map_err(|e| err(&e))?;
                connect(profile, &opts, &fuzzed)
                    .await
                    .map_err(|e| err(&e))?
            }
            None => launcher
                .spawn_reference(&opts, &fuzzed, &[])
                .await
                .map_err(|e| err(&e))?,
        };
        fuzz(target, suites, &settings, command).await
    })?;
    write_reports(&report, &args.out)?;
    for s in &shared {
        summarize(s, args.promote.as_deref(), launcher)?;
    }
    say(launcher, &report.failure_details(), false)?;
    say(launcher, &report.summary_table(), false)?;
    say(
        launcher,
        &format!("reports written to {}", args.out.display()),
        true,
    )?;
    Ok(u8::try_from(report.exit_code()).unwrap_or(2))
}

fn command_line(args: &FuzzArgs, seed: u64) -> String {
    let suite = match args.suite.as_str() {
        "all" => String::new(),
        s => format!(" --suite {}", crate::engine::repro::shell_quote(s)),
    };
    match &args.target {
        Some(p) => format!(
            "conform fuzz --target {}{suite} --seed {seed}",
            crate::engine::repro::shell_quote(&p.display().to_string()),
        ),
        None => format!("conform fuzz --spawn-reference{suite} --seed {seed}"),
    }
}

/// The same report set as `conform run` (issue 26).
fn write_reports(report: &Report, out: &Path) -> Result<(), CommandError> {
    report::write::write_all(report, out, report::write::Format::ALL, None)
        .map(|_| ())
        .map_err(|e| CommandError(e.to_string()))
}

/// Prints one campaign's numbers and promotes its findings when asked.
fn summarize(
    s: &Shared,
    promote: Option<&Path>,
    launcher: &dyn Launcher,
) -> Result<(), CommandError> {
    let Some(Ok(o)) = s.finished() else {
        return Ok(());
    };
    say(
        launcher,
        &format!(
            "{}: {} cases, {} requests in {:.1} s ({:.0} requests/s), {} distinct finding(s)",
            s.campaign().prefix(),
            o.cases,
            o.requests,
            o.elapsed.as_secs_f64(),
            o.rate(),
            o.findings.len()
        ),
        true,
    )?;
    if let Some(dir) = promote {
        let written = s
            .campaign()
            .promote(dir)
            .map_err(|e| CommandError(format!("--promote {}: {e}", dir.display())))?;
        match written {
            Some(what) => say(launcher, &what, true)?,
            None if o.findings.is_empty() => {}
            None => say(
                launcher,
                &format!(
                    "{}: its findings have no vector format; the report holds their reproductions",
                    s.campaign().prefix()
                ),
                true,
            )?,
        }
    }
    Ok(())
}

/// Writes `text` (and a newline) as the command's output; a reader that went away ends the
/// output quietly, another write error ends the command.
fn say(launcher: &dyn Launcher, text: &str, newline: bool) -> Result<(), CommandError> {
    let line = if newline {
        format!("{text}\n")
    } else {
        text.to_string()
    };
    launcher
        .out(&line)
        .map_err(|e| CommandError(format!("writing to standard output: {e}")))
}

#[cfg(test)]
#[expect(clippy::unwrap_used)] // tests: a panic is the failure report
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("60s").unwrap(), Duration::from_secs(60));
        assert_eq!(parse_duration("10m").unwrap(), Duration::from_secs(600));
        assert_eq!(parse_duration("30").unwrap(), Duration::from_secs(30));
        assert_eq!(parse_duration("250ms").unwrap(), Duration::from_millis(250));
        assert!(parse_duration("x").is_err());
        assert!(parse_duration("5d").is_err());
        assert!(parse_duration("18446744073709551615h").is_err());
    }
}
