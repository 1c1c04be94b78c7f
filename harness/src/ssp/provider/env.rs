//! What an SSP provider check works with: a recording HTTP client, the SSP profile, the
//! resolved fixture skills, and the findings collected so far.

use crate::ssp::codes::{self, Condition};
use crate::ssp::provider::profile::{FixtureRole, SspProfile};
use crate::ssp::types::{AuthType, ErrorObject, ErrorResponse, SkillDescriptor, SkillIndex};
use crate::ssp::validator::{DocType, Mode, SspValidator};
use crate::transport::{Exchange, Prepared, TransportKind, send_recorded};
use hmac::{KeyInit, Mac};
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// Rate limiting, overload or an unreachable upstream (429, 502, 503): answers any SSP
/// request may draw, judged by no rule of the request itself (SSP-ERR-3; seed §8.1). The one
/// list the scripted checks, the model and the pre-flight wait or stop on.
pub(crate) fn throttling(status: u16) -> bool {
    matches!(status, 429 | 502 | 503)
}

/// Tries of a GET the provider throttles before the check is left untested.
const THROTTLED_TRIES: u32 = 5;

/// A descriptor URL no skill has, derived from `known`, the descriptor URL of skill `id`:
/// the id replaced by `unknown` when the URL contains it — a descriptor path of the
/// provider's own layout, whose 404 is `SKILL_NOT_FOUND` (SSP-DISC-4; `true`) — else a
/// sibling file, which may not be a descriptor path at all, so its 404 may carry any code
/// (SSP-ERR-3; `false`). `None`: the URL has no path to derive from.
pub fn unknown_descriptor_url(known: &str, id: &str, unknown: &str) -> Option<(String, bool)> {
    if !id.is_empty()
        && let Some(i) = known.rfind(id)
    {
        let url = format!("{}{unknown}{}", &known[..i], &known[i + id.len()..]);
        return Some((url, true));
    }
    let i = known.rfind('/')?;
    Some((format!("{}/{unknown}.json", &known[..i]), false))
}

/// Longest timeout [`Env::poll_terminal`] waits out in full (times the run's time scale).
const POLL_CAP: Duration = Duration::from_secs(60);
/// Grace after a timeout for the provider to notice the overrun (times the time scale).
const POLL_GRACE: Duration = Duration::from_secs(5);
/// How long an execution of a skill without a declared timeout is followed (times the
/// time scale).
const DEFAULT_WAIT: Duration = Duration::from_secs(10);
/// Pause between two status polls.
const POLL: Duration = Duration::from_millis(50);
/// Pause after a throttled poll (the wait's deadline moves by as much); the SSP model's
/// awaits use it too.
pub(crate) const THROTTLED_POLL: Duration = Duration::from_millis(250);

/// How long one execution is followed to its end (SSP-INV-5), the same for the scripted
/// checks ([`Env::poll_terminal`]) and the SSP model's awaits: the execution's timeout (at
/// most [`POLL_CAP`]) plus [`POLL_GRACE`], both times the run's time scale; without a
/// timeout, [`DEFAULT_WAIT`] scaled, whose end is inconclusive (the seed fixes no default,
/// so an undeclared timeout cannot be overrun).
#[derive(Debug, Clone, Copy)]
pub(crate) struct ExecutionWait {
    /// The longest timeout waited out in full.
    pub cap: TimeBudget,
    /// The grace after the timeout for the provider to notice the overrun.
    pub grace: TimeBudget,
    /// The whole wait, counted again from the first `running` answer.
    pub span: Duration,
}

impl ExecutionWait {
    /// The wait for an execution whose timeout is `timeout_ms` (`None`: none known).
    pub(crate) fn new(scale: TimeScale, timeout_ms: Option<f64>) -> Self {
        let cap = scale.budget("longest execution wait", POLL_CAP);
        let grace = scale.budget("overrun grace", POLL_GRACE);
        let waited_for = timeout_ms.map_or(scale.apply(DEFAULT_WAIT), |t| {
            Duration::from_secs_f64(t.max(0.0) / 1000.0)
        });
        Self {
            cap,
            grace,
            span: waited_for.min(cap.limit()) + grace.limit(),
        }
    }

    /// Whether a timeout of `timeout_ms` lies within the cap (an overrun of it can fail).
    pub(crate) fn covers(&self, timeout_ms: f64) -> bool {
        timeout_ms <= self.cap.limit().as_secs_f64() * 1000.0
    }
}

