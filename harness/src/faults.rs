//! Suite power (issue 6): how many seeded faults of the reference server the suite catches.
//!
//! For each fault of `reference_impl::faults::Fault` the runner spawns an in-process
//! reference server (its own port, its own in-memory database) with exactly that fault
//! switched on, runs the suites against it and records which checks failed. A fault is
//! **caught** when at least one failing check cites one of the fault's requirement IDs,
//! **caught elsewhere** when only checks citing other IDs fail, **missed** when nothing
//! fails. The fault-free reference is measured the same way and must fail nothing (a faulty
//! run's models only skip shrinking what they found: whether and on which rule they fail is
//! all a measurement keeps).
//!
//! A rule whose catalogue level is below MUST and REC (SHOULD, MAY) is reported by its checks as a
//! warning, never a failure (that is how the suite reports such rules to everyone): a fault
//! that only violates such rules and draws a warning on them is **caught as a warning**.
//! A fault violating a MUST rule must make a check *fail*; a mere warning is a gap.
//!
//! The harness uses `reference_impl` only to spawn servers and to read the fault catalogue
//! (names and requirement IDs); it never looks at the server's domain code.
//!
//! Scopes: [`Scope::Full`] runs every check of both suites against every faulty server
//! (the honest "caught elsewhere" picture, for the report); [`Scope::Targeted`] runs only
//! the checks citing the fault's IDs (plus every transport comparison when the fault cites
//! PV-TR-1), which is enough to decide "caught on its own IDs"; the test `faults_caught`
//! decides the same way with [`decide_fault`], which stops a run at its first catch;
//! [`Scope::Auto`] (the CLI default) runs targeted and re-measures in full only the faults
//! that were not caught.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use futures::StreamExt as _;
use reference_impl::faults::Fault;

use crate::capability::command::Launcher;
use crate::engine::counterexample::Counterexamples;
use crate::engine::protocol::Suite;
use crate::engine::report::power::cell;
pub use crate::engine::report::power::*;
use crate::engine::report::{CheckResult, Report};
use crate::engine::run::RunOptions;
use crate::engine::verdict::Verdict;
pub use crate::reference_runs::{PowerError, load_suites};
use crate::reference_runs::{failed, harness_errors, run_configured, with_verdict, write_files};

/// The seeded faults only a sequence of operations reveals (issue 10): every golden vector
/// misses them, the state-machine model (`parley/model/`) catches each on its own IDs
/// (`faults_caught`: `caught/<fault>` and `vectors-miss/<fault>`).
pub const SEQUENCE_ONLY: &[&str] = &[
    "second-reopen-refused",
    "reopen-transfers-authority",
    "forward-mark-after-reopen-refused",
    "confirm-after-reopen-ignored",
    "second-reopen-keeps-confirmation",
    "post-after-reopen-confirmed",
    "answer-reproposes-confirmed",
    "reply-to-earlier-message-keeps-awaiting",
    "inbox-hides-reopened-replies",
    "relock-after-reopen-missed",
    "read-thread-stale-after-reopen",
    "read-thread-drops-deep-replies",
    "expiry-never-reported",
    "support-capped-at-two",
    "supersede-chain-stops",
];

/// The seeded faults only concurrency reveals (issue 10, concurrent histories): the golden
/// vectors and the sequential model miss them, the history check (`parley/history/`)
/// catches each on its own IDs (`faults_caught`: `caught/<fault>` and
/// `sequential-misses/<fault>`).
pub const CONCURRENCY_ONLY: &[&str] = &[
    "mark-decides-on-stale-state",
    "post-decides-on-stale-thread",
];

/// The SSP seeded faults only a sequence of operations (or a combination of credential and
/// filter) reveals: the scripted SSP checks miss them, the SSP model (`ssp/model/`) catches
/// each on its own IDs (`faults_caught`: `caught/<fault>` and `vectors-miss/<fault>`).
pub const SSP_SEQUENCE_ONLY: &[&str] = &[
    "ssp-terminal-readable-by-others",
    "ssp-id-reused-after-result",
    "ssp-status-changes-after-result",
    "ssp-filter-leaks-private",
    "ssp-result-error-while-running",
];

