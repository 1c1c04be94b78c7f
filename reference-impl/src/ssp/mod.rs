//! SSP provider: the service layer of the Skill Sharing Protocol, and what it serves.
//!
//! Layered like Parley: the routes (`crate::ssp::api`) → the operations of [`SspState`]
//! (`service`: one function per operation) → the pure rules (`crate::domain::ssp`) → the
//! executions' storage (`crate::store::ssp`). [`SspState`] owns the compiled protocol
//! schema, the skill catalogue (every descriptor validated against the schema at startup —
//! an invalid one refuses startup), the accepted credentials (`auth`) and the execution
//! runner (`runner`). Executions run on tokio tasks and are written through to SQLite on
//! every status change, so they stay readable after a restart (issue #3 §4). It also owns
//! the provider's limits (issue 13): the executions' memory cache bound and retention
//! (`crate::store::ssp`) and the per-client invocation rate limit (`limits`).

pub mod api;
pub mod auth;
pub mod catalogue;
pub mod limits;
mod runner;
pub mod schema;
mod service;
pub use service::CAPABILITY_TYPES;
pub mod skills;

pub use service::{Answer, Hidden, MAX_INVOCATION_BODY, Refusal};

use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use axum::http::HeaderMap;
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use crate::config::Config;
use crate::domain::ssp::{
    Access, AuthRequirement, ErrorObject, ParamSpec, ParamType, ValidationDetail, codes,
};
use crate::store::ssp::{CacheUsage, Executions, Retention};
use crate::store::{self, Db};
use auth::CredentialSet;
use catalogue::Catalogue;
use schema::Schemas;
use skills::SkillKind;

/// The base URL used to validate descriptors at startup when none is configured.
pub const FALLBACK_BASE: &str = "http://127.0.0.1";

/// Reads a Parley thread for `conform/forum-digest` (the `read_thread` body and its HTTP
/// status). Implemented for the Parley service where the server joins both wings
/// (`crate::server`): a narrow trait, so the SSP wing imports nothing of the Parley wing.
pub trait ThreadReader: Send + Sync + 'static {
    /// `read_thread {thread}` without a token: `(status, body)`.
    fn read_thread(&self, thread: &str) -> (u16, Value);
}

/// One skill as the provider enforces it, derived from its validated descriptor.
pub struct Skill {
    /// Which demo skill.
    pub kind: SkillKind,
    /// `conform/<slug>`.
    pub id: String,
    /// Access policy.
    pub access: Access,
    /// Capability type (wire spelling).
    pub capability_type: String,
    /// Auth method.
    pub auth: AuthRequirement,
    /// Permissions needed to invoke.
    pub required: Vec<String>,
    /// The input definitions.
    pub params: Vec<ParamSpec>,
    param_schemas: HashMap<String, jsonschema::Validator>,
    output_schema: Option<jsonschema::Validator>,
    /// `endpoint.timeout_ms`.
    pub timeout_ms: Option<f64>,
}

impl std::fmt::Debug for Skill {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Skill")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

impl Skill {
    /// True when anyone may invoke it and read its executions (public, auth none).
    pub fn is_open(&self) -> bool {
        self.access == Access::Public && self.auth == AuthRequirement::None
    }

