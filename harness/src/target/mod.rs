//! Target profiles, the manifest, pre-flight and `--spawn-reference`.
//!
//! A profile says where the target is and which token plays which role; the manifest says
//! what the target declares (routes, MCP endpoint, profiles). Pre-flight verifies both
//! before the run so a wrong token yields one clear message, not hundreds of false failures.

use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::transport::http::{HttpTransport, Route, Routes};
use crate::transport::mcp::McpTransport;
use crate::transport::{Auth, McpRevision, Transport, TransportKind};
use crate::vectors::model::Role;

/// The TOML target profile (`--target FILE`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// Must be 1.
    pub format_version: u32,
    /// Display name of the target.
    #[serde(default)]
    pub name: Option<String>,
    /// Origin the HTTP routes are relative to (`http://127.0.0.1:8080`).
    pub base_url: String,
    /// MCP endpoint path or URL; default: the manifest's `bindings.mcp.endpoint`, else `/mcp`.
    #[serde(default)]
    pub mcp_endpoint: Option<String>,
    /// MCP revision to speak (default 2025-11-25).
    #[serde(default)]
    pub mcp_revision: Option<McpRevision>,
    /// Per-request timeout in milliseconds (default 10000).
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    /// Concurrent checks (default 8).
    #[serde(default)]
    pub concurrency: Option<usize>,
    /// Bearer token per role (`agent_a = "…"`); a missing role makes its vectors unsupported.
    #[serde(default)]
    pub tokens: BTreeMap<Role, String>,
    /// SSP fixture skills per role (opaque to the engine; read by the SSP suite).
    #[serde(default)]
    pub ssp: Option<toml::Table>,
}

/// Why a target could not be prepared (all map to exit code 2).
#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    /// Profile unreadable or invalid.
    #[error("profile {path}: {message}")]
    Profile {
        /// File.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// The reference server did not start.
    #[error("spawning the reference server: {0}")]
    Spawn(String),
    /// Pre-flight found problems with the profile against the target.
    #[error("pre-flight failed against {base_url}:\n  - {}", .problems.join("\n  - "))]
    Preflight {
        /// Target.
        base_url: String,
        /// Every problem found.
        problems: Vec<String>,
    },
    /// Transport could not be built.
    #[error("{0}")]
    Transport(String),
}

impl Profile {
    /// Reads and validates a profile file.
    pub fn load(path: &Path) -> Result<Self, TargetError> {
        let err = |message: String| TargetError::Profile {
            path: path.display().to_string(),
            message,
        };
        let text = std::fs::read_to_string(path).map_err(|e| err(e.to_string()))?;
        let p: Profile = toml::from_str(&text).map_err(|e| err(e.to_string()))?;
        if p.format_version != 1 {
            return Err(err(format!(
                "format_version {} is not supported (expected 1)",
                p.format_version
            )));
        }
        if url::Url::parse(&p.base_url).is_err() {
            return Err(err(format!(
                "base_url {:?} is not an absolute URL",
                p.base_url
            )));
        }
        if p.tokens.contains_key(&Role::Anonymous) {
            return Err(err("role anonymous has no token by definition".into()));
        }
        Ok(p)
    }

    /// The demo profile of the reference server at `base_url` (tokens of `Config::demo`).
    pub fn demo(base_url: &str) -> Self {
        let tokens = [
            (Role::AgentA, "demo-agent-a"),
            (Role::AgentB, "demo-agent-b"),
            (Role::Moderator, "demo-moderator"),
            (Role::Verifier, "demo-verifier"),
            (Role::Reader, "demo-reader"),
            (Role::Human, "demo-human"),
            (Role::Limited, "demo-limited"),
        ]
        .into_iter()
        .map(|(r, t)| (r, t.to_string()))
        .collect();
        Profile {
            format_version: 1,
            name: Some("reference (spawned in process)".into()),
            base_url: base_url.to_string(),
            mcp_endpoint: None,
            mcp_revision: None,
            timeout_ms: None,
            concurrency: None,
            tokens,
            ssp: None,
        }
    }
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

/// The manifest members the engine uses (everything else is kept raw).
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
        let mut routes = Routes::default();
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

/// Target information recorded in the report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TargetInfo {
    /// Display name.
    pub name: String,
    /// Base URL.
    pub base_url: String,
    /// MCP endpoint URL.
    pub mcp_url: String,
    /// MCP revision spoken.
    pub mcp_revision: McpRevision,
    /// Server version from the manifest.
    #[serde(default)]
    pub server_version: Option<String>,
    /// Profiles the manifest enables.
    #[serde(default)]
    pub profiles: Vec<String>,
    /// Whether the reference server was spawned in process.
    pub spawned_reference: bool,
    /// Profile file used (for reproduction commands).
    #[serde(default)]
    pub profile_path: Option<String>,
}

