//! The consumer side of SSP (seed §1.4, §4, §5, §6.3–6.4, §8.3.6; SSP-VER-1, SSP-VER-2).
//!
//! - discovery client: the well-known Skill Index, then each descriptor by its direct URL,
//!   every document validated before use (seed §10.1 step 3: an invalid descriptor is never
//!   invoked);
//! - compatibility check: descriptor MAJOR ≤ consumer MAJOR, otherwise a local
//!   `VERSION_INCOMPATIBLE` and no request at all;
//! - invoker: POST, then poll `status_url` with `{execution_id}` substituted under a
//!   bounded budget, then `result_url`; connection failures and retryable provider errors
//!   are retried with exponential backoff honouring `endpoint.retry` and `error.retry`,
//!   ending in a local `ENDPOINT_UNREACHABLE` when the endpoint never answers.
//!
//! Waiting goes through [`Sleeper`] so tests observe the backoff schedule without real
//! time passing.

use crate::ssp::types::{
    AuthType, Caller, ErrorCode, ErrorObject, ErrorResponse, InvocationContext, InvocationRequest,
    InvocationResponse, RetrySuggestion, SkillDescriptor, SkillIndex,
};
use crate::ssp::validator::{DocType, Mode, SspValidator, ValidationReport};
use crate::transport::limits::DEFAULT_RESPONSE_BODY_BYTES;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use std::future::Future;
use std::time::Duration;

/// The protocol version this consumer implements (seed §6).
pub const CONSUMER_PROTOCOL_VERSION: &str = "1.0.0";

/// The well-known discovery path (seed §4.3.1).
pub const WELL_KNOWN_PATH: &str = "/.well-known/skill-sharing";

/// Upper bound on attempts whatever a descriptor or error suggests (keeps every run bounded).
pub const MAX_ATTEMPTS_CAP: u32 = 10;

/// Upper bound on a single backoff delay.
pub const MAX_BACKOFF: Duration = Duration::from_secs(60);

/// Waits; abstracted so tests can record the backoff schedule instead of sleeping.
pub trait Sleeper: Send + Sync {
    /// Waits for `d`.
    fn sleep(&self, d: Duration) -> impl Future<Output = ()> + Send;
}

/// Real waiting on the tokio timer.
#[derive(Debug, Clone, Copy, Default)]
pub struct TokioSleeper;

impl Sleeper for TokioSleeper {
    fn sleep(&self, d: Duration) -> impl Future<Output = ()> + Send {
        tokio::time::sleep(d)
    }
}

/// Credentials the consumer attaches according to the descriptor's `auth` (seed §7.2).
#[derive(Debug, Clone, Default)]
pub enum Credentials {
    /// Nothing.
    #[default]
    None,
    /// API key, sent in the header named by `auth.header` (SSP-AUTH-4).
    ApiKey(String),
    /// OAuth 2.0 access token, sent as `Authorization: Bearer …`.
    Bearer(String),
    /// Literal headers (custom schemes).
    Headers(Vec<(String, String)>),
}

/// Consumer settings.
#[derive(Debug, Clone)]
pub struct ConsumerConfig {
    /// The consumer's protocol version (its MAJOR decides compatibility, SSP-VER-1).
    pub protocol_version: semver::Version,
    /// Caller identity sent in every InvocationRequest.
    pub caller_id: String,
    /// Caller type (`ifay`, `service`, `user`).
    pub caller_type: String,
    /// Delay between status polls.
    pub poll_interval: Duration,
    /// Maximum number of status polls before giving up (bounded polling).
    pub max_polls: u32,
    /// Per-request timeout.
    pub request_timeout: Duration,
    /// Validation mode for fetched documents (lenient: a MINOR release may add members).
    pub mode: Mode,
    /// Reach providers directly, ignoring `HTTP(S)_PROXY` (as the engine's transports do):
    /// a conformance run talks to its target, not to whatever proxy the CI sets.
    pub no_proxy: bool,
    /// How `https://` providers are trusted (the run's `--ca-cert`/`--insecure`).
    pub tls: crate::transport::tls::TlsOptions,
}

impl Default for ConsumerConfig {
    fn default() -> Self {
        Self {
            protocol_version: semver::Version::new(1, 0, 0),
            caller_id: "conform-consumer".into(),
            caller_type: "service".into(),
            poll_interval: Duration::from_millis(50),
            max_polls: 200,
            request_timeout: Duration::from_secs(10),
            mode: Mode::Lenient,
            no_proxy: false,
            tls: crate::transport::tls::TlsOptions::default(),
        }
    }
}

