//! `--time-scale F` (issue 30 item 5): one factor multiplies every timeout and waiting bound,
//! so a slow target passes at the right scale, and fails without it only on its timing, with
//! a message naming the budget that ran out.
//!
//! Two slow targets, each the reference behind a loopback proxy:
//! - one whose every answer comes 5× later than the profile's per-request timeout allows
//!   (slowed after the pre-flight, so that the run's checks are what meets it), over checks
//!   of the three wings: every one fails at scale 1 on the per-request timeout alone and
//!   passes at scale 20;
//! - one that ends an SSP overrun 5× later than the overrun grace allows (the proxy shows
//!   `running` for a while after the execution timed out): SSP-INV-5 fails at the small
//!   scale naming the grace, and passes at a scale ten times larger.
#![expect(clippy::expect_used)] // tests: a panic is the failure report

mod support;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Request, State};
use axum::http::Method;
use axum::response::{IntoResponse, Response};
use conform::engine::report::Report;
use conform::engine::run::{RunOptions, run};
use conform::engine::target::{ConnectOptions, Profile};
use conform::engine::verdict::{Cause, Verdict};
use conform::transport::budget::TimeScale;
use serde_json::Value;
use support::proxy::Upstream;

/// How the proxy slows the reference down.
struct Slow {
    upstream: Upstream,
    /// Held before forwarding each request, once `on`.
    delay: Duration,
    on: AtomicBool,
    /// How long a status poll still shows `running` after the execution timed out.
    late: Option<Duration>,
    /// When the proxy first saw each execution's `timeout` answer.
    timed_out: Mutex<HashMap<String, Instant>>,
}

/// The proxy and the reference behind it; dropping it stops the reference.
struct SlowTarget {
    slow: Arc<Slow>,
    base_url: String,
    _server: reference_impl::RunningServer,
}

async fn start(delay: Duration, late: Option<Duration>) -> SlowTarget {
    let slow = Arc::new(Slow {
        upstream: Upstream::new(),
        delay,
        on: AtomicBool::new(false),
        late,
        timed_out: Mutex::new(HashMap::new()),
    });
    let base_url =
        support::http::serve(Router::new().fallback(handle).with_state(slow.clone())).await;
    let server = support::reference::spawn_behind(&base_url).await;
    slow.upstream.set(format!("http://{}", server.addr));
    SlowTarget {
        slow,
        base_url,
        _server: server,
    }
}

async fn handle(State(s): State<Arc<Slow>>, req: Request) -> Response {
    if s.on.load(Ordering::SeqCst) {
        tokio::time::sleep(s.delay).await;
    }
    let (parts, body) = req.into_parts();
    let path = parts.uri.path_and_query().map_or("/", |p| p.as_str());
    let body = axum::body::to_bytes(body, 16 << 20)
        .await
        .unwrap_or_default();
    let (status, headers, bytes) = s
        .upstream
        .forward(&parts.method, path, &parts.headers, body)
        .await;
    if let Some(late) = s.late
        && parts.method == Method::GET
        && let Some(running) = hide_timeout(&s, late, &bytes)
    {
        return (status, axum::Json(running)).into_response();
    }
    (status, headers, bytes).into_response()
}

/// A status answer `timeout` seen less than `late` ago, rewritten as still `running`.
fn hide_timeout(s: &Slow, late: Duration, bytes: &Bytes) -> Option<Value> {
    let mut v: Value = serde_json::from_slice(bytes).ok()?;
    if v["status"] != "timeout" {
        return None;
    }
    let id = v["execution_id"].as_str()?.to_string();
    let first = *s
        .timed_out
        .lock()
        .expect("lock")
        .entry(id)
        .or_insert_with(Instant::now);
    if first.elapsed() >= late {
        return None;
    }
    let o = v.as_object_mut()?;
    o.insert("status".into(), "running".into());
    o.remove("error");
    o.remove("output");
    if let Some(t) = o.get_mut("timestamps").and_then(Value::as_object_mut) {
        t.remove("completed_at");
    }
    Some(v)
}

/// The demo profile at the proxy (its SSP fixtures named) with `timeout_ms`.
fn profile(base_url: &str, timeout_ms: u64) -> Profile {
    let mut p = support::reference::proxied_demo_profile(base_url);
    p.timeout_ms = Some(timeout_ms);
    p
}

