//! The SSP service: one function per provider operation, each in the order
//! authenticate → validate → decide (domain) → persist → respond, and every refusal as an
//! HTTP status with the unified error object of seed §8.2 (SSP-ERR-1).
//!
//! The routes (`crate::ssp::api`) only extract the request and write [`Answer`] /
//! [`Refusal`] to the wire; they build no error themselves. Decisions are the pure
//! `crate::domain::ssp`; executions are stored by `crate::store::ssp::Executions`.

use std::net::SocketAddr;

use axum::body::Body;
use axum::http::{HeaderMap, header};
use http_body_util::BodyExt;
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use super::auth::Signed;
use super::schema::Schemas;
use super::{FALLBACK_BASE, Skill, SspState, auth, skills};
use crate::domain::ssp::{
    AuthDecision, AuthRequirement, ErrorObject, Execution, JsonText, ValidationDetail, codes,
    validation_error,
};

/// The capability types of seed §3 (SSP-DISC-3: the discovery filter's values).
pub const CAPABILITY_TYPES: [&str; 4] = ["plugin", "api", "knowledge", "task"];

/// Largest accepted invocation body (64 KiB); larger → 413 with the unified error.
pub const MAX_INVOCATION_BODY: usize = 64 * 1024;

/// A refused request: HTTP status + unified error (+ challenge for 401s).
#[derive(Debug, Clone, PartialEq)]
pub struct Refusal {
    /// HTTP status.
    pub status: u16,
    /// The unified error (seed §8.2).
    pub error: ErrorObject,
    /// `WWW-Authenticate` for 401s (SSP-AUTH-2).
    pub www_authenticate: Option<String>,
    /// Set when an existing execution is answered as unknown to a caller who may not read
    /// it (SSP-INV-6). Never on the wire: the route keeps it as a response extension, so
    /// that a legal variant can take the notes' other reading (401/403).
    pub hidden: Option<Hidden>,
}

/// Who was refused an execution they may not read (SSP-INV-6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hidden {
    /// No valid credential (the notes also allow 401 `AUTH_REQUIRED`).
    Anonymous,
    /// Valid credentials, not the creator's (the notes also allow 403 `PERMISSION_DENIED`).
    OtherCredential,
}

/// A successful answer: HTTP status + JSON body (+ `Location` for 202 invocations).
#[derive(Debug, Clone)]
pub struct Answer {
    /// HTTP status.
    pub status: u16,
    /// JSON body, as text (an execution's output is never rebuilt as a tree).
    pub body: Box<RawValue>,
    /// `Location` header.
    pub location: Option<String>,
}

impl Answer {
    fn ok(status: u16, body: &impl Serialize) -> Result<Self, Refusal> {
        Ok(Self {
            status,
            body: serde_json::value::to_raw_value(body).map_err(|e| Refusal::internal(&e))?,
            location: None,
        })
    }

    fn execution(status: u16, exec: &Execution) -> Result<Self, Refusal> {
        Ok(Self {
            status,
            body: exec.to_response().map_err(|e| Refusal::internal(&e))?,
            location: None,
        })
    }
}

/// A `VALIDATION_ERROR` with one detail about the request as a whole (path `""`).
fn whole_request_invalid(
    status: u16,
    message: &str,
    what: &str,
    expected: Value,
    actual: Value,
) -> Refusal {
    Refusal::new(
        status,
        validation_error(
            message,
            vec![ValidationDetail {
                path: String::new(),
                message: what.into(),
                expected,
                actual,
            }],
        ),
    )
}

impl Refusal {
    /// A refusal without challenge.
    pub fn new(status: u16, error: ErrorObject) -> Self {
        Self {
            status,
            error,
            www_authenticate: None,
            hidden: None,
        }
    }

