//! `conform diff OLD NEW`: what changed between two reports — per result (new failures,
//! fixes, checks added and removed…), per requirement (matrix status changes), and per check
//! and area in duration — and whether that is a regression.
//!
//! The rules (README, "`conform diff`"):
//! - **regression** (exit 1): a result that fails the run in NEW (a `fail` not expected by
//!   the baseline) and did not in OLD, absent from OLD included; a MUST/REC requirement whose
//!   status becomes `fail` because of such a result; with `--fail-on-warn`, a result or a
//!   requirement that newly warns; with `--latency-threshold`, a latency regression.
//! - **not a regression**, listed: fixes; results the baseline now expects (a reviewed,
//!   reasoned entry); coverage lost (a result becoming `unsupported`/`skipped`, a requirement
//!   becoming `n/a`/`untested`: the target or the selection changed, not its behaviour);
//!   harness errors (they judge nothing — the NEW run exits 2 on its own); checks added or
//!   removed; other verdict changes.

mod markdown;
#[cfg(test)]
pub(crate) mod tests;

use std::collections::{BTreeMap, BTreeSet};

use super::report::{BaselineMark, CheckResult, MatrixStatus, Report, RequirementRow};
use super::requirements::Level;
use super::verdict::Verdict;

/// When a duration is a latency regression: slower by more than `percent` **and** by at
/// least `min_delta_ms` (so that noise on a 2 ms check never flags).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LatencyRule {
    /// Relative threshold, in percent of the OLD duration.
    pub percent: f64,
    /// Absolute threshold, in milliseconds.
    pub min_delta_ms: u64,
}

impl LatencyRule {
    /// Whether going from `old` to `new` milliseconds is a regression.
    pub fn regressed(&self, old: u64, new: u64) -> bool {
        new >= old.saturating_add(self.min_delta_ms)
            && new as f64 > old as f64 * (1.0 + self.percent / 100.0)
    }
}

/// Parses `50%` or `50` as a percentage (> 0).
pub fn parse_percent(s: &str) -> Result<f64, String> {
    let v: f64 = (s.trim().trim_end_matches('%').trim())
        .parse()
        .map_err(|_| format!("{s:?} is not a percentage (e.g. 50%)"))?;
    if v.is_finite() && v > 0.0 {
        Ok(v)
    } else {
        Err(format!("{s:?}: the percentage must be above 0"))
    }
}

/// Options of a diff.
#[derive(Debug, Clone, PartialEq)]
pub struct DiffOptions {
    /// Compare durations (off when `None`).
    pub latency: Option<LatencyRule>,
    /// New warnings are regressions too.
    pub fail_on_warn: bool,
    /// Rows per table in the Markdown (0 = all).
    pub max_rows: usize,
}

impl Default for DiffOptions {
    fn default() -> Self {
        Self {
            latency: None,
            fail_on_warn: false,
            max_rows: 100,
        }
    }
}

/// What a result was in one report, as far as a diff cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum State {
    /// Not in the report.
    Absent,
    /// `pass` (unexpected passes included).
    Pass,
    /// A `fail` that fails the run.
    Fail,
    /// A `fail` or `warn` the baseline expects.
    ExpectedFailure,
    /// `warn`.
    Warn,
    /// `unsupported`.
    Unsupported,
    /// `skipped`.
    Skipped,
    /// `harness_error`.
    HarnessError,
}

impl State {
    /// The state of a result (`None` = absent).
    pub fn of(c: Option<&CheckResult>) -> Self {
        let Some(c) = c else { return Self::Absent };
        if matches!(c.baseline, Some(BaselineMark::ExpectedFailure { .. })) {
            return Self::ExpectedFailure;
        }
        match c.verdict {
            Verdict::Pass => Self::Pass,
            Verdict::Fail(_) => Self::Fail,
            Verdict::Warn(_) => Self::Warn,
            Verdict::Unsupported { .. } => Self::Unsupported,
            Verdict::Skipped { .. } => Self::Skipped,
            Verdict::HarnessError { .. } => Self::HarnessError,
        }
    }

