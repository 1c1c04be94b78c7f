//! The report: one serde type with a `format_version`, rendered six ways.
//!
//! Renderers take the same [`Report`] so JSON, JUnit, Markdown, HTML, SARIF and the badge can
//! never disagree.

pub mod badge;
pub mod completeness;
pub mod evidence;
pub mod groups;
pub mod html;
pub mod json;
pub mod junit;
pub mod markdown;
pub mod matrix;
pub mod power;
pub mod renderer;
pub mod sarif;
pub mod write;

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::engine::binding::Binding;
use crate::engine::requirements::Level;
use crate::engine::target::TargetInfo;
use crate::engine::verdict::Verdict;

/// Version of the report format (bumped on incompatible changes).
pub const REPORT_FORMAT_VERSION: u32 = 1;

/// Everything a run concluded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Report {
    /// [`REPORT_FORMAT_VERSION`].
    pub format_version: u32,
    /// Tool name and version.
    pub tool: ToolInfo,
    /// What was tested.
    pub target: TargetInfo,
    /// RFC 3339 start time.
    pub started_at: String,
    /// Wall time of the whole run (pre-flight excluded), milliseconds.
    pub wall_time_ms: u64,
    /// Checked exchanges (request/response pairs made by checks, handshakes included).
    pub exchanges: u64,
    /// `exchanges / wall time`.
    pub exchanges_per_second: f64,
    /// Suites run.
    pub suites: Vec<String>,
    /// Bindings run (those the target offers of the ones selected).
    pub transports: Vec<Binding>,
    /// `--filter`, when given.
    #[serde(default)]
    pub filter: Option<String>,
    /// Concurrency used.
    pub jobs: usize,
    /// Counts.
    pub summary: Summary,
    /// Declared / executed / complete per suite, and whether the user chose a partial run.
    #[serde(default = "completeness::Completeness::unrecorded")]
    pub completeness: completeness::Completeness,
    /// One entry per check × transport (plus PV-TR-1 comparisons), in plan order.
    pub checks: Vec<CheckResult>,
    /// Per-requirement matrix.
    pub requirements: Vec<RequirementRow>,
    /// Baseline in use.
    #[serde(default)]
    pub baseline: Option<BaselineInfo>,
    /// Suite power (issue 6), present in the reports `conform faults` writes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suite_power: Option<power::SuitePower>,
    /// Present in the report of one shard (`conform run --shard k/n`): what `conform merge`
    /// needs to put the shards back together.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<ShardInfo>,
    /// The run was stopped early (Ctrl-C): a partial report, its unfinished checks
    /// `skipped`; exit code 130.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
    /// The suite that judged the target (issue 30): a digest of its data files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suite_digest: Option<evidence::SuiteDigest>,
    /// `conform run --sign`: an Ed25519 signature over the rest of the report (always the
    /// last member; `conform verify` checks it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<evidence::ReportSignature>,
}

/// Tool identity.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolInfo {
    /// `conform`.
    pub name: String,
    /// Crate version.
    pub version: String,
}

impl Default for ToolInfo {
    fn default() -> Self {
        Self {
            name: "conform".into(),
            version: env!("CARGO_PKG_VERSION").into(),
        }
    }
}

/// Counts per verdict.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Summary {
    /// Results.
    pub total: usize,
    /// Passes (unexpected passes included).
    pub pass: usize,
    /// Failures (expected ones included).
    pub fail: usize,
    /// Warnings.
    pub warn: usize,
    /// Unsupported.
    pub unsupported: usize,
    /// Skipped.
    pub skipped: usize,
    /// Harness errors.
    pub harness_error: usize,
    /// Failures listed in the baseline.
    pub expected_failure: usize,
    /// Baseline entries that passed.
    pub unexpected_pass: usize,
    /// Failures of MUST checks not in the baseline: these fail the run.
    pub required_failures: usize,
    /// MUST requirements no check covered.
    pub untested_must: usize,
}

