//! SSP provider checks: every check passes against the reference server (spawned in
//! process), and a small deliberately broken provider gets exactly the failures it
//! deserves, under the right IDs (issue 5, "Tests").

// Test code: a failed expectation is a test failure, so panicking helpers are the point.
#![allow(clippy::expect_used, clippy::unwrap_used)]

use axum::Router;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use conform::engine::check::CheckCtx;
use conform::engine::requirements::Catalogue;
use conform::engine::target::ConnectOptions;
use conform::engine::target::Target;
use conform::engine::verdict::Verdict;
use conform::reference::demo_profile;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::Path as FsPath;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

fn catalogue() -> Catalogue {
    Catalogue::load(
        &FsPath::new(env!("CARGO_MANIFEST_DIR")).join("../vectors/requirements/ssp.toml"),
    )
    .expect("ssp.toml")
}

async fn run_all(target: Arc<Target>) -> BTreeMap<String, Verdict> {
    let vectors = FsPath::new(env!("CARGO_MANIFEST_DIR")).join("../vectors");
    let checks = conform::ssp::suite::checks(&vectors, &catalogue()).expect("ssp checks load");
    let ctx = CheckCtx {
        target,
        transport: None,
        run_nonce: "t1".into(),
    };
    let futs = checks.iter().map(|c| {
        let ctx = ctx.clone();
        let c = c.clone();
        async move { (c.id().to_owned(), c.run(&ctx).await.verdict) }
    });
    futures::future::join_all(futs).await.into_iter().collect()
}

fn describe(v: &Verdict) -> String {
    match v {
        Verdict::Fail(x) | Verdict::Warn(x) => format!(
            "{}: {} at {:?} (expected {}, observed {})",
            v.name(),
            x.message,
            x.pointer,
            x.expected,
            x.observed
        ),
        Verdict::Unsupported { reason } | Verdict::Skipped { reason } => {
            format!("{}: {reason}", v.name())
        }
        Verdict::HarnessError { message } => format!("harness_error: {message}"),
        Verdict::Pass => "pass".into(),
    }
}

/// Issue 5: the SSP suite passes 100% against the reference server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reference_passes_every_check() {
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
    assert!(verdicts.len() > conform::ssp::provider::checks::catalogue().len());
    // Every MUST of the catalogue is cited by at least one check (no untested MUST).
    let checks = conform::ssp::suite::checks(
        &FsPath::new(env!("CARGO_MANIFEST_DIR")).join("../vectors"),
        &catalogue(),
    )
    .expect("checks");
    let cited: std::collections::BTreeSet<String> = checks
        .iter()
        .flat_map(|c| c.requirements().to_vec())
        .collect();
    let untested: Vec<String> = catalogue()
        .requirements
        .iter()
        .filter(|r| !cited.contains(&r.id))
        .map(|r| format!("{} ({})", r.id, r.level))
        .collect();
    assert!(
        untested.is_empty(),
        "requirements no check cites: {untested:?}"
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

fn ok(status: StatusCode, v: Value) -> Response {
    (
        status,
        [("content-type", "application/json")],
        v.to_string(),
    )
        .into_response()
}

fn resp(id: &str, skill: &str, status: &str) -> Value {
    let mut r = json!({"execution_id": id, "status": status, "skill_id": skill,
        "timestamps": {"created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:01Z"}});
    if status == "completed" {
        r["output"] = json!({});
        r["timestamps"]["completed_at"] = json!("2026-01-01T00:00:01Z");
    }
    r
}

/// Three seeded faults: the private skill is listed to anonymous callers; `echo` answers
/// 200 instead of 202; `slow` lets its status go backwards (running → accepted).
fn broken_router(state: Arc<Broken>) -> Router {
    Router::new()
        .route(
            "/.well-known/skill-sharing",
            get(|State(s): State<Arc<Broken>>| async move {
                let b = s.base.get().cloned().unwrap_or_default();
                ok(StatusCode::OK, json!({"protocol": {"version": "1.0.0"}, "provider": {"name": "broken"}, "skills": [
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
                    "echo.json" => ok(StatusCode::OK, desc(&b, "b/echo", "echo", "api", "public", json!({"type": "none"}))),
                    "slow.json" => ok(StatusCode::OK, desc(&b, "b/slow", "slow", "task", "public", json!({"type": "none"}))),
                    "secret.json" => ok(StatusCode::OK, desc(&b, "b/secret", "secret", "plugin", "private", json!({"type": "api_key", "header": "X-API-Key"}))),
                    _ => ok(StatusCode::NOT_FOUND, json!({"error": {"code": "SKILL_NOT_FOUND", "message": "no"}})),
                }
            }),
        )
        .route("/invoke/echo", post(|| async { ok(StatusCode::OK, resp("e-1", "b/echo", "accepted")) }))
        .route(
            "/invoke/slow",
            post(|State(s): State<Arc<Broken>>| async move {
                let n = s.next.fetch_add(1, Ordering::SeqCst);
                ok(StatusCode::ACCEPTED, resp(&format!("s-{n}"), "b/slow", "accepted"))
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
                ok(StatusCode::OK, resp(&id, skill, status))
            }),
        )
        .with_state(state)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn broken_provider_gets_the_failures_it_deserves() {
    let state = Arc::new(Broken::default());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    state.base.set(base.clone()).expect("once");
    let router = broken_router(state.clone());
    tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
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
    let path = FsPath::new(env!("CARGO_MANIFEST_DIR"))
        .join("../vectors/ssp/provider/reference-demo.profile.toml");
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
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    drop(listener); // nothing listens there any more: connections are refused
    let mut profile = demo_profile(&base);
    profile.sections.remove("tokens");
    let err = conform::registry::connect(profile, &ConnectOptions::default(), &["ssp"])
        .await
        .expect_err("an unreachable provider must fail pre-flight");
    assert!(err.to_string().contains("pre-flight"), "{err}");
}