pub use crate::engine::finding::{Finding, Severity, Step};
use crate::transport::budget::{TimeBudget, TimeScale};

/// Credentials attached to one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cred {
    /// Nothing.
    None,
    /// API key in a header.
    ApiKey {
        /// Header name.
        header: String,
        /// Key.
        key: String,
    },
    /// `Authorization: Bearer …`.
    Bearer(String),
    /// HMAC-SHA256 of the body (empty string for GET), hex, in `header`.
    Hmac {
        /// Header name.
        header: String,
        /// Secret.
        secret: String,
    },
    /// A literal header (wrong-place and invalid-credential probes).
    Header(String, String),
}

impl Cred {
    fn headers(&self, body: &[u8]) -> Vec<(String, String, String)> {
        // (name, real value, recorded value): secrets never reach reports.
        match self {
            Self::None => Vec::new(),
            Self::ApiKey { header, .. } => {
                vec![(header.clone(), self.secret(), "${SSP_API_KEY}".into())]
            }
            Self::Bearer(t) => vec![(
                "authorization".into(),
                format!("Bearer {t}"),
                "Bearer ${SSP_TOKEN}".into(),
            )],
            Self::Hmac { header, secret } => {
                let sig = hmac::Hmac::<sha2::Sha256>::new_from_slice(secret.as_bytes())
                    .map(|mut m| {
                        m.update(body);
                        hex::encode(m.finalize().into_bytes())
                    })
                    .unwrap_or_default();
                vec![(header.clone(), sig.clone(), sig)]
            }
            Self::Header(n, v) => vec![(n.clone(), v.clone(), v.clone())],
        }
    }

    fn secret(&self) -> String {
        match self {
            Self::ApiKey { key, .. } => key.clone(),
            _ => String::new(),
        }
    }
}

/// A response.
#[derive(Debug, Clone)]
pub struct Resp {
    /// HTTP status.
    pub status: u16,
    /// Lowercase headers.
    pub headers: Vec<(String, String)>,
    /// Body text.
    pub text: String,
    /// Body JSON, when it is JSON.
    pub json: Option<Value>,
}

impl Resp {
    /// First header with this lowercase name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The body as JSON, or a failure saying it is not JSON.
    pub fn body(&self) -> Step<&Value> {
        self.json.as_ref().ok_or_else(|| {
            Finding::fail(
                "",
                json!("a JSON body"),
                json!(self.text.chars().take(200).collect::<String>()),
                format!("HTTP {} body is not JSON", self.status),
            )
        })
    }
}

/// A resolved fixture skill.
#[derive(Debug, Clone)]
pub struct Fixture {
    /// Role.
    pub role: FixtureRole,
    /// The typed descriptor.
    pub descriptor: SkillDescriptor,
    /// Credentials that should be accepted for it.
    pub cred: Cred,
    /// Inputs from the profile.
    pub inputs: Map<String, Value>,
}

/// Per-run state of one check.
pub struct Env {
    client: crate::transport::Client,
    /// Target origin.
    pub base: String,
    /// The SSP profile.
    pub profile: SspProfile,
    /// Every exchange, in order (the transcript).
    pub exchanges: Vec<Exchange>,
    /// Warnings collected without stopping the check.
    pub warnings: Vec<Box<Finding>>,
    index_cache: HashMap<String, SkillIndex>,
    /// Caller id sent in requests (unique per run so executions never collide across runs).
    pub caller_id: String,
}

impl Env {
    /// A fresh environment.
    pub fn new(
        client: crate::transport::Client,
        base: &str,
        profile: SspProfile,
        nonce: &str,
    ) -> Self {
        Self {
            client,
            base: base.trim_end_matches('/').to_owned(),
            profile,
            exchanges: Vec::new(),
            warnings: Vec::new(),
            index_cache: HashMap::new(),
            caller_id: format!("conform-{nonce}"),
        }
    }

    /// Absolute URL of a provider path.
    pub fn url(&self, path: &str) -> String {
        if path.starts_with("http://") || path.starts_with("https://") {
            path.to_owned()
        } else {
            format!("{}{path}", self.base)
        }
    }

