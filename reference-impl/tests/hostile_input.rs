//! Hostile input never yields a 5xx, a panic or a hang (issue 2 §9), on either binding:
//! oversized bodies (PV-TR-5), invalid UTF-8, invalid and deep JSON (PV-EN-1), wrong content
//! types (PV-RS-4), unknown routes and methods (§10), malformed JSON-RPC (PV-TR-2).

#![expect(clippy::unwrap_used)] // tests: a panic is the failure report

mod support;

use axum::body::Body;
use axum::http::{Request, header};
use serde_json::{Value, json};
use support::app::{App, Era};

fn post_raw(path: &str, token: &str, content_type: Option<&str>, body: Vec<u8>) -> Request<Body> {
    let mut req = Request::builder()
        .method("POST")
        .uri(path)
        .header(header::AUTHORIZATION, format!("Bearer {token}"));
    if let Some(ct) = content_type {
        req = req.header(header::CONTENT_TYPE, ct);
    }
    req.body(Body::from(body)).unwrap()
}

fn big_post(len: usize) -> Vec<u8> {
    let base =
        json!({"kind": "ask", "body": "b", "provenance": {"model": "m", "client": ""}}).to_string();
    let pad = len.saturating_sub(base.len());
    // Whitespace padding keeps the JSON valid: only the size is wrong.
    let mut out = base.into_bytes();
    out.extend(std::iter::repeat_n(b' ', pad));
    out
}

#[tokio::test]
async fn pv_tr_5_body_over_request_max_bytes_is_413() {
    let app = App::demo();
    let r = app
        .send(post_raw(
            "/v1/messages",
            "demo-agent-a",
            Some("application/json"),
            big_post(65_537),
        ))
        .await;
    assert_eq!(
        (r.status, r.reason()),
        (413, Some("payload_too_large")),
        "{}",
        r.body
    );
    // Exactly the limit is accepted (PV-MF-2).
    let r = app
        .send(post_raw(
            "/v1/messages",
            "demo-agent-a",
            Some("application/json"),
            big_post(65_536),
        ))
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
}

#[tokio::test]
async fn bodies_beyond_the_hard_cap_are_cut_off_with_413() {
    let app = App::demo();
    let r = app
        .send(post_raw(
            "/v1/messages",
            "demo-agent-a",
            Some("application/json"),
            vec![b' '; 3 << 20],
        ))
        .await;
    assert_eq!((r.status, r.reason()), (413, Some("payload_too_large")));
    assert_eq!(r.headers["content-type"], "application/json");
}

#[tokio::test]
async fn pv_au_6_401_comes_before_413() {
    let app = App::demo();
    let r = app
        .send(post_raw(
            "/v1/messages",
            "nope",
            Some("application/json"),
            big_post(70_000),
        ))
        .await;
    assert_eq!((r.status, r.reason()), (401, Some("token_invalid")));
}

#[tokio::test]
async fn pv_en_1_invalid_utf8_and_invalid_json_are_invalid_body() {
    let app = App::demo();
    for body in [
        b"\xff\xfe{}".to_vec(),
        b"{\"kind\": \"ask\", \"body\": \"\xc3\x28\"}".to_vec(),
        b"{\"kind\": \"ask\",".to_vec(),
        b"not json".to_vec(),
        b"[1, 2, 3]".to_vec(),
        b"\"ask\"".to_vec(),
    ] {
        let r = app
            .send(post_raw(
                "/v1/messages",
                "demo-agent-a",
                Some("application/json"),
                body.clone(),
            ))
            .await;
        assert_eq!(
            (r.status, r.reason()),
            (400, Some("invalid_body")),
            "{:?}",
            String::from_utf8_lossy(&body)
        );
    }
}

#[tokio::test]
async fn pv_en_1_deep_json_is_invalid_body_not_a_crash() {
    let app = App::demo();
    for depth in [129, 10_000, 200_000] {
        let body = format!(
            "{{\"kind\":\"ask\",\"body\":\"b\",\"x\":{}{}}}",
            "[".repeat(depth),
            "]".repeat(depth)
        );
        let r = app
            .send(post_raw(
                "/v1/messages",
                "demo-agent-a",
                Some("application/json"),
                body.into_bytes(),
            ))
            .await;
        assert!(
            r.status == 400 || r.status == 413,
            "depth {depth}: {}",
            r.status
        );
        assert!(r.reason().is_some(), "depth {depth}: refusal body");
    }
}

