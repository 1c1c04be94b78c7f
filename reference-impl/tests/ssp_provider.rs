//! SSP provider behaviour (ssp.md §3–§5, 6b) against the reference server's routes,
//! in-process; every emitted document is validated against the schema by the client
//! (`ssp_common`). Time-dependent skills run under paused tokio time.

#![expect(clippy::unwrap_used)] // tests: a panic is the failure report

mod support;

use std::time::Duration;

use reference_impl::parley::service::{Args, BearerToken, ContentType, Operation, Request};
use serde_json::{Value, json};
use support::ssp::{Client, Lifecycle, request, settle, signature};

const KEY: (&str, &str) = ("x-api-key", "demo-ssp-key");
const BEARER: (&str, &str) = ("authorization", "Bearer demo-oauth-full");

async fn accepted(
    c: &Client,
    slug: &str,
    req: &Value,
    headers: &[(&str, &str)],
) -> (String, Lifecycle) {
    let r = c.invoke(slug, req, headers).await;
    // SSP-INV-1: 202 + full InvocationResponse with status accepted, even for instant skills.
    assert_eq!(r.status, 202, "{}", r.body);
    assert_eq!(r.body["status"], "accepted");
    assert_eq!(r.body["skill_id"], req["skill_id"]);
    assert_eq!(
        r.body["timestamps"]["created_at"],
        r.body["timestamps"]["updated_at"]
    );
    let id = r.body["execution_id"].as_str().unwrap().to_string();
    assert_eq!(
        r.headers.get("location").unwrap().to_str().unwrap(),
        format!("http://127.0.0.1:9/ssp/status/{id}")
    );
    let mut lc = Lifecycle::default();
    lc.observe(&r.body);
    (id, lc)
}

async fn poll(c: &Client, id: &str, headers: &[(&str, &str)], lc: &mut Lifecycle) -> Value {
    let r = c.status(id, headers).await;
    assert_eq!(r.status, 200, "{}", r.body);
    lc.observe(&r.body);
    r.body
}

