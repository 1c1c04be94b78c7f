//! The run: plan → execute → judge → [`Report`], for any mix of protocols and kinds of check.

use std::sync::Arc;
use std::time::Instant;

use super::baseline::{Baseline, BaselineError};
use super::binding::Binding;
use super::check::CheckOutcome;
use super::check::Stop;
use super::counterexample::Counterexamples;
use super::execute::{Done, execute};
use super::judge::{self, ReproContext};
use super::plan::{Filter, Job, offered, plan};
use super::protocol::{CheckRun, Suite, declared_bindings};
use super::report::completeness::Completeness;
use super::report::{BaselineInfo, CheckResult, REPORT_FORMAT_VERSION, Report, ToolInfo};
use super::shard::{self, Shard};
use super::target::{Target, TargetError};
use super::verdict::Verdict;

/// Progress callback: (finished result, done, total). `total` is the number of results the
/// report will hold: one per job and the derived ones ([`Protocol::judge_across`], e.g.
/// PV-TR-1 comparing two bindings), reported once every job has finished.
///
/// [`Protocol::judge_across`]: super::protocol::Protocol::judge_across
pub type ProgressFn = Arc<dyn Fn(&CheckResult, usize, usize) + Send + Sync>;

/// Options of one run.
#[derive(Clone)]
pub struct RunOptions {
    /// Glob over check ids and requirement IDs (`envelope/*`, `PV-ST-4`).
    pub filter: Option<String>,
    /// Bindings to run (those the target offers; empty = every binding the selected
    /// protocols declare).
    pub transports: Vec<Binding>,
    /// Concurrent checks.
    pub jobs: usize,
    /// Expected failures.
    pub baseline: Option<Baseline>,
    /// The `conform run …` prefix that re-targets the same server (for reproductions).
    pub command: String,
    /// Called after each check completes: (result, done, total).
    pub progress: Option<ProgressFn>,
    /// Run only this shard of the plan (`--shard k/n`).
    pub shard: Option<Shard>,
    /// Why the caller chose a partial run (`--partial`; a command that runs a subset by
    /// design): recorded in the report, where an incomplete run then does not fail. The
    /// selection flags (`filter`, `shard`, a single transport) are added by [`run`] itself.
    pub partial: Vec<String>,
    /// `--allow-stale-baseline`: an expected failure that passed does not fail the run.
    pub allow_stale_baseline: bool,
    /// Set to stop the run early (Ctrl-C): the report then holds the results so far, the
    /// rest `skipped`, and says it was interrupted.
    pub stop: Option<Stop>,
    /// Whether models shrink what they find (suite power takes the first failure found:
    /// it keeps only whether and on which rule a check failed).
    pub counterexamples: Counterexamples,
}

impl std::fmt::Debug for RunOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunOptions")
            .field("filter", &self.filter)
            .field("transports", &self.transports)
            .field("jobs", &self.jobs)
            .field("shard", &self.shard)
            .finish_non_exhaustive()
    }
}

impl Default for RunOptions {
    fn default() -> Self {
        Self {
            filter: None,
            transports: Vec::new(),
            jobs: 8,
            baseline: None,
            command: "conform run --spawn-reference".into(),
            progress: None,
            shard: None,
            partial: Vec::new(),
            allow_stale_baseline: false,
            stop: None,
            counterexamples: Counterexamples::Shrunk,
        }
    }
}

/// Every reason the run is partial by the user's choice: the caller's, then the selection
/// flags that leave checks out.
fn partial_reasons(opts: &RunOptions) -> Vec<String> {
    let mut out = opts.partial.clone();
    if let Some(f) = &opts.filter {
        out.push(format!("--filter {f}"));
    }
    if let Some(s) = opts.shard {
        out.push(format!("--shard {s}"));
    }
    if let [only] = opts.transports.as_slice() {
        out.push(format!("--transport {only}"));
    }
    out
}