#[tokio::test]
async fn pv_rs_4_wrong_content_type_is_415() {
    let app = App::demo();
    let body = json!({"kind": "ask", "body": "hi"})
        .to_string()
        .into_bytes();
    for ct in [
        Some("text/plain"),
        Some("application/x-www-form-urlencoded"),
        None,
    ] {
        let r = app
            .send(post_raw("/v1/messages", "demo-agent-a", ct, body.clone()))
            .await;
        assert_eq!(
            (r.status, r.reason()),
            (415, Some("unsupported_media_type")),
            "{ct:?}"
        );
    }
    // `+json` and parameters are JSON.
    let r = app
        .send(post_raw(
            "/v1/messages",
            "demo-agent-a",
            Some("application/json; charset=utf-8"),
            body,
        ))
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
}

#[tokio::test]
async fn bodiless_reopen_needs_no_content_type() {
    let app = App::demo();
    let r = app
        .send(post_raw(
            "/v1/threads/th_404/reopen",
            "demo-agent-a",
            None,
            Vec::new(),
        ))
        .await;
    assert_eq!(
        (r.status, r.reason()),
        (404, Some("thread_not_found")),
        "{}",
        r.body
    );
}

#[tokio::test]
async fn unknown_route_is_404_not_found_with_error_body() {
    let app = App::demo();
    for path in [
        "/",
        "/v1",
        "/v1/nope",
        "/v2/manifest",
        "/v1/threads",
        "/v1/threads/th_1/extra/deep",
    ] {
        let r = app.http("GET", path, Some("demo-agent-a"), None).await;
        assert_eq!((r.status, r.reason()), (404, Some("not_found")), "{path}");
        assert_eq!(r.body["error"]["status"], 404);
        assert_eq!(r.headers["content-type"], "application/json");
    }
}

#[tokio::test]
async fn wrong_method_is_405_method_not_allowed() {
    let app = App::demo();
    for (method, path) in [
        ("POST", "/v1/manifest"),
        ("DELETE", "/v1/whoami"),
        ("GET", "/v1/messages"),
        ("PUT", "/v1/threads/th_1/state"),
    ] {
        let r = app.http(method, path, Some("demo-agent-a"), None).await;
        assert_eq!(
            (r.status, r.reason()),
            (405, Some("method_not_allowed")),
            "{method} {path}"
        );
    }
    let r = app.http("GET", "/mcp", None, None).await;
    assert_eq!((r.status, r.reason()), (405, Some("method_not_allowed")));
    assert_eq!(r.headers["allow"], "POST");
}

#[tokio::test]
async fn undecodable_path_ids_are_refused_not_crashed() {
    let app = App::demo();
    // Undecodable bytes are replaced (U+FFFD) and handed to the service, which refuses the
    // id like any other malformed or unknown one: a 4xx refusal, never a crash.
    for path in [
        "/v1/threads/%FF%FE",
        "/v1/threads/%00/events",
        "/v1/claims/%00",
        "/v1/claims/%C3%28",
    ] {
        let r = app.http("GET", path, Some("demo-agent-a"), None).await;
        assert!(matches!(r.status, 400 | 404), "{path}: {}", r.body);
        assert!(r.reason().is_some(), "{path}: {}", r.body);
    }
    let r = app
        .http("GET", "/v1/threads/th_999", Some("demo-agent-a"), None)
        .await;
    assert_eq!(
        (r.status, r.reason()),
        (404, Some("thread_not_found")),
        "{}",
        r.body
    );
}

#[tokio::test]
async fn garbage_query_values_are_refused_not_crashed() {
    let app = App::demo();
    for q in [
        "limit=-1",
        "limit=abc",
        "limit=99999999999999999999999",
        "since=%FF",
        "limit=1&limit=2",
    ] {
        let r = app
            .http("GET", &format!("/v1/inbox?{q}"), Some("demo-agent-a"), None)
            .await;
        assert!(r.status < 500, "{q}: {}", r.status);
        assert!(r.body.is_object(), "{q}");
    }
}

fn jsonrpc_code(r: &support::app::Reply) -> i64 {
    r.body["error"]["code"].as_i64().unwrap_or(0)
}