/// Polls (paused time) until terminal; bounded.
async fn until_terminal(
    c: &Client,
    id: &str,
    headers: &[(&str, &str)],
    lc: &mut Lifecycle,
) -> Value {
    for _ in 0..2000 {
        let b = poll(c, id, headers, lc).await;
        if matches!(
            b["status"].as_str(),
            Some("completed" | "failed" | "timeout")
        ) {
            // Terminal is stable: poll again, identical (Lifecycle checks it), and result is 200.
            poll(c, id, headers, lc).await;
            let r = c.result(id, headers).await;
            assert_eq!(r.status, 200);
            lc.observe(&r.body);
            return b;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("execution {id} never finished");
}

#[tokio::test(start_paused = true)]
async fn echo_returns_its_inputs() {
    let c = Client::demo();
    let req = request(
        "conform/echo",
        json!({"message": "héllo", "metadata": {"n": [1, 2]}}),
    );
    let (id, mut lc) = accepted(&c, "echo", &req, &[]).await;
    assert!(id.starts_with("exec-"));
    let done = until_terminal(&c, &id, &[], &mut lc).await;
    assert_eq!(done["status"], "completed");
    assert_eq!(
        done["output"],
        json!({"message": "héllo", "metadata": {"n": [1, 2]}})
    );
}

#[tokio::test(start_paused = true)]
async fn text_stats_counts() {
    let c = Client::demo();
    let req = request(
        "conform/text-stats",
        json!({"text": "One fish. Two fish! Red fish, blue fish?"}),
    );
    let (id, mut lc) = accepted(&c, "text-stats", &req, &[]).await;
    let done = until_terminal(&c, &id, &[], &mut lc).await;
    assert_eq!(done["status"], "completed");
    assert_eq!(done["output"]["words"], 8);
    assert_eq!(done["output"]["sentences"], 3);
    assert_eq!(done["output"]["characters"], 40);
    assert_eq!(
        done["output"]["top_words"][0],
        json!({"word": "fish", "count": 4})
    );
    assert_eq!(done["output"]["top_words"].as_array().unwrap().len(), 5);
}

#[tokio::test(start_paused = true)]
async fn slow_task_is_observably_running_then_completes_after_its_delay() {
    let c = Client::demo();
    let req = request("conform/slow-task", json!({"delay_ms": 5000}));
    let (id, mut lc) = accepted(&c, "slow-task", &req, &[KEY]).await;
    settle().await;
    let b = poll(&c, &id, &[KEY], &mut lc).await;
    assert_eq!(b["status"], "running");
    // SSP-INV-4: result before completion → 202 with the current response, no output.
    let r = c.result(&id, &[KEY]).await;
    assert_eq!(r.status, 202);
    assert_eq!(r.body["status"], "running");
    assert!(r.body.get("output").is_none());
    lc.observe(&r.body);
    tokio::time::sleep(Duration::from_millis(4990)).await;
    settle().await;
    assert_eq!(poll(&c, &id, &[KEY], &mut lc).await["status"], "running");
    tokio::time::sleep(Duration::from_millis(20)).await;
    settle().await;
    let done = poll(&c, &id, &[KEY], &mut lc).await;
    assert_eq!(done["status"], "completed");
    assert_eq!(done["output"], json!({"waited_ms": 5000}));
    until_terminal(&c, &id, &[KEY], &mut lc).await;
    assert_eq!(lc.statuses(), ["accepted", "running", "completed"]);
}

#[tokio::test(start_paused = true)]
async fn slow_task_default_and_bounds() {
    let c = Client::demo();
    // Default delay_ms 1000.
    let (id, mut lc) = accepted(
        &c,
        "slow-task",
        &request("conform/slow-task", json!({})),
        &[KEY],
    )
    .await;
    let done = until_terminal(&c, &id, &[KEY], &mut lc).await;
    assert_eq!(done["output"], json!({"waited_ms": 1000}));
    // delay_ms 0 completes too; out of range is a 400 with the path of the input.
    let (id, mut lc) = accepted(
        &c,
        "slow-task",
        &request("conform/slow-task", json!({"delay_ms": 0})),
        &[KEY],
    )
    .await;
    assert_eq!(
        until_terminal(&c, &id, &[KEY], &mut lc).await["status"],
        "completed"
    );
    for bad in [json!(10001), json!(-1), json!(1.5)] {
        let r = c
            .invoke(
                "slow-task",
                &request("conform/slow-task", json!({"delay_ms": bad})),
                &[KEY],
            )
            .await;
        assert_eq!(r.status, 400, "{bad}");
        assert_eq!(r.body["error"]["code"], "VALIDATION_ERROR");
        assert_eq!(r.body["error"]["details"][0]["path"], "/inputs/delay_ms");
    }
}

#[tokio::test(start_paused = true)]
async fn always_fails_ends_failed_with_a_unified_error() {
    let c = Client::demo();
    let (id, mut lc) = accepted(
        &c,
        "always-fails",
        &request("conform/always-fails", json!({"reason": "because"})),
        &[],
    )
    .await;
    let done = until_terminal(&c, &id, &[], &mut lc).await;
    assert_eq!(done["status"], "failed");
    assert_eq!(
        done["error"]["code"], "ENDPOINT_UNREACHABLE",
        "SSP-ERR-3: one of the seven"
    );
    assert_eq!(done["error"]["details"], json!({"reason": "because"}));
    assert!(
        done["error"]["message"]
            .as_str()
            .unwrap()
            .contains("because")
    );
}

#[tokio::test(start_paused = true)]
async fn overrun_times_out_at_its_declared_timeout() {
    // SSP-INV-5
    let c = Client::demo();
    let (id, mut lc) = accepted(&c, "overrun", &request("conform/overrun", json!({})), &[]).await;
    settle().await;
    assert_eq!(poll(&c, &id, &[], &mut lc).await["status"], "running");
    let declared = reference_impl::ssp::skills::OVERRUN_TIMEOUT_MS;
    tokio::time::sleep(Duration::from_millis(declared - 10)).await;
    settle().await;
    assert_eq!(poll(&c, &id, &[], &mut lc).await["status"], "running");
    tokio::time::sleep(Duration::from_millis(20)).await;
    settle().await;
    let done = poll(&c, &id, &[], &mut lc).await;
    assert_eq!(done["status"], "timeout");
    assert_eq!(done["error"]["code"], "INVOCATION_TIMEOUT");
    assert_eq!(
        done["error"]["details"],
        json!({"timeout_ms": declared, "execution_id": id})
    );
    assert_eq!(
        done["error"]["retry"],
        json!({"suggested_delay_ms": 1000, "max_attempts": 3})
    );
    // Still timeout long after the work would have finished (terminal stable).
    tokio::time::sleep(Duration::from_millis(5000)).await;
    settle().await;
    until_terminal(&c, &id, &[], &mut lc).await;
    assert_eq!(lc.statuses(), ["accepted", "running", "timeout"]);
}

#[tokio::test(start_paused = true)]
async fn context_timeout_shortens_the_effective_timeout() {
    // SSP-INV-5: min(endpoint.timeout_ms, context.timeout_ms).
    let c = Client::demo();
    let mut req = request("conform/slow-task", json!({"delay_ms": 5000}));
    req["context"] = json!({"timeout_ms": 300, "priority": "high", "trace_id": "t-1"});
    let (id, mut lc) = accepted(&c, "slow-task", &req, &[KEY]).await;
    let done = until_terminal(&c, &id, &[KEY], &mut lc).await;
    assert_eq!(done["status"], "timeout");
    assert_eq!(done["error"]["details"]["timeout_ms"], 300);
    // A larger context timeout does not extend the endpoint's (overrun's declared one).
    let mut req = request("conform/overrun", json!({}));
    req["context"] = json!({"timeout_ms": 60000});
    let (id, mut lc) = accepted(&c, "overrun", &req, &[]).await;
    let done = until_terminal(&c, &id, &[], &mut lc).await;
    assert_eq!(
        done["error"]["details"]["timeout_ms"],
        reference_impl::ssp::skills::OVERRUN_TIMEOUT_MS
    );
}

fn signed(body: &Value) -> (Vec<u8>, String) {
    let bytes = body.to_string().into_bytes();
    let sig = signature(&bytes);
    (bytes, sig)
}

#[tokio::test(start_paused = true)]
async fn spec_lookup_returns_catalogue_rows() {
    let c = Client::demo();
    let poll_sig = signature(b"");
    let poll_h = [("x-signature", poll_sig.as_str())];
    let (bytes, sig) = signed(&request("conform/spec-lookup", json!({"id": "SSP-INV-3"})));
    let r = c
        .send(
            "POST",
            "/ssp/invoke/spec-lookup",
            &[("content-type", "application/json"), ("x-signature", &sig)],
            Some(bytes),
        )
        .await;
    assert_eq!(r.status, 202, "{}", r.body);
    let id = r.body["execution_id"].as_str().unwrap().to_string();
    let mut lc = Lifecycle::default();
    lc.observe(&r.body);
    let done = until_terminal(&c, &id, &poll_h, &mut lc).await;
    assert_eq!(done["status"], "completed");
    assert_eq!(done["output"]["id"], "SSP-INV-3");
    assert_eq!(done["output"]["level"], "MUST");
    assert!(
        done["output"]["rule"]
            .as_str()
            .unwrap()
            .to_lowercase()
            .contains("forward")
    );
    // Parley IDs come from the same catalogue.
    let (bytes, sig) = signed(&request("conform/spec-lookup", json!({"id": "PV-TR-1a"})));
    let r = c
        .send(
            "POST",
            "/ssp/invoke/spec-lookup",
            &[("content-type", "application/json"), ("x-signature", &sig)],
            Some(bytes),
        )
        .await;
    let id = r.body["execution_id"].as_str().unwrap().to_string();
    let done = until_terminal(&c, &id, &poll_h, &mut Lifecycle::default()).await;
    assert_eq!(done["output"]["id"], "PV-TR-1a");
    // Unknown ID: the execution fails with its own code.
    let (bytes, sig) = signed(&request(
        "conform/spec-lookup",
        json!({"id": "SSP-NOPE-99"}),
    ));
    let r = c
        .send(
            "POST",
            "/ssp/invoke/spec-lookup",
            &[("content-type", "application/json"), ("x-signature", &sig)],
            Some(bytes),
        )
        .await;
    let id = r.body["execution_id"].as_str().unwrap().to_string();
    let mut lc = Lifecycle::default();
    let done = until_terminal(&c, &id, &poll_h, &mut lc).await;
    assert_eq!(done["status"], "failed");
    assert_eq!(
        done["error"]["code"], "VALIDATION_ERROR",
        "a failure its inputs caused"
    );
    // Executions of the restricted skill are invisible without the signature (SSP-INV-6).
    assert_eq!(c.status(&id, &[]).await.status, 404);
}

fn post_parley(
    svc: &reference_impl::parley::service::ParleyService,
    token: &str,
    body: Value,
) -> Value {
    let len = body.to_string().len();
    let r = svc.handle(Request {
        op: Operation::Post,
        auth: Some(BearerToken::Token(token.into())),
        args: Args::Json(body),
        body_len: len,
        content_type: ContentType::Json,
    });
    assert_eq!(r.status, 201, "{}", r.body);
    r.body.into_value()
}

#[tokio::test(start_paused = true)]
async fn forum_digest_summarises_a_real_parley_thread() {
    let db = reference_impl::store::Db::open(std::path::Path::new(":memory:")).unwrap();
    let c = Client::over(db.clone(), Some("http://127.0.0.1:9".into()));
    let svc = support::ssp::parley(&db);
    let opened = post_parley(
        &svc,
        "demo-agent-a",
        json!({"kind": "ask", "body": "Which port?"}),
    );
    let thread = opened["thread"]["id"].as_str().unwrap().to_string();
    post_parley(
        &svc,
        "demo-agent-b",
        json!({"kind": "answer", "thread": thread, "body": "8080"}),
    );
    post_parley(
        &svc,
        "demo-agent-b",
        json!({"kind": "inform", "thread": thread, "body": "also 8443"}),
    );
    let (id, mut lc) = accepted(
        &c,
        "forum-digest",
        &request("conform/forum-digest", json!({"thread": thread})),
        &[BEARER],
    )
    .await;
    let done = until_terminal(&c, &id, &[BEARER], &mut lc).await;
    assert_eq!(done["status"], "completed", "{done}");
    let out = &done["output"];
    assert_eq!(out["thread"], thread);
    assert_eq!(out["messages"], 3);
    assert_eq!(out["kinds"], json!({"answer": 1, "ask": 1, "inform": 1}));
    assert_eq!(out["state"], "answered");
    assert!(out.get("awaiting").is_some());
    // Unknown thread → failed with VALIDATION_ERROR (its input caused it, SSP-ERR-3).
    let (id, mut lc) = accepted(
        &c,
        "forum-digest",
        &request("conform/forum-digest", json!({"thread": "th_999999"})),
        &[BEARER],
    )
    .await;
    let done = until_terminal(&c, &id, &[BEARER], &mut lc).await;
    assert_eq!(done["status"], "failed");
    assert_eq!(done["error"]["code"], "VALIDATION_ERROR");
}

#[tokio::test]
async fn discovery_is_auth_aware_and_filters() {
    let c = Client::demo();
    let ids = |b: &Value| -> Vec<String> {
        b["skills"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["id"].as_str().unwrap().to_string())
            .collect()
    };
    // SSP-DISC-1/2: unauthenticated → no private skill.
    let anon = c.get("/.well-known/skill-sharing", &[]).await;
    assert_eq!(anon.status, 200);
    assert_eq!(anon.body["protocol"]["version"], "1.0.0");
    let anon_ids = ids(&anon.body);
    assert_eq!(anon_ids.len(), 6);
    assert!(!anon_ids.contains(&"conform/forum-digest".to_string()));
    // An invalid credential is not authentication.
    let bad = c
        .get(
            "/.well-known/skill-sharing",
            &[("authorization", "Bearer nope")],
        )
        .await;
    assert_eq!(ids(&bad.body), anon_ids);
    // Any valid credential (limited ones too) makes discovery authenticated.
    let sig = signature(b"");
    for h in [
        ("x-api-key", "demo-ssp-key"),
        ("x-api-key", "demo-ssp-key-limited"),
        ("authorization", "Bearer demo-oauth-read"),
        ("x-signature", sig.as_str()),
    ] {
        let auth = c.get("/.well-known/skill-sharing", &[h]).await;
        let auth_ids = ids(&auth.body);
        assert_eq!(auth_ids.len(), 7, "{h:?}");
        assert!(
            anon_ids.iter().all(|i| auth_ids.contains(i)),
            "unauthenticated ⊆ authenticated"
        );
    }
    // SSP-DISC-3: filters, both spellings; all and only matching entries.
    for (q, expected) in [
        (
            "capability_type=api",
            vec!["conform/echo", "conform/text-stats"],
        ),
        ("type=task", vec!["conform/slow-task", "conform/overrun"]),
        ("capability_type=knowledge", vec!["conform/spec-lookup"]),
        ("capability_type=plugin", vec!["conform/always-fails"]),
    ] {
        let r = c.get(&format!("/.well-known/skill-sharing?{q}"), &[]).await;
        assert_eq!(r.status, 200);
        assert_eq!(ids(&r.body), expected, "{q}");
    }
    let r = c
        .get("/.well-known/skill-sharing?type=plugin", &[BEARER])
        .await;
    assert_eq!(
        ids(&r.body),
        ["conform/always-fails", "conform/forum-digest"]
    );
    let r = c
        .get("/.well-known/skill-sharing?capability_type=banana", &[])
        .await;
    assert_eq!(r.status, 400);
    assert_eq!(r.body["error"]["code"], "VALIDATION_ERROR");
    assert_eq!(r.body["error"]["details"][0]["actual"], "banana");
}

#[tokio::test]
async fn descriptors_match_their_index_entries() {
    // SSP-DISC-4
    let c = Client::demo();
    let index = c.get("/.well-known/skill-sharing", &[BEARER]).await.body;
    for e in index["skills"].as_array().unwrap() {
        let url = e["descriptor_url"].as_str().unwrap();
        let path = url.strip_prefix("http://127.0.0.1:9").unwrap();
        let d = c.get(path, &[BEARER]).await;
        assert_eq!(d.status, 200, "{path}");
        for k in ["id", "name", "capability_type", "access", "version"] {
            assert_eq!(d.body[k], e[k], "{path} {k}");
        }
        assert_eq!(d.body["protocol"]["version"], index["protocol"]["version"]);
        let ep = &d.body["endpoint"];
        assert!(
            ep["status_url"]
                .as_str()
                .unwrap()
                .ends_with("/ssp/status/{execution_id}")
        );
        assert!(
            ep["url"]
                .as_str()
                .unwrap()
                .starts_with("http://127.0.0.1:9/ssp/invoke/")
        );
    }
    // Private descriptor without credentials → 401 AUTH_REQUIRED with a challenge.
    let r = c.get("/ssp/skills/forum-digest.json", &[]).await;
    assert_eq!(r.status, 401);
    assert_eq!(r.body["error"]["code"], "AUTH_REQUIRED");
    assert_eq!(r.body["error"]["details"]["required_auth_type"], "oauth2");
    assert!(r.headers.get("www-authenticate").is_some());
    // Unknown descriptor → 404 SKILL_NOT_FOUND.
    for p in [
        "/ssp/skills/nope.json",
        "/ssp/skills/echo",
        "/ssp/skills/echo.json/x",
    ] {
        let r = c.get(p, &[]).await;
        assert_eq!(r.status, 404, "{p}");
        assert_eq!(r.body["error"]["code"], "SKILL_NOT_FOUND");
    }
}

#[tokio::test]
async fn base_url_comes_from_the_host_header_when_not_configured() {
    let db = reference_impl::store::Db::open(std::path::Path::new(":memory:")).unwrap();
    let c = Client::over(db, None);
    let r = c
        .get(
            "/.well-known/skill-sharing",
            &[("host", "skills.test:8123")],
        )
        .await;
    assert_eq!(
        r.body["skills"][0]["descriptor_url"],
        "http://skills.test:8123/ssp/skills/echo.json"
    );
    let r = c
        .get("/.well-known/skill-sharing", &[("host", "[::1]:8080")])
        .await;
    assert_eq!(
        r.body["skills"][0]["descriptor_url"],
        "http://[::1]:8080/ssp/skills/echo.json"
    );
    for bad in ["a:b:c", "h:", "h:99999999", "[zz]", "x/y", "evil\"host"] {
        let r = c.get("/.well-known/skill-sharing", &[("host", bad)]).await;
        assert_eq!(
            r.body["skills"][0]["descriptor_url"], "http://127.0.0.1/ssp/skills/echo.json",
            "{bad}"
        );
    }
    let r = c
        .get("/ssp/skills/forum-digest.json", &[("host", "h:1")])
        .await;
    assert_eq!(r.status, 401);
    assert_eq!(
        r.body["error"]["details"]["authorization_url"],
        "http://h:1/ssp/oauth/authorize"
    );
    let r = c.get("/.well-known/skill-sharing", &[("host", "h")]).await;
    assert_eq!(
        r.body["skills"][0]["descriptor_url"],
        "http://h/ssp/skills/echo.json"
    );
}

#[tokio::test]
async fn hostile_input_gets_documented_4xx() {
    // SSP-INV-2, SSP-ERR-1: never a 5xx, always the unified error.
    let c = Client::demo();
    let json_h = [("content-type", "application/json")];
    let send = |body: &'static [u8], h: &'static [(&'static str, &'static str)]| {
        let c = c.clone();
        async move {
            c.send("POST", "/ssp/invoke/echo", h, Some(body.to_vec()))
                .await
        }
    };
    // Malformed JSON.
    let r = send(b"{\"caller\":", &[("content-type", "application/json")]).await;
    assert_eq!(
        (r.status, r.body["error"]["code"].as_str()),
        (400, Some("VALIDATION_ERROR"))
    );
    assert!(r.body["error"]["details"].is_array());
    // Wrong / missing content type.
    let ok_body = request("conform/echo", json!({"message": "x"}))
        .to_string()
        .into_bytes();
    let r = c
        .send(
            "POST",
            "/ssp/invoke/echo",
            &[("content-type", "text/plain")],
            Some(ok_body.clone()),
        )
        .await;
    assert_eq!(r.status, 415);
    let r = c
        .send("POST", "/ssp/invoke/echo", &[], Some(ok_body.clone()))
        .await;
    assert_eq!(r.status, 415);
    let r = c
        .send(
            "POST",
            "/ssp/invoke/echo",
            &[("content-type", "application/json; charset=utf-8")],
            Some(ok_body),
        )
        .await;
    assert_eq!(r.status, 202);
    // Schema-invalid InvocationRequest: every violation listed with its pointer.
    let r = c
        .send(
            "POST",
            "/ssp/invoke/echo",
            &json_h,
            Some(br#"{"skill_id": 5, "inputs": [], "extra": 1}"#.to_vec()),
        )
        .await;
    assert_eq!(r.status, 400);
    let paths: Vec<_> = r.body["error"]["details"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["path"].as_str().unwrap().to_string())
        .collect();
    for p in ["/caller", "/skill_id", "/inputs", ""] {
        assert!(paths.contains(&p.to_string()), "{p} in {paths:?}");
    }
    for d in r.body["error"]["details"].as_array().unwrap() {
        for k in ["path", "message", "expected", "actual"] {
            assert!(d.get(k).is_some(), "{k} in {d}");
        }
    }
    // Missing, mistyped and undeclared inputs.
    let r = c
        .invoke(
            "echo",
            &request("conform/echo", json!({"message": 3, "bogus": true})),
            &[],
        )
        .await;
    assert_eq!(r.status, 400);
    let d = &r.body["error"]["details"];
    assert_eq!(
        d[0],
        json!({"path": "/inputs/bogus", "message": "input 'bogus' is not declared by this skill", "expected": ["message", "metadata"], "actual": "bogus"})
    );
    assert_eq!(d[1]["path"], "/inputs/message");
    assert_eq!(d[1]["expected"], "string");
    assert_eq!(d[1]["actual"], "integer");
    let r = c
        .invoke("text-stats", &request("conform/text-stats", json!({})), &[])
        .await;
    assert_eq!(r.body["error"]["details"][0]["path"], "/inputs/text");
    // Another skill's skill_id at this endpoint → 404, and that skill never runs.
    let r = c
        .invoke("echo", &request("conform/always-fails", json!({})), &[])
        .await;
    assert_eq!(r.status, 404);
    assert_eq!(r.body["error"]["code"], "SKILL_NOT_FOUND");
    assert_eq!(
        r.body["error"]["details"]["skill_id"],
        "conform/always-fails"
    );
    let r = c
        .invoke(
            "echo",
            &request("conform/nope", json!({"message": "x"})),
            &[],
        )
        .await;
    assert_eq!(r.status, 404);
    let r = c
        .invoke("nope", &request("conform/nope", json!({})), &[])
        .await;
    assert_eq!(r.status, 404);
    // Unknown execution ids → 404 with details.execution_id.
    for id in ["exec-000", "x%20y", "..", "%E2%9C%93"] {
        for kind in ["status", "result"] {
            let r = c.get(&format!("/ssp/{kind}/{id}"), &[]).await;
            assert_eq!(r.status, 404, "{kind}/{id}");
            assert_eq!(r.body["error"]["code"], "SKILL_NOT_FOUND");
        }
    }
    let r = c.status("exec-unknown", &[]).await;
    assert_eq!(r.body["error"]["details"]["execution_id"], "exec-unknown");
    // Huge bodies → 413 (declared and streamed without a length).
    let huge = vec![b' '; 200 * 1024];
    let r = c
        .send("POST", "/ssp/invoke/echo", &json_h, Some(huge))
        .await;
    assert_eq!(r.status, 413);
    assert_eq!(r.body["error"]["code"], "VALIDATION_ERROR");
    // Wrong methods and unknown routes under /ssp and /.well-known.
    for (m, p, st) in [
        ("GET", "/ssp/invoke/echo", 405),
        ("DELETE", "/.well-known/skill-sharing", 405),
        ("POST", "/ssp/status/exec-1", 405),
        ("PUT", "/ssp/skills/echo.json", 405),
        ("GET", "/ssp/nope", 404),
        ("GET", "/ssp", 404),
        ("GET", "/.well-known/nope", 404),
        ("POST", "/ssp/invoke", 404),
    ] {
        let r = c.send(m, p, &[], None).await;
        assert_eq!(r.status, st, "{m} {p}");
        assert!(r.body["error"]["code"].is_string());
        if st == 405 {
            assert!(r.headers.get("allow").is_some());
        }
    }
    // HEAD on discovery works like GET.
    assert_eq!(
        c.send("HEAD", "/.well-known/skill-sharing", &[], None)
            .await
            .status,
        200
    );
}

#[tokio::test(start_paused = true)]
async fn protected_executions_are_readable_only_by_their_creator() {
    // SSP-INV-6
    let c = Client::demo();
    let (id, _) = accepted(
        &c,
        "slow-task",
        &request("conform/slow-task", json!({"delay_ms": 10})),
        &[KEY],
    )
    .await;
    let sig = signature(b"");
    for h in [
        vec![],
        vec![("x-api-key", "demo-ssp-key-limited")],
        vec![("x-api-key", "wrong")],
        vec![BEARER],
        vec![("x-signature", sig.as_str())],
        vec![("authorization", "Bearer demo-ssp-key")],
    ] {
        for kind in ["status", "result"] {
            let r = c.get(&format!("/ssp/{kind}/{id}"), &h).await;
            assert_eq!(r.status, 404, "{kind} with {h:?}");
            assert_eq!(r.body["error"]["details"]["execution_id"], id);
        }
    }
    assert_eq!(c.status(&id, &[KEY]).await.status, 200);
    // The private skill's executions likewise: another valid oauth token does not see them.
    let (id, _) = accepted(
        &c,
        "forum-digest",
        &request("conform/forum-digest", json!({"thread": "th_1"})),
        &[BEARER],
    )
    .await;
    assert_eq!(
        c.status(&id, &[("authorization", "Bearer demo-oauth-read")])
            .await
            .status,
        404
    );
    assert_eq!(c.status(&id, &[BEARER]).await.status, 200);
    // Public executions are readable by anyone.
    let (id, _) = accepted(
        &c,
        "echo",
        &request("conform/echo", json!({"message": "m"})),
        &[],
    )
    .await;
    assert_eq!(
        c.status(&id, &[("x-api-key", "whatever")]).await.status,
        200
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_invocations_get_unique_ids_and_independent_results() {
    // SSP-INV-7
    let c = Client::demo();
    let mut tasks = Vec::new();
    for i in 0..64 {
        let c = c.clone();
        tasks.push(tokio::spawn(async move {
            let r = c
                .invoke(
                    "echo",
                    &request("conform/echo", json!({"message": format!("m{i}")})),
                    &[],
                )
                .await;
            assert_eq!(r.status, 202);
            let id = r.body["execution_id"].as_str().unwrap().to_string();
            let mut out = Value::Null;
            for _ in 0..500 {
                let s = c.status(&id, &[]).await;
                if s.body["status"] == "completed" {
                    out = s.body["output"].clone();
                    break;
                }
                tokio::task::yield_now().await;
            }
            assert_eq!(out, json!({"message": format!("m{i}")}));
            id
        }));
    }
    let mut ids = std::collections::HashSet::new();
    for t in tasks {
        assert!(ids.insert(t.await.unwrap()), "duplicate execution id");
    }
    assert_eq!(ids.len(), 64);
}

#[test]
fn an_invalid_descriptor_refuses_startup() {
    // Descriptors are validated against the schema at startup: a base URL that makes them
    // invalid (relative endpoint URLs) is an Err, so the server does not start.
    let db = reference_impl::store::Db::open(std::path::Path::new(":memory:")).unwrap();
    let mut config = reference_impl::config::Config::demo_in_memory();
    config.base_url = Some("not a url".into());
    let threads: std::sync::Arc<dyn reference_impl::ssp::ThreadReader> =
        std::sync::Arc::new(support::ssp::parley(&db));
    let err = reference_impl::ssp::SspState::new(db, &config, threads).unwrap_err();
    assert!(
        matches!(err, reference_impl::ssp::SspInitError::Descriptor { .. }),
        "{err}"
    );
    assert!(err.to_string().contains("invalid"), "{err}");
}
