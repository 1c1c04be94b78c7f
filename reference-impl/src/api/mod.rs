//! Wire bindings: Parley over HTTP and MCP, and the SSP provider routes.

pub mod http;
pub mod mcp;
pub mod ssp;
