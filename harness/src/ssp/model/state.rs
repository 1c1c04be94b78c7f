//! The pure rule book of the SSP model: the provider as the model sees it and what each
//! answer may be. No IO, no clock: every fact about the target (its skills, what each
//! credential saw in discovery) is given to [`World::new`], and every time-dependent rule
//! reads the target's own timestamps.
//!
//! - [`World`]: skills, invocable units (a skill with the inputs of a profile role), callers
//!   (anonymous, each declared credential, a wrong one) and the executions a sequence has
//!   certainly created (owner, unit, timeout).
//! - Predictions: [`World::discovery`] (SSP-DISC-2/3), [`World::descriptor`] (SSP-DISC-4),
//!   [`World::invoke`] (SSP-INV-1/2/5, SSP-AUTH-1..4), [`World::read`] (SSP-INV-4/6).
//! - The final states each unit's role allows ([`finals`]), which the lifecycle tracker
//!   (`lifecycle.rs`, SSP-INV-3/4/5) holds each answer to; the operations themselves are in
//!   `ops.rs`.
//! - [`check_error`]: the unified error shape and the seed's status of each code
//!   (SSP-ERR-1/2/3).

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

use crate::ssp::codes::{self, Condition};
use crate::ssp::types::{AccessPolicy, AuthType, CapabilityType, ExecutionStatus};

pub use crate::engine::counterexample::mismatch as breach;
pub use crate::engine::finding::Finding;

/// What a fixture role says about an execution's end (ssp.md §7).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lifecycle {
    /// Finishes at once: `completed`.
    Instant,
    /// Runs for a while, within its endpoint timeout: `completed` unless a shorter
    /// effective timeout cuts it.
    Slow,
    /// Ends `failed`.
    Failing,
    /// Overruns its `timeout_ms`: ends `timeout`.
    Overrun,
}

/// A skill of the target, from its index entry and descriptor.
#[derive(Debug, Clone, PartialEq)]
pub struct Skill {
    /// Skill id.
    pub id: String,
    /// Capability type (the discovery filter).
    pub capability: CapabilityType,
    /// Access policy.
    pub access: AccessPolicy,
    /// Auth type.
    pub auth: AuthType,
    /// `endpoint.timeout_ms`.
    pub timeout_ms: Option<f64>,
    /// `endpoint.url` (two skills may share one endpoint).
    pub endpoint: String,
    /// `endpoint.method`.
    pub method: String,
    /// `endpoint.status_url` template.
    pub status_url: Option<String>,
    /// `endpoint.result_url` template.
    pub result_url: Option<String>,
    /// The index entry's `descriptor_url`.
    pub descriptor_url: String,
    /// `auth.header` (api_key).
    pub header: Option<String>,
    /// The index entry's `name` and `version` (SSP-DISC-4 agreement).
    pub name_version: (String, String),
    /// Declared input names, with whether the request must carry it: `required` and no
    /// `default` (seed §3.5.2: the default applies when the parameter is not supplied, so a
    /// provider may fill it in and accept the request).
    pub inputs: Vec<(String, bool)>,
}

/// A skill with the inputs a profile role invokes it with.
#[derive(Debug, Clone, PartialEq)]
pub struct Unit {
    /// Index into [`World::skills`].
    pub skill: usize,
    /// The profile role these inputs come from.
    pub role: String,
    /// The inputs.
    pub inputs: Map<String, Value>,
    /// The final state the role predicts (`None`: any terminal state).
    pub lifecycle: Option<Lifecycle>,
}

/// Who sends a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Caller {
    /// No credentials.
    Anonymous,
    /// The profile's API key (`limited`: valid, without permission).
    ApiKey {
        /// Valid without permission.
        limited: bool,
    },
    /// The profile's bearer token (`limited`: without the invoke scope).
    Oauth2 {
        /// Valid without permission.
        limited: bool,
    },
    /// The profile's HMAC secret.
    Hmac,
    /// A credential no provider accepts, in the scheme of the skill addressed.
    Wrong,
}

impl Caller {
    /// The auth type this credential answers (`None`: anonymous or wrong).
    pub fn scheme(self) -> Option<AuthType> {
        match self {
            Self::ApiKey { .. } => Some(AuthType::ApiKey),
            Self::Oauth2 { .. } => Some(AuthType::Oauth2),
            Self::Hmac => Some(AuthType::Custom),
            Self::Anonymous | Self::Wrong => None,
        }
    }

