//! MCP-OR: Origin and Host validation against DNS rebinding. A foreign Origin must be
//! refused with 403 while the same request without one is served; when the endpoint is not
//! on loopback, a server reached by name may legitimately accept any Host, and its Origin
//! policy is its own, so findings there are warnings.

use serde_json::json;

use super::expect::{Era, era, framing, no_5xx, result_of};
use crate::engine::finding::{Finding, Step};
use crate::mcp::part::McpPart;
use crate::mcp::wire::{Answer, MODERN, Wire, modern_body, modern_headers};

/// An origin no server allows.
const FOREIGN: &str = "http://conform-foreign.invalid";

/// One probe request in `e` with `extra` headers.
async fn probe(w: &mut Wire, e: &Era, extra: &[(&'static str, String)]) -> Step<Answer> {
    let id = w.id();
    let (mut h, body) = match e {
        Era::Legacy(_) => (
            framing(w, e),
            json!({"jsonrpc": "2.0", "id": id, "method": "ping"}),
        ),
        Era::Modern => {
            let b = modern_body(id, "server/discover", json!({}), MODERN);
            (modern_headers(&b), b)
        }
    };
    h.extend(extra.iter().cloned());
    w.post(&h, &body).await
}

/// MCP-OR-1: a foreign Origin is refused with 403; no Origin, or the allowed one, is served.
pub async fn foreign_origin(w: &mut Wire, part: &McpPart) -> Step<()> {
    let e = era(w, part).await?;
    let base = probe(w, &e, &[]).await?;
    if base.result().is_none() {
        return Err(Finding::unsupported(format!(
            "the probe request without Origin was not served (HTTP {}): nothing to compare a refusal with",
            base.status
        )));
    }
    let a = probe(w, &e, &[("origin", FOREIGN.into())]).await?;
    no_5xx(&a, "a request with a foreign Origin")?;
    if a.status != 403 {
        let f = if part.loopback {
            Finding::fail
        } else {
            Finding::warn
        };
        return Err(f(
            "",
            json!({"http_status": 403}),
            a.observed(),
            format!(
                "a request with Origin: {FOREIGN} was answered HTTP {} (not refused with 403)",
                a.status
            ),
        ));
    }
    if let Some(allowed) = part.profile.allowed_origin.clone() {
        let a = probe(w, &e, &[("origin", allowed.clone())]).await?;
        result_of(&a, &format!("a request from the allowed Origin {allowed}"))?;
    }
    Ok(())
}

/// MCP-OR-2: on loopback, a foreign Host is refused with a 4xx (SHOULD).
pub async fn foreign_host(w: &mut Wire, part: &McpPart) -> Step<()> {
    if !part.loopback {
        return Err(Finding::unsupported(
            "n/a: the endpoint is not on loopback (a server reached by name may accept any Host)",
        ));
    }
    let e = era(w, part).await?;
    let base = probe(w, &e, &[]).await?;
    if base.result().is_none() {
        return Err(Finding::unsupported(format!(
            "the probe request with the endpoint's own Host was not served (HTTP {}): nothing to compare a refusal with",
            base.status
        )));
    }
    let a = probe(w, &e, &[("host", "conform-foreign.invalid".into())]).await?;
    no_5xx(&a, "a request with a foreign Host")?;
    if (400..500).contains(&a.status) {
        return Ok(());
    }
    Err(Finding::fail(
        "",
        json!({"http_status": "4xx"}),
        a.observed(),
        format!(
            "a request with Host: conform-foreign.invalid was answered HTTP {}",
            a.status
        ),
    ))
}