/// How the baseline judged a result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum BaselineMark {
    /// A listed, known failure.
    ExpectedFailure {
        /// The entry's reason.
        reason: String,
    },
    /// Listed as failing, but passed: the baseline entry can go.
    UnexpectedPass {
        /// The entry's reason.
        reason: String,
    },
}

/// How to re-run one failure by hand.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reproduction {
    /// The `conform` command re-running just this check.
    pub command: String,
    /// Environment the curl commands use (token variables).
    pub env: Vec<(String, String)>,
    /// One curl command per exchange of the transcript.
    pub curl: Vec<String>,
}

/// One check on one transport.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckResult {
    /// Unique result id: `<check>@<transport>` or `<check>`.
    pub id: String,
    /// The check id (vector id, `PV-TR-1/<vector>`, …).
    pub check: String,
    /// Suite.
    pub suite: String,
    /// Area.
    pub area: String,
    /// One line.
    pub title: String,
    /// Binding, for a check run once per binding.
    #[serde(default)]
    pub transport: Option<Binding>,
    /// Cited requirement IDs.
    pub requirements: Vec<String>,
    /// Whether a failure fails the run (a MUST is cited).
    pub required: bool,
    /// The verdict.
    pub verdict: Verdict,
    /// Baseline judgement.
    #[serde(default)]
    pub baseline: Option<BaselineMark>,
    /// Duration in milliseconds.
    pub duration_ms: u64,
    /// Exchanges made (for a derived comparison, the exchanges of the runs it compared).
    pub exchanges: u64,
    /// The check tests conform itself (its validator, its consumer), not the target: kept
    /// out of the requirement matrix.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub self_test: bool,
    /// For failures and warnings.
    #[serde(default)]
    pub reproduction: Option<Reproduction>,
}

impl CheckResult {
    /// True when this result fails the run (MUST failure not in the baseline).
    pub fn fails_run(&self) -> bool {
        matches!(self.verdict, Verdict::Fail(_))
            && !matches!(self.baseline, Some(BaselineMark::ExpectedFailure { .. }))
    }

    /// The requirement IDs this result fails or warns on: those its violation names (a
    /// vector's failing step, a model's counterexample, a fuzz oracle), else the cited ones;
    /// `None` when it is not a violation. Every format and the matrix blame this set
    /// (issue 26), so they cannot disagree.
    pub fn violated(&self) -> Option<&[String]> {
        let v = self.verdict.violation()?;
        Some(if v.requirements.is_empty() {
            &self.requirements
        } else {
            &v.requirements
        })
    }

    /// HTML/Markdown anchor of this result.
    pub fn anchor(&self) -> String {
        anchor(&self.id)
    }
}

/// A stable HTML anchor for an id.
pub fn anchor(id: &str) -> String {
    let mut s = String::from("c-");
    for ch in id.chars() {
        s.push(if ch.is_ascii_alphanumeric() || ch == '-' || ch == '_' {
            ch
        } else {
            '-'
        });
    }
    s
}

/// Status of a requirement in the matrix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MatrixStatus {
    /// A check that exchanged with the target passed it, and none failed or warned on it.
    Pass,
    /// A check failed on it (its violation names it).
    Fail,
    /// A check warned on it (and none failed).
    Warn,
    /// Every check citing it could not apply for the target's own reasons (a profile or
    /// feature the target declares it does not offer).
    #[serde(rename = "n/a")]
    NotApplicable,
    /// No evidence: no check cites it in this run, or those that do were left unjudged (a
    /// role or credential missing from the profile, a harness error, a failure on another
    /// rule first).
    Untested,
}

impl MatrixStatus {
    /// Display name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pass => "pass",
            Self::Fail => "fail",
            Self::Warn => "warn",
            Self::NotApplicable => "n/a",
            Self::Untested => "untested",
        }
    }

    /// Its CSS class in the HTML pages (the report's and the matrix's).
    pub fn css_class(self) -> &'static str {
        match self {
            Self::NotApplicable => "na",
            s => s.as_str(),
        }
    }
}

