//! The matrix's model: its JSON document and how it is built from reports (see the
//! module above for what a cell and a column mean).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::engine::report::evidence::SuiteDigest;
use crate::engine::report::{MatrixStatus, Report, ToolInfo, badge};
use crate::engine::requirements::Level;
use crate::engine::verdict::Verdict;

/// Version of the [`Matrix`] document.
pub const MATRIX_FORMAT_VERSION: u32 = 1;

/// Most failing results a cell lists by name (the rest are counted, and linked to the
/// report's failures as one).
const LISTED_PER_CELL: usize = 3;

/// Why no matrix can be made of the given reports.
#[derive(Debug, thiserror::Error)]
pub enum MatrixError {
    /// Nothing to compare.
    #[error("no report given")]
    Empty,
    /// Reports of different suites (vectors, catalogues, schemas).
    #[error(
        "the reports were made with different suites and cannot share one matrix:\n{0}\nRun every implementation with the same conform suite (`conform verify` names a report's digest)."
    )]
    MixedSuites(String),
    /// A report written before reports carried a suite digest.
    #[error(
        "{0} records no suite digest (written by a conform older than the evidence of issue 30): its suite cannot be compared; run it again"
    )]
    NoDigest(String),
    /// `--name` given, but not once per report.
    #[error("{names} --name given for {reports} reports: give none or one per report")]
    Names {
        /// Names given.
        names: usize,
        /// Reports given.
        reports: usize,
    },
}

/// One report to place in the matrix.
#[derive(Debug, Clone)]
pub struct Input {
    /// The column's name (`None`: the report's target name, made unique).
    pub name: Option<String>,
    /// The report.
    pub report: Report,
    /// Where its `report.html` is, relative to the matrix's folder (`None`: not written, so
    /// cells do not link).
    pub html: Option<String>,
}

/// The matrix.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Matrix {
    /// [`MATRIX_FORMAT_VERSION`].
    pub format_version: u32,
    /// The conform that made the matrix.
    pub tool: ToolInfo,
    /// The suite every column was run with.
    pub suite_digest: SuiteDigest,
    /// Implementations, in the order given.
    pub columns: Vec<Column>,
    /// Requirements: those where the columns disagree first, then by suite, area and id.
    pub rows: Vec<Row>,
}

/// A share of requirements at one level.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rate {
    /// Requirements that passed.
    pub passed: usize,
    /// Requirements that apply (every row of the matrix at the level but the column's `n/a`
    /// ones; untested ones included).
    pub of: usize,
}

/// One implementation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Column {
    /// Unique name.
    pub name: String,
    /// The report's target name.
    pub target: String,
    /// The server version the target declared, if any.
    pub server_version: Option<String>,
    /// When the run started (RFC 3339).
    pub started_at: String,
    /// The conform version that ran it.
    pub tool_version: String,
    /// The run's exit code (0 conforms, 1 fails or incomplete, 2 harness error, 130 cut).
    pub exit_code: i32,
    /// The factor its timing budgets were multiplied by (`--time-scale`): a verdict reached
    /// under larger budgets says so beside the others.
    #[serde(default = "one")]
    pub time_scale: f64,
    /// A full run of every suite in the matrix: complete, not partial, not interrupted.
    pub complete: bool,
    /// What makes the run partial or incomplete, one phrase each (empty: a full run).
    pub caveats: Vec<String>,
    /// Required requirements (MUST and REC: a failure fails the run) passed.
    pub required: Rate,
    /// SHOULD requirements passed.
    pub should: Rate,
    /// The run's badge message and colour (as `badge.svg` states it).
    pub badge: (String, String),
    /// The run's `report.html`, relative to the matrix.
    pub html: Option<String>,
}

/// One requirement across the implementations.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Row {
    /// Requirement ID.
    pub id: String,
    /// Suite.
    pub suite: String,
    /// Area.
    pub area: String,
    /// Level.
    pub level: Level,
    /// The rule.
    pub rule: String,
    /// The columns do not all give it the same status.
    pub disagree: bool,
    /// One per column.
    pub cells: Vec<Cell>,
}

