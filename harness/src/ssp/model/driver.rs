//! Driving one model step against a provider: the operation becomes HTTP requests through
//! the SSP [`Env`], each answer is compared with the pure predictions of [`super::state`],
//! and the returned objects (index, descriptor, InvocationResponse, error) are checked.
//! Server execution ids are mapped onto the model's execution numbers here, and the
//! invariant that spans sequences (ids never reused, SSP-INV-7) is kept across them.
//!
//! The only waits are [`Driver`]'s bounded poll loop of `Await` (a deadline from the
//! effective timeout, short pauses between polls); every request has the client's timeout.

use std::collections::{BTreeSet, HashSet};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::lifecycle::Track;
use super::ops::Op;
use super::state::{
    self, Caller, Exec, Filter, Invalid, Invoke, Mismatch, Read, Refusal, Skill, Timeout, World,
    breach,
};
use crate::ssp::codes::Condition;
use crate::ssp::provider::env::{Cred, Env, Resp, unknown_descriptor_url};
use crate::ssp::types::{AuthType, ExecutionStatus, SkillDescriptor, SkillIndex};
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
    answer: Value,
    unknown: usize,
    /// The steps so far.
    pub log: Vec<StepLog>,
    /// Accepted readings worth reporting, with their rule.
    pub warnings: Vec<(&'static str, String)>,
    /// Time spent pausing between polls of running executions (the rest is work).
    pub waited: Duration,
    /// Exchanges sent since the runner last took the count (every poll included).
    pub sent: u64,
}

type Step<T> = Result<T, Box<Mismatch>>;

