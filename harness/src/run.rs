//! The run: plan (suites × checks × transports), bounded concurrent execution, PV-TR-1
//! comparison, baseline, matrix → [`Report`].

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Instant;

use futures::FutureExt as _;
use globset::{Glob, GlobMatcher};
use serde_json::json;
use tokio::sync::Semaphore;

use crate::baseline::{Baseline, BaselineError};
use crate::report::{
    BaselineInfo, BaselineMark, CheckResult, MatrixStatus, REPORT_FORMAT_VERSION, Report,
    Reproduction, RequirementRow, ToolInfo, curl_command,
};
use crate::suite::{Bindings, Check, CheckCtx, CheckOutcome, Suite};
use crate::target::{Target, TargetError};
use crate::transport::{Auth, TransportKind};
use crate::vectors::model::Role;
use crate::vectors::runner::StepSignature;
use crate::verdict::{Verdict, Violation};

/// Progress callback: (finished result, done, total).
pub type ProgressFn = Arc<dyn Fn(&CheckResult, usize, usize) + Send + Sync>;

/// Options of one run.
#[derive(Clone)]
pub struct RunOptions {
    /// Glob over check ids and requirement IDs (`envelope/*`, `PV-ST-4`).
    pub filter: Option<String>,
    /// Transports to run (those the target offers).
    pub transports: Vec<TransportKind>,
    /// Concurrent checks.
    pub jobs: usize,
    /// Expected failures.
    pub baseline: Option<Baseline>,
    /// The `conform run …` prefix that re-targets the same server (for reproductions).
    pub command: String,
    /// Called after each check completes: (result, done, total).
    pub progress: Option<ProgressFn>,
}

impl std::fmt::Debug for RunOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunOptions")
            .field("filter", &self.filter)
            .field("transports", &self.transports)
            .field("jobs", &self.jobs)
            .finish_non_exhaustive()
    }
}