    /// Valid and with permission.
    pub fn full(self) -> bool {
        matches!(
            self,
            Self::ApiKey { limited: false } | Self::Oauth2 { limited: false } | Self::Hmac
        )
    }

    /// In words.
    pub fn name(self) -> &'static str {
        match self {
            Self::Anonymous => "anonymous",
            Self::ApiKey { limited: false } => "api_key",
            Self::ApiKey { limited: true } => "api_key_limited",
            Self::Oauth2 { limited: false } => "oauth2",
            Self::Oauth2 { limited: true } => "oauth2_limited",
            Self::Hmac => "hmac",
            Self::Wrong => "wrong-credential",
        }
    }
}

/// `context.timeout_ms` of an invocation.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Timeout {
    /// No `context.timeout_ms`.
    Absent,
    /// A positive number of milliseconds (fractions allowed: it is a `number`).
    Ms(f64),
    /// `0` or a negative number: valid JSON numbers whose meaning the notes leave open.
    Odd(f64),
    /// A string: breaks the schema (SSP-INV-2).
    Text,
}

/// An invalid invocation (SSP-INV-2), sent with the unit's own credential.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Invalid {
    /// A required input left out.
    MissingRequired,
    /// An input the descriptor does not declare.
    Undeclared,
    /// A `skill_id` no index lists.
    UnknownSkill,
    /// Another skill's id (index into [`World::skills`]) posted to this endpoint.
    OtherSkill(usize),
    /// `context.timeout_ms` as a string.
    TextTimeout,
}

/// A refusal the model allows: a status and the condition whose code the one SSP code
/// judge (`ssp::codes`, SSP-ERR-2/3) expects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refusal {
    /// HTTP status.
    pub status: u16,
    /// The condition the request provoked (its code: SSP-ERR-3's table or the seed's).
    pub cond: Condition,
}

/// A refusal with `status` for `cond`.
pub const fn refuse(status: u16, cond: Condition) -> Refusal {
    Refusal { status, cond }
}

/// The SSP-AUTH-2 refusal.
pub const AUTH_REQUIRED: Refusal = refuse(401, Condition::AuthMissing);
/// The SSP-AUTH-3 refusal.
pub const PERMISSION_DENIED: Refusal = refuse(403, Condition::PermissionMissing);
/// The 404 of an unknown skill or descriptor (seed §8.1).
pub const NOT_FOUND: Refusal = refuse(404, Condition::UnknownSkill);
/// The 404 of an unknown execution (SSP-INV-4) or path (SSP-ERR-3 table).
pub const NO_RESOURCE: Refusal = refuse(404, Condition::UnknownResource);
/// The 404 of an execution hidden from another caller (SSP-INV-6).
pub const HIDDEN: Refusal = refuse(404, Condition::OtherCaller);
/// The 403 of an execution another valid credential may not read (SSP-INV-6).
pub const OTHER_DENIED: Refusal = refuse(403, Condition::OtherCaller);
/// The SSP-INV-2 refusal.
pub const INVALID: Refusal = refuse(400, Condition::Invalid);

/// What an invocation may answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Invoke {
    /// 202 and an accepted response, nothing else: the model tracks the execution.
    Accept,
    /// One of these refusals.
    Refuse(Vec<Refusal>, &'static [&'static str]),
    /// 202 (not tracked: the notes allow other answers) or one of these refusals.
    Either(Vec<Refusal>, &'static [&'static str]),
}

/// An execution a sequence certainly created.
#[derive(Debug, Clone, PartialEq)]
pub struct Exec {
    /// Index into [`World::units`].
    pub unit: usize,
    /// Index into [`World::callers`].
    pub owner: usize,
    /// The effective timeout, min(endpoint, context) (SSP-INV-5).
    pub effective_ms: Option<f64>,
    /// The terminal states its role allows.
    pub finals: States,
}

/// A set of execution states.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct States(u8);

/// Every execution state, in lifecycle order.
pub const ORDER: [ExecutionStatus; 5] = [
    ExecutionStatus::Accepted,
    ExecutionStatus::Running,
    ExecutionStatus::Completed,
    ExecutionStatus::Failed,
    ExecutionStatus::Timeout,
];

