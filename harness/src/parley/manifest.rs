//! Parley's manifest (PV-MF-1) as the harness reads it: operation routes and tools (the
//! target's declaration wins over the defaults of `parley-v1.md` §1), MCP endpoint, enabled
//! profiles, and what `whoami` says about each token.

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::transport::TransportKind;
use crate::transport::http::{Route, Routes};

/// The reference binding's routes (`parley-v1.md` §1 table), used where the manifest is silent.
pub fn default_routes() -> Routes {
    let r = |m: &str, p: &str| {
        Some(Route {
            method: m.into(),
            path: p.into(),
        })
    };
    Routes(BTreeMap::from([
        ("get_manifest".to_string(), r("GET", "/v1/manifest")),
        ("whoami".to_string(), r("GET", "/v1/whoami")),
        ("post".to_string(), r("POST", "/v1/messages")),
        ("read_thread".to_string(), r("GET", "/v1/threads/{thread}")),
        (
            "list_events".to_string(),
            r("GET", "/v1/threads/{thread}/events"),
        ),
        ("inbox".to_string(), r("GET", "/v1/inbox")),
        ("mark".to_string(), r("POST", "/v1/threads/{thread}/state")),
        (
            "reopen".to_string(),
            r("POST", "/v1/threads/{thread}/reopen"),
        ),
        ("read_claim".to_string(), r("GET", "/v1/claims/{claim}")),
    ]))
}

/// A raw request path written against the table of `parley-v1.md` §1 (`/v1/threads/th_3/state?x`),
/// mapped to the route the target declares for the same operation (`/api/th_3/mark?x`).
/// The preamble of parley-v1.md: the harness adapts to the operation routes a server declares;
/// raw vectors are written once, against the table, and follow the manifest. A path that is
/// no operation of the table (an unknown route, a `/v2/…` prefix) is returned as it is.
pub fn declared_path(path: &str, declared: &Routes) -> String {
    let (bare, query) = match path.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (path, None),
    };
    let defaults = default_routes();
    for (op, route) in &defaults.0 {
        let Some(route) = route else { continue };
        let Some(params) = match_template(&route.path, bare) else {
            continue;
        };
        let Some(Some(target)) = declared.0.get(op) else {
            break;
        };
        let mut out = target.path.clone();
        for (name, value) in params {
            out = out.replace(&format!("{{{name}}}"), value);
        }
        return match query {
            Some(q) => format!("{out}?{q}"),
            None => out,
        };
    }
    path.to_string()
}

/// The `{name}` segments of `template` matched in `path`, when every other segment is equal.
fn match_template<'a>(template: &'a str, path: &'a str) -> Option<Vec<(&'a str, &'a str)>> {
    let (t, p): (Vec<&str>, Vec<&str>) = (template.split('/').collect(), path.split('/').collect());
    if t.len() != p.len() {
        return None;
    }
    let mut params = Vec::new();
    for (ts, ps) in t.iter().zip(&p) {
        match ts.strip_prefix('{').and_then(|x| x.strip_suffix('}')) {
            Some(name) if !ps.is_empty() => params.push((name, *ps)),
            Some(_) => return None,
            None if ts == ps => {}
            None => return None,
        }
    }
    Some(params)
}

/// What `whoami` said about a role's token.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Identity {
    /// `ainotes:agent-a`, `human:alice`.
    pub identity: String,
    /// `llm` or `human`.
    #[serde(default)]
    pub author_kind: Option<String>,
    /// Rights held.
    #[serde(default)]
    pub rights: Vec<String>,
    /// Lock label, for lock holders.
    #[serde(default)]
    pub lock_label: Option<String>,
    /// Writes per minute.
    #[serde(default)]
    pub quota_per_minute: Option<u64>,
}

/// The manifest members the Parley wing uses (everything else is kept raw).
#[derive(Debug, Clone, Default)]
pub struct Manifest {
    /// The whole document.
    pub raw: Value,
    /// HTTP routes per operation (`None` = not offered).
    pub routes: Routes,
    /// MCP tool per operation (`None` = not offered).
    pub tools: HashMap<String, Option<String>>,
    /// Whether the target declared any binding as `null` for some operation.
    pub missing_bindings: Vec<String>,
    /// MCP endpoint declared in `bindings.mcp.endpoint`.
    pub mcp_endpoint: Option<String>,
    /// Enabled profiles (`dialectic`).
    pub profiles: Vec<String>,
    /// Server version.
    pub version: Option<String>,
}