impl Default for RunOptions {
    fn default() -> Self {
        Self {
            filter: None,
            transports: vec![TransportKind::Http, TransportKind::Mcp],
            jobs: 8,
            baseline: None,
            command: "conform run --spawn-reference".into(),
            progress: None,
        }
    }
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

struct Job {
    suite: usize,
    check: Arc<dyn Check>,
    transport: Option<TransportKind>,
    order: usize,
}

struct Done {
    order: usize,
    outcome: CheckOutcome,
    duration_ms: u64,
}

fn filter_matcher(filter: &Option<String>) -> Result<Option<GlobMatcher>, RunError> {
    filter
        .as_ref()
        .map(|f| {
            Glob::new(f)
                .map(|g| g.compile_matcher())
                .map_err(|e| RunError::Filter(e.to_string()))
        })
        .transpose()
}

fn selected(m: &Option<GlobMatcher>, check: &dyn Check) -> bool {
    match m {
        None => true,
        Some(m) => m.is_match(check.id()) || check.requirements().iter().any(|r| m.is_match(r)),
    }
}

/// Verifies the MCP endpoint answers a tool call (pre-flight for MCP runs).
pub async fn preflight_mcp(target: &Target) -> Result<(), TargetError> {
    let role = Role::ALL
        .into_iter()
        .find(|r| *r != Role::Anonymous && target.auth(*r).is_some());
    let auth = role.and_then(|r| target.auth(r)).unwrap_or(Auth::None);
    let fail = |m: String| TargetError::Preflight {
        base_url: target.info.mcp_url.clone(),
        problems: vec![m],
    };
    let reply = target
        .mcp
        .call("whoami", &json!({}), &auth)
        .await
        .map_err(|e| fail(format!("MCP whoami: {e}")))?;
    let ok = reply
        .json
        .as_ref()
        .and_then(|m| m.pointer("/result/isError"))
        .and_then(serde_json::Value::as_bool)
        == Some(false)
        || reply
            .json
            .as_ref()
            .is_some_and(|m| m.get("result").is_some_and(|r| r.get("isError").is_none()));
    if ok {
        Ok(())
    } else {
        Err(fail(format!(
            "MCP {} whoami did not return a tool result (HTTP {}): {}",
            target.info.mcp_revision,
            reply.http_status,
            reply.text.chars().take(300).collect::<String>()
        )))
    }
}

/// Runs the selected checks of `suites` against `target`.
pub async fn run(
    target: Arc<Target>,
    suites: &[Suite],
    opts: &RunOptions,
) -> Result<Report, RunError> {
    let matcher = filter_matcher(&opts.filter)?;
    let offered: Vec<TransportKind> = opts
        .transports
        .iter()
        .copied()
        .filter(|k| target.manifest.offers(*k))
        .collect();
    // Only Parley checks speak MCP; an SSP-only run has no Parley endpoint to pre-flight.
    if offered.contains(&TransportKind::Mcp) && suites.iter().any(|s| s.name == "parley") {
        preflight_mcp(&target).await?;
    }
    if let Some(b) = &opts.baseline {
        let mut all: Vec<String> = Vec::new();
        for s in suites {
            for c in &s.checks {
                all.push(c.id().to_string());
                if c.compare_transports() {
                    all.push(format!("PV-TR-1/{}", c.id()));
                }
            }
        }
        let stale = b.stale(all.iter().map(String::as_str));
        if !stale.is_empty() {
            return Err(BaselineError::Stale(stale).into());
        }
    }

    // Plan.
    let mut jobs = Vec::new();
    for (si, s) in suites.iter().enumerate() {
        for c in &s.checks {
            if !selected(&matcher, c.as_ref()) {
                continue;
            }
            match c.bindings() {
                Bindings::Once => jobs.push(Job {
                    suite: si,
                    check: c.clone(),
                    transport: None,
                    order: jobs.len(),
                }),
                Bindings::Each(ks) => {
                    for k in ks.iter().filter(|k| offered.contains(k)) {
                        jobs.push(Job {
                            suite: si,
                            check: c.clone(),
                            transport: Some(*k),
                            order: jobs.len(),
                        });
                    }
                }
            }
        }
    }
    if jobs.is_empty() {
        return Err(RunError::Empty(
            opts.filter
                .as_ref()
                .map(|f| format!(" (--filter {f})"))
                .unwrap_or_default(),
        ));
    }

    // Execute.
    let run_nonce = format!("r{:x}", chrono::Utc::now().timestamp_micros());
    let started_at = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let started = Instant::now();
    let total = jobs.len();
    let jobs_n = opts.jobs.max(1);
    let sem = Arc::new(Semaphore::new(jobs_n));
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Done>();
    let (exclusive, shared): (Vec<Job>, Vec<Job>) = jobs
        .iter()
        .map(|j| Job {
            suite: j.suite,
            check: j.check.clone(),
            transport: j.transport,
            order: j.order,
        })
        .partition(|j| j.check.exclusive());
    let spawn_job = |job: Job| {
        let ctx = CheckCtx {
            target: target.clone(),
            transport: job.transport,
            run_nonce: run_nonce.clone(),
        };
        let tx = tx.clone();
        let sem = sem.clone();
        tokio::spawn(async move {
            let _permit = sem.acquire_owned().await;
            let t0 = Instant::now();
            // A panicking check becomes a harness error instead of a lost result.
            let outcome = std::panic::AssertUnwindSafe(job.check.run(&ctx))
                .catch_unwind()
                .await
                .unwrap_or_else(|_| {
                    CheckOutcome::verdict(Verdict::HarnessError {
                        message: "the check panicked".into(),
                    })
                });
            let _ = tx.send(Done {
                order: job.order,
                outcome,
                duration_ms: t0.elapsed().as_millis() as u64,
            });
        })
    };
    let mut results: BTreeMap<usize, Done> = BTreeMap::new();
    let mut partial: Vec<Option<CheckResult>> = (0..total).map(|_| None).collect();
    let mut done_count = 0usize;
    let mut drain =
        |d: Done, results: &mut BTreeMap<usize, Done>, partial: &mut Vec<Option<CheckResult>>| {
            done_count += 1;
            let j = &jobs[d.order];
            let r = make_result(
                &suites[j.suite],
                j.check.as_ref(),
                j.transport,
                &d,
                &target,
                opts,
            );
            if let Some(p) = &opts.progress {
                p(&r, done_count, total);
            }
            partial[d.order] = Some(r);
            results.insert(d.order, d);
        };
    let shared_n = shared.len();
    for job in shared {
        spawn_job(job);
    }
    for _ in 0..shared_n {
        match rx.recv().await {
            Some(d) => drain(d, &mut results, &mut partial),
            None => break,
        }
    }
    for job in exclusive {
        // Exclusive checks run alone: one at a time, after the concurrent ones.
        spawn_job(job);
        if let Some(d) = rx.recv().await {
            drain(d, &mut results, &mut partial);
        }
    }
    drop(tx);
    let mut handshake = 0u64;
    if offered.contains(&TransportKind::Mcp) {
        handshake = 2;
    }
    let wall = started.elapsed();

    // Results in plan order; a panicked check is a harness error.
    let mut checks: Vec<CheckResult> = Vec::with_capacity(total + total / 2);
    for (i, j) in jobs.iter().enumerate() {
        match partial[i].take() {
            Some(r) => checks.push(r),
            None => {
                let d = Done {
                    order: i,
                    outcome: CheckOutcome::verdict(Verdict::HarnessError {
                        message: "the check panicked".into(),
                    }),
                    duration_ms: 0,
                };
                checks.push(make_result(
                    &suites[j.suite],
                    j.check.as_ref(),
                    j.transport,
                    &d,
                    &target,
                    opts,
                ));
            }
        }
    }

    // PV-TR-1: the two bindings' outcomes of every vector that ran on both.
    let mut sigs: HashMap<(String, TransportKind), (&Vec<StepSignature>, usize)> = HashMap::new();
    for (i, j) in jobs.iter().enumerate() {
        if let (Some(t), true, Some(d)) =
            (j.transport, j.check.compare_transports(), results.get(&i))
        {
            sigs.insert((j.check.id().to_string(), t), (&d.outcome.steps, j.suite));
        }
    }
    let mut seen_cmp = std::collections::BTreeSet::new();
    for j in &jobs {
        let id = j.check.id().to_string();
        if !j.check.compare_transports() || !seen_cmp.insert(id.clone()) {
            continue;
        }
        let (Some((h, si)), Some((m, _))) = (
            sigs.get(&(id.clone(), TransportKind::Http)),
            sigs.get(&(id.clone(), TransportKind::Mcp)),
        ) else {
            continue;
        };
        let suite = &suites[*si];
        if suite.catalogue.get("PV-TR-1").is_none() {
            continue;
        }
        let verdict = compare(&id, h, m);
        checks.push(CheckResult {
            id: format!("PV-TR-1/{id}"),
            check: format!("PV-TR-1/{id}"),
            suite: suite.name.clone(),
            area: "transport".into(),
            title: format!("HTTP and MCP agree on {id}"),
            transport: None,
            requirements: vec!["PV-TR-1".into()],
            required: suite.catalogue.any_required(&["PV-TR-1"]),
            verdict,
            baseline: None,
            duration_ms: 0,
            exchanges: 0,
            reproduction: None,
        });
    }

    // Baseline.
    if let Some(b) = &opts.baseline {
        for c in &mut checks {
            if let Some(e) = b.lookup(&c.check, c.transport) {
                c.baseline = match &c.verdict {
                    Verdict::Pass => Some(BaselineMark::UnexpectedPass {
                        reason: e.reason.clone(),
                    }),
                    Verdict::Fail(_) | Verdict::Warn(_) => Some(BaselineMark::ExpectedFailure {
                        reason: e.reason.clone(),
                    }),
                    _ => None,
                };
            }
        }
    }

    let exchanges: u64 = results
        .values()
        .map(|d| d.outcome.exchanges.len() as u64)
        .sum::<u64>()
        + handshake;
    let secs = wall.as_secs_f64().max(1e-9);
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
        jobs: jobs_n,
        summary: Default::default(),
        requirements: Vec::new(),
        checks,
        baseline: opts.baseline.as_ref().map(|b| BaselineInfo {
            path: b.path.clone(),
            entries: b.entries.len(),
        }),
        suite_power: None,
    };
    report.requirements = matrix(suites, &report.checks);
    report.recount();
    Ok(report)
}

