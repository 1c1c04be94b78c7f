//! MCP-ST: the stdio transport, when the profile names the command that starts the server:
//! stdout carries only JSON-RPC messages, and a line that is not JSON-RPC does not stop the
//! server from answering the next request.

use serde_json::{Value, json};

use crate::engine::finding::{Finding, Step};
use crate::mcp::part::McpPart;
use crate::mcp::stdio::StdioServer;
use crate::mcp::wire::{LEGACY, Wire};

/// `initialize` + `notifications/initialized` over stdio: n/a unless answered with a result.
async fn open(s: &mut StdioServer, w: &mut Wire) -> Step<()> {
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": LEGACY, "capabilities": {},
        "clientInfo": {"name": "conform", "version": env!("CARGO_PKG_VERSION")}}});
    let answer = s.send(&init.to_string(), Some(1), &mut w.exchanges).await?;
    if answer.as_ref().and_then(|m| m.get("result")).is_none() {
        return Err(Finding::unsupported(format!(
            "n/a: initialize ({LEGACY}) over stdio was not answered with a result: {answer:?}"
        )));
    }
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    s.send(&note.to_string(), None, &mut w.exchanges)
        .await
        .map(|_| ())
}

/// A request every server of the era answers (`ping`), expecting a response with `id`.
async fn ping(s: &mut StdioServer, w: &mut Wire, id: u64) -> Step<Value> {
    let req = json!({"jsonrpc": "2.0", "id": id, "method": "ping"});
    s.send(&req.to_string(), Some(id), &mut w.exchanges)
        .await?
        .ok_or_else(|| Finding::harness("a request read no response"))
}

fn no_noise(s: &StdioServer) -> Step<()> {
    match s.noise.first() {
        None => Ok(()),
        Some(line) => Err(Finding::fail(
            "",
            json!("only JSON-RPC messages on stdout"),
            json!(line),
            format!(
                "the server wrote {} line(s) to stdout that are not JSON-RPC messages",
                s.noise.len()
            ),
        )),
    }
}

/// MCP-ST-1: stdout carries only JSON-RPC messages (initialize, ping, tools/list).
pub async fn only_jsonrpc(w: &mut Wire, part: &McpPart, timeout: std::time::Duration) -> Step<()> {
    let mut s = StdioServer::spawn(&part.profile, timeout)?;
    open(&mut s, w).await?;
    ping(&mut s, w, 2).await?;
    let list = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {}});
    s.send(&list.to_string(), Some(3), &mut w.exchanges).await?;
    no_noise(&s)
}

/// MCP-ST-2: after a line that is not JSON, and one that is JSON but no message, the next
/// request is still answered.
pub async fn survives_garbage(
    w: &mut Wire,
    part: &McpPart,
    timeout: std::time::Duration,
) -> Step<()> {
    let mut s = StdioServer::spawn(&part.profile, timeout)?;
    open(&mut s, w).await?;
    s.send("this line is not JSON", None, &mut w.exchanges)
        .await?;
    s.send(r#"{"not": "a message"}"#, None, &mut w.exchanges)
        .await?;
    let answer = ping(&mut s, w, 4).await?;
    if answer.get("result").is_none() {
        return Err(Finding::fail(
            "/result",
            json!("ping answered"),
            answer,
            "after a garbage line, ping was not answered with a result",
        ));
    }
    Ok(())
}
