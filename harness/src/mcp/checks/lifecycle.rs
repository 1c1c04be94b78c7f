//! MCP-LC: the 2025-11-25 era's lifecycle and transport rules — initialize and version
//! negotiation, the initialized notification, the protocol-version header, sessions, GET,
//! ping. Each check opens its own session, so that one check's DELETE never leaks into
//! another's.

use serde_json::{Value, json};

use super::expect::{describe, no_5xx, result_of, status_in};
use crate::engine::finding::{Finding, Step};
use crate::mcp::part::McpPart;
use crate::mcp::wire::{LEGACY, Wire};

/// Versions an older client may request (the Streamable HTTP transport exists since 2025-03-26).
const OLDER: [&str; 2] = ["2025-06-18", "2025-03-26"];
/// A revision no server can support.
const FUTURE: &str = "2099-01-01";

/// MCP-LC-1: the initialize result's members.
pub async fn initialize_result(w: &mut Wire, part: &McpPart) -> Step<()> {
    part.legacy()?;
    let a = w.initialize(LEGACY, None).await?;
    let r = result_of(&a, "initialize")?;
    let bad = |ptr: &str, want: &str| {
        Finding::fail(
            &format!("/result{ptr}"),
            json!(want),
            r.pointer(ptr).cloned().unwrap_or(Value::Null),
            format!("initialize result: {ptr} must be {want}"),
        )
    };
    if !r.get("protocolVersion").is_some_and(Value::is_string) {
        return Err(bad("/protocolVersion", "a string"));
    }
    if !r.get("capabilities").is_some_and(Value::is_object) {
        return Err(bad("/capabilities", "an object"));
    }
    for m in ["/serverInfo/name", "/serverInfo/version"] {
        if !r.pointer(m).is_some_and(Value::is_string) {
            return Err(bad(m, "a string"));
        }
    }
    Ok(())
}

/// The version the server answers to `initialize(requested)`, or `None` when it refuses a
/// version it does not support with a JSON-RPC error (the lifecycle's "Error Handling"
/// example: -32602 "Unsupported protocol version" naming the supported ones).
async fn answered_or_refused(w: &mut Wire, requested: &str) -> Step<Option<String>> {
    let a = w.initialize(requested, None).await?;
    let what = format!("initialize requesting {requested}");
    if a.result().is_none() && a.error_code().is_some() {
        no_5xx(&a, &what)?;
        return Ok(None);
    }
    let r = result_of(&a, &what)?;
    let v = r.get("protocolVersion").and_then(Value::as_str);
    v.map(|v| Some(v.to_string())).ok_or_else(|| {
        Finding::fail(
            "/result/protocolVersion",
            json!("a string"),
            a.observed(),
            "initialize result without a protocolVersion string",
        )
    })
}

/// The version the server answers to `initialize(requested)`; a refusal is a finding.
async fn answered(w: &mut Wire, requested: &str) -> Step<String> {
    answered_or_refused(w, requested).await?.ok_or_else(|| {
        Finding::fail(
            "/error",
            json!(format!("initialize answered with {requested}")),
            json!("a JSON-RPC error"),
            format!("initialize requesting {requested} was refused"),
        )
    })
}

/// MCP-LC-2: every requested version is answered with one the server supports — the same
/// one when it supports it, never an unknown future one — or refused with a JSON-RPC error;
/// a version the server answers is answered unchanged when requested (a fixpoint).
pub async fn negotiation(w: &mut Wire, part: &McpPart) -> Step<()> {
    part.legacy()?;
    let mut seen = Vec::new();
    for requested in [LEGACY, OLDER[0], OLDER[1], FUTURE] {
        let Some(v) = answered_or_refused(w, requested).await? else {
            continue; // refused: allowed for a version it does not support.
        };
        if requested == FUTURE && v == FUTURE {
            return Err(Finding::fail(
                "/result/protocolVersion",
                json!("a version the server supports"),
                json!(v),
                format!(
                    "initialize requesting the unknown revision {FUTURE} was answered with {FUTURE}: the server echoes versions instead of negotiating"
                ),
            ));
        }
        if !seen.contains(&v) {
            seen.push(v);
        }
    }
    for v in seen {
        let again = answered(w, &v).await?;
        if again != v {
            return Err(Finding::fail(
                "/result/protocolVersion",
                json!(v),
                json!(again),
                format!(
                    "the server answered {v} to another request, so it supports it, but answers {again} when {v} is requested"
                ),
            ));
        }
    }
    Ok(())
}