/// One requirement in one implementation's report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cell {
    /// The report's status (`untested` when the report has no row for it).
    pub status: MatrixStatus,
    /// Passing results citing it.
    pub passed: usize,
    /// Failing results citing it.
    pub failed: usize,
    /// Warning results citing it.
    pub warned: usize,
    /// The failing and warning results citing it (ids, at most [`LISTED_PER_CELL`]).
    pub listed: Vec<String>,
    /// How many more failing and warning results cite it than are listed.
    pub more: usize,
}

/// Builds the matrix of `inputs` (at least one, all of one suite).
pub fn build(inputs: &[Input]) -> Result<Matrix, MatrixError> {
    let names = column_names(inputs);
    let digest = common_digest(inputs, &names)?;
    let mut rows = rows(inputs);
    let suites: Vec<&str> = {
        let mut s: Vec<&str> = rows.iter().map(|r| r.suite.as_str()).collect();
        s.sort_unstable();
        s.dedup();
        s
    };
    let mut columns: Vec<Column> = (inputs.iter().zip(&names))
        .map(|(i, n)| column(n, i, &suites))
        .collect();
    for (k, c) in columns.iter_mut().enumerate() {
        c.required = rate(&rows, k, Level::is_required);
        c.should = rate(&rows, k, |l| l == Level::Should);
    }
    rows.sort_by(|a, b| {
        (!a.disagree, &a.suite, &a.area, &a.id).cmp(&(!b.disagree, &b.suite, &b.area, &b.id))
    });
    Ok(Matrix {
        format_version: MATRIX_FORMAT_VERSION,
        tool: ToolInfo {
            name: "conform".into(),
            version: env!("CARGO_PKG_VERSION").into(),
        },
        suite_digest: digest,
        columns,
        rows,
    })
}

/// The one suite digest of every input (at least one).
fn common_digest(inputs: &[Input], names: &[String]) -> Result<SuiteDigest, MatrixError> {
    let mut seen: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    let mut digest = None;
    for (i, name) in inputs.iter().zip(names) {
        let d = i
            .report
            .suite_digest
            .as_ref()
            .ok_or_else(|| MatrixError::NoDigest(name.clone()))?;
        let key = format!("{} ({} files)", d.sha256, d.files);
        seen.entry(key).or_default().push(name);
        digest.get_or_insert_with(|| d.clone());
    }
    if seen.len() > 1 {
        let lines: Vec<String> = (seen.iter())
            .map(|(d, who)| format!("  {d}: {}", who.join(", ")))
            .collect();
        return Err(MatrixError::MixedSuites(lines.join("\n")));
    }
    digest.ok_or(MatrixError::Empty)
}

/// Each input's column name: the one given, else its target's name, numbered when repeated.
fn column_names(inputs: &[Input]) -> Vec<String> {
    let wanted: Vec<String> = (inputs.iter())
        .map(|i| {
            i.name
                .clone()
                .unwrap_or_else(|| i.report.target.name.clone())
        })
        .collect();
    let mut count: BTreeMap<&str, usize> = BTreeMap::new();
    for w in &wanted {
        *count.entry(w).or_default() += 1;
    }
    let mut nth: BTreeMap<&str, usize> = BTreeMap::new();
    (wanted.iter())
        .map(|w| {
            if count[w.as_str()] == 1 {
                return w.clone();
            }
            let n = nth.entry(w).or_default();
            *n += 1;
            format!("{w} #{n}")
        })
        .collect()
}

fn column(name: &str, i: &Input, suites: &[&str]) -> Column {
    let r = &i.report;
    let (message, colour) = badge::message(r);
    let mut caveats = caveats(r);
    let missing: Vec<&str> = (suites.iter().copied())
        .filter(|s| !r.suites.iter().any(|t| t == s))
        .collect();
    if !missing.is_empty() {
        caveats.push(format!("suites not run: {}", missing.join(", ")));
    }
    Column {
        name: name.into(),
        target: r.target.name.clone(),
        server_version: r.target.server_version.clone(),
        started_at: r.started_at.clone(),
        tool_version: r.tool.version.clone(),
        exit_code: r.exit_code(),
        time_scale: r.target.time_scale.factor(),
        complete: r.completeness.complete && caveats.is_empty(),
        caveats,
        required: Rate::default(),
        should: Rate::default(),
        badge: (message, colour.into()),
        html: i.html.clone(),
    }
}

