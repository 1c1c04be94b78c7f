//! Replaying one request vector: its request resolved through the target's profile into a
//! fuzz [`Case`], sent like the campaign sends it, and judged by the campaign's oracles
//! (`ssp::fuzz::oracles`), so a promoted finding fails exactly where it was found.

use std::collections::BTreeMap;
use std::collections::btree_map::Entry;

use super::format::{Body, CredSpec, RequestVector, Url};
use crate::engine::finding::{Finding, Severity, Source, Step};
use crate::ssp::fuzz::cases::Template;
use crate::ssp::fuzz::cases::{Case, op_named};
use crate::ssp::provider::env::{Cred, Env, Fixture};
use crate::ssp::provider::profile::FixtureRole;

/// The fixtures a vector names, each resolved once. A role that does not resolve leaves the
/// vector untested: the provider checks judge discovery, this vector judges its request.
struct Fixtures(BTreeMap<FixtureRole, Fixture>);

impl Fixtures {
    async fn get(&mut self, env: &mut Env, role: FixtureRole) -> Step<&Fixture> {
        match self.0.entry(role) {
            Entry::Occupied(o) => Ok(o.into_mut()),
            Entry::Vacant(v) => {
                let f = env.fixture(role).await.map_err(|f| {
                    Finding::untested(format!(
                        "the fixture role `{role}` did not resolve: {}",
                        f.message
                    ))
                })?;
                Ok(v.insert(f))
            }
        }
    }
}

/// The vector's request as a case on this target.
pub async fn case(env: &mut Env, v: &RequestVector) -> Step<Case> {
    let r = &v.request;
    let mut fx = Fixtures(BTreeMap::new());
    let url = url(env, &mut fx, v).await?;
    let body = match &r.body {
        None => None,
        Some(Body::Text(t)) => Some(t.clone().into_bytes()),
        Some(Body::Hex(h)) => {
            Some(hex::decode(h).map_err(|e| Finding::harness(format!("body.hex: {e}")))?)
        }
        Some(Body::ValidRequestOf(role)) => {
            let f = fx.get(env, *role).await?;
            let (id, inputs) = (f.descriptor.id.clone(), f.inputs.clone());
            Some(env.request(&id, &inputs, None).to_string().into_bytes())
        }
    };
    let cred = match &r.cred {
        CredSpec::None => Cred::None,
        CredSpec::Header(n, v) => Cred::Header(n.clone(), v.clone()),
        CredSpec::Of { role, header } => moved(fx.get(env, *role).await?, header.as_deref())?,
    };
    let op = op_named(&r.op).ok_or_else(|| Finding::harness(format!("unknown op {:?}", r.op)))?;
    Ok(Case {
        op,
        mutation: v.title.clone(),
        method: r.method.clone(),
        url,
        headers: r.headers.clone(),
        body,
        cred,
        // A path was an SSP route on the provider it was found on, maybe on no other.
        ssp_route: v.expect.ssp_route && !matches!(r.to, Url::Path(_)),
        invalid: v.expect.refused,
        hostile_uri: v.expect.hostile_uri,
        may_drop: v.expect.may_drop,
    })
}

/// The vector's URL on this target. A skill's URL on another origin leaves the vector
/// untested (the campaign sends nothing hostile off the target either), and so does a
/// `method` vector whose method is the one this target's endpoint declares (it was wrong
/// only on the provider it was found on).
async fn url(env: &mut Env, fx: &mut Fixtures, v: &RequestVector) -> Step<String> {
    let off = |role: FixtureRole| {
        Finding::untested(format!(
            "the `{role}` skill's URL is not on the target's origin: the vector's request is not sent elsewhere"
        ))
    };
    let url = match &v.request.to {
        Url::WellKnown(suffix) => {
            return Ok(env.url(&format!("{}{suffix}", env.profile.well_known_path())));
        }
        Url::Path(p) => return Ok(env.url(p)),
        Url::Endpoint(role) => {
            let e = &fx.get(env, *role).await?.descriptor.endpoint;
            if v.expect.refused
                && v.request.op == "method"
                && e.method.as_str().eq_ignore_ascii_case(&v.request.method)
            {
                return Err(Finding::untested(format!(
                    "{} is the method this target's `{role}` endpoint declares: the request is not certainly invalid here",
                    v.request.method
                )));
            }
            (env.url(&e.url), *role)
        }
        Url::Execution { role, which, id } => {
            let e = &fx.get(env, *role).await?.descriptor.endpoint;
            let (template, member) = match which {
                Template::StatusUrl => (e.status_url.as_ref(), "status_url"),
                Template::ResultUrl => (e.result_url.as_ref(), "result_url"),
            };
            let t = template.ok_or_else(|| {
                Finding::untested(format!("the `{role}` skill declares no endpoint.{member}"))
            })?;
            (env.url(&crate::ssp::consumer::expand_raw(t, id).url), *role)
        }
    };
    match url {
        (u, _) if env.on_target(&u) => Ok(u),
        (_, role) => Err(off(role)),
    }
}

/// The fixture's working credential, its API key moved into `header` when given.
fn moved(f: &Fixture, header: Option<&str>) -> Step<Cred> {
    match (header, &f.cred) {
        (None, c) => Ok(c.clone()),
        // On this target that header may be the skill's own: the key would then be right.
        (Some(h), Cred::ApiKey { header, .. }) if header.eq_ignore_ascii_case(h) => {
            Err(Finding::untested(format!(
                "the vector moves the `{}` skill's API key into `{h}`, its own header on this target",
                f.role
            )))
        }
        (Some(h), Cred::ApiKey { key, .. }) => Ok(Cred::ApiKey {
            header: h.to_string(),
            key: key.clone(),
        }),
        (Some(_), _) => Err(Finding::untested(format!(
            "the vector moves an API key, and the `{}` skill of this target takes no API key",
            f.role
        ))),
    }
}

/// The oracles' findings on one answer as a scripted check's result and warnings: a
/// finding of an oracle that warns (a SHOULD) is a warning, any other one fails, and each
/// blames only the rules of the oracle the vector cites (an oracle covers several kinds of
/// request; the vector knows which one it sends).
pub fn verdict_parts(found: Vec<Finding>, cited: &[String]) -> (Step<()>, Vec<Box<Finding>>) {
    let warns = |f: &Finding| match f.source {
        Source::Fuzz(name) => {
            (crate::ssp::fuzz::oracles::ALL.iter()).any(|o| o.name == name && o.warns)
        }
        _ => false,
    };
    let mut warnings = Vec::new();
    let mut first = None;
    for mut f in found {
        let narrowed: Vec<String> = (f.rules.iter())
            .filter(|r| cited.contains(r))
            .cloned()
            .collect();
        if !narrowed.is_empty() {
            f.rules = narrowed;
        }
        if warns(&f) {
            f.severity = Severity::Warn;
            warnings.push(Box::new(f));
        } else {
            match first.as_mut() {
                None => first = Some(Box::new(f)),
                // One answer can break several oracles: the first names the failure, the
                // others stay in its message.
                Some(b) => b.message = format!("{}; also: {}", b.message, f.message),
            }
        }
    }
    (first.map_or(Ok(()), Err), warnings)
}