impl Manifest {
    /// Extracts what the engine needs; the defaults of `parley-v1.md` fill silent gaps.
    pub fn from_value(raw: Value) -> Self {
        let mut routes = default_routes();
        let mut tools: HashMap<String, Option<String>> = HashMap::new();
        let mut missing = Vec::new();
        if let Some(ops) = raw.get("operations").and_then(Value::as_array) {
            for op in ops {
                let Some(name) = op.get("name").and_then(Value::as_str) else {
                    continue;
                };
                match op.get("http") {
                    Some(Value::Null) => {
                        routes.0.insert(name.into(), None);
                        missing.push(format!("{name}: no HTTP binding"));
                    }
                    Some(h) => {
                        if let (Some(m), Some(p)) = (
                            h.get("method").and_then(Value::as_str),
                            h.get("path").and_then(Value::as_str),
                        ) {
                            routes.0.insert(
                                name.into(),
                                Some(Route {
                                    method: m.to_ascii_uppercase(),
                                    path: p.into(),
                                }),
                            );
                        }
                    }
                    None => {}
                }
                match op.get("mcp") {
                    Some(Value::Null) => {
                        tools.insert(name.into(), None);
                        missing.push(format!("{name}: no MCP binding"));
                    }
                    Some(m) => {
                        if let Some(t) = m.get("tool").and_then(Value::as_str) {
                            tools.insert(name.into(), Some(t.into()));
                        }
                    }
                    None => {}
                }
            }
        }
        let mcp_endpoint = raw
            .pointer("/bindings/mcp/endpoint")
            .and_then(Value::as_str)
            .map(str::to_string);
        let profiles = raw
            .get("profiles")
            .and_then(Value::as_array)
            .map(|ps| {
                ps.iter()
                    .filter_map(|p| {
                        p.get("name")
                            .and_then(Value::as_str)
                            .or_else(|| p.as_str())
                            .map(str::to_string)
                    })
                    .collect()
            })
            .unwrap_or_default();
        let version = raw
            .get("version")
            .and_then(Value::as_str)
            .map(str::to_string);
        Self {
            raw,
            routes,
            tools,
            missing_bindings: missing,
            mcp_endpoint,
            profiles,
            version,
        }
    }

    /// Whether the target offers `kind` for every operation (PV-TR-1a).
    pub fn offers(&self, kind: TransportKind) -> bool {
        match kind {
            TransportKind::Http => self.routes.0.values().any(Option::is_some),
            TransportKind::Mcp => {
                !self.tools.values().all(Option::is_none) || self.tools.is_empty()
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a panic is the failure report
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn raw_paths_follow_the_declared_routes() {
        let m = Manifest::from_value(serde_json::json!({"operations": [
            {"name": "mark", "http": {"method": "POST", "path": "/api/t/{thread}/mark"}},
        ]}));
        assert_eq!(
            declared_path("/v1/threads/th_3/state?x=1", &m.routes),
            "/api/t/th_3/mark?x=1"
        );
        // Not redeclared: the table's route; not an operation of the table: untouched.
        assert_eq!(
            declared_path("/v1/threads/th_3", &m.routes),
            "/v1/threads/th_3"
        );
        assert_eq!(declared_path("/v2/manifest", &m.routes), "/v2/manifest");
        assert_eq!(
            declared_path("/v1/threads//state", &m.routes),
            "/v1/threads//state"
        );
    }

    #[test]
    fn manifest_routes_override_defaults() {
        let m = Manifest::from_value(json!({
            "operations": [
                {"name": "post", "http": {"method": "post", "path": "/api/msg"}, "mcp": {"tool": "parley_post"}},
                {"name": "inbox", "http": null, "mcp": {"tool": "inbox"}}
            ],
            "bindings": {"mcp": {"endpoint": "/rpc"}},
            "profiles": [{"name": "dialectic"}]
        }));
        assert_eq!(
            m.routes.0["post"],
            Some(Route {
                method: "POST".into(),
                path: "/api/msg".into()
            })
        );
        assert_eq!(m.routes.0["inbox"], None);
        assert_eq!(
            m.routes.0["whoami"],
            Some(Route {
                method: "GET".into(),
                path: "/v1/whoami".into()
            })
        );
        assert_eq!(m.tools["post"], Some("parley_post".into()));
        assert_eq!(m.mcp_endpoint.as_deref(), Some("/rpc"));
        assert_eq!(m.profiles, ["dialectic"]);
        assert_eq!(m.missing_bindings, ["inbox: no HTTP binding"]);
    }
}
