//! MCP-RPC: JSON-RPC 2.0 robustness in whichever era the server speaks — unparsable and
//! empty bodies, invalid request objects, ids beyond 64 bits, batches, unknown methods and
//! notifications.
//!
//! The transport lets a server refuse what it cannot accept with an HTTP 4xx whose body
//! MAY hold a JSON-RPC error: a bare 4xx is therefore always an acceptable refusal; a
//! JSON-RPC error, when there is one, must carry the code JSON-RPC assigns.

use serde_json::{Value, json};

use super::expect::{Era, era, framing, no_5xx, refused_with};
use super::ladder::forbidden;
use crate::engine::finding::{Finding, Step};
use crate::mcp::part::McpPart;
use crate::mcp::wire::{Answer, MODERN, Wire, modern_meta};

/// The codes the 2026-07-28 ladder may answer first for a hand-made body (header mismatch
/// MCP26-1, missing `_meta` MCP26-4), besides the JSON-RPC one: the body breaks them too,
/// and every applicable answer conforms (MCP26-6).
fn ladder_codes(e: &Era) -> &'static [i64] {
    match e {
        Era::Legacy(_) => &[],
        Era::Modern => &[-32020, -32602],
    }
}

/// What any 2026-07-28 refusal keeps whatever it answers: no code the revision forbids
/// (MCP26-7), and HeaderMismatch only with HTTP 400 (MCP26-1). Legacy answers are not
/// judged here (the note leaves that era unchanged).
fn modern_codes(e: &Era, a: &Answer, what: &str) -> Step<()> {
    let (Era::Modern, Some(code)) = (e, a.error_code()) else {
        return Ok(());
    };
    let why = match forbidden(code) {
        Some(why) => why.to_string(),
        None if code == -32020 && a.status != 400 => format!(
            "-32020 (HeaderMismatch) over HTTP {}, not 400 (MCP26-1)",
            a.status
        ),
        None => return Ok(()),
    };
    Err(Finding::fail(
        "/error/code",
        json!("a code 2026-07-28 defines, with its status"),
        a.observed(),
        format!("{what}: {why}"),
    ))
}

/// A refusal with `codes` (plus the codes the 2026-07-28 ladder may answer first).
fn refused(w: &mut Wire, a: &Answer, codes: &[i64], e: &Era, what: &str) -> Step<()> {
    modern_codes(e, a, what)?;
    let allowed: Vec<i64> = codes.iter().chain(ladder_codes(e)).copied().collect();
    super::expect::refused(w, a, &allowed, what)
}

/// A valid request for `method` in `e` with `id` (raw JSON text of the id).
fn request_text(e: &Era, id: &str, method: &str) -> String {
    let params = match e {
        Era::Legacy(_) => json!({}),
        Era::Modern => json!({"_meta": modern_meta(MODERN)}),
    };
    format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}"#)
}

/// A method every server of the era answers.
fn probe_method(e: &Era) -> &'static str {
    match e {
        Era::Legacy(_) => "ping",
        Era::Modern => "server/discover",
    }
}

/// Headers for a raw body calling `method` in `e`.
fn headers(w: &Wire, e: &Era, method: Option<&str>) -> Vec<(&'static str, String)> {
    let mut h = framing(w, e);
    if let (Era::Modern, Some(m)) = (e, method) {
        h.push(("mcp-method", m.to_string()));
    }
    h
}

/// MCP-RPC-1: unparsable and empty bodies are refused with a 4xx (-32700 / -32600 inside).
pub async fn unparsable(w: &mut Wire, part: &McpPart) -> Step<()> {
    let e = era(w, part).await?;
    let h = headers(w, &e, None);
    for (what, body) in [
        (
            "a body that is not JSON",
            b"{\"jsonrpc\": \"2.0\", \"id\": 1,".to_vec(),
        ),
        ("an empty body", Vec::new()),
    ] {
        let a = w.send("POST", &h, Some(body)).await?;
        no_5xx(&a, what)?;
        if !(400..500).contains(&a.status) {
            return Err(Finding::fail(
                "",
                json!({"http_status": "4xx"}),
                a.observed(),
                format!(
                    "{what}: HTTP {} (the transport requires an HTTP error status)",
                    a.status
                ),
            ));
        }
        modern_codes(&e, &a, what)?;
        super::expect::refused(w, &a, &[-32700, -32600], what)?;
    }
    Ok(())
}