/// One row of the requirement matrix.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RequirementRow {
    /// Requirement ID.
    pub id: String,
    /// Suite.
    pub suite: String,
    /// Level.
    pub level: Level,
    /// Area.
    pub area: String,
    /// The rule.
    pub rule: String,
    /// Source section.
    pub source: String,
    /// A rule of a library the protocol defines (a validator, a consumer: catalogue method
    /// `VAL`/`CONS`), not of a server: with no check against the target citing it, it is
    /// `n/a` for the target (conform's own implementation is held to it by its self-tests).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub library: bool,
    /// Status.
    pub status: MatrixStatus,
    /// Result ids citing it.
    pub checks: Vec<String>,
    /// Passing results.
    pub passed: usize,
    /// Failing results.
    pub failed: usize,
    /// Warning results.
    pub warned: usize,
}

impl RequirementRow {
    /// A rule whose violation would fail the run (MUST, REC) with no evidence in this run:
    /// one such row makes its suite incomplete (issue 26).
    pub fn untested_required(&self) -> bool {
        self.level.is_required() && self.status == MatrixStatus::Untested
    }
}

/// Baseline summary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BaselineInfo {
    /// File.
    pub path: String,
    /// Entries.
    pub entries: usize,
    /// `--allow-stale-baseline`: an expected failure that passed is a warning, not a
    /// failure of the run.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub allow_stale: bool,
}

impl Report {
    /// The same report with what varies from run to run on one server replaced by fixed
    /// values: start time, durations, ports, and exchange counts (inbox pagination and
    /// status polling make as many requests as the timing needs). Two runs of one suite
    /// against the reference give equal redacted reports; `reports/reference/` is checked
    /// this way.
    pub fn volatile_redacted(&self) -> Self {
        let mut r = self.clone();
        r.started_at = "<started_at>".into();
        r.wall_time_ms = 0;
        r.exchanges = 0;
        r.exchanges_per_second = 0.0;
        r.target.base_url = "<base_url>".into();
        r.target.mcp_url = "<mcp_url>".into();
        // The documents name the server's own URLs (SSP's absolute `descriptor_url`s): their
        // digests change with the port. Which documents were read does not.
        for print in r.target.fingerprint.values_mut() {
            *print = "<fingerprint>".into();
        }
        for c in &mut r.checks {
            c.duration_ms = 0;
            c.exchanges = 0;
        }
        r
    }

    /// Exit code: 2 on harness errors; 1 on a required failure, an incomplete run the user
    /// did not choose, or a stale baseline entry (an expected failure that passed, unless
    /// allowed); else 0.
    pub fn exit_code(&self) -> i32 {
        if self.interrupted {
            // The shell's code for a run ended by SIGINT: the report is partial.
            130
        } else if self.summary.harness_error > 0 {
            2
        } else if self.summary.required_failures > 0
            || self.completeness.fails_run()
            || self.stale_baseline_fails()
        {
            1
        } else {
            0
        }
    }

    /// Whether baseline entries that now pass fail the run (issue 26: a stale entry would
    /// otherwise hide the next regression of that check).
    fn stale_baseline_fails(&self) -> bool {
        self.summary.unexpected_pass > 0 && !self.baseline.as_ref().is_some_and(|b| b.allow_stale)
    }

    /// The results a stale baseline entry names (expected to fail, passed).
    pub fn stale_entries(&self) -> Vec<&str> {
        (self.checks.iter())
            .filter(|c| matches!(c.baseline, Some(BaselineMark::UnexpectedPass { .. })))
            .map(|c| c.id.as_str())
            .collect()
    }