/// The suites without their model and history checks (what the golden vectors alone catch).
pub fn without_models(suites: &[Suite]) -> Vec<Suite> {
    suites
        .iter()
        .map(|s| s.retain(|c| !c.id().starts_with("model/") && !c.id().starts_with("history/")))
        .collect()
}

/// The suites without their history checks (what one client at a time catches: the
/// vectors and the sequential model).
pub fn without_histories(suites: &[Suite]) -> Vec<Suite> {
    suites
        .iter()
        .map(|s| s.retain(|c| !c.id().starts_with("history/")))
        .collect()
}

/// Progress callback: (finished fault, done, total).
pub type FaultProgressFn = Arc<dyn Fn(&FaultResult, usize, usize) + Send + Sync>;

/// Options of a measurement.
#[derive(Clone)]
pub struct PowerOptions {
    /// `vectors/` directory (catalogues and vectors).
    pub vectors_dir: PathBuf,
    /// Fault names to measure (empty = the whole catalogue).
    pub faults: Vec<String>,
    /// Scope of each faulty run.
    pub scope: Scope,
    /// Faulty servers measured at the same time.
    pub parallel: usize,
    /// Concurrent checks inside one run.
    pub jobs: usize,
    /// Also measure the fault-free reference (full scope).
    pub clean: bool,
    /// Called after each fault.
    pub progress: Option<FaultProgressFn>,
}

impl std::fmt::Debug for PowerOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PowerOptions")
            .field("vectors_dir", &self.vectors_dir)
            .field("faults", &self.faults)
            .field("scope", &self.scope)
            .field("parallel", &self.parallel)
            .field("jobs", &self.jobs)
            .field("clean", &self.clean)
            .finish_non_exhaustive()
    }
}

impl Default for PowerOptions {
    fn default() -> Self {
        Self {
            vectors_dir: crate::engine::protocol::default_vectors_dir(),
            faults: Vec::new(),
            scope: Scope::Auto,
            parallel: 4,
            jobs: 8,
            clean: true,
            progress: None,
        }
    }
}

/// The faults to measure, in catalogue order.
pub fn select(names: &[String]) -> Result<Vec<Fault>, PowerError> {
    if names.is_empty() {
        return Ok(Fault::ALL.to_vec());
    }
    let mut wanted = BTreeSet::new();
    for n in names {
        wanted.insert(Fault::from_name(n).ok_or_else(|| PowerError::UnknownFault(n.clone()))?);
    }
    Ok(Fault::ALL
        .iter()
        .copied()
        .filter(|f| wanted.contains(f))
        .collect())
}

/// The checks of `suites` that can show `fault` on its own IDs: those citing one, and those
/// whose outcomes feed a derived check citing one (the cross-binding comparison).
pub fn targeted(suites: &[Suite], fault: Fault) -> Vec<Suite> {
    let ids: BTreeSet<&str> = fault.requirements().iter().copied().collect();
    let cites = |rs: &[String]| rs.iter().any(|r| ids.contains(r.as_str()));
    suites
        .iter()
        .map(|s| s.retain(|c| cites(c.requirements()) || cites(c.derived_requirements())))
        .filter(|s| !s.checks.is_empty())
        .collect()
}

fn all_checks(suites: &[Suite]) -> Vec<Suite> {
    suites.to_vec()
}

