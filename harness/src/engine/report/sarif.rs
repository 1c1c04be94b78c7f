//! SARIF 2.1.0 renderer (OASIS, errata 01) for code-scanning UIs: one rule per requirement ID
//! of the catalogues in the report, one result per failing or warning check.
//!
//! Modelling choices (README, "SARIF"):
//! - a check citing several requirement IDs gives **one** result whose `ruleId` is its primary
//!   (first cited) requirement; every cited ID is listed in `properties.requirements`, so a
//!   failure is counted once, as in the other formats;
//! - `fail` → level `error`, `warn` → level `warning`; passes, `unsupported` and `skipped`
//!   checks are no results; a baseline-listed failure is a result with an `external`
//!   suppression; harness errors say nothing about the target and are tool execution
//!   notifications, not results;
//! - the target is a remote server, so a result's location is logical (the check id); the
//!   target profile file, when the report names one, is its physical location (code-scanning
//!   UIs need a file), and a fingerprint from the result id keeps results sharing that file
//!   apart.

use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::{Map, Value, json};
use sha2::{Digest as _, Sha256};

use super::renderer::{Links, RenderError, Renderer};
use super::{BaselineMark, CheckResult, Report, RequirementRow, anchor};
use crate::engine::repro::compact;
use crate::engine::requirements::Level;
use crate::engine::verdict::{Verdict, Violation};

/// The `$schema` of the log: the OASIS SARIF 2.1.0 errata 01 schema (vendored in
/// `vectors/schemas/sarif-schema-2.1.0.json`, which the tests validate against).
pub const SCHEMA_URI: &str =
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";

/// How much of an expected/observed value a result carries (the JSON report has it all).
const VALUE_CHARS: usize = 500;

/// Renders the report as a SARIF 2.1.0 log. `report_url`, when given, is the absolute URL the
/// HTML report is published at: each rule's `helpUri` is then its requirement-matrix row there
/// (SARIF requires an absolute URI, so without it rules carry the anchor in their help text only).
pub fn render(report: &Report, report_url: Option<&url::Url>) -> String {
    let log = json!({
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [run(report, report_url)],
    });
    // A `Value` always serialises (string keys only); the fallback is never taken.
    let mut text = serde_json::to_string_pretty(&log).unwrap_or_default();
    text.push('\n');
    text
}

fn run(report: &Report, report_url: Option<&url::Url>) -> Value {
    let rules: Vec<Value> = (report.requirements.iter())
        .map(|r| rule(r, report_url))
        .collect();
    let results: Vec<Value> = (report.checks.iter())
        .filter_map(|c| result(report, c))
        .collect();
    let mut driver = json!({
        "name": report.tool.name,
        "version": report.tool.version,
        "rules": rules,
    });
    if semver::Version::parse(&report.tool.version).is_ok() {
        driver["semanticVersion"] = json!(report.tool.version);
    }
    json!({
        "tool": { "driver": driver },
        "invocations": [invocation(report)],
        "automationDetails": {
            // `category/` (trailing slash: no run id): code scanning keeps the alerts of one
            // suite selection apart from other analyses of the same repository.
            "id": format!("conform/{}/", report.suites.join("+")),
            "description": { "text": format!(
                "conform {} against {} ({})",
                report.suites.join(", "), report.target.name, report.target.base_url
            ) },
        },
        "results": results,
        "properties": run_properties(report),
    })
}

/// SARIF level of a rule at this requirement level: what a violation does to the run.
fn level(l: Level) -> &'static str {
    match l {
        Level::Must | Level::Rec => "error",
        Level::Should => "warning",
        Level::May => "note",
    }
}

/// GitHub code scanning's severity of non-security alerts.
fn problem_severity(l: Level) -> &'static str {
    match l {
        Level::Must | Level::Rec => "error",
        Level::Should => "warning",
        Level::May => "recommendation",
    }
}

fn rule(r: &RequirementRow, report_url: Option<&url::Url>) -> Value {
    let row = format!("report.html#{}", anchor(&r.id));
    let help = format!(
        "{} ({}, {}). Evidence: the requirement-matrix row {row} of the HTML report.",
        r.rule, r.level, r.source
    );
    // Tags are a set (`uniqueItems`): an empty area or one named like its suite is left out.
    let mut tags: Vec<String> = Vec::new();
    for t in [r.suite.clone(), r.area.clone(), r.level.to_string()] {
        if !t.is_empty() && !tags.contains(&t) {
            tags.push(t);
        }
    }
    let mut out = json!({
        "id": r.id,
        "shortDescription": { "text": r.rule },
        "fullDescription": { "text": format!("{} {}: {} ({})", r.id, r.level, r.rule, r.source) },
        "help": { "text": help },
        "defaultConfiguration": { "level": level(r.level) },
        "properties": {
            "tags": tags,
            "problem.severity": problem_severity(r.level),
            "suite": r.suite,
            "area": r.area,
            "level": r.level.to_string(),
            "source": r.source,
            "status": r.status.as_str(),
            "passed": r.passed,
            "failed": r.failed,
            "warned": r.warned,
        },
    });
    if let Some(base) = report_url {
        let mut u = base.clone();
        u.set_fragment(Some(&anchor(&r.id)));
        out["helpUri"] = json!(u.as_str());
    }
    out
}