/// Why a column is not a verdict on the whole suite.
fn caveats(r: &Report) -> Vec<String> {
    let mut out = Vec::new();
    if r.interrupted {
        out.push("interrupted".to_string());
    }
    out.extend(
        r.completeness
            .partial
            .iter()
            .map(|p| format!("partial: {p}")),
    );
    for s in r.completeness.suites.iter().filter(|s| !s.complete) {
        out.push(format!(
            "{} incomplete: {} of {} results judged, {} required rules untested",
            s.suite, s.executed, s.declared, s.untested_required
        ));
    }
    if let Some(f) = &r.filter {
        out.push(format!("--filter {f}"));
    }
    if let Some(s) = &r.shard {
        out.push(format!("shard {}/{}", s.index, s.count));
    }
    out
}

/// Column `k`'s share of passed requirements at the levels `at` accepts, over every row of
/// the matrix: a requirement its run did not reach counts against it, never for it.
fn rate(rows: &[Row], k: usize, at: impl Fn(Level) -> bool) -> Rate {
    let mut rate = Rate::default();
    for cell in (rows.iter().filter(|r| at(r.level))).filter_map(|r| r.cells.get(k)) {
        if cell.status != MatrixStatus::NotApplicable {
            rate.of += 1;
            rate.passed += usize::from(cell.status == MatrixStatus::Pass);
        }
    }
    rate
}

/// Every requirement any report has a row for, with one cell per report.
fn rows(inputs: &[Input]) -> Vec<Row> {
    let mut rows: BTreeMap<&str, Row> = BTreeMap::new();
    for q in inputs.iter().flat_map(|i| &i.report.requirements) {
        rows.entry(&q.id).or_insert_with(|| Row {
            id: q.id.clone(),
            suite: q.suite.clone(),
            area: q.area.clone(),
            level: q.level,
            rule: q.rule.clone(),
            disagree: false,
            cells: Vec::new(),
        });
    }
    for i in inputs {
        let failing = failing_by_requirement(&i.report);
        for row in rows.values_mut() {
            row.cells.push(cell(&i.report, &row.id, &failing));
        }
    }
    let mut out: Vec<Row> = rows.into_values().collect();
    for row in &mut out {
        row.disagree = row.cells.windows(2).any(|w| w[0].status != w[1].status);
    }
    out
}

/// Requirement id → the results failing or warning on it, in report order.
fn failing_by_requirement(r: &Report) -> BTreeMap<&str, Vec<&str>> {
    let mut out: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for c in &r.checks {
        if let Verdict::Fail(v) | Verdict::Warn(v) = &c.verdict {
            // The rules the violation names, else every rule the check cites.
            let blamed = if v.requirements.is_empty() {
                &c.requirements
            } else {
                &v.requirements
            };
            for q in blamed {
                out.entry(q.as_str()).or_default().push(&c.id);
            }
        }
    }
    out
}

fn cell(r: &Report, id: &str, failing: &BTreeMap<&str, Vec<&str>>) -> Cell {
    let Some(q) = r.requirements.iter().find(|q| q.id == id) else {
        return Cell {
            status: MatrixStatus::Untested,
            passed: 0,
            failed: 0,
            warned: 0,
            listed: Vec::new(),
            more: 0,
        };
    };
    let all = failing.get(id).map_or(&[][..], Vec::as_slice);
    let listed: Vec<String> = (all.iter().take(LISTED_PER_CELL))
        .map(|s| (*s).to_string())
        .collect();
    Cell {
        status: q.status,
        passed: q.passed,
        failed: q.failed,
        warned: q.warned,
        more: all.len() - listed.len(),
        listed,
    }
}

/// The default time scale of a column written before it was recorded.
fn one() -> f64 {
    1.0
}