/// Spawns a demo reference server with `faults` on and runs `suites` against it. A faulty
/// run keeps each model's first failing sequence unshrunk: only whether and on which rule
/// a check failed is kept (shrinking replayed sequences for up to a minute per model, with
/// their expiry waits, and its result was thrown away); the fault-free run shrinks, so a
/// false failure there reads as a minimal counterexample. With `until`, the run stops at
/// the first result `until` accepts (the rest are `skipped`).
async fn run_reference(
    faults: &[&str],
    suites: &[Suite],
    jobs: usize,
    until: Option<Until>,
) -> Result<Report, String> {
    let mut config = reference_impl::Config::demo_in_memory();
    config.faults = faults.iter().map(|f| (*f).to_string()).collect();
    let (name, flags) = if faults.is_empty() {
        ("reference (fault-free)".to_string(), String::new())
    } else {
        (
            format!("reference with fault {}", faults.join(",")),
            faults.iter().map(|f| format!(" --fault {f}")).collect(),
        )
    };
    let counterexamples = if faults.is_empty() {
        Counterexamples::Shrunk
    } else {
        Counterexamples::AsFound
    };
    let mut opts = RunOptions {
        jobs,
        counterexamples,
        ..RunOptions::default()
    };
    if let Some(until) = until {
        let (tx, rx) = tokio::sync::watch::channel(false);
        opts.stop = Some(rx);
        opts.partial = vec!["stopped at the first catch".into()];
        opts.progress = Some(Arc::new(move |r: &CheckResult, _, _| {
            if until(r) {
                // A closed receiver only means the run already ended.
                let _ = tx.send(true);
            }
        }));
    }
    run_configured(config, (name, &flags), suites, opts).await
}

/// A result that ends a run early.
type Until = Arc<dyn Fn(&CheckResult) -> bool + Send + Sync>;

/// Whether `fault` is caught on its own IDs, decided as [`measure_fault`] with
/// [`Scope::Targeted`] decides it, but stopping the run at the first check that fails
/// citing them (the test `faults_caught` needs the decision, not every catching check):
/// the detection is the same, `caught_by` holds the catches seen before the stop. A fault
/// not caught runs every targeted check, as before.
pub async fn decide_fault(fault: Fault, suites: &[Suite], jobs: usize) -> FaultResult {
    let ids: BTreeSet<String> = fault.requirements().iter().map(|r| r.to_string()).collect();
    let until: Until = Arc::new(move |r: &CheckResult| match &r.verdict {
        Verdict::Fail(v) => v.requirements.iter().any(|id| ids.contains(id)),
        _ => false,
    });
    measure_once(fault, suites, targeted(suites, fault), jobs, Some(until)).await
}

/// Measures one fault against its own server.
pub async fn measure_fault(
    fault: Fault,
    suites: &[Suite],
    scope: Scope,
    jobs: usize,
) -> FaultResult {
    let started = Instant::now();
    let mut result = match scope {
        Scope::Full => measure_once(fault, suites, all_checks(suites), jobs, None).await,
        Scope::Targeted => measure_once(fault, suites, targeted(suites, fault), jobs, None).await,
        Scope::Auto => {
            let first = measure_once(fault, suites, targeted(suites, fault), jobs, None).await;
            if first.is_caught() {
                first
            } else {
                measure_once(fault, suites, all_checks(suites), jobs, None).await
            }
        }
    };
    result.wall_time_ms = started.elapsed().as_millis() as u64;
    result
}