/// A prepared target: profile + manifest + identities + transports. Keeps a spawned server alive.
pub struct Target {
    /// Report information.
    pub info: TargetInfo,
    /// The profile.
    pub profile: Profile,
    /// The manifest.
    pub manifest: Manifest,
    /// `whoami` per role.
    pub identities: BTreeMap<Role, Identity>,
    /// Per-request timeout.
    pub timeout: Duration,
    /// HTTP transport.
    pub http: Arc<dyn Transport>,
    /// MCP transport.
    pub mcp: Arc<dyn Transport>,
    _server: Option<reference_impl::RunningServer>,
}

impl std::fmt::Debug for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Target")
            .field("info", &self.info)
            .finish_non_exhaustive()
    }
}

impl Target {
    /// Auth for a role (`anonymous` = none), or `None` when the profile lacks the role.
    pub fn auth(&self, role: Role) -> Option<Auth> {
        if role == Role::Anonymous {
            return Some(Auth::None);
        }
        self.profile.tokens.get(&role).map(|t| Auth::Bearer {
            token: t.clone(),
            env: Some(role.token_env()),
        })
    }

    /// The transport of a kind.
    pub fn transport(&self, kind: TransportKind) -> &Arc<dyn Transport> {
        match kind {
            TransportKind::Http => &self.http,
            TransportKind::Mcp => &self.mcp,
        }
    }

    /// Whether the manifest enables a profile/feature (`dialectic`).
    pub fn has_feature(&self, f: &str) -> bool {
        self.manifest.profiles.iter().any(|p| p == f)
    }

    /// Connects to the target described by `profile`: fetches the manifest, runs pre-flight.
    pub async fn connect(
        profile: Profile,
        revision_override: Option<McpRevision>,
        profile_path: Option<String>,
    ) -> Result<Self, TargetError> {
        Self::prepare(profile, revision_override, profile_path, None, true).await
    }

    /// Like [`Target::connect`] for a run without the Parley suite: an SSP-only provider
    /// has no Parley manifest and no `whoami`, so the Parley pre-flight is skipped (the SSP
    /// checks do their own discovery and report an unreachable provider as failures).
    pub async fn connect_ssp_only(
        profile: Profile,
        profile_path: Option<String>,
    ) -> Result<Self, TargetError> {
        Self::prepare(profile, None, profile_path, None, false).await
    }

    /// Spawns the reference server in process on an ephemeral loopback port with the demo tokens.
    pub async fn spawn_reference(
        revision_override: Option<McpRevision>,
    ) -> Result<Self, TargetError> {
        let listen: SocketAddr = SocketAddr::from(([127, 0, 0, 1], 0));
        let server = reference_impl::spawn(reference_impl::Config::demo_in_memory(), listen)
            .await
            .map_err(|e| TargetError::Spawn(e.to_string()))?;
        let profile = Profile::demo(&format!("http://{}", server.addr));
        Self::prepare(profile, revision_override, None, Some(server), true).await
    }