    /// Sends one request, recording it; a missing response is a failure of the target.
    pub async fn send(
        &mut self,
        method: &str,
        url: &str,
        body: Option<&Value>,
        cred: &Cred,
    ) -> Step<Resp> {
        let prepared = prepare(method, url, body, cred);
        let (ex, raw) = send_recorded(&self.client, TransportKind::Http, prepared).await;
        let error = ex.error.clone();
        self.exchanges.push(ex);
        match raw {
            Some((status, headers, text)) => {
                let json = serde_json::from_str(&text).ok();
                Ok(Resp {
                    status,
                    headers,
                    text,
                    json,
                })
            }
            None => Err(Finding::fail(
                "",
                json!("an HTTP response"),
                json!(error),
                format!(
                    "{method} {url}: no response ({})",
                    error.as_deref().unwrap_or("no error recorded")
                ),
            )),
        }
    }

    /// Sends a request with any bytes as its body and extra headers (`conform fuzz`) on
    /// `client`, credentials computed over those bytes; not recorded in [`Env::exchanges`]
    /// (the caller keeps the exchanges it needs). `None` when no response came.
    pub async fn send_raw(
        client: &crate::transport::Client,
        method: &str,
        url: &str,
        headers: &[(String, String)],
        body: Option<Vec<u8>>,
        cred: &Cred,
    ) -> (Exchange, Option<Resp>) {
        let prepared = prepare_bytes(method, url, headers, body, cred);
        let (ex, raw) = send_recorded(client, TransportKind::Http, prepared).await;
        let resp = raw.map(|(status, headers, text)| Resp {
            status,
            json: serde_json::from_str(&text).ok(),
            headers,
            text,
        });
        (ex, resp)
    }

    /// The HTTP client (for concurrent requests outside `&mut self`).
    pub fn client_handle(&self) -> crate::transport::Client {
        self.client.clone()
    }

    /// The run's time scale (every waiting bound of a check is multiplied by it).
    pub fn time_scale(&self) -> TimeScale {
        self.client.time_scale()
    }

    /// Sends one request without touching the environment (concurrency checks); the caller
    /// records the returned exchange.
    pub async fn send_detached(
        client: &crate::transport::Client,
        method: &str,
        url: &str,
        body: &Value,
        cred: &Cred,
    ) -> (Exchange, Option<u16>, Option<Value>) {
        let prepared = prepare(method, url, Some(body), cred);
        let (ex, raw) = send_recorded(client, TransportKind::Http, prepared).await;
        match raw {
            Some((status, _, text)) => (ex, Some(status), serde_json::from_str(&text).ok()),
            None => (ex, None, None),
        }
    }

    /// GET.
    pub async fn get(&mut self, url: &str, cred: &Cred) -> Step<Resp> {
        self.send("GET", url, None, cred).await
    }

    /// Every credential of the profile, for "any credential the provider accepts".
    pub fn all_creds(&self) -> Vec<Cred> {
        let c = &self.profile.credentials;
        let mut out = Vec::new();
        if let Some(t) = &c.oauth2_token {
            out.push(Cred::Bearer(t.clone()));
        }
        if let Some(k) = &c.api_key {
            out.push(Cred::ApiKey {
                header: "X-API-Key".into(),
                key: k.clone(),
            });
        }
        if let Some(s) = &c.hmac_secret {
            out.push(Cred::Hmac {
                header: c
                    .hmac_header
                    .clone()
                    .unwrap_or_else(|| "X-Signature".into()),
                secret: s.clone(),
            });
        }
        out
    }

    /// GET the well-known index (optionally with a query), expecting 200 + a valid
    /// SkillIndex; cached per query and credential.
    pub async fn index(&mut self, query: &str, cred: &Cred) -> Step<SkillIndex> {
        match self.index_or_status(query, cred).await? {
            Ok(idx) => Ok(idx),
            Err(status) => Err(Finding::fail(
                "",
                json!(200),
                json!(status),
                format!(
                    "GET {} must answer 200 (SSP-DISC-1)",
                    self.url(&format!("{}{query}", self.profile.well_known_path()))
                ),
            )),
        }
    }

    /// [`Env::index`], with an answer other than 200 given back as its status (a filter
    /// spelling the provider does not know may be refused: SSP-DISC-3) rather than failed.
    pub async fn index_or_status(
        &mut self,
        query: &str,
        cred: &Cred,
    ) -> Step<Result<SkillIndex, u16>> {
        let key = format!("{query}|{cred:?}");
        if let Some(i) = self.index_cache.get(&key) {
            return Ok(Ok(i.clone()));
        }
        let url = self.url(&format!("{}{query}", self.profile.well_known_path()));
        let r = self.get_judgeable(&url, cred).await?;
        if r.status != 200 {
            return Ok(Err(r.status));
        }
        let idx: SkillIndex = self.typed(r.body()?, DocType::Index, "the Skill Index")?;
        self.index_cache.insert(key, idx.clone());
        Ok(Ok(idx))
    }