async fn measure_once(
    fault: Fault,
    suites: &[Suite],
    selected: Vec<Suite>,
    jobs: usize,
    until: Option<Until>,
) -> FaultResult {
    let started = Instant::now();
    let ids: BTreeSet<&str> = fault.requirements().iter().copied().collect();
    let mut result = FaultResult {
        name: fault.name().into(),
        suite: fault.suite().into(),
        description: fault.description().into(),
        requirements: fault
            .requirements()
            .iter()
            .map(|r| (*r).to_string())
            .collect(),
        detection: Detection::Missed,
        violates_must: suites
            .iter()
            .any(|s| s.catalogue.any_required(fault.requirements())),
        checks_run: 0,
        caught_by: Vec::new(),
        failed_elsewhere: Vec::new(),
        warned_by: Vec::new(),
        harness_errors: 0,
        error: None,
        wall_time_ms: 0,
        report: None,
    };
    if selected.is_empty() {
        result.error = Some("no check cites the fault's requirement IDs".into());
    } else {
        match run_reference(&[fault.name()], &selected, jobs, until).await {
            Ok(report) => {
                result.checks_run = report.checks.len();
                result.harness_errors = harness_errors(&report).len();
                let cites =
                    |f: &FailedCheck| f.requirements.iter().any(|r| ids.contains(r.as_str()));
                let (own, other): (Vec<_>, Vec<_>) =
                    failed(&report).into_iter().partition(|f| cites(f));
                result.warned_by = with_verdict(&report, true)
                    .into_iter()
                    .filter(|f| cites(f))
                    .collect();
                result.detection = if !own.is_empty() {
                    Detection::Caught
                } else if !result.warned_by.is_empty() {
                    Detection::CaughtAsWarning
                } else if !other.is_empty() {
                    Detection::CaughtElsewhere
                } else {
                    Detection::Missed
                };
                result.caught_by = own;
                result.failed_elsewhere = other;
                result.report = Some(Box::new(report));
            }
            Err(e) => {
                result.detection = Detection::HarnessError;
                result.error = Some(e);
            }
        }
    }
    result.wall_time_ms = started.elapsed().as_millis() as u64;
    result
}

/// Measures the fault-free reference (every check).
pub async fn measure_clean(suites: &[Suite], jobs: usize) -> CleanRun {
    measure_clean_with_report(suites, jobs).await.0
}

/// [`measure_clean`], also returning the run's report (`conform faults` writes it out).
async fn measure_clean_with_report(suites: &[Suite], jobs: usize) -> (CleanRun, Option<Report>) {
    let started = Instant::now();
    let mut clean = CleanRun {
        checks_run: 0,
        failures: Vec::new(),
        harness_errors: Vec::new(),
        error: None,
        wall_time_ms: 0,
    };
    let report = match run_reference(&[], &all_checks(suites), jobs, None).await {
        Ok(report) => {
            clean.checks_run = report.checks.len();
            clean.failures = failed(&report);
            clean.harness_errors = harness_errors(&report);
            Some(report)
        }
        Err(e) => {
            clean.error = Some(e);
            None
        }
    };
    clean.wall_time_ms = started.elapsed().as_millis() as u64;
    (clean, report)
}

/// Measures the suite's power: every selected fault against its own server, at most
/// `parallel` at a time, plus the fault-free reference.
pub async fn measure(opts: &PowerOptions) -> Result<SuitePower, PowerError> {
    Ok(measure_with_report(opts).await?.0)
}

/// [`measure`], also returning the fault-free run's report (when `opts.clean`).
async fn measure_with_report(
    opts: &PowerOptions,
) -> Result<(SuitePower, Option<Report>), PowerError> {
    let started = Instant::now();
    let faults = select(&opts.faults)?;
    let suites = load_suites(&opts.vectors_dir)?;
    let total = faults.len();
    let jobs = opts.jobs.max(1);
    let clean = if opts.clean {
        Some(measure_clean_with_report(&suites, jobs))
    } else {
        None
    };
    let runs = futures::stream::iter(faults.iter().copied())
        .map(|f| measure_fault(f, &suites, opts.scope, jobs))
        .buffer_unordered(opts.parallel.max(1));
    // The clean run goes alongside the faulty ones (it is one more server).
    let (clean_run, mut results) = futures::join!(
        async {
            match clean {
                Some(c) => Some(c.await),
                None => None,
            }
        },
        async {
            let mut done = Vec::with_capacity(total);
            let mut runs = std::pin::pin!(runs);
            while let Some(r) = runs.next().await {
                done.push(r);
                if let Some(p) = &opts.progress
                    && let Some(last) = done.last()
                {
                    p(last, done.len(), total);
                }
            }
            done
        }
    );
    let order: BTreeMap<&str, usize> = Fault::ALL
        .iter()
        .enumerate()
        .map(|(i, f)| (f.name(), i))
        .collect();
    results.sort_by_key(|r| order.get(r.name.as_str()).copied().unwrap_or(usize::MAX));
    let count = |d: Detection| results.iter().filter(|r| r.detection == d).count();
    let (clean, clean_report) = match clean_run {
        Some((c, r)) => (Some(c), r),
        None => (None, None),
    };
    let power = SuitePower {
        format_version: POWER_FORMAT_VERSION,
        scope: opts.scope,
        total,
        caught: count(Detection::Caught),
        caught_as_warning: count(Detection::CaughtAsWarning),
        caught_elsewhere: count(Detection::CaughtElsewhere),
        missed: count(Detection::Missed),
        harness_errors: count(Detection::HarnessError),
        clean,
        requirements: requirement_rows(&suites, &results),
        faults: results,
        wall_time_ms: started.elapsed().as_millis() as u64,
        variants: None,
    };
    Ok((power, clean_report))
}

