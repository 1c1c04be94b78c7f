//! Regressions of what hostile input found in the reference (issue 11 item 4): duplicate JSON
//! member names read one way on each binding, JSON-RPC ids outside what the server can echo,
//! `initialize` with missing or invalid params answered as an unknown method.

#![expect(clippy::unwrap_used)] // tests: a panic is the failure report

mod support;

use axum::body::Body;
use axum::http::{Request, header};
use serde_json::json;
use support::app::{App, Era};

fn post_http(path: &str, token: &str, body: &str) -> Request<Body> {
    Request::builder()
        .method("POST")
        .uri(path)
        .header(header::AUTHORIZATION, format!("Bearer {token}"))
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(body.to_owned()))
        .unwrap()
}

/// A raw `tools/call` of `post` whose `arguments` text is spliced in as is.
fn raw_tool_call(era: Era, arguments: &str) -> Vec<u8> {
    let meta = match era {
        Era::Legacy => String::new(),
        Era::Current => r#","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#.to_owned(),
    };
    format!(
        r#"{{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{{"name":"post","arguments":{arguments}{meta}}}}}"#
    )
    .into_bytes()
}

fn era_headers(era: Era) -> Vec<(&'static str, &'static str)> {
    match era {
        Era::Legacy => vec![("authorization", "Bearer demo-agent-a")],
        Era::Current => vec![
            ("authorization", "Bearer demo-agent-a"),
            ("mcp-method", "tools/call"),
            ("mcp-name", "post"),
        ],
    }
}

#[tokio::test]
async fn duplicate_member_names_are_invalid_body_on_both_bindings() {
    let app = App::demo();
    for body in [
        r#"{"kind":"ask","kind":"decide","body":"x"}"#,
        r#"{"kind":"ask","body":"x","body":"y"}"#,
        r#"{"kind":"ask","body":"x","provenance":{"model":"m","model":"n"}}"#,
        r#"{"kind":"ask","body":"x","k\u0069nd":"ask"}"#,
    ] {
        let r = app
            .send(post_http("/v1/messages", "demo-agent-a", body))
            .await;
        assert_eq!(
            (r.status, r.reason()),
            (400, Some("invalid_body")),
            "HTTP {body}: {}",
            r.body
        );
        for era in Era::ALL {
            let r = app
                .mcp_raw(era, &era_headers(era), raw_tool_call(era, body))
                .await;
            let result = &r.body["result"];
            assert_eq!(result["isError"], true, "{era:?} {body}: {}", r.body);
            assert_eq!(
                result["structuredContent"]["error"]["reason"], "invalid_body",
                "{era:?} {body}: {}",
                r.body
            );
        }
    }
    // The check order still holds: no token comes before the malformed body, on both.
    let body = r#"{"kind":"ask","kind":"decide","body":"x"}"#;
    let req = Request::builder()
        .method("POST")
        .uri("/v1/messages")
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(body))
        .unwrap();
    assert_eq!(app.send(req).await.reason(), Some("token_missing"));
    let r = app
        .mcp_raw(Era::Legacy, &[], raw_tool_call(Era::Legacy, body))
        .await;
    assert_eq!(
        r.body["result"]["structuredContent"]["error"]["reason"], "token_missing",
        "{}",
        r.body
    );
    // A mark body with a duplicate state is malformed too (the path id is not involved).
    let created = app
        .http(
            "POST",
            "/v1/messages",
            Some("demo-agent-a"),
            Some(json!({"kind": "ask", "body": "q"})),
        )
        .await;
    assert_eq!(created.status, 201, "{}", created.body);
    let thread = created.body["thread"]["id"].as_str().unwrap_or("th_1");
    let r = app
        .send(post_http(
            &format!("/v1/threads/{thread}/state"),
            "demo-agent-a",
            r#"{"state":"closed","state":"deferred"}"#,
        ))
        .await;
    assert_eq!(r.reason(), Some("invalid_body"), "{}", r.body);
}

#[tokio::test]
async fn duplicate_members_of_the_json_rpc_envelope_are_invalid_requests() {
    let app = App::demo();
    for body in [
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","method":"tools/call","params":{}}"#,
        r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/list","params":{}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"whoami","name":"post","arguments":{}}}"#,
    ] {
        for era in Era::ALL {
            let r = app
                .mcp_raw(era, &era_headers(era), body.as_bytes().to_vec())
                .await;
            assert_eq!(r.status, 400, "{era:?} {body}: {}", r.body);
            assert_eq!(
                r.body["error"]["code"], -32600,
                "{era:?} {body}: {}",
                r.body
            );
        }
    }
}