    /// 429 `ENDPOINT_UNREACHABLE` (SSP-ERR-3's table: a rate limit, code one of the seven):
    /// the client's invocations exceed `per_minute` sustained / `burst`; one is allowed
    /// again in `wait` (`error.retry.suggested_delay_ms`, which the route repeats as
    /// `Retry-After`).
    pub fn rate_limited(wait: std::time::Duration, per_minute: u32, burst: u32) -> Self {
        let ms = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX).max(1);
        Self::new(
            429,
            ErrorObject::new(
                codes::ENDPOINT_UNREACHABLE,
                format!(
                    "Too many invocations: at most {per_minute} per minute per client \
                     (bursts of {burst}); retry in {ms} ms"
                ),
            )
            .with_details(json!({ "invocations_per_minute": per_minute, "burst": burst }))
            .with_retry(ms, 3),
        )
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

    /// 404 for a path under `/ssp` or `/.well-known` that names no resource.
    pub fn no_resource(path: &str) -> Self {
        Self::new(
            404,
            ErrorObject::new(codes::SKILL_NOT_FOUND, format!("No SSP resource at {path}"))
                .with_details(json!({ "path": path })),
        )
    }

    /// 404 for a path segment that is not valid UTF-8 after percent-decoding: like any
    /// unknown resource, in the unified shape.
    pub fn bad_path(path: &str) -> Self {
        Self::new(
            404,
            ErrorObject::new(codes::SKILL_NOT_FOUND, "No SSP resource at this path")
                .with_details(json!({ "path": path })),
        )
    }

    /// The 405 answer (the route adds `Allow`). Seed §8.2 says `error.code` is one of the
    /// seven protocol codes: a method the resource does not accept makes the request
    /// invalid → `VALIDATION_ERROR`, with the seed §8.3.1 details array (SSP-ERR-3 would
    /// allow any code; the seed is stricter).
    pub fn method_not_allowed(method: &str, allow: &str) -> Self {
        whole_request_invalid(
            405,
            &format!("Method {method} not allowed here; allowed: {allow}"),
            "HTTP method not allowed for this resource",
            json!(allow.split(", ").collect::<Vec<_>>()),
            json!(method),
        )
    }

    pub(super) fn internal(e: &dyn std::fmt::Display) -> Self {
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

// 413 / 415 use VALIDATION_ERROR: the seed's §8.2 restricts error.code to its seven codes,
// and an oversized or non-JSON body is an invalid request.
fn body_too_large() -> Refusal {
    whole_request_invalid(
        413,
        &format!("Request body exceeds {MAX_INVOCATION_BODY} bytes"),
        "request body too large",
        json!({ "max_bytes": MAX_INVOCATION_BODY }),
        json!("larger body"),
    )
}

/// `host[:port]` with a DNS name / IPv4 address or a bracketed IPv6 address: anything else
/// could make the served URLs invalid (or inject text into them).
fn well_formed_host(h: &str) -> bool {
    let port_ok = |p: &str| !p.is_empty() && p.len() <= 5 && p.bytes().all(|b| b.is_ascii_digit());
    let (host, port) = if let Some(rest) = h.strip_prefix('[') {
        let Some((v6, after)) = rest.split_once(']') else {
            return false;
        };
        if v6.is_empty()
            || !v6
                .bytes()
                .all(|b| b.is_ascii_hexdigit() || b == b':' || b == b'.')
        {
            return false;
        }
        return after.is_empty() || after.strip_prefix(':').is_some_and(port_ok);
    } else {
        match h.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (h, None),
        }
    };
    !host.is_empty()
        && host.len() <= 253
        && host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-')
        && port.is_none_or(port_ok)
}

impl SspState {
    /// The base URL for URLs in documents: configured, else `http://<Host>` (only a
    /// well-formed host), else `http://127.0.0.1`.
    fn base(&self, headers: &HeaderMap) -> String {
        if let Some(b) = self.base_url() {
            return b.to_string();
        }
        headers
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
            .filter(|h| well_formed_host(h))
            .map(|h| format!("http://{h}"))
            .unwrap_or_else(|| FALLBACK_BASE.to_string())
    }