impl States {
    fn bit(s: ExecutionStatus) -> u8 {
        1 << ORDER.iter().position(|x| *x == s).unwrap_or(0)
    }
    /// The set of `states`.
    pub fn of(states: &[ExecutionStatus]) -> Self {
        Self(states.iter().fold(0, |a, s| a | Self::bit(*s)))
    }
    /// Whether `s` is in the set.
    pub fn has(self, s: ExecutionStatus) -> bool {
        self.0 & Self::bit(s) != 0
    }
    /// Union.
    pub fn with(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }
    /// The states in order, as wire strings.
    pub fn names(self) -> Vec<&'static str> {
        ORDER
            .iter()
            .filter(|s| self.has(**s))
            .map(|s| s.as_str())
            .collect()
    }
}

/// A discovery request's filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Filter {
    /// No query.
    None,
    /// `?capability_type=<t>` (`registry`: the `?type=<t>` spelling, SSP-DISC-3).
    Capability(CapabilityType, bool),
    /// A value no capability type has.
    Unknown,
}

/// What a discovery request may answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Discovery {
    /// Ids the answer must list exactly (`None`: only refusals are allowed).
    pub exactly: Option<BTreeSet<String>>,
    /// Also allowed: 200 with no entry (unknown filter).
    pub empty_ok: bool,
    /// Allowed refusals.
    pub refusals: Vec<Refusal>,
}

/// What reading a descriptor may answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Read {
    /// 200 with the document.
    Ok,
    /// One of these refusals.
    Refuse(Vec<Refusal>),
    /// 200 or one of these refusals.
    Either(Vec<Refusal>),
}

/// The model: the target's skills and callers, and this sequence's executions.
#[derive(Debug, Clone, PartialEq)]
pub struct World {
    /// Every skill some credential discovers.
    pub skills: Vec<Skill>,
    /// What the model invokes.
    pub units: Vec<Unit>,
    /// Who calls.
    pub callers: Vec<Caller>,
    /// Per caller, the ids its unfiltered index listed when the run began (`None`: it was
    /// refused). Discovery is stable: the same credential sees the same skills.
    pub seen: Vec<Option<BTreeSet<String>>>,
    /// Executions created so far (index = the model's execution number).
    pub execs: Vec<Exec>,
}

impl World {
    /// A world of `skills`, `units` and `callers`, with what each caller's unfiltered
    /// index listed.
    pub fn new(
        skills: Vec<Skill>,
        units: Vec<Unit>,
        callers: Vec<Caller>,
        seen: Vec<Option<BTreeSet<String>>>,
    ) -> Self {
        Self {
            skills,
            units,
            callers,
            seen,
            execs: Vec::new(),
        }
    }

    /// Whether `caller` may invoke `skill` and read its executions: SSP-AUTH-1/2/3.
    fn authorised(&self, caller: Caller, skill: &Skill) -> bool {
        match skill.auth {
            // A protected skill without an auth scheme (SSP-SCH-4 warns): the notes give no
            // answer for anyone, so no caller is certain to succeed (see `invoke`).
            AuthType::None => caller == Caller::Anonymous && skill.access == AccessPolicy::Public,
            t => caller.full() && caller.scheme() == Some(t),
        }
    }

    /// The credential a unit is invoked with when a sequence needs it to succeed.
    pub fn owner_of(&self, unit: usize) -> Option<usize> {
        let skill = &self.skills[self.units.get(unit)?.skill];
        self.callers.iter().position(|c| self.authorised(*c, skill))
    }
}

/// SSP-DISC-2/3: what `caller`'s discovery with `filter` may answer.
pub fn discovery(w: &World, caller: usize, filter: Filter) -> Discovery {
    let who = w.callers[caller];
    let public: BTreeSet<String> = (w.skills.iter())
        .filter(|s| s.access != AccessPolicy::Private)
        .map(|s| s.id.clone())
        .collect();
    // Anonymous sees exactly the public and restricted skills; an accepted credential
    // sees those too (SSP-DISC-2: anonymous ⊆ authenticated, under every filter) and
    // whichever private ones it saw when the run began (listing one is the provider's
    // choice, never judged); a wrong one is refused or treated as anonymous.
    let base = match who {
        Caller::Anonymous | Caller::Wrong => Some(public),
        _ => (w.seen.get(caller).cloned().flatten()).map(|seen| &seen | &public),
    };
    let mut refusals = match who {
        Caller::Wrong => vec![AUTH_REQUIRED],
        // A credential refused when the run began stays refused.
        _ if base.is_none() => vec![AUTH_REQUIRED, PERMISSION_DENIED],
        _ => Vec::new(),
    };
    match filter {
        Filter::None => Discovery {
            exactly: base,
            empty_ok: false,
            refusals,
        },
        Filter::Capability(t, _) => {
            // SSP-DISC-3 is met by either spelling: a target may refuse the one it does not
            // know as an unknown parameter (400); the scripted check fails one that honours
            // neither.
            refusals.push(INVALID);
            Discovery {
                exactly: base.map(|b| {
                    (w.skills.iter())
                        .filter(|s| s.capability == t && b.contains(&s.id))
                        .map(|s| s.id.clone())
                        .collect()
                }),
                empty_ok: false,
                refusals,
            }
        }
        Filter::Unknown => {
            refusals.push(INVALID);
            Discovery {
                exactly: None,
                empty_ok: true,
                refusals,
            }
        }
    }
}