#[tokio::test]
async fn pv_tr_2_malformed_json_rpc_gets_json_rpc_errors_with_4xx() {
    let app = App::demo();
    let cases: Vec<(&[u8], i64)> = vec![
        (b"{not json", -32700),
        (b"\xff\xfe", -32700),
        (b"", -32700),
        (br#"{"jsonrpc":"2.0","id":null,"method":"tools/list"}"#, -32600),
        (br#"{"jsonrpc":"1.0","id":1,"method":"tools/list"}"#, -32600),
        (br#"{"id":1,"method":"tools/list"}"#, -32600),
        (br#"[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]"#, -32600),
        (br#"[]"#, -32600),
        (br#""tools/list""#, -32600),
        (br#"{"jsonrpc":"2.0","id":1,"method":42}"#, -32600),
        (br#"{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}"#, -32600),
        (br#"{"jsonrpc":"2.0","id":1}"#, -32600),
        (br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{}}}"#, -32602),
        (br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"post","arguments":[1]}}"#, -32602),
    ];
    for era in Era::ALL {
        for (body, code) in &cases {
            let r = app.mcp_raw(era, &[], body.to_vec()).await;
            let label = format!("{era:?} {:?}", String::from_utf8_lossy(body));
            assert!((400..500).contains(&r.status), "{label}: HTTP {}", r.status);
            assert_eq!(r.body["jsonrpc"], "2.0", "{label}: {}", r.body);
            assert_eq!(jsonrpc_code(&r), *code, "{label}: {}", r.body);
            assert_eq!(r.headers["content-type"], "application/json", "{label}");
        }
    }
}

#[tokio::test]
async fn deep_json_rpc_is_a_parse_error_not_a_crash() {
    let app = App::demo();
    let depth = 50_000;
    let body = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{{\"name\":\"post\",\"arguments\":{{\"x\":{}{}}}}}}}",
        "[".repeat(depth),
        "]".repeat(depth)
    );
    let r = app.mcp_raw(Era::Legacy, &[], body.into_bytes()).await;
    assert_eq!(r.status, 400);
    assert_eq!(jsonrpc_code(&r), -32700, "{}", r.body);
}

#[tokio::test]
async fn mcp_transport_faults_are_json_not_plain_text() {
    let app = App::demo();
    let list = br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#.to_vec();
    // Wrong content type: 415 with a JSON-RPC error (never rmcp's plain text).
    let req = Request::builder()
        .method("POST")
        .uri("/mcp")
        .header(header::HOST, "127.0.0.1")
        .header(header::CONTENT_TYPE, "text/plain")
        .body(Body::from(list.clone()))
        .unwrap();
    let r = app.send(req).await;
    assert_eq!(r.status, 415);
    assert_eq!(jsonrpc_code(&r), -32600, "{}", r.body);
    // Oversized.
    let r = app.mcp_raw(Era::Legacy, &[], vec![b' '; 2 << 20]).await;
    assert_eq!(r.status, 413);
    assert_eq!(r.body["jsonrpc"], "2.0");
    // DNS-rebinding Host: the rebinding guard's 403, as a JSON-RPC error on /mcp.
    let r = app
        .mcp_raw(Era::Legacy, &[("host", "evil.example")], list.clone())
        .await;
    assert_eq!(r.status, 403);
    assert_eq!(
        r.body["jsonrpc"],
        "2.0",
        "{}",
        String::from_utf8_lossy(&r.raw)
    );
    // No Accept header at all (curl-like client) is served.
    let req = Request::builder()
        .method("POST")
        .uri("/mcp")
        .header(header::HOST, "127.0.0.1")
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(list))
        .unwrap();
    let r = app.send(req).await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.raw));
    assert_eq!(r.body["result"]["tools"].as_array().map(Vec::len), Some(9));
}

#[tokio::test]
async fn mcp_oversized_tool_call_is_a_413_refusal_like_http() {
    // Between request_max_bytes and the hard cap the service decides: same refusal as HTTP.
    let app = App::demo();
    let pad = "x".repeat(70_000);
    for era in Era::ALL {
        let out = app
            .tool(
                era,
                Some("demo-agent-a"),
                "post",
                json!({"kind": "ask", "body": "b", "provenance": {"model": pad, "client": "c"}}),
            )
            .await;
        assert!(out.is_error, "{era:?}");
        assert_eq!(
            out.structured["error"]["reason"], "payload_too_large",
            "{era:?}: {}",
            out.structured
        );
        assert_eq!(out.structured["error"]["status"], Value::from(413));
    }
}