    /// Whether the request carries any valid credential (discovery is auth-aware). Reads
    /// have no body: the plain HMAC scheme signs "" (ssp.md §7), the replay-protected one
    /// method and path.
    fn authenticated(&self, headers: &HeaderMap, read: &Signed<'_>) -> bool {
        !self.valid_credentials(headers, read).is_empty()
    }

    /// `GET /.well-known/skill-sharing` (SSP-DISC-1..3). `filters` = the
    /// `capability_type` / `type` query values.
    pub fn index(
        &self,
        headers: &HeaderMap,
        filters: &[String],
        read: &Signed<'_>,
    ) -> Result<Answer, Refusal> {
        let authenticated = self.authenticated(headers, read);
        // Validate: SSP-DISC-3, an unknown value → 400 VALIDATION_ERROR.
        if let Some(f) = filters
            .iter()
            .find(|f| !CAPABILITY_TYPES.contains(&f.as_str()))
        {
            return Err(Refusal::new(
                400,
                validation_error(
                    "Unknown capability_type filter",
                    vec![ValidationDetail {
                        path: "/capability_type".into(),
                        message: "must be equal to one of the allowed values".into(),
                        expected: json!(CAPABILITY_TYPES),
                        actual: json!(f),
                    }],
                ),
            ));
        }
        // Decide (visibility, SSP-DISC-2) and respond.
        let base = self.base(headers);
        let entries: Vec<Value> = self
            .skills()
            .iter()
            .filter(|s| s.access.visible(authenticated))
            .filter(|s| filters.iter().all(|f| *f == s.capability_type))
            .map(|s| {
                let d = skills::descriptor(s.kind, &base);
                skills::index_entry(&d, &format!("{base}/ssp/skills/{}.json", s.kind.slug()))
            })
            .collect();
        Answer::ok(
            200,
            &json!({
                "protocol": { "version": "1.0.0" },
                "provider": { "name": "conform reference server", "url": base },
                "skills": entries,
            }),
        )
    }

    /// `GET /ssp/skills/<slug>.json` (SSP-DISC-4): private descriptors need a valid
    /// credential (else 401), unknown ones are 404.
    pub fn descriptor(
        &self,
        headers: &HeaderMap,
        file: &str,
        read: &Signed<'_>,
    ) -> Result<Answer, Refusal> {
        let authenticated = self.authenticated(headers, read);
        let base = self.base(headers);
        let slug = file.strip_suffix(".json").unwrap_or("");
        let Some(skill) = self.skill_by_slug(slug) else {
            return Err(Refusal::skill_not_found(file));
        };
        if !skill.access.visible(authenticated) {
            return Err(auth_required(
                skill,
                &base,
                "Authentication is required to read this skill's descriptor",
            ));
        }
        Answer::ok(200, &skills::descriptor(skill.kind, &base))
    }

    /// `POST /ssp/invoke/<slug>`: the transport checks (404 skill, 413 size, 415 content
    /// type — `json` says whether the Content-Type is JSON), auth (SSP-AUTH-1..4), the
    /// client's rate limit (429, issue 13 §3; `peer` is the client's address when known),
    /// the request schema and inputs (SSP-INV-2), then the execution is stored and starts
    /// on a tokio task; 202 + accepted response (SSP-INV-1).
    pub async fn invoke(
        &self,
        slug: &str,
        headers: &HeaderMap,
        body: Body,
        json: bool,
        peer: Option<SocketAddr>,
        path: &str,
    ) -> Result<Answer, Refusal> {
        let base = self.base(headers);
        let Some(skill) = self.skill_by_slug(slug).cloned() else {
            return Err(Refusal::skill_not_found(slug));
        };
        let body = read_body(headers, body, json).await?;
        let signed = Signed {
            method: "POST",
            path,
            body: &body,
        };
        let credential = self.authorize(&skill, &base, headers, &signed)?;
        self.admit(credential.as_deref(), peer)?;
        // Validate, then decide the timeout (SSP-INV-5).
        let (request, inputs) = validate_request(&self.inner.schemas, &skill, &body)?;
        let timeout = crate::domain::ssp::effective_timeout_ms(
            skill.timeout_ms,
            request["context"]["timeout_ms"].as_f64(),
        );
        // The request tree is the largest transient allocation: gone before the work.
        drop(request);
        // Persist, start, respond.
        let inputs = Value::Object(inputs);
        let text = JsonText::from_value(&inputs).map_err(|e| Refusal::internal(&e))?;
        let exec = self.create_execution(&skill, credential, text)?;
        let this = self.clone();
        let id = exec.id.clone();
        tokio::spawn(async move { this.run(skill, id, inputs, timeout).await });
        let mut answer = Answer::execution(202, &exec)?;
        answer.location = Some(format!("{base}/ssp/status/{}", exec.id));
        Ok(answer)
    }