/// MCP-LC-3: the older Streamable HTTP revisions are negotiated (SHOULD).
pub async fn older_versions(w: &mut Wire, part: &McpPart) -> Step<()> {
    part.legacy()?;
    for requested in OLDER {
        let v = answered(w, requested).await?;
        if v != requested {
            return Err(Finding::fail(
                "/result/protocolVersion",
                json!(requested),
                json!(v),
                format!(
                    "initialize requesting {requested} was answered with {v}: clients that only speak {requested} cannot connect"
                ),
            ));
        }
    }
    Ok(())
}

/// MCP-LC-4: initialize with missing or invalid params: -32602 (a result is only warned).
pub async fn initialize_bad_params(w: &mut Wire, part: &McpPart) -> Step<()> {
    part.legacy()?;
    let cases = [
        (
            "no params",
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize"}),
        ),
        (
            "protocolVersion 42",
            json!({"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": {"protocolVersion": 42, "capabilities": {}, "clientInfo": {"name": "conform", "version": "0"}}}),
        ),
    ];
    for (what, body) in cases {
        let a = w
            .post(&[("mcp-protocol-version", String::new())], &body)
            .await?;
        let what = format!("initialize with {what}");
        if a.result().is_some() {
            w.warnings.push(Finding::warn(
                "/result",
                json!({"jsonrpc_error_code": -32602}),
                a.observed(),
                format!(
                    "{what} was answered with a result (lenient; -32602 is the specified refusal)"
                ),
            ));
            continue;
        }
        // Whatever the status, "method not found" is false: initialize exists (the server
        // answered it a moment ago), so -32601 is a failure, not a code mix-up.
        if a.error_code() == Some(-32601) {
            return Err(Finding::fail(
                "/error/code",
                json!({"jsonrpc_error_code": -32602}),
                a.observed(),
                format!("{what}: answered -32601 (method not found) for a method the server has"),
            ));
        }
        super::expect::refused(w, &a, &[-32602], &what)?;
    }
    Ok(())
}

/// MCP-LC-5: notifications/initialized is answered 202 with no body.
pub async fn initialized_202(w: &mut Wire, part: &McpPart) -> Step<()> {
    part.legacy()?;
    let a = w.initialize(LEGACY, None).await?;
    let r = result_of(&a, "initialize")?;
    let version = r
        .get("protocolVersion")
        .and_then(Value::as_str)
        .unwrap_or(LEGACY)
        .to_string();
    let mut h = vec![("mcp-protocol-version", version)];
    if let Some(id) = a.header("mcp-session-id") {
        h.push(("mcp-session-id", id.to_string()));
    }
    let n = w
        .post(
            &h,
            &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        )
        .await?;
    status_in(&n, &[202], "notifications/initialized")?;
    if !n.text.trim().is_empty() {
        return Err(Finding::fail(
            "",
            json!("no body"),
            json!(n.text),
            "notifications/initialized: 202 with a body",
        ));
    }
    Ok(())
}

/// MCP-LC-6: an invalid or unsupported MCP-Protocol-Version header is answered 400.
pub async fn bogus_version_header(w: &mut Wire, part: &McpPart) -> Step<()> {
    part.legacy()?;
    let s = w.open().await?;
    for bogus in ["not-a-version", "1999-01-01"] {
        let mut h = w.session_headers(&s);
        h[0].1 = bogus.to_string();
        let id = w.id();
        let a = w
            .post(&h, &json!({"jsonrpc": "2.0", "id": id, "method": "ping"}))
            .await?;
        status_in(
            &a,
            &[400],
            &format!("ping with MCP-Protocol-Version: {bogus}"),
        )?;
    }
    Ok(())
}

/// MCP-LC-7: a request without MCP-Protocol-Version is still served (SHOULD).
pub async fn absent_version_header(w: &mut Wire, part: &McpPart) -> Step<()> {
    part.legacy()?;
    let s = w.open().await?;
    let mut h = w.session_headers(&s);
    h[0].1 = String::new();
    let id = w.id();
    let a = w
        .post(&h, &json!({"jsonrpc": "2.0", "id": id, "method": "ping"}))
        .await?;
    result_of(&a, "ping without MCP-Protocol-Version").map(|_| ())
}