fn make_result(
    suite: &Suite,
    check: &dyn Check,
    transport: Option<TransportKind>,
    d: &Done,
    target: &Target,
    opts: &RunOptions,
) -> CheckResult {
    let id = match transport {
        Some(t) => format!("{}@{t}", check.id()),
        None => check.id().to_string(),
    };
    let reproduction = d
        .outcome
        .verdict
        .violation()
        .map(|v| reproduction(check.id(), transport, v, target, opts));
    CheckResult {
        id,
        check: check.id().to_string(),
        suite: suite.name.clone(),
        area: check.area().to_string(),
        title: check.title().to_string(),
        transport,
        requirements: check.requirements().to_vec(),
        required: suite.catalogue.any_required(check.requirements()),
        verdict: d.outcome.verdict.clone(),
        baseline: None,
        duration_ms: d.duration_ms,
        exchanges: d.outcome.exchanges.len() as u64,
        reproduction,
    }
}

fn reproduction(
    check: &str,
    transport: Option<TransportKind>,
    v: &Violation,
    target: &Target,
    opts: &RunOptions,
) -> Reproduction {
    let mut command = format!(
        "{} --filter {}",
        opts.command,
        crate::report::shell_quote(check)
    );
    if let Some(t) = transport {
        command.push_str(&format!(" --transport {t}"));
        if t == TransportKind::Mcp {
            command.push_str(&format!(" --mcp-revision {}", target.info.mcp_revision));
        }
    }
    let mut env = Vec::new();
    for ex in &v.transcript {
        for (_, val) in &ex.request_headers {
            for role in Role::ALL {
                let var = role.token_env();
                if val.contains(&format!("${{{var}}}"))
                    && !env.iter().any(|(k, _): &(String, String)| k == &var)
                {
                    let shown = if target.info.spawned_reference {
                        target
                            .profile
                            .tokens
                            .get(&role)
                            .cloned()
                            .unwrap_or_default()
                    } else {
                        format!("<{role} token from your profile>")
                    };
                    env.push((var, shown));
                }
            }
        }
    }
    Reproduction {
        command,
        env,
        curl: v.transcript.iter().map(curl_command).collect(),
    }
}