fn requirement_rows(suites: &[Suite], results: &[FaultResult]) -> Vec<RequirementPower> {
    let mut rows = Vec::new();
    for s in suites {
        for r in &s.catalogue.requirements {
            let tagged: Vec<&FaultResult> = results
                .iter()
                .filter(|f| f.requirements.contains(&r.id))
                .collect();
            let caught_by: Vec<String> = tagged
                .iter()
                .filter(|f| {
                    f.caught_by
                        .iter()
                        .chain(&f.warned_by)
                        .any(|c| c.requirements.contains(&r.id))
                })
                .map(|f| f.name.clone())
                .collect();
            let status = if tagged.is_empty() {
                RequirementPowerStatus::NoFault
            } else if caught_by.is_empty() {
                RequirementPowerStatus::NotCaught
            } else {
                RequirementPowerStatus::Caught
            };
            rows.push(RequirementPower {
                id: r.id.clone(),
                suite: s.name.clone(),
                faults: tagged.iter().map(|f| f.name.clone()).collect(),
                caught_by,
                status,
            });
        }
    }
    rows
}

/// `conform faults`: arguments (the CLI wires this in under the `faults` feature).
#[derive(Debug, Clone, clap::Args)]
pub struct FaultsArgs {
    /// Measure only this fault (repeatable; default: the whole catalogue).
    #[arg(long = "fault", value_name = "NAME")]
    pub faults: Vec<String>,
    /// Print the fault catalogue and exit.
    #[arg(long)]
    pub list: bool,
    /// Which checks run against each faulty server.
    #[arg(long, value_enum, default_value_t = Scope::Auto)]
    pub scope: Scope,
    /// Faulty servers measured at the same time.
    #[arg(long, value_name = "N", default_value_t = 4, value_parser = clap::value_parser!(u16).range(1..=64))]
    pub parallel: u16,
    /// Concurrent checks inside one run.
    #[arg(long, value_name = "N", default_value_t = 8, value_parser = clap::value_parser!(u16).range(1..=256))]
    pub jobs: u16,
    /// Skip the fault-free reference run.
    #[arg(long)]
    pub no_clean: bool,
    /// Skip the legal variants (measured with the faults when built with `variants`).
    #[cfg(feature = "variants")]
    #[arg(long)]
    pub no_variants: bool,
    /// Output directory: `suite-power.{json,md}` and the fault-free run report (`report.{json,md,html}`, `junit.xml`) with its suite-power section.
    #[arg(long, value_name = "DIR", default_value = "reports/faults")]
    pub out: PathBuf,
}

/// The fault catalogue as a Markdown table.
pub fn catalogue_markdown() -> String {
    let mut out = String::from(
        "| fault | suite | violates | what the broken server does |\n|---|---|---|---|\n",
    );
    for f in Fault::ALL {
        out.push_str(&format!(
            "| `{}` | {} | {} | {} |\n",
            f.name(),
            f.suite(),
            f.requirements().join(", "),
            cell(f.description())
        ));
    }
    out
}

