//! SSP provider: schema, demo skills, credentials, executions.
//!
//! [`SspState`] owns everything the provider routes (`crate::api::ssp`) need: the compiled
//! protocol schema, the skill catalogue (every descriptor validated against the schema at
//! startup — an invalid one refuses startup), the accepted credentials, and the execution
//! runner. Executions run on tokio tasks and are written through to SQLite on every status
//! change, so they stay readable after a restart (issue #3 §4).

pub mod auth;
pub mod catalogue;
pub mod schema;
pub mod skills;

use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::http::HeaderMap;
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use crate::config::Config;
use crate::domain::ssp::{
    Access, AuthRequirement, ErrorObject, Execution, Outcome, ParamSpec, ParamType,
    ValidationDetail, codes,
};
use crate::store::{self, Db};
use auth::CredentialSet;
use catalogue::Catalogue;
use schema::Schemas;
use skills::SkillKind;

/// The base URL used to validate descriptors at startup when none is configured.
pub const FALLBACK_BASE: &str = "http://127.0.0.1";

/// Terminal executions beyond this many are dropped from the memory cache (they stay in
/// SQLite and are read from there).
const CACHE_MAX: usize = 20_000;

/// Reads a Parley thread for `conform/forum-digest` (the `read_thread` body and its HTTP
/// status). Implemented by [`crate::service::ParleyService`]; kept as a narrow trait so the
/// provider does not depend on the rest of the Parley service.
pub trait ThreadReader: Send + Sync + 'static {
    /// `read_thread {thread}` without a token: `(status, body)`.
    fn read_thread(&self, thread: &str) -> (u16, Value);
}

impl ThreadReader for crate::service::ParleyService {
    fn read_thread(&self, thread: &str) -> (u16, Value) {
        let r = self.read_thread_as_system(thread);
        (r.status, r.body)
    }
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
    db: Db,
    schemas: Schemas,
    skills: Vec<Arc<Skill>>,
    creds: CredentialSet,
    catalogue: Catalogue,
    threads: Arc<dyn ThreadReader>,
    base_url: Option<String>,
    cache: Mutex<HashMap<String, Execution>>,
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

/// Everything that can go wrong serving a request, as an HTTP status + unified error.
#[derive(Debug, Clone, PartialEq)]
pub struct Refusal {
    /// HTTP status.
    pub status: u16,
    /// The unified error (seed §8.2).
    pub error: ErrorObject,
    /// `WWW-Authenticate` for 401s (SSP-AUTH-2).
    pub www_authenticate: Option<String>,
}

impl Refusal {
    /// A refusal without challenge.
    pub fn new(status: u16, error: ErrorObject) -> Self {
        Self {
            status,
            error,
            www_authenticate: None,
        }
    }

    /// 404 `SKILL_NOT_FOUND` for an unknown skill / descriptor (seed §8.3.4).
    pub fn skill_not_found(skill_id: &str) -> Self {
        Self::new(
            404,
            ErrorObject::new(
                codes::SKILL_NOT_FOUND,
                format!("Skill '{skill_id}' was not found"),
            )
            .with_details(json!({ "skill_id": skill_id })),
        )
    }

    /// 404 `SKILL_NOT_FOUND` for an unknown (or unreadable, SSP-INV-6) execution (SSP-INV-4).
    pub fn execution_not_found(execution_id: &str) -> Self {
        Self::new(
            404,
            ErrorObject::new(
                codes::SKILL_NOT_FOUND,
                format!("Execution '{execution_id}' was not found"),
            )
            .with_details(json!({ "execution_id": execution_id })),
        )
    }