/// Why a run could not produce a report (exit code 2).
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// Bad filter glob.
    #[error("invalid --filter: {0}")]
    Filter(String),
    /// Baseline problem.
    #[error(transparent)]
    Baseline(#[from] BaselineError),
    /// Target pre-flight.
    #[error(transparent)]
    Target(#[from] TargetError),
    /// Nothing selected.
    #[error("no check matches the selection{0}")]
    Empty(String),
}

/// Refuses a baseline entry that names no check of the selected suites (nor a derived one),
/// or a binding none of them declares. [`run`] calls it; a command calls it as well before
/// it connects, so that a bad baseline costs no pre-flight.
pub fn check_baseline(b: &Baseline, suites: &[Suite]) -> Result<(), RunError> {
    let mut all: Vec<String> = Vec::new();
    for s in suites {
        all.extend(s.checks.iter().map(|c| c.id().to_string()));
        all.extend(s.protocol.derived_ids(s));
    }
    let declared = declared_bindings(suites.iter().map(|s| &s.protocol));
    let unknown = b.unknown_bindings(&declared);
    if !unknown.is_empty() {
        let known: Vec<&str> = declared.iter().map(|b| b.as_str()).collect();
        return Err(BaselineError::UnknownBinding {
            entries: unknown,
            known: known.join(", "),
        }
        .into());
    }
    let stale = b.stale(all.iter().map(String::as_str));
    if stale.is_empty() {
        Ok(())
    } else {
        Err(BaselineError::Stale(stale).into())
    }
}

/// How many derived results the protocols will judge from the runs of `jobs`: which derived
/// checks there are depends on which runs exist (a vector run on both bindings), so a dry
/// [`Protocol::judge_across`] over blank outcomes counts them before anything runs.
///
/// [`Protocol::judge_across`]: super::protocol::Protocol::judge_across
fn derived_count(suites: &[Suite], jobs: &[Job]) -> usize {
    let blank = CheckOutcome::verdict(Verdict::Pass);
    let runs = |si: usize| -> Vec<CheckRun<'_>> {
        (jobs.iter().filter(|j| j.suite == si))
            .map(|j| CheckRun {
                check: &j.check,
                transport: j.transport,
                outcome: &blank,
            })
            .collect()
    };
    (suites.iter().enumerate())
        .map(|(si, s)| s.protocol.judge_across(s, &runs(si)).len())
        .sum()
}

/// The selected checks on the transports `target` offers, never none; the baseline checked
/// against the suites first.
fn planned(
    target: &Target,
    suites: &[Suite],
    opts: &RunOptions,
) -> Result<(Vec<Job>, Vec<Binding>), RunError> {
    let filter = Filter::new(opts.filter.as_deref()).map_err(RunError::Filter)?;
    let offered = offered(target, suites, &opts.transports);
    if let Some(b) = &opts.baseline {
        check_baseline(b, suites)?;
    }
    let jobs = plan(suites, &filter, &offered);
    if jobs.is_empty() {
        let f = opts.filter.as_ref();
        return Err(RunError::Empty(
            f.map(|f| format!(" (--filter {f})")).unwrap_or_default(),
        ));
    }
    Ok((jobs, offered))
}

