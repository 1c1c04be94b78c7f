//! SSP consumer side against small in-test axum providers (SSP-VER-1, SSP-VER-2,
//! SSP-DISC-1, SSP-DISC-4, seed §5.5 `{execution_id}` substitution, bounded polling).

// Test code: a failed expectation is a test failure, so panicking helpers are the point.
#![expect(clippy::expect_used)]

mod support;

use axum::Router;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::routing::{get, post};
use conform::ssp::consumer::{
    Consumer, ConsumerConfig, ConsumerError, Credentials, RetryPolicy, Sleeper,
    check_compatibility, expand_template,
};
use conform::ssp::types::*;
use serde_json::{Map, Value, json};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use support::http::{json_response, refused_base, serve, serve_at};
use support::ssp::execution;

/// Records the waits instead of sleeping: the backoff schedule is observable and tests
/// take no wall time.
#[derive(Clone, Default)]
struct RecordingSleeper(Arc<Mutex<Vec<Duration>>>);

impl RecordingSleeper {
    fn taken(&self) -> Vec<Duration> {
        self.0.lock().expect("lock").clone()
    }
}

impl Sleeper for RecordingSleeper {
    fn sleep(&self, d: Duration) -> impl std::future::Future<Output = ()> + Send {
        self.0.lock().expect("lock").push(d);
        async {}
    }
}

fn consumer(max_polls: u32) -> (Consumer<RecordingSleeper>, RecordingSleeper) {
    let s = RecordingSleeper::default();
    let c = Consumer::with_sleeper(
        ConsumerConfig {
            max_polls,
            poll_interval: Duration::from_millis(25),
            request_timeout: Duration::from_secs(5),
            no_proxy: true,
            ..ConsumerConfig::default()
        },
        s.clone(),
    )
    .expect("client");
    (c, s)
}

fn descriptor(base: &str, id: &str) -> Value {
    json!({
        "protocol": {"version": "1.0.0"},
        "id": id,
        "name": "Echo",
        "version": "1.0.0",
        "capability_type": "task",
        "description": "Echoes.",
        "provider": {"name": "Test"},
        "endpoint": {
            "url": format!("{base}/invoke"),
            "method": "POST",
            "status_url": format!("{base}/executions/{{execution_id}}/status"),
            "result_url": format!("{base}/executions/{{execution_id}}/result")
        },
        "inputs": [{"name": "text", "type": "string", "description": "t", "required": true}],
        "output": {"content_type": "application/json"},
        "auth": {"type": "none"},
        "access": "public"
    })
}

fn typed(v: Value) -> SkillDescriptor {
    serde_json::from_value(v).expect("typed descriptor")
}

fn inputs() -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("text".into(), json!("hi"));
    m
}

// ------------------------------------------------------------------ discovery

#[tokio::test]
async fn discovers_well_known_index() {
    // The documents name the provider's own address: `serve_at` binds first.
    let base = serve_at(|base| {
        let index = json!({
            "protocol": {"version": "1.0.0"},
            "provider": {"name": "Test"},
            "skills": [
                {"id": "t/echo", "name": "Echo", "capability_type": "task", "description": "d",
                 "descriptor_url": format!("{base}/skills/echo.json"), "access": "public", "version": "1.0.0"},
                {"id": "t/broken", "name": "Broken", "capability_type": "api", "description": "d",
                 "descriptor_url": format!("{base}/skills/broken.json"), "access": "public", "version": "1.0.0"}
            ]
        });
        let echo = descriptor(base, "t/echo");
        let mut broken = descriptor(base, "t/broken");
        broken["endpoint"]["method"] = json!("PATCH");
        Router::new()
            .route(
                "/.well-known/skill-sharing",
                get(move || async move { json_response(StatusCode::OK, index) }),
            )
            .route(
                "/skills/echo.json",
                get(move || async move { json_response(StatusCode::OK, echo) }),
            )
            .route(
                "/skills/broken.json",
                get(move || async move { json_response(StatusCode::OK, broken) }),
            )
    })
    .await;
    let (c, _) = consumer(10);
    let (idx, descriptors) = c
        .discover_all(&base, &Credentials::None, None)
        .await
        .expect("discovery");
    assert_eq!(idx.skills.len(), 2);
    assert_eq!(idx.filter_by_capability(CapabilityType::Task).len(), 1);
    assert_eq!(descriptors[0].as_ref().expect("echo is valid").id, "t/echo");
    // Seed §10.1 step 3: an invalid descriptor is reported as a local VALIDATION_ERROR.
    let err = descriptors[1].as_ref().expect_err("broken is invalid");
    assert_eq!(err.code(), Some("VALIDATION_ERROR"));
    let ConsumerError::Local(e) = err else {
        panic!("local error expected")
    };
    assert_eq!(
        e.details.as_ref().and_then(|d| d[0]["path"].as_str()),
        Some("/endpoint/method")
    );
}

