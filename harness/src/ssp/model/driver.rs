//! Driving one model step against a provider: the operation becomes HTTP requests through
//! the SSP [`Env`], each answer is compared with the pure predictions of [`super::state`],
//! and the returned objects (index, descriptor, InvocationResponse, error) are checked.
//! Server execution ids are mapped onto the model's execution numbers here, and the
//! invariant that spans sequences (ids never reused, SSP-INV-7) is kept across them.
//!
//! The only waits are [`Driver`]'s bounded poll loop of `Await` (a deadline from the
//! effective timeout, short pauses between polls); every request has the client's timeout.

mod discovery;
mod executions;
mod invocation;

use std::collections::HashSet;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::idle::Idle;
use super::lifecycle::Track;
use super::ops::Op;
use super::state::{self, Caller, Finding, Refusal, Skill, World, breach};
use crate::ssp::codes::Condition;
use crate::ssp::provider::env::{Cred, Env, Resp};
use crate::ssp::types::AuthType;
use crate::ssp::validator::DocType;
use crate::transport::Exchange;

pub use crate::engine::counterexample::StepLog;

/// The profile's secrets and header names, per caller.
#[derive(Debug, Clone, Default)]
pub struct Secrets {
    /// `api_key`, `api_key_limited`.
    pub api_key: (Option<String>, Option<String>),
    /// `oauth2_token`, `oauth2_token_limited`.
    pub oauth2: (Option<String>, Option<String>),
    /// `hmac_secret`.
    pub hmac: Option<String>,
    /// The HMAC signature header.
    pub hmac_header: String,
    /// The API key header for requests about no api_key skill (discovery).
    pub api_header: String,
}

const WRONG: &str = "conform-model-wrong-credential";

impl Secrets {
    /// The credential `caller` sends for a request about `skill` (its header names, and
    /// the wrong credential in its scheme).
    pub fn cred(&self, caller: Caller, skill: Option<&Skill>) -> Cred {
        let header = skill
            .and_then(|s| s.header.clone())
            .unwrap_or_else(|| self.api_header.clone());
        let key = |k: &Option<String>| Cred::ApiKey {
            header: header.clone(),
            key: k.clone().unwrap_or_default(),
        };
        let hmac = |s: &str| Cred::Hmac {
            header: self.hmac_header.clone(),
            secret: s.to_string(),
        };
        match caller {
            Caller::Anonymous => Cred::None,
            Caller::ApiKey { limited } => key(if limited {
                &self.api_key.1
            } else {
                &self.api_key.0
            }),
            Caller::Oauth2 { limited } => {
                let t = if limited {
                    &self.oauth2.1
                } else {
                    &self.oauth2.0
                };
                Cred::Bearer(t.clone().unwrap_or_default())
            }
            Caller::Hmac => hmac(self.hmac.as_deref().unwrap_or_default()),
            Caller::Wrong => match skill.map(|s| s.auth) {
                Some(AuthType::Oauth2) => Cred::Bearer(WRONG.into()),
                Some(AuthType::Custom) => hmac(WRONG),
                _ => key(&Some(WRONG.into())),
            },
        }
    }
}

/// Ids every invocation of a run returned (SSP-INV-7: never reused).
pub type SeenIds = Mutex<HashSet<String>>;

/// One sequence's driver.
pub struct Driver<'a> {
    env: Env,
    secrets: &'a Secrets,
    seen_ids: &'a SeenIds,
    /// Server id of each model execution (`None`: the invocation was throttled).
    ids: Vec<Option<String>>,
    tracks: Vec<Option<Track>>,
    /// When each model execution's invocation was sent (the server's clock for it starts
    /// later: SSP-INV-4's confirmation reads an upper bound of its age from this).
    invoked: Vec<Instant>,
    answer: Value,
    unknown: usize,
    /// The steps so far.
    pub log: Vec<StepLog>,
    /// Accepted readings worth reporting, with their rule.
    pub warnings: Vec<(&'static str, String)>,
    /// Where this sequence's lane reports its pauses between polls of running executions
    /// (the run's idle time is when every lane pauses).
    idle: &'a Idle,
    /// Exchanges sent since the runner last took the count (every poll included).
    pub sent: u64,
}

type Step<T> = Result<T, Box<Finding>>;

fn no_response(message: &str) -> Box<Finding> {
    // No rule: the runner reports it as an error of the run, not a verdict on a rule.
    breach(
        &[],
        format!("no HTTP response: {message}"),
        json!("an HTTP response"),
        Value::Null,
    )
}

/// Rate limiting, overload or an unreachable upstream: answers any request may draw and no
/// rule of the model judges (SSP-ERR-3; `ENDPOINT_UNREACHABLE` travels with 502/503, seed
/// §8.1).
fn throttled(r: &Resp) -> bool {
    crate::ssp::provider::env::throttling(r.status)
}

