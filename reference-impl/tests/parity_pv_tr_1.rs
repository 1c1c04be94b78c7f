//! PV-TR-1: two bindings, one decision. One scripted scenario (posts, refusals of every
//! family, marks, reopen, inbox, claims) is replayed on three fresh in-memory servers —
//! over HTTP, over MCP 2025-11-25 and over MCP 2026-07-28 — and every response is compared:
//! same success payload (modulo timestamps/cursors) or same refusal reason and status.
//! PV-TR-2 / PV-TR-3 are checked on the way (refusal = `isError` + `structuredContent`
//! + same JSON as text; HTTP refusal body with `application/json`).

#![expect(clippy::unwrap_used, clippy::expect_used)] // tests: a panic is the failure report

mod support;

use serde_json::{Value, json};
use support::app::{App, Era, redact};

const A: &str = "demo-agent-a";
const B: &str = "demo-agent-b";
const MOD: &str = "demo-moderator";
const VER: &str = "demo-verifier";
const READER: &str = "demo-reader";
const HUMAN: &str = "demo-human";

/// One step: who, which tool, which arguments, and the status the scenario relies on.
struct Step {
    token: Option<&'static str>,
    tool: &'static str,
    args: Value,
    expect: u16,
}

fn ev() -> Value {
    json!([{"kind": "url", "ref": "https://example.org/evidence"}])
}

fn scenario() -> Vec<Step> {
    let s = |token, tool, args, expect| Step {
        token,
        tool,
        args,
        expect,
    };
    vec![
        s(None, "get_manifest", json!({}), 200),
        s(Some(A), "whoami", json!({}), 200),
        s(None, "whoami", json!({}), 401), // token_missing
        s(Some("not-a-token"), "whoami", json!({}), 401), // token_invalid
        s(
            Some(A),
            "post",
            json!({"kind": "ask", "body": "Which port?", "from": {"extension": "x"}}),
            201,
        ),
        s(
            Some(READER),
            "post",
            json!({"kind": "ask", "body": "hello"}),
            403,
        ), // token_right_missing
        s(
            Some(A),
            "post",
            json!({"kind": "shout", "body": "hey"}),
            400,
        ), // kind_unknown
        s(
            Some(A),
            "post",
            json!({"kind": "answer", "body": "orphan"}),
            400,
        ), // thread_required
        s(
            Some(A),
            "post",
            json!({"kind": "ask", "body": "x".repeat(501)}),
            400,
        ), // body_too_long
        s(
            Some(A),
            "post",
            json!({"kind": "ask", "body": "é".repeat(500)}),
            201,
        ), // exactly the limit
        s(
            Some(A),
            "post",
            json!({"kind": "ask", "body": "b", "colour": "red"}),
            400,
        ), // invalid_body
        s(
            Some(B),
            "post",
            json!({"kind": "answer", "thread": "th_1", "body": "8080"}),
            201,
        ),
        s(
            Some(A),
            "post",
            json!({"kind": "answer", "thread": "th_999", "body": "?"}),
            404,
        ), // thread_not_found
        s(
            Some(A),
            "post",
            json!({"kind": "inform", "parent": "msg_3", "body": "thanks", "from": {"extension": "x"}}),
            201,
        ),
        s(
            Some(A),
            "post",
            json!({"kind": "inform", "parent": "msg_4", "body": "me again", "from": {"extension": "x"}}),
            409,
        ), // self_reply
        s(Some(A), "read_thread", json!({"thread": "th_1"}), 200),
        s(Some(A), "list_events", json!({"thread": "th_1"}), 200),
        s(Some(B), "inbox", json!({}), 200),
        s(Some(A), "inbox", json!({"limit": 10}), 200),
        s(
            Some(B),
            "mark",
            json!({"thread": "th_1", "state": "closed"}),
            403,
        ), // thread_authority_missing
        s(
            Some(A),
            "mark",
            json!({"thread": "th_1", "state": "decided"}),
            200,
        ),
        s(
            Some(A),
            "mark",
            json!({"thread": "th_1", "state": "open"}),
            409,
        ), // invalid_transition
        s(
            Some(MOD),
            "mark",
            json!({"thread": "th_1", "state": "closed"}),
            200,
        ),
        s(
            Some(B),
            "post",
            json!({"kind": "inform", "thread": "th_1", "body": "late"}),
            409,
        ), // thread_locked
        s(Some(B), "reopen", json!({"thread": "th_1"}), 403),
        s(Some(HUMAN), "reopen", json!({"thread": "th_1"}), 200),
        s(
            Some(B),
            "post",
            json!({"kind": "inform", "thread": "th_1", "body": "back again"}),
            201,
        ),
        s(
            Some(A),
            "list_events",
            json!({"thread": "th_1", "since": "ev_2"}),
            200,
        ),
        s(Some(A), "read_claim", json!({"claim": "cl_9"}), 404), // claim_not_found
        s(
            Some(A),
            "post",
            json!({"kind": "assert", "body": "It is 8080.", "evidence": ev()}),
            201,
        ),
        s(
            Some(A),
            "post",
            json!({"kind": "assert", "body": "no proof"}),
            400,
        ), // evidence_required
        s(
            Some(A),
            "post",
            json!({"kind": "assert", "body": "bad", "evidence": [{"kind": "url", "ref": "nope"}]}),
            400,
        ), // evidence_invalid
        s(
            Some(A),
            "post",
            json!({"kind": "attest", "thread": "th_3", "claim": "cl_1", "body": "me", "evidence": ev()}),
            403,
        ), // self_attest
        s(
            Some(B),
            "post",
            json!({"kind": "attest", "thread": "th_3", "claim": "cl_1", "body": "seen", "evidence": ev()}),
            201,
        ),
        s(
            Some(B),
            "post",
            json!({"kind": "verify", "thread": "th_3", "claim": "cl_1", "body": "v", "evidence": ev()}),
            403,
        ),
        s(
            Some(VER),
            "post",
            json!({"kind": "verify", "thread": "th_3", "claim": "cl_1", "body": "ok", "evidence": ev()}),
            201,
        ),
        s(Some(B), "read_claim", json!({"claim": "cl_1"}), 200),
        s(Some(B), "read_thread", json!({"thread": "th_3"}), 200),
    ]
}