    async fn prepare(
        profile: Profile,
        revision_override: Option<McpRevision>,
        profile_path: Option<String>,
        server: Option<reference_impl::RunningServer>,
        parley: bool,
    ) -> Result<Self, TargetError> {
        let timeout = Duration::from_millis(profile.timeout_ms.unwrap_or(10_000));
        let client =
            crate::transport::client(timeout).map_err(|e| TargetError::Transport(e.to_string()))?;
        let base = profile.base_url.trim_end_matches('/').to_string();
        let fail = |problems: Vec<String>| TargetError::Preflight {
            base_url: base.clone(),
            problems,
        };

        // 1. Reachable + manifest (HTTP default route; the manifest may then override routes).
        let default_http = HttpTransport::new(client.clone(), &base, Routes::default());
        let manifest_value = if !parley {
            // SSP-only pre-flight: the provider must at least answer its well-known URI
            // (any HTTP status: judging the answer is the checks' job).
            let url = format!("{base}/.well-known/skill-sharing");
            if let Err(e) = client.get(&url).send().await {
                return Err(fail(vec![format!("provider unreachable: GET {url}: {e}")]));
            }
            json!({})
        } else {
            let reply = default_http
                .call("get_manifest", &json!({}), &Auth::None)
                .await
                .map_err(|e| {
                    fail(vec![format!(
                        "target unreachable: GET {base}/v1/manifest: {e}"
                    )])
                })?;
            match (reply.http_status, reply.json) {
                (200, Some(v)) if v.is_object() => v,
                (s, _) => {
                    return Err(fail(vec![format!(
                        "GET {base}/v1/manifest answered HTTP {s} without a JSON object manifest: {}",
                        truncate(&reply.text, 200)
                    )]));
                }
            }
        };
        let manifest = Manifest::from_value(manifest_value);
        let revision = revision_override
            .or(profile.mcp_revision)
            .unwrap_or_default();
        let endpoint = profile
            .mcp_endpoint
            .clone()
            .or(manifest.mcp_endpoint.clone())
            .unwrap_or_else(|| "/mcp".into());
        let mcp_url = if endpoint.starts_with("http://") || endpoint.starts_with("https://") {
            endpoint
        } else {
            format!("{base}{endpoint}")
        };
        let http: Arc<dyn Transport> = Arc::new(HttpTransport::new(
            client.clone(),
            &base,
            manifest.routes.clone(),
        ));
        let init_auth = Role::ALL
            .into_iter()
            .find_map(|r| profile.tokens.get(&r).map(|t| (r, t)))
            .map(|(r, t)| Auth::Bearer {
                token: t.clone(),
                env: Some(r.token_env()),
            })
            .unwrap_or(Auth::None);
        let mcp: Arc<dyn Transport> = Arc::new(McpTransport::new(
            client,
            &mcp_url,
            revision,
            manifest.tools.clone(),
            init_auth,
        ));

        // 2. Tokens valid, identities distinct, rights as the role claims.
        let mut problems = Vec::new();
        let mut identities = BTreeMap::new();
        for (role, token) in profile.tokens.iter().filter(|_| parley) {
            let auth = Auth::Bearer {
                token: token.clone(),
                env: Some(role.token_env()),
            };
            match http.call("whoami", &json!({}), &auth).await {
                Ok(r) if r.http_status == 200 => {
                    match r.json.map(serde_json::from_value::<Identity>) {
                        Some(Ok(id)) => {
                            identities.insert(*role, id);
                        }
                        _ => problems.push(format!(
                            "role {role}: whoami returned no identity: {}",
                            truncate(&r.text, 200)
                        )),
                    }
                }
                Ok(r) => problems.push(format!(
                    "role {role}: token rejected by whoami (HTTP {}): {}",
                    r.http_status,
                    truncate(&r.text, 200)
                )),
                Err(e) => problems.push(format!("role {role}: whoami failed: {e}")),
            }
        }
        if parley {
            problems.extend(check_roles(&identities));
        }
        if !problems.is_empty() {
            return Err(fail(problems));
        }
        let info = TargetInfo {
            name: profile.name.clone().unwrap_or_else(|| base.clone()),
            base_url: base.clone(),
            mcp_url,
            mcp_revision: revision,
            server_version: manifest.version.clone(),
            profiles: manifest.profiles.clone(),
            spawned_reference: server.is_some(),
            profile_path,
        };
        Ok(Self {
            info,
            profile,
            manifest,
            identities,
            timeout,
            http,
            mcp,
            _server: server,
        })
    }
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(n).collect::<String>())
    }
}

