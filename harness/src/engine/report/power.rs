//! Suite power (issue 6): how many seeded faults of the reference server the suite catches,
//! on their own requirement IDs, and (issue 14) how many legal variants it accepts without
//! a failure — the two numbers that measure a certification suite. Plain data, so every
//! report can carry it; it is measured by `conform faults` (cargo feature `faults`,
//! `crate::faults`) and `conform variants` (feature `variants`, `crate::variants`).

use serde::{Deserialize, Serialize};
/// Version of the [`SuitePower`] document.
pub const POWER_FORMAT_VERSION: u32 = 1;

/// Which checks run against each faulty server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// Every check of both suites (classifies "caught elsewhere"; slow).
    Full,
    /// Only the checks citing the fault's IDs (decides "caught on its own IDs"; fast).
    Targeted,
    /// Targeted first; a fault not caught there is measured again with every check, so it
    /// is classified "caught elsewhere" or "missed" (fast and complete).
    Auto,
}

/// How the suite reacted to one fault.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Detection {
    /// A failing check cites one of the fault's requirement IDs.
    Caught,
    /// No failing check, but a warning cites one of the fault's IDs (how the suite reports
    /// rules below MUST).
    CaughtAsWarning,
    /// Checks failed, but none cites the fault's IDs.
    CaughtElsewhere,
    /// No check failed.
    Missed,
    /// The run could not be made (spawn, pre-flight or harness failure).
    HarnessError,
}

impl Detection {
    /// Short lowercase name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Caught => "caught",
            Self::CaughtAsWarning => "caught (warning)",
            Self::CaughtElsewhere => "caught elsewhere",
            Self::Missed => "missed",
            Self::HarnessError => "harness error",
        }
    }
}

/// One failing check of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FailedCheck {
    /// Result id (`<check>@<transport>` or `<check>`).
    pub id: String,
    /// Requirement IDs the check cites.
    pub requirements: Vec<String>,
    /// The violation's sentence.
    pub message: String,
}

/// The measurement of one fault.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FaultResult {
    /// Fault name (`--fault NAME`).
    pub name: String,
    /// Protocol it breaks (`parley`, `ssp`).
    pub suite: String,
    /// What the broken server does.
    pub description: String,
    /// Requirement IDs the fault violates.
    pub requirements: Vec<String>,
    /// Verdict of the measurement.
    pub detection: Detection,
    /// Whether one of the fault's IDs is a MUST (then only a failure counts as caught).
    pub violates_must: bool,
    /// Checks run against the faulty server.
    pub checks_run: usize,
    /// Failing checks citing one of the fault's IDs.
    pub caught_by: Vec<FailedCheck>,
    /// Failing checks citing none of them.
    pub failed_elsewhere: Vec<FailedCheck>,
    /// Warnings citing one of the fault's IDs.
    pub warned_by: Vec<FailedCheck>,
    /// Checks that ended in a harness error.
    pub harness_errors: usize,
    /// Why the run could not be made, for [`Detection::HarnessError`].
    #[serde(default)]
    pub error: Option<String>,
    /// Wall time of the run.
    pub wall_time_ms: u64,
    /// The run's whole report, kept in memory for the matrix and the run's own pages
    /// (`conform faults`/`variants` write them); not part of this document.
    #[serde(skip)]
    pub report: Option<Box<super::Report>>,
}

/// Whether some fault tagged with a requirement is caught on that requirement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RequirementPowerStatus {
    /// A fault tagged with it made a check citing it fail.
    Caught,
    /// Faults are tagged with it, but no check citing it failed for them.
    NotCaught,
    /// No fault of the catalogue violates it.
    NoFault,
}

/// One row of the per-requirement table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RequirementPower {
    /// Requirement ID.
    pub id: String,
    /// Suite.
    pub suite: String,
    /// Faults (measured in this run) that violate it.
    pub faults: Vec<String>,
    /// Those of them caught by a failing check citing this very ID.
    pub caught_by: Vec<String>,
    /// Summary status.
    pub status: RequirementPowerStatus,
}