/// The HTTP request for a tool call (routes of parley-v1.md §1).
async fn over_http(app: &App, step: &Step) -> support::app::Reply {
    let mut args = step.args.as_object().cloned().unwrap_or_default();
    let mut take = |k: &str| {
        args.remove(k)
            .map(|v| v.as_str().map(str::to_owned).unwrap_or(v.to_string()))
    };
    let query = |args: &serde_json::Map<String, Value>| {
        let pairs: Vec<String> = args
            .iter()
            .map(|(k, v)| {
                format!(
                    "{k}={}",
                    v.as_str().map(str::to_owned).unwrap_or(v.to_string())
                )
            })
            .collect();
        if pairs.is_empty() {
            String::new()
        } else {
            format!("?{}", pairs.join("&"))
        }
    };
    match step.tool {
        "get_manifest" => app.http("GET", "/v1/manifest", step.token, None).await,
        "whoami" => app.http("GET", "/v1/whoami", step.token, None).await,
        "post" => {
            app.http("POST", "/v1/messages", step.token, Some(step.args.clone()))
                .await
        }
        "read_thread" => {
            let t = take("thread").unwrap();
            app.http("GET", &format!("/v1/threads/{t}"), step.token, None)
                .await
        }
        "list_events" => {
            let t = take("thread").unwrap();
            let q = query(&args);
            app.http(
                "GET",
                &format!("/v1/threads/{t}/events{q}"),
                step.token,
                None,
            )
            .await
        }
        "inbox" => {
            let q = query(&args);
            app.http("GET", &format!("/v1/inbox{q}"), step.token, None)
                .await
        }
        "mark" => {
            let t = take("thread").unwrap();
            app.http(
                "POST",
                &format!("/v1/threads/{t}/state"),
                step.token,
                Some(Value::Object(args)),
            )
            .await
        }
        "reopen" => {
            let t = take("thread").unwrap();
            app.http("POST", &format!("/v1/threads/{t}/reopen"), step.token, None)
                .await
        }
        "read_claim" => {
            let c = take("claim").unwrap();
            app.http("GET", &format!("/v1/claims/{c}"), step.token, None)
                .await
        }
        other => panic!("no route for {other}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pv_tr_1_same_outcome_over_http_and_both_mcp_eras() {
    let http = App::demo();
    let legacy = App::demo();
    let current = App::demo();
    for (i, step) in scenario().iter().enumerate() {
        let h = over_http(&http, step).await;
        let label = format!("step {i} ({} {})", step.tool, step.args);
        assert_eq!(
            h.status, step.expect,
            "{label}: HTTP status; body {}",
            h.body
        );
        if h.status >= 400 {
            // PV-TR-3: refusal body + application/json.
            assert_eq!(h.body["error"]["status"], json!(h.status), "{label}");
            assert!(h.body["error"]["reason"].is_string(), "{label}");
            assert!(h.body["error"]["message"].is_string(), "{label}");
            assert_eq!(h.headers["content-type"], "application/json", "{label}");
        }
        for (app, era) in [(&legacy, Era::Legacy), (&current, Era::Current)] {
            let m = app
                .tool(era, step.token, step.tool, step.args.clone())
                .await;
            // PV-TR-2: refusal ⇔ isError; content[0] is the same JSON as structuredContent.
            assert_eq!(
                m.is_error,
                h.status >= 400,
                "{label} {era:?}: isError vs HTTP {}",
                h.status
            );
            assert_eq!(
                m.http_status, 200,
                "{label} {era:?}: a refusal is a tool result, not an HTTP error"
            );
            let text: Value = serde_json::from_str(&m.text).expect("content[0] is JSON");
            assert_eq!(
                text, m.structured,
                "{label} {era:?}: text vs structuredContent"
            );
            // PV-TR-1: same payload modulo timestamps, or same refusal reason + status.
            assert_eq!(
                redact(&m.structured),
                redact(&h.body),
                "{label} {era:?}: MCP vs HTTP"
            );
        }
    }
}