/// SSP-DISC-4: what reading `skill`'s descriptor as `caller` may answer.
pub fn descriptor(w: &World, caller: usize, skill: usize) -> Read {
    let s = &w.skills[skill];
    if s.access != AccessPolicy::Private {
        // An invalid credential may be refused even where none is needed.
        return match w.callers[caller] {
            Caller::Wrong => Read::Either(vec![AUTH_REQUIRED]),
            _ => Read::Ok,
        };
    }
    let listed = (w.seen.get(caller).cloned().flatten()).is_some_and(|ids| ids.contains(&s.id));
    match w.callers[caller] {
        Caller::Anonymous | Caller::Wrong => Read::Refuse(vec![AUTH_REQUIRED, HIDDEN]),
        // An index that lists it promised a descriptor that dereferences.
        _ if listed => Read::Ok,
        _ => Read::Either(vec![AUTH_REQUIRED, PERMISSION_DENIED, HIDDEN]),
    }
}

/// The effective timeout and whether the context shortened the endpoint's (SSP-INV-5).
pub fn effective(endpoint: Option<f64>, context: Timeout) -> (Option<f64>, bool) {
    match context {
        Timeout::Ms(c) | Timeout::Odd(c) => match endpoint {
            Some(e) if e <= c => (Some(e), false),
            _ => (Some(c), true),
        },
        Timeout::Absent | Timeout::Text => (endpoint, false),
    }
}

/// The terminal states an execution of `lifecycle` may end in under `timeout`.
pub fn finals(lifecycle: Option<Lifecycle>, endpoint: Option<f64>, timeout: Timeout) -> States {
    use ExecutionStatus::{Completed, Failed, Timeout as T};
    let (eff, shortened) = effective(endpoint, timeout);
    let odd = matches!(timeout, Timeout::Odd(_));
    // "At once" still takes a little time: a context timeout under a second may win.
    let cut = odd || (shortened && eff.is_some_and(|e| e < 1000.0));
    let maybe_cut = |s: ExecutionStatus| {
        if cut {
            States::of(&[s, T])
        } else {
            States::of(&[s])
        }
    };
    match lifecycle {
        Some(Lifecycle::Overrun) => States::of(&[T]),
        Some(Lifecycle::Instant) => maybe_cut(Completed),
        Some(Lifecycle::Failing) => maybe_cut(Failed),
        // A slow fixture outlives 20 ms (the scripted SSP-INV-5 check's reading too).
        Some(Lifecycle::Slow) if odd || (shortened && eff.is_some_and(|e| e <= 20.0)) => {
            States::of(&[T])
        }
        Some(Lifecycle::Slow) if shortened => States::of(&[Completed, T]),
        Some(Lifecycle::Slow) => States::of(&[Completed]),
        None => States::of(&[Completed, Failed, T]),
    }
}

const AUTH_RULES: &[&str] = &["SSP-AUTH-1", "SSP-AUTH-2", "SSP-AUTH-3"];
const INV2: &[&str] = &["SSP-INV-2"];