#[tokio::test]
async fn ids_the_server_cannot_echo_are_invalid_requests() {
    let app = App::demo();
    for id in [
        "9223372036854775808",
        "18446744073709551615",
        "18446744073709551616",
        "1e400",
    ] {
        let body = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list","params":{{}}}}"#);
        for era in Era::ALL {
            let r = app.mcp_raw(era, &[], body.clone().into_bytes()).await;
            assert!(
                (400..500).contains(&r.status),
                "{era:?} id {id}: {}",
                r.status
            );
            let code = r.body["error"]["code"].as_i64();
            // 1e400 is not a JSON number serde_json reads: a parse error is right too.
            let expected: &[i64] = if id == "1e400" {
                &[-32600, -32700]
            } else {
                &[-32600]
            };
            assert!(
                code.is_some_and(|c| expected.contains(&c)),
                "{era:?} id {id}: {}",
                r.body
            );
        }
    }
    // The largest id the server echoes still works.
    let body = r#"{"jsonrpc":"2.0","id":9223372036854775807,"method":"tools/list","params":{}}"#;
    let r = app
        .mcp_raw(Era::Legacy, &[], body.as_bytes().to_vec())
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["id"], json!(9_223_372_036_854_775_807_i64));
}

#[tokio::test]
async fn initialize_with_missing_or_invalid_params_is_invalid_params() {
    let app = App::demo();
    for params in [
        "",
        r#","params":{}"#,
        r#","params":{"protocolVersion":"2025-11-25"}"#,
        r#","params":{"protocolVersion":7,"capabilities":{},"clientInfo":{"name":"c","version":"1"}}"#,
        r#","params":{"protocolVersion":"2025-11-25","capabilities":[],"clientInfo":{"name":"c","version":"1"}}"#,
    ] {
        let body = format!(r#"{{"jsonrpc":"2.0","id":5,"method":"initialize"{params}}}"#);
        let r = app
            .mcp_raw(Era::Legacy, &[], body.clone().into_bytes())
            .await;
        assert_eq!(r.status, 400, "{body}: {}", r.body);
        assert_eq!(r.body["error"]["code"], -32602, "{body}: {}", r.body);
        assert_eq!(r.body["id"], 5, "{body}: {}", r.body);
    }
    // A valid initialize still succeeds.
    let body = r#"{"jsonrpc":"2.0","id":6,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#;
    let r = app
        .mcp_raw(Era::Legacy, &[], body.as_bytes().to_vec())
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(
        r.body["result"]["protocolVersion"].is_string(),
        "{}",
        r.body
    );
}

/// `conform fuzz`'s SSP campaign met "connection reset" on small requests after an
/// oversized one: the 413 left the body unread, hyper closed the connection without saying
/// so, and the client reused it. The answer to a request whose body was left unread now
/// says `Connection: close`; one whose body was read does not.
#[tokio::test]
async fn an_answer_that_leaves_the_body_unread_closes_the_connection() {
    let app = App::demo();
    let big = format!(
        r#"{{"caller":{{"id":"c","type":"service"}},"skill_id":"conform/echo","inputs":{{"message":"{}"}}}}"#,
        "x".repeat(reference_impl::ssp::MAX_INVOCATION_BODY + 1)
    );
    let ssp = |body: String| {
        Request::builder()
            .method("POST")
            .uri("/ssp/invoke/echo")
            .header(header::CONTENT_TYPE, "application/json")
            .header(header::CONTENT_LENGTH, body.len())
            .body(Body::from(body))
            .unwrap()
    };
    let close = |r: &support::app::Reply| {
        r.headers
            .get(header::CONNECTION)
            .and_then(|v| v.to_str().ok())
            .map(str::to_ascii_lowercase)
    };
    let r = app.send(ssp(big)).await;
    assert_eq!(r.status, 413);
    assert_eq!(
        close(&r).as_deref(),
        Some("close"),
        "413 over an unread body"
    );
    let small = r#"{"caller":{"id":"c","type":"service"},"skill_id":"conform/echo","inputs":{"message":"hi"}}"#;
    let r = app.send(ssp(small.to_string())).await;
    assert_eq!(r.status, 202, "{:?}", r.body);
    assert_eq!(close(&r), None, "a read body keeps the connection");
}