impl ConsumerConfig {
    /// The bounds of the run `client` belongs to: its per-request timeout (`timeout_ms` ×
    /// `--time-scale`) and the polling bound (`max_polls`) multiplied by its time scale, the
    /// pause between polls kept; its TLS settings.
    pub fn within(self, client: &crate::transport::Client) -> Self {
        let scale = client.time_scale().factor();
        Self {
            request_timeout: client.timeout(),
            max_polls: (f64::from(self.max_polls) * scale).ceil() as u32,
            tls: client.tls().clone(),
            ..self
        }
    }
}

/// Everything that can go wrong on the consumer side.
#[derive(Debug, thiserror::Error)]
pub enum ConsumerError {
    /// A local protocol error (seed §8.1: `VALIDATION_ERROR`, `VERSION_INCOMPATIBLE`,
    /// `ENDPOINT_UNREACHABLE`, `INVOCATION_TIMEOUT`), in the unified shape.
    #[error("{}: {}", .0.code, .0.message)]
    Local(Box<ErrorObject>),
    /// The provider answered with an error status.
    #[error("HTTP {status} from {url}: {}", error.as_ref().map_or("(no unified error body)".to_owned(), |e| format!("{}: {}", e.code, e.message)))]
    Provider {
        /// Requested URL.
        url: String,
        /// HTTP status.
        status: u16,
        /// The unified error, when the body had one.
        error: Option<Box<ErrorObject>>,
    },
    /// The execution did not reach a terminal state within the poll budget.
    #[error("execution {execution_id} still {last_status} after {polls} polls")]
    PollBudgetExhausted {
        /// Execution id.
        execution_id: String,
        /// Last observed status.
        last_status: String,
        /// Polls made.
        polls: u32,
    },
    /// The provider answered something that is not the expected document.
    #[error("unexpected answer from {url}: {reason}")]
    BadResponse {
        /// Requested URL.
        url: String,
        /// What is wrong.
        reason: String,
    },
    /// The descriptor cannot be invoked as written (no status/result URL, bad template).
    #[error("descriptor cannot be invoked: {0}")]
    BadDescriptor(String),
    /// The harness itself failed (schema, HTTP client construction).
    #[error("consumer internal error: {0}")]
    Internal(String),
}

impl ConsumerError {
    /// The code of a local or provider error, if any.
    pub fn code(&self) -> Option<&str> {
        match self {
            Self::Local(e) => Some(e.code.as_str()),
            Self::Provider { error: Some(e), .. } => Some(e.code.as_str()),
            _ => None,
        }
    }
}

/// SSP-VER-1 (seed §6.3): a descriptor is compatible iff its protocol MAJOR ≤ the
/// consumer's MAJOR. Otherwise the seed §8.3.7 `VERSION_INCOMPATIBLE` error, with
/// `details {descriptor_version, consumer_version, supported_major}`.
pub fn check_compatibility(
    descriptor_version: &str,
    consumer: &semver::Version,
) -> Result<(), Box<ErrorObject>> {
    let major = descriptor_version
        .split('.')
        .next()
        .and_then(|m| m.parse::<u64>().ok())
        .filter(|_| semver::Version::parse(descriptor_version).is_ok());
    let Some(major) = major else {
        return Err(Box::new(ErrorObject {
            code: ErrorCode::new(ErrorCode::VALIDATION_ERROR),
            message: format!("Protocol version {descriptor_version:?} is not MAJOR.MINOR.PATCH"),
            details: Some(json!([{
                "path": "/protocol/version",
                "message": "must be MAJOR.MINOR.PATCH",
                "expected": "MAJOR.MINOR.PATCH",
                "actual": descriptor_version,
            }])),
            retry: None,
        }));
    };
    if major > consumer.major {
        return Err(Box::new(ErrorObject {
            code: ErrorCode::new(ErrorCode::VERSION_INCOMPATIBLE),
            message: format!(
                "Protocol version {descriptor_version} is not compatible with consumer version {consumer}"
            ),
            details: Some(json!({
                "descriptor_version": descriptor_version,
                "consumer_version": consumer.to_string(),
                "supported_major": consumer.major,
            })),
            retry: None,
        }));
    }
    Ok(())
}

