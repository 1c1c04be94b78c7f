//! The `[mcp]` section of a target profile: what the MCP-layer checks may use that the server
//! cannot tell them (a token, a tool that is safe to call, an Origin it allows).
//!
//! ```toml
//! [mcp]
//! token = "…"                       # Bearer token sent on every MCP request (optional)
//! safe_tool = "get_manifest"        # a tool without side effects, for MCP-TL-4 / MCP-MD-5
//! safe_tool_arguments = {}          # its arguments (default: {})
//! allowed_origin = "http://localhost:5173"  # an Origin the server serves (MCP-OR-1)
//! stdio_command = ["node", "server.js", "stdio"]  # the server over stdio (MCP-ST), optional
//! stdio_env = { TOKEN = "…" }       # environment added for that command
//! ```

use serde::Deserialize;
use serde_json::Value;

/// The parsed `[mcp]` table (every member optional).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpProfile {
    /// Bearer token for every MCP request.
    #[serde(default)]
    pub token: Option<String>,
    /// A tool that may be called any number of times without side effects.
    #[serde(default)]
    pub safe_tool: Option<String>,
    /// Arguments of [`McpProfile::safe_tool`].
    #[serde(default)]
    pub safe_tool_arguments: Option<toml::Table>,
    /// An Origin the server is configured to allow.
    #[serde(default)]
    pub allowed_origin: Option<String>,
    /// The command line that starts the server on stdio (program first).
    #[serde(default)]
    pub stdio_command: Option<Vec<String>>,
    /// Environment added for [`McpProfile::stdio_command`].
    #[serde(default)]
    pub stdio_env: std::collections::BTreeMap<String, String>,
}

impl McpProfile {
    /// Reads the `[mcp]` table (`None` = absent: every member defaults).
    pub fn from_section(section: Option<&toml::Value>) -> Result<Self, String> {
        match section {
            None => Ok(Self::default()),
            Some(v @ toml::Value::Table(_)) => v
                .clone()
                .try_into()
                .map_err(|e: toml::de::Error| format!("[mcp]: {}", e.message())),
            Some(_) => Err("[mcp] must be a table".into()),
        }
    }

    /// The safe tool and its arguments as JSON, when the profile names one.
    pub fn safe_call(&self) -> Option<(String, Value)> {
        let name = self.safe_tool.clone()?;
        let args = self
            .safe_tool_arguments
            .as_ref()
            .and_then(|t| serde_json::to_value(t).ok())
            .unwrap_or_else(|| Value::Object(Default::default()));
        Some((name, args))
    }
}

#[cfg(test)]
#[expect(clippy::unwrap_used)] // tests: a panic is the failure report
mod tests {
    use super::*;

    #[test]
    fn members_parse_and_unknown_ones_are_refused() {
        let t: toml::Value =
            toml::from_str("token = \"t\"\nsafe_tool = \"x\"\nsafe_tool_arguments = { a = 1 }\n")
                .unwrap();
        let p = McpProfile::from_section(Some(&t)).unwrap();
        assert_eq!(p.token.as_deref(), Some("t"));
        assert_eq!(
            p.safe_call(),
            Some(("x".into(), serde_json::json!({"a": 1})))
        );
        let bad: toml::Value = toml::from_str("tokn = \"t\"").unwrap();
        assert!(McpProfile::from_section(Some(&bad)).is_err());
        assert!(McpProfile::from_section(Some(&toml::Value::from(1))).is_err());
    }
}