#[tokio::test]
async fn duplicate_index_ids_are_rejected() {
    let index = json!({
        "protocol": {"version": "1.0.0"}, "provider": {"name": "T"},
        "skills": [
            {"id": "t/a", "name": "A", "capability_type": "task", "description": "", "descriptor_url": "https://t.example/a", "access": "public", "version": "1.0.0"},
            {"id": "t/a", "name": "A2", "capability_type": "task", "description": "", "descriptor_url": "https://t.example/b", "access": "public", "version": "1.0.0"}
        ]
    });
    let base = serve(Router::new().route(
        "/.well-known/skill-sharing",
        get(move || async move { json_response(StatusCode::OK, index) }),
    ))
    .await;
    let (c, _) = consumer(10);
    let err = c
        .discover(&base, &Credentials::None, None)
        .await
        .expect_err("duplicate ids");
    let ConsumerError::Local(e) = err else {
        panic!("local error expected, got {err:?}")
    };
    assert_eq!(e.code.as_str(), "VALIDATION_ERROR");
    assert_eq!(
        e.details.as_ref().and_then(|d| d[0]["path"].as_str()),
        Some("/skills/1/id")
    );
}

#[tokio::test]
async fn index_must_be_application_json() {
    let base = serve(Router::new().route(
        "/.well-known/skill-sharing",
        get(|| async {
            (
                [("content-type", "text/plain")],
                r#"{"protocol":{"version":"1.0.0"},"provider":{"name":"T"},"skills":[]}"#,
            )
        }),
    ))
    .await;
    let (c, _) = consumer(10);
    let err = c
        .discover(&base, &Credentials::None, None)
        .await
        .expect_err("content type");
    assert!(matches!(err, ConsumerError::BadResponse { .. }), "{err:?}");
}

// ------------------------------------------------------------------ compatibility

/// SSP-VER-1 / seed §6.3 table.
#[test]
fn compatibility_table() {
    let consumer = semver::Version::new(1, 5, 0);
    for ok in ["0.1.0", "1.0.0", "1.5.0", "1.9.9"] {
        assert!(check_compatibility(ok, &consumer).is_ok(), "{ok}");
    }
    let e = check_compatibility("2.0.0", &consumer).expect_err("newer MAJOR");
    // Seed §8.3.7, verbatim.
    assert_eq!(
        serde_json::to_value(ErrorResponse { error: *e }).expect("json"),
        json!({"error": {
            "code": "VERSION_INCOMPATIBLE",
            "message": "Protocol version 2.0.0 is not compatible with consumer version 1.5.0",
            "details": {"descriptor_version": "2.0.0", "consumer_version": "1.5.0", "supported_major": 1}
        }})
    );
    assert_eq!(
        check_compatibility("garbage", &consumer)
            .expect_err("bad")
            .code
            .as_str(),
        "VALIDATION_ERROR"
    );
}

/// SSP-VER-1 / seed §6.4: an incompatible descriptor is never invoked.
#[tokio::test]
async fn incompatible_major_is_not_invoked() {
    let hits = Arc::new(AtomicU32::new(0));
    let h = hits.clone();
    let base = serve(Router::new().route(
        "/invoke",
        post(move || {
            h.fetch_add(1, Ordering::SeqCst);
            async {
                json_response(
                    StatusCode::ACCEPTED,
                    execution("e1", "t/echo", "accepted", None),
                )
            }
        }),
    ))
    .await;
    let mut d = descriptor(&base, "t/echo");
    d["protocol"]["version"] = json!("2.0.0");
    let (c, _) = consumer(10);
    let err = c
        .invoke(&typed(d), inputs(), None, &Credentials::None)
        .await
        .expect_err("incompatible");
    let ConsumerError::Local(e) = err else {
        panic!("local error expected")
    };
    assert_eq!(e.code.as_str(), "VERSION_INCOMPATIBLE");
    assert_eq!(
        e.details,
        Some(
            json!({"descriptor_version": "2.0.0", "consumer_version": "1.0.0", "supported_major": 1})
        )
    );
    assert_eq!(
        hits.load(Ordering::SeqCst),
        0,
        "the provider must not be called"
    );
}

