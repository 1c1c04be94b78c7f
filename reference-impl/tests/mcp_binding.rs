//! The MCP binding in process, in both eras served on `POST /mcp` (PV-TR-1, PV-TR-2):
//! legacy 2025-11-25 (`initialize` / `notifications/initialized`, no server-side session)
//! and current 2026-07-28 (no handshake, per-request `_meta`, `server/discover`).

#![expect(clippy::unwrap_used)] // tests: a panic is the failure report

mod support;

use serde_json::json;
use support::app::{App, Era};

const TOOLS: [&str; 9] = [
    "get_manifest",
    "whoami",
    "post",
    "read_thread",
    "list_events",
    "inbox",
    "mark",
    "reopen",
    "read_claim",
];

#[tokio::test]
async fn legacy_handshake_is_served_without_sessions() {
    let app = App::demo();
    let init = json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}});
    let r = app.mcp(Era::Legacy, None, 1, "initialize", init).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["result"]["protocolVersion"], "2025-11-25");
    assert!(r.body["result"]["capabilities"]["tools"].is_object());
    assert!(
        r.headers.get("mcp-session-id").is_none(),
        "stateless: no session id"
    );
    // notifications/initialized: accepted, no body.
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let r = app
        .mcp_raw(Era::Legacy, &[], note.to_string().into_bytes())
        .await;
    assert_eq!(r.status, 202);
    // Any later request works without a session id.
    let r = app.mcp(Era::Legacy, None, 2, "tools/list", json!({})).await;
    let names: Vec<&str> = r.body["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, TOOLS);
    for tool in r.body["result"]["tools"].as_array().unwrap() {
        assert_eq!(tool["inputSchema"]["type"], "object", "{tool}");
    }
    // One page, no cursor ever issued: a cursor is refused, not ignored (pagination, -32602).
    assert!(r.body["result"].get("nextCursor").is_none(), "{}", r.body);
    let r = app
        .mcp(
            Era::Legacy,
            None,
            3,
            "tools/list",
            json!({"cursor": "never-issued"}),
        )
        .await;
    assert_eq!(r.body["error"]["code"], -32602, "{}", r.body);
}

#[tokio::test]
async fn current_era_discover_and_calls_without_handshake() {
    let app = App::demo();
    let r = app
        .mcp(Era::Current, None, 1, "server/discover", json!({}))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let versions = r.body["result"]["supportedVersions"].as_array().unwrap();
    assert!(versions.contains(&json!("2026-07-28")) && versions.contains(&json!("2025-11-25")));
    let r = app
        .mcp(Era::Current, None, 2, "tools/list", json!({}))
        .await;
    assert_eq!(
        r.body["result"]["tools"].as_array().map(Vec::len),
        Some(9),
        "{}",
        r.body
    );
    let out = app
        .tool(Era::Current, Some("demo-agent-a"), "whoami", json!({}))
        .await;
    assert!(!out.is_error, "{}", out.structured);
    assert_eq!(out.structured["identity"], "ainotes:agent-a");
}

#[tokio::test]
async fn pv_tr_2_refusals_are_tool_results_with_is_error() {
    let app = App::demo();
    for era in Era::ALL {
        let out = app
            .tool(
                era,
                Some("demo-reader"),
                "post",
                json!({"kind": "ask", "body": "hi"}),
            )
            .await;
        assert!(out.is_error, "{era:?}");
        assert_eq!(out.http_status, 200);
        assert_eq!(out.structured["error"]["reason"], "token_right_missing");
        assert_eq!(out.structured["error"]["status"], 403);
        let text: serde_json::Value = serde_json::from_str(&out.text).unwrap();
        assert_eq!(text, out.structured);
        // PV-TR-4 on MCP: no token / unknown token.
        let out = app.tool(era, None, "whoami", json!({})).await;
        assert_eq!(
            out.structured["error"]["reason"], "token_missing",
            "{era:?}"
        );
        let out = app.tool(era, Some("nope"), "whoami", json!({})).await;
        assert_eq!(
            out.structured["error"]["reason"], "token_invalid",
            "{era:?}"
        );
        // get_manifest needs no token.
        let out = app.tool(era, None, "get_manifest", json!({})).await;
        assert!(!out.is_error, "{era:?}: {}", out.structured);
        assert_eq!(out.structured["parley"], "1");
    }
}

#[tokio::test]
async fn pv_tr_2_unknown_tool_is_json_rpc_invalid_params() {
    let app = App::demo();
    for era in Era::ALL {
        let r = app
            .mcp(
                era,
                Some("demo-agent-a"),
                9,
                "tools/call",
                json!({"name": "delete_everything", "arguments": {}}),
            )
            .await;
        assert_eq!(r.body["error"]["code"], -32602, "{era:?}: {}", r.body);
        assert_eq!(r.body["id"], 9);
        let r = app.mcp(era, None, 10, "no/such/method", json!({})).await;
        assert_eq!(r.body["error"]["code"], -32601, "{era:?}: {}", r.body);
    }
}

#[tokio::test]
async fn absent_arguments_are_an_empty_object() {
    let app = App::demo();
    for era in Era::ALL {
        let r = app
            .mcp(era, None, 3, "tools/call", json!({"name": "get_manifest"}))
            .await;
        assert_eq!(r.body["result"]["isError"], false, "{era:?}: {}", r.body);
    }
}