    /// Display name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Absent => "absent",
            Self::Pass => "pass",
            Self::Fail => "fail",
            Self::ExpectedFailure => "expected_failure",
            Self::Warn => "warn",
            Self::Unsupported => "unsupported",
            Self::Skipped => "skipped",
            Self::HarnessError => "harness_error",
        }
    }
}

/// How a result changed (a result absent from one report is also listed as added/removed).
/// The order is the order of the Markdown sections.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    /// Fails the run in NEW, did not in OLD: a regression.
    NewFailure,
    /// Warns in NEW, did not (and did not fail) in OLD.
    NewWarning,
    /// Failed or warned (expected or not) in OLD, passes in NEW.
    Fixed,
    /// Now expected by the baseline.
    Baselined,
    /// Judged in OLD, `unsupported`/`skipped` in NEW.
    CoverageLost,
    /// Unjudged in OLD, passes in NEW.
    CoverageGained,
    /// A new harness error.
    HarnessError,
    /// Any other change (e.g. `fail` → `warn`).
    Other,
}

/// The kind of a change of state (`None`: no change, or only added/removed).
pub fn classify(was: State, now: State) -> Option<Kind> {
    use State::*;
    if was == now {
        return None;
    }
    Some(match (was, now) {
        (_, Fail) => Kind::NewFailure,
        (_, HarnessError) => Kind::HarnessError,
        (_, Absent) | (Absent, Pass | ExpectedFailure | Unsupported | Skipped) => return None,
        (Fail, Warn) => Kind::Other,
        (_, Warn) => Kind::NewWarning,
        (Fail | Warn | ExpectedFailure, Pass) => Kind::Fixed,
        (_, ExpectedFailure) => Kind::Baselined,
        (Pass | Fail | Warn | ExpectedFailure, Unsupported | Skipped) => Kind::CoverageLost,
        (Unsupported | Skipped | HarnessError, Pass) => Kind::CoverageGained,
        _ => Kind::Other,
    })
}

/// One result that changed.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    /// Result id (`<check>@<transport>`).
    pub id: String,
    /// Cited requirement IDs (NEW's, else OLD's).
    pub requirements: Vec<String>,
    /// State in OLD.
    pub was: State,
    /// State in NEW.
    pub now: State,
    /// What NEW's verdict says: the violation's message, or why it judged nothing.
    pub message: Option<String>,
}

/// One requirement whose matrix status changed (`None` = not in that report's catalogue).
#[derive(Debug, Clone, PartialEq)]
pub struct RequirementChange {
    /// Requirement ID.
    pub id: String,
    /// Level (NEW's, else OLD's).
    pub level: Level,
    /// Status in OLD.
    pub was: Option<MatrixStatus>,
    /// Status in NEW.
    pub now: Option<MatrixStatus>,
    /// NEW results citing it that fail the run.
    pub failing: Vec<String>,
}

/// A duration that grew beyond the latency rule.
#[derive(Debug, Clone, PartialEq)]
pub struct LatencyChange {
    /// Result id, or `area <suite>/<area>` for an area's total.
    pub what: String,
    /// OLD milliseconds.
    pub old_ms: u64,
    /// NEW milliseconds.
    pub new_ms: u64,
}

/// Everything that changed between two reports.
pub struct Diff<'a> {
    /// The OLD report and its name (file).
    pub old: (&'a str, &'a Report),
    /// The NEW report and its name.
    pub new: (&'a str, &'a Report),
    /// Options used.
    pub opts: DiffOptions,
    /// Changed results by kind, in report order (NEW's, then OLD-only results).
    pub changes: BTreeMap<Kind, Vec<Change>>,
    /// Results only in NEW.
    pub added: Vec<Change>,
    /// Results only in OLD.
    pub removed: Vec<Change>,
    /// Every requirement whose status changed.
    pub requirements: Vec<RequirementChange>,
    /// Latency regressions (empty unless enabled).
    pub latency: Vec<LatencyChange>,
    /// What makes the two reports hard to compare (versions, selections, targets).
    pub notes: Vec<String>,
}