/// SSP-INV-1/2, SSP-AUTH-1..4: what `caller` invoking `unit` with `timeout` may answer.
/// The notes do not order authentication and validation: a request that is (or may be)
/// invalid may also draw the 400.
pub fn invoke(w: &World, caller: usize, unit: usize, timeout: Timeout) -> Invoke {
    let s = &w.skills[w.units[unit].skill];
    let who = w.callers[caller];
    let with_400 = |mut l: Vec<Refusal>| {
        if matches!(timeout, Timeout::Text | Timeout::Odd(_)) {
            l.push(INVALID);
        }
        l
    };
    let auth_refusal = match (s.auth, who) {
        (AuthType::None, Caller::Anonymous) if s.access == AccessPolicy::Public => None,
        // Credentials nobody asked for, or a protected skill without an auth scheme
        // (SSP-SCH-4 warns): the notes say nothing of the answer.
        (AuthType::None, _) => {
            let l = with_400(vec![AUTH_REQUIRED, PERMISSION_DENIED, HIDDEN]);
            return match timeout {
                Timeout::Text => Invoke::Refuse(l, AUTH_RULES),
                _ => Invoke::Either(l, AUTH_RULES),
            };
        }
        (t, c) if c.scheme() == Some(t) && c.full() => None,
        (t, c) if c.scheme() == Some(t) => Some(PERMISSION_DENIED),
        _ => Some(AUTH_REQUIRED),
    };
    if let Some(r) = auth_refusal {
        // A private skill may hide its existence instead (as its descriptor does).
        let mut allowed = vec![r];
        if s.access == AccessPolicy::Private {
            allowed.push(HIDDEN);
        }
        return Invoke::Refuse(with_400(allowed), AUTH_RULES);
    }
    match timeout {
        Timeout::Text => Invoke::Refuse(vec![INVALID], INV2),
        Timeout::Odd(_) => Invoke::Either(vec![INVALID], INV2),
        Timeout::Absent | Timeout::Ms(_) => Invoke::Accept,
    }
}

/// SSP-INV-2: what an invalid invocation (sent with the unit's own credential) answers.
pub fn invalid(what: Invalid) -> Vec<Refusal> {
    match what {
        Invalid::UnknownSkill | Invalid::OtherSkill(_) => vec![NOT_FOUND],
        Invalid::MissingRequired | Invalid::Undeclared | Invalid::TextTimeout => vec![INVALID],
    }
}

/// Whether `what` can be sent for `unit` (preconditions keep shrunk sequences legal).
pub fn invalid_applies(w: &World, unit: usize, what: Invalid) -> bool {
    let Some(u) = w.units.get(unit) else {
        return false;
    };
    let s = &w.skills[u.skill];
    match what {
        Invalid::MissingRequired => (s.inputs.iter()).any(|(n, r)| *r && u.inputs.contains_key(n)),
        Invalid::OtherSkill(o) => w
            .skills
            .get(o)
            .is_some_and(|t| t.id != s.id && t.endpoint != s.endpoint),
        _ => true,
    }
}

/// SSP-INV-4/6: what `reader` polling execution `exec` may answer.
pub fn read(w: &World, exec: usize, reader: usize) -> Read {
    let e = &w.execs[exec];
    let s = &w.skills[w.units[e.unit].skill];
    if reader == e.owner {
        return Read::Ok;
    }
    if s.access == AccessPolicy::Public {
        // SSP-INV-6 protects non-public executions only; the notes do not say whether
        // another caller may read a public one.
        return Read::Either(vec![AUTH_REQUIRED, PERMISSION_DENIED, HIDDEN]);
    }
    let owner = w.callers[e.owner];
    match w.callers[reader] {
        // Another valid credential of the same scheme: 404 (no leak of existence) or 403
        // (seed §7.4: valid credentials, insufficient permission), SSP-INV-6.
        c if c.scheme().is_some() && c.scheme() == owner.scheme() => {
            Read::Refuse(vec![HIDDEN, OTHER_DENIED])
        }
        // No or an invalid credential: 401 (SSP-AUTH-2) or 404.
        Caller::Anonymous | Caller::Wrong => Read::Refuse(vec![AUTH_REQUIRED, HIDDEN]),
        _ => Read::Refuse(vec![AUTH_REQUIRED, PERMISSION_DENIED, HIDDEN]),
    }
}

/// Records a new execution of `unit` by `owner`; returns its number.
pub fn create(w: &mut World, unit: usize, owner: usize, timeout: Timeout) -> usize {
    let u = &w.units[unit];
    let endpoint = w.skills[u.skill].timeout_ms;
    w.execs.push(Exec {
        unit,
        owner,
        effective_ms: effective(endpoint, timeout).0,
        finals: finals(u.lifecycle, endpoint, timeout),
    });
    w.execs.len() - 1
}

/// What [`check_error`] accepted: the code and, for a tolerated reading, a warning.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Judged {
    /// The error code.
    pub code: String,
    /// Another of the seven where the table names one, or the `EXECUTION_TIMEOUT` alias
    /// (SSP-ERR-3: a warning).
    pub warning: Option<String>,
}

