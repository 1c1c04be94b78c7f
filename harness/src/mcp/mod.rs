//! The MCP layer itself, for any MCP server over Streamable HTTP (`conform run --suite mcp`):
//! lifecycle and version negotiation, headers and sessions of the 2025-11-25 era, the
//! stateless 2026-07-28 era's discovery and header ladder, JSON-RPC robustness, Origin/Host
//! validation, tools, declared vs served capabilities, and the stdio transport when the
//! profile names the command that starts the server — each check citing an `MCP-…`
//! rule of `vectors/requirements/mcp.toml`, tied to the specification revision and section
//! it comes from.

pub mod checks;
pub mod part;
pub mod profile;
pub mod protocol;
pub mod stdio;
pub mod wire;