/// Runs `checks` (ids, across the wings) against a fresh slow target at `scale`.
async fn run_at(
    scale: f64,
    delay: Duration,
    late: Option<Duration>,
    timeout_ms: u64,
    checks: &[&str],
) -> Report {
    let t = start(delay, late).await;
    let opts = ConnectOptions {
        time_scale: Some(TimeScale::new(scale).expect("scale")),
        ..ConnectOptions::default()
    };
    let suites = ["parley", "ssp", "mcp"];
    let target = conform::registry::connect(profile(&t.base_url, timeout_ms), &opts, &suites)
        .await
        .expect("pre-flight (before the target slows down)");
    t.slow.on.store(true, Ordering::SeqCst);
    let mut selected = Vec::new();
    for name in suites {
        let mut suite = support::vectors::suite(name).expect("suite");
        suite.checks.retain(|c| checks.contains(&c.id()));
        if !suite.checks.is_empty() {
            selected.push(suite);
        }
    }
    let found: usize = selected.iter().map(|s| s.checks.len()).sum();
    assert_eq!(found, checks.len(), "every named check exists");
    let report = run(Arc::new(target), &selected, &RunOptions::default())
        .await
        .expect("run");
    assert!(
        report.checks.len() >= checks.len(),
        "{:?}",
        verdicts(&report)
    );
    assert_eq!(report.target.time_scale.factor(), scale, "recorded");
    report
}

/// Each result as `(check id, verdict as JSON)`.
fn verdicts(r: &Report) -> Vec<(String, Verdict)> {
    r.checks
        .iter()
        .map(|c| (c.id.clone(), c.verdict.clone()))
        .collect()
}

fn passed(v: &Verdict) -> bool {
    matches!(v, Verdict::Pass | Verdict::Warn(_))
}

/// Checks of each wing whose every request gets an answer from a correct server: a Parley
/// vector (run on both bindings), SSP discovery and an SSP execution wait, an MCP request.
const EVERY_WING: &[&str] = &[
    "envelope/body-501-ascii-refused",
    "SSP-DISC-1/well-known",
    "SSP-INV-5/context-timeout",
    "MCP-LC-11/ping",
];

/// The proxy's delay, and the profile's per-request timeout: the target answers 5× later.
const DELAY: Duration = Duration::from_millis(150);
const TIMEOUT_MS: u64 = 30;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_five_times_slower_fail_only_on_the_named_per_request_timeout() {
    let report = run_at(1.0, DELAY, None, TIMEOUT_MS, EVERY_WING).await;
    let budget = "per-request timeout of 30 ms (30 ms × time scale 1;";
    let mut failed = 0;
    for (id, v) in verdicts(&report) {
        let text = serde_json::to_string(&v).expect("verdict");
        if id.starts_with("PV-TR-1/") {
            // Two unanswered runs agree on nothing: the comparison is untested, not passed.
            assert!(
                matches!(&v, Verdict::Unsupported { reason, cause: Cause::Profile } if reason.contains("no answer")),
                "{id}: {text}"
            );
            continue;
        }
        assert!(
            matches!(v, Verdict::Fail(_)),
            "{id} fails at scale 1: {text}"
        );
        assert!(text.contains(budget), "{id} names the budget: {text}");
        failed += 1;
    }
    // The Parley vector on both bindings, and one check of each other wing.
    assert_eq!(failed, EVERY_WING.len() + 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_five_times_slower_pass_at_the_right_scale() {
    // 30 ms × 20 = 600 ms for answers that take 150 ms and a little more.
    let report = run_at(20.0, DELAY, None, TIMEOUT_MS, EVERY_WING).await;
    for (id, v) in verdicts(&report) {
        assert!(passed(&v), "{id} passes at scale 20: {v:?}");
    }
}

/// The overrun check whose bound is the grace after the skill's timeout (the demo's
/// `conform/overrun` declares 50 ms).
const OVERRUN: &[&str] = &["SSP-INV-5/overrun"];
/// Scale 0.02 makes the 5 s grace 100 ms; the target ends its overruns 500 ms late (5×).
const LATE: Duration = Duration::from_millis(500);
/// A per-request timeout that stays long at the small scale (100 s × 0.02 = 2 s).
const LONG_TIMEOUT_MS: u64 = 100_000;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_overrun_ended_five_times_later_than_the_grace_fails_naming_the_grace() {
    let report = run_at(0.02, Duration::ZERO, Some(LATE), LONG_TIMEOUT_MS, OVERRUN).await;
    let (id, v) = verdicts(&report).remove(0);
    let text = serde_json::to_string(&v).expect("verdict");
    assert!(matches!(v, Verdict::Fail(_)), "{id}: {text}");
    assert!(text.contains("SSP-INV-5"), "{text}");
    assert!(
        text.contains("overrun grace of 100 ms (5000 ms × time scale 0.02;"),
        "the message names the grace: {text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_overrun_ended_within_the_scaled_grace_passes() {
    // Ten times the scale: a 1 s grace for an overrun ended 500 ms late.
    let report = run_at(0.2, Duration::ZERO, Some(LATE), LONG_TIMEOUT_MS, OVERRUN).await;
    let (id, v) = verdicts(&report).remove(0);
    assert!(passed(&v), "{id} passes at scale 0.2: {v:?}");
}
