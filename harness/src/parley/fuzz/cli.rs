//! The `conform fuzz` command: arguments, the target, the run of the oracle checks and the
//! reports (the same formats and exit codes as `conform run`).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::engine::protocol::{CommandError, Launcher, Protocol, Suite, default_vectors_dir};
use crate::engine::report::{self, Report};
use crate::engine::requirements::Catalogue;
use crate::engine::run::{RunOptions, run};
use crate::engine::target::{ConnectOptions, Target};
use crate::transport::TransportKind;

use super::campaign::Settings;
use super::{Campaign, OracleCheck};

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
    /// How long to send hostile requests (`90s`, `10m`, `1h`; a bare number is seconds).
    #[arg(long, default_value = "60s", value_parser = parse_duration)]
    pub duration: Duration,
    /// RNG seed (default: from the clock; always printed, so a run can be replayed).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Binding(s) to fuzz.
    #[arg(long, value_parser = ["http", "mcp", "both"], default_value = "both")]
    pub transport: String,
    /// Output directory of the reports.
    #[arg(long, value_name = "DIR", default_value = "reports/fuzz")]
    pub out: PathBuf,
    /// Write every finding as a golden vector file into DIR (`fuzz-seed-<S>.json`; copy it
    /// into `vectors/parley/` to keep the case in the plain suite).
    #[arg(long, value_name = "DIR")]
    pub promote: Option<PathBuf>,
    /// `--ca-cert`/`--insecure` for an `https://` target.
    #[command(flatten)]
    pub tls: crate::transport::tls::TlsOptions,
}

/// `90s`, `10m`, `1h`, `250ms`, or a bare number of seconds.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (n, unit) = s.split_at(split);
    let n: u64 = n.parse().map_err(|_| format!("invalid duration {s:?}"))?;
    match unit {
        "" | "s" => Ok(Duration::from_secs(n)),
        "ms" => Ok(Duration::from_millis(n)),
        "m" => Ok(Duration::from_secs(n * 60)),
        "h" => Ok(Duration::from_secs(n * 3600)),
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
    let transports = match args.transport.as_str() {
        "http" => vec![TransportKind::Http],
        "mcp" => vec![TransportKind::Mcp],
        _ => vec![TransportKind::Http, TransportKind::Mcp],
    };
    Settings {
        duration: args.duration,
        seed,
        transports,
    }
}

/// Runs the oracle checks of one campaign against a prepared target.
pub async fn fuzz(
    target: Target,
    protocol: Arc<dyn Protocol>,
    catalogue: Catalogue,
    settings: Settings,
    command: String,
) -> Result<(Report, Arc<Campaign>), CommandError> {
    let transports = settings.transports.clone();
    let campaign = Campaign::new(settings);
    let suite = Suite::new(protocol, catalogue, OracleCheck::all(&campaign));
    let opts = RunOptions {
        filter: None,
        transports,
        jobs: 6,
        baseline: None,
        command,
        progress: None,
        shard: None,
    };
    let report = run(Arc::new(target), &[suite], &opts)
        .await
        .map_err(|e| CommandError(e.to_string()))?;
    Ok((report, campaign))
}

/// `conform fuzz`: exit 0 when no oracle failed, 1 when one did, 2 on errors.
pub fn execute(
    protocol: Arc<dyn Protocol>,
    args: &FuzzArgs,
    launcher: &dyn Launcher,
) -> Result<u8, CommandError> {
    let err = |e: &dyn std::fmt::Display| CommandError(e.to_string());
    let dir = default_vectors_dir();
    let catalogue = Catalogue::load(&dir.join("requirements/parley.toml")).map_err(|e| err(&e))?;
    let settings = settings(args);
    let protocols: Vec<Arc<dyn Protocol>> = vec![protocol.clone()];
    let opts = ConnectOptions {
        transports: settings.transports.clone(),
        profile_path: args.target.as_ref().map(|p| p.display().to_string()),
        tls: args.tls.clone(),
        ..ConnectOptions::default()
    };
    let command = match &args.target {
        Some(p) => format!(
            "conform fuzz --target {} --seed {}",
            report::shell_quote(&p.display().to_string()),
            settings.seed
        ),
        None => format!("conform fuzz --spawn-reference --seed {}", settings.seed),
    };
    println!(
        "conform fuzz: seed {} for {:?} on {}",
        settings.seed, settings.duration, args.transport
    );
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| err(&e))?;
    let (report, campaign) = rt.block_on(async {
        let target = match &args.target {
            Some(path) => {
                let profile = launcher.load_profile(path).map_err(|e| err(&e))?;
                crate::engine::protocol::connect(profile, &opts, &protocols)
                    .await
                    .map_err(|e| err(&e))?
            }
            None => launcher
                .spawn_reference(&opts, &protocols, &[])
                .await
                .map_err(|e| err(&e))?,
        };
        fuzz(target, protocol.clone(), catalogue, settings, command).await
    })?;
    std::fs::create_dir_all(&args.out).map_err(|e| err(&e))?;
    let json = report::json::render(&report).map_err(|e| err(&e))?;
    std::fs::write(args.out.join("report.json"), json).map_err(|e| err(&e))?;
    std::fs::write(
        args.out.join("report.md"),
        report::markdown::render(&report),
    )
    .map_err(|e| err(&e))?;
    if let (Some(dir), Some(Ok(o))) = (&args.promote, campaign.finished()) {
        promote(dir, o)?;
    }
    if let Some(Ok(o)) = campaign.finished() {
        println!(
            "{} cases, {} requests in {:.1} s ({:.0} requests/s), {} distinct finding(s)",
            o.cases,
            o.requests,
            o.elapsed.as_secs_f64(),
            o.rate(),
            o.findings.len()
        );
    }
    print!("{}", report.failure_details());
    print!("{}", report.summary_table());
    println!("reports written to {}", args.out.display());
    Ok(u8::try_from(report.exit_code()).unwrap_or(2))
}

/// Writes the findings of `o` as `DIR/fuzz-seed-<S>.json` (nothing when none has a request).
fn promote(dir: &std::path::Path, o: &super::campaign::Outcomes) -> Result<(), CommandError> {
    let err = |e: &dyn std::fmt::Display| CommandError(format!("--promote {}: {e}", dir.display()));
    let Some(file) = super::promote::vector_file(&o.findings, o.seed) else {
        println!("nothing to promote: no finding with a request of its own");
        return Ok(());
    };
    std::fs::create_dir_all(dir).map_err(|e| err(&e))?;
    let path = dir.join(format!("fuzz-seed-{}.json", o.seed));
    let text = serde_json::to_string_pretty(&file).map_err(|e| err(&e))?;
    std::fs::write(&path, text + "\n").map_err(|e| err(&e))?;
    let n = file["vectors"].as_array().map_or(0, Vec::len);
    println!("promoted {n} finding(s) to {}", path.display());
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a panic is the failure report
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
    }
}
