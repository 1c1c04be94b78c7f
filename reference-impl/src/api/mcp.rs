//! Parley MCP binding (`POST /mcp`, stdio).
