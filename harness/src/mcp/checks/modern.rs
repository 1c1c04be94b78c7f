//! MCP-MD: the stateless 2026-07-28 era — server/discover, resultType, the header ladder
//! (mismatch -32020, unsupported version -32022, missing `_meta`), removed and unknown
//! methods (404 + -32601), no sessions.
//!
//! Where a dual-era server may route a request to its 2025-11-25 side before the 2026
//! ladder sees it (a version header it does not recognise), a refusal without the specified
//! code is a warning, not a failure: the request was refused, which is what protects
//! clients; serving it is the failure.

use serde_json::{Value, json};

use super::expect::{no_5xx, refused_with, result_of, status_in};
use crate::engine::finding::{Finding, Step};
use crate::mcp::part::McpPart;
use crate::mcp::wire::{Answer, LEGACY, MODERN, Wire, modern_body, modern_headers};

const HEADER_MISMATCH: i64 = -32020;
const UNSUPPORTED_VERSION: i64 = -32022;

/// MCP-MD-1: server/discover's members.
pub async fn discover(w: &mut Wire, part: &McpPart) -> Step<()> {
    let a = w.modern("server/discover", json!({}), &[]).await?;
    if a.result().is_none() && part.modern.is_err() {
        return Err(Finding::unsupported(format!(
            "n/a: the server does not speak {MODERN} (server/discover: HTTP {})",
            a.status
        )));
    }
    let r = result_of(&a, "server/discover")?;
    let versions = r.get("supportedVersions").and_then(Value::as_array);
    let ok = versions.is_some_and(|v| {
        !v.is_empty() && v.iter().all(Value::is_string) && v.contains(&json!(MODERN))
    });
    if !ok {
        return Err(Finding::fail(
            "/result/supportedVersions",
            json!(format!("a non-empty array of strings including {MODERN}")),
            r.get("supportedVersions").cloned().unwrap_or(Value::Null),
            "server/discover: supportedVersions",
        ));
    }
    if !r.get("capabilities").is_some_and(Value::is_object) {
        return Err(Finding::fail(
            "/result/capabilities",
            json!("an object"),
            r.get("capabilities").cloned().unwrap_or(Value::Null),
            "server/discover: capabilities",
        ));
    }
    Ok(())
}

/// The modern results a check can always obtain: server/discover, and tools/list when the
/// tools capability is advertised.
async fn modern_answers(w: &mut Wire, part: &McpPart) -> Step<Vec<(&'static str, Answer)>> {
    let facts = part.modern()?;
    let mut out = vec![(
        "server/discover",
        w.modern("server/discover", json!({}), &[]).await?,
    )];
    if facts.capabilities.get("tools").is_some() {
        out.push(("tools/list", w.modern("tools/list", json!({}), &[]).await?));
    }
    Ok(out)
}

/// MCP-MD-2: every modern result carries a string resultType.
pub async fn result_type(w: &mut Wire, part: &McpPart) -> Step<()> {
    for (method, a) in modern_answers(w, part).await? {
        let r = result_of(&a, method)?;
        if !r.get("resultType").is_some_and(Value::is_string) {
            return Err(Finding::fail(
                "/result/resultType",
                json!("a string"),
                r.get("resultType").cloned().unwrap_or(Value::Null),
                format!("{method}: result without a string resultType"),
            ));
        }
    }
    Ok(())
}

/// MCP-MD-9: no Mcp-Session-Id on modern answers.
pub async fn no_session(w: &mut Wire, part: &McpPart) -> Step<()> {
    for (method, a) in modern_answers(w, part).await? {
        if let Some(id) = a.header("mcp-session-id") {
            return Err(Finding::fail(
                "",
                json!("no Mcp-Session-Id header"),
                json!(id),
                format!("{method} in {MODERN} minted a session id"),
            ));
        }
    }
    Ok(())
}

/// A refusal by the ladder: 400 with `code`; with `lenient`, a 400 without it is warned.
fn ladder_refusal(w: &mut Wire, a: &Answer, code: i64, lenient: bool, what: &str) -> Step<()> {
    no_5xx(a, what)?;
    if a.result().is_some() {
        return Err(Finding::fail(
            "/result",
            json!({"http_status": 400, "jsonrpc_error_code": code}),
            a.observed(),
            format!("{what} was served"),
        ));
    }
    let refused = (400..500).contains(&a.status) || a.error_code().is_some();
    if lenient && refused && !(a.status == 400 && a.error_code() == Some(code)) {
        w.warnings.push(Finding::warn(
            "/error/code",
            json!({"http_status": 400, "jsonrpc_error_code": code}),
            a.observed(),
            format!(
                "{what}: refused with HTTP {} {}, not 400 with JSON-RPC {code}",
                a.status,
                super::expect::describe(a)
            ),
        ));
        return Ok(());
    }
    status_in(a, &[400], what)?;
    refused_with(a, &[code], what)
}

