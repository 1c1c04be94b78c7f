//! Target profiles and the prepared target.
//!
//! A profile says where the target is and how to reach it; the keys the engine knows are
//! transport-level (`base_url`, MCP endpoint and revision, timeout, concurrency, `[limits]`,
//! `[tls]`). Every other
//! top-level key belongs to a protocol (`[tokens]` to Parley, `[ssp]` to SSP) and is kept
//! raw for it: the engine only checks that some registered protocol claims it, so a typo is
//! still a load error. Each protocol's pre-flight then stores what it learnt from the target
//! (manifest, identities, bindings) as a typed *part* of the [`Target`].

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::binding::{self, Binding};
use crate::transport::budget::TimeScale;
use crate::transport::limits::Limits;
use crate::transport::tls::TlsOptions;
use crate::transport::{Client, McpRevision};

/// The TOML target profile (`--target FILE`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Profile {
    /// Must be 1.
    pub format_version: u32,
    /// Display name of the target.
    #[serde(default)]
    pub name: Option<String>,
    /// Origin the HTTP routes are relative to (`http://127.0.0.1:8080`).
    pub base_url: String,
    /// MCP endpoint path or URL; default: what the target declares, else `/mcp`.
    #[serde(default)]
    pub mcp_endpoint: Option<String>,
    /// MCP revision to speak (default 2025-11-25).
    #[serde(default)]
    pub mcp_revision: Option<McpRevision>,
    /// Per-request timeout in milliseconds (default 10000), before the time scale.
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    /// Factor of every timeout and waiting bound (default 1; `--time-scale` overrides it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_scale: Option<TimeScale>,
    /// Concurrent checks (default 8).
    #[serde(default)]
    pub concurrency: Option<usize>,
    /// What the harness reads from a response at most (`[limits]`; default 16 MiB bodies).
    #[serde(default)]
    pub limits: Limits,
    /// How an `https://` target is trusted (`[tls]`: `ca_cert`, `insecure`); the command
    /// line's `--ca-cert`/`--insecure` override it.
    #[serde(default, skip_serializing_if = "TlsOptions::is_default")]
    pub tls: TlsOptions,
    /// Protocol sections (`tokens`, `ssp`, …), read by the protocol that claims each key.
    #[serde(flatten)]
    pub sections: toml::Table,
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
    /// A profile with only the engine's keys set.
    pub fn new(base_url: &str) -> Self {
        Self {
            format_version: 1,
            name: None,
            base_url: base_url.to_string(),
            mcp_endpoint: None,
            mcp_revision: None,
            timeout_ms: None,
            time_scale: None,
            concurrency: None,
            limits: Limits::default(),
            tls: TlsOptions::default(),
            sections: toml::Table::new(),
        }
    }

    /// Reads a profile file; `validate` checks the protocol sections (see
    /// [`crate::engine::protocol::load_profile`]).
    pub fn load(
        path: &Path,
        validate: impl Fn(&Self) -> Result<(), String>,
    ) -> Result<Self, TargetError> {
        let err = |message: String| TargetError::Profile {
            path: path.display().to_string(),
            message,
        };
        let text = std::fs::read_to_string(path).map_err(|e| err(e.to_string()))?;
        let mut p = Self::parse(&text).map_err(err)?;
        if let Some(dir) = path.parent() {
            p.tls = p.tls.relative_to(dir);
        }
        validate(&p).map_err(|m| TargetError::Profile {
            path: path.display().to_string(),
            message: m,
        })?;
        Ok(p)
    }

    /// Parses profile text and checks the engine's own keys (protocol sections are kept raw).
    pub fn parse(text: &str) -> Result<Self, String> {
        let p: Self = toml::from_str(text).map_err(|e| e.to_string())?;
        if p.format_version != 1 {
            return Err(format!(
                "format_version {} is not supported (expected 1)",
                p.format_version
            ));
        }
        p.limits.validate()?;
        if url::Url::parse(&p.base_url).is_err() {
            return Err(format!("base_url {:?} is not an absolute URL", p.base_url));
        }
        Ok(p)
    }

    /// A protocol section by key (`tokens`, `ssp`).
    pub fn section(&self, key: &str) -> Option<&toml::Value> {
        self.sections.get(key)
    }
}