/// The result of one check, or `None` when it is not a finding (pass, unsupported, skipped,
/// harness error).
fn result(report: &Report, c: &CheckResult) -> Option<Value> {
    let (v, level) = match &c.verdict {
        Verdict::Fail(v) => (v, "error"),
        Verdict::Warn(v) => (v, "warning"),
        Verdict::Pass
        | Verdict::Unsupported { .. }
        | Verdict::Skipped { .. }
        | Verdict::HarnessError { .. } => return None,
    };
    let cited = c.violated().unwrap_or(&c.requirements);
    let rule_id = cited.first().cloned().unwrap_or_else(|| c.check.clone());
    let mut out = json!({
        "ruleId": rule_id,
        "kind": "fail",
        "level": level,
        "message": { "text": message(c, v) },
        "locations": [location(report, c)],
        "partialFingerprints": { "primaryLocationLineHash": fingerprint(&c.id, &rule_id) },
        "properties": result_properties(c, v, cited),
    });
    if let Some(i) = report.requirements.iter().position(|r| r.id == rule_id) {
        out["ruleIndex"] = json!(i);
    }
    if let Some(BaselineMark::ExpectedFailure { reason }) = &c.baseline {
        out["suppressions"] = json!([{
            "kind": "external",
            "status": "accepted",
            "justification": format!("baseline: {reason}"),
        }]);
    }
    Some(out)
}

fn message(c: &CheckResult, v: &Violation) -> String {
    let step = v.step.map(|s| format!("step {s}, ")).unwrap_or_default();
    let pointer = if v.pointer.is_empty() {
        "the whole response".to_string()
    } else {
        v.pointer.clone()
    };
    format!(
        "{} — {} ({step}at {pointer}; expected {}, observed {}). Check {}: {}.",
        v.message.trim_end_matches('.'),
        c.violated().unwrap_or(&c.requirements).join(", "),
        compact(&v.expected, 200),
        compact(&v.observed, 200),
        c.id,
        c.title.trim_end_matches('.'),
    )
}

/// Logical location: the check (on its transport); physical: the target profile, when known.
fn location(report: &Report, c: &CheckResult) -> Value {
    let mut logical = json!({ "name": c.check, "fullyQualifiedName": c.id });
    if !c.area.is_empty() {
        logical["properties"] = json!({ "suite": c.suite, "area": c.area });
    }
    let mut loc = json!({ "logicalLocations": [logical] });
    let workspace = workspace();
    let uri =
        (report.target.profile_path.as_deref()).and_then(|p| path_uri(p, workspace.as_deref()));
    if let Some(uri) = uri {
        loc["physicalLocation"] = json!({
            "artifactLocation": { "uri": uri },
            "region": { "startLine": 1 },
        });
    }
    loc
}

/// The directory code scanning resolves relative URIs from: `$GITHUB_WORKSPACE` in a GitHub
/// Actions job, else the working directory.
fn workspace() -> Option<std::path::PathBuf> {
    std::env::var_os("GITHUB_WORKSPACE")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::current_dir().ok())
}

/// A path as a URI reference: relative paths stay relative (code scanning resolves them from
/// the repository root); an absolute one inside `workspace` is made relative to it (issue
/// 26: `--target /abs/path` must still name a file of the repository); other absolute paths
/// become `file:` URLs.
fn path_uri(path: &str, workspace: Option<&std::path::Path>) -> Option<String> {
    let p = std::path::Path::new(path);
    if p.is_absolute() {
        let inside = workspace.and_then(|w| p.strip_prefix(w).ok());
        return match inside.and_then(|r| r.to_str()) {
            Some(rel) if !rel.is_empty() => path_uri(rel, None),
            _ => url::Url::from_file_path(p).ok().map(String::from),
        };
    }
    let mut out = String::new();
    for b in path.replace('\\', "/").bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    (!out.is_empty()).then_some(out)
}

/// Code scanning derives an alert's identity from the rule, the file and this fingerprint;
/// every result of a run shares one file (the profile), so the fingerprint is the result's own
/// stable id rather than a hash of a file line.
fn fingerprint(result_id: &str, rule_id: &str) -> String {
    let digest = Sha256::digest(format!("{rule_id}\n{result_id}").as_bytes());
    format!("{}:1", hex::encode(&digest[..16]))
}

fn result_properties(c: &CheckResult, v: &Violation, cited: &[String]) -> Value {
    let mut p = Map::new();
    p.insert("resultId".into(), json!(c.id));
    p.insert("check".into(), json!(c.check));
    p.insert("suite".into(), json!(c.suite));
    p.insert("area".into(), json!(c.area));
    if let Some(t) = c.transport {
        p.insert("transport".into(), json!(t.as_str()));
    }
    p.insert("requirements".into(), json!(cited));
    p.insert("required".into(), json!(c.required));
    if let Some(s) = v.step {
        p.insert("step".into(), json!(s));
    }
    p.insert("pointer".into(), json!(v.pointer));
    p.insert("expected".into(), json!(compact(&v.expected, VALUE_CHARS)));
    p.insert("observed".into(), json!(compact(&v.observed, VALUE_CHARS)));
    if let Some(r) = &c.reproduction {
        p.insert("reproduction".into(), json!(r.command));
    }
    Value::Object(p)
}