// ------------------------------------------------------------------ invocation

#[derive(Default)]
struct Lifecycle {
    polls: AtomicU32,
    paths: Mutex<Vec<String>>,
    api_keys: Mutex<Vec<Option<String>>>,
}

fn lifecycle_router(state: Arc<Lifecycle>, running_polls: u32) -> Router {
    Router::new()
        .route(
            "/invoke",
            post(
                |State(s): State<Arc<Lifecycle>>, headers: HeaderMap, body: String| async move {
                    s.api_keys.lock().expect("lock").push(
                        headers
                            .get("x-api-key")
                            .and_then(|v| v.to_str().ok())
                            .map(String::from),
                    );
                    let req: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
                    assert_eq!(req["skill_id"], "t/echo");
                    assert_eq!(req["inputs"]["text"], "hi");
                    assert_eq!(req["caller"]["type"], "service");
                    json_response(
                        StatusCode::ACCEPTED,
                        execution("exec/1 a", "t/echo", "accepted", None),
                    )
                },
            ),
        )
        .route(
            "/executions/{id}/status",
            get(
                move |State(s): State<Arc<Lifecycle>>, Path(id): Path<String>| async move {
                    s.paths.lock().expect("lock").push(format!("status:{id}"));
                    let n = s.polls.fetch_add(1, Ordering::SeqCst);
                    let status = if n < running_polls {
                        "running"
                    } else {
                        "completed"
                    };
                    json_response(
                        StatusCode::OK,
                        execution(&id, "t/echo", status, Some(json!({"echo": "hi"}))),
                    )
                },
            ),
        )
        .route(
            "/executions/{id}/result",
            get(
                |State(s): State<Arc<Lifecycle>>, Path(id): Path<String>| async move {
                    s.paths.lock().expect("lock").push(format!("result:{id}"));
                    json_response(
                        StatusCode::OK,
                        execution(
                            &id,
                            "t/echo",
                            "completed",
                            Some(json!({"echo": "hi", "from": "result"})),
                        ),
                    )
                },
            ),
        )
        .with_state(state)
}

/// Seed §5.2/§5.5: POST → 202, poll the status URL with `{execution_id}` substituted, then
/// the result URL.
#[tokio::test]
async fn invokes_polls_and_fetches_result() {
    let state = Arc::new(Lifecycle::default());
    let base = serve(lifecycle_router(state.clone(), 2)).await;
    let (c, sleeper) = consumer(10);
    let inv = c
        .invoke(
            &typed(descriptor(&base, "t/echo")),
            inputs(),
            None,
            &Credentials::None,
        )
        .await
        .expect("invocation");
    assert_eq!(inv.accepted_status, 202);
    assert_eq!(inv.accepted.status, ExecutionStatus::Accepted);
    assert_eq!(
        inv.polls.iter().map(|p| p.status).collect::<Vec<_>>(),
        [
            ExecutionStatus::Running,
            ExecutionStatus::Running,
            ExecutionStatus::Completed
        ]
    );
    assert_eq!(
        inv.result.output,
        Some(json!({"echo": "hi", "from": "result"}))
    );
    assert_eq!(inv.attempts, 1);
    // The id (with a slash and a space) was substituted as one encoded path segment.
    let paths = state.paths.lock().expect("lock").clone();
    assert_eq!(
        paths,
        [
            "status:exec/1 a",
            "status:exec/1 a",
            "status:exec/1 a",
            "result:exec/1 a"
        ]
    );
    // Polls are spaced by the poll interval (first poll immediately).
    assert_eq!(
        sleeper.taken(),
        [Duration::from_millis(25), Duration::from_millis(25)]
    );
}