    /// Validates (strict for required members and types, lenient for unknown members —
    /// ssp.md §2) and parses a document.
    pub fn typed<T: serde::de::DeserializeOwned>(
        &mut self,
        v: &Value,
        t: DocType,
        what: &str,
    ) -> Step<T> {
        let validator = SspValidator::global().map_err(|e| Finding::harness(e.to_string()))?;
        let report = validator.validate(v, t, Mode::Lenient);
        if let Some(e) = report.errors.first() {
            let finding = Finding::fail(
                &e.path,
                e.expected.clone(),
                e.actual.clone(),
                format!(
                    "{what} is not a valid {}: {} {} ({} violation(s))",
                    t.def_name(),
                    e.path,
                    e.message,
                    report.errors.len()
                ),
            );
            return Err(match t {
                DocType::Descriptor | DocType::Index => finding.on(&[schema_rule(&e.path)]),
                _ => finding,
            });
        }
        T::deserialize(v).map_err(|e| Finding::harness(format!("{what}: valid but not typed: {e}")))
    }

    /// The skill id the profile maps to `role`, or Unsupported.
    pub fn role_id(&self, role: FixtureRole) -> Step<String> {
        self.profile.roles.get(&role).cloned().ok_or_else(|| {
            Finding::untested(format!(
                "the target profile maps no skill to the fixture role `{role}` ([ssp.roles])"
            ))
        })
    }

    /// Resolves a role: its index entry (anonymous index, else an authenticated one), its
    /// descriptor (fetched with the credential that works), and the credential to invoke it.
    pub async fn fixture(&mut self, role: FixtureRole) -> Step<Fixture> {
        let id = self.role_id(role)?;
        let mut candidates = vec![Cred::None];
        candidates.extend(self.all_creds());
        let mut found = None;
        for c in &candidates {
            let idx = self.index("", c).await?;
            if let Some(e) = idx.skills.iter().find(|e| e.id == id) {
                found = Some(e.descriptor_url.clone());
                break;
            }
        }
        // Not a failure: a private skill may be omitted from every index, also for an
        // authenticated caller (ssp.md SSP-DISC-2), and the discovery checks judge what
        // an index must list.
        let url = found.ok_or_else(|| {
            Finding::untested(format!(
                "skill {id} (role {role}) is in no index the profile's credentials can see \
                 (a private skill may be omitted: SSP-DISC-2); map the role to a listed skill"
            ))
        })?;
        let mut last = None;
        for c in &candidates {
            let r = self.get(&url, c).await?;
            if r.status == 200 {
                let d: SkillDescriptor = self.typed(
                    r.body()?,
                    DocType::Descriptor,
                    &format!("descriptor of {id}"),
                )?;
                if d.id != id {
                    return Err(Finding::fail(
                        "/id",
                        json!(id),
                        json!(d.id),
                        format!("{url} describes another skill (SSP-DISC-4)"),
                    ));
                }
                let cred = self.cred_for(&d)?;
                let inputs = self.profile.inputs_for(role);
                return Ok(Fixture {
                    role,
                    descriptor: d,
                    cred,
                    inputs,
                });
            }
            last = Some(r.status);
        }
        Err(Finding::fail(
            "",
            json!(200),
            json!(last),
            format!("GET {url} (descriptor of {id}) never answered 200"),
        ))
    }

    /// The credential the profile offers for a descriptor's auth type.
    pub fn cred_for(&self, d: &SkillDescriptor) -> Step<Cred> {
        let c = &self.profile.credentials;
        let missing = |what: &str| {
            Finding::untested(format!("skill {} needs {what} in [ssp.credentials]", d.id))
        };
        Ok(match d.auth.kind {
            AuthType::None => Cred::None,
            AuthType::ApiKey => Cred::ApiKey {
                header: d.auth.header.clone().unwrap_or_else(|| "X-API-Key".into()),
                key: c.api_key.clone().ok_or_else(|| missing("api_key"))?,
            },
            AuthType::Oauth2 => Cred::Bearer(
                c.oauth2_token
                    .clone()
                    .ok_or_else(|| missing("oauth2_token"))?,
            ),
            AuthType::Custom => Cred::Hmac {
                header: c
                    .hmac_header
                    .clone()
                    .unwrap_or_else(|| "X-Signature".into()),
                secret: c
                    .hmac_secret
                    .clone()
                    .ok_or_else(|| missing("hmac_secret"))?,
            },
        })
    }