/// UTC `Z` form of an RFC 3339 time (SARIF's date-time properties), `None` if unparsable.
fn utc(t: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(t)
        .ok()
        .map(|d| d.with_timezone(&Utc))
}

fn invocation(report: &Report) -> Value {
    let exit = report.exit_code();
    let mut inv = json!({
        // The run completed and judged every check unless a harness error left some unjudged.
        "executionSuccessful": report.summary.harness_error == 0,
        "exitCode": exit,
        "exitCodeDescription": match exit {
            0 => "every required check passed",
            1 => "a required check failed",
            _ => "the harness could not judge some checks",
        },
        "toolExecutionNotifications": notifications(report),
    });
    if let Some(start) = utc(&report.started_at) {
        let wall = i64::try_from(report.wall_time_ms).unwrap_or(i64::MAX);
        inv["startTimeUtc"] = json!(start.to_rfc3339_opts(SecondsFormat::Millis, true));
        if let Some(end) = start.checked_add_signed(chrono::Duration::milliseconds(wall)) {
            inv["endTimeUtc"] = json!(end.to_rfc3339_opts(SecondsFormat::Millis, true));
        }
    }
    inv
}

/// Harness errors (the check could not be judged) and baseline entries that passed.
fn notifications(report: &Report) -> Vec<Value> {
    let mut out = Vec::new();
    for c in &report.checks {
        let (level, text) = match (&c.verdict, &c.baseline) {
            (Verdict::HarnessError { message }, _) => {
                ("error", format!("harness error in {}: {message}", c.id))
            }
            (Verdict::Pass, Some(BaselineMark::UnexpectedPass { reason })) => (
                "note",
                format!(
                    "{} passed but the baseline lists it ({reason}): remove the entry",
                    c.id
                ),
            ),
            _ => continue,
        };
        let mut n = json!({
            "level": level,
            "message": { "text": text },
            "properties": { "resultId": c.id },
        });
        if let Some(i) = (c.requirements.first())
            .and_then(|id| report.requirements.iter().position(|r| &r.id == id))
        {
            n["associatedRule"] = json!({ "id": report.requirements[i].id, "index": i });
        }
        out.push(n);
    }
    out
}

fn run_properties(report: &Report) -> Value {
    let t = &report.target;
    let transports: Vec<&str> = report.transports.iter().map(|t| t.as_str()).collect();
    json!({
        "target": {
            "name": t.name,
            "baseUrl": t.base_url,
            "mcpUrl": t.mcp_url,
            "mcpRevision": t.mcp_revision.to_string(),
            "serverVersion": t.server_version,
            "profiles": t.profiles,
            "spawnedReference": t.spawned_reference,
            "profilePath": t.profile_path,
        },
        "suites": report.suites,
        "transports": transports,
        "filter": report.filter,
        "baseline": report.baseline.as_ref().map(|b| json!({ "path": b.path, "entries": b.entries })),
        "summary": report.summary,
        "exchanges": report.exchanges,
        "wallTimeMs": report.wall_time_ms,
    })
}

/// The sarif format ([`Renderer`]).
#[derive(Debug, Clone, Copy)]
pub struct Sarif;

impl Renderer for Sarif {
    fn name(&self) -> &'static str {
        "sarif"
    }

    fn about(&self) -> &'static str {
        "SARIF 2.1.0 (`report.sarif`) for code-scanning UIs"
    }

    fn file_name(&self) -> &'static str {
        "report.sarif"
    }

    fn render(&self, report: &Report, links: Links<'_>) -> Result<String, RenderError> {
        Ok(render(report, links.report_url))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profile_paths_become_uri_references() {
        let ws = std::path::Path::new("/home/u/repo");
        let uri = |p: &str| path_uri(p, Some(ws));
        assert_eq!(uri("ci/target.toml").as_deref(), Some("ci/target.toml"));
        assert_eq!(
            uri("my dir/a#b%.toml").as_deref(),
            Some("my%20dir/a%23b%25.toml")
        );
        assert_eq!(
            uri("/srv/x y.toml").as_deref(),
            Some("file:///srv/x%20y.toml")
        );
        // Issue 26: an absolute `--target` inside the workspace is a file of the repository.
        assert_eq!(
            uri("/home/u/repo/ci/target.toml").as_deref(),
            Some("ci/target.toml")
        );
        assert_eq!(uri(""), None);
    }

    #[test]
    fn fingerprints_differ_per_result_and_rule() {
        let a = fingerprint("envelope/x@http", "PV-EN-2");
        assert_ne!(a, fingerprint("envelope/x@mcp", "PV-EN-2"));
        assert_ne!(a, fingerprint("envelope/x@http", "PV-EN-3"));
        assert_eq!(a, fingerprint("envelope/x@http", "PV-EN-2"), "stable");
    }
}