/// How to connect: overrides from the command line and what the run will use.
#[derive(Debug, Clone)]
pub struct ConnectOptions {
    /// `--mcp-revision` (overrides the profile).
    pub revision_override: Option<McpRevision>,
    /// Profile file (for reproduction commands).
    pub profile_path: Option<String>,
    /// Bindings the run selects (a protocol pre-flights only those; empty = every one, see
    /// [`ConnectOptions::selects`]).
    pub transports: Vec<Binding>,
    /// `--ca-cert`/`--insecure` (override the profile's `[tls]`).
    pub tls: TlsOptions,
    /// `--time-scale` (overrides the profile's `time_scale`).
    pub time_scale: Option<TimeScale>,
}

impl Default for ConnectOptions {
    /// No overrides; every binding selected.
    fn default() -> Self {
        Self {
            revision_override: None,
            profile_path: None,
            transports: Vec::new(),
            tls: TlsOptions::default(),
            time_scale: None,
        }
    }
}

impl ConnectOptions {
    /// Whether the run selects `binding` (no `--transport` choice selects every one).
    pub fn selects(&self, binding: Binding) -> bool {
        binding::selects(&self.transports, binding)
    }

    /// Default options speaking MCP `revision`.
    pub fn revision(revision: McpRevision) -> Self {
        Self {
            revision_override: Some(revision),
            ..Self::default()
        }
    }
}

/// A prepared target: profile, shared HTTP client, and one typed part per protocol filled
/// by its pre-flight. Keeps a spawned server alive for as long as it lives.
pub struct Target {
    /// Report information.
    pub info: TargetInfo,
    /// The profile.
    pub profile: Profile,
    /// Per-request timeout, scaled.
    pub timeout: Duration,
    /// HTTP client shared by every transport (connection pool).
    pub client: Client,
    parts: HashMap<TypeId, Arc<dyn Any + Send + Sync>>,
    keep_alive: Option<Box<dyn Any + Send + Sync>>,
}

impl std::fmt::Debug for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Target")
            .field("info", &self.info)
            .finish_non_exhaustive()
    }
}

impl Target {
    /// An empty target for `profile` (no pre-flight yet).
    pub fn new(profile: Profile, opts: &ConnectOptions) -> Result<Self, TargetError> {
        let time_scale = opts.time_scale.or(profile.time_scale).unwrap_or_default();
        if time_scale.factor() < 1.0 {
            // Shorter budgets are for tests and fast targets; said, not refused.
            tracing::warn!(
                "time scale {time_scale} < 1 shortens every timeout and wait: a wait it cuts \
                 short leaves its rule unjudged (e.g. expiries on a target keeping whole seconds)"
            );
        }
        let budget = time_scale.budget(
            crate::transport::PER_REQUEST,
            Duration::from_millis(profile.timeout_ms.unwrap_or(10_000)),
        );
        let timeout = budget.limit();
        let tls = profile.tls.overridden_by(&opts.tls);
        let client = Client::with_tls(budget, profile.limits, &tls)
            .map_err(|e| TargetError::Transport(e.to_string()))?;
        let base = profile.base_url.trim_end_matches('/').to_string();
        if let Some(w) = tls.warning() {
            tracing::warn!("{w}");
        }
        let revision = opts
            .revision_override
            .or(profile.mcp_revision)
            .unwrap_or_default();
        let info = TargetInfo {
            name: profile.name.clone().unwrap_or_else(|| base.clone()),
            mcp_url: format!("{base}/mcp"),
            base_url: base,
            mcp_revision: revision,
            server_version: None,
            profiles: Vec::new(),
            spawned_reference: false,
            profile_path: opts.profile_path.clone(),
            tls: TlsInfo::of(&profile.base_url, &tls),
            fingerprint: std::collections::BTreeMap::new(),
            time_scale,
        };
        Ok(Self {
            info,
            profile,
            timeout,
            client,
            parts: HashMap::new(),
            keep_alive: None,
        })
    }

    /// The factor of every timeout and waiting bound (the client carries it with the
    /// per-request budget; the report records it in `info`).
    pub fn time_scale(&self) -> TimeScale {
        self.client.time_scale()
    }

    /// Keeps `value` (a spawned server) alive as long as the target.
    pub fn keep_alive(&mut self, value: Box<dyn Any + Send + Sync>) {
        self.keep_alive = Some(value);
    }