/// A status/result URL expanded from its descriptor's template (SSP-SCH-3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expanded {
    /// The URL to request.
    pub url: String,
    /// The template had no `{execution_id}`: the URL is `<template>/<execution_id>`, the
    /// seed diagram's `GET {status_url}/{exec_id}` (a provider check warns).
    pub appended: bool,
}

/// The one URL-template helper of the harness (consumer, checks, model, fuzz): every
/// `{execution_id}` of the descriptor's template replaced (seed §5.5: MUST; the template is
/// authoritative, SSP-SCH-3), the id percent-encoded as one path segment (ids are opaque
/// strings); a template without the variable gets `/<execution_id>` appended.
pub fn expand_template(template: &str, execution_id: &str) -> Expanded {
    let encoded: String = url::form_urlencoded::byte_serialize(execution_id.as_bytes())
        .collect::<String>()
        .replace('+', "%20");
    expand_raw(template, &encoded)
}

/// [`expand_template`] with a segment already in URL form (the fuzzer's hostile ids).
pub fn expand_raw(template: &str, segment: &str) -> Expanded {
    const VAR: &str = "{execution_id}";
    if template.contains(VAR) {
        Expanded {
            url: template.replace(VAR, segment),
            appended: false,
        }
    } else {
        Expanded {
            url: format!("{}/{segment}", template.trim_end_matches('/')),
            appended: true,
        }
    }
}

/// Retry policy for one request: attempts and exponential backoff base.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Total attempts (≥ 1), capped by [`MAX_ATTEMPTS_CAP`].
    pub max_attempts: u32,
    /// Base delay: attempt n (1-based) waits `backoff × 2^(n-1)` after failing.
    pub backoff: Duration,
}

impl RetryPolicy {
    /// From `endpoint.retry` (seed §3.5.3); one attempt when absent.
    pub fn from_descriptor(d: &SkillDescriptor) -> Self {
        let r = d.endpoint.retry.as_ref();
        let attempts = r
            .and_then(|r| r.max_attempts.as_ref())
            .and_then(num_u64)
            .unwrap_or(1);
        let backoff = r
            .and_then(|r| r.backoff_ms.as_ref())
            .and_then(num_u64)
            .unwrap_or(0);
        Self {
            max_attempts: clamp_attempts(attempts),
            backoff: Duration::from_millis(backoff),
        }
    }

    /// Delay after the `attempt`-th (1-based) failure: `backoff × 2^(attempt-1)`, at least
    /// `suggested` (the provider's `error.retry.suggested_delay_ms`), capped.
    pub fn delay(&self, attempt: u32, suggested: Option<Duration>) -> Duration {
        let exp = self
            .backoff
            .checked_mul(
                1u32.checked_shl(attempt.saturating_sub(1))
                    .unwrap_or(u32::MAX),
            )
            .unwrap_or(MAX_BACKOFF);
        exp.max(suggested.unwrap_or(Duration::ZERO))
            .min(MAX_BACKOFF)
    }

    /// Merges a provider's `error.retry` suggestion (seed §8.2): the attempt budget becomes
    /// the larger of the descriptor's and the provider's (still capped), and the returned
    /// delay is the provider's `suggested_delay_ms` (a floor for the next backoff).
    pub fn honour(&self, s: &RetrySuggestion) -> (Self, Duration) {
        let suggested = Duration::from_millis(num_u64(&s.suggested_delay_ms).unwrap_or(0));
        let attempts = num_u64(&s.max_attempts)
            .map(clamp_attempts)
            .unwrap_or(self.max_attempts);
        (
            Self {
                max_attempts: self.max_attempts.max(attempts).min(MAX_ATTEMPTS_CAP),
                backoff: self.backoff,
            },
            suggested,
        )
    }
}

fn clamp_attempts(n: u64) -> u32 {
    u32::try_from(n)
        .unwrap_or(u32::MAX)
        .clamp(1, MAX_ATTEMPTS_CAP)
}

fn num_u64(n: &serde_json::Number) -> Option<u64> {
    n.as_u64().or_else(|| {
        n.as_f64()
            .filter(|f| *f >= 0.0 && f.is_finite())
            .map(|f| f as u64)
    })
}