    /// The InvocationRequest body for a fixture.
    pub fn request(
        &self,
        skill_id: &str,
        inputs: &Map<String, Value>,
        timeout_ms: Option<u64>,
    ) -> Value {
        let mut r = json!({
            "caller": {"id": self.caller_id, "type": "service"},
            "skill_id": skill_id,
            "inputs": inputs,
            "context": {"trace_id": format!("{}-trace", self.caller_id), "priority": "normal"}
        });
        if let Some(t) = timeout_ms {
            r["context"]["timeout_ms"] = json!(t);
        }
        r
    }

    /// POSTs an invocation of `f` (its inputs unless `inputs` is given).
    pub async fn invoke(
        &mut self,
        f: &Fixture,
        inputs: Option<&Map<String, Value>>,
        timeout_ms: Option<u64>,
        cred: &Cred,
    ) -> Step<Resp> {
        let body = self.request(&f.descriptor.id, inputs.unwrap_or(&f.inputs), timeout_ms);
        let url = f.descriptor.endpoint.url.clone();
        let method = f.descriptor.endpoint.method.as_str();
        self.send(method, &url, Some(&body), cred).await
    }

    /// Whether `url` is on the target's own origin (hostile requests go nowhere else).
    pub fn on_target(&self, url: &str) -> bool {
        url.strip_prefix(self.base.as_str())
            .is_some_and(|rest| rest.starts_with('/'))
    }

    /// GETs `url`, waiting out rate limiting and overload ([`throttling`]: judged by no rule
    /// of the request) over `tries` with growing, time-scaled pauses: the first answer that
    /// is not throttled, or `None` when every one was (the caller says what that leaves).
    pub async fn get_unthrottled(
        &mut self,
        url: &str,
        cred: &Cred,
        tries: u32,
    ) -> Step<Option<Resp>> {
        for attempt in 1..=tries {
            let r = self.get(url, cred).await?;
            if !throttling(r.status) {
                return Ok(Some(r));
            }
            if attempt < tries {
                let pause = Duration::from_millis(200 * u64::from(attempt));
                tokio::time::sleep(self.time_scale().apply(pause)).await;
            }
        }
        Ok(None)
    }

    /// [`Env::get_unthrottled`] for a scripted check: still throttled → untested, never a
    /// verdict.
    pub async fn get_judgeable(&mut self, url: &str, cred: &Cred) -> Step<Resp> {
        self.get_unthrottled(url, cred, THROTTLED_TRIES)
            .await?
            .ok_or_else(|| {
                Finding::untested(format!(
                    "GET {url} was throttled (429/502/503) {THROTTLED_TRIES} times: not judged"
                ))
            })
    }

    /// Invokes and requires 202 + an accepted InvocationResponse (SSP-INV-1); returns the
    /// execution id and the response. A throttled answer (429/502/503: the invocation was
    /// not taken) leaves the check untested.
    pub async fn start(&mut self, f: &Fixture, timeout_ms: Option<u64>) -> Step<(String, Value)> {
        let cred = f.cred.clone();
        let r = self.invoke(f, None, timeout_ms, &cred).await?;
        if throttling(r.status) {
            return Err(Finding::untested(format!(
                "invoking {} was throttled (HTTP {}): not judged",
                f.descriptor.id, r.status
            )));
        }
        if r.status != 202 {
            return Err(Finding::fail(
                "",
                json!(202),
                json!(r.status),
                format!(
                    "invoking {} must answer 202 Accepted (SSP-INV-1)",
                    f.descriptor.id
                ),
            ));
        }
        let body = r.body()?.clone();
        let resp: crate::ssp::types::InvocationResponse =
            self.typed(&body, DocType::Response, "the 202 answer")?;
        Ok((resp.execution_id, body))
    }

