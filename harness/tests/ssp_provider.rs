//! SSP provider checks: the whole suite passes against the reference server (spawned in
//! process) within its time budget, and a small deliberately broken provider gets exactly the
//! failures it deserves, under the right IDs (issue 5, "Tests"). Each check on its own
//! against the reference: `tests/ssp_checks.rs`.

// Test code: a failed expectation is a test failure, so panicking helpers are the point.
#![expect(clippy::expect_used)]

mod support;

use axum::Router;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::{get, post};
use conform::engine::check::CheckCtx;
use conform::engine::target::ConnectOptions;
use conform::engine::target::Target;
use conform::engine::verdict::Verdict;
use conform::reference::demo_profile;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use support::http::json_response;
use support::ssp::execution;
use support::verdicts::describe;

/// Every check of the SSP suite run concurrently against `target`, by check id.
async fn run_all(target: Arc<Target>) -> BTreeMap<String, Verdict> {
    let suite = support::vectors::suite("ssp").expect("ssp checks load");
    let ctx = CheckCtx {
        target,
        transport: None,
        run_nonce: "t1".into(),
        counterexamples: Default::default(),
        stop: None,
    };
    let futs = suite.checks.iter().map(|c| {
        let ctx = ctx.clone();
        let c = c.clone();
        async move { (c.id().to_owned(), c.run(&ctx).await.verdict) }
    });
    futures::future::join_all(futs).await.into_iter().collect()
}

/// Issue 5: the whole SSP suite, its checks run concurrently against one reference server,
/// passes within 10 s. (Each check also runs as its own test in `tests/ssp_checks.rs`; this
/// one is about the checks side by side and the time budget.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reference_passes_the_whole_suite_concurrently_within_10s() {
    let target = Arc::new(
        conform::reference::spawn(&ConnectOptions::default(), &conform::registry::protocols())
            .await
            .expect("reference spawns"),
    );
    let started = std::time::Instant::now();
    let verdicts = run_all(target).await;
    let bad: Vec<String> = verdicts
        .iter()
        .filter(|(_, v)| !v.is_pass())
        .map(|(id, v)| format!("{id}: {}", describe(v)))
        .collect();
    assert!(
        bad.is_empty(),
        "checks not passing against the reference:\n{}",
        bad.join("\n")
    );
    assert!(
        started.elapsed() < std::time::Duration::from_secs(10),
        "SSP suite took {:?}",
        started.elapsed()
    );
}

// ------------------------------------------------------------------ a broken provider

#[derive(Default)]
struct Broken {
    base: std::sync::OnceLock<String>,
    next: AtomicU32,
    polls: std::sync::Mutex<BTreeMap<String, u32>>,
}

fn entry(base: &str, id: &str, slug: &str, cap: &str, access: &str) -> Value {
    json!({"id": id, "name": slug, "capability_type": cap, "description": "d", "descriptor_url": format!("{base}/skills/{slug}.json"), "access": access, "version": "1.0.0"})
}

fn desc(base: &str, id: &str, slug: &str, cap: &str, access: &str, auth: Value) -> Value {
    json!({
        "protocol": {"version": "1.0.0"}, "id": id, "name": slug, "version": "1.0.0", "capability_type": cap,
        "description": "d", "provider": {"name": "broken"},
        "endpoint": {"url": format!("{base}/invoke/{slug}"), "method": "POST", "status_url": format!("{base}/status/{{execution_id}}"),
                     "result_url": format!("{base}/result/{{execution_id}}"), "timeout_ms": 2000},
        "inputs": [], "output": {"content_type": "application/json"}, "auth": auth, "access": access
    })
}