    /// Authenticates and authorises an invocation (domain decision): the credential that
    /// will own the execution (`None` for a no-auth skill), or the 401 / 403.
    fn authorize(
        &self,
        skill: &Skill,
        base: &str,
        headers: &HeaderMap,
        signed: &Signed<'_>,
    ) -> Result<Option<String>, Refusal> {
        let presented = self.inner.creds.presented(&skill.auth, headers, signed);
        match crate::domain::ssp::decide_auth(&skill.auth, &presented, &skill.required) {
            AuthDecision::Allow { credential } => Ok(credential),
            AuthDecision::Unauthenticated => Err(auth_required(
                skill,
                base,
                "Authentication is required to invoke this skill",
            )),
            AuthDecision::Forbidden { required, granted } => Err(Refusal::new(
                403,
                crate::domain::ssp::permission_denied_error(&required, &granted),
            )),
        }
    }

    /// The per-client rate limit (issue 13 §3), before any parsing or storage: the client
    /// is the credential, else the peer address.
    fn admit(&self, credential: Option<&str>, peer: Option<SocketAddr>) -> Result<(), Refusal> {
        let Some(limiter) = &self.inner.rate else {
            return Ok(());
        };
        let client = super::limits::client_key(credential, peer);
        // tokio's clock: paused tests advance it without sleeping.
        let now = tokio::time::Instant::now().into_std();
        limiter.take(&client, now).map_err(|wait| {
            tracing::debug!(client, ?wait, "ssp invocation rate limited");
            Refusal::rate_limited(wait, limiter.per_minute(), limiter.burst())
        })
    }

    fn next_id(&self) -> String {
        let n = self
            .inner
            .counter
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut h = Sha256::new();
        h.update(self.inner.id_key);
        h.update(n.to_le_bytes());
        format!("exec-{}", &hex::encode(h.finalize())[..24])
    }

    fn create_execution(
        &self,
        skill: &Skill,
        credential: Option<String>,
        inputs: JsonText,
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
            let executions = &self.inner.executions;
            if executions
                .insert(&exec)
                .map_err(|e| Refusal::internal(&e))?
            {
                // Retention (issue 13 §3): a failed sweep does not fail the invocation.
                if let Err(e) = executions.sweep_if_due(exec.created_at) {
                    tracing::error!(error = %e, "ssp retention sweep failed");
                }
                return Ok(exec);
            }
        }
        Err(Refusal::internal(&"could not draw a fresh execution id"))
    }

    /// Loads an execution the caller may read (SSP-INV-6: others get the same 404 as an
    /// unknown id).
    fn readable_execution(
        &self,
        id: &str,
        headers: &HeaderMap,
        read: &Signed<'_>,
    ) -> Result<Execution, Refusal> {
        let exec = self
            .inner
            .executions
            .get(id)
            .map_err(|e| Refusal::internal(&e))?
            .ok_or_else(|| Refusal::execution_not_found(id))?;
        let open = self.skill_by_id(&exec.skill_id).is_none_or(|s| s.is_open());
        if !open || exec.credential.is_some() {
            // Status/result polls have no body: the plain HMAC scheme signs "" (ssp.md §7),
            // the replay-protected one the path, hence this execution id (issue 13 §8).
            let mine = self.valid_credentials(headers, read);
            if !crate::domain::ssp::may_read_execution(exec.credential.as_deref(), &mine) {
                let hidden = if mine.is_empty() {
                    Hidden::Anonymous
                } else {
                    Hidden::OtherCredential
                };
                return Err(Refusal {
                    hidden: Some(hidden),
                    ..Refusal::execution_not_found(id)
                });
            }
        }
        Ok(exec)
    }