#[tokio::test]
async fn api_key_goes_in_the_declared_header() {
    let state = Arc::new(Lifecycle::default());
    let base = serve(lifecycle_router(state.clone(), 0)).await;
    let mut d = descriptor(&base, "t/echo");
    d["auth"] = json!({"type": "api_key", "header": "X-API-Key"});
    let (c, _) = consumer(10);
    c.invoke(
        &typed(d),
        inputs(),
        None,
        &Credentials::ApiKey("sk-1".into()),
    )
    .await
    .expect("invocation");
    assert_eq!(
        state.api_keys.lock().expect("lock").clone(),
        [Some("sk-1".to_owned())]
    );
}

/// Bounded polling: a skill that never finishes exhausts the budget instead of hanging.
#[tokio::test]
async fn poll_budget_is_bounded() {
    let state = Arc::new(Lifecycle::default());
    let base = serve(lifecycle_router(state.clone(), u32::MAX)).await;
    let (c, sleeper) = consumer(3);
    let err = c
        .invoke(
            &typed(descriptor(&base, "t/echo")),
            inputs(),
            None,
            &Credentials::None,
        )
        .await
        .expect_err("budget");
    match err {
        ConsumerError::PollBudgetExhausted {
            polls, last_status, ..
        } => {
            assert_eq!(polls, 3);
            assert_eq!(last_status, "running");
        }
        other => panic!("expected PollBudgetExhausted, got {other:?}"),
    }
    assert_eq!(state.polls.load(Ordering::SeqCst), 3);
    assert_eq!(sleeper.taken().len(), 2);
}

/// SSP-VER-2 / seed §8.3.6: a refused connection ends in a local ENDPOINT_UNREACHABLE after
/// the attempts `endpoint.retry` allows, with exponential backoff between them.
#[tokio::test]
async fn refused_connection_is_endpoint_unreachable() {
    let base = refused_base();
    let mut d = descriptor(&base, "t/echo");
    d["endpoint"]["retry"] = json!({"max_attempts": 4, "backoff_ms": 100});
    let (c, sleeper) = consumer(10);
    let err = c
        .invoke(&typed(d), inputs(), None, &Credentials::None)
        .await
        .expect_err("refused");
    let ConsumerError::Local(e) = err else {
        panic!("local error expected, got {err:?}")
    };
    assert_eq!(e.code.as_str(), "ENDPOINT_UNREACHABLE");
    let details = e.details.expect("details");
    assert_eq!(details["reason"], "Connection refused");
    assert_eq!(details["attempts"], 4);
    assert_eq!(details["url"], format!("{base}/invoke"));
    assert_eq!(
        sleeper.taken(),
        [
            Duration::from_millis(100),
            Duration::from_millis(200),
            Duration::from_millis(400)
        ]
    );
    assert!(e.retry.is_some(), "seed §8.3.6 example carries retry");
}

#[tokio::test]
async fn refused_without_retry_config_tries_once() {
    let base = refused_base();
    let (c, sleeper) = consumer(10);
    let err = c
        .invoke(
            &typed(descriptor(&base, "t/echo")),
            inputs(),
            None,
            &Credentials::None,
        )
        .await
        .expect_err("refused");
    assert_eq!(err.code(), Some("ENDPOINT_UNREACHABLE"));
    assert!(sleeper.taken().is_empty());
}

/// SSP-VER-2: a provider's `error.retry` is honoured (delay floor and attempt budget).
#[tokio::test]
async fn provider_error_retry_is_honoured() {
    let hits = Arc::new(AtomicU32::new(0));
    let h = hits.clone();
    let base = serve(Router::new().route(
        "/invoke",
        post(move || {
            let n = h.fetch_add(1, Ordering::SeqCst);
            async move {
                if n < 2 {
                    json_response(
                        StatusCode::SERVICE_UNAVAILABLE,
                        json!({"error": {"code": "ENDPOINT_UNREACHABLE", "message": "busy", "retry": {"suggested_delay_ms": 700, "max_attempts": 3}}}),
                    )
                } else {
                    let mut r = execution("e1", "t/echo", "completed", Some(json!(1)));
                    r["output"] = json!(1);
                    json_response(StatusCode::ACCEPTED, r)
                }
            }
        }),
    ))
    .await;
    let mut d = descriptor(&base, "t/echo");
    d["endpoint"]["retry"] = json!({"max_attempts": 1, "backoff_ms": 500});
    d["endpoint"]
        .as_object_mut()
        .expect("object")
        .remove("result_url");
    let (c, sleeper) = consumer(10);
    let inv = c
        .invoke(&typed(d), inputs(), None, &Credentials::None)
        .await
        .expect("third attempt succeeds");
    assert_eq!(inv.attempts, 3);
    assert_eq!(hits.load(Ordering::SeqCst), 3);
    // max(500·2^0, 700) then max(500·2^1, 700).
    assert_eq!(
        sleeper.taken(),
        [Duration::from_millis(700), Duration::from_millis(1000)]
    );
}

