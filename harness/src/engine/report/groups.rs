//! Root-cause groups (issue 26): failures that expected the same fact — the same refusal,
//! the same status, the same value at the same place — are one bug seen by many checks,
//! whatever each got instead. Every human format lists the groups first, so one bug reads
//! as one line: what was expected, what came back (counted), which rules, which checks.
//!
//! The key is binding-independent: the `@http` / `@mcp` runs of a vector and their PV-TR-1
//! comparison land in one group; a refusal is keyed by its reason whether the check compared
//! the whole answer or only `/error/reason`; digits inside strings (ids, timestamps) are
//! blurred so two threads' `th_12` and `th_97` do not split a group.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::Value;

use super::{BaselineMark, CheckResult, Report};
use crate::engine::repro::compact;
use crate::engine::verdict::{Verdict, Violation};

/// The checks that failed (or warned) expecting one fact.
#[derive(Debug, Clone, PartialEq)]
pub struct FailureGroup {
    /// What the checks expected: `refusal token_right_missing`, `/thread/state: "open"`.
    pub expected: String,
    /// What came back instead, with how many results got it (most frequent first).
    pub observed: Vec<(String, usize)>,
    /// The requirement IDs the members violated (most frequent first).
    pub rules: Vec<String>,
    /// One line: rules, expected, observed.
    pub fact: String,
    /// Whether a member fails the run (else: warnings, expected failures).
    pub fails_run: bool,
    /// Result ids, in report order.
    pub checks: Vec<String>,
}

impl Report {
    /// The failures and warnings grouped by what they expected: run-failing groups first,
    /// then by size (largest first), then in report order.
    pub fn failure_groups(&self) -> Vec<FailureGroup> {
        let mut order: Vec<String> = Vec::new();
        let mut by_key: BTreeMap<String, (FailureGroup, Tally, Tally)> = BTreeMap::new();
        for c in &self.checks {
            let Some(v) = c.verdict.violation() else {
                continue;
            };
            let key = expected_fact(v);
            let (g, observed, rules) = by_key.entry(key.clone()).or_insert_with(|| {
                order.push(key.clone());
                let g = FailureGroup {
                    expected: key.clone(),
                    observed: Vec::new(),
                    rules: Vec::new(),
                    fact: String::new(),
                    fails_run: false,
                    checks: Vec::new(),
                };
                (g, Tally::default(), Tally::default())
            });
            g.fails_run |= c.fails_run();
            g.checks.push(c.id.clone());
            observed.add(observed_fact(v));
            for r in c.violated().unwrap_or_default() {
                rules.add(r.clone());
            }
        }
        let mut groups: Vec<FailureGroup> = (order.iter())
            .filter_map(|k| by_key.remove(k))
            .map(|(mut g, observed, rules)| {
                g.observed = observed.ranked();
                g.rules = rules.ranked().into_iter().map(|(r, _)| r).collect();
                g.fact = describe(&g);
                g
            })
            .collect();
        groups.sort_by_key(|g| (!g.fails_run, std::cmp::Reverse(g.checks.len())));
        groups
    }

    /// The groups as terminal lines: every group on one line with its count and checks.
    pub fn group_lines(&self, max_named: usize) -> String {
        let groups = self.failure_groups();
        let mut out = String::new();
        if groups.is_empty() {
            return out;
        }
        let _ = writeln!(out, "failure groups ({}):", groups.len());
        for g in &groups {
            let _ = writeln!(
                out,
                "  {:>4}× {}{} — {}",
                g.checks.len(),
                if g.fails_run { "" } else { "(warn) " },
                g.fact,
                named(&g.checks, max_named)
            );
        }
        out
    }
}

/// Counts in first-seen order, ranked by count.
#[derive(Default)]
struct Tally(Vec<(String, usize)>);

impl Tally {
    fn add(&mut self, item: String) {
        match self.0.iter_mut().find(|(x, _)| *x == item) {
            Some((_, n)) => *n += 1,
            None => self.0.push((item, 1)),
        }
    }
    fn ranked(mut self) -> Vec<(String, usize)> {
        self.0.sort_by_key(|(_, n)| std::cmp::Reverse(*n));
        self.0
    }
}