/// One completed invocation, with every response observed (for lifecycle checks).
#[derive(Debug, Clone, PartialEq)]
pub struct Invocation {
    /// The answer to the POST.
    pub accepted: InvocationResponse,
    /// HTTP status of the answer to the POST (SSP-INV-1 expects 202).
    pub accepted_status: u16,
    /// Every status poll answer, in order.
    pub polls: Vec<InvocationResponse>,
    /// The terminal response (from `result_url` when declared, else the last poll).
    pub result: InvocationResponse,
    /// POST attempts made (retries included).
    pub attempts: u32,
}

/// The SSP consumer: discovery client, compatibility check and invoker.
pub struct Consumer<S: Sleeper = TokioSleeper> {
    client: reqwest::Client,
    config: ConsumerConfig,
    sleeper: S,
}

impl Consumer<TokioSleeper> {
    /// A consumer that really waits.
    pub fn new(config: ConsumerConfig) -> Result<Self, ConsumerError> {
        Self::with_sleeper(config, TokioSleeper)
    }
}

impl<S: Sleeper> Consumer<S> {
    /// A consumer waiting through `sleeper` (tests record the schedule).
    pub fn with_sleeper(config: ConsumerConfig, sleeper: S) -> Result<Self, ConsumerError> {
        let mut builder = reqwest::Client::builder().timeout(config.request_timeout);
        if config.no_proxy {
            builder = builder.no_proxy();
        }
        // The bundled Mozilla roots (plus the run's CA): no system certificate store needed.
        let client = (config.tls.apply(builder))
            .map_err(|e| ConsumerError::Internal(e.to_string()))?
            .build()
            .map_err(|e| ConsumerError::Internal(e.to_string()))?;
        Ok(Self {
            client,
            config,
            sleeper,
        })
    }

    /// The settings.
    pub fn config(&self) -> &ConsumerConfig {
        &self.config
    }

    /// Discovery (seed §4.3): GET `<base>/.well-known/skill-sharing`, validated as a
    /// SkillIndex (unique ids included, SSP-DISC-1).
    pub async fn discover(
        &self,
        base_url: &str,
        creds: &Credentials,
        header: Option<&str>,
    ) -> Result<SkillIndex, ConsumerError> {
        let url = format!("{}{WELL_KNOWN_PATH}", base_url.trim_end_matches('/'));
        self.get_doc(&url, DocType::Index, creds, header).await
    }

    /// Direct URL (seed §4.2): fetches and validates a descriptor.
    pub async fn fetch_descriptor(
        &self,
        url: &str,
        creds: &Credentials,
        header: Option<&str>,
    ) -> Result<SkillDescriptor, ConsumerError> {
        self.get_doc(url, DocType::Descriptor, creds, header).await
    }

    /// Discovery then every descriptor, each result kept separately (one broken descriptor
    /// does not hide the others).
    pub async fn discover_all(
        &self,
        base_url: &str,
        creds: &Credentials,
        header: Option<&str>,
    ) -> Result<(SkillIndex, Vec<Result<SkillDescriptor, ConsumerError>>), ConsumerError> {
        let index = self.discover(base_url, creds, header).await?;
        let mut out = Vec::with_capacity(index.skills.len());
        for e in &index.skills {
            out.push(
                self.fetch_descriptor(&e.descriptor_url, creds, header)
                    .await,
            );
        }
        Ok((index, out))
    }

    async fn get_doc<T: DeserializeOwned>(
        &self,
        url: &str,
        t: DocType,
        creds: &Credentials,
        header: Option<&str>,
    ) -> Result<T, ConsumerError> {
        let req = attach(
            self.client.get(url).header("accept", "application/json"),
            creds,
            header,
        );
        let resp = req
            .send()
            .await
            .map_err(|e| unreachable_error(url, &e, 1))?;
        let status = resp.status().as_u16();
        let ctype = resp
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_owned();
        let body = crate::transport::read_body(resp, DEFAULT_RESPONSE_BODY_BYTES)
            .await
            .map_err(|reason| ConsumerError::BadResponse {
                url: url.into(),
                reason,
            })?;
        if !(200..300).contains(&status) {
            return Err(provider_error(url, status, &body));
        }
        if !ctype.to_ascii_lowercase().starts_with("application/json") {
            return Err(ConsumerError::BadResponse {
                url: url.into(),
                reason: format!("Content-Type {ctype:?} is not application/json"),
            });
        }
        let value: Value =
            serde_json::from_slice(&body).map_err(|e| ConsumerError::BadResponse {
                url: url.into(),
                reason: format!("not JSON: {e}"),
            })?;
        self.typed(url, &value, t)
    }

