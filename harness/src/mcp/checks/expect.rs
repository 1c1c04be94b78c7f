//! Assertions shared by the MCP-layer checks: each turns one answer into "go on" or a
//! finding that says what the rule allows and what came back.

use serde_json::{Value, json};

use crate::engine::finding::{Finding, Step};
use crate::mcp::part::McpPart;
use crate::mcp::wire::{Answer, MODERN, Session, Wire};

/// A 5xx is never an acceptable answer to anything a client sends.
pub fn no_5xx(a: &Answer, what: &str) -> Step<()> {
    if a.status >= 500 {
        return Err(Finding::fail(
            "",
            json!("no 5xx"),
            a.observed(),
            format!("{what}: HTTP {} (a server error)", a.status),
        ));
    }
    Ok(())
}

/// The answer is a JSON-RPC error whose code is one of `codes` (and not a 5xx).
pub fn refused_with(a: &Answer, codes: &[i64], what: &str) -> Step<()> {
    no_5xx(a, what)?;
    match a.error_code() {
        Some(c) if codes.contains(&c) => Ok(()),
        _ => Err(Finding::fail(
            "/error/code",
            json!({"jsonrpc_error_code": codes}),
            a.observed(),
            format!(
                "{what}: expected a JSON-RPC error {codes:?}, got HTTP {} {}",
                a.status,
                describe(a)
            ),
        )),
    }
}

/// A refusal: no result and no 5xx. Over HTTP 200 the JSON-RPC error must carry one of
/// `codes`; a 4xx is a transport-level refusal, which the transport allows with any body
/// ("MAY comprise a JSON-RPC error"), so another code there is only a warning.
pub fn refused(w: &mut Wire, a: &Answer, codes: &[i64], what: &str) -> Step<()> {
    no_5xx(a, what)?;
    if a.result().is_some() {
        return Err(Finding::fail(
            "/result",
            json!({"jsonrpc_error_code": codes}),
            a.observed(),
            format!("{what} was served"),
        ));
    }
    if !(400..500).contains(&a.status) {
        return refused_with(a, codes, what);
    }
    if let Some(c) = a.error_code().filter(|c| !codes.contains(c)) {
        w.warnings.push(Finding::warn(
            "/error/code",
            json!({"jsonrpc_error_code": codes}),
            a.observed(),
            format!(
                "{what}: refused with HTTP {} but JSON-RPC error {c} (JSON-RPC assigns {codes:?})",
                a.status
            ),
        ));
    }
    Ok(())
}

/// The HTTP status is one of `statuses`.
pub fn status_in(a: &Answer, statuses: &[u16], what: &str) -> Step<()> {
    if statuses.contains(&a.status) {
        return Ok(());
    }
    Err(Finding::fail(
        "",
        json!({"http_status": statuses}),
        a.observed(),
        format!(
            "{what}: expected HTTP {statuses:?}, got HTTP {} {}",
            a.status,
            describe(a)
        ),
    ))
}

/// The JSON-RPC result, or a failure naming what came instead. A 400 + -32021 naming
/// `data.requiredCapabilities` (or the draft's -32003) is a correct refusal of a request
/// that declares no client capability (MCP26-5): the check cannot go on, it is `n/a`.
pub fn result_of<'a>(a: &'a Answer, what: &str) -> Step<&'a Value> {
    no_5xx(a, what)?;
    let required = a
        .message
        .as_ref()
        .and_then(|m| m.pointer("/error/data/requiredCapabilities"))
        .filter(|v| !v.is_null());
    if let (400, Some(code @ (-32021 | -32003)), Some(caps)) = (a.status, a.error_code(), required)
    {
        return Err(Finding::unsupported(format!(
            "n/a: {what}: the server requires client capabilities {caps} the harness does not \
             declare (JSON-RPC {code}, MCP26-5)"
        )));
    }
    a.result().ok_or_else(|| {
        Finding::fail(
            "/result",
            json!("a JSON-RPC result"),
            a.observed(),
            format!("{what}: no result (HTTP {} {})", a.status, describe(a)),
        )
    })
}

/// A short description of what came back.
pub fn describe(a: &Answer) -> String {
    match (&a.message, a.error_code()) {
        (_, Some(c)) => format!("JSON-RPC error {c}"),
        (Some(m), None) if m.get("result").is_some() => "a result".into(),
        _ if a.text.is_empty() => "(empty body)".into(),
        _ => format!("body {:?}", crate::engine::target::truncate(&a.text, 120)),
    }
}

/// The era a check that holds in both speaks: 2025-11-25 (after a handshake) when the
/// server speaks it, else 2026-07-28.
pub enum Era {
    /// Inside this session.
    Legacy(Session),
    /// Stateless.
    Modern,
}

/// Opens the era the check speaks.
pub async fn era(wire: &mut Wire, part: &McpPart) -> Step<Era> {
    if part.legacy.is_ok() {
        return Ok(Era::Legacy(wire.open().await?));
    }
    part.modern()?;
    Ok(Era::Modern)
}

/// `method(params)` in `era`.
pub async fn request(wire: &mut Wire, era: &Era, method: &str, params: Value) -> Step<Answer> {
    match era {
        Era::Legacy(s) => wire.legacy(s, method, params).await,
        Era::Modern => wire.modern(method, params, &[]).await,
    }
}

/// The headers a hand-made body sent in `era` carries (2025-11-25: the session's;
/// 2026-07-28: the version header).
pub fn framing(wire: &Wire, era: &Era) -> Vec<(&'static str, String)> {
    match era {
        Era::Legacy(s) => wire.session_headers(s),
        Era::Modern => vec![("mcp-protocol-version", MODERN.to_string())],
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::result_of;
    use crate::engine::finding::Severity;
    use crate::mcp::checks::ladder::tests::{error, result};

    #[test]
    fn a_missing_capability_makes_a_result_check_not_applicable() {
        assert!(result_of(&result(), "x").is_ok());
        let caps = json!({"requiredCapabilities": {"elicitation": {}}});
        let severity = |a| result_of(&a, "x").map(|_| ()).map_err(|f| f.severity);
        assert_eq!(
            severity(error(400, -32021, caps.clone())),
            Err(Severity::Unsupported)
        );
        assert_eq!(
            severity(error(400, -32003, caps)),
            Err(Severity::Unsupported)
        );
        // Without the data, or over another status, it is no result: a failure.
        assert_eq!(
            severity(error(400, -32021, Value::Null)),
            Err(Severity::Fail)
        );
        let data = json!({"requiredCapabilities": {}});
        assert_eq!(severity(error(200, -32021, data)), Err(Severity::Fail));
    }
}