#[tokio::test]
async fn post_then_read_thread_over_mcp() {
    let app = App::demo();
    for era in Era::ALL {
        let posted = app
            .tool(
                era,
                Some("demo-agent-a"),
                "post",
                json!({"kind": "ask", "body": format!("q {era:?}")}),
            )
            .await;
        assert!(!posted.is_error, "{}", posted.structured);
        let thread = posted.structured["thread"]["id"]
            .as_str()
            .unwrap()
            .to_owned();
        let read = app
            .tool(
                era,
                Some("demo-agent-b"),
                "read_thread",
                json!({"thread": thread}),
            )
            .await;
        assert!(!read.is_error, "{}", read.structured);
        assert_eq!(read.structured["messages"][0]["body"], format!("q {era:?}"));
        let inbox = app
            .tool(era, Some("demo-agent-b"), "inbox", json!({"limit": "5"}))
            .await;
        assert!(!inbox.is_error, "{}", inbox.structured);
    }
}

#[tokio::test]
async fn pv_tr_5_quota_refusal_carries_retry_after_on_http_and_is_error_on_mcp() {
    let app = App::demo();
    // demo-limited: 5 writes per minute.
    for i in 0..5 {
        let r = app
            .http(
                "POST",
                "/v1/messages",
                Some("demo-limited"),
                Some(json!({"kind": "ask", "body": format!("n{i}")})),
            )
            .await;
        assert_eq!(r.status, 201, "{}", r.body);
    }
    let r = app
        .http(
            "POST",
            "/v1/messages",
            Some("demo-limited"),
            Some(json!({"kind": "ask", "body": "one too many"})),
        )
        .await;
    assert_eq!((r.status, r.reason()), (429, Some("rate_limited")));
    let retry: u64 = r.headers["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((1..=60).contains(&retry), "Retry-After {retry}");
    let out = app
        .tool(
            Era::Current,
            Some("demo-limited"),
            "post",
            json!({"kind": "ask", "body": "still too many"}),
        )
        .await;
    assert_eq!(out.structured["error"]["reason"], "rate_limited");
}

/// A POST to `/mcp` with `MCP-Protocol-Version: version` (none when `None`), as a client
/// before (`initialize`) and after negotiation sends it.
async fn post(app: &App, version: Option<&str>, body: serde_json::Value) -> support::app::Reply {
    let mut req = axum::http::Request::builder()
        .method("POST")
        .uri("/mcp")
        .header("Host", "127.0.0.1")
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream");
    if let Some(v) = version {
        req = req.header("MCP-Protocol-Version", v);
    }
    app.send(req.body(axum::body::Body::from(body.to_string())).unwrap())
        .await
}

/// MCP lifecycle, "Version Negotiation" (issue 12): `initialize` answers with the client's
/// version when the server serves it (the three handshake revisions with Streamable HTTP),
/// else with its newest handshake revision; requests then carry the negotiated version in
/// `MCP-Protocol-Version` and are served.
#[tokio::test]
async fn initialize_negotiates_every_served_handshake_revision() {
    let app = App::demo();
    for (asked, answered) in [
        ("2025-03-26", "2025-03-26"),
        ("2025-06-18", "2025-06-18"),
        ("2025-11-25", "2025-11-25"),
        // Not served over this transport (2024-11-05 had HTTP+SSE), or unknown/future.
        ("2024-11-05", "2025-11-25"),
        ("2099-01-01", "2025-11-25"),
        ("not-a-date", "2025-11-25"),
    ] {
        let init = json!({"protocolVersion": asked, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}});
        let r = post(
            &app,
            None,
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}),
        )
        .await;
        assert_eq!(r.status, 200, "{asked}: {}", r.body);
        assert_eq!(
            r.body["result"]["protocolVersion"], answered,
            "{asked}: {}",
            r.body
        );
        // The client then speaks the negotiated version on every request.
        let v = Some(answered);
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let r = post(&app, v, note).await;
        assert_eq!(r.status, 202, "{asked}: {}", r.body);
        let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}});
        let r = post(&app, v, list).await;
        assert_eq!(r.status, 200, "{asked}: {}", r.body);
        assert_eq!(r.body["result"]["tools"].as_array().unwrap().len(), 9);
        let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "get_manifest", "arguments": {}}});
        let r = post(&app, v, call).await;
        assert_eq!(r.status, 200, "{asked}: {}", r.body);
        assert_eq!(r.body["result"]["isError"], false, "{asked}: {}", r.body);
    }
}

/// Streamable HTTP transport, "Protocol Version Header": an invalid or unsupported
/// `MCP-Protocol-Version` → 400 (with a JSON-RPC error body); absent → served (the
/// transport then assumes 2025-03-26).
#[tokio::test]
async fn protocol_version_header_bogus_or_unsupported_is_400() {
    let app = App::demo();
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}});
    for bogus in ["bogus", "2099-01-01", "2024-11-05", "2024-10-07", ""] {
        let r = post(&app, Some(bogus), list.clone()).await;
        assert_eq!(r.status, 400, "{bogus:?}: {}", r.body);
        assert_eq!(r.body["jsonrpc"], "2.0", "{bogus:?}: {}", r.body);
        assert!(r.body["error"]["code"].is_i64(), "{bogus:?}: {}", r.body);
    }
    let r = post(&app, None, list).await;
    assert_eq!(r.status, 200, "absent header: {}", r.body);
    // The current era with an unsupported per-request version keeps its specified error.
    let r = app
        .mcp_raw(
            Era::Current,
            &[
                ("MCP-Protocol-Version", "2099-01-01"),
                ("Mcp-Method", "tools/list"),
            ],
            json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list", "params": {"_meta": {
                "io.modelcontextprotocol/protocolVersion": "2099-01-01",
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "0"}
            }}})
            .to_string()
            .into_bytes(),
        )
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert!(r.body["error"]["code"].is_i64(), "{}", r.body);
}