/// `allowed`, and [`THROTTLE`] too when `r` is throttled (only then: a failure's expected
/// list names what the step itself allows).
fn or_throttled(mut allowed: Vec<Refusal>, r: &Resp) -> Vec<Refusal> {
    if throttled(r) {
        allowed.extend(THROTTLE);
    }
    allowed
}

/// An answer with `status`, its code judged by the status's row of SSP-ERR-3's table
/// (the unified shape still required).
const fn any_code(status: u16) -> Refusal {
    state::refuse(status, Condition::ByStatus)
}

const THROTTLE: [Refusal; 3] = [any_code(429), any_code(502), any_code(503)];

/// What an invocation may draw besides [`THROTTLE`]: its synchronous request timing out
/// (408/504 "are for a synchronous request that itself times out", SSP-INV-5).
const INVOKE_TRANSIENT: [Refusal; 5] = [
    any_code(429),
    any_code(502),
    any_code(503),
    any_code(408),
    any_code(504),
];

/// The capability type no target defines (SSP-DISC-3's unknown filter value).
const NO_SUCH_TYPE: &str = "conform-model-no-such-type";
/// Shortest and longest pause between two status polls of [`Driver::await_terminal`]. In
/// between, the pause is an eighth of the execution's age ([`poll_pause`]): an execution is
/// seen terminal at most about 12 % after its end (a 60 ms one by 68 ms; doubling pauses up
/// to 25 ms saw it at 80), and a long one costs the target four polls a second (was 40).
const FIRST_POLL: Duration = Duration::from_millis(2);
const POLL: Duration = Duration::from_millis(250);

/// The pause before polling again an execution invoked `age` ago.
pub(super) fn poll_pause(age: Duration) -> Duration {
    (age / 8).clamp(FIRST_POLL, POLL)
}

impl<'a> Driver<'a> {
    /// A driver sending through `env`.
    pub fn new(env: Env, secrets: &'a Secrets, seen_ids: &'a SeenIds, idle: &'a Idle) -> Self {
        Self {
            env,
            secrets,
            seen_ids,
            ids: Vec::new(),
            tracks: Vec::new(),
            invoked: Vec::new(),
            answer: Value::Null,
            unknown: 0,
            log: Vec::new(),
            warnings: Vec::new(),
            idle,
            sent: 0,
        }
    }

    /// Sends resolved `op` on model `w` and checks the answer; logs the step.
    pub async fn step(&mut self, w: &World, op: &Op) -> Step<()> {
        let before = self.env.exchanges.len();
        self.answer = Value::Null;
        let result = match op {
            Op::Discover { by, filter } => self.discover(w, *by, *filter).await,
            Op::Descriptor { by, skill } => self.descriptor(w, *by, *skill).await,
            Op::UnknownDescriptor { by } => self.unknown_descriptor(w, *by).await,
            Op::Invoke {
                by: Some(by),
                unit,
                timeout,
            } => self.invoke(w, *by, *unit, *timeout).await,
            Op::Invalid { unit, what } => self.invalid(w, *unit, *what).await,
            Op::Status { by: Some(by), exec } => self.read(w, *by, *exec, false).await,
            Op::Result { by: Some(by), exec } => self.read(w, *by, *exec, true).await,
            Op::Await { exec } => self.await_terminal(w, *exec).await,
            Op::UnknownExecution {
                by: Some(by),
                unit,
                result,
            } => self.unknown_execution(w, *by, *unit, *result).await,
            _ => Ok(()),
        };
        let mut exchanges: Vec<Exchange> = self.env.exchanges.drain(before..).collect();
        self.sent += exchanges.len() as u64;
        // An `Await` may poll many times: its transcript line keeps the last four requests.
        if exchanges.len() > 4 {
            exchanges.drain(..exchanges.len() - 4);
        }
        self.log.push(StepLog {
            text: w.describe(op),
            answer: self.answer.clone(),
            exchanges,
        });
        result
    }

    async fn send(
        &mut self,
        method: &str,
        url: &str,
        body: Option<&Value>,
        cred: &Cred,
    ) -> Step<Resp> {
        let r = self
            .env
            .send(method, url, body, cred)
            .await
            .map_err(|f| no_response(&f.message))?;
        let j = r.json.as_ref();
        self.answer = json!({
            "http": r.status,
            "code": j.and_then(|j| j.pointer("/error/code")),
            "status": j.and_then(|j| j.get("status")),
        });
        Ok(r)
    }

    fn typed<T: serde::de::DeserializeOwned>(
        &mut self,
        r: &Resp,
        t: DocType,
        rules: &[&'static str],
        what: &str,
    ) -> Step<T> {
        let Some(body) = r.json.as_ref() else {
            return Err(breach(
                rules,
                format!("{what}: the body is not JSON"),
                json!("JSON"),
                json!(r.text.chars().take(200).collect::<String>()),
            ));
        };
        self.env.typed(body, t, what).map_err(|f| {
            breach(
                rules,
                f.message.clone(),
                f.expected.clone(),
                f.observed.clone(),
            )
        })
    }
}