/// Three seeded faults: the private skill is listed to anonymous callers; `echo` answers
/// 200 instead of 202; `slow` lets its status go backwards (running → accepted).
fn broken_router(state: Arc<Broken>) -> Router {
    Router::new()
        .route(
            "/.well-known/skill-sharing",
            get(|State(s): State<Arc<Broken>>| async move {
                let b = s.base.get().cloned().unwrap_or_default();
                json_response(StatusCode::OK, json!({"protocol": {"version": "1.0.0"}, "provider": {"name": "broken"}, "skills": [
                    entry(&b, "b/echo", "echo", "api", "public"),
                    entry(&b, "b/slow", "slow", "task", "public"),
                    entry(&b, "b/secret", "secret", "plugin", "private")
                ]}))
            }),
        )
        .route(
            "/skills/{file}",
            get(|State(s): State<Arc<Broken>>, Path(file): Path<String>| async move {
                let b = s.base.get().cloned().unwrap_or_default();
                match file.as_str() {
                    "echo.json" => json_response(StatusCode::OK, desc(&b, "b/echo", "echo", "api", "public", json!({"type": "none"}))),
                    "slow.json" => json_response(StatusCode::OK, desc(&b, "b/slow", "slow", "task", "public", json!({"type": "none"}))),
                    "secret.json" => json_response(StatusCode::OK, desc(&b, "b/secret", "secret", "plugin", "private", json!({"type": "api_key", "header": "X-API-Key"}))),
                    _ => json_response(StatusCode::NOT_FOUND, json!({"error": {"code": "SKILL_NOT_FOUND", "message": "no"}})),
                }
            }),
        )
        .route("/invoke/echo", post(|| async { json_response(StatusCode::OK, execution("e-1", "b/echo", "accepted", None)) }))
        .route(
            "/invoke/slow",
            post(|State(s): State<Arc<Broken>>| async move {
                let n = s.next.fetch_add(1, Ordering::SeqCst);
                json_response(StatusCode::ACCEPTED, execution(&format!("s-{n}"), "b/slow", "accepted", None))
            }),
        )
        .route(
            "/status/{id}",
            get(|State(s): State<Arc<Broken>>, Path(id): Path<String>| async move {
                let n = {
                    let mut polls = s.polls.lock().expect("lock");
                    let n = polls.entry(id.clone()).or_insert(0);
                    *n += 1;
                    *n - 1
                };
                let status = match n {
                    0 => "running",
                    1 => "accepted",
                    _ => "completed",
                };
                let skill = if id.starts_with('e') { "b/echo" } else { "b/slow" };
                json_response(StatusCode::OK, execution(&id, skill, status, None))
            }),
        )
        .with_state(state)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn broken_provider_gets_the_failures_it_deserves() {
    let state = Arc::new(Broken::default());
    let base = support::http::serve_at(|base| {
        state.base.set(base.to_owned()).expect("once");
        broken_router(state.clone())
    })
    .await;
    let ssp: toml::Table = toml::from_str(
        r#"
        [roles]
        instant = "b/echo"
        slow = "b/slow"
        private = "b/secret"
        auth_none = "b/echo"
        [credentials]
        api_key = "k"
        "#,
    )
    .expect("toml");
    let mut profile = demo_profile(&base);
    profile.sections.remove("tokens");
    profile
        .sections
        .insert("ssp".into(), toml::Value::Table(ssp));
    // A pure SSP provider: no Parley manifest, so only the SSP pre-flight runs.
    let target = Arc::new(
        conform::registry::connect(profile, &ConnectOptions::default(), &["ssp"])
            .await
            .expect("connect"),
    );
    let v = run_all(target).await;
    let name = |id: &str| v.get(id).map(Verdict::name).unwrap_or("missing");
    let report: Vec<String> = v
        .iter()
        .map(|(id, x)| format!("{id}: {}", describe(x)))
        .collect();
    let report = report.join("\n");
    // The three seeded faults, each under its own ID.
    assert_eq!(name("SSP-DISC-2/visibility"), "fail", "{report}");
    assert_eq!(name("SSP-INV-1/accepted"), "fail", "{report}");
    assert_eq!(name("SSP-INV-3/lifecycle-slow"), "fail", "{report}");
    let Some(Verdict::Fail(x)) = v.get("SSP-INV-3/lifecycle-slow") else {
        unreachable!()
    };
    assert!(x.message.contains("forward"), "{report}");
    // What the provider does right still passes.
    assert_eq!(name("SSP-DISC-1/well-known"), "pass", "{report}");
    assert_eq!(name("SSP-AUTH-1/public-none"), "fail", "{report}"); // echo answers 200, not 202
    // Roles the profile does not map are Unsupported, never a pass.
    for id in [
        "SSP-AUTH-2/oauth2",
        "SSP-AUTH-2/custom",
        "SSP-INV-5/overrun",
        "SSP-INV-3/failing",
    ] {
        assert_eq!(name(id), "unsupported", "{id}\n{report}");
    }
    assert!(
        !v.values()
            .any(|x| matches!(x, Verdict::HarnessError { .. })),
        "{report}"
    );
}

/// The example profile in `vectors/ssp/provider/` is exactly the built-in demo profile.
#[test]
fn example_profile_matches_reference_demo() {
    let path = support::vectors::dir().join("ssp/provider/reference-demo.profile.toml");
    let profile = conform::engine::protocol::load_profile(&path, &conform::registry::protocols())
        .expect("profile loads");
    let ssp = conform::ssp::provider::profile::SspProfile::from_table(
        profile
            .section("ssp")
            .and_then(toml::Value::as_table)
            .expect("[ssp] table"),
    )
    .expect("[ssp] parses");
    assert_eq!(
        ssp,
        conform::ssp::provider::profile::SspProfile::reference_demo()
    );
}

/// An SSP-only target that does not answer is a pre-flight error (exit 2), not 25 failures.
#[tokio::test]
async fn unreachable_provider_fails_preflight() {
    let mut profile = demo_profile(&support::http::refused_base());
    profile.sections.remove("tokens");
    let err = conform::registry::connect(profile, &ConnectOptions::default(), &["ssp"])
        .await
        .expect_err("an unreachable provider must fail pre-flight");
    assert!(err.to_string().contains("pre-flight"), "{err}");
}

/// The SSP pre-flight of a target whose `[ssp]` table is empty (no roles, no credentials).
async fn ssp_preflight(base: &str) -> Result<Target, conform::engine::target::TargetError> {
    let mut profile = demo_profile(base);
    profile.sections.remove("tokens");
    profile
        .sections
        .insert("ssp".into(), toml::Value::Table(toml::Table::new()));
    conform::registry::connect(profile, &ConnectOptions::default(), &["ssp"]).await
}

/// A server that is no SSP provider — its well-known URI answers 404, or 200 with a page
/// that is not JSON — stops in the pre-flight with one message (issue 26), like Parley's.
#[tokio::test]
async fn a_server_that_is_no_provider_stops_the_preflight() {
    let not_found = support::http::serve(Router::new()).await;
    let html = support::http::serve(
        Router::new()
            .fallback(|| async { axum::response::Html("<!doctype html><title>app</title>") }),
    )
    .await;
    for (base, why) in [(not_found, "404"), (html, "not JSON")] {
        let err = ssp_preflight(&base)
            .await
            .expect_err("no provider: the pre-flight stops")
            .to_string();
        assert!(err.contains("pre-flight"), "{err}");
        assert!(
            err.contains(&format!("not an SSP provider at {base}")) && err.contains(why),
            "{err}"
        );
    }
}

/// A provider whose well-known document is JSON but no valid Skill Index is a provider with
/// a bug: the pre-flight lets it through and SSP-DISC-1 fails (a conformance failure, not a
/// pre-flight error) — whatever its status or content type.
#[tokio::test]
async fn a_broken_skill_index_is_tested_not_stopped() {
    let router = Router::new().route(
        "/.well-known/skill-sharing",
        get(|| async {
            (
                [("content-type", "text/plain")],
                json!({"skills": "none"}).to_string(),
            )
        }),
    );
    let target = Arc::new(
        ssp_preflight(&support::http::serve(router).await)
            .await
            .expect("a JSON answer passes the pre-flight"),
    );
    let suite = support::vectors::suite("ssp").expect("ssp checks load");
    let check = (suite.checks.iter())
        .find(|c| c.id() == "SSP-DISC-1/well-known")
        .expect("the check");
    let verdict = check
        .run(&CheckCtx {
            target,
            transport: None,
            run_nonce: "t1".into(),
            counterexamples: Default::default(),
            stop: None,
        })
        .await
        .verdict;
    assert_eq!(verdict.name(), "fail", "{}", describe(&verdict));
}

/// `conform run --suite ssp` against a server answering 404 to everything: exit 2 and one
/// message, no checks and no report (it ran 43 checks into ~40 identical failures, exit 1).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_against_a_server_that_is_no_provider_exits_2() {
    let base = support::http::serve(Router::new()).await;
    let dir = tempfile::tempdir().expect("tempdir");
    let profile = dir.path().join("target.toml");
    std::fs::write(
        &profile,
        format!("format_version = 1\nbase_url = \"{base}\"\n"),
    )
    .expect("profile");
    let out_dir = dir.path().join("out");
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_conform"))
        .arg("--vectors")
        .arg(support::vectors::dir())
        .args(["run", "--suite", "ssp", "--target"])
        .arg(&profile)
        .arg("--out")
        .arg(&out_dir)
        .output()
        .await
        .expect("conform runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!("not an SSP provider at {base}")),
        "{stderr}"
    );
    assert_eq!(
        stderr
            .lines()
            .filter(|l| l.contains("not an SSP provider"))
            .count(),
        1,
        "one message: {stderr}"
    );
    assert!(!out_dir.join("report.json").exists(), "no report");
}