/// SSP-ERR-1/2/3: `body` is a unified error whose status one of `allowed` names and whose
/// code the one SSP code judge accepts for that refusal's condition. `what` names the
/// request for the message.
pub fn check_error(
    status: u16,
    body: Option<&Value>,
    allowed: &[Refusal],
    rules: &[&'static str],
    what: &str,
) -> Result<Judged, Box<Finding>> {
    let expected = json!(
        allowed
            .iter()
            .map(|r| json!({"status": r.status, "code": codes::expected(r.cond, Some(r.status))}))
            .collect::<Vec<_>>()
    );
    let seen = json!({"status": status, "body": body});
    let fits: Vec<&Refusal> = allowed.iter().filter(|r| r.status == status).collect();
    if fits.is_empty() {
        return Err(breach(
            rules,
            format!("{what}: unexpected HTTP {status}"),
            expected,
            seen,
        ));
    }
    let err = body.and_then(|b| b.get("error"));
    let code = err.and_then(|e| e.get("code")).and_then(Value::as_str);
    let message = err.and_then(|e| e.get("message")).and_then(Value::as_str);
    let retry_ok = err.and_then(|e| e.get("retry")).is_none_or(|r| {
        r.get("suggested_delay_ms").is_some_and(Value::is_number)
            && r.get("max_attempts").is_some_and(Value::is_number)
    });
    let (Some(code), Some(_), true) = (code, message, retry_ok) else {
        return Err(breach(
            &["SSP-ERR-1"],
            format!(
                "{what}: HTTP {status} without the unified error shape {{error: {{code, message, details?, retry?}}}}"
            ),
            json!({"error": {"code": "string", "message": "string"}}),
            seen,
        ));
    };
    // Several refusals may share the status: the most favourable verdict stands.
    let verdicts: Vec<codes::Verdict> = fits
        .iter()
        .map(|r| codes::judge(r.cond, Some(status), code))
        .collect();
    let judged = |warning| {
        Ok(Judged {
            code: code.to_string(),
            warning,
        })
    };
    if verdicts.contains(&codes::Verdict::Pass) {
        return judged(None);
    }
    if let Some(codes::Verdict::Warn(m)) = verdicts
        .iter()
        .find(|v| matches!(v, codes::Verdict::Warn(_)))
    {
        return judged(Some(format!("{what}: {m}")));
    }
    match verdicts.into_iter().next() {
        Some(codes::Verdict::Fail { rule, message }) => Err(breach(
            &[rule],
            format!("{what}: {message}"),
            expected,
            seen,
        )),
        _ => judged(None),
    }
}

/// SSP-DISC-2/3: a 200 index against the ids the model allows.
pub fn judge_index(
    w: &World,
    by: usize,
    filter: Filter,
    exactly: Option<&BTreeSet<String>>,
    got: &BTreeSet<String>,
) -> Result<(), Box<Finding>> {
    let private = |id: &String| {
        w.skills
            .iter()
            .any(|s| &s.id == id && s.access == AccessPolicy::Private)
    };
    let who = w.callers[by];
    if matches!(who, Caller::Anonymous | Caller::Wrong)
        && let Some(leak) = got.iter().find(|id| private(id))
    {
        return Err(breach(
            &["SSP-DISC-2"],
            format!("{} discovery lists the private skill {leak}", who.name()),
            json!("no private skill"),
            json!(got),
        ));
    }
    let Some(want) = exactly else {
        return Err(breach(
            &["SSP-DISC-3"],
            "this discovery request has no matching entry to list",
            json!([]),
            json!(got),
        ));
    };
    // SSP-DISC-2: an authenticated caller sees every public and restricted skill (the
    // anonymous set, per filter); a private one "PEUVENT être incluses" (seed §4.4), so
    // listing or omitting it is never judged.
    let authenticated = !matches!(who, Caller::Anonymous | Caller::Wrong);
    let judged = |ids: &BTreeSet<String>| -> BTreeSet<String> {
        (ids.iter())
            .filter(|id| !(authenticated && private(id)))
            .cloned()
            .collect()
    };
    let (want, got) = (&judged(want), &judged(got));
    if want == got {
        return Ok(());
    }
    let rules: &[&'static str] = match filter {
        Filter::None => &["SSP-DISC-2"],
        _ => &["SSP-DISC-3"],
    };
    Err(breach(
        rules,
        format!(
            "{} discovery with filter {filter:?}: only the matching entries of what this caller sees, and all of them",
            who.name()
        ),
        json!(want),
        json!(got),
    ))
}

#[cfg(test)]
#[expect(
    clippy::unwrap_used,
    clippy::panic,
    reason = "tests: a panic is the failure report"
)]
mod tests;