/// The session facts, or n/a when the server issues no sessions.
fn sessions(part: &McpPart) -> Step<()> {
    if part.legacy()?.sessions {
        Ok(())
    } else {
        Err(Finding::unsupported(
            "n/a: the server issues no Mcp-Session-Id (stateless)",
        ))
    }
}

/// MCP-LC-8: a session id the server never issued is answered 404 (SHOULD: the MUST of the
/// transport covers terminated sessions, which MCP-LC-9 checks).
pub async fn unknown_session(w: &mut Wire, part: &McpPart) -> Step<()> {
    sessions(part)?;
    let s = w.open().await?;
    let h = vec![
        ("mcp-protocol-version", s.version.clone()),
        ("mcp-session-id", "conform-never-issued-0000".to_string()),
    ];
    let id = w.id();
    let a = w
        .post(&h, &json!({"jsonrpc": "2.0", "id": id, "method": "ping"}))
        .await?;
    no_5xx(&a, "ping with a session id never issued")?;
    status_in(&a, &[404], "ping with a session id the server never issued")
}

/// MCP-LC-12: where sessions are required, a request without the session id is answered
/// 400 (SHOULD); a server that serves it does not require them.
pub async fn missing_session(w: &mut Wire, part: &McpPart) -> Step<()> {
    sessions(part)?;
    let s = w.open().await?;
    let id = w.id();
    let a = w
        .post(
            &[("mcp-protocol-version", s.version.clone())],
            &json!({"jsonrpc": "2.0", "id": id, "method": "ping"}),
        )
        .await?;
    if a.result().is_some() {
        return Ok(()); // sessions are offered, not required: nothing to refuse.
    }
    status_in(&a, &[400], "ping without Mcp-Session-Id")
}

/// MCP-LC-9: DELETE terminates the session (then 404) or is refused with 405.
pub async fn delete_session(w: &mut Wire, part: &McpPart) -> Step<()> {
    sessions(part)?;
    let s = w.open().await?;
    let h = w.session_headers(&s);
    let d = w.send("DELETE", &h, None).await?;
    no_5xx(&d, "DELETE with the session id")?;
    if d.status == 405 {
        return Ok(());
    }
    if !(200..300).contains(&d.status) {
        return Err(Finding::fail(
            "",
            json!({"http_status": ["2xx", 405]}),
            d.observed(),
            format!("DELETE with the session id: HTTP {}", d.status),
        ));
    }
    let id = w.id();
    let a = w
        .post(&h, &json!({"jsonrpc": "2.0", "id": id, "method": "ping"}))
        .await?;
    status_in(&a, &[404], "ping in a session the client terminated")
}

/// MCP-LC-10: GET answers an SSE stream or 405.
pub async fn get_stream(w: &mut Wire, part: &McpPart) -> Step<()> {
    part.legacy()?;
    let s = w.open().await?;
    let mut h = w.session_headers(&s);
    h.push(("accept", "text/event-stream".into()));
    let a = w.get_head(&h).await?;
    no_5xx(&a, "GET")?;
    let sse = a
        .header("content-type")
        .is_some_and(|c| c.to_ascii_lowercase().starts_with("text/event-stream"));
    if a.status == 405 || ((200..300).contains(&a.status) && sse) {
        return Ok(());
    }
    Err(Finding::fail(
        "",
        json!("HTTP 405, or 2xx with Content-Type: text/event-stream"),
        json!({"http_status": a.status, "content_type": a.header("content-type")}),
        format!(
            "GET on the MCP endpoint: HTTP {} {}",
            a.status,
            describe(&a)
        ),
    ))
}

/// MCP-LC-11: ping answers an empty result.
pub async fn ping(w: &mut Wire, part: &McpPart) -> Step<()> {
    part.legacy()?;
    let s = w.open().await?;
    let a = w.legacy(&s, "ping", json!({})).await?;
    let r = result_of(&a, "ping")?;
    let empty = r
        .as_object()
        .is_some_and(|o| o.keys().all(|k| k == "_meta"));
    if !empty {
        return Err(Finding::fail(
            "/result",
            json!({}),
            r.clone(),
            "ping: the result is not empty",
        ));
    }
    Ok(())
}