/// Compares the step signatures of one vector on HTTP and MCP (PV-TR-1).
pub fn compare(id: &str, http: &[StepSignature], mcp: &[StepSignature]) -> Verdict {
    let n = http.len().min(mcp.len());
    for i in 0..n {
        let (h, m) = (&http[i], &mcp[i]);
        let same = h.class == m.class
            && h.reason == m.reason
            && (h.class != "refusal" || h.status == m.status)
            && (h.body.is_none() || m.body.is_none() || h.body == m.body);
        if !same {
            let (hv, mv) = (
                serde_json::to_value(h).unwrap_or_default(),
                serde_json::to_value(m).unwrap_or_default(),
            );
            let pointer = if h.class == m.class && h.body != m.body {
                "/body"
            } else {
                ""
            };
            return Verdict::Fail(Violation {
                check: format!("PV-TR-1/{id}"),
                requirements: vec!["PV-TR-1".into()],
                step: Some(h.step),
                pointer: pointer.into(),
                expected: json!({"http": hv}),
                observed: json!({"mcp": mv}),
                message: format!(
                    "step {}: the MCP outcome differs from the HTTP outcome",
                    h.step
                ),
                transcript: Vec::new(),
            });
        }
    }
    if http.len() != mcp.len() {
        return Verdict::Fail(Violation {
            check: format!("PV-TR-1/{id}"),
            requirements: vec!["PV-TR-1".into()],
            step: Some(n + 1),
            pointer: String::new(),
            expected: json!({"http_steps": http.len()}),
            observed: json!({"mcp_steps": mcp.len()}),
            message: "the vector stopped at a different step on each binding".into(),
            transcript: Vec::new(),
        });
    }
    Verdict::Pass
}