    fn typed<T: DeserializeOwned>(
        &self,
        url: &str,
        value: &Value,
        t: DocType,
    ) -> Result<T, ConsumerError> {
        let v = SspValidator::global().map_err(|e| ConsumerError::Internal(e.to_string()))?;
        let report = v.validate(value, t, self.config.mode);
        if !report.valid {
            return Err(validation_error(t, &report));
        }
        T::deserialize(value).map_err(|e| ConsumerError::BadResponse {
            url: url.into(),
            reason: e.to_string(),
        })
    }

    /// Invokes a skill end to end: compatibility (SSP-VER-1, before any request), POST with
    /// retries (SSP-VER-2), bounded status polling, then the result.
    pub async fn invoke(
        &self,
        descriptor: &SkillDescriptor,
        inputs: Map<String, Value>,
        context: Option<InvocationContext>,
        creds: &Credentials,
    ) -> Result<Invocation, ConsumerError> {
        check_compatibility(&descriptor.protocol.version, &self.config.protocol_version)
            .map_err(ConsumerError::Local)?;
        let request = InvocationRequest {
            caller: Caller {
                id: self.config.caller_id.clone(),
                kind: self.config.caller_type.clone(),
                credentials: None,
            },
            skill_id: descriptor.id.clone(),
            inputs,
            context,
        };
        let header = match descriptor.auth.kind {
            AuthType::ApiKey => descriptor.auth.header.as_deref(),
            _ => None,
        };
        let (accepted_status, accepted, attempts) =
            self.submit(descriptor, &request, creds, header).await?;
        let mut polls = Vec::new();
        let mut last = accepted.clone();
        let mut n = 0u32;
        while !last.status.is_terminal() {
            if n >= self.config.max_polls {
                return Err(ConsumerError::PollBudgetExhausted {
                    execution_id: last.execution_id,
                    last_status: last.status.as_str().into(),
                    polls: n,
                });
            }
            let template = descriptor
                .endpoint
                .status_url
                .as_deref()
                .or(descriptor.endpoint.result_url.as_deref())
                .ok_or_else(|| {
                    ConsumerError::BadDescriptor("no status_url nor result_url to poll".into())
                })?;
            if n > 0 {
                self.sleeper.sleep(self.config.poll_interval).await;
            }
            n += 1;
            let url = expand_template(template, &accepted.execution_id).url;
            let (_, r) = self.get_response(&url, creds, header, true).await?;
            polls.push(r.clone());
            last = r;
        }
        let result = match (&descriptor.endpoint.result_url, last.status) {
            (Some(t), crate::ssp::types::ExecutionStatus::Completed) => {
                let url = expand_template(t, &accepted.execution_id).url;
                self.get_response(&url, creds, header, false).await?.1
            }
            _ => last,
        };
        Ok(Invocation {
            accepted,
            accepted_status,
            polls,
            result,
            attempts,
        })
    }

    async fn get_response(
        &self,
        url: &str,
        creds: &Credentials,
        header: Option<&str>,
        allow_202: bool,
    ) -> Result<(u16, InvocationResponse), ConsumerError> {
        let resp = attach(
            self.client.get(url).header("accept", "application/json"),
            creds,
            header,
        )
        .send()
        .await
        .map_err(|e| unreachable_error(url, &e, 1))?;
        let status = resp.status().as_u16();
        let body = crate::transport::read_body(resp, DEFAULT_RESPONSE_BODY_BYTES)
            .await
            .map_err(|reason| ConsumerError::BadResponse {
                url: url.into(),
                reason,
            })?;
        if status != 200 && !(allow_202 && status == 202) {
            return Err(provider_error(url, status, &body));
        }
        let value: Value =
            serde_json::from_slice(&body).map_err(|e| ConsumerError::BadResponse {
                url: url.into(),
                reason: format!("not JSON: {e}"),
            })?;
        Ok((status, self.typed(url, &value, DocType::Response)?))
    }