/// `PV-AU-1, PV-AU-6: expected refusal token_right_missing, got refusal
/// thread_authority_missing (403) ×37, 201 ×8, +3 more`.
fn describe(g: &FailureGroup) -> String {
    let got: Vec<String> = (g.observed.iter().take(3))
        .map(|(o, n)| {
            if g.checks.len() > 1 {
                format!("{o} ×{n}")
            } else {
                o.clone()
            }
        })
        .collect();
    let more = g.observed.len().saturating_sub(3);
    let more = if more > 0 {
        format!(", +{more} more")
    } else {
        String::new()
    };
    let rules = named(&g.rules, 4);
    format!(
        "{rules}: expected {}, got {}{more}",
        g.expected,
        got.join(", ")
    )
}

impl Report {
    /// Failures and warnings for the terminal: one card per group (its first result, with
    /// what was expected and observed and how to re-run it) naming the group's other
    /// results, then the harness errors. Every card is in report.md and report.html.
    pub fn failure_details(&self) -> String {
        let mut out = String::new();
        let by_id = self.by_id();
        for g in self.failure_groups() {
            let Some(c) = g.checks.first().and_then(|id| by_id.get(id.as_str())) else {
                continue;
            };
            card(&mut out, c);
            if g.checks.len() > 1 {
                let _ = writeln!(
                    out,
                    "  same expectation failed on {} more: {}",
                    g.checks.len() - 1,
                    named(&g.checks[1..], 12)
                );
            }
        }
        for c in &self.checks {
            if let Verdict::HarnessError { message } = &c.verdict {
                let _ = writeln!(out, "HARNESS ERROR {}: {message}", c.id);
            }
        }
        out
    }
}

/// One result's card: verdict, violated IDs, the fact, the reproduction.
fn card(out: &mut String, c: &CheckResult) {
    let Some(v) = c.verdict.violation() else {
        return;
    };
    let tag = match (&c.verdict, &c.baseline) {
        (_, Some(BaselineMark::ExpectedFailure { .. })) => "XFAIL",
        (Verdict::Fail(_), _) => "FAIL",
        _ => "WARN",
    };
    let violated = c.violated().unwrap_or_default().join(", ");
    let _ = writeln!(out, "{tag} {} [{violated}] {}", c.id, c.title);
    let step = v.step.map(|s| format!("step {s}: ")).unwrap_or_default();
    let _ = writeln!(out, "  {step}{} (at {:?})", v.message, v.pointer);
    let _ = writeln!(out, "  expected: {}", compact(&v.expected, 300));
    let _ = writeln!(out, "  observed: {}", compact(&v.observed, 300));
    if let Some(r) = &c.reproduction {
        let _ = writeln!(out, "  re-run:   {}", r.command);
        for (k, val) in &r.env {
            let _ = writeln!(out, "  export {k}={val}");
        }
        for cmd in &r.curl {
            let _ = writeln!(out, "  {cmd}");
        }
    }
}

/// `a, b, c +N more`.
pub fn named(checks: &[String], max: usize) -> String {
    let shown: Vec<&str> = checks.iter().take(max).map(String::as_str).collect();
    let rest = checks.len().saturating_sub(max);
    if rest > 0 {
        format!("{} +{rest} more", shown.join(", "))
    } else {
        shown.join(", ")
    }
}

/// What a violation expected, binding-independent: a refusal by its reason (whether the
/// check compared the whole answer or only `/error/reason`), else the place and the value.
fn expected_fact(v: &Violation) -> String {
    if let Some(reason) = refusal_reason(&v.pointer, &v.expected) {
        return format!("refusal {reason}");
    }
    format!("{} = {}", place(&v.pointer), blur(&v.expected))
}

/// What came back instead: a refusal by reason and status, a success by status, else the
/// blurred value.
fn observed_fact(v: &Violation) -> String {
    if let Some(reason) = refusal_reason(&v.pointer, &v.observed) {
        let status = v.observed.get("status").and_then(Value::as_u64);
        return match status {
            Some(s) => format!("refusal {reason} ({s})"),
            None => format!("refusal {reason}"),
        };
    }
    if let Some(status) = v.observed.get("status").and_then(Value::as_u64) {
        return format!("status {status}");
    }
    blur(&v.observed)
}