/// Runs the selected checks of `suites` against `target`.
pub async fn run(
    target: Arc<Target>,
    suites: &[Suite],
    opts: &RunOptions,
) -> Result<Report, RunError> {
    let (jobs, offered) = planned(&target, suites, opts)?;
    // A shard may be empty (few checks, many shards): its report then merges as nothing.
    let planned = jobs.len();
    let (jobs, positions) = match opts.shard {
        Some(s) => s.jobs_of(jobs),
        None => (jobs, Vec::new()),
    };
    let started_at = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let started = Instant::now();
    let mut progress = Progress {
        done: 0,
        total: jobs.len()
            + match opts.progress {
                Some(_) => derived_count(suites, &jobs),
                None => 0,
            },
        report: opts.progress.as_ref(),
    };
    let (mut checks, done) = execute_judged(&target, suites, &jobs, opts, &mut progress).await;
    let wall = started.elapsed();
    let interrupted = opts.stop.as_ref().is_some_and(|s| *s.borrow());
    let derived = judge_across(suites, &jobs, &done);
    // The count made before the run, unless a protocol's derived checks depend on what the
    // runs produced: then the last lines carry the report's own total.
    progress.total = checks.len() + derived.len();
    derived.iter().for_each(|r| progress.tick(r));
    checks.extend(derived);
    if let Some(b) = &opts.baseline {
        judge::apply_baseline(b, &mut checks);
    }
    // What protocols exchange once per run outside any check (Parley's MCP handshake).
    let setup: u64 = (suites.iter())
        .map(|s| s.protocol.setup_exchanges(&target, &offered))
        .sum();
    let exchanges: u64 = done.iter().map(|d| d.outcome.exchange_count()).sum::<u64>() + setup;
    let secs = wall.as_secs_f64().max(1e-9);
    let shard_info = (opts.shard).map(|s| shard::info(s, planned, &positions, &checks, suites));
    let mut report = Report {
        format_version: REPORT_FORMAT_VERSION,
        tool: ToolInfo::default(),
        target: target.info.clone(),
        started_at,
        wall_time_ms: wall.as_millis() as u64,
        exchanges,
        exchanges_per_second: (exchanges as f64 / secs * 10.0).round() / 10.0,
        suites: suites.iter().map(|s| s.name.clone()).collect(),
        transports: offered,
        filter: opts.filter.clone(),
        jobs: opts.jobs.max(1),
        summary: Default::default(),
        completeness: Completeness {
            partial: partial_reasons(opts),
            ..Completeness::default()
        },
        requirements: Vec::new(),
        checks,
        baseline: opts.baseline.as_ref().map(|b| BaselineInfo {
            path: b.path.clone(),
            entries: b.entries.len(),
            allow_stale: opts.allow_stale_baseline,
        }),
        suite_power: None,
        shard: shard_info,
        interrupted,
        suite_digest: suites.iter().find_map(|s| s.digest.clone()),
        signature: None,
    };
    report.requirements = judge::matrix(suites, &report.checks);
    report.recount();
    Ok(report)
}

/// The progress callback and its count: (result, done, total) after each result.
struct Progress<'a> {
    done: usize,
    total: usize,
    report: Option<&'a ProgressFn>,
}

impl Progress<'_> {
    fn tick(&mut self, r: &CheckResult) {
        self.done += 1;
        if let Some(p) = self.report {
            p(r, self.done, self.total);
        }
    }
}

/// Executes `jobs` and judges each result as its job finishes (the progress callback shows
/// it); a job whose task vanished is judged afterwards from `execute`'s harness-error
/// outcome. The results in job order, and what each job produced.
async fn execute_judged(
    target: &Arc<Target>,
    suites: &[Suite],
    jobs: &[Job],
    opts: &RunOptions,
    progress: &mut Progress<'_>,
) -> (Vec<CheckResult>, Vec<Done>) {
    let secrets: Vec<_> = suites
        .iter()
        .flat_map(|s| s.protocol.secrets(target))
        .collect();
    let repro = ReproContext {
        target,
        command: &opts.command,
        secrets: &secrets,
    };
    let run_nonce = format!("r{:x}", chrono::Utc::now().timestamp_micros());
    let mut judged: Vec<Option<CheckResult>> = vec![None; jobs.len()];
    let done = execute(
        target,
        jobs,
        opts.jobs,
        &run_nonce,
        opts.counterexamples,
        opts.stop.clone(),
        |d| {
            let j = &jobs[d.order];
            let r = judge::result(&suites[j.suite], j, d, &repro);
            progress.tick(&r);
            judged[d.order] = Some(r);
        },
    )
    .await;
    let checks = judged
        .into_iter()
        .zip(jobs.iter().zip(&done))
        .map(|(r, (j, d))| {
            r.unwrap_or_else(|| {
                let r = judge::result(&suites[j.suite], j, d, &repro);
                progress.tick(&r);
                r
            })
        })
        .collect();
    (checks, done)
}

/// Each protocol's derived checks, judged from the finished runs of its suite.
fn judge_across(suites: &[Suite], jobs: &[Job], done: &[Done]) -> Vec<CheckResult> {
    let mut derived = Vec::new();
    for (si, s) in suites.iter().enumerate() {
        let runs: Vec<CheckRun<'_>> = jobs
            .iter()
            .zip(done)
            .filter(|(j, _)| j.suite == si)
            .map(|(j, d)| CheckRun {
                check: &j.check,
                transport: j.transport,
                outcome: &d.outcome,
            })
            .collect();
        derived.extend(s.protocol.judge_across(s, &runs));
    }
    derived
}