impl Diff<'_> {
    /// Changes of one kind.
    pub fn of(&self, k: Kind) -> &[Change] {
        self.changes.get(&k).map_or(&[], Vec::as_slice)
    }

    /// MUST/REC requirements degraded to `fail` by a result failing the run.
    pub fn degraded(&self) -> impl Iterator<Item = &RequirementChange> {
        self.requirements.iter().filter(|r| {
            r.level.is_required()
                && r.now == Some(MatrixStatus::Fail)
                && r.was != Some(MatrixStatus::Fail)
                && !r.failing.is_empty()
        })
    }

    /// Requirements that newly warn (from a judged, non-failing status or none).
    pub fn newly_warning(&self) -> impl Iterator<Item = &RequirementChange> {
        self.requirements.iter().filter(|r| {
            r.now == Some(MatrixStatus::Warn)
                && !matches!(r.was, Some(MatrixStatus::Warn | MatrixStatus::Fail))
        })
    }

    /// Whether NEW regressed from OLD under the rules of the module doc.
    pub fn regressed(&self) -> bool {
        !self.of(Kind::NewFailure).is_empty()
            || self.degraded().next().is_some()
            || !self.latency.is_empty()
            || (self.opts.fail_on_warn
                && (!self.of(Kind::NewWarning).is_empty() || self.newly_warning().next().is_some()))
    }

    /// 1 on a regression, else 0.
    pub fn exit_code(&self) -> i32 {
        i32::from(self.regressed())
    }

    /// The diff as Markdown (a PR comment).
    pub fn to_markdown(&self) -> String {
        markdown::render(self)
    }
}

/// Compares `old` and `new` (each with the name to show for it).
pub fn diff<'a>(
    old: (&'a str, &'a Report),
    new: (&'a str, &'a Report),
    opts: &DiffOptions,
) -> Diff<'a> {
    let (o, n) = (old.1.by_id(), new.1.by_id());
    let mut d = Diff {
        old,
        new,
        opts: opts.clone(),
        changes: BTreeMap::new(),
        added: Vec::new(),
        removed: Vec::new(),
        requirements: requirement_changes(&old.1.requirements, &new.1.requirements, &n),
        latency: Vec::new(),
        notes: Vec::new(),
    };
    let only_old = old
        .1
        .checks
        .iter()
        .filter(|c| !n.contains_key(c.id.as_str()));
    for c in new.1.checks.iter().chain(only_old) {
        let (was_r, now_r) = (o.get(c.id.as_str()).copied(), n.get(c.id.as_str()).copied());
        let change = Change {
            id: c.id.clone(),
            // What a failure violated (issue 26), else what the result cites.
            requirements: now_r
                .and_then(CheckResult::violated)
                .unwrap_or(&c.requirements)
                .to_vec(),
            was: State::of(was_r),
            now: State::of(now_r),
            message: now_r.and_then(|r| detail(&r.verdict)),
        };
        if let Some(k) = classify(change.was, change.now) {
            d.changes.entry(k).or_default().push(change.clone());
        }
        match (change.was, change.now) {
            (State::Absent, _) => d.added.push(change),
            (_, State::Absent) => d.removed.push(change),
            _ => {}
        }
    }
    if let Some(rule) = opts.latency {
        d.latency = latency(old.1, new.1, &rule);
    }
    d.notes = notes(&d);
    d
}

/// The one line a verdict says about itself (violation message, reason, harness message).
fn detail(v: &Verdict) -> Option<String> {
    match v {
        Verdict::Pass => None,
        // The fact, not only the sentence: "value differs" alone says nothing.
        Verdict::Fail(x) | Verdict::Warn(x) => Some(format!(
            "{} — {}: expected {}, got {}",
            x.message,
            if x.pointer.is_empty() {
                "status"
            } else {
                x.pointer.as_str()
            },
            crate::engine::repro::compact(&x.expected, 120),
            crate::engine::repro::compact(&x.observed, 120)
        )),
        Verdict::Unsupported { reason, .. } | Verdict::Skipped { reason } => Some(reason.clone()),
        Verdict::HarnessError { message } => Some(message.clone()),
    }
}