/// MCP-RPC-2: invalid request objects are refused with -32600 (or -32602 for params).
pub async fn invalid_requests(w: &mut Wire, part: &McpPart) -> Step<()> {
    let e = era(w, part).await?;
    let m = probe_method(&e);
    let cases: [(&str, Value, &[i64]); 5] = [
        (
            "jsonrpc \"1.0\"",
            json!({"jsonrpc": "1.0", "id": 11, "method": m}),
            &[-32600],
        ),
        ("no method", json!({"jsonrpc": "2.0", "id": 12}), &[-32600]),
        (
            "a method that is not a string",
            json!({"jsonrpc": "2.0", "id": 13, "method": 42}),
            &[-32600],
        ),
        (
            "a null id",
            json!({"jsonrpc": "2.0", "id": null, "method": m}),
            &[-32600],
        ),
        (
            "params that are a string",
            json!({"jsonrpc": "2.0", "id": 15, "method": m, "params": "x"}),
            &[-32600, -32602],
        ),
    ];
    for (what, body, codes) in cases {
        let h = headers(w, &e, Some(m));
        let a = w.post(&h, &body).await?;
        refused(w, &a, codes, &e, &format!("a request with {what}"))?;
    }
    Ok(())
}

/// MCP-RPC-3: an id beyond 64 bits is echoed exactly or refused with -32600.
pub async fn huge_id(w: &mut Wire, part: &McpPart) -> Step<()> {
    const HUGE: &str = "18446744073709551616"; // 2^64
    let e = era(w, part).await?;
    let m = probe_method(&e);
    let h = headers(w, &e, Some(m));
    let a = w
        .send("POST", &h, Some(request_text(&e, HUGE, m).into_bytes()))
        .await?;
    let what = format!("{m} with id {HUGE}");
    no_5xx(&a, &what)?;
    if a.error_code() == Some(-32600) || (400..500).contains(&a.status) {
        modern_codes(&e, &a, &what)?;
        return super::expect::refused(w, &a, &[-32600], &what);
    }
    // serde_json reads such an id as a float: compare the raw text instead.
    let compact: String = a.text.chars().filter(|c| !c.is_whitespace()).collect();
    if a.message.is_some()
        && compact.contains(&format!("\"id\":{HUGE}"))
        && a.error_code().is_none()
    {
        return Ok(());
    }
    // JSON lets implementations limit number precision (RFC 8259 §6): an id echoed as the
    // nearest double (18446744073709552000) is a warning, any other id a failure.
    let rounded = a
        .message
        .as_ref()
        .and_then(|m| m.get("id"))
        .and_then(Value::as_f64);
    if rounded == Some(18_446_744_073_709_551_616_f64) {
        w.warnings.push(Finding::warn(
            "/id",
            json!(HUGE),
            a.observed(),
            format!("{what}: the id came back rounded to a double, not exactly"),
        ));
        return Ok(());
    }
    Err(Finding::fail(
        "/id",
        json!(format!("id {HUGE} echoed exactly, or JSON-RPC -32600")),
        a.observed(),
        format!("{what}: answered {}", super::expect::describe(&a)),
    ))
}

/// MCP-RPC-4: a batch is refused, never answered with an array of responses.
pub async fn batch(w: &mut Wire, part: &McpPart) -> Step<()> {
    let e = era(w, part).await?;
    if let Era::Legacy(s) = &e
        && s.version.as_str() < "2025-06-18"
    {
        return Err(Finding::unsupported(format!(
            "n/a: the session negotiated {}, where JSON-RPC batches are allowed",
            s.version
        )));
    }
    let m = probe_method(&e);
    let body = format!(
        "[{},{}]",
        request_text(&e, "21", m),
        request_text(&e, "22", m)
    );
    let h = headers(w, &e, Some(m));
    let a = w.send("POST", &h, Some(body.into_bytes())).await?;
    no_5xx(&a, "a JSON-RPC batch")?;
    if serde_json::from_str::<Value>(&a.text).is_ok_and(|v| v.is_array()) {
        return Err(Finding::fail(
            "",
            json!("a refusal (batching was removed in 2025-06-18)"),
            json!(a.text),
            "a JSON-RPC batch was answered with an array of responses",
        ));
    }
    refused(w, &a, &[-32600], &e, "a JSON-RPC batch")
}

