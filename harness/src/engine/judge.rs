//! Judge: turn finished runs into report rows — one [`CheckResult`] per run with its
//! reproduction, the protocols' derived checks, baseline marks, and the requirement matrix.

use std::collections::HashMap;

use super::baseline::Baseline;
use super::binding::Binding;
use super::execute::Done;
use super::plan::Job;
use super::protocol::{Secret, Suite};
use super::report::{BaselineMark, CheckResult, MatrixStatus, Reproduction, RequirementRow};
use super::repro::{curl_command, shell_quote};
use super::requirements::Method;
use super::target::Target;
use super::verdict::{Cause, Verdict, Violation};

/// How reproductions are written for this run.
pub struct ReproContext<'a> {
    /// The target (revision, whether it is the spawned reference).
    pub target: &'a Target,
    /// The `conform run …` prefix re-targeting the same server.
    pub command: &'a str,
    /// Secrets the transcripts name by variable.
    pub secrets: &'a [Secret],
}

/// The report row of one finished job.
pub fn result(suite: &Suite, job: &Job, d: &Done, repro: &ReproContext<'_>) -> CheckResult {
    let check = job.check.as_ref();
    let id = match job.transport {
        Some(t) => format!("{}@{t}", check.id()),
        None => check.id().to_string(),
    };
    let reproduction = d
        .outcome
        .verdict
        .violation()
        .map(|v| reproduction(suite, check.id(), job.transport, v, repro));
    CheckResult {
        id,
        check: check.id().to_string(),
        suite: suite.name.clone(),
        area: check.area().to_string(),
        title: check.title().to_string(),
        transport: job.transport,
        requirements: check.requirements().to_vec(),
        required: check.advisory().is_none() && suite.catalogue.any_required(check.requirements()),
        verdict: d.outcome.verdict.clone(),
        baseline: None,
        duration_ms: d.duration_ms,
        exchanges: d.outcome.exchange_count(),
        self_test: check.self_test(),
        reproduction,
    }
}

fn reproduction(
    suite: &Suite,
    check: &str,
    transport: Option<Binding>,
    v: &Violation,
    repro: &ReproContext<'_>,
) -> Reproduction {
    let mut command = format!("{} --filter {}", repro.command, shell_quote(check));
    if let Some(t) = transport {
        command.push_str(&format!(" --transport {t}"));
        command.push_str(&suite.protocol.reproduce_on(repro.target, t));
    }
    let mut env: Vec<(String, String)> = Vec::new();
    for ex in &v.transcript {
        for (_, val) in &ex.request_headers {
            for s in repro.secrets {
                if val.contains(&format!("${{{}}}", s.env)) && !env.iter().any(|(k, _)| k == &s.env)
                {
                    // The reference's demo tokens are public; a user's own are never printed.
                    let shown = if repro.target.info.spawned_reference {
                        s.value.clone()
                    } else {
                        format!("<{} from your profile>", s.label)
                    };
                    env.push((s.env.clone(), shown));
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

/// Marks baseline-listed results: expected failures and unexpected passes.
pub fn apply_baseline(baseline: &Baseline, checks: &mut [CheckResult]) {
    for c in checks {
        if let Some(e) = baseline.lookup(&c.check, c.transport) {
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

/// Builds the requirement matrix of the selected suites from the results.
pub fn matrix(suites: &[Suite], checks: &[CheckResult]) -> Vec<RequirementRow> {
    let mut rows: Vec<RequirementRow> = suites
        .iter()
        .flat_map(|s| {
            s.catalogue.requirements.iter().map(|r| RequirementRow {
                id: r.id.clone(),
                suite: s.name.clone(),
                level: r.level,
                area: r.area.clone(),
                rule: r.rule.clone(),
                source: r.source.clone(),
                library: matches!(r.method, Some(Method::Val | Method::Cons)),
                status: MatrixStatus::Untested,
                checks: Vec::new(),
                passed: 0,
                failed: 0,
                warned: 0,
            })
        })
        .collect();
    judge_matrix(&mut rows, checks);
    rows
}

/// Judges each row of a requirement matrix (its catalogue fields kept) from the results
/// citing it: its status, counts and citing result ids. `conform merge` re-judges the
/// shards' matrix with it.
///
/// Issue 26's accounting: a failing result fails only the IDs it violated
/// ([`CheckResult::violated`]); a pass counts only with exchanges behind it, and so does a
/// warning of a check that ran to its end, for the IDs it does not name; a self-test
/// (conform's own validator) is no evidence at all; a requirement is `n/a` only when every
/// check citing it could not apply for the target's reasons, and `untested` whenever a check
/// was left unjudged (the profile's gap, a harness error, a failure on another ID).
pub fn judge_matrix(rows: &mut [RequirementRow], checks: &[CheckResult]) {
    let mut by_req: HashMap<&str, Evidence<'_>> = HashMap::new();
    for c in checks.iter().filter(|c| !c.self_test) {
        let violated = c.violated().unwrap_or_default();
        let ids = c.requirements.iter().chain(violated.iter());
        let mut met: Vec<&str> = Vec::new();
        for id in ids.map(String::as_str) {
            if met.contains(&id) {
                continue;
            }
            met.push(id);
            let e = by_req.entry(id).or_default();
            e.checks.push(&c.id);
            let blamed = violated.iter().any(|v| v == id);
            match &c.verdict {
                Verdict::Pass if c.exchanges > 0 => e.passed += 1,
                Verdict::Fail(_) if blamed => e.failed += 1,
                Verdict::Warn(_) if blamed => e.warned += 1,
                // A check that ran to its end judged the rules its warning does not name.
                Verdict::Warn(v) if v.completed && c.exchanges > 0 => e.passed += 1,
                Verdict::Unsupported {
                    cause: Cause::Target,
                    ..
                } => e.not_applicable += 1,
                _ => e.unjudged += 1,
            }
        }
    }
    for row in rows {
        let e = by_req.remove(row.id.as_str()).unwrap_or_default();
        row.status = if e.failed > 0 {
            MatrixStatus::Fail
        } else if e.warned > 0 {
            MatrixStatus::Warn
        } else if e.passed > 0 {
            MatrixStatus::Pass
        } else if e.not_applicable > 0 && e.unjudged == 0 {
            MatrixStatus::NotApplicable
        } else if row.library && e.checks.is_empty() {
            // Only conform's self-tests cite it: a library rule says nothing of a server.
            MatrixStatus::NotApplicable
        } else {
            MatrixStatus::Untested
        };
        row.checks = e.checks.iter().map(|c| (*c).to_string()).collect();
        (row.passed, row.failed, row.warned) = (e.passed, e.failed, e.warned);
    }
}

/// What the results citing one requirement say about it.
#[derive(Default)]
struct Evidence<'a> {
    checks: Vec<&'a str>,
    passed: usize,
    failed: usize,
    warned: usize,
    not_applicable: usize,
    unjudged: usize,
}