/// The fault-free reference, measured the same way (must fail nothing).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CleanRun {
    /// Checks run.
    pub checks_run: usize,
    /// Failing checks (false failures: must be empty).
    pub failures: Vec<FailedCheck>,
    /// Checks ending in a harness error.
    pub harness_errors: Vec<String>,
    /// Why the run could not be made.
    #[serde(default)]
    pub error: Option<String>,
    /// Wall time.
    pub wall_time_ms: u64,
}

impl CleanRun {
    /// True when the fault-free reference passed every check.
    pub fn is_clean(&self) -> bool {
        self.error.is_none() && self.failures.is_empty() && self.harness_errors.is_empty()
    }
}

/// The "suite power" section of a report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SuitePower {
    /// [`POWER_FORMAT_VERSION`].
    pub format_version: u32,
    /// Which checks ran against each faulty server.
    pub scope: Scope,
    /// Faults measured.
    pub total: usize,
    /// Caught on their own IDs (a failing check cites them).
    pub caught: usize,
    /// Caught on their own IDs as a warning (rules below MUST).
    pub caught_as_warning: usize,
    /// Caught only by unrelated checks.
    pub caught_elsewhere: usize,
    /// Not noticed at all.
    pub missed: usize,
    /// Runs that could not be made.
    pub harness_errors: usize,
    /// The fault-free reference (absent when not measured).
    #[serde(default)]
    pub clean: Option<CleanRun>,
    /// Per fault, in catalogue order.
    pub faults: Vec<FaultResult>,
    /// Per requirement of the suites' catalogues.
    pub requirements: Vec<RequirementPower>,
    /// Wall time of the whole measurement.
    pub wall_time_ms: u64,
    /// Legal variants accepted (issue 14), when measured with the faults.
    #[serde(default)]
    pub variants: Option<VariantsAccepted>,
}

/// The measurement of one legal variant: the whole suite against the reference with it on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VariantResult {
    /// Variant name (`--variant NAME`).
    pub name: String,
    /// Protocol it concerns (`parley`, `ssp`, `both`).
    pub suite: String,
    /// The sentence of the notes or seeds that allows it.
    pub allowed_by: String,
    /// What the server does differently.
    pub description: String,
    /// Checks run.
    pub checks_run: usize,
    /// Failing checks: false failures of the suite (must be empty).
    pub failures: Vec<FailedCheck>,
    /// Warnings drawn (allowed: rules below MUST, or points the notes leave open).
    pub warnings: Vec<FailedCheck>,
    /// Checks that ended in a harness error.
    pub harness_errors: Vec<String>,
    /// Required rules (MUST, REC) left untested: a run that proves nothing of them exits 1
    /// as incomplete, which fails a correct server as surely as a failing check does.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub untested: Vec<String>,
    /// Why the run could not be made.
    #[serde(default)]
    pub error: Option<String>,
    /// Wall time of the run.
    pub wall_time_ms: u64,
    /// The run's whole report, kept in memory for the matrix and the run's own pages
    /// (`conform faults`/`variants` write them); not part of this document.
    #[serde(skip)]
    pub report: Option<Box<super::Report>>,
}

impl VariantResult {
    /// Accepted: the run was made, no check failed, none ended in a harness error and no
    /// required rule was left untested.
    pub fn is_accepted(&self) -> bool {
        self.error.is_none()
            && self.failures.is_empty()
            && self.harness_errors.is_empty()
            && self.untested.is_empty()
    }
}

/// The variants section of the suite-power report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VariantsAccepted {
    /// Variants measured.
    pub total: usize,
    /// Accepted without a failure.
    pub accepted: usize,
    /// Per variant, in catalogue order.
    pub variants: Vec<VariantResult>,
    /// Wall time of the whole measurement.
    pub wall_time_ms: u64,
}

impl VariantsAccepted {
    /// True when every variant is accepted.
    pub fn is_complete(&self) -> bool {
        self.accepted == self.total && self.variants.iter().all(VariantResult::is_accepted)
    }
}