    /// Recomputes summary counts from `checks` and `requirements`.
    pub fn recount(&mut self) {
        let mut s = Summary {
            total: self.checks.len(),
            ..Summary::default()
        };
        for c in &self.checks {
            match &c.verdict {
                Verdict::Pass => s.pass += 1,
                Verdict::Fail(_) => s.fail += 1,
                Verdict::Warn(_) => s.warn += 1,
                Verdict::Unsupported { .. } => s.unsupported += 1,
                Verdict::Skipped { .. } => s.skipped += 1,
                Verdict::HarnessError { .. } => s.harness_error += 1,
            }
            match c.baseline {
                Some(BaselineMark::ExpectedFailure { .. }) => s.expected_failure += 1,
                Some(BaselineMark::UnexpectedPass { .. }) => s.unexpected_pass += 1,
                None => {}
            }
            if c.fails_run() {
                s.required_failures += 1;
            }
        }
        s.untested_must = self
            .requirements
            .iter()
            .filter(|r| r.untested_required())
            .count();
        self.summary = s;
        self.completeness = completeness::Completeness::judge(
            &self.suites,
            &self.checks,
            &self.requirements,
            std::mem::take(&mut self.completeness.partial),
        );
    }

    /// Results by id.
    pub fn by_id(&self) -> BTreeMap<&str, &CheckResult> {
        self.checks.iter().map(|c| (c.id.as_str(), c)).collect()
    }

    /// The plain-text summary printed at the end of `conform run`.
    pub fn summary_table(&self) -> String {
        let mut out = String::new();
        self.summary_header(&mut out);
        self.summary_counts(&mut out);
        self.summary_totals(&mut out);
        out.push_str(&self.group_lines(6));
        out.push_str(&self.completeness.lines());
        self.summary_stale(&mut out);
        let _ = writeln!(out, "{} (exit {})", self.verdict_line(), self.exit_code());
        out
    }

    /// Summary header: tool, target, suites, transports, TLS and time scale.
    fn summary_header(&self, out: &mut String) {
        let _ = writeln!(
            out,
            "conform {} — target {} ({})",
            self.tool.version, self.target.name, self.target.base_url
        );
        let transports: Vec<&str> = self.transports.iter().map(|t| t.as_str()).collect();
        let _ = writeln!(
            out,
            "suites: {}   transports: {}   MCP revision: {}",
            self.suites.join(","),
            transports.join(","),
            self.target.mcp_revision
        );
        if let Some(t) = &self.target.tls {
            let _ = writeln!(out, "TLS: {}", t.describe());
        }
        if !self.target.time_scale.is_one() {
            let _ = writeln!(
                out,
                "time scale: ×{} (every timeout and waiting bound)",
                self.target.time_scale
            );
        }
        let _ = writeln!(out);
    }

    /// Summary table of verdict counts, with the total.
    fn summary_counts(&self, out: &mut String) {
        let s = &self.summary;
        let _ = writeln!(out, "  {:<16} {:>6}", "verdict", "count");
        for (name, n) in [
            ("pass", s.pass),
            ("fail", s.fail),
            ("warn", s.warn),
            ("unsupported", s.unsupported),
            ("skipped", s.skipped),
            ("harness_error", s.harness_error),
            ("expected_failure", s.expected_failure),
            ("unexpected_pass", s.unexpected_pass),
        ] {
            let _ = writeln!(out, "  {name:<16} {n:>6}");
        }
        let _ = writeln!(out, "  {:<16} {:>6}", "total", s.total);
    }

    /// Summary lines on requirements by status, wall time and the longest checks.
    fn summary_totals(&self, out: &mut String) {
        let mut by_status: BTreeMap<&str, usize> = BTreeMap::new();
        for r in &self.requirements {
            *by_status.entry(r.status.as_str()).or_default() += 1;
        }
        let _ = writeln!(out);
        let parts: Vec<String> = by_status.iter().map(|(k, v)| format!("{k} {v}")).collect();
        let _ = writeln!(
            out,
            "requirements: {} ({}); untested MUST: {}",
            self.requirements.len(),
            parts.join(", "),
            self.summary.untested_must
        );
        let _ = writeln!(
            out,
            "wall time {:.3} s, {} exchanges, {:.0} exchanges/s, {} jobs",
            self.wall_time_ms as f64 / 1000.0,
            self.exchanges,
            self.exchanges_per_second,
            self.jobs
        );
        if let Some(line) = self.longest_checks(5) {
            let _ = writeln!(out, "longest checks (they hold the wall time): {line}");
        }
    }

