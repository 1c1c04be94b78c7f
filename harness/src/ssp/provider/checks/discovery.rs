//! SSP-DISC: the well-known index, what anonymous discovery shows, filters, and the
//! agreement of index and descriptors (ssp.md §3).

use crate::ssp::codes::Condition;
use crate::ssp::provider::env::{Cred, Env, Finding, Step};
use crate::ssp::provider::profile::FixtureRole;
use crate::ssp::types::{AccessPolicy, CapabilityType, SkillDescriptor};
use crate::ssp::validator::DocType;
use serde_json::json;
use std::collections::BTreeSet;

pub(super) fn ids(idx: &crate::ssp::types::SkillIndex) -> BTreeSet<String> {
    idx.skills.iter().map(|e| e.id.clone()).collect()
}

/// SSP-DISC-1: 200, application/json, a valid index with unique ids.
pub(super) async fn well_known(env: &mut Env) -> Step<()> {
    let url = env.url(env.profile.well_known_path());
    let r = env.get(&url, &Cred::None).await?;
    if r.status != 200 {
        return Err(Finding::fail(
            "",
            json!(200),
            json!(r.status),
            "the well-known URI must answer 200",
        ));
    }
    let ct = r.header("content-type").unwrap_or("").to_ascii_lowercase();
    if !ct.starts_with("application/json") {
        return Err(Finding::fail(
            "",
            json!("Content-Type: application/json"),
            json!(ct),
            "seed §4.3.1: the response MUST have Content-Type application/json",
        ));
    }
    let _: crate::ssp::types::SkillIndex =
        env.typed(r.body()?, DocType::Index, "the Skill Index")?;
    Ok(())
}

/// SSP-DISC-2: anonymous sees public+restricted, no private; authenticated sees a superset.
pub(super) async fn visibility(env: &mut Env) -> Step<()> {
    let anon = env.index("", &Cred::None).await?;
    if let Some(e) = anon
        .skills
        .iter()
        .find(|e| e.access == AccessPolicy::Private)
    {
        return Err(Finding::fail(
            "/skills",
            json!("no private entry"),
            json!(e.id),
            "seed §4.4: private skills MUST be excluded from unauthenticated discovery",
        ));
    }
    let private_id = env.role_id(FixtureRole::Private)?;
    let restricted_id = env.role_id(FixtureRole::Restricted)?;
    if !anon.skills.iter().any(|e| e.id == restricted_id) {
        return Err(Finding::fail(
            "/skills",
            json!({"$contains": restricted_id}),
            json!(ids(&anon)),
            "seed §4.4: restricted skills MUST be included in unauthenticated discovery",
        ));
    }
    if anon.skills.iter().any(|e| e.id == private_id) {
        return Err(Finding::fail(
            "/skills",
            json!({"$not_contains": private_id}),
            json!(ids(&anon)),
            "the private fixture skill is listed to an anonymous caller",
        ));
    }
    let anon_ids = ids(&anon);
    let creds = env.all_creds();
    if creds.is_empty() {
        return Err(Finding::untested(
            "[ssp.credentials] holds no credential for authenticated discovery",
        ));
    }
    for c in creds {
        let auth = env.index("", &c).await?;
        let auth_ids = ids(&auth);
        if let Some(missing) = anon_ids.difference(&auth_ids).next() {
            return Err(Finding::fail(
                "/skills",
                json!({"$contains": missing}),
                json!(auth_ids),
                "the anonymous index must be a subset of the authenticated one (SSP-DISC-2)",
            ));
        }
        // Seed §4.4: authenticated discovery MAY list private skills ("PEUVENT être
        // incluses"): listing or omitting one is never judged (SSP-DISC-2).
    }
    Ok(())
}