    /// POSTs the request, retrying refused connections and retryable provider errors
    /// (408/429/5xx) with exponential backoff; honours `endpoint.retry` and `error.retry`.
    async fn submit(
        &self,
        d: &SkillDescriptor,
        request: &InvocationRequest,
        creds: &Credentials,
        header: Option<&str>,
    ) -> Result<(u16, InvocationResponse, u32), ConsumerError> {
        let url = d.endpoint.url.as_str();
        let body =
            serde_json::to_vec(request).map_err(|e| ConsumerError::Internal(e.to_string()))?;
        let mut policy = RetryPolicy::from_descriptor(d);
        let mut attempt = 0u32;
        loop {
            attempt += 1;
            let method = reqwest::Method::from_bytes(d.endpoint.method.as_str().as_bytes())
                .map_err(|e| ConsumerError::Internal(e.to_string()))?;
            let req = attach(
                self.client
                    .request(method, url)
                    .header(
                        "content-type",
                        d.endpoint
                            .content_type
                            .as_deref()
                            .unwrap_or("application/json"),
                    )
                    .header("accept", "application/json")
                    .body(body.clone()),
                creds,
                header,
            );
            let (failure, suggestion) = match req.send().await {
                Err(e) => (unreachable_error(url, &e, attempt), None),
                Ok(resp) => {
                    let status = resp.status().as_u16();
                    let bytes = crate::transport::read_body(resp, DEFAULT_RESPONSE_BODY_BYTES)
                        .await
                        .map_err(|reason| ConsumerError::BadResponse {
                            url: url.into(),
                            reason,
                        })?;
                    if (200..300).contains(&status) {
                        let value: Value = serde_json::from_slice(&bytes).map_err(|e| {
                            ConsumerError::BadResponse {
                                url: url.into(),
                                reason: format!("not JSON: {e}"),
                            }
                        })?;
                        let r: InvocationResponse = self.typed(url, &value, DocType::Response)?;
                        return Ok((status, r, attempt));
                    }
                    let err = provider_error(url, status, &bytes);
                    let retryable = matches!(status, 408 | 429 | 502 | 503 | 504);
                    if !retryable {
                        return Err(err);
                    }
                    let suggestion = match &err {
                        ConsumerError::Provider { error: Some(e), .. } => e.retry.clone(),
                        _ => None,
                    };
                    (err, suggestion)
                }
            };
            let suggested = match &suggestion {
                Some(s) => {
                    let (p, delay) = policy.honour(s);
                    policy = p;
                    Some(delay)
                }
                None => None,
            };
            if attempt >= policy.max_attempts {
                return Err(failure);
            }
            let delay = policy.delay(attempt, suggested);
            tracing::debug!(%url, attempt, ?delay, "SSP invocation retry");
            self.sleeper.sleep(delay).await;
        }
    }
}

fn attach(
    mut req: reqwest::RequestBuilder,
    creds: &Credentials,
    header: Option<&str>,
) -> reqwest::RequestBuilder {
    match creds {
        Credentials::None => {}
        Credentials::ApiKey(k) => req = req.header(header.unwrap_or("X-API-Key"), k),
        Credentials::Bearer(t) => req = req.header("authorization", format!("Bearer {t}")),
        Credentials::Headers(hs) => {
            for (n, v) in hs {
                req = req.header(n.as_str(), v.as_str());
            }
        }
    }
    req
}

/// The local `ENDPOINT_UNREACHABLE` (seed §8.3.6) for a transport failure.
fn unreachable_error(url: &str, e: &reqwest::Error, attempts: u32) -> ConsumerError {
    let reason = if e.is_connect() {
        "Connection refused".to_owned()
    } else if e.is_timeout() {
        "Request timed out".to_owned()
    } else {
        e.to_string()
    };
    ConsumerError::Local(Box::new(ErrorObject {
        code: ErrorCode::new(ErrorCode::ENDPOINT_UNREACHABLE),
        message: "Failed to connect to invocation endpoint".into(),
        details: Some(json!({ "url": url, "reason": reason, "attempts": attempts })),
        retry: Some(RetrySuggestion {
            suggested_delay_ms: 2000.into(),
            max_attempts: 3.into(),
        }),
    }))
}

fn provider_error(url: &str, status: u16, body: &[u8]) -> ConsumerError {
    let error = serde_json::from_slice::<ErrorResponse>(body)
        .ok()
        .map(|r| Box::new(r.error));
    ConsumerError::Provider {
        url: url.into(),
        status,
        error,
    }
}

/// The local `VALIDATION_ERROR` for a fetched document (SSP-SCH-6).
fn validation_error(t: DocType, report: &ValidationReport) -> ConsumerError {
    ConsumerError::Local(Box::new(report.to_error_response(t).error))
}