/// Builds the requirement matrix of the selected suites from the results.
pub fn matrix(suites: &[Suite], checks: &[CheckResult]) -> Vec<RequirementRow> {
    let mut by_req: HashMap<&str, Vec<&CheckResult>> = HashMap::new();
    for c in checks {
        for r in &c.requirements {
            by_req.entry(r.as_str()).or_default().push(c);
        }
    }
    let mut rows = Vec::new();
    for s in suites {
        for r in &s.catalogue.requirements {
            let cs = by_req.get(r.id.as_str()).cloned().unwrap_or_default();
            let passed = cs.iter().filter(|c| c.verdict.is_pass()).count();
            let failed = cs
                .iter()
                .filter(|c| matches!(c.verdict, Verdict::Fail(_) | Verdict::HarnessError { .. }))
                .count();
            let warned = cs
                .iter()
                .filter(|c| matches!(c.verdict, Verdict::Warn(_)))
                .count();
            let status = if cs.is_empty() {
                MatrixStatus::Untested
            } else if failed > 0 {
                MatrixStatus::Fail
            } else if warned > 0 {
                MatrixStatus::Warn
            } else if passed > 0 {
                MatrixStatus::Pass
            } else {
                MatrixStatus::NotApplicable
            };
            rows.push(RequirementRow {
                id: r.id.clone(),
                suite: s.name.clone(),
                level: r.level,
                area: r.area.clone(),
                rule: r.rule.clone(),
                source: r.source.clone(),
                status,
                checks: cs.iter().map(|c| c.id.clone()).collect(),
                passed,
                failed,
                warned,
            });
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vectors::runner::normalise;

    fn sig(
        step: usize,
        class: &str,
        reason: Option<&str>,
        body: Option<serde_json::Value>,
    ) -> StepSignature {
        StepSignature {
            step,
            class: class.into(),
            status: reason.map(|_| 409),
            reason: reason.map(str::to_string),
            body,
        }
    }

    #[test]
    fn pv_tr_1_comparison() {
        let mut ids_h = HashMap::new();
        let mut ids_m = HashMap::new();
        let h_body = normalise(
            &json!({"thread": {"id": "th_3", "created_at": "2026-11-30T04:00:00Z"}}),
            &mut ids_h,
        );
        let m_body = normalise(
            &json!({"thread": {"id": "th_91", "created_at": "2026-11-30T04:00:07Z"}}),
            &mut ids_m,
        );
        let h = vec![
            sig(1, "success", None, Some(h_body.clone())),
            sig(2, "refusal", Some("thread_locked"), None),
        ];
        let m = vec![
            sig(1, "success", None, Some(m_body)),
            sig(2, "refusal", Some("thread_locked"), None),
        ];
        assert_eq!(
            compare("v", &h, &m),
            Verdict::Pass,
            "ids and times are normalised"
        );
        let m2 = vec![
            sig(1, "success", None, Some(h_body.clone())),
            sig(2, "refusal", Some("invalid_transition"), None),
        ];
        let Verdict::Fail(v) = compare("v", &h, &m2) else {
            panic!("a different reason must fail PV-TR-1")
        };
        assert_eq!(
            (v.step, v.requirements),
            (Some(2), vec!["PV-TR-1".to_string()])
        );
        let m3 = vec![sig(
            1,
            "success",
            None,
            Some(json!({"thread": {"id": "<th#1>", "created_at": "<time>", "x": 1}})),
        )];
        let Verdict::Fail(v) = compare("v", &h[..1], &m3) else {
            panic!("a different body must fail PV-TR-1")
        };
        assert_eq!(v.pointer, "/body");
    }
}