/// AUTH_REQUIRED is not retried (its retry says max_attempts 1; 401 is not transient).
#[tokio::test]
async fn auth_required_is_not_retried() {
    let hits = Arc::new(AtomicU32::new(0));
    let h = hits.clone();
    let base = serve(Router::new().route(
        "/invoke",
        post(move || {
            h.fetch_add(1, Ordering::SeqCst);
            async {
                json_response(
                    StatusCode::UNAUTHORIZED,
                    json!({"error": {"code": "AUTH_REQUIRED", "message": "auth", "details": {"required_auth_type": "api_key", "header": "X-API-Key"}, "retry": {"suggested_delay_ms": 0, "max_attempts": 1}}}),
                )
            }
        }),
    ))
    .await;
    let mut d = descriptor(&base, "t/echo");
    d["endpoint"]["retry"] = json!({"max_attempts": 5, "backoff_ms": 10});
    let (c, sleeper) = consumer(10);
    let err = c
        .invoke(&typed(d), inputs(), None, &Credentials::None)
        .await
        .expect_err("401");
    match err {
        ConsumerError::Provider {
            status,
            error: Some(e),
            ..
        } => {
            assert_eq!(status, 401);
            assert_eq!(e.code.as_str(), "AUTH_REQUIRED");
        }
        other => panic!("expected provider error, got {other:?}"),
    }
    assert_eq!(hits.load(Ordering::SeqCst), 1);
    assert!(sleeper.taken().is_empty());
}

#[test]
fn backoff_schedule() {
    let p = RetryPolicy {
        max_attempts: 5,
        backoff: Duration::from_millis(250),
    };
    let delays: Vec<_> = (1..5).map(|a| p.delay(a, None)).collect();
    assert_eq!(delays, [250, 500, 1000, 2000].map(Duration::from_millis));
    assert_eq!(
        p.delay(3, Some(Duration::from_secs(5))),
        Duration::from_secs(5)
    );
    assert_eq!(p.delay(40, None), conform::ssp::consumer::MAX_BACKOFF);
    let suggestion = RetrySuggestion {
        suggested_delay_ms: 1000.into(),
        max_attempts: 50.into(),
    };
    let (q, d) = RetryPolicy {
        max_attempts: 1,
        backoff: Duration::ZERO,
    }
    .honour(&suggestion);
    assert_eq!(d, Duration::from_secs(1));
    assert_eq!(q.max_attempts, conform::ssp::consumer::MAX_ATTEMPTS_CAP);
}

#[test]
fn template_expansion() {
    let url = |t, id| expand_template(t, id).url;
    assert_eq!(
        url("https://x.example/s/{execution_id}", "e-1"),
        "https://x.example/s/e-1"
    );
    assert_eq!(
        url("https://x.example/s?id={execution_id}", "a/b c"),
        "https://x.example/s?id=a%2Fb%20c"
    );
    // SSP-SCH-3: every occurrence is replaced; a template without it gets /<id> appended
    // (the seed diagram's `GET {status_url}/{exec_id}`), and says so.
    assert_eq!(
        url("https://x.example/{execution_id}/{execution_id}", "e"),
        "https://x.example/e/e"
    );
    let bare = expand_template("https://x.example/s/", "e");
    assert_eq!(
        (bare.url.as_str(), bare.appended),
        ("https://x.example/s/e", true)
    );
    assert!(!expand_template("https://x.example/{execution_id}", "e").appended);
}