    /// Checks the request's `inputs` (SSP-INV-2), defaults applied.
    pub fn validate_inputs(
        &self,
        inputs: &Map<String, Value>,
    ) -> Result<Map<String, Value>, Vec<ValidationDetail>> {
        crate::domain::ssp::validate_inputs(&self.params, inputs, |spec, v| {
            let Some(val) = self.param_schemas.get(&spec.name) else {
                return vec![];
            };
            val.iter_errors(v)
                .map(|e| {
                    let mut d = schema::detail_of(&e);
                    d.path = format!(
                        "/inputs/{}{}",
                        crate::domain::ssp::escape_pointer(&spec.name),
                        d.path
                    );
                    d
                })
                .collect()
        })
    }
}

/// Why the provider refused to start.
#[derive(Debug, thiserror::Error)]
pub enum SspInitError {
    /// The schema could not be compiled.
    #[error("ssp schema: {0}")]
    Schema(#[from] schema::SchemaError),
    /// A descriptor is invalid against the schema (or inconsistent).
    #[error("ssp descriptor {skill} is invalid: {reason}")]
    Descriptor {
        /// Skill id.
        skill: String,
        /// What is wrong.
        reason: String,
    },
    /// The requirement catalogue could not be read.
    #[error("ssp requirement catalogue: {0}")]
    Catalogue(String),
    /// Storage failed.
    #[error("ssp store: {0}")]
    Store(#[from] store::StoreError),
}

struct Inner {
    schemas: Schemas,
    skills: Vec<Arc<Skill>>,
    creds: CredentialSet,
    catalogue: Catalogue,
    threads: Arc<dyn ThreadReader>,
    base_url: Option<String>,
    executions: Executions,
    rate: Option<limits::RateLimiter>,
    id_key: [u8; 32],
    counter: AtomicU64,
}

/// The SSP provider's shared state (cheap to clone).
#[derive(Clone)]
pub struct SspState {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for SspState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SspState")
            .field("skills", &self.inner.skills)
            .finish_non_exhaustive()
    }
}

fn id_key() -> [u8; 32] {
    // Unpredictable per process: std's RandomState is seeded from the OS; mixed with time
    // and pid. Execution ids are derived from it, so they cannot be guessed (SSP-INV-6).
    let mut h = Sha256::new();
    for i in 0..4u64 {
        let mut x = std::collections::hash_map::RandomState::new().build_hasher();
        x.write_u64(i);
        h.update(x.finish().to_le_bytes());
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    h.update(now.to_le_bytes());
    h.update(std::process::id().to_le_bytes());
    h.finalize().into()
}

fn build_skill(schemas: &Schemas, kind: SkillKind) -> Result<Skill, SspInitError> {
    let d = skills::descriptor(kind, FALLBACK_BASE);
    let err = |reason: String| SspInitError::Descriptor {
        skill: kind.id(),
        reason,
    };
    let violations = schemas.validate("SkillDescriptor", &d);
    if !violations.is_empty() {
        return Err(err(serde_json::to_string(&violations).unwrap_or_default()));
    }
    let access =
        serde_json::from_value::<Access>(d["access"].clone()).map_err(|e| err(e.to_string()))?;
    let header = |v: &Value| v.as_str().unwrap_or_default().to_string();
    let auth = match d["auth"]["type"].as_str() {
        Some("none") => AuthRequirement::None,
        Some("api_key") => AuthRequirement::ApiKey {
            header: header(&d["auth"]["header"]),
        },
        Some("oauth2") => AuthRequirement::OAuth2 {
            authorization_url: header(&d["auth"]["oauth2"]["authorization_url"]),
            required_scopes: vec![auth::INVOKE_SCOPE.to_string()],
        },
        Some("custom") => AuthRequirement::Custom {
            header: skills::SIGNATURE_HEADER.to_string(),
        },
        other => return Err(err(format!("auth type {other:?}"))),
    };
    let mut params = Vec::new();
    let mut param_schemas = HashMap::new();
    for p in d["inputs"].as_array().into_iter().flatten() {
        let name = header(&p["name"]);
        if params.iter().any(|x: &ParamSpec| x.name == name) {
            // SSP-SCH-4: inputs[].name unique (not expressible in the schema).
            return Err(err(format!("duplicate input {name}")));
        }
        let ty = p["type"]
            .as_str()
            .and_then(ParamType::parse)
            .ok_or_else(|| err(format!("input {name} type")))?;
        if let Some(s) = p.get("schema") {
            param_schemas.insert(name.clone(), schema::compile(s).map_err(err)?);
        }
        params.push(ParamSpec {
            name,
            ty,
            required: p["required"].as_bool().unwrap_or(false),
            default: p.get("default").cloned(),
        });
    }
    let output_schema = d["output"]
        .get("schema")
        .map(schema::compile)
        .transpose()
        .map_err(err)?;
    Ok(Skill {
        kind,
        id: kind.id(),
        access,
        capability_type: header(&d["capability_type"]),
        required: if auth == AuthRequirement::None {
            vec![]
        } else {
            vec![auth::INVOKE_SCOPE.to_string()]
        },
        auth,
        params,
        param_schemas,
        output_schema,
        timeout_ms: d["endpoint"]["timeout_ms"].as_f64(),
    })
}

/// The executions' store with the configured cache bound and retention, swept once.
fn executions(db: Db, config: &Config) -> Result<Executions, SspInitError> {
    let l = &config.ssp_limits;
    let retention = Retention {
        // Beyond chrono's range (centuries) means no age limit.
        max_age: l
            .retention_max_age
            .and_then(|d| chrono::Duration::from_std(d).ok()),
        max_count: l.retention_max_count,
    };
    let executions = Executions::new(db, l.cache_max_bytes, retention);
    executions.sweep(chrono::Utc::now())?;
    Ok(executions)
}

impl SspState {
    /// Builds the provider: compiles the schema, validates every descriptor (an invalid
    /// one is an `Err`: the server refuses to start), and ends every execution a previous
    /// process left unfinished as `failed` (issue #3 §4). `threads` reads the forum for the
    /// `forum-digest` skill.
    pub fn new(
        db: Db,
        config: &Config,
        threads: Arc<dyn ThreadReader>,
    ) -> Result<Self, SspInitError> {
        let schemas = Schemas::load()?;
        let skills = SkillKind::ALL
            .into_iter()
            .map(|k| build_skill(&schemas, k).map(Arc::new))
            .collect::<Result<Vec<_>, _>>()?;
        if let Some(base) = &config.base_url {
            // The descriptors actually served must be valid too.
            for k in SkillKind::ALL {
                let v = schemas.validate(
                    "SkillDescriptor",
                    &skills::descriptor(k, base.trim_end_matches('/')),
                );
                if !v.is_empty() {
                    return Err(SspInitError::Descriptor {
                        skill: k.id(),
                        reason: format!(
                            "with base URL {base}: {}",
                            serde_json::to_string(&v).unwrap_or_default()
                        ),
                    });
                }
            }
        }
        let catalogue = Catalogue::load().map_err(SspInitError::Catalogue)?;
        let interrupted = ErrorObject::new(
            codes::ENDPOINT_UNREACHABLE,
            "execution interrupted: the provider restarted before it finished",
        )
        .with_details(json!({ "reason": "provider_restart" }));
        let executions = executions(db, config)?;
        let n = executions.fail_interrupted(&interrupted, chrono::Utc::now())?;
        if n > 0 {
            tracing::warn!(
                count = n,
                "ssp executions interrupted by a restart marked failed"
            );
        }
        let limits = &config.ssp_limits;
        Ok(Self {
            inner: Arc::new(Inner {
                schemas,
                skills,
                creds: CredentialSet::new(&config.ssp),
                catalogue,
                threads,
                base_url: config
                    .base_url
                    .as_ref()
                    .map(|b| b.trim_end_matches('/').to_string()),
                executions,
                rate: limits
                    .invocations_per_minute
                    .map(|n| limits::RateLimiter::new(n, limits.invocation_burst)),
                id_key: id_key(),
                counter: AtomicU64::new(0),
            }),
        })
    }

    /// The compiled protocol schema.
    pub fn schemas(&self) -> &Schemas {
        &self.inner.schemas
    }

    /// The skills, in index order.
    pub fn skills(&self) -> &[Arc<Skill>] {
        &self.inner.skills
    }

    /// The configured base URL, if any.
    pub fn base_url(&self) -> Option<&str> {
        self.inner.base_url.as_deref()
    }

    pub(crate) fn skill_by_slug(&self, slug: &str) -> Option<&Arc<Skill>> {
        self.inner.skills.iter().find(|s| s.kind.slug() == slug)
    }

    pub(crate) fn skill_by_id(&self, id: &str) -> Option<&Arc<Skill>> {
        self.inner.skills.iter().find(|s| s.id == id)
    }

    /// How full the executions' memory cache is.
    pub fn execution_cache(&self) -> CacheUsage {
        self.inner.executions.usage()
    }

    /// Applies the retention policy now (it also runs at startup and on insert when due).
    pub fn sweep_executions(
        &self,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Result<usize, store::StoreError> {
        self.inner.executions.sweep(now)
    }

    /// Fingerprints of every valid credential in the request (any method); `msg` is what
    /// an HMAC signature covers.
    pub fn valid_credentials(&self, headers: &HeaderMap, msg: &auth::Signed<'_>) -> Vec<String> {
        self.inner
            .creds
            .valid_fingerprints(self.inner.skills.iter().map(|s| &s.auth), headers, msg)
    }
}