/// The matrix's columns: each run's report, taken out of `power` (they are not part of the
/// document), named by its fault (or variant).
fn matrix_columns(power: &mut SuitePower) -> Vec<crate::reference_runs::Column> {
    let faults =
        (power.faults.iter_mut()).filter_map(|f| Some((f.name.clone(), *f.report.take()?, None)));
    #[cfg(feature = "variants")]
    let variants = (power
        .variants
        .iter_mut()
        .flat_map(|v| v.variants.iter_mut()))
    .filter_map(|v| Some((format!("variant {}", v.name), *v.report.take()?, None)));
    #[cfg(not(feature = "variants"))]
    let variants = std::iter::empty();
    faults.chain(variants).collect()
}

/// A fault's run with fewer checks than the fault-free run's `all` was targeted (only the
/// checks citing its IDs): its column says so, since every other requirement is untested.
fn mark_targeted(columns: &mut [crate::reference_runs::Column], all: usize) {
    for (_, report, _) in columns.iter_mut() {
        if report.checks.len() < all {
            (report.completeness.partial)
                .push("targeted: only the checks citing the fault's requirement IDs".into());
        }
    }
}

/// Runs `conform faults`: measures, writes `suite-power.json` and `.md` under `--out`,
/// prints the Markdown. Exit code 0 when every fault is caught on its own IDs and the
/// fault-free reference fails nothing, else 1.
pub fn execute(
    args: &FaultsArgs,
    vectors_dir: &Path,
    launcher: &'static dyn Launcher,
) -> Result<u8, PowerError> {
    if args.list {
        crate::reference_runs::print(&catalogue_markdown(), launcher)?;
        return Ok(0);
    }
    let progress: FaultProgressFn = Arc::new(|r: &FaultResult, done, total| {
        launcher.note(&format!(
            "[{done}/{total}] {} {} ({} ms)",
            r.detection.name(),
            r.name,
            r.wall_time_ms
        ));
    });
    let opts = PowerOptions {
        vectors_dir: vectors_dir.to_path_buf(),
        faults: args.faults.clone(),
        scope: args.scope,
        parallel: usize::from(args.parallel),
        jobs: usize::from(args.jobs),
        clean: !args.no_clean,
        progress: Some(progress),
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(PowerError::Runtime)?;
    let (mut power, clean_report) = rt.block_on(measure_with_report(&opts))?;
    // Issue 14: the suite-power section shows both numbers, faults caught and variants
    // accepted, when this build has the variant catalogue switched on.
    #[cfg(feature = "variants")]
    if !args.no_variants {
        let suites = load_suites(vectors_dir)?;
        let variants = crate::variants::select(&[])?;
        let progress = crate::variants::progress(launcher);
        power.variants = Some(rt.block_on(crate::variants::measure(
            &variants,
            &suites,
            opts.parallel,
            opts.jobs,
            Some(progress),
        )));
        // The Markdown and the exit code below include them.
    }
    let mut columns = matrix_columns(&mut power);
    let json = serde_json::to_string_pretty(&power).map_err(|e| PowerError::Io {
        path: args.out.join("suite-power.json"),
        source: std::io::Error::other(e),
    })?;
    let md = render_markdown(&power);
    let mut files = vec![("suite-power.json", json), ("suite-power.md", md.clone())];
    // The run report of the fault-free reference (measured above, or now with --no-clean),
    // carrying the suite-power section.
    let clean_report = match clean_report {
        Some(r) => Ok(r),
        None => {
            let suites = load_suites(vectors_dir)?;
            rt.block_on(run_reference(&[], &suites, usize::from(args.jobs), None))
        }
    };
    match clean_report {
        Ok(mut report) => {
            files.extend(clean_files(&mut report, &power, &args.out)?);
            mark_targeted(&mut columns, report.checks.len());
            let page = args.out.join("report.html");
            columns.insert(0, ("reference (fault-free)".into(), report, Some(page)));
        }
        Err(e) => launcher.note(&format!("warning: the clean run for report.* failed: {e}")),
    }
    write_files(&args.out, &files)?;
    crate::reference_runs::write_matrix_or_warn(&args.out, columns, "faults", launcher);
    crate::reference_runs::print(&md, launcher)?;
    Ok(if power.is_complete() { 0 } else { 1 })
}

/// The fault-free run's report files, carrying the suite-power section (`report` is left
/// without it, as the matrix shows the run itself).
fn clean_files(
    report: &mut Report,
    power: &SuitePower,
    out: &Path,
) -> Result<Vec<(&'static str, String)>, PowerError> {
    use crate::engine::report::{html, json, junit, markdown};
    report.suite_power = Some(power.clone());
    let rendered = json::render(report).map_err(|e| PowerError::Io {
        path: out.join("report.json"),
        source: std::io::Error::other(e),
    });
    let files = rendered.map(|json| {
        vec![
            ("report.json", json),
            ("junit.xml", junit::render(report)),
            ("report.md", markdown::render(report)),
            ("report.html", html::render(report)),
        ]
    });
    report.suite_power = None;
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(name: &str, detection: Detection, violates_must: bool) -> FaultResult {
        let hit = FailedCheck {
            id: "x@http".into(),
            requirements: vec!["PV-EN-2".into()],
            message: "m".into(),
        };
        FaultResult {
            name: name.into(),
            suite: "parley".into(),
            description: "d".into(),
            requirements: vec!["PV-EN-2".into()],
            detection,
            violates_must,
            checks_run: 3,
            caught_by: if detection == Detection::Caught {
                vec![hit.clone()]
            } else {
                vec![]
            },
            failed_elsewhere: vec![],
            warned_by: if detection == Detection::CaughtAsWarning {
                vec![hit]
            } else {
                vec![]
            },
            harness_errors: 0,
            error: None,
            wall_time_ms: 1,
            report: None,
        }
    }

    #[test]
    fn a_warning_catches_only_faults_below_must() {
        assert!(result("a", Detection::Caught, true).is_caught());
        assert!(result("b", Detection::CaughtAsWarning, false).is_caught());
        assert!(!result("c", Detection::CaughtAsWarning, true).is_caught());
        assert!(!result("d", Detection::CaughtElsewhere, false).is_caught());
        assert!(!result("e", Detection::Missed, false).is_caught());
    }

    #[test]
    fn markdown_section() {
        let faults = vec![
            result("a", Detection::Caught, true),
            result("e", Detection::Missed, true),
        ];
        let p = SuitePower {
            format_version: POWER_FORMAT_VERSION,
            scope: Scope::Targeted,
            total: 2,
            caught: 1,
            caught_as_warning: 0,
            caught_elsewhere: 0,
            missed: 1,
            harness_errors: 0,
            clean: Some(CleanRun {
                checks_run: 10,
                failures: vec![],
                harness_errors: vec![],
                error: None,
                wall_time_ms: 1,
            }),
            requirements: vec![RequirementPower {
                id: "PV-EN-2".into(),
                suite: "parley".into(),
                faults: vec!["a".into(), "e".into()],
                caught_by: vec!["a".into()],
                status: RequirementPowerStatus::Caught,
            }],
            faults,
            wall_time_ms: 5,
            variants: None,
        };
        assert!(!p.is_complete());
        let md = render_markdown(&p);
        assert!(
            md.contains("**1 of 2 seeded faults caught on their own requirement IDs (50%)**"),
            "{md}"
        );
        assert!(md.contains("| `e` | parley | PV-EN-2 | missed |"), "{md}");
        assert!(md.contains("no failure (no false failures)"), "{md}");
        assert!(catalogue_markdown().lines().count() > Fault::ALL.len());
    }

    #[test]
    fn unknown_fault_names_are_refused() {
        assert!(matches!(
            select(&["no-such-fault".into()]),
            Err(PowerError::UnknownFault(_))
        ));
        assert_eq!(select(&[]).map(|v| v.len()).ok(), Some(Fault::ALL.len()));
        assert_eq!(
            select(&["read-thread-flat".into()]).ok(),
            Some(vec![Fault::ReadThreadFlat])
        );
    }
}
