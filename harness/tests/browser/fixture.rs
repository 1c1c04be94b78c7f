//! A report with failures for the browser test: a few hundred passing results in several
//! areas (so the check groups start closed and the filter has work), two required failures
//! with transcripts, a warning, an unsupported result, and hostile text (a
//! check id and a server message carrying `<script>`) that must stay text.

use conform::engine::report::{
    CheckResult, MatrixStatus, Report, Reproduction, RequirementRow, Summary, ToolInfo,
};
use conform::engine::repro::curl_command;
use conform::engine::requirements::Level;
use conform::engine::target::TargetInfo;
use conform::engine::verdict::{Verdict, Violation};
use conform::transport::{Exchange, McpRevision, TransportKind};
use serde_json::json;

/// Script that sets `window.pwned` if it ever runs.
pub(crate) const HOSTILE: &str = "<script>window.pwned=1</script>";
/// The failing check carrying the hostile server message.
pub(crate) const FAILING: &str = "envelope/body-too-long";
/// A passing check the filter test looks for.
pub(crate) const NEEDLE: &str = "reading/passing-check-0042";

fn exchange() -> Exchange {
    Exchange {
        transport: TransportKind::Http,
        method: "POST".into(),
        url: "http://127.0.0.1:41234/v1/messages".into(),
        request_headers: vec![
            ("authorization".into(), "Bearer ${CONFORM_TOKEN_A}".into()),
            ("content-type".into(), "application/json".into()),
        ],
        request_body: Some(format!(r#"{{"kind":"ask","body":"{}"}}"#, "x".repeat(501))),
        status: Some(201),
        response_headers: vec![("content-type".into(), "application/json".into())],
        response_body: Some(format!(
            r#"{{"message":{{"id":"m_1","note":"{}"}}}}"#,
            HOSTILE.replace('"', "\\\"")
        )),
        error: None,
        elapsed_us: 1312,
        resent_after: None,
    }
}

fn result(id: &str, transport: Option<TransportKind>, req: &str, verdict: Verdict) -> CheckResult {
    let check = id.split('@').next().unwrap_or(id).to_string();
    let reproduction = verdict.violation().map(|v| Reproduction {
        command: format!("conform run --filter '{check}'"),
        env: vec![("CONFORM_TOKEN_A".into(), "demo-a".into())],
        curl: v.transcript.iter().map(curl_command).collect(),
    });
    CheckResult {
        id: id.into(),
        area: check.split('/').next().unwrap_or("misc").into(),
        check,
        suite: "demo".into(),
        title: format!("title of {id}"),
        transport: transport.map(Into::into),
        requirements: vec![req.into()],
        required: true,
        verdict,
        baseline: None,
        duration_ms: 2 + (id.len() as u64 % 7),
        exchanges: 1 + (id.len() as u64 % 3),
        self_test: false,
        reproduction,
    }
}

fn violation(check: &str, req: &str, message: &str) -> Violation {
    Violation {
        check: check.into(),
        requirements: vec![req.into()],
        step: Some(1),
        pointer: "/status".into(),
        expected: json!({"status": 400, "reason": "body_too_long"}),
        observed: json!({"status": 201, "note": HOSTILE}),
        message: message.into(),
        transcript: vec![exchange()],
        completed: false,
    }
}

fn checks() -> Vec<CheckResult> {
    let (http, mcp) = (Some(TransportKind::Http), Some(TransportKind::Mcp));
    let areas = [
        ("reading", "DM-RD-1"),
        ("state", "DM-ST-2"),
        ("shapes", "DM-SH-1"),
    ];
    let mut out = Vec::new();
    for i in 0..150 {
        let (area, req) = areas[i % areas.len()];
        let check = format!("{area}/passing-check-{i:04}");
        out.push(result(&format!("{check}@http"), http, req, Verdict::Pass));
        out.push(result(&format!("{check}@mcp"), mcp, req, Verdict::Pass));
        out.push(result(
            &format!("DM-TR-1/{check}"),
            None,
            "DM-TR-1",
            Verdict::Pass,
        ));
    }
    let msg = format!("expected 400 body_too_long, got 201 and the server said {HOSTILE}");
    out.push(result(
        &format!("{FAILING}@http"),
        http,
        "DM-EN-1",
        Verdict::Fail(violation(FAILING, "DM-EN-1", &msg)),
    ));
    let hostile_id = format!("envelope/{HOSTILE}");
    out.push(result(
        &format!("{hostile_id}@mcp"),
        mcp,
        "DM-EN-2",
        Verdict::Fail(violation(&hostile_id, "DM-EN-2", "refusal expected")),
    ));
    out.push(result(
        "shapes/content-type@http",
        http,
        "DM-SH-2",
        Verdict::Warn(violation(
            "shapes/content-type",
            "DM-SH-2",
            "charset missing",
        )),
    ));
    // A passing check whose text holds a verdict word inside a longer one.
    out.push(result(
        "shapes/text-plain-is-unsupported_media_type@http",
        http,
        "DM-SH-1",
        Verdict::Pass,
    ));
    out.push(result(
        "state/optional-part@http",
        http,
        "DM-ST-1",
        Verdict::not_offered("the target does not enable the optional part"),
    ));
    out
}

fn row(r: &Report, id: &str, level: Level, area: &str) -> RequirementRow {
    let cites: Vec<&CheckResult> = r
        .checks
        .iter()
        .filter(|c| c.requirements.iter().any(|q| q == id))
        .collect();
    let count = |name: &str| cites.iter().filter(|c| c.verdict.name() == name).count();
    let (failed, warned, passed) = (count("fail"), count("warn"), count("pass"));
    let status = match (cites.is_empty(), failed, warned, passed) {
        (true, ..) => MatrixStatus::Untested,
        (_, f, ..) if f > 0 => MatrixStatus::Fail,
        (_, _, w, _) if w > 0 => MatrixStatus::Warn,
        (_, _, _, p) if p > 0 => MatrixStatus::Pass,
        _ => MatrixStatus::NotApplicable,
    };
    RequirementRow {
        id: id.into(),
        suite: "demo".into(),
        level,
        area: area.into(),
        rule: format!("rule of {id}: the target does what {id} says"),
        source: "demo.md §1".into(),
        library: false,
        status,
        checks: cites.iter().map(|c| c.id.clone()).collect(),
        passed,
        failed,
        warned,
    }
}

/// The report.
pub(crate) fn report() -> Report {
    let mut r = Report {
        format_version: 1,
        tool: ToolInfo::default(),
        target: TargetInfo {
            name: "demo target".into(),
            base_url: "http://127.0.0.1:41234".into(),
            mcp_url: "http://127.0.0.1:41234/mcp".into(),
            mcp_revision: McpRevision::V2025_11_25,
            server_version: Some("0.1.0".into()),
            profiles: vec![],
            spawned_reference: false,
            profile_path: None,
            tls: None,
            fingerprint: Default::default(),
            time_scale: Default::default(),
        },
        started_at: "2026-12-01T00:00:00Z".into(),
        wall_time_ms: 2100,
        exchanges: 900,
        exchanges_per_second: 428.0,
        suites: vec!["demo".into()],
        transports: vec![TransportKind::Http.into(), TransportKind::Mcp.into()],
        filter: None,
        jobs: 4,
        summary: Summary::default(),
        completeness: Default::default(),
        checks: checks(),
        requirements: vec![],
        baseline: None,
        suite_power: None,
        shard: None,
        interrupted: false,
        suite_digest: None,
        signature: None,
    };
    let ids = [
        ("DM-EN-1", Level::Must, "envelope"),
        ("DM-EN-2", Level::Must, "envelope"),
        ("DM-RD-1", Level::Must, "reading"),
        ("DM-ST-1", Level::Must, "state"),
        ("DM-ST-2", Level::Must, "state"),
        ("DM-SH-1", Level::Must, "shapes"),
        ("DM-SH-2", Level::Should, "shapes"),
        ("DM-TR-1", Level::Must, "transport"),
        ("DM-ID-1", Level::May, "identity"),
    ];
    r.requirements = ids.iter().map(|&(id, l, a)| row(&r, id, l, a)).collect();
    r.recount();
    r
}