/// Status changes of the requirement matrix (by suite and ID).
fn requirement_changes(
    old: &[RequirementRow],
    new: &[RequirementRow],
    new_checks: &BTreeMap<&str, &CheckResult>,
) -> Vec<RequirementChange> {
    let index = |rows: &'_ [RequirementRow]| -> BTreeMap<(String, String), usize> {
        rows.iter()
            .enumerate()
            .map(|(i, r)| ((r.suite.clone(), r.id.clone()), i))
            .collect()
    };
    let (oi, ni) = (index(old), index(new));
    let mut out = Vec::new();
    let only_old = old
        .iter()
        .filter(|r| !ni.contains_key(&(r.suite.clone(), r.id.clone())));
    for r in new.iter().chain(only_old) {
        let k = (r.suite.clone(), r.id.clone());
        let was = oi.get(&k).map(|&i| old[i].status);
        let now_row = ni.get(&k).map(|&i| &new[i]);
        let now = now_row.map(|x| x.status);
        if was == now {
            continue;
        }
        let failing = now_row
            .map(|x| {
                (x.checks.iter())
                    .filter(|id| new_checks.get(id.as_str()).is_some_and(|c| c.fails_run()))
                    .cloned()
                    .collect()
            })
            .unwrap_or_default();
        out.push(RequirementChange {
            id: r.id.clone(),
            level: r.level,
            was,
            now,
            failing,
        });
    }
    out
}

/// Per-result and per-area latency regressions, over the results that pass in both reports
/// (a failing check may stop early; an unjudged one did not run).
fn latency(old: &Report, new: &Report, rule: &LatencyRule) -> Vec<LatencyChange> {
    let o = old.by_id();
    let mut out = Vec::new();
    let mut areas: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    for c in &new.checks {
        let Some(was) = o.get(c.id.as_str()) else {
            continue;
        };
        if !(was.verdict.is_pass() && c.verdict.is_pass()) {
            continue;
        }
        if rule.regressed(was.duration_ms, c.duration_ms) {
            out.push(LatencyChange {
                what: c.id.clone(),
                old_ms: was.duration_ms,
                new_ms: c.duration_ms,
            });
        }
        let a = areas
            .entry(format!("area {}/{}", c.suite, c.area))
            .or_default();
        a.0 += was.duration_ms;
        a.1 += c.duration_ms;
    }
    for (what, (old_ms, new_ms)) in areas {
        if rule.regressed(old_ms, new_ms) {
            out.push(LatencyChange {
                what,
                old_ms,
                new_ms,
            });
        }
    }
    out
}

/// What limits the comparison: different tool versions, check sets, selections, targets.
fn notes(d: &Diff<'_>) -> Vec<String> {
    let (o, n) = (d.old.1, d.new.1);
    let mut notes = Vec::new();
    if o.tool.version != n.tool.version {
        notes.push(format!(
            "The reports come from different versions of conform ({} and {}): their check sets \
             and requirement catalogues may differ.",
            o.tool.version, n.tool.version
        ));
    }
    if !d.added.is_empty() || !d.removed.is_empty() {
        notes.push(format!(
            "The check sets differ ({} results only in NEW, {} only in OLD): a different suite \
             version or selection. Only results present in both are compared as changes; a \
             result only in NEW that fails still counts as a new failure.",
            d.added.len(),
            d.removed.len()
        ));
    }
    let cat = |r: &Report| -> BTreeSet<(String, String)> {
        (r.requirements.iter())
            .map(|x| (x.suite.clone(), x.id.clone()))
            .collect()
    };
    let (co, cn) = (cat(o), cat(n));
    if co != cn {
        notes.push(format!(
            "The requirement catalogues differ ({} IDs only in NEW, {} only in OLD).",
            cn.difference(&co).count(),
            co.difference(&cn).count()
        ));
    }
    for (what, a, b) in [
        ("suites", o.suites.join(","), n.suites.join(",")),
        (
            "--filter",
            format!("{:?}", o.filter),
            format!("{:?}", n.filter),
        ),
        (
            "transports",
            format!("{:?}", o.transports),
            format!("{:?}", n.transports),
        ),
        ("target", o.target.name.clone(), n.target.name.clone()),
        (
            "--jobs (durations depend on it)",
            o.jobs.to_string(),
            n.jobs.to_string(),
        ),
    ] {
        if a != b {
            notes.push(format!("The {what} differ: {a} (OLD) vs {b} (NEW)."));
        }
    }
    notes
}