/// One filter spelling over every capability type: the first violation, if any.
async fn filter_spelling(
    env: &mut Env,
    full: &crate::ssp::types::SkillIndex,
    param: &str,
) -> Step<Option<Box<Finding>>> {
    for t in CapabilityType::ALL {
        // A spelling the provider refuses (400, say) is that spelling's violation: the
        // other one may be the one it honours (SSP-DISC-3 accepts either). A 200 that is
        // not a valid index still fails.
        let query = format!("?{param}={}", t.as_str());
        let got = match env.index_or_status(&query, &Cred::None).await? {
            Ok(got) => got,
            Err(status) => {
                return Ok(Some(Finding::fail(
                    "",
                    json!(200),
                    json!(status),
                    format!("?{param}={} was answered HTTP {status}", t.as_str()),
                )));
            }
        };
        let want: Vec<&str> = full
            .skills
            .iter()
            .filter(|e| e.capability_type == t)
            .map(|e| e.id.as_str())
            .collect();
        if let Some(bad) = got.skills.iter().find(|e| e.capability_type != t) {
            return Ok(Some(Finding::fail(
                "/skills",
                json!({"capability_type": t.as_str()}),
                json!({"id": bad.id, "capability_type": bad.capability_type.as_str()}),
                format!("?{param}={} returned a non-matching entry", t.as_str()),
            )));
        }
        let got_ids: BTreeSet<&str> = got.skills.iter().map(|e| e.id.as_str()).collect();
        if let Some(m) = want.iter().find(|id| !got_ids.contains(**id)) {
            return Ok(Some(Finding::fail(
                "/skills",
                json!({"$contains": m}),
                json!(got_ids),
                format!("?{param}={} omitted a matching entry", t.as_str()),
            )));
        }
    }
    Ok(None)
}

/// SSP-DISC-3: only the matching entries and all of them; unknown value → 400 (or 200, empty).
pub(super) async fn filter(env: &mut Env) -> Step<()> {
    let full = env.index("", &Cred::None).await?;
    // Seed §4.5 fixes what a filtered result holds, not the query's spelling (its only query
    // syntax is the registry's `?type=`, §4.2); ssp.md SSP-DISC-3 names `?capability_type=`
    // "(also accept ?type=<t>, the registry spelling)" and the catalogue reads "(or
    // ?type=<t>)". Either spelling filtering correctly satisfies the rule; the other one not
    // honoured is a warning. Neither → the `capability_type` violation fails.
    let long = filter_spelling(env, &full, "capability_type").await?;
    let short = filter_spelling(env, &full, "type").await?;
    // The unknown-value probe uses a spelling the target honours.
    let param = if long.is_none() {
        "capability_type"
    } else {
        "type"
    };
    match (long, short) {
        (Some(f), Some(_)) => return Err(f),
        (Some(f), None) | (None, Some(f)) => env.warnings.push(Finding::warn(
            &f.pointer,
            f.expected.clone(),
            f.observed.clone(),
            format!(
                "{} (the other spelling filters correctly: SSP-DISC-3 accepts either)",
                f.message
            ),
        )),
        (None, None) => {}
    }
    let url = env.url(&format!(
        "{}?{param}=not-a-type",
        env.profile.well_known_path()
    ));
    let r = env.get(&url, &Cred::None).await?;
    if r.status == 200 {
        let idx: crate::ssp::types::SkillIndex =
            env.typed(r.body()?, DocType::Index, "the filtered index")?;
        if !idx.skills.is_empty() {
            return Err(Finding::fail(
                "/skills",
                json!([]),
                json!(ids(&idx)),
                "an unknown capability_type matches no entry",
            ));
        }
        // ssp.md SSP-DISC-3: "the harness also accepts 200 with no entries" — accepted, so
        // no warning either (a warning is a verdict on the server).
    } else {
        // SSP-DISC-3: 400 in the unified shape; its code is judged by SSP-ERR-3's table
        // (VALIDATION_ERROR; another of the seven warns; a code outside them fails).
        env.expect_error(&r, &[400], Condition::Invalid, "unknown capability_type")?;
    }
    Ok(())
}