/// The "legal variants" section in Markdown.
pub fn render_variants_markdown(v: &VariantsAccepted) -> String {
    let mut out = String::from(
        "## Legal variants accepted

",
    );
    out.push_str(&format!(
        "**{} of {} legal variants accepted with no failure ({})**: each is a behaviour the notes or seeds allow, switched on alone in the reference; a failure would be a false failure of the suite. Wall time {:.1} s.\n\n",
        v.accepted,
        v.total,
        pct(v.accepted, v.total),
        v.wall_time_ms as f64 / 1000.0
    ));
    out.push_str("| variant | suite | result | checks | warnings | allowed by |\n|---|---|---|---|---|---|\n");
    for r in &v.variants {
        let result = if r.is_accepted() {
            "accepted".to_string()
        } else if let Some(e) = &r.error {
            format!("**run failed**: {e}")
        } else {
            let ids: Vec<String> = r
                .failures
                .iter()
                .take(3)
                .map(|f| format!("`{}`", f.id))
                .collect();
            let untested = if r.untested.is_empty() {
                String::new()
            } else {
                format!("; required rules untested: {}", r.untested.join(", "))
            };
            format!(
                "**{} false failures** {}{}{untested}",
                r.failures.len() + r.harness_errors.len(),
                ids.join(", "),
                if r.failures.len() > 3 { " …" } else { "" }
            )
        };
        out.push_str(&format!(
            "| `{}` | {} | {} | {} | {} | {} |\n",
            r.name,
            r.suite,
            cell(&result),
            r.checks_run,
            r.warnings.len(),
            cell(&r.allowed_by)
        ));
    }
    for r in v.variants.iter().filter(|r| !r.is_accepted()) {
        out.push_str(&format!("\n### `{}` — false failures\n\n", r.name));
        for f in &r.failures {
            out.push_str(&format!(
                "- `{}` ({}): {}\n",
                f.id,
                f.requirements.join(", "),
                cell(&f.message)
            ));
        }
        for e in &r.harness_errors {
            out.push_str(&format!("- harness error: {}\n", cell(e)));
        }
    }
    out
}

impl FaultResult {
    /// Caught as issue 6 demands: a failure on its IDs, or — for a fault that violates no
    /// MUST rule — a warning on its IDs.
    pub fn is_caught(&self) -> bool {
        self.detection == Detection::Caught
            || (self.detection == Detection::CaughtAsWarning && !self.violates_must)
    }
}

impl SuitePower {
    /// True when every fault is caught on its own IDs and the clean reference (when
    /// measured) fails nothing: the test's and `conform faults`' success condition.
    pub fn is_complete(&self) -> bool {
        self.faults.iter().all(FaultResult::is_caught)
            && self.clean.as_ref().is_none_or(CleanRun::is_clean)
            && self
                .variants
                .as_ref()
                .is_none_or(VariantsAccepted::is_complete)
    }
}

fn pct(n: usize, d: usize) -> String {
    if d == 0 {
        "—".into()
    } else {
        format!("{:.0}%", n as f64 * 100.0 / d as f64)
    }
}

/// Escapes a Markdown table cell.
pub(crate) fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// The "suite power" section in Markdown.
pub fn render_markdown(p: &SuitePower) -> String {
    let mut out = String::new();
    out.push_str("## Suite power\n\n");
    headline_markdown(&mut out, p);
    if let Some(v) = &p.variants {
        out.push_str(&format!(
            "**{} of {} legal variants accepted with no failure ({})** (see \"Legal variants accepted\").\n\n",
            v.accepted,
            v.total,
            pct(v.accepted, v.total)
        ));
    }
    if let Some(c) = &p.clean {
        clean_markdown(&mut out, c);
    }
    faults_markdown(&mut out, p);
    requirements_markdown(&mut out, p);
    if let Some(v) = &p.variants {
        out.push('\n');
        out.push_str(&render_variants_markdown(v));
    }
    out
}

/// The headline paragraph: faults caught on their own IDs, the other outcomes, scope and time.
fn headline_markdown(out: &mut String, p: &SuitePower) {
    out.push_str(&format!(
        "**{} of {} seeded faults caught on their own requirement IDs ({})**, {} of them as warnings (rules below MUST); caught elsewhere: {}; missed: {}; harness errors: {}. Scope: {}; wall time {:.1} s.\n\n",
        p.caught + p.caught_as_warning,
        p.total,
        pct(p.caught + p.caught_as_warning, p.total),
        p.caught_as_warning,
        p.caught_elsewhere,
        p.missed,
        p.harness_errors,
        match p.scope {
            Scope::Full => "every check against every faulty server",
            Scope::Targeted => "the checks citing each fault's IDs",
            Scope::Auto => "the checks citing each fault's IDs, every check for a fault not caught there",
        },
        p.wall_time_ms as f64 / 1000.0
    ));
}