/// MCP-MD-3: MCP-Protocol-Version header vs `_meta` mismatch.
pub async fn version_mismatch(w: &mut Wire, part: &McpPart) -> Step<()> {
    part.modern()?;
    let a = w
        .modern(
            "server/discover",
            json!({}),
            &[("mcp-protocol-version", LEGACY.into())],
        )
        .await?;
    ladder_refusal(
        w,
        &a,
        HEADER_MISMATCH,
        true,
        &format!("server/discover with _meta {MODERN} and MCP-Protocol-Version: {LEGACY}"),
    )
}

/// MCP-MD-4: Mcp-Method header vs body mismatch.
pub async fn method_mismatch(w: &mut Wire, part: &McpPart) -> Step<()> {
    part.modern()?;
    let a = w
        .modern(
            "server/discover",
            json!({}),
            &[("mcp-method", "tools/list".into())],
        )
        .await?;
    ladder_refusal(
        w,
        &a,
        HEADER_MISMATCH,
        false,
        "server/discover with Mcp-Method: tools/list",
    )
}

/// MCP-MD-5: Mcp-Name header vs the tool named in the body (neither tool exists, so a
/// server that skips the check refuses the call for another reason and never runs a tool;
/// with a profile's `safe_tool`, the tool named is the safe one).
pub async fn name_mismatch(w: &mut Wire, part: &McpPart) -> Step<()> {
    part.modern()?;
    let (name, args) = part
        .profile
        .safe_call()
        .unwrap_or_else(|| ("conform-no-such-tool".into(), json!({})));
    let a = w
        .modern(
            "tools/call",
            json!({"name": name, "arguments": args}),
            &[("mcp-name", "conform-other-tool".into())],
        )
        .await?;
    ladder_refusal(
        w,
        &a,
        HEADER_MISMATCH,
        false,
        &format!("tools/call {name} with Mcp-Name: conform-other-tool"),
    )
}

/// MCP-MD-6: an unsupported version (header and `_meta` agree) is refused with -32022
/// naming the supported versions.
pub async fn unsupported_version(w: &mut Wire, part: &McpPart) -> Step<()> {
    part.modern()?;
    let id = w.id();
    let body = modern_body(id, "server/discover", json!({}), "1999-01-01");
    let h = modern_headers(&body);
    let a = w.post(&h, &body).await?;
    let what = "server/discover in version 1999-01-01";
    ladder_refusal(w, &a, UNSUPPORTED_VERSION, true, what)?;
    if a.error_code() == Some(UNSUPPORTED_VERSION) {
        let data = a.message.as_ref().and_then(|m| m.pointer("/error/data"));
        let listed = data
            .and_then(|d| d.get("supported").or_else(|| d.get("supportedVersions")))
            .and_then(Value::as_array);
        if !listed.is_some_and(|l| !l.is_empty() && l.iter().all(Value::is_string)) {
            return Err(Finding::fail(
                "/error/data/supported",
                json!("the supported versions (non-empty array of strings)"),
                json!(data),
                format!("{what}: -32022 without the supported versions"),
            ));
        }
    }
    Ok(())
}

/// MCP-MD-7: a modern request without the required `_meta` keys is refused with 400.
pub async fn missing_meta(w: &mut Wire, part: &McpPart) -> Step<()> {
    part.modern()?;
    let id = w.id();
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/list", "params": {}});
    let h = vec![
        ("mcp-protocol-version", MODERN.to_string()),
        ("mcp-method", "tools/list".to_string()),
    ];
    let a = w.post(&h, &body).await?;
    let what = format!("tools/list with MCP-Protocol-Version: {MODERN} and no _meta");
    no_5xx(&a, &what)?;
    if a.result().is_some() || a.error_code().is_none() {
        return Err(Finding::fail(
            "",
            json!({"http_status": 400, "jsonrpc_error": "any"}),
            a.observed(),
            format!("{what} was not refused with a JSON-RPC error"),
        ));
    }
    status_in(&a, &[400], &what)
}

/// MCP-MD-8: unknown and removed methods answer 404 + -32601.
pub async fn unknown_methods(w: &mut Wire, part: &McpPart) -> Step<()> {
    part.modern()?;
    for method in ["conform/no-such-method", "ping"] {
        let a = w.modern(method, json!({}), &[]).await?;
        let what = format!("{method} in {MODERN}");
        status_in(&a, &[404], &what)?;
        refused_with(&a, &[-32601], &what)?;
    }
    Ok(())
}