/// The rights each role must (or must not) hold for the vectors' expectations to make sense.
pub fn check_roles(ids: &BTreeMap<Role, Identity>) -> Vec<String> {
    let mut problems = Vec::new();
    let has = |r: Role, right: &str| {
        ids.get(&r)
            .is_some_and(|i| i.rights.iter().any(|x| x == right))
    };
    let human = |r: Role| {
        ids.get(&r).is_some_and(|i| {
            i.author_kind.as_deref() == Some("human") || i.identity.starts_with("human:")
        })
    };
    for (role, need) in [
        (Role::AgentA, &["read", "write"][..]),
        (Role::AgentB, &["read", "write"][..]),
        (Role::Moderator, &["read", "write", "lock"][..]),
        (Role::Verifier, &["read", "write", "verify"][..]),
        (Role::Reader, &["read"][..]),
        (Role::Limited, &["read", "write"][..]),
    ] {
        if !ids.contains_key(&role) {
            continue;
        }
        for right in need {
            if !has(role, right) {
                problems.push(format!(
                    "role {role} must hold the `{right}` right (whoami lists {:?})",
                    ids[&role].rights
                ));
            }
        }
    }
    for (role, forbidden) in [
        (Role::AgentA, &["lock", "verify"][..]),
        (Role::AgentB, &["lock", "verify"][..]),
        (Role::Verifier, &["lock"][..]),
        (Role::Reader, &["write", "lock", "verify"][..]),
        (Role::Limited, &["lock", "verify"][..]),
    ] {
        for right in forbidden {
            if ids.contains_key(&role) && has(role, right) {
                problems.push(format!(
                    "role {role} must not hold the `{right}` right: the vectors expect it to be refused"
                ));
            }
        }
    }
    if ids.contains_key(&Role::Human) && !human(Role::Human) {
        problems.push("role human must be a `human:` identity".into());
    }
    for r in [
        Role::AgentA,
        Role::AgentB,
        Role::Moderator,
        Role::Verifier,
        Role::Reader,
        Role::Limited,
    ] {
        if ids.contains_key(&r) && human(r) {
            problems.push(format!("role {r} must not be a human identity"));
        }
    }
    if let Some(l) = ids.get(&Role::Limited) {
        match l.quota_per_minute {
            Some(q) if q < 50 => {}
            other => problems.push(format!(
                "role limited needs a quota below 50 writes/minute so a 50-attempt step can exceed it (whoami says {other:?})"
            )),
        }
    }
    let mut seen: BTreeMap<&str, Role> = BTreeMap::new();
    for (r, i) in ids {
        if let Some(prev) = seen.insert(&i.identity, *r) {
            problems.push(format!(
                "roles {prev} and {r} share the identity {}: the vectors need distinct parties",
                i.identity
            ));
        }
    }
    problems
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a panic is the failure report
mod tests {
    use super::*;

    #[test]
    fn profile_loads_and_rejects_unknown_fields() {
        let dir = tempfile::tempdir().unwrap();
        let good = dir.path().join("good.toml");
        std::fs::write(
            &good,
            "format_version = 1\nbase_url = \"http://127.0.0.1:8080\"\nmcp_revision = \"2026-07-28\"\n\
             concurrency = 4\n[tokens]\nagent_a = \"a\"\nreader = \"r\"\n[ssp]\nskills = { agent_a = [\"x\"] }\n",
        )
        .unwrap();
        let p = Profile::load(&good).unwrap();
        assert_eq!(p.mcp_revision, Some(McpRevision::V2026_07_28));
        assert_eq!(p.tokens[&Role::Reader], "r");
        let bad = dir.path().join("bad.toml");
        std::fs::write(
            &bad,
            "format_version = 1\nbase_url = \"http://x\"\ncolour = 1\n",
        )
        .unwrap();
        assert!(
            Profile::load(&bad)
                .unwrap_err()
                .to_string()
                .contains("colour")
        );
        let anon = dir.path().join("anon.toml");
        std::fs::write(
            &anon,
            "format_version = 1\nbase_url = \"http://x\"\n[tokens]\nanonymous = \"t\"\n",
        )
        .unwrap();
        assert!(Profile::load(&anon).is_err());
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
