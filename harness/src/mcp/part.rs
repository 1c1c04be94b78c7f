//! What the MCP pre-flight learnt about the target: its endpoint, the `[mcp]` profile, and
//! which eras it speaks (so that a check of an era the server does not speak is `n/a`,
//! never a failure).

use serde_json::Value;

use super::profile::McpProfile;
use super::wire::{LEGACY, MODERN, Wire};
use crate::engine::finding::{Finding, Step};
use crate::engine::target::Target;

/// The 2025-11-25 era as the server answered `initialize`.
#[derive(Debug, Clone)]
pub struct LegacyFacts {
    /// The version it answered.
    pub version: String,
    /// Its `capabilities`.
    pub capabilities: Value,
    /// Whether it issued an `Mcp-Session-Id`.
    pub sessions: bool,
}

/// The 2026-07-28 era as the server answered `server/discover`.
#[derive(Debug, Clone)]
pub struct ModernFacts {
    /// `capabilities`.
    pub capabilities: Value,
    /// `supportedVersions` (the MCP26-1 exception and MCP26-6 depend on them).
    pub versions: Vec<String>,
}

impl ModernFacts {
    /// Whether `server/discover` lists `version`.
    pub fn serves(&self, version: &str) -> bool {
        self.versions.iter().any(|v| v == version)
    }
}

/// The MCP wing's part of a prepared target.
#[derive(Debug, Clone)]
pub struct McpPart {
    /// The MCP endpoint.
    pub url: String,
    /// The `[mcp]` table.
    pub profile: McpProfile,
    /// The 2025-11-25 era, or why it is not spoken.
    pub legacy: Result<LegacyFacts, String>,
    /// The 2026-07-28 era, or why it is not spoken.
    pub modern: Result<ModernFacts, String>,
    /// Whether the endpoint's host is a loopback name or address.
    pub loopback: bool,
}

impl McpPart {
    /// The 2025-11-25 facts, or `n/a` for the check.
    pub fn legacy(&self) -> Step<&LegacyFacts> {
        self.legacy.as_ref().map_err(|why| {
            Finding::unsupported(format!("n/a: the server does not speak {LEGACY}: {why}"))
        })
    }
    /// The 2026-07-28 facts, or `n/a` for the check.
    pub fn modern(&self) -> Step<&ModernFacts> {
        self.modern.as_ref().map_err(|why| {
            Finding::unsupported(format!("n/a: the server does not speak {MODERN}: {why}"))
        })
    }
    /// The capabilities of whichever era the server speaks (2025-11-25 first).
    pub fn capabilities(&self) -> Step<&Value> {
        match (&self.legacy, &self.modern) {
            (Ok(l), _) => Ok(&l.capabilities),
            (_, Ok(m)) => Ok(&m.capabilities),
            (Err(a), Err(b)) => Err(Finding::unsupported(format!(
                "the server speaks no MCP era the harness knows ({LEGACY}: {a}; {MODERN}: {b})"
            ))),
        }
    }
}

/// The MCP endpoint of `target`: the profile's `mcp_endpoint` (URL or path), else what the
/// target declared (another wing's pre-flight may have read it), else `/mcp`.
pub fn endpoint(target: &Target) -> String {
    match target.profile.mcp_endpoint.as_deref() {
        Some(e) if e.starts_with("http://") || e.starts_with("https://") => e.to_string(),
        Some(path) => format!("{}/{}", target.info.base_url, path.trim_start_matches('/')),
        None => target.info.mcp_url.clone(),
    }
}

/// Probes both eras once (each check repeats what it needs in its own transcript).
pub async fn probe(target: &Target, profile: McpProfile) -> McpPart {
    let url = endpoint(target);
    let mut wire = Wire::new(target.client.clone(), &url, profile.token.clone());
    let legacy = match wire.initialize(LEGACY, None).await {
        Err(f) => Err(f.message),
        Ok(a) => match a.result() {
            Some(r) => Ok(LegacyFacts {
                version: r
                    .get("protocolVersion")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
                capabilities: r.get("capabilities").cloned().unwrap_or(Value::Null),
                sessions: a.header("mcp-session-id").is_some(),
            }),
            None => Err(format!(
                "initialize answered HTTP {} {}",
                a.status,
                crate::engine::target::truncate(&a.text, 200)
            )),
        },
    };
    let modern = match wire
        .modern("server/discover", Value::Object(Default::default()), &[])
        .await
    {
        Err(f) => Err(f.message),
        Ok(a) => discover_facts(&a.result().cloned(), a.status, &a.text),
    };
    let loopback = url::Url::parse(&url)
        .ok()
        .and_then(|u| {
            u.host().map(|h| match h {
                url::Host::Domain(d) => d.eq_ignore_ascii_case("localhost"),
                url::Host::Ipv4(ip) => ip.is_loopback(),
                url::Host::Ipv6(ip) => ip.is_loopback(),
            })
        })
        .unwrap_or(false);
    McpPart {
        url,
        profile,
        legacy,
        modern,
        loopback,
    }
}

fn discover_facts(result: &Option<Value>, status: u16, text: &str) -> Result<ModernFacts, String> {
    let Some(r) = result else {
        return Err(format!(
            "server/discover answered HTTP {status} {}",
            crate::engine::target::truncate(text, 200)
        ));
    };
    let versions: Vec<String> = r
        .get("supportedVersions")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    if !versions.iter().any(|v| v == MODERN) {
        return Err(format!(
            "server/discover lists supportedVersions {versions:?}, without {MODERN}"
        ));
    }
    Ok(ModernFacts {
        capabilities: r.get("capabilities").cloned().unwrap_or(Value::Null),
        versions,
    })
}
