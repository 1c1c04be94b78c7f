//! Snapshot tests of the four renderers on a hand-built report (times, ports, ids redacted).
#![allow(clippy::expect_used, clippy::unwrap_used)] // tests: a panic is the failure report

use conform::engine::report::TargetInfo;
use conform::engine::report::{
    BaselineInfo, BaselineMark, CheckResult, MatrixStatus, Report, Reproduction, RequirementRow,
    Summary, ToolInfo, curl_command, html, json, junit, markdown,
};
use conform::engine::requirements::Level;
use conform::engine::verdict::{Verdict, Violation};
use conform::transport::{Exchange, McpRevision, TransportKind};
use regex::Regex;
use serde_json::json;

fn exchange() -> Exchange {
    Exchange {
        transport: TransportKind::Http,
        method: "POST".into(),
        url: "http://127.0.0.1:41234/v1/messages".into(),
        request_headers: vec![
            ("authorization".into(), "Bearer ${CONFORM_TOKEN_AGENT_A}".into()),
            ("content-type".into(), "application/json".into()),
        ],
        request_body: Some(r#"{"kind":"ask","body":"it's <b>501</b> chars"}"#.into()),
        status: Some(201),
        response_headers: vec![("content-type".into(), "application/json".into())],
        response_body: Some(
            r#"{"message":{"id":"msg_17","created_at":"2026-11-30T04:00:00Z"},"thread":{"id":"th_9"}}"#.into(),
        ),
        error: None,
        elapsed_us: 812,
    }
}

fn result(
    id: &str,
    transport: Option<TransportKind>,
    reqs: &[&str],
    verdict: Verdict,
) -> CheckResult {
    let check = id.split('@').next().unwrap().to_string();
    let reproduction = verdict.violation().map(|v| Reproduction {
        command: format!("conform run --spawn-reference --filter '{check}' --transport http"),
        env: vec![("CONFORM_TOKEN_AGENT_A".into(), "demo-agent-a".into())],
        curl: v.transcript.iter().map(curl_command).collect(),
    });
    CheckResult {
        id: id.into(),
        check,
        suite: "parley".into(),
        area: "envelope".into(),
        title: format!("title of {id}"),
        transport,
        requirements: reqs.iter().map(|s| s.to_string()).collect(),
        required: true,
        verdict,
        baseline: None,
        duration_ms: 3,
        exchanges: 1,
        reproduction,
    }
}

fn report() -> Report {
    let violation = Violation {
        check: "envelope/body-501".into(),
        requirements: vec!["PV-EN-2".into()],
        step: Some(1),
        pointer: "".into(),
        expected: json!({"status": 400, "reason": "body_too_long"}),
        observed: json!({"status": 201, "body": {"thread": {"id": "th_9"}}}),
        message: "expected refusal HTTP 400 body_too_long, got HTTP 201".into(),
        transcript: vec![exchange()],
    };
    let mut checks = vec![
        result(
            "envelope/body-500@http",
            Some(TransportKind::Http),
            &["PV-EN-2"],
            Verdict::Pass,
        ),
        result(
            "envelope/body-501@http",
            Some(TransportKind::Http),
            &["PV-EN-2"],
            Verdict::Fail(violation.clone()),
        ),
        result(
            "shapes/415@http",
            Some(TransportKind::Http),
            &["PV-RS-4"],
            Verdict::Warn(Violation {
                requirements: vec!["PV-RS-4".into()],
                check: "shapes/415".into(),
                ..violation.clone()
            }),
        ),
        result(
            "dialectic/assert@mcp",
            Some(TransportKind::Mcp),
            &["PV-DI-2"],
            Verdict::Unsupported {
                reason: "the target's manifest does not enable `dialectic`".into(),
            },
        ),
        result(
            "state/x@mcp",
            Some(TransportKind::Mcp),
            &["PV-ST-1"],
            Verdict::HarnessError {
                message: "step 2: unknown placeholder $t".into(),
            },
        ),
        result(
            "authority/known@http",
            Some(TransportKind::Http),
            &["PV-AU-1"],
            Verdict::Fail(Violation {
                check: "authority/known".into(),
                requirements: vec!["PV-AU-1".into()],
                ..violation
            }),
        ),
        result(
            "PV-TR-1/envelope/body-500",
            None,
            &["PV-TR-1"],
            Verdict::Pass,
        ),
    ];
    checks[5].baseline = Some(BaselineMark::ExpectedFailure {
        reason: "known bug #12".into(),
    });
    let row = |id: &str, level: Level, status: MatrixStatus, cs: &[&str]| RequirementRow {
        id: id.into(),
        suite: "parley".into(),
        level,
        area: "envelope".into(),
        rule: format!("rule of {id} | with a pipe"),
        source: "parley-v1.md §3".into(),
        status,
        checks: cs.iter().map(|s| s.to_string()).collect(),
        passed: 0,
        failed: 0,
        warned: 0,
    };
    let mut r = Report {
        format_version: 1,
        tool: ToolInfo {
            name: "conform".into(),
            version: "0.1.0".into(),
        },
        target: TargetInfo {
            name: "reference (spawned in process)".into(),
            base_url: "http://127.0.0.1:41234".into(),
            mcp_url: "http://127.0.0.1:41234/mcp".into(),
            mcp_revision: McpRevision::V2025_11_25,
            server_version: Some("0.1.0".into()),
            profiles: vec!["dialectic".into()],
            spawned_reference: true,
            profile_path: None,
            tls: None,
        },
        started_at: "2026-11-30T04:00:00Z".into(),
        wall_time_ms: 1234,
        exchanges: 42,
        exchanges_per_second: 34.0,
        suites: vec!["parley".into()],
        transports: vec![TransportKind::Http, TransportKind::Mcp],
        filter: None,
        jobs: 8,
        summary: Summary::default(),
        requirements: vec![
            row(
                "PV-EN-2",
                Level::Must,
                MatrixStatus::Fail,
                &["envelope/body-500@http", "envelope/body-501@http"],
            ),
            row(
                "PV-RS-4",
                Level::Should,
                MatrixStatus::Warn,
                &["shapes/415@http"],
            ),
            row(
                "PV-DI-2",
                Level::Must,
                MatrixStatus::NotApplicable,
                &["dialectic/assert@mcp"],
            ),
            row("PV-ID-1", Level::Must, MatrixStatus::Untested, &[]),
            row(
                "PV-TR-1",
                Level::Must,
                MatrixStatus::Pass,
                &["PV-TR-1/envelope/body-500"],
            ),
        ],
        checks,
        baseline: Some(BaselineInfo {
            path: "baseline.toml".into(),
            entries: 1,
        }),
        suite_power: None,
    };
    r.recount();
    r
}

fn redact(s: &str) -> String {
    let rules = [
        (r"127\.0\.0\.1:\d+", "127.0.0.1:[port]"),
        (r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z", "[time]"),
        (r"\b(th|msg|ev|cl)_\d+\b", "[$1-id]"),
        (r"wall time[^<|\n]*", "wall time [redacted]"),
        (r#"time="[0-9.]+""#, r#"time="[t]""#),
    ];
    let mut out = s.to_string();
    for (re, to) in rules {
        out = Regex::new(re).unwrap().replace_all(&out, to).into_owned();
    }
    out
}

#[test]
fn exit_code_and_summary() {
    let r = report();
    assert_eq!(
        r.summary.required_failures, 1,
        "the expected failure does not count"
    );
    assert_eq!(r.summary.harness_error, 1);
    assert_eq!(r.exit_code(), 2);
    assert_eq!(r.summary.untested_must, 1);
}

#[test]
fn json_snapshot() {
    let r = report();
    let text = json::render(&r).unwrap();
    let back: Report = serde_json::from_str(&text).unwrap();
    assert_eq!(back, r, "the JSON report round-trips");
    insta::assert_snapshot!("report_json", redact(&text));
}

#[test]
fn junit_snapshot() {
    insta::assert_snapshot!("report_junit", redact(&junit::render(&report())));
}

#[test]
fn markdown_snapshot() {
    insta::assert_snapshot!("report_markdown", redact(&markdown::render(&report())));
}

#[test]
fn html_snapshot() {
    let page = html::render(&report());
    assert!(
        !page.contains("http://") || !page.contains("<link"),
        "no external assets"
    );
    assert!(!page.contains("<script src"), "no external scripts");
    insta::assert_snapshot!("report_html", redact(&page));
}

#[test]
fn summary_snapshot() {
    let r = report();
    insta::assert_snapshot!(
        "summary_text",
        redact(&format!("{}\n{}", r.summary_table(), r.failure_details()))
    );
}

/// The suite-power section (issue 6) in the Markdown and HTML reports, and its JSON round trip.
#[test]
fn suite_power_section() {
    use conform::engine::report::power::{
        Detection, FailedCheck, FaultResult, RequirementPower, RequirementPowerStatus, Scope,
        SuitePower,
    };
    let mut r = report();
    r.suite_power = Some(SuitePower {
        format_version: 1,
        scope: Scope::Auto,
        total: 2,
        caught: 1,
        caught_as_warning: 0,
        caught_elsewhere: 0,
        missed: 1,
        harness_errors: 0,
        clean: None,
        faults: vec![
            FaultResult {
                name: "body-accepts-one-over".into(),
                suite: "parley".into(),
                description: "accepts a 501-character body".into(),
                requirements: vec!["PV-EN-2".into()],
                detection: Detection::Caught,
                violates_must: true,
                checks_run: 12,
                caught_by: vec![FailedCheck {
                    id: "envelope/body-501@http".into(),
                    requirements: vec!["PV-EN-2".into()],
                    message: "expected refusal 400 body_too_long, got 201".into(),
                }],
                failed_elsewhere: vec![],
                warned_by: vec![],
                harness_errors: 0,
                error: None,
                wall_time_ms: 10,
            },
            FaultResult {
                name: "read-thread-flat".into(),
                suite: "parley".into(),
                description: "read_thread ignores parent".into(),
                requirements: vec!["PV-RD-1".into()],
                detection: Detection::Missed,
                violates_must: true,
                checks_run: 4,
                caught_by: vec![],
                failed_elsewhere: vec![],
                warned_by: vec![],
                harness_errors: 0,
                error: None,
                wall_time_ms: 10,
            },
        ],
        requirements: vec![
            RequirementPower {
                id: "PV-EN-2".into(),
                suite: "parley".into(),
                faults: vec!["body-accepts-one-over".into()],
                caught_by: vec!["body-accepts-one-over".into()],
                status: RequirementPowerStatus::Caught,
            },
            RequirementPower {
                id: "PV-RD-1".into(),
                suite: "parley".into(),
                faults: vec!["read-thread-flat".into()],
                caught_by: vec![],
                status: RequirementPowerStatus::NotCaught,
            },
        ],
        wall_time_ms: 20,
        variants: None,
    });
    let back: Report = serde_json::from_str(&json::render(&r).unwrap()).unwrap();
    assert_eq!(back, r, "the suite-power section round-trips");
    let md = markdown::render(&r);
    let section = &md[md.find("## Suite power").expect("markdown section")..];
    insta::assert_snapshot!("suite_power_markdown", redact(section));
    let page = html::render(&r);
    assert!(page.contains("<h2 id=\"suite-power\">Suite power</h2>"));
    assert!(page.contains("1 of 2 seeded faults caught"), "{page}");
    assert!(page.contains("<td>PV-RD-1</td><td>read-thread-flat</td><td>NOT caught</td>"));
    // Without the section, nothing is rendered for it.
    assert!(!markdown::render(&report()).contains("Suite power"));
}