    /// Expands a status/result template.
    pub fn expand(&mut self, template: Option<&str>, which: &str, exec: &str) -> Step<String> {
        let t = template
            .ok_or_else(|| Finding::unsupported(format!("the descriptor declares no {which}")))?;
        let e = crate::ssp::consumer::expand_template(t, exec);
        if e.appended {
            self.warnings.push(
                Finding::warn(
                    &format!("/endpoint/{which}"),
                    json!("a template with {execution_id}"),
                    json!(t),
                    format!("{which} has no {{execution_id}}: polled as <template>/<execution_id> (the seed diagram's reading, SSP-SCH-3)"),
                )
                .on(&["SSP-SCH-3"]),
            );
        }
        Ok(e.url)
    }

    /// Polls `status_url` until a terminal status, requiring 200 and a valid
    /// InvocationResponse each time. Bounded by wall-clock time: the skill's timeout
    /// (at most [`POLL_CAP`]) plus [`POLL_GRACE`], both scaled, counted again from the first
    /// `running` answer (an execution may wait in a queue while `accepted`). It fails only
    /// when certain — seen running for its whole timeout and the grace after it; a wait
    /// that cannot be certain (still `accepted`, a timeout beyond the cap, polls the
    /// provider keeps throttling with 429/502/503, SSP-ERR-3) ends `unsupported`.
    pub async fn poll_terminal(
        &mut self,
        f: &Fixture,
        exec: &str,
        cred: &Cred,
    ) -> Step<Vec<Value>> {
        let url = self.expand(
            f.descriptor.endpoint.status_url.as_deref(),
            "status_url",
            exec,
        )?;
        let declared =
            (f.descriptor.endpoint.timeout_ms.as_ref()).and_then(serde_json::Number::as_u64);
        let wait = ExecutionWait::new(self.client.time_scale(), declared.map(|d| d as f64));
        let span = wait.span;
        let mut deadline = Instant::now() + span;
        // Bounds the loop whatever the provider answers (throttling moves `deadline`).
        let hard_stop = Instant::now() + span * 3;
        let mut running_seen = false;
        let mut seen = Vec::new();
        loop {
            let sent = Instant::now();
            let r = self.get(&url, cred).await?;
            if throttling(r.status) {
                if Instant::now() >= hard_stop {
                    return Err(Finding::unsupported(format!(
                        "status polls of {url} kept being throttled (HTTP {})",
                        r.status
                    )));
                }
                deadline += sent.elapsed() + THROTTLED_POLL;
                tokio::time::sleep(THROTTLED_POLL).await;
                continue;
            }
            let status = self.status_answer(&url, &r)?;
            seen.push(r.body()?.clone());
            if matches!(status.as_deref(), Some("completed" | "failed" | "timeout")) {
                return Ok(seen);
            }
            if status.as_deref() == Some("running") && !running_seen {
                running_seen = true;
                deadline = deadline.max(Instant::now() + span);
            }
            if Instant::now() >= deadline.min(hard_stop) {
                return Err(self.not_terminal(
                    &seen,
                    running_seen,
                    declared,
                    Instant::now() >= deadline,
                    (wait.cap, wait.grace),
                ));
            }
            tokio::time::sleep(POLL).await;
        }
    }

    /// One status poll's answer: 200 and a valid InvocationResponse; its status.
    fn status_answer(&mut self, url: &str, r: &Resp) -> Step<Option<String>> {
        if r.status != 200 {
            return Err(Finding::fail(
                "",
                json!(200),
                json!(r.status),
                format!(
                    "status poll {url} must answer 200 (SSP-INV-3; 408/504 never apply to a poll, SSP-INV-5)"
                ),
            ));
        }
        let body = r.body()?;
        let _: crate::ssp::types::InvocationResponse =
            self.typed(body, DocType::Response, "a status answer")?;
        Ok(body["status"].as_str().map(str::to_string))
    }

    /// The end of a wait without a terminal status: a failure only when the execution was
    /// seen running for the whole bounded wait (`waited`) of a declared timeout within the
    /// cap; both messages name the scaled bounds (`cap`, `grace`).
    fn not_terminal(
        &self,
        seen: &[Value],
        running_seen: bool,
        declared: Option<u64>,
        waited: bool,
        (cap, grace): (TimeBudget, TimeBudget),
    ) -> Box<Finding> {
        let last = seen
            .last()
            .map(|b| b["status"].clone())
            .unwrap_or(Value::Null);
        if let Some(timeout) = declared
            && running_seen
            && waited
            && timeout <= cap.limit_ms()
        {
            return Finding::fail(
                "/status",
                json!("a terminal status"),
                last,
                format!(
                    "still running {} ms after its timeout of {timeout} ms: an overrun ends as timeout (SSP-INV-5; waited {grace})",
                    grace.limit_ms()
                ),
            );
        }
        let timeout = declared.map_or("none declared".into(), |t| format!("{t} ms"));
        Finding::unsupported(format!(
            "no terminal status within the harness's wait (timeout {timeout}, last status {last}); \
             an execution still accepted may be queued, and waits stop at {cap}"
        ))
    }