/// The refusal reason a value states: the string at `/error/reason`, or the `reason` of an
/// expected refusal / of an observed answer's error body.
fn refusal_reason(pointer: &str, v: &Value) -> Option<String> {
    if pointer.ends_with("/error/reason") {
        return v.as_str().map(str::to_string);
    }
    let reason = v
        .get("reason")
        .or_else(|| v.pointer("/body/error/reason"))
        .or_else(|| v.pointer("/error/reason"))?;
    reason.as_str().map(str::to_string)
}

fn place(pointer: &str) -> &str {
    if pointer.is_empty() {
        "status"
    } else {
        pointer
    }
}

/// A value as one short line, digit runs inside its strings blurred (`"th_12"` →
/// `"th_#"`, timestamps alike); numbers stay exact (a status 500 is not a 200).
fn blur(v: &Value) -> String {
    compact(&blur_strings(v), 120)
}

fn blur_strings(v: &Value) -> Value {
    match v {
        Value::String(s) => Value::String(blur_digits(s)),
        Value::Array(a) => Value::Array(a.iter().map(blur_strings).collect()),
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, x)| (k.clone(), blur_strings(x)))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn blur_digits(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut in_digits = false;
    for ch in s.chars() {
        if ch.is_ascii_digit() {
            if !in_digits {
                out.push('#');
            }
            in_digits = true;
        } else {
            in_digits = false;
            out.push(ch);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::verdict::Violation;
    use serde_json::json;

    fn failing(id: &str, rule: &str, at: &str, expected: Value, observed: Value) -> CheckResult {
        CheckResult {
            id: id.into(),
            check: id.split('@').next().unwrap_or(id).into(),
            suite: "parley".into(),
            area: "a".into(),
            title: id.into(),
            transport: None,
            requirements: vec![rule.into(), "PV-EN-1".into()],
            required: true,
            verdict: Verdict::Fail(Violation {
                check: id.into(),
                requirements: vec![rule.into()],
                step: Some(2),
                pointer: at.into(),
                expected,
                observed,
                message: "value differs".into(),
                transcript: Vec::new(),
                completed: false,
            }),
            baseline: None,
            duration_ms: 1,
            exchanges: 2,
            self_test: false,
            reproduction: None,
        }
    }

    #[test]
    fn one_bug_reads_as_one_group() {
        let expected = json!({"status": 403, "reason": "token_right_missing"});
        let other = |th: &str| json!({"status": 201, "body": {"thread": {"id": th}}});
        let mut r = crate::engine::report::tests::empty_report();
        r.checks = vec![
            failing("d@http", "PV-ST-4", "", json!(409), json!(200)),
            failing("a@http", "PV-AU-1", "", expected.clone(), other("th_12")),
            failing("a@mcp", "PV-AU-1", "", expected, other("th_97")),
            failing(
                "b@http",
                "PV-AU-6",
                "/error/reason",
                json!("token_right_missing"),
                json!("thread_authority_missing"),
            ),
            failing("c@http", "PV-ST-4", "", json!(409), json!(200)),
        ];
        let groups = r.failure_groups();
        assert_eq!(groups.len(), 2, "{groups:#?}");
        assert_eq!(groups[0].checks, ["a@http", "a@mcp", "b@http"]);
        assert_eq!(
            groups[0].fact,
            "PV-AU-1, PV-AU-6: expected refusal token_right_missing, got status 201 ×2, \
             refusal thread_authority_missing ×1"
        );
        assert_eq!(
            groups[1].fact, "PV-ST-4: expected status = 409, got 200 ×2",
            "numbers stay exact"
        );
        let lines = r.group_lines(2);
        assert!(lines.contains("   3× PV-AU-1"), "{lines}");
        assert!(lines.contains("a@http, a@mcp +1 more"), "{lines}");
    }
}