/// SSP-DISC-4: every descriptor_url gives a valid descriptor agreeing with its entry.
pub(super) async fn agreement(env: &mut Env) -> Step<()> {
    let mut views = vec![(Cred::None, env.index("", &Cred::None).await?)];
    for c in env.all_creds() {
        let i = env.index("", &c).await?;
        views.push((c, i));
    }
    let mut done = BTreeSet::new();
    for (cred, idx) in views {
        let major = idx
            .protocol
            .version
            .split('.')
            .next()
            .unwrap_or("")
            .to_owned();
        for e in &idx.skills {
            if !done.insert(e.id.clone()) {
                continue;
            }
            let r = env.get(&e.descriptor_url, &cred).await?;
            if r.status != 200 {
                return Err(Finding::fail(
                    "",
                    json!(200),
                    json!(r.status),
                    format!(
                        "descriptor_url of {} must answer 200 to a caller that sees the entry",
                        e.id
                    ),
                ));
            }
            let d: SkillDescriptor = env.typed(
                r.body()?,
                DocType::Descriptor,
                &format!("descriptor of {}", e.id),
            )?;
            let pairs = [
                ("/id", json!(e.id), json!(d.id)),
                ("/name", json!(e.name), json!(d.name)),
                (
                    "/capability_type",
                    json!(e.capability_type),
                    json!(d.capability_type),
                ),
                ("/access", json!(e.access), json!(d.access)),
                ("/version", json!(e.version), json!(d.version)),
            ];
            for (p, want, got) in pairs {
                if want != got {
                    return Err(Finding::fail(
                        p,
                        want,
                        got,
                        format!("descriptor of {} disagrees with its index entry", e.id),
                    ));
                }
            }
            let dmajor = d.protocol.version.split('.').next().unwrap_or("");
            if dmajor != major {
                return Err(Finding::fail(
                    "/protocol/version",
                    json!(format!("{major}.x.y")),
                    json!(d.protocol.version),
                    "descriptor protocol MAJOR differs from the index's",
                ));
            }
        }
    }
    Ok(())
}

/// SSP-DISC-4: unknown descriptor → 404 SKILL_NOT_FOUND; private descriptor anonymously →
/// 401 AUTH_REQUIRED (404 accepted).
pub(super) async fn descriptor_errors(env: &mut Env) -> Step<()> {
    let anon = env.index("", &Cred::None).await?;
    let Some(first) = anon.skills.first() else {
        return Err(Finding::unsupported(
            "the anonymous index lists no skill to derive a descriptor URL from",
        ));
    };
    let marker = format!("conform-unknown-{}", env.caller_id);
    let Some((unknown, layout)) = crate::ssp::provider::env::unknown_descriptor_url(
        &first.descriptor_url,
        &first.id,
        &marker,
    ) else {
        return Err(Finding::harness("descriptor_url without a path"));
    };
    let r = env.get(&unknown, &Cred::None).await?;
    // Only a path of the provider's own descriptor layout is certain to be a descriptor URL
    // (seed §8.1 names SKILL_NOT_FOUND for it); another is an unknown path (SSP-ERR-3 table).
    let cond = if layout {
        Condition::UnknownSkill
    } else {
        Condition::UnknownResource
    };
    env.expect_error(&r, &[404], cond, "unknown descriptor path")?;
    let private = env.fixture(FixtureRole::Private).await?;
    let mut url = None;
    for c in env.all_creds() {
        let idx = env.index("", &c).await?;
        if let Some(e) = idx.skills.iter().find(|e| e.id == private.descriptor.id) {
            url = Some(e.descriptor_url.clone());
        }
    }
    let url = url.ok_or_else(|| {
        Finding::unsupported("no credential shows the private skill's index entry")
    })?;
    let r = env.get(&url, &Cred::None).await?;
    if r.status == 404 {
        env.expect_error(
            &r,
            &[404],
            Condition::UnknownResource,
            "private descriptor without credentials",
        )?;
    } else {
        env.expect_error(
            &r,
            &[401],
            Condition::AuthMissing,
            "private descriptor without credentials",
        )?;
    }
    Ok(())
}
