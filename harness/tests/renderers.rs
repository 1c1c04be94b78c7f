//! Snapshot tests of the four renderers on a hand-built report (times, ports, ids redacted).
#![expect(clippy::expect_used, clippy::unwrap_used)] // tests: a panic is the failure report

use conform::engine::report::{
    BaselineInfo, BaselineMark, CheckResult, MatrixStatus, Report, Reproduction, RequirementRow,
    Summary, ToolInfo, badge, html, json, junit, markdown, sarif,
};
use conform::engine::repro::curl_command;
use conform::engine::requirements::Level;
use conform::engine::target::TargetInfo;
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
        resent_after: None,
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
        transport: transport.map(Into::into),
        requirements: reqs.iter().map(|s| s.to_string()).collect(),
        required: true,
        verdict,
        baseline: None,
        duration_ms: 3,
        exchanges: 1,
        self_test: false,
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
        completed: false,
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
            Verdict::not_offered("the target's manifest does not enable `dialectic`"),
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
        library: false,
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
            fingerprint: Default::default(),
            time_scale: Default::default(),
        },
        started_at: "2026-11-30T04:00:00Z".into(),
        wall_time_ms: 1234,
        exchanges: 42,
        exchanges_per_second: 34.0,
        suites: vec!["parley".into()],
        transports: vec![TransportKind::Http.into(), TransportKind::Mcp.into()],
        filter: None,
        jobs: 8,
        summary: Summary::default(),
        completeness: Default::default(),
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
            allow_stale: false,
        }),
        suite_power: None,
        shard: None,
        interrupted: false,
        suite_digest: None,
        signature: None,
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
        (r"longest checks[^<|\n]*", "longest checks [redacted]"),
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

/// A check id, a server message, a response body and a target name carrying markup stay
/// text: the page's own script is the only one.
#[test]
fn html_escapes_hostile_text() {
    let mut r = report();
    r.target.name = "<script>alert(4)</script>".into();
    r.checks[1].id = "envelope/<script>alert(1)</script>@http".into();
    let Verdict::Fail(v) = &mut r.checks[1].verdict else {
        panic!("checks[1] is the failure")
    };
    v.message = "server said <script>alert(2)</script>".into();
    v.transcript[0].response_body = Some("<img src=x onerror=alert(3)>".into());
    let page = html::render(&r);
    assert_eq!(
        page.matches("<script").count(),
        1,
        "only the page's own script"
    );
    assert!(!page.contains("<img src=x"), "markup in a body stays text");
    assert!(page.contains("envelope/&lt;script&gt;alert(1)&lt;/script&gt;@http"));
    assert!(page.contains("server said &lt;script&gt;alert(2)&lt;/script&gt;"));
    assert!(page.contains("&lt;img src=x onerror=alert(3)&gt;"));
}

