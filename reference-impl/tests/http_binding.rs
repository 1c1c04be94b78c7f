//! The HTTP binding in process: every route of the operation table (parley-v1.md §1)
//! answers with the §11 shapes and statuses (PV-RS-1), refusals with the §10 body (PV-TR-3).

#![expect(clippy::unwrap_used)] // tests: a panic is the failure report

mod support;

use serde_json::json;
use support::app::App;

#[tokio::test]
async fn every_route_of_the_operation_table() {
    let app = App::demo();
    let r = app.http("GET", "/v1/manifest", None, None).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body["parley"], "1");
    assert_eq!(r.headers["content-type"], "application/json");

    let r = app
        .http("GET", "/v1/whoami", Some("demo-moderator"), None)
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["identity"], "ainotes:moderator");

    let r = app
        .http(
            "POST",
            "/v1/messages",
            Some("demo-agent-a"),
            Some(json!({"kind": "ask", "body": "Where?"})),
        )
        .await;
    assert_eq!(r.status, 201, "PV-RS-1: post → 201; {}", r.body);
    let thread = r.body["thread"]["id"].as_str().unwrap().to_owned();
    assert!(thread.starts_with("th_"));

    let r = app
        .http(
            "GET",
            &format!("/v1/threads/{thread}"),
            Some("demo-agent-b"),
            None,
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["messages"][0]["body"], "Where?");

    // PV-EN-5: the plain number works as a path parameter too.
    let num = thread.trim_start_matches("th_");
    let r = app
        .http(
            "GET",
            &format!("/v1/threads/{num}/events"),
            Some("demo-agent-b"),
            None,
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(!r.body["events"].as_array().unwrap().is_empty());

    let r = app
        .http("GET", "/v1/inbox?limit=10", Some("demo-agent-b"), None)
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(r.body["cursor"].is_string() || r.body["cursor"].is_null());

    let r = app
        .http(
            "POST",
            &format!("/v1/threads/{thread}/state"),
            Some("demo-agent-a"),
            Some(json!({"state": "closed"})),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["thread"]["state"], "closed");

    let r = app
        .http(
            "POST",
            &format!("/v1/threads/{thread}/reopen"),
            Some("demo-agent-a"),
            None,
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["thread"]["state"], "open");

    let r = app
        .http("POST", "/v1/messages", Some("demo-agent-a"), Some(json!({"kind": "assert", "body": "c", "evidence": [{"kind": "commit", "ref": "abcdef1"}]})))
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    let claim = r.body["claim"]["id"]
        .as_str()
        .or(r.body["claim"].as_str())
        .unwrap()
        .to_owned();
    let r = app
        .http(
            "GET",
            &format!("/v1/claims/{claim}"),
            Some("demo-reader"),
            None,
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["status"], "unverified");
}

#[tokio::test]
async fn pv_tr_4_tokens() {
    let app = App::demo();
    let r = app.http("GET", "/v1/whoami", None, None).await;
    assert_eq!((r.status, r.reason()), (401, Some("token_missing")));
    let r = app.http("GET", "/v1/whoami", Some("wrong"), None).await;
    assert_eq!((r.status, r.reason()), (401, Some("token_invalid")));
    let req = axum::http::Request::builder()
        .uri("/v1/whoami")
        .header("authorization", "Basic ZGVtbzpkZW1v")
        .body(axum::body::Body::empty())
        .unwrap();
    let r = app.send(req).await;
    assert_eq!((r.status, r.reason()), (401, Some("token_invalid")));
    let r = app.http("GET", "/v1/manifest", Some("wrong"), None).await;
    assert_eq!(r.status, 200, "get_manifest needs no token");
}

#[tokio::test]
async fn body_contradicting_the_path_is_invalid_body() {
    let app = App::demo();
    let r = app
        .http(
            "POST",
            "/v1/messages",
            Some("demo-agent-a"),
            Some(json!({"kind": "ask", "body": "q"})),
        )
        .await;
    let thread = r.body["thread"]["id"].as_str().unwrap().to_owned();
    let r = app
        .http(
            "POST",
            &format!("/v1/threads/{thread}/state"),
            Some("demo-agent-a"),
            Some(json!({"state": "closed", "thread": "th_999"})),
        )
        .await;
    assert_eq!(
        (r.status, r.reason()),
        (400, Some("invalid_body")),
        "{}",
        r.body
    );
}

/// Issue 13 §6: on GET routes the id in the path wins — a query parameter naming it with
/// another value is refused, never silently read instead of the path's id.
#[tokio::test]
async fn query_contradicting_the_path_is_invalid_body() {
    let app = App::demo();
    let post = |body: &'static str| {
        let app = app.clone();
        async move {
            let r = app
                .http(
                    "POST",
                    "/v1/messages",
                    Some("demo-agent-a"),
                    Some(json!({"kind": "ask", "body": body})),
                )
                .await;
            r.body["thread"]["id"].as_str().unwrap().to_owned()
        }
    };
    let (mine, other) = (post("mine").await, post("other").await);
    for path in [
        format!("/v1/threads/{mine}?thread={other}"),
        format!("/v1/threads/{mine}/events?thread={other}"),
        "/v1/claims/cl_1?claim=cl_2".to_owned(),
    ] {
        let r = app.http("GET", &path, Some("demo-agent-a"), None).await;
        assert_eq!(
            (r.status, r.reason()),
            (400, Some("invalid_body")),
            "{path}: {}",
            r.body
        );
    }
    // Repeating the path's own id is harmless.
    let r = app
        .http(
            "GET",
            &format!("/v1/threads/{mine}?thread={mine}"),
            Some("demo-agent-a"),
            None,
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["messages"][0]["body"], "mine");
}
