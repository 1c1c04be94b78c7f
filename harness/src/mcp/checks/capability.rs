//! MCP-CAP: declared vs served capabilities. A capability the server advertises must be
//! served; the list method of one it does not advertise should be refused as unknown.

use serde_json::json;

use super::expect::{era, refused_with, request, result_of};
use crate::engine::finding::Step;
use crate::mcp::part::McpPart;
use crate::mcp::wire::Wire;

/// Server capabilities with a list method that needs no argument.
const LISTED: [(&str, &str); 3] = [
    ("tools", "tools/list"),
    ("prompts", "prompts/list"),
    ("resources", "resources/list"),
];

/// MCP-CAP-1: every advertised capability's list method answers a result.
pub async fn advertised_served(w: &mut Wire, part: &McpPart) -> Step<()> {
    let caps = part.capabilities()?.clone();
    let e = era(w, part).await?;
    for (cap, method) in LISTED {
        if caps.get(cap).is_some() {
            let a = request(w, &e, method, json!({})).await?;
            result_of(&a, &format!("{method} (the server advertises {cap})"))?;
        }
    }
    Ok(())
}

/// MCP-CAP-2: the list method of a capability not advertised is refused with -32601 (SHOULD).
pub async fn unadvertised_refused(w: &mut Wire, part: &McpPart) -> Step<()> {
    let caps = part.capabilities()?.clone();
    let e = era(w, part).await?;
    for (cap, method) in LISTED {
        if caps.get(cap).is_none() {
            let a = request(w, &e, method, json!({})).await?;
            refused_with(
                &a,
                &[-32601],
                &format!("{method} (the server does not advertise {cap})"),
            )?;
        }
    }
    Ok(())
}