/// What a person needs first comes first: the verdict, then the areas, then the failures —
/// the one failing the run before the harness error, the warning and the expected failure
/// — and only then the requirement matrix and the check list, whose rows are collapsed.
#[test]
fn html_puts_verdict_and_failures_first() {
    let page = html::render(&report());
    let at = |needle: &str| {
        page.find(needle)
            .unwrap_or_else(|| panic!("{needle} missing from the page"))
    };
    assert!(at("id=\"verdict\"") < at("id=\"areas\""));
    assert!(at("id=\"areas\"") < at("id=\"failures\""));
    assert!(at("id=\"failures\"") < at("id=\"requirements\""));
    assert!(at("id=\"requirements\"") < at("id=\"checks\""));
    let fail = at("<article class=\"failure fi fail\" id=\"c-envelope-body-501-http\"");
    let err = at("<article class=\"failure fi err\" id=\"c-state-x-mcp\"");
    let warn = at("<article class=\"failure fi warn\" id=\"c-shapes-415-http\"");
    let xfail = at("<article class=\"failure fi xfail\" id=\"c-authority-known-http\"");
    assert!(fail < err && err < warn && warn < xfail, "problems ranked");
    assert!(
        page.contains("id=\"failure-count\""),
        "the failure count is marked"
    );
    assert!(
        page.contains("<strong>FAIL</strong>") || page.contains("<strong>HARNESS ERROR</strong>"),
        "the verdict is stated"
    );
    // The passing comparison joins its vector's row, in a column named by its prefix.
    assert!(page.contains("<th scope=\"col\">PV-TR-1</th>"));
    // Each requirement is one collapsible row with evidence counts, not a wall of links.
    assert!(page.contains("<details class=\"req fi\" id=\"c-PV-EN-2\" open>"));
    assert!(
        page.contains("1 fail · 1 pass"),
        "evidence counts of PV-EN-2"
    );
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
                report: None,
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
                report: None,
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

// ---------------------------------------------------------------------------------------------
// SARIF 2.1.0 (issue 15, item 3) and the badge (item 7).

/// The OASIS SARIF 2.1.0 (errata 01) schema, vendored; formats (`uri`, `date-time`) asserted,
/// nothing fetched (the schema has no remote references and jsonschema is built without
/// remote resolution).
fn sarif_validator() -> jsonschema::Validator {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../vectors/schemas/sarif-schema-2.1.0.json");
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    jsonschema::options()
        .should_validate_formats(true)
        .build(&schema)
        .expect("the SARIF schema compiles")
}

fn sarif_errors(log: &serde_json::Value) -> Vec<String> {
    sarif_validator()
        .iter_errors(log)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect()
}

/// The committed report of the full suite against the reference (a real, passing run).
fn reference_report() -> Report {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../reports/reference/report.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn sarif_of_a_passing_run_is_valid_and_has_no_results() {
    let r = reference_report();
    assert_eq!(r.exit_code(), 0, "the committed reference report passes");
    let text = sarif::render(&r, None);
    let log: serde_json::Value = serde_json::from_str(&text).unwrap();
    let errors = sarif_errors(&log);
    assert!(errors.is_empty(), "schema violations: {errors:#?}");
    let run = &log["runs"][0];
    let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
    assert_eq!(
        rules.len(),
        r.requirements.len(),
        "one rule per requirement ID"
    );
    for (rule, row) in rules.iter().zip(&r.requirements) {
        assert_eq!(rule["id"], row.id.as_str());
        assert_eq!(rule["shortDescription"]["text"], row.rule.as_str());
        assert!(
            rule.get("helpUri").is_none(),
            "no helpUri without --report-url"
        );
    }
    assert_eq!(
        run["results"].as_array().unwrap().len(),
        0,
        "passes are no results"
    );
    assert_eq!(run["invocations"][0]["exitCode"], 0);
    assert_eq!(run["invocations"][0]["executionSuccessful"], true);
}

#[test]
fn sarif_of_a_failing_run_is_valid_with_one_result_per_finding() {
    let mut r = report();
    r.target.profile_path = Some("ci/my server.toml".into());
    // Rule tags are a set in SARIF: an area named like its suite must not repeat it.
    r.requirements[1].area = "parley".into();
    let url = url::Url::parse("https://ci.example/reports/report.html").unwrap();
    let log: serde_json::Value = serde_json::from_str(&sarif::render(&r, Some(&url))).unwrap();
    let errors = sarif_errors(&log);
    assert!(errors.is_empty(), "schema violations: {errors:#?}");
    let run = &log["runs"][0];
    let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
    assert_eq!(rules[0]["id"], "PV-EN-2");
    assert_eq!(rules[0]["defaultConfiguration"]["level"], "error");
    assert_eq!(
        rules[1]["defaultConfiguration"]["level"], "warning",
        "SHOULD"
    );
    assert_eq!(
        rules[0]["helpUri"],
        "https://ci.example/reports/report.html#c-PV-EN-2"
    );
    // fail, warn, and the baseline-listed failure; pass/unsupported/harness error are none.
    let results = run["results"].as_array().unwrap();
    let ids: Vec<&str> = results
        .iter()
        .map(|x| x["properties"]["resultId"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        [
            "envelope/body-501@http",
            "shapes/415@http",
            "authority/known@http"
        ]
    );
    let levels: Vec<&str> = results
        .iter()
        .map(|x| x["level"].as_str().unwrap())
        .collect();
    assert_eq!(levels, ["error", "warning", "error"]);
    assert_eq!(results[0]["ruleId"], "PV-EN-2");
    assert_eq!(results[0]["ruleIndex"], 0);
    assert!(
        results[0]["message"]["text"]
            .as_str()
            .unwrap()
            .starts_with("expected refusal HTTP 400 body_too_long, got HTTP 201")
    );
    let loc = &results[0]["locations"][0];
    assert_eq!(loc["logicalLocations"][0]["name"], "envelope/body-501");
    assert_eq!(
        loc["physicalLocation"]["artifactLocation"]["uri"],
        "ci/my%20server.toml"
    );
    assert!(results[0].get("suppressions").is_none());
    assert_eq!(results[2]["suppressions"][0]["kind"], "external");
    // Fingerprints keep results sharing the profile file apart.
    let fp: std::collections::BTreeSet<&str> = results
        .iter()
        .map(|x| {
            x["partialFingerprints"]["primaryLocationLineHash"]
                .as_str()
                .unwrap()
        })
        .collect();
    assert_eq!(fp.len(), results.len());
    let inv = &run["invocations"][0];
    assert_eq!(inv["exitCode"], 2);
    assert_eq!(inv["executionSuccessful"], false, "a harness error");
    assert_eq!(inv["toolExecutionNotifications"][0]["level"], "error");
    assert_eq!(inv["startTimeUtc"], "2026-11-30T04:00:00.000Z");
    assert_eq!(inv["endTimeUtc"], "2026-11-30T04:00:01.234Z");
    insta::assert_snapshot!(
        "report_sarif",
        redact(&serde_json::to_string_pretty(&log).unwrap())
    );
}

/// The schema check can fail: logs a SARIF consumer would reject are rejected.
#[test]
fn sarif_schema_rejects_broken_logs() {
    let good: serde_json::Value = serde_json::from_str(&sarif::render(&report(), None)).unwrap();
    assert!(sarif_errors(&good).is_empty());
    let mut no_version = good.clone();
    no_version.as_object_mut().unwrap().remove("version");
    assert!(
        !sarif_errors(&no_version).is_empty(),
        "missing version accepted"
    );
    let mut bad_level = good.clone();
    bad_level["runs"][0]["results"][0]["level"] = json!("fatal");
    assert!(!sarif_errors(&bad_level).is_empty(), "level fatal accepted");
    let mut relative_help = good.clone();
    relative_help["runs"][0]["tool"]["driver"]["rules"][0]["helpUri"] =
        json!("report.html#c-PV-EN-2");
    assert!(
        !sarif_errors(&relative_help).is_empty(),
        "a relative helpUri accepted (SARIF requires an absolute URI)"
    );
    let mut no_message = good;
    no_message["runs"][0]["results"][0]
        .as_object_mut()
        .unwrap()
        .remove("message");
    assert!(
        !sarif_errors(&no_message).is_empty(),
        "a result without message accepted"
    );
}

/// A minimal XML well-formedness check: balanced, properly nested tags, quoted attributes,
/// no raw `<` or unknown entity in text or attribute values.
fn assert_well_formed_xml(doc: &str) {
    let entity = Regex::new(r"^&(amp|lt|gt|quot|apos|#x[0-9a-fA-F]+|#[0-9]+);").unwrap();
    let attr = Regex::new(r#"^\s+[A-Za-z_:][-A-Za-z0-9_:.]*="[^"<]*""#).unwrap();
    let name = Regex::new(r"^[A-Za-z_:][-A-Za-z0-9_:.]*").unwrap();
    let check_text = |t: &str| {
        for (i, _) in t.match_indices('&') {
            assert!(entity.is_match(&t[i..]), "bad entity in {t:?}");
        }
    };
    let mut stack: Vec<String> = Vec::new();
    let mut rest = doc.trim();
    assert!(rest.starts_with('<'), "a document starts with an element");
    while let Some(start) = rest.find('<') {
        check_text(&rest[..start]);
        assert!(
            !stack.is_empty() || rest[..start].trim().is_empty(),
            "text outside the root"
        );
        let end = rest[start..].find('>').expect("unclosed tag") + start;
        let tag = &rest[start + 1..end];
        assert!(!tag.contains('<'), "`<` inside a tag: {tag}");
        if let Some(closing) = tag.strip_prefix('/') {
            assert_eq!(
                stack.pop().as_deref(),
                Some(closing),
                "mis-nested </{closing}>"
            );
        } else {
            let self_closing = tag.ends_with('/');
            let body = tag.trim_end_matches('/');
            let n = name.find(body).expect("element name").as_str().to_string();
            let mut attrs = &body[n.len()..];
            while let Some(m) = attr.find(attrs) {
                check_text(m.as_str());
                attrs = &attrs[m.end()..];
            }
            assert!(attrs.trim().is_empty(), "malformed attributes in <{tag}>");
            if !self_closing {
                stack.push(n);
            }
        }
        rest = &rest[end + 1..];
        if stack.is_empty() {
            assert!(rest.trim().is_empty(), "content after the root element");
        }
    }
    assert!(stack.is_empty(), "unclosed elements {stack:?}");
}

#[test]
fn xml_check_rejects_malformed_documents() {
    assert_well_formed_xml("<svg a=\"1\"><g><text>x &amp; y</text></g></svg>");
    for bad in [
        "<svg><g></svg></g>",
        "<svg><text>a & b</text></svg>",
        "<svg a=1></svg>",
        "<svg><text>a < b</text></svg>",
        "<svg>",
    ] {
        let caught = std::panic::catch_unwind(|| assert_well_formed_xml(bad)).is_err();
        assert!(caught, "accepted {bad}");
    }
}

#[test]
fn badge_of_a_passing_run_is_green_and_names_the_levels() {
    let r = reference_report();
    let (msg, colour) = badge::message(&r);
    assert_eq!(
        msg,
        "parley MUST ✓ SHOULD ✓ · ssp MUST ✓ REC ✓ SHOULD ✓ · mcp MUST ✓ SHOULD ✓"
    );
    assert_eq!(colour, "#4c1");
    let svg = badge::render(&r);
    assert_well_formed_xml(&svg);
    assert!(svg.contains("fill=\"#4c1\""));
    assert!(
        svg.contains("<title>conform: parley MUST ✓ SHOULD ✓ · ssp MUST ✓ REC ✓ SHOULD ✓ · mcp MUST ✓ SHOULD ✓</title>")
    );
    assert!(!svg.contains("href") && !svg.contains("@import") && !svg.contains("<image"));
}

#[test]
fn badge_of_a_failing_run_is_red_with_the_count() {
    let mut r = report();
    r.checks
        .retain(|c| !matches!(c.verdict, Verdict::HarnessError { .. }));
    r.recount();
    assert_eq!(r.exit_code(), 1);
    let (msg, colour) = badge::message(&r);
    assert_eq!(msg, "1 failing · parley MUST ✗1 SHOULD ✗1");
    assert_eq!(colour, "#e05d44");
    let svg = badge::render(&r);
    assert_well_formed_xml(&svg);
    assert!(svg.contains("fill=\"#e05d44\"") && svg.contains("1 failing"));
    insta::assert_snapshot!("badge_failing", svg);
    // Harness errors: orange; text is escaped.
    let mut r = report();
    r.suites = vec!["a<b&\"c\"".into()];
    let svg = badge::render(&r);
    assert_well_formed_xml(&svg);
    assert!(svg.contains("fill=\"#fe7d37\"") && svg.contains("1 harness errors"));
    assert!(svg.contains("a&lt;b&amp;&quot;c&quot;"), "{svg}");
}

#[test]
fn badge_of_a_partial_run_is_yellow() {
    let mut r = reference_report();
    // A --filter run: one requirement was not tested.
    r.requirements[0].status = MatrixStatus::Untested;
    r.completeness.partial = vec!["--filter 'envelope/*'".into()];
    r.recount();
    let (msg, colour) = badge::message(&r);
    assert!(msg.starts_with("parley MUST ?1 SHOULD ✓"), "{msg}");
    assert_eq!(colour, "#dfb317");
    // The same run not chosen partial is incomplete: it fails, and the badge says why.
    r.completeness.partial.clear();
    r.recount();
    let (msg, colour) = badge::message(&r);
    assert!(msg.starts_with("incomplete · parley MUST ?1"), "{msg}");
    assert_eq!(colour, "#e05d44");
}