    /// Summary line listing stale baseline entries, if any.
    fn summary_stale(&self, out: &mut String) {
        let stale = self.stale_entries();
        if stale.is_empty() {
            return;
        }
        let allowed = self.baseline.as_ref().is_some_and(|b| b.allow_stale);
        let _ = writeln!(
            out,
            "stale baseline entries (listed as failing, now passing{}): {}",
            if allowed {
                "; allowed by --allow-stale-baseline"
            } else {
                "; remove them, or pass --allow-stale-baseline"
            },
            stale.join(", ")
        );
    }

    /// The one-line verdict of the run, naming why it is not a pass.
    pub fn verdict_line(&self) -> &'static str {
        match self.exit_code() {
            0 if !self.completeness.complete => {
                "PASS (partial run): every required check run passed"
            }
            0 => "PASS: every required check passed",
            1 if self.summary.required_failures > 0 => "FAIL: a required check failed",
            1 if self.completeness.fails_run() => {
                "INCOMPLETE: a selected suite was not fully judged"
            }
            1 => "FAIL: a baseline entry is stale",
            130 => "INTERRUPTED: the run was stopped; this report is partial",
            _ => "ERROR: the harness could not judge some checks",
        }
    }

    /// The `n` checks that took longest, with their wall times (`None`: no check took any):
    /// with concurrent checks, they are what a faster run must shorten.
    pub fn longest_checks(&self, n: usize) -> Option<String> {
        let mut by_time: Vec<&CheckResult> =
            self.checks.iter().filter(|c| c.duration_ms > 0).collect();
        by_time.sort_by_key(|c| std::cmp::Reverse(c.duration_ms));
        let parts: Vec<String> = by_time
            .iter()
            .take(n)
            .map(|c| format!("{} {:.2} s", c.id, c.duration_ms as f64 / 1000.0))
            .collect();
        (!parts.is_empty()).then(|| parts.join(" · "))
    }
}

/// What a shard report records so that the shards can be merged (absent from unsharded
/// reports).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShardInfo {
    /// Which shard.
    pub index: u32,
    /// Of how many.
    pub count: u32,
    /// Jobs of the whole unsharded plan (the merged report must hold a result for each).
    pub planned: usize,
    /// For each result of this report, in order, its position in the unsharded report:
    /// `0..planned` for planned jobs, `planned..` for derived checks (in the order their
    /// protocol lists its derived ids).
    pub positions: Vec<usize>,
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::engine::target::TargetInfo;
    use crate::transport::McpRevision;

    /// A report of no check against a fixed target (unit tests fill in what they need).
    pub(crate) fn empty_report() -> Report {
        Report {
            format_version: REPORT_FORMAT_VERSION,
            tool: ToolInfo::default(),
            target: TargetInfo {
                name: "t".into(),
                base_url: "http://127.0.0.1:1".into(),
                mcp_url: "http://127.0.0.1:1/mcp".into(),
                mcp_revision: McpRevision::V2025_11_25,
                server_version: None,
                profiles: Vec::new(),
                spawned_reference: true,
                profile_path: None,
                tls: None,
                fingerprint: Default::default(),
                time_scale: Default::default(),
            },
            started_at: "2026-12-01T00:00:00Z".into(),
            wall_time_ms: 0,
            exchanges: 0,
            exchanges_per_second: 0.0,
            suites: vec!["parley".into()],
            transports: vec![Binding::new("http")],
            filter: None,
            jobs: 1,
            summary: Summary::default(),
            completeness: Default::default(),
            checks: Vec::new(),
            requirements: Vec::new(),
            baseline: None,
            suite_power: None,
            shard: None,
            interrupted: false,
            suite_digest: None,
            signature: None,
        }
    }
}
