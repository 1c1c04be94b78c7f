//! MCP-MD: the stateless 2026-07-28 era — server/discover, resultType, the header ladder
//! (mismatch -32020, unsupported version -32022, missing `_meta`), removed and unknown
//! methods (404 + -32601), no sessions.
//!
//! The error rules follow the design note `mcp-2026-07-28.md` (MCP26-1…7): each faulty
//! request lists every condition it breaks (MCP26-6: each one's answer passes) and
//! [`super::ladder::judge`] applies the note's table (draft codes, a bare 400 for a header
//! fault, a served removed method and a missing `data.requested` warn; anything else fails).

use serde_json::{Value, json};

use super::expect::{no_5xx, result_of};
use super::ladder::{
    HEADER_MISMATCH, METHOD_NOT_FOUND, MISSING_CAPABILITY, MISSING_META, Probe, Specified,
    UNSUPPORTED_VERSION, judge,
};
use crate::engine::finding::{Finding, Step};
use crate::mcp::part::{McpPart, ModernFacts};
use crate::mcp::wire::{Answer, LEGACY, MODERN, Wire, modern_body, modern_headers};

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

/// Judges `a` against `p` (the note's table), on the check's own warnings.
fn judged(w: &mut Wire, a: &Answer, p: &Probe) -> Step<()> {
    judge(&mut w.warnings, a, p)
}

/// The answers to a request that breaks `condition`, plus 404 + -32601 when
/// server/discover does not advertise `capability`: the method may then not be implemented,
/// a condition of its own (MCP26-3, MCP26-6).
fn unless_absent(facts: &ModernFacts, capability: &str, condition: &[Specified]) -> Vec<Specified> {
    let mut answers = condition.to_vec();
    if facts.capabilities.get(capability).is_none() {
        answers.push(METHOD_NOT_FOUND);
    }
    answers
}

/// MCP-MD-3 (MCP26-1): MCP-Protocol-Version header vs `_meta` mismatch, then a missing
/// header.
pub async fn version_mismatch(w: &mut Wire, part: &McpPart) -> Step<()> {
    let facts = part.modern()?;
    let a = w
        .modern(
            "server/discover",
            json!({}),
            &[("mcp-protocol-version", LEGACY.into())],
        )
        .await?;
    // MCP26-6: a server that does not serve the header's version may answer as for an
    // unsupported version (MCP26-2); MCP26-5 may hold for any request (the harness declares
    // no client capability).
    let mut answers = vec![HEADER_MISMATCH, MISSING_CAPABILITY];
    if !facts.serves(LEGACY) {
        answers.push(UNSUPPORTED_VERSION);
    }
    let what = format!("server/discover with _meta {MODERN} and MCP-Protocol-Version: {LEGACY}");
    judged(
        w,
        &a,
        &Probe {
            rule: "MCP-MD-3",
            answers: &answers,
            removed: false,
            legacy_400: false,
            what: &what,
        },
    )?;
    missing_version_header(w, facts).await
}

/// The oldest revision with the Streamable HTTP transport, the one a request without a
/// version header may be read as (MCP26-1 exception).
const HEADERLESS: &str = "2025-03-26";

/// MCP-MD-3 (MCP26-1 and its exception): a modern request without MCP-Protocol-Version is
/// refused with -32020 only by a server that does not serve 2025-03-26; one that does MAY
/// read it as 2025-03-26, so any legacy-era answer (not a 5xx) conforms.
async fn missing_version_header(w: &mut Wire, facts: &ModernFacts) -> Step<()> {
    let a = w
        .modern(
            "server/discover",
            json!({}),
            &[("mcp-protocol-version", String::new())],
        )
        .await?;
    let what = format!("server/discover with _meta {MODERN} and no MCP-Protocol-Version");
    if facts.serves(HEADERLESS) {
        return no_5xx(&a, &what).map_err(|f| f.on(&["MCP-MD-3"]));
    }
    judged(
        w,
        &a,
        &Probe {
            rule: "MCP-MD-3",
            answers: &[HEADER_MISMATCH, MISSING_CAPABILITY],
            removed: false,
            legacy_400: false,
            what: &what,
        },
    )
}

