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

/// Maps a raw request path written against the reference binding (`parley-v1.md` §1 table,
/// as raw vector steps are) onto the route the target declares for the same operation.
///
/// The manifest is authoritative for operation routes (parley-v1.md preamble: the harness
/// "must still read the target's manifest and adapt to what a third-party server declares
/// there (operation routes, limits, profiles)"), so a raw step aimed at `POST /v1/messages`
/// goes to the target's declared `post` route. Path parameters (`{thread}`, `{claim}`) carry
/// over; the query string is kept. A path that is no reference route (an unknown-route probe)
/// or whose operation the target declares as the reference does is returned unchanged.
pub fn declared_path(routes: &Routes, path: &str) -> String {
    let (bare, query) = match path.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (path, None),
    };
    let segments: Vec<&str> = bare.split('/').collect();
    for (op, reference) in default_routes().0 {
        let Some(reference) = reference else { continue };
        let template: Vec<&str> = reference.path.split('/').collect();
        if template.len() != segments.len() {
            continue;
        }
        let mut params: Vec<(&str, &str)> = Vec::new();
        let fits = template.iter().zip(&segments).all(|(t, s)| {
            match t.strip_prefix('{').and_then(|x| x.strip_suffix('}')) {
                Some(name) if !s.is_empty() => {
                    params.push((name, s));
                    true
                }
                Some(_) => false,
                None => t == s,
            }
        });
        if !fits {
            continue;
        }
        let Some(Some(declared)) = routes.0.get(&op) else {
            return path.to_string();
        };
        if declared.path == reference.path {
            return path.to_string();
        }
        let mut out = declared.path.clone();
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

/// The tool an operation's MCP binding names.
///
/// PV-MF-1 fixes only that `operations` is "the table above, machine-readable": the §1 table
/// gives each operation an "MCP tool" column, but no JSON shape for it. A bare string
/// (`"post"`), `{"tool": "post"}` and `{"name": "post"}` all name the tool; `null` is the
/// declared absence of the binding (PV-TR-1a), handled by the caller.
pub fn mcp_tool_name(binding: &Value) -> Option<&str> {
    match binding {
        Value::String(s) => Some(s.as_str()),
        Value::Object(o) => o
            .get("tool")
            .or_else(|| o.get("name"))
            .and_then(Value::as_str),
        _ => None,
    }
}

/// The route an operation's HTTP binding declares: `{"method", "path"}`, or the §1 table's
/// own notation as one string, `"GET /v1/manifest"` (PV-MF-1 fixes no JSON shape for it).
pub fn http_route(binding: &Value) -> Option<Route> {
    let (method, path) = match binding {
        Value::String(s) => s.trim().split_once(' ')?,
        Value::Object(o) => (
            o.get("method").and_then(Value::as_str)?,
            o.get("path")
                .or_else(|| o.get("route"))
                .and_then(Value::as_str)?,
        ),
        _ => return None,
    };
    let path = path.trim();
    path.starts_with('/').then(|| Route {
        method: method.trim().to_ascii_uppercase(),
        path: path.to_string(),
    })
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

/// The names a manifest list holds: strings, or objects naming themselves under `key`, in an
/// array or grouped in an object of arrays (no layout is fixed, so each is read).
pub fn listed(v: Option<&Value>, key: &str) -> Vec<String> {
    let items = match v {
        Some(Value::Array(a)) => a.clone(),
        Some(Value::Object(o)) => o
            .values()
            .flat_map(|x| x.as_array().cloned().unwrap_or_default())
            .collect(),
        _ => Vec::new(),
    };
    items
        .iter()
        .filter_map(|i| i.as_str().or_else(|| i.get(key).and_then(Value::as_str)))
        .map(str::to_string)
        .collect()
}

impl Manifest {
    /// The refusal reasons the manifest declares.
    pub fn reasons(&self) -> std::collections::BTreeSet<String> {
        listed(self.raw.get("reasons"), "reason")
            .into_iter()
            .collect()
    }

    /// Extracts what the engine needs; the defaults of `parley-v1.md` fill silent gaps.
    pub fn from_value(raw: Value) -> Self {
        let mut routes = default_routes();
        let mut tools: HashMap<String, Option<String>> = HashMap::new();
        let mut missing = Vec::new();
        // PV-MF-1: "the table above, machine-readable" — rows in an array, each naming its
        // operation (`name`, or `operation` as the §1 column is headed), or an object keyed by
        // operation; no layout is fixed, so both are read.
        let rows: Vec<(&str, &Value)> = match raw.get("operations") {
            Some(Value::Array(ops)) => ops
                .iter()
                .filter_map(|op| {
                    op.get("name")
                        .or_else(|| op.get("operation"))
                        .and_then(Value::as_str)
                        .map(|n| (n, op))
                })
                .collect(),
            Some(Value::Object(ops)) => ops.iter().map(|(n, op)| (n.as_str(), op)).collect(),
            _ => Vec::new(),
        };
        for (name, op) in rows {
            match op.get("http") {
                Some(Value::Null) => {
                    routes.0.insert(name.into(), None);
                    missing.push(format!("{name}: no HTTP binding"));
                }
                Some(h) => {
                    if let Some(route) = http_route(h) {
                        routes.0.insert(name.into(), Some(route));
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
                    if let Some(t) = mcp_tool_name(m) {
                        tools.insert(name.into(), Some(t.into()));
                    }
                }
                None => {}
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
#[expect(clippy::unwrap_used)] // tests: a panic is the failure report
mod tests {
    use super::*;
    use serde_json::json;

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

    #[test]
    fn bindings_in_other_machine_readable_shapes() {
        let m = Manifest::from_value(json!({
            "operations": [
                {"name": "post", "http": "POST /api/msg", "mcp": "parley_post"},
                {"operation": "inbox", "http": {"method": "get", "path": "/api/inbox"}, "mcp": {"name": "box"}},
                {"name": "whoami", "mcp": {"tool": 7}}
            ]
        }));
        assert_eq!(m.routes.0["post"].as_ref().unwrap().path, "/api/msg");
        assert_eq!(m.routes.0["inbox"].as_ref().unwrap().method, "GET");
        assert_eq!(m.tools["post"], Some("parley_post".into()));
        assert_eq!(m.tools["inbox"], Some("box".into()));
        // A binding that names no tool is ignored (the default applies), not taken as absent.
        assert!(!m.tools.contains_key("whoami"));
    }

    #[test]
    fn operations_keyed_by_name() {
        let m = Manifest::from_value(json!({
            "operations": {
                "post": {"http": {"method": "POST", "path": "/api/msg"}, "mcp": "parley_post"},
                "inbox": {"http": null, "mcp": {"tool": "inbox"}}
            }
        }));
        assert_eq!(m.routes.0["post"].as_ref().unwrap().path, "/api/msg");
        assert_eq!(m.tools["post"], Some("parley_post".into()));
        assert_eq!(m.missing_bindings, ["inbox: no HTTP binding"]);
    }

    #[test]
    fn raw_paths_follow_declared_routes() {
        let m = Manifest::from_value(json!({
            "operations": [
                {"name": "post", "http": {"method": "POST", "path": "/api/msg"}},
                {"name": "mark", "http": {"method": "POST", "path": "/api/t/{thread}/mark"}}
            ]
        }));
        assert_eq!(declared_path(&m.routes, "/v1/messages"), "/api/msg");
        assert_eq!(
            declared_path(&m.routes, "/v1/threads/th_4/state?x=1"),
            "/api/t/th_4/mark?x=1"
        );
        // Same route as the reference, or no reference route at all: unchanged.
        assert_eq!(
            declared_path(&m.routes, "/v1/inbox?limit=1"),
            "/v1/inbox?limit=1"
        );
        assert_eq!(declared_path(&m.routes, "/v1/nope"), "/v1/nope");
        assert_eq!(
            declared_path(&m.routes, "/v1/threads/th_1/nope"),
            "/v1/threads/th_1/nope"
        );
    }
}