    fn internal(e: &dyn std::fmt::Display) -> Self {
        tracing::error!(error = %e, "ssp provider storage failure");
        // The seed's seven codes have no "internal error"; the provider is (temporarily)
        // unable to serve the invocation endpoint: 503 ENDPOINT_UNREACHABLE with a retry.
        Self::new(
            503,
            ErrorObject::new(codes::ENDPOINT_UNREACHABLE, "provider storage unavailable")
                .with_retry(1000, 3),
        )
    }
}

/// A successful answer: HTTP status + JSON body (+ `Location` for 202 invocations).
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// HTTP status.
    pub status: u16,
    /// JSON body.
    pub body: Value,
    /// `Location` header.
    pub location: Option<String>,
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

impl SspState {
    /// Builds the provider: compiles the schema, validates every descriptor (an invalid
    /// one is an `Err`: the server refuses to start), and ends every execution a previous
    /// process left unfinished as `failed` (issue #3 §4). The error is a message (the
    /// server assembly's contract); [`SspState::with_threads`] gives the typed error.
    pub fn new(
        db: Db,
        config: &Config,
        parley: crate::service::ParleyService,
    ) -> Result<Self, String> {
        Self::with_threads(db, config, Arc::new(parley)).map_err(|e| e.to_string())
    }