/// MCP-MD-4 (MCP26-1): Mcp-Method header vs body mismatch.
pub async fn method_mismatch(w: &mut Wire, part: &McpPart) -> Step<()> {
    part.modern()?;
    let a = w
        .modern(
            "server/discover",
            json!({}),
            &[("mcp-method", "tools/list".into())],
        )
        .await?;
    judged(
        w,
        &a,
        &Probe {
            rule: "MCP-MD-4",
            answers: &[HEADER_MISMATCH, MISSING_CAPABILITY],
            removed: false,
            legacy_400: false,
            what: "server/discover with Mcp-Method: tools/list",
        },
    )
}

/// MCP-MD-5 (MCP26-1): Mcp-Name header vs the tool named in the body (neither tool exists,
/// so a server that skips the check refuses the call for another reason and never runs a
/// tool; with a profile's `safe_tool`, the tool named is the safe one). An unknown tool is
/// no condition of the note: its -32602 is a server that never compared the header.
pub async fn name_mismatch(w: &mut Wire, part: &McpPart) -> Step<()> {
    let facts = part.modern()?;
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
    let answers = unless_absent(facts, "tools", &[HEADER_MISMATCH, MISSING_CAPABILITY]);
    judged(
        w,
        &a,
        &Probe {
            rule: "MCP-MD-5",
            answers: &answers,
            removed: false,
            legacy_400: false,
            what: &format!("tools/call {name} with Mcp-Name: conform-other-tool"),
        },
    )
}

/// MCP-MD-6 (MCP26-2): an unsupported version (header and `_meta` agree) is refused with
/// 400 + -32022, `data.supported` naming the served versions (`data.requested`: SHOULD).
/// Neither names 2026-07-28: a server that also serves a legacy era may take the request
/// for legacy traffic, so its other 400s warn ([`Probe::legacy_400`]).
pub async fn unsupported_version(w: &mut Wire, part: &McpPart) -> Step<()> {
    let facts = part.modern()?;
    let id = w.id();
    let body = modern_body(id, "server/discover", json!({}), "1999-01-01");
    let h = modern_headers(&body);
    let a = w.post(&h, &body).await?;
    judged(
        w,
        &a,
        &Probe {
            rule: "MCP-MD-6",
            answers: &[UNSUPPORTED_VERSION, MISSING_CAPABILITY],
            removed: false,
            legacy_400: facts.versions.iter().any(|v| v != MODERN),
            what: "server/discover in version 1999-01-01",
        },
    )
}

/// MCP-MD-7 (MCP26-4): a modern request without `_meta` is refused with 400 + -32602; the
/// version header it carries then disagrees with the (missing) `_meta` version, so 400 +
/// -32020 conforms as well (MCP26-6, the note's own example).
pub async fn missing_meta(w: &mut Wire, part: &McpPart) -> Step<()> {
    let facts = part.modern()?;
    let id = w.id();
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/list", "params": {}});
    let h = vec![
        ("mcp-protocol-version", MODERN.to_string()),
        ("mcp-method", "tools/list".to_string()),
    ];
    let a = w.post(&h, &body).await?;
    let answers = unless_absent(
        facts,
        "tools",
        &[MISSING_META, HEADER_MISMATCH, MISSING_CAPABILITY],
    );
    judged(
        w,
        &a,
        &Probe {
            rule: "MCP-MD-7",
            answers: &answers,
            removed: false,
            legacy_400: false,
            what: &format!("tools/list with MCP-Protocol-Version: {MODERN} and no _meta"),
        },
    )
}

/// MCP-MD-8 (MCP26-3): an unknown method, and the methods the revision removed (ping,
/// logging/setLevel), answer 404 + -32601; a result for a removed one is only warned.
pub async fn unknown_methods(w: &mut Wire, part: &McpPart) -> Step<()> {
    part.modern()?;
    let probes = [
        ("conform/no-such-method", json!({}), false),
        ("ping", json!({}), true),
        ("logging/setLevel", json!({"level": "info"}), true),
    ];
    for (method, params, removed) in probes {
        let a = w.modern(method, params, &[]).await?;
        judged(
            w,
            &a,
            &Probe {
                rule: "MCP-MD-8",
                answers: &[METHOD_NOT_FOUND],
                removed,
                legacy_400: false,
                what: &format!("{method} in {MODERN}"),
            },
        )?;
    }
    Ok(())
}