/// The fault-free reference run: its check count and any false failures.
fn clean_markdown(out: &mut String, c: &CleanRun) {
    if c.is_clean() {
        out.push_str(&format!(
            "Fault-free reference: {} checks, no failure (no false failures).\n\n",
            c.checks_run
        ));
        return;
    }
    out.push_str(&format!(
        "Fault-free reference: {} checks, **{} failures, {} harness errors**{}.\n\n",
        c.checks_run,
        c.failures.len(),
        c.harness_errors.len(),
        c.error
            .as_deref()
            .map(|e| format!(" ({e})"))
            .unwrap_or_default()
    ));
    for f in &c.failures {
        out.push_str(&format!(
            "- false failure `{}` ({}): {}\n",
            f.id,
            f.requirements.join(", "),
            cell(&f.message)
        ));
    }
    out.push('\n');
}

/// The table of seeded faults: what each violates and which checks caught it.
fn faults_markdown(out: &mut String, p: &SuitePower) {
    out.push_str("| fault | suite | violates | result | failing checks on its IDs | other failures |\n|---|---|---|---|---|---|\n");
    for f in &p.faults {
        let by = if f.caught_by.is_empty() {
            &f.warned_by
        } else {
            &f.caught_by
        };
        let shown: Vec<String> = by.iter().take(3).map(|c| format!("`{}`", c.id)).collect();
        let more = by.len().saturating_sub(3);
        let caught = if by.is_empty() {
            f.error.clone().unwrap_or_else(|| "—".into())
        } else if more > 0 {
            format!("{} (+{more})", shown.join(", "))
        } else {
            shown.join(", ")
        };
        out.push_str(&format!(
            "| `{}` | {} | {} | {} | {} | {} |\n",
            f.name,
            f.suite,
            f.requirements.join(", "),
            f.detection.name(),
            cell(&caught),
            f.failed_elsewhere.len()
        ));
    }
}

/// The "Per requirement" subsection: which violated requirements a fault is caught on.
fn requirements_markdown(out: &mut String, p: &SuitePower) {
    out.push_str("\n### Per requirement\n\n");
    let with_faults: Vec<&RequirementPower> = p
        .requirements
        .iter()
        .filter(|r| r.status != RequirementPowerStatus::NoFault)
        .collect();
    let caught = with_faults
        .iter()
        .filter(|r| r.status == RequirementPowerStatus::Caught)
        .count();
    let untargeted: Vec<&str> = p
        .requirements
        .iter()
        .filter(|r| r.status == RequirementPowerStatus::NoFault)
        .map(|r| r.id.as_str())
        .collect();
    out.push_str(&format!(
        "{} requirements are violated by some fault; for {} of them a fault is caught on that very ID ({}).\n\n",
        with_faults.len(),
        caught,
        pct(caught, with_faults.len())
    ));
    requirement_rows_markdown(out, &with_faults);
    if !untargeted.is_empty() {
        out.push_str(&format!(
            "\nNo seeded fault yet for: {}.\n",
            untargeted.join(", ")
        ));
    }
}

/// The per-requirement table: the faults violating each requirement and what caught them.
fn requirement_rows_markdown(out: &mut String, with_faults: &[&RequirementPower]) {
    out.push_str("| requirement | faults | caught on this ID by |\n|---|---|---|\n");
    for r in with_faults {
        out.push_str(&format!(
            "| {} | {} | {} |\n",
            r.id,
            r.faults
                .iter()
                .map(|f| format!("`{f}`"))
                .collect::<Vec<_>>()
                .join(", "),
            if r.caught_by.is_empty() {
                "**not caught**".to_string()
            } else {
                r.caught_by.join(", ")
            }
        ));
    }
}