/// MCP-RPC-5: an unknown method is answered -32601.
pub async fn unknown_method(w: &mut Wire, part: &McpPart) -> Step<()> {
    let e = era(w, part).await?;
    let a = super::expect::request(w, &e, "conform/no-such-method", json!({})).await?;
    refused_with(&a, &[-32601], "the unknown method conform/no-such-method")
}

/// MCP-RPC-6: a notification is never answered with a JSON-RPC response.
pub async fn notification(w: &mut Wire, part: &McpPart) -> Step<()> {
    let e = era(w, part).await?;
    let method = "notifications/conform-unknown";
    let mut body = json!({"jsonrpc": "2.0", "method": method, "params": {}});
    if let Era::Modern = e {
        body["params"]["_meta"] = modern_meta(MODERN);
    }
    let h = headers(w, &e, Some(method));
    let a = w.post(&h, &body).await?;
    let what = "the unknown notification notifications/conform-unknown";
    no_5xx(&a, what)?;
    modern_codes(&e, &a, what)?;
    if (400..500).contains(&a.status) && a.result().is_none() {
        return Ok(());
    }
    if a.status == 202 && a.text.trim().is_empty() {
        return Ok(());
    }
    Err(Finding::fail(
        "",
        json!("HTTP 202 with no body, or a 4xx"),
        a.observed(),
        format!("{what}: HTTP {} {}", a.status, super::expect::describe(&a)),
    ))
}

/// MCP-RPC-7: two requests in flight with the same id (a client error) are each answered —
/// a response or a JSON-RPC error — within the timeout, never a 5xx.
pub async fn duplicate_ids(w: &mut Wire, part: &McpPart) -> Step<()> {
    let e = era(w, part).await?;
    let m = probe_method(&e);
    let h = headers(w, &e, Some(m));
    let body = request_text(&e, "31", m).into_bytes();
    let mut twin = w.twin();
    let (a, b) = futures::join!(
        w.send("POST", &h, Some(body.clone())),
        twin.send("POST", &h, Some(body))
    );
    w.exchanges.append(&mut twin.exchanges);
    for a in [a?, b?] {
        let what = format!("{m} with id 31, twice in flight");
        no_5xx(&a, &what)?;
        let answered = a
            .message
            .as_ref()
            .is_some_and(|msg| msg.get("result").is_some() || msg.get("error").is_some());
        if !answered && !(400..500).contains(&a.status) {
            return Err(Finding::fail(
                "",
                json!("a JSON-RPC response or a 4xx"),
                a.observed(),
                format!("{what}: HTTP {} {}", a.status, super::expect::describe(&a)),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::{Era, modern_codes};
    use crate::mcp::checks::ladder::tests::error;

    #[test]
    fn modern_refusals_keep_the_code_rules() {
        let m = Era::Modern;
        for ok in [
            error(400, -32600, Value::Null),
            error(400, -32020, Value::Null),
            error(400, -32001, Value::Null),
            error(200, -32602, Value::Null),
        ] {
            assert!(modern_codes(&m, &ok, "x").is_ok(), "{:?}", ok.message);
        }
        for bad in [
            error(400, -32042, Value::Null),
            error(400, -32002, Value::Null),
            error(400, -32077, Value::Null),
            error(200, -32020, Value::Null),
            error(404, -32020, Value::Null),
        ] {
            assert!(modern_codes(&m, &bad, "x").is_err(), "{:?}", bad.message);
        }
        // The legacy era is not judged by the 2026-07-28 note.
        let legacy = Era::Legacy(crate::mcp::wire::Session {
            version: "2025-11-25".into(),
            id: None,
        });
        assert!(modern_codes(&legacy, &error(400, -32042, Value::Null), "x").is_ok());
    }
}