    /// Requires an error response: one of `statuses`, the unified shape (SSP-ERR-1), and a
    /// code the one SSP code judge (`ssp::codes`, SSP-ERR-2/3) accepts for `cond`.
    pub fn expect_error(
        &mut self,
        r: &Resp,
        statuses: &[u16],
        cond: Condition,
        what: &str,
    ) -> Step<ErrorObject> {
        if !statuses.contains(&r.status) {
            return Err(Finding::fail(
                "",
                json!(statuses),
                json!(r.status),
                format!("{what}: expected HTTP {statuses:?}"),
            ));
        }
        let body = r.body()?.clone();
        let e: ErrorResponse = self.typed(
            &body,
            DocType::Error,
            &format!("{what}: the error body (SSP-ERR-1)"),
        )?;
        self.judge_code(cond, Some(r.status), e.error.code.as_str(), what)?;
        Ok(e.error)
    }

    /// SSP-ERR-2/3 through the one judge (`ssp::codes`): a pass is silent, a tolerated
    /// reading a warning, a broken rule a failure naming that rule.
    pub fn judge_code(
        &mut self,
        cond: Condition,
        status: Option<u16>,
        code: &str,
        what: &str,
    ) -> Step<()> {
        let want = json!(codes::expected(cond, status));
        match codes::judge(cond, status, code) {
            codes::Verdict::Pass => Ok(()),
            codes::Verdict::Warn(m) => {
                self.warnings.push(
                    Finding::warn("/error/code", want, json!(code), format!("{what}: {m}"))
                        .on(&["SSP-ERR-3"]),
                );
                Ok(())
            }
            codes::Verdict::Fail { rule, message } => Err(Finding::fail(
                "/error/code",
                want,
                json!(code),
                format!("{what}: {message}"),
            )
            .on(&[rule])),
        }
    }
}

/// Builds a request: JSON body, `Accept`, credentials (secrets masked in the record).
fn prepare(method: &str, url: &str, body: Option<&Value>, cred: &Cred) -> Prepared {
    let bytes = body.map(|b| b.to_string().into_bytes());
    let json = [("content-type".to_owned(), "application/json".to_owned())];
    let headers: &[(String, String)] = if bytes.is_some() { &json } else { &[] };
    prepare_bytes(method, url, headers, bytes, cred)
}

/// Builds a request from any body bytes and extra headers: `Accept`, the headers, then the
/// credentials computed over the bytes (secrets masked in the record).
fn prepare_bytes(
    method: &str,
    url: &str,
    extra: &[(String, String)],
    body: Option<Vec<u8>>,
    cred: &Cred,
) -> Prepared {
    let mut headers = vec![("accept".to_owned(), "application/json".to_owned())];
    headers.extend(extra.iter().cloned());
    let mut recorded = headers.clone();
    for (n, v, r) in cred.headers(body.as_deref().unwrap_or(&[])) {
        headers.push((n.clone(), v));
        recorded.push((n, r));
    }
    let shown = body
        .as_ref()
        .map(|b| String::from_utf8_lossy(b).into_owned());
    Prepared {
        method: method.into(),
        url: url.into(),
        headers,
        recorded_headers: recorded,
        body,
        shown_body: shown,
    }
}

/// The schema rule a served index or descriptor breaks at `path` (issue 26: a failure names
/// the rule it violated): versions are SSP-SCH-2's, URLs and URL templates SSP-SCH-3's, the
/// auth members and input names SSP-SCH-4's, the rest the schema's own (SSP-SCH-1).
pub fn schema_rule(path: &str) -> &'static str {
    let last = path.rsplit('/').next().unwrap_or_default();
    if last == "version" {
        "SSP-SCH-2"
    } else if last == "url" || last.ends_with("_url") {
        "SSP-SCH-3"
    } else if path.starts_with("/auth") || path.starts_with("/inputs") {
        "SSP-SCH-4"
    } else {
        "SSP-SCH-1"
    }
}
