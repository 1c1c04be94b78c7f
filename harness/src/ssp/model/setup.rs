//! Reading the target before a run: what each caller's unfiltered index lists, every listed
//! skill's descriptor, and the profile's fixture roles and credentials — the facts the pure
//! [`World`] starts from. Nothing is assumed about the target: a role the profile lacks, or
//! whose skill the target does not list, removes that unit's transitions.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use super::driver::Secrets;
use super::state::{Caller, Lifecycle, Skill, Unit, World};
use crate::engine::verdict::Cause;
use crate::ssp::provider::env::{Cred, Env, Resp};
use crate::ssp::provider::profile::{FixtureRole, SspProfile};
use crate::ssp::types::{AuthType, SkillDescriptor, SkillIndex, SkillIndexEntry};
use crate::ssp::validator::DocType;

/// Why the model cannot run on a target.
#[derive(Debug, Clone, thiserror::Error)]
pub enum SetupError {
    /// The target or the profile lacks what the model needs (reported as `Unsupported`).
    #[error("{1}")]
    Unsupported(Cause, String),
    /// The target kept throttling the survey (reported as an error of the run, never as
    /// a verdict).
    #[error("{0}")]
    Throttled(String),
}

/// Tries of one survey request the provider throttles (429/502/503, SSP-ERR-3).
const SURVEY_TRIES: u32 = 6;

/// GETs `url` as `cred`, waiting out rate limiting and overload ([`Env::get_unthrottled`]):
/// a throttled survey would record a refusal (or a missing skill) the provider never meant.
/// `Ok(None)`: no answer.
async fn get_patiently(env: &mut Env, url: &str, cred: &Cred) -> Result<Option<Resp>, SetupError> {
    match env.get_unthrottled(url, cred, SURVEY_TRIES).await {
        Ok(Some(r)) => Ok(Some(r)),
        Ok(None) => Err(SetupError::Throttled(format!(
            "GET {url} was throttled (429/502/503) {SURVEY_TRIES} times while the model read the target"
        ))),
        Err(_) => Ok(None),
    }
}

/// What a run plays with.
#[derive(Debug, Clone)]
pub struct Cast {
    /// The model before any step.
    pub world: World,
    /// The credentials' secrets and headers.
    pub secrets: Secrets,
}

fn callers(p: &SspProfile) -> Vec<Caller> {
    let c = &p.credentials;
    let mut out = vec![Caller::Anonymous];
    let mut add = |present: bool, caller| {
        if present {
            out.push(caller);
        }
    };
    add(c.api_key.is_some(), Caller::ApiKey { limited: false });
    add(
        c.api_key_limited.is_some(),
        Caller::ApiKey { limited: true },
    );
    add(c.oauth2_token.is_some(), Caller::Oauth2 { limited: false });
    add(
        c.oauth2_token_limited.is_some(),
        Caller::Oauth2 { limited: true },
    );
    add(c.hmac_secret.is_some(), Caller::Hmac);
    out.push(Caller::Wrong);
    out
}

fn secrets(p: &SspProfile) -> Secrets {
    let c = &p.credentials;
    Secrets {
        api_key: (c.api_key.clone(), c.api_key_limited.clone()),
        oauth2: (c.oauth2_token.clone(), c.oauth2_token_limited.clone()),
        hmac: c.hmac_secret.clone(),
        hmac_header: c
            .hmac_header
            .clone()
            .unwrap_or_else(|| "X-Signature".into()),
        api_header: "X-API-Key".into(),
    }
}

/// GETs the unfiltered index as `caller`: its entries, or `None` when refused.
async fn index_of(
    env: &mut Env,
    secrets: &Secrets,
    caller: Caller,
) -> Result<Option<SkillIndex>, SetupError> {
    let url = env.url(env.profile.well_known_path());
    let Some(r) = get_patiently(env, &url, &secrets.cred(caller, None)).await? else {
        return Ok(None);
    };
    let index = match (r.status, r.json.as_ref()) {
        (200, Some(j)) => env.typed(j, DocType::Index, "the Skill Index").ok(),
        _ => None,
    };
    Ok(index)
}

fn skill(entry: &SkillIndexEntry, d: &SkillDescriptor) -> Skill {
    let e = &d.endpoint;
    Skill {
        id: entry.id.clone(),
        capability: entry.capability_type,
        access: entry.access,
        auth: d.auth.kind,
        timeout_ms: e.timeout_ms.as_ref().and_then(serde_json::Number::as_f64),
        endpoint: e.url.clone(),
        method: e.method.as_str().to_string(),
        status_url: e.status_url.clone(),
        result_url: e.result_url.clone(),
        descriptor_url: entry.descriptor_url.clone(),
        header: (d.auth.kind == AuthType::ApiKey)
            .then(|| d.auth.header.clone().unwrap_or_else(|| "X-API-Key".into())),
        name_version: (entry.name.clone(), entry.version.clone()),
        inputs: d
            .inputs
            .iter()
            .map(|i| (i.name.clone(), i.required && i.default.is_none()))
            .collect(),
    }
}