    /// [`SspState::new`] with an already shared thread reader.
    pub fn with_threads(
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
            codes::SKILL_FAILED,
            "execution interrupted: the provider restarted before it finished",
        )
        .with_details(json!({ "reason": "provider_restart" }));
        let n = store::ssp::fail_interrupted(&db, &interrupted, chrono::Utc::now())?;
        if n > 0 {
            tracing::warn!(
                count = n,
                "ssp executions interrupted by a restart marked failed"
            );
        }
        Ok(Self {
            inner: Arc::new(Inner {
                db,
                schemas,
                skills,
                creds: CredentialSet::new(&config.ssp),
                catalogue,
                threads,
                base_url: config
                    .base_url
                    .as_ref()
                    .map(|b| b.trim_end_matches('/').to_string()),
                cache: Mutex::new(HashMap::new()),
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

    fn skill_by_id(&self, id: &str) -> Option<&Arc<Skill>> {
        self.inner.skills.iter().find(|s| s.id == id)
    }

    /// Fingerprints of every valid credential in the request (any method).
    pub fn valid_credentials(&self, headers: &HeaderMap, body: &[u8]) -> Vec<String> {
        self.inner.creds.valid_fingerprints(
            self.inner.skills.iter().map(|s| &s.auth),
            headers,
            body,
        )
    }

    /// `GET /.well-known/skill-sharing` (SSP-DISC-1..3). `filter` = the
    /// `capability_type` / `type` query values.
    pub fn index(
        &self,
        base: &str,
        authenticated: bool,
        filters: &[String],
    ) -> Result<Answer, Refusal> {
        const TYPES: [&str; 4] = ["plugin", "api", "knowledge", "task"];
        for f in filters {
            if !TYPES.contains(&f.as_str()) {
                // SSP-DISC-3: unknown value → 400 VALIDATION_ERROR.
                return Err(Refusal::new(
                    400,
                    crate::domain::ssp::validation_error(
                        "Unknown capability_type filter",
                        vec![ValidationDetail {
                            path: "/capability_type".into(),
                            message: "must be equal to one of the allowed values".into(),
                            expected: json!(TYPES),
                            actual: json!(f),
                        }],
                    ),
                ));
            }
        }
        let entries: Vec<Value> = self
            .inner
            .skills
            .iter()
            .filter(|s| s.access.visible(authenticated))
            .filter(|s| filters.iter().all(|f| *f == s.capability_type))
            .map(|s| {
                let d = skills::descriptor(s.kind, base);
                skills::index_entry(&d, &format!("{base}/ssp/skills/{}.json", s.kind.slug()))
            })
            .collect();
        Ok(Answer {
            status: 200,
            body: json!({
                "protocol": { "version": "1.0.0" },
                "provider": { "name": "conform reference server", "url": base },
                "skills": entries,
            }),
            location: None,
        })
    }

    /// `GET /ssp/skills/<slug>.json` (SSP-DISC-4): private descriptors need a valid
    /// credential (else 401), unknown ones are 404.
    pub fn descriptor(
        &self,
        base: &str,
        file: &str,
        authenticated: bool,
    ) -> Result<Answer, Refusal> {
        let slug = file.strip_suffix(".json").unwrap_or("");
        let Some(skill) = self.skill_by_slug(slug) else {
            return Err(Refusal::skill_not_found(file));
        };
        if !skill.access.visible(authenticated) {
            return Err(self.auth_required(
                skill,
                base,
                "Authentication is required to read this skill's descriptor",
            ));
        }
        Ok(Answer {
            status: 200,
            body: skills::descriptor(skill.kind, base),
            location: None,
        })
    }

    /// The 401 of SSP-AUTH-2, with URLs for the base the caller sees (the stored
    /// requirement was built for the startup base).
    fn auth_required(&self, skill: &Skill, base: &str, message: &str) -> Refusal {
        let mut req = skill.auth.clone();
        if let AuthRequirement::OAuth2 {
            authorization_url, ..
        } = &mut req
        {
            let d = skills::descriptor(skill.kind, base);
            if let Some(u) = d["auth"]["oauth2"]["authorization_url"].as_str() {
                *authorization_url = u.to_string();
            }
        }
        Refusal {
            status: 401,
            error: crate::domain::ssp::auth_required_error(&req, message),
            www_authenticate: Some(auth::www_authenticate(&req)),
        }
    }

    /// `POST /ssp/invoke/<slug>` after transport checks (size, content type): auth
    /// (SSP-AUTH-1..4), request schema and inputs (SSP-INV-2), then 202 + accepted
    /// response (SSP-INV-1) and the execution starts on a tokio task.
    pub fn invoke(
        &self,
        base: &str,
        slug: &str,
        headers: &HeaderMap,
        body: &[u8],
    ) -> Result<Answer, Refusal> {
        let Some(skill) = self.skill_by_slug(slug).cloned() else {
            return Err(Refusal::skill_not_found(slug));
        };
        let presented = self.inner.creds.presented(&skill.auth, headers, body);
        let credential =
            match crate::domain::ssp::decide_auth(&skill.auth, &presented, &skill.required) {
                crate::domain::ssp::AuthDecision::Allow { credential } => credential,
                crate::domain::ssp::AuthDecision::Unauthenticated => {
                    return Err(self.auth_required(
                        &skill,
                        base,
                        "Authentication is required to invoke this skill",
                    ));
                }
                crate::domain::ssp::AuthDecision::Forbidden { required, granted } => {
                    return Err(Refusal::new(
                        403,
                        crate::domain::ssp::permission_denied_error(&required, &granted),
                    ));
                }
            };
        let request: Value = serde_json::from_slice(body).map_err(|e| {
            Refusal::new(
                400,
                crate::domain::ssp::validation_error(
                    "Request body is not valid JSON",
                    vec![ValidationDetail {
                        path: String::new(),
                        message: format!("malformed JSON: {e}"),
                        expected: json!("an InvocationRequest JSON object"),
                        actual: json!("malformed JSON"),
                    }],
                ),
            )
        })?;
        let violations = self.inner.schemas.validate("InvocationRequest", &request);
        if !violations.is_empty() {
            return Err(Refusal::new(
                400,
                crate::domain::ssp::validation_error(
                    "Invalid InvocationRequest document",
                    violations,
                ),
            ));
        }
        // SSP-INV-2: the request must name this endpoint's skill; the wrong skill never runs.
        let requested = request["skill_id"].as_str().unwrap_or_default();
        if requested != skill.id {
            return Err(Refusal::skill_not_found(requested));
        }
        let empty = Map::new();
        let inputs = request["inputs"].as_object().unwrap_or(&empty);
        let inputs = skill.validate_inputs(inputs).map_err(|d| {
            Refusal::new(
                400,
                crate::domain::ssp::validation_error("Invalid inputs for this skill", d),
            )
        })?;
        let timeout = crate::domain::ssp::effective_timeout_ms(
            skill.timeout_ms,
            request["context"]["timeout_ms"].as_f64(),
        );
        let exec = self.create_execution(&skill, credential, Value::Object(inputs.clone()))?;
        let response = exec.to_response();
        let this = self.clone();
        let id = exec.id.clone();
        tokio::spawn(async move { this.run(skill, id, inputs, timeout).await });
        Ok(Answer {
            status: 202,
            location: Some(format!("{base}/ssp/status/{}", exec.id)),
            body: response,
        })
    }

    fn next_id(&self) -> String {
        let n = self.inner.counter.fetch_add(1, Ordering::Relaxed);
        let mut h = Sha256::new();
        h.update(self.inner.id_key);
        h.update(n.to_le_bytes());
        format!("exec-{}", &hex::encode(h.finalize())[..24])
    }

    fn create_execution(
        &self,
        skill: &Skill,
        credential: Option<String>,
        inputs: Value,
    ) -> Result<Execution, Refusal> {
        // SSP-INV-7: ids are unique (keyed hash of a counter; the primary key double-checks).
        for _ in 0..8 {
            let exec = Execution::accepted(
                self.next_id(),
                skill.id.clone(),
                credential.clone(),
                inputs.clone(),
                chrono::Utc::now(),
            );
            if store::ssp::insert_execution(&self.inner.db, &exec)
                .map_err(|e| Refusal::internal(&e))?
            {
                self.lock_cache().insert(exec.id.clone(), exec.clone());
                return Ok(exec);
            }
        }
        Err(Refusal::internal(&"could not draw a fresh execution id"))
    }

    fn lock_cache(&self) -> std::sync::MutexGuard<'_, HashMap<String, Execution>> {
        // A poisoned lock means a panic elsewhere mid-update; the map itself is still valid.
        self.inner.cache.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Applies an outcome to a running execution: memory first, then SQLite (SSP-INV-3
    /// enforced by the domain and by the guarded UPDATE).
    fn transition(&self, id: &str, outcome: Outcome) {
        let updated = {
            let mut cache = self.lock_cache();
            let Some(e) = cache.get_mut(id) else { return };
            if let Err(err) = e.apply(outcome, chrono::Utc::now()) {
                tracing::error!(%err, execution = id, "refused status change");
                return;
            }
            e.clone()
        };
        match store::ssp::update_execution(&self.inner.db, &updated) {
            Ok(true) => {}
            Ok(false) => tracing::error!(execution = id, "stored execution already terminal"),
            Err(e) => tracing::error!(error = %e, execution = id, "could not persist execution"),
        }
        if updated.status.is_terminal() {
            let mut cache = self.lock_cache();
            if cache.len() > CACHE_MAX {
                cache.remove(id);
            }
        }
    }

    async fn run(
        self,
        skill: Arc<Skill>,
        id: String,
        inputs: Map<String, Value>,
        timeout: Option<u64>,
    ) {
        if skill.kind.reports_running() {
            self.transition(&id, Outcome::Running);
        }
        let work = self.execute(&skill, &inputs);
        let result = match timeout {
            Some(ms) => match tokio::time::timeout(Duration::from_millis(ms), work).await {
                Ok(r) => r,
                Err(_) => {
                    // SSP-INV-5: overrun → timeout with INVOCATION_TIMEOUT.
                    self.transition(
                        &id,
                        Outcome::Timeout(crate::domain::ssp::timeout_error(ms, &id)),
                    );
                    return;
                }
            },
            None => work.await,
        };
        let outcome = match result {
            Ok(output) => match &skill.output_schema {
                // SSP-INV-3: a completed output is valid against output.schema.
                Some(v) if !v.is_valid(&output) => Outcome::Failed(
                    ErrorObject::new(
                        codes::SKILL_FAILED,
                        "the skill produced an output that breaks its output.schema",
                    )
                    .with_details(json!(
                        v.iter_errors(&output)
                            .map(|e| schema::detail_of(&e))
                            .collect::<Vec<_>>()
                    )),
                ),
                _ => Outcome::Completed(output),
            },
            Err(e) => Outcome::Failed(e),
        };
        self.transition(&id, outcome);
    }

    async fn execute(
        &self,
        skill: &Skill,
        inputs: &Map<String, Value>,
    ) -> Result<Value, ErrorObject> {
        let s = |k: &str| {
            inputs
                .get(k)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        match skill.kind {
            SkillKind::Echo => Ok(skills::echo(inputs)),
            SkillKind::TextStats => Ok(skills::text_stats(&s("text"))),
            SkillKind::SlowTask => {
                let ms = inputs
                    .get("delay_ms")
                    .and_then(Value::as_f64)
                    .unwrap_or(0.0);
                Ok(
                    skills::slow_task(ms.clamp(0.0, skills::SLOW_TASK_MAX_DELAY_MS as f64) as u64)
                        .await,
                )
            }
            SkillKind::AlwaysFails => Err(skills::always_fails(&s("reason"))),
            SkillKind::Overrun => Ok(skills::overrun().await),
            SkillKind::SpecLookup => {
                let id = s("id");
                match self.inner.catalogue.get(&id) {
                    Some(r) => {
                        let mut out = json!({ "id": r.id, "level": r.level, "rule": r.rule, "source": r.source });
                        if let (Some(o), Some(t)) = (out.as_object_mut(), &r.seed_text) {
                            o.insert("seed_text".into(), json!(t));
                        }
                        Ok(out)
                    }
                    None => Err(ErrorObject::new(
                        "REQUIREMENT_NOT_FOUND",
                        format!("no requirement {id} in the catalogue"),
                    )
                    .with_details(json!({ "id": id }))),
                }
            }
            SkillKind::ForumDigest => {
                let thread = s("thread");
                let reader = Arc::clone(&self.inner.threads);
                let t = thread.clone();
                // The Parley service is synchronous (SQLite): off the async workers.
                let (status, body) = tokio::task::spawn_blocking(move || reader.read_thread(&t))
                    .await
                    .map_err(|e| {
                        ErrorObject::new(codes::SKILL_FAILED, format!("thread read aborted: {e}"))
                    })?;
                match status {
                    200 => skills::digest(&body),
                    404 => Err(ErrorObject::new("THREAD_NOT_FOUND", format!("Parley thread '{thread}' was not found"))
                        .with_details(json!({ "thread": thread }))),
                    _ => Err(ErrorObject::new(codes::SKILL_FAILED, format!("Parley read_thread refused ({status})"))
                        .with_details(json!({ "thread": thread, "status": status, "parley_error": body.get("error") }))),
                }
            }
        }
    }

    fn load_execution(&self, id: &str) -> Result<Option<Execution>, Refusal> {
        if let Some(e) = self.lock_cache().get(id) {
            return Ok(Some(e.clone()));
        }
        store::ssp::get_execution(&self.inner.db, id).map_err(|e| Refusal::internal(&e))
    }

    /// Loads an execution the caller may read (SSP-INV-6: others get the same 404 as an
    /// unknown id).
    fn readable_execution(&self, id: &str, headers: &HeaderMap) -> Result<Execution, Refusal> {
        let exec = self
            .load_execution(id)?
            .ok_or_else(|| Refusal::execution_not_found(id))?;
        let open = self.skill_by_id(&exec.skill_id).is_none_or(|s| s.is_open());
        if !open || exec.credential.is_some() {
            // Status/result polls have no body: the HMAC scheme signs "" (ssp.md §7).
            let mine = self.valid_credentials(headers, b"");
            if !crate::domain::ssp::may_read_execution(exec.credential.as_deref(), &mine) {
                return Err(Refusal::execution_not_found(id));
            }
        }
        Ok(exec)
    }

    /// `GET /ssp/status/{execution_id}` (SSP-INV-3).
    pub fn status(&self, id: &str, headers: &HeaderMap) -> Result<Answer, Refusal> {
        let exec = self.readable_execution(id, headers)?;
        Ok(Answer {
            status: 200,
            body: exec.to_response(),
            location: None,
        })
    }

    /// `GET /ssp/result/{execution_id}` (SSP-INV-4): 200 once terminal, 202 with the current
    /// response (no output) before.
    pub fn result(&self, id: &str, headers: &HeaderMap) -> Result<Answer, Refusal> {
        let exec = self.readable_execution(id, headers)?;
        let status = if exec.status.is_terminal() { 200 } else { 202 };
        Ok(Answer {
            status,
            body: exec.to_response(),
            location: None,
        })
    }
}