    /// `GET /ssp/status/{execution_id}` (SSP-INV-3).
    pub fn status(
        &self,
        id: &str,
        headers: &HeaderMap,
        read: &Signed<'_>,
    ) -> Result<Answer, Refusal> {
        let exec = self.readable_execution(id, headers, read)?;
        Answer::execution(200, &exec)
    }

    /// `GET /ssp/result/{execution_id}` (SSP-INV-4): 200 once terminal, 202 with the current
    /// response (no output) before.
    pub fn result(
        &self,
        id: &str,
        headers: &HeaderMap,
        read: &Signed<'_>,
    ) -> Result<Answer, Refusal> {
        let exec = self.readable_execution(id, headers, read)?;
        let status = if exec.status.is_terminal() { 200 } else { 202 };
        Answer::execution(status, &exec)
    }
}

/// The 401 of SSP-AUTH-2, with URLs for the base the caller sees (the stored requirement
/// was built for the startup base).
fn auth_required(skill: &Skill, base: &str, message: &str) -> Refusal {
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
        hidden: None,
    }
}

/// The invocation body, within [`MAX_INVOCATION_BODY`] (413, also when the declared
/// length is over), readable (400) and announced as JSON (415).
async fn read_body(headers: &HeaderMap, body: Body, json: bool) -> Result<bytes::Bytes, Refusal> {
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > MAX_INVOCATION_BODY as u64) {
        return Err(body_too_large());
    }
    let bytes = match http_body_util::Limited::new(body, MAX_INVOCATION_BODY)
        .collect()
        .await
    {
        Ok(c) => c.to_bytes(),
        Err(e)
            if e.downcast_ref::<http_body_util::LengthLimitError>()
                .is_some() =>
        {
            return Err(body_too_large());
        }
        Err(e) => {
            return Err(whole_request_invalid(
                400,
                "Request body could not be read",
                &e.to_string(),
                json!("a complete request body"),
                json!("unreadable body"),
            ));
        }
    };
    if !json {
        let ct = headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok());
        return Err(whole_request_invalid(
            415,
            "Content-Type must be application/json",
            "unsupported media type",
            json!("application/json"),
            json!(ct),
        ));
    }
    Ok(bytes)
}

/// SSP-INV-2: the body is an InvocationRequest naming this endpoint's skill (the wrong
/// skill never runs) with valid inputs. Returns the request and the inputs, defaults
/// applied.
fn validate_request(
    schemas: &Schemas,
    skill: &Skill,
    body: &[u8],
) -> Result<(Value, Map<String, Value>), Refusal> {
    let request: Value = serde_json::from_slice(body).map_err(|e| {
        whole_request_invalid(
            400,
            "Request body is not valid JSON",
            &format!("malformed JSON: {e}"),
            json!("an InvocationRequest JSON object"),
            json!("malformed JSON"),
        )
    })?;
    let violations = schemas.validate("InvocationRequest", &request);
    if !violations.is_empty() {
        return Err(Refusal::new(
            400,
            validation_error("Invalid InvocationRequest document", violations),
        ));
    }
    let requested = request["skill_id"].as_str().unwrap_or_default();
    if requested != skill.id {
        return Err(Refusal::skill_not_found(requested));
    }
    let empty = Map::new();
    let inputs = request["inputs"].as_object().unwrap_or(&empty);
    let inputs = skill
        .validate_inputs(inputs)
        .map_err(|d| Refusal::new(400, validation_error("Invalid inputs for this skill", d)))?;
    Ok((request, inputs))
}