/// The descriptor of `entry`, read with the first caller whose index lists it.
async fn descriptor(
    env: &mut Env,
    secrets: &Secrets,
    entry: &SkillIndexEntry,
    by: &[Caller],
) -> Result<Option<SkillDescriptor>, SetupError> {
    for c in by {
        let url = env.url(&entry.descriptor_url);
        let Some(r) = get_patiently(env, &url, &secrets.cred(*c, None)).await? else {
            continue;
        };
        if r.status == 200
            && let Some(j) = r.json.as_ref()
            && let Ok(d) = env.typed::<SkillDescriptor>(j, DocType::Descriptor, "descriptor")
            && d.id == entry.id
        {
            return Ok(Some(d));
        }
    }
    Ok(None)
}

fn lifecycle(role: FixtureRole) -> Option<Lifecycle> {
    match role {
        FixtureRole::Instant => Some(Lifecycle::Instant),
        FixtureRole::Slow => Some(Lifecycle::Slow),
        FixtureRole::Failing => Some(Lifecycle::Failing),
        FixtureRole::Overrun => Some(Lifecycle::Overrun),
        _ => None,
    }
}

/// The units: one per (skill, inputs) of the profile's roles, with a lifecycle role's
/// prediction when one names it.
fn units(p: &SspProfile, skills: &[Skill]) -> Vec<Unit> {
    let mut out: Vec<Unit> = Vec::new();
    for (role, id) in &p.roles {
        let Some(skill) = skills.iter().position(|s| &s.id == id) else {
            continue;
        };
        let inputs: Map<String, Value> = p.model_inputs_for(*role);
        match out
            .iter_mut()
            .find(|u| u.skill == skill && u.inputs == inputs)
        {
            Some(u) if u.lifecycle.is_none() && lifecycle(*role).is_some() => {
                u.lifecycle = lifecycle(*role);
                u.role = role.to_string();
            }
            Some(_) => {}
            None => out.push(Unit {
                skill,
                role: role.to_string(),
                inputs,
                lifecycle: lifecycle(*role),
            }),
        }
    }
    out
}

/// What the callers' unfiltered indexes list, and the skills whose descriptors read.
async fn survey(
    env: &mut Env,
    secrets: &Secrets,
    callers: &[Caller],
) -> Result<(Vec<Option<SkillIndex>>, Vec<Skill>), SetupError> {
    let mut indexes = Vec::new();
    for c in callers {
        indexes.push(index_of(env, secrets, *c).await?);
    }
    // Every entry some caller sees, with the callers that see it.
    let mut entries: BTreeMap<String, (SkillIndexEntry, Vec<Caller>)> = BTreeMap::new();
    for (c, idx) in callers.iter().zip(&indexes) {
        for e in idx.iter().flat_map(|i| &i.skills) {
            entries
                .entry(e.id.clone())
                .or_insert_with(|| (e.clone(), Vec::new()))
                .1
                .push(*c);
        }
    }
    let mut skills = Vec::new();
    for (entry, by) in entries.values() {
        if let Some(d) = descriptor(env, secrets, entry, by).await? {
            skills.push(skill(entry, &d));
        }
    }
    Ok((indexes, skills))
}

/// Reads the target through `env` and builds the model's starting point.
pub async fn cast(env: &mut Env) -> Result<Cast, SetupError> {
    let profile = env.profile.clone();
    let callers = callers(&profile);
    let mut secrets = secrets(&profile);
    let (mut indexes, mut skills) = survey(env, &secrets, &callers).await?;
    // The API key travels in the header the descriptors declare (SSP-AUTH-4): once known,
    // discovery is surveyed again with it.
    if let Some(h) = skills.iter().find_map(|s| s.header.clone())
        && h != secrets.api_header
    {
        secrets.api_header = h;
        (indexes, skills) = survey(env, &secrets, &callers).await?;
    }
    if skills.is_empty() {
        return Err(SetupError::Unsupported(
            Cause::Target,
            "no caller's discovery request listed a skill with a readable descriptor".into(),
        ));
    }
    let units = units(&profile, &skills);
    if units.is_empty() {
        return Err(SetupError::Unsupported(Cause::Profile, "the profile maps no fixture role ([ssp.roles]) to a skill the target lists with a readable descriptor".into()));
    }
    let seen = indexes
        .iter()
        .map(|i| {
            i.as_ref().map(|i| {
                i.skills
                    .iter()
                    .map(|e| e.id.clone())
                    .collect::<BTreeSet<_>>()
            })
        })
        .collect();
    Ok(Cast {
        world: World::new(skills, units, callers, seen),
        secrets,
    })
}