fn no_response(message: &str) -> Box<Mismatch> {
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
    THROTTLE.iter().any(|t| t.status == r.status)
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
/// Pause between two status polls of [`Driver::await_terminal`].
const POLL: Duration = Duration::from_millis(25);
/// Pause after a throttled poll (the wait's deadline moves by as much).
const THROTTLED_POLL: Duration = Duration::from_millis(250);
/// Longest effective timeout a wait covers in full (a longer one ends the wait
/// inconclusively), and the grace after it for the provider to notice the overrun.
const WAIT_CAP_MS: f64 = 60_000.0;
const WAIT_GRACE_MS: f64 = 5_000.0;

impl<'a> Driver<'a> {
    /// A driver sending through `env`.
    pub fn new(env: Env, secrets: &'a Secrets, seen_ids: &'a SeenIds) -> Self {
        Self {
            env,
            secrets,
            seen_ids,
            ids: Vec::new(),
            tracks: Vec::new(),
            answer: Value::Null,
            unknown: 0,
            log: Vec::new(),
            warnings: Vec::new(),
            waited: Duration::ZERO,
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

    async fn discover(&mut self, w: &World, by: usize, filter: Filter) -> Step<()> {
        let query = match filter {
            Filter::None => String::new(),
            Filter::Capability(t, false) => format!("?capability_type={}", t.as_str()),
            Filter::Capability(t, true) => format!("?type={}", t.as_str()),
            Filter::Unknown => format!("?capability_type={NO_SUCH_TYPE}"),
        };
        let pred = state::discovery(w, by, filter);
        let Some(got) = self.discovery_answer(w, by, filter, &query, &pred).await? else {
            return Ok(());
        };
        // SSP-DISC-3 is met by either spelling (seed §4.2 names `?type=`, ssp.md
        // `?capability_type=`): one answered as if unfiltered is a warning, never a failure;
        // the scripted filter check fails a target honouring neither.
        let unfiltered = state::discovery(w, by, Filter::None).exactly;
        if let (Filter::Capability(t, registry), Some(all)) = (filter, &unfiltered)
            && *all == got
            && pred.exactly.as_ref() != Some(&got)
        {
            let param = if registry { "type" } else { "capability_type" };
            self.warnings.push((
                "SSP-DISC-3",
                format!(
                    "?{param}={} is not honoured (the index came back unfiltered)",
                    t.as_str()
                ),
            ));
            return state::judge_index(w, by, Filter::None, Some(all), &got);
        }
        // The same for the unknown value: a target that knows only `?type=` ignores
        // `?capability_type=` whatever its value, so the value is sent again in the
        // spelling it may know, and that answer is judged.
        // (Unfiltered: what the model expects of this caller, or what it listed when the
        // run began, so a target also breaking SSP-DISC-2 is still recognised here.)
        let seen = w.seen.get(by).cloned().flatten();
        if matches!(filter, Filter::Unknown)
            && !got.is_empty()
            && (unfiltered.as_ref() == Some(&got) || seen.as_ref() == Some(&got))
        {
            self.warnings.push((
                "SSP-DISC-3",
                format!("?capability_type={NO_SUCH_TYPE} is not honoured (the index came back unfiltered): sent again as ?type="),
            ));
            let query = format!("?type={NO_SUCH_TYPE}");
            let Some(got) = self.discovery_answer(w, by, filter, &query, &pred).await? else {
                return Ok(());
            };
            return state::judge_index(w, by, filter, pred.exactly.as_ref(), &got);
        }
        state::judge_index(w, by, filter, pred.exactly.as_ref(), &got)
    }

    /// One discovery request with `query`: a refusal judged against `pred` (`None`), an
    /// empty index where one is allowed (`None`), else the ids the index lists.
    async fn discovery_answer(
        &mut self,
        w: &World,
        by: usize,
        filter: Filter,
        query: &str,
        pred: &state::Discovery,
    ) -> Step<Option<BTreeSet<String>>> {
        let url = self
            .env
            .url(&format!("{}{query}", self.env.profile.well_known_path()));
        let cred = self.secrets.cred(w.callers[by], None);
        let r = self.send("GET", &url, None, &cred).await?;
        let rules: &[&'static str] = if matches!(filter, Filter::None) {
            &["SSP-DISC-2"]
        } else {
            &["SSP-DISC-3"]
        };
        if throttled(&r) {
            self.check_error(r.status, r.json.as_ref(), &THROTTLE, rules, "discovery")?;
            return Ok(None);
        }
        if r.status != 200 {
            self.check_error(
                r.status,
                r.json.as_ref(),
                &pred.refusals,
                rules,
                "discovery",
            )?;
            return Ok(None);
        }
        let idx: SkillIndex = self.typed(&r, DocType::Index, &["SSP-DISC-1"], "the Skill Index")?;
        let got: BTreeSet<String> = idx.skills.iter().map(|e| e.id.clone()).collect();
        if pred.empty_ok && got.is_empty() {
            return Ok(None);
        }
        Ok(Some(got))
    }

    async fn descriptor(&mut self, w: &World, by: usize, skill: usize) -> Step<()> {
        let s = &w.skills[skill];
        let cred = self.secrets.cred(w.callers[by], Some(s));
        let r = self.send("GET", &s.descriptor_url, None, &cred).await?;
        const RULES: &[&str] = &["SSP-DISC-4"];
        if throttled(&r) {
            return self.check_error(r.status, r.json.as_ref(), &THROTTLE, RULES, "descriptor");
        }
        let refusals = match state::descriptor(w, by, skill) {
            Read::Ok => Vec::new(),
            Read::Refuse(list) => {
                return self.check_error(
                    r.status,
                    r.json.as_ref(),
                    &list,
                    RULES,
                    "descriptor read",
                );
            }
            Read::Either(list) => list,
        };
        if r.status != 200 {
            return self.check_error(
                r.status,
                r.json.as_ref(),
                &refusals,
                RULES,
                "descriptor read",
            );
        }
        let d: SkillDescriptor = self.typed(&r, DocType::Descriptor, RULES, "the descriptor")?;
        let want = json!([
            s.id,
            s.name_version.0,
            s.capability.as_str(),
            s.access.as_str(),
            s.name_version.1
        ]);
        let got = json!([
            d.id,
            d.name,
            d.capability_type.as_str(),
            d.access.as_str(),
            d.version
        ]);
        if want != got {
            return Err(breach(
                RULES,
                "the descriptor agrees with its index entry (id, name, capability_type, access, version)",
                want,
                got,
            ));
        }
        Ok(())
    }

    async fn unknown_descriptor(&mut self, w: &World, by: usize) -> Step<()> {
        let Some(first) = w.skills.first() else {
            return Ok(());
        };
        let unknown = "conform-model-unknown-skill";
        let Some((url, layout)) = unknown_descriptor_url(&first.descriptor_url, &first.id, unknown)
        else {
            return Ok(());
        };
        // Only a path of the provider's own descriptor layout is certain to be one.
        let not_found = if layout {
            state::NOT_FOUND
        } else {
            state::NO_RESOURCE
        };
        let cred = self.secrets.cred(w.callers[by], None);
        let r = self.send("GET", &url, None, &cred).await?;
        let mut allowed = vec![not_found];
        if w.callers[by] == Caller::Wrong {
            allowed.push(state::AUTH_REQUIRED);
        }
        if throttled(&r) {
            allowed.extend(THROTTLE);
        }
        self.check_error(
            r.status,
            r.json.as_ref(),
            &allowed,
            &["SSP-DISC-4"],
            "unknown descriptor path",
        )
    }

    fn body(&self, w: &World, unit: usize, timeout: Timeout) -> Value {
        let u = &w.units[unit];
        let mut b = self.env.request(&w.skills[u.skill].id, &u.inputs, None);
        let number = |x: f64| {
            if x.fract() == 0.0 {
                json!(x as i64)
            } else {
                json!(x)
            }
        };
        match timeout {
            Timeout::Absent => {}
            Timeout::Ms(x) | Timeout::Odd(x) => b["context"]["timeout_ms"] = number(x),
            Timeout::Text => b["context"]["timeout_ms"] = json!("100"),
        }
        b
    }

    async fn invoke(&mut self, w: &World, by: usize, unit: usize, timeout: Timeout) -> Step<()> {
        let s = &w.skills[w.units[unit].skill];
        let body = self.body(w, unit, timeout);
        let cred = self.secrets.cred(w.callers[by], Some(s));
        let r = self
            .send(&s.method, &s.endpoint, Some(&body), &cred)
            .await?;
        let pred = state::invoke(w, by, unit, timeout);
        let tracked = pred == Invoke::Accept;
        if INVOKE_TRANSIENT.iter().any(|t| t.status == r.status) {
            // Whether an execution exists is unknown: the model does not follow it.
            if tracked {
                self.ids.push(None);
                self.tracks.push(None);
            }
            return self.check_error(
                r.status,
                r.json.as_ref(),
                &INVOKE_TRANSIENT,
                &["SSP-ERR-3"],
                "invocation",
            );
        }
        let (refusals, rules) = match &pred {
            Invoke::Accept => (Vec::new(), &["SSP-INV-1", "SSP-AUTH-1"][..]),
            Invoke::Refuse(l, rules) | Invoke::Either(l, rules) => (l.clone(), *rules),
        };
        if r.status != 202 || matches!(pred, Invoke::Refuse(..)) {
            if r.status == 202 {
                self.accepted(&r, s)?;
            }
            let rules: &[&'static str] = if r.status == 200 {
                &["SSP-INV-1"]
            } else {
                rules
            };
            return self.check_error(r.status, r.json.as_ref(), &refusals, rules, "invocation");
        }
        let id = self.accepted(&r, s)?;
        if tracked {
            let mut w2 = w.clone();
            let n = state::create(&mut w2, unit, by, timeout);
            let exec = &w2.execs[n];
            let track = Track::new(&id, &s.id, exec);
            let body = r.json.clone().unwrap_or_default();
            let seen = track.observe(exec, &body)?;
            self.warnings.extend(seen.warnings);
            self.ids.push(Some(id));
            self.tracks.push(Some(seen.track));
        }
        Ok(())
    }

    /// SSP-INV-1/7: a 202's body is an accepted InvocationResponse with a fresh id.
    fn accepted(&mut self, r: &Resp, s: &Skill) -> Step<String> {
        let resp: crate::ssp::types::InvocationResponse =
            self.typed(r, DocType::Response, &["SSP-INV-1"], "the 202 answer")?;
        if resp.status != ExecutionStatus::Accepted || resp.skill_id != s.id {
            return Err(breach(
                &["SSP-INV-1"],
                "202 carries an accepted InvocationResponse of the invoked skill",
                json!({"status": "accepted", "skill_id": s.id}),
                json!({"status": resp.status.as_str(), "skill_id": resp.skill_id}),
            ));
        }
        let fresh = self
            .seen_ids
            .lock()
            .map(|mut ids| ids.insert(resp.execution_id.clone()))
            .unwrap_or(true);
        if !fresh {
            return Err(breach(
                &["SSP-INV-7"],
                "execution ids are unique across invocations: this one was returned before",
                json!("a new execution_id"),
                json!(resp.execution_id),
            ));
        }
        Ok(resp.execution_id)
    }

    async fn invalid(&mut self, w: &World, unit: usize, what: Invalid) -> Step<()> {
        let Some(owner) = w.owner_of(unit) else {
            return Ok(());
        };
        let s = &w.skills[w.units[unit].skill];
        let mut body = self.body(
            w,
            unit,
            if what == Invalid::TextTimeout {
                Timeout::Text
            } else {
                Timeout::Absent
            },
        );
        match what {
            Invalid::MissingRequired => {
                if let Some((name, _)) = s
                    .inputs
                    .iter()
                    .find(|(n, r)| *r && body["inputs"].get(n).is_some())
                    && let Some(inputs) = body["inputs"].as_object_mut()
                {
                    inputs.remove(name);
                }
            }
            Invalid::Undeclared => body["inputs"]["conform_model_undeclared"] = json!(true),
            Invalid::UnknownSkill => body["skill_id"] = json!("conform-model/no-such-skill"),
            Invalid::OtherSkill(o) => body["skill_id"] = json!(w.skills[o].id),
            Invalid::TextTimeout => {}
        }
        let cred = self.secrets.cred(w.callers[owner], Some(s));
        let r = self
            .send(&s.method, &s.endpoint, Some(&body), &cred)
            .await?;
        let mut allowed = state::invalid(what);
        if throttled(&r) {
            allowed.extend(THROTTLE);
        }
        if r.status == 202 {
            let _ = self.accepted(&r, s);
        }
        self.check_error(
            r.status,
            r.json.as_ref(),
            &allowed,
            &["SSP-INV-2"],
            "invalid invocation",
        )
    }

    fn url(&self, w: &World, exec: usize, result: bool) -> Option<(String, usize)> {
        let id = self.ids.get(exec).cloned().flatten()?;
        let s = w.units[w.execs[exec].unit].skill;
        let t = if result {
            w.skills[s].result_url.as_deref()
        } else {
            w.skills[s].status_url.as_deref()
        }?;
        Some((crate::ssp::consumer::expand_template(t, &id).url, s))
    }

    async fn read(&mut self, w: &World, by: usize, exec: usize, result: bool) -> Step<()> {
        let Some((url, s)) = self.url(w, exec, result) else {
            return Ok(());
        };
        let cred = self.secrets.cred(w.callers[by], Some(&w.skills[s]));
        let r = self.send("GET", &url, None, &cred).await?;
        if throttled(&r) {
            return self.check_error(r.status, r.json.as_ref(), &THROTTLE, &["SSP-ERR-3"], "poll");
        }
        let e = &w.execs[exec];
        match state::read(w, exec, by) {
            Read::Refuse(list) => self.hidden(&r, &list),
            // A readable answer (200, 202, an early result's 409) is judged as the creator's.
            Read::Either(list) if list.iter().any(|x| x.status == r.status) => {
                self.hidden(&r, &list)
            }
            _ if result => self.result_answer(e, exec, &r),
            _ => self.status_answer(e, exec, &r),
        }
    }

    /// [`state::check_error`], its tolerated readings kept as warnings (SSP-ERR-3).
    fn check_error(
        &mut self,
        status: u16,
        body: Option<&Value>,
        allowed: &[Refusal],
        rules: &[&'static str],
        what: &str,
    ) -> Step<()> {
        let judged = state::check_error(status, body, allowed, rules, what)?;
        if let Some(w) = judged.warning {
            self.warnings.push(("SSP-ERR-3", w));
        }
        Ok(())
    }

    /// SSP-INV-6: another caller learns nothing of a non-public execution.
    fn hidden(&mut self, r: &Resp, allowed: &[Refusal]) -> Step<()> {
        self.check_error(
            r.status,
            r.json.as_ref(),
            allowed,
            &["SSP-INV-6"],
            "another caller's read of the execution",
        )?;
        if r.json
            .as_ref()
            .is_some_and(|j| j.get("output").is_some() || j.get("execution_id").is_some())
        {
            return Err(breach(
                &["SSP-INV-6"],
                "no output or state leaks to another caller",
                json!({"output": null}),
                r.json.clone().unwrap_or_default(),
            ));
        }
        Ok(())
    }

    fn observe(
        &mut self,
        e: &Exec,
        exec: usize,
        r: &Resp,
        rules: &[&'static str],
    ) -> Step<ExecutionStatus> {
        let resp: crate::ssp::types::InvocationResponse =
            self.typed(r, DocType::Response, rules, "the InvocationResponse")?;
        let Some(Some(track)) = self.tracks.get(exec) else {
            return Ok(resp.status);
        };
        let seen = track.observe(e, r.json.as_ref().unwrap_or(&Value::Null))?;
        self.warnings.extend(seen.warnings);
        self.tracks[exec] = Some(seen.track);
        Ok(resp.status)
    }

    /// SSP-INV-3: the creator's status read is 200 and a forward-only InvocationResponse.
    fn status_answer(&mut self, e: &Exec, exec: usize, r: &Resp) -> Step<()> {
        if r.status != 200 {
            let rules: &[&'static str] = if matches!(r.status, 408 | 504) {
                &["SSP-INV-5", "SSP-INV-3"]
            } else {
                &["SSP-INV-3"]
            };
            return Err(breach(
                rules,
                "a status poll answers 200 with the InvocationResponse (408/504 never apply to a poll)",
                json!(200),
                json!({"http": r.status, "body": r.json}),
            ));
        }
        self.observe(e, exec, r, &["SSP-INV-3"]).map(drop)
    }

    /// SSP-INV-4: 200 with output once completed; before, 202 without output, or 409.
    fn result_answer(&mut self, e: &Exec, exec: usize, r: &Resp) -> Step<()> {
        const RULES: &[&str] = &["SSP-INV-4"];
        let last = self.tracks.get(exec).cloned().flatten();
        match r.status {
            200 | 202 => {
                let status = self.observe(e, exec, r, RULES)?;
                let early = r.status == 202;
                if early == status.is_terminal()
                    || (early && r.json.as_ref().is_some_and(|j| j.get("output").is_some()))
                {
                    return Err(breach(
                        RULES,
                        "result_url: 200 once terminal, 202 without output before",
                        json!({"200": "terminal", "202": "accepted|running, no output"}),
                        json!({"http": r.status, "status": status.as_str()}),
                    ));
                }
                Ok(())
            }
            _ if last.as_ref().and_then(|t| t.last) == Some(ExecutionStatus::Completed) => {
                Err(breach(
                    RULES,
                    "the result of a completed execution is 200 with its output",
                    json!(200),
                    json!({"http": r.status, "body": r.json}),
                ))
            }
            409 => self.check_error(
                409,
                r.json.as_ref(),
                &[state::refuse(409, Condition::EarlyResult)],
                RULES,
                "early result",
            ),
            s if (400..600).contains(&s)
                && !matches!(s, 401 | 403 | 404)
                && last.is_none_or(|t| {
                    t.allowed.has(ExecutionStatus::Failed)
                        || t.allowed.has(ExecutionStatus::Timeout)
                }) =>
            {
                // No output to give: the notes do not fix the answer for a failed or
                // timed-out execution's result (SSP-ERR-3).
                self.check_error(
                    s,
                    r.json.as_ref(),
                    &[state::refuse(s, Condition::SkillFailed)],
                    RULES,
                    "result without output",
                )
            }
            s => Err(breach(
                RULES,
                "the creator's result read answers 200, 202 or 409",
                json!([200, 202, 409]),
                json!({"http": s, "body": r.json}),
            )),
        }
    }

    /// Polls an execution until it is terminal. SSP-INV-5 fails it only when certain: it
    /// was seen `running` and stayed non-terminal for its whole effective timeout plus a
    /// grace after that. A queue (`accepted` throughout), throttled polls (the deadline
    /// moves by their time) and timeouts beyond [`WAIT_CAP_MS`] end the wait inconclusively.
    async fn await_terminal(&mut self, w: &World, exec: usize) -> Step<()> {
        let Some((url, s)) = self.url(w, exec, false) else {
            return Ok(());
        };
        let e = &w.execs[exec];
        let cred = self.secrets.cred(w.callers[e.owner], Some(&w.skills[s]));
        let bound = e.effective_ms.map(|t| t.max(0.0));
        let span = Duration::from_millis(
            (bound.map_or(10_000.0, |b| b.min(WAIT_CAP_MS)) + WAIT_GRACE_MS) as u64,
        );
        let started = Instant::now();
        let mut deadline = started + span;
        // Bounds the loop whatever the provider answers (throttling moves `deadline`).
        let hard_stop = started + span * 3;
        let mut running_since: Option<Instant> = None;
        loop {
            let sent = Instant::now();
            let r = self.send("GET", &url, None, &cred).await?;
            if throttled(&r) {
                deadline += sent.elapsed() + THROTTLED_POLL;
                if Instant::now() >= hard_stop {
                    let last = self.last_status(exec);
                    self.unfinished_instant(w, exec, last, started.elapsed());
                    return Ok(());
                }
                tokio::time::sleep(THROTTLED_POLL).await;
                self.waited += THROTTLED_POLL;
                continue;
            }
            self.status_answer(e, exec, &r)?;
            let last = self.last_status(exec);
            if last.is_some_and(ExecutionStatus::is_terminal) {
                return Ok(());
            }
            if last == Some(ExecutionStatus::Running) && running_since.is_none() {
                running_since = Some(Instant::now());
                deadline = deadline.max(Instant::now() + span);
            }
            if Instant::now() >= deadline.min(hard_stop) {
                return match bound {
                    Some(b)
                        if b <= WAIT_CAP_MS
                            && running_since.is_some()
                            && Instant::now() >= deadline =>
                    {
                        Err(breach(
                            &["SSP-INV-5"],
                            format!(
                                "still running {WAIT_GRACE_MS} ms after its effective timeout of {b} ms: an overrun ends as timeout"
                            ),
                            json!("a terminal status"),
                            json!(last.map(ExecutionStatus::as_str)),
                        ))
                    }
                    _ => {
                        self.unfinished_instant(w, exec, last, started.elapsed());
                        Ok(())
                    }
                };
            }
            tokio::time::sleep(POLL).await;
            self.waited += POLL;
        }
    }

    /// The last status read of execution `exec` (`None`: none yet).
    fn last_status(&self, exec: usize) -> Option<ExecutionStatus> {
        self.tracks
            .get(exec)
            .and_then(Option::as_ref)
            .and_then(|t| t.last)
    }

    /// An execution the profile declares instant (`[ssp.roles]`, finishes at once) that
    /// is still not terminal when the wait ends: nothing is judged on time (no timeout it
    /// overran was seen), but it does not pass silently either — its result went unjudged.
    fn unfinished_instant(
        &mut self,
        w: &World,
        exec: usize,
        last: Option<ExecutionStatus>,
        waited: Duration,
    ) {
        let unit = &w.units[w.execs[exec].unit];
        if unit.lifecycle == Some(state::Lifecycle::Instant) {
            self.warnings.push((
                "SSP-INV-3",
                format!(
                    "the profile's role `{}` (skill {}) finishes at once, yet it was still {} after {} ms of polling: its outcome went unjudged",
                    unit.role,
                    w.skills[unit.skill].id,
                    last.map_or("unread", ExecutionStatus::as_str),
                    waited.as_millis()
                ),
            ));
        }
    }

    async fn unknown_execution(
        &mut self,
        w: &World,
        by: usize,
        unit: usize,
        result: bool,
    ) -> Step<()> {
        let s = &w.skills[w.units[unit].skill];
        self.unknown += 1;
        let bogus = format!("{}-unknown-{}", self.env.caller_id, self.unknown);
        let t = if result {
            s.result_url.as_deref()
        } else {
            s.status_url.as_deref()
        };
        let Some(url) = t.map(|t| crate::ssp::consumer::expand_template(t, &bogus).url) else {
            return Ok(());
        };
        let cred = self.secrets.cred(w.callers[by], Some(s));
        let r = self.send("GET", &url, None, &cred).await?;
        const RULES: &[&str] = &["SSP-INV-4"];
        let owner = w.owner_of(unit) == Some(by);
        let mut allowed = vec![state::NO_RESOURCE];
        if !owner {
            allowed.extend([state::AUTH_REQUIRED, state::PERMISSION_DENIED]);
        }
        if throttled(&r) {
            allowed.extend(THROTTLE);
        }
        self.check_error(
            r.status,
            r.json.as_ref(),
            &allowed,
            RULES,
            "unknown execution id",
        )?;
        let named = r
            .json
            .as_ref()
            .and_then(|j| j.pointer("/error/details/execution_id"))
            .and_then(Value::as_str);
        // Seed §8.2 makes `details` optional: details.execution_id is a SHOULD (SSP-INV-4).
        if r.status == 404 && named != Some(bogus.as_str()) {
            self.warnings.push((
                "SSP-INV-4",
                format!(
                    "the 404 of an unknown execution SHOULD name it in details.execution_id (got {named:?})"
                ),
            ));
        }
        Ok(())
    }
}