    /// The part a protocol's pre-flight stored (`None` when that protocol did not run).
    pub fn part<T: Any + Send + Sync>(&self) -> Option<&T> {
        self.parts
            .get(&TypeId::of::<T>())
            .and_then(|p| p.downcast_ref::<T>())
    }

    /// Stores a protocol's part (replacing one of the same type).
    pub fn insert_part<T: Any + Send + Sync>(&mut self, part: T) {
        self.parts.insert(TypeId::of::<T>(), Arc::new(part));
    }

    /// A message for an error found before any check ran.
    pub fn preflight_error(&self, problems: Vec<String>) -> TargetError {
        TargetError::Preflight {
            base_url: self.info.base_url.clone(),
            problems,
        }
    }
}

/// Shortens `s` to `n` characters for a message.
pub fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(n).collect::<String>())
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
    /// Server version the target declares.
    #[serde(default)]
    pub server_version: Option<String>,
    /// Profiles the target enables.
    #[serde(default)]
    pub profiles: Vec<String>,
    /// Whether the reference server was spawned in process.
    pub spawned_reference: bool,
    /// Profile file used (for reproduction commands).
    #[serde(default)]
    pub profile_path: Option<String>,
    /// How the TLS server was trusted (`https://` targets, or TLS settings given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls: Option<TlsInfo>,
    /// What the target declared, by document (`parley/manifest`, `ssp/index`,
    /// `ssp/descriptor/<id>`): the `sha256:` of each one's canonical JSON, as the pre-flights
    /// read it (issue 30: which server state a report is evidence about).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub fingerprint: std::collections::BTreeMap<String, String>,
    /// The factor every timeout and waiting bound of the run was multiplied by
    /// (`--time-scale`; issue 30 item 5): a verdict reached under a larger budget says so.
    #[serde(default)]
    pub time_scale: TimeScale,
}

/// How an `https://` target's certificate was trusted, as a published report shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TlsInfo {
    /// Certificates were NOT verified (`--insecure`): the server's identity is unproven.
    pub insecure: bool,
    /// Extra trusted root file (`--ca-cert`), besides the bundled Mozilla roots.
    #[serde(default)]
    pub ca_cert: Option<String>,
}

impl TlsInfo {
    /// What to record for a target at `base_url` reached with `tls` (`None` for a plain
    /// `http://` target with default settings).
    pub fn of(base_url: &str, tls: &crate::transport::tls::TlsOptions) -> Option<Self> {
        (base_url.starts_with("https://") || !tls.is_default()).then(|| Self {
            insecure: tls.insecure,
            ca_cert: tls.ca_cert.as_ref().map(|p| p.display().to_string()),
        })
    }

    /// One line for the human-readable reports.
    pub fn describe(&self) -> String {
        let roots = match &self.ca_cert {
            Some(f) => format!("Mozilla roots + {f}"),
            None => "Mozilla roots".into(),
        };
        if self.insecure {
            "INSECURE — certificates not verified (--insecure)".into()
        } else {
            format!("verified ({roots})")
        }
    }
}

#[cfg(test)]
#[expect(clippy::unwrap_used, reason = "tests: a panic is the failure report")]
mod tests {
    use super::*;

    #[test]
    fn the_time_scale_comes_from_the_profile_unless_the_command_line_gives_one() {
        let text = "format_version = 1\nbase_url = \"http://127.0.0.1:9\"\ntimeout_ms = 100\ntime_scale = 5\n";
        let p = Profile::parse(text).unwrap();
        let t = Target::new(p.clone(), &ConnectOptions::default()).unwrap();
        assert_eq!(
            (
                t.timeout,
                t.time_scale().factor(),
                t.info.time_scale.factor()
            ),
            (Duration::from_millis(500), 5.0, 5.0)
        );
        let opts = ConnectOptions {
            time_scale: Some(TimeScale::new(2.0).unwrap()),
            ..ConnectOptions::default()
        };
        let t = Target::new(p, &opts).unwrap();
        assert_eq!(t.timeout, Duration::from_millis(200));
        let bad = text.replace("time_scale = 5", "time_scale = 0");
        assert!(Profile::parse(&bad).is_err(), "a factor of 0 is refused");
    }
}
