//! The scripted SSP provider checks: one per HTTP-testable `SSP-` rule (ssp.md §3–§6b).
//!
//! Each check resolves the fixture roles it needs from the target profile (a role with no
//! skill → `Unsupported`, never a pass), talks to the provider over recorded HTTP, and
//! stops at the first violation. A violation is `Fail` when the check's primary
//! requirement is a MUST, otherwise `Warn`; aliases the binding tolerates
//! (`EXECUTION_TIMEOUT`, upstream details shape) are `Warn` (200 with no entries for an unknown
//! filter is accepted outright: ssp.md SSP-DISC-3 "also accepts"), and so
//! is what ssp.md asks beyond the seed where the seed leaves it open or says SHOULD (issue 14):
//! one filter spelling of the two, the code of an unknown filter's 400 (SSP-ERR-3), the
//! `details` of AUTH_REQUIRED / PERMISSION_DENIED / INVOCATION_TIMEOUT (seed §8.2: optional;
//! §8.3.2: DEVRAIT) and AUTH_REQUIRED's `retry` when absent (seed §8.2: optional).

use crate::ssp::codes::Condition;
use crate::ssp::consumer::{Consumer, ConsumerConfig, ConsumerError, Credentials};
use crate::ssp::provider::env::{Cred, Env, Finding, Fixture, Step};
use crate::ssp::provider::profile::FixtureRole;
use crate::ssp::types::{
    AccessPolicy, AuthType, CapabilityType, ExecutionStatus, InvocationResponse, SkillDescriptor,
};
use crate::ssp::validator::{DetailsShape, DocType, parse_validation_details};
use serde_json::{Value, json};
use std::collections::BTreeSet;

/// Which scripted check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// SSP-DISC-1.
    WellKnown,
    /// SSP-DISC-2.
    Visibility,
    /// SSP-DISC-3.
    Filter,
    /// SSP-DISC-4 (agreement).
    Agreement,
    /// SSP-DISC-4 (unknown / private descriptor).
    DescriptorErrors,
    /// SSP-INV-1.
    Accepted,
    /// SSP-INV-3 on the instant role.
    LifecycleInstant,
    /// SSP-INV-3 on the slow role.
    LifecycleSlow,
    /// SSP-INV-3 / SSP-ERR-3 on the failing role.
    Failing,
    /// SSP-INV-4 (result before/after completion).
    Result,
    /// SSP-INV-4 (unknown execution).
    UnknownExecution,
    /// SSP-INV-2 (invalid inputs / request).
    InvalidRequest,
    /// SSP-INV-2 (unknown / foreign skill id).
    WrongSkill,
    /// SSP-INV-5 (declared timeout overrun).
    Overrun,
    /// SSP-INV-5 (context.timeout_ms lowers the effective timeout).
    ContextTimeout,
    /// SSP-INV-6.
    Privacy,
    /// SSP-INV-7.
    Concurrency,
    /// SSP-AUTH-1.
    PublicNone,
    /// SSP-AUTH-2 for one auth role.
    AuthRequired(FixtureRole),
    /// SSP-AUTH-3 for one auth role.
    PermissionDenied(FixtureRole),
    /// SSP-AUTH-4.
    WrongHeader,
    /// SSP-VER-1: the harness's consumer against the target.
    ConsumerCompat,
    /// SSP-VER-2: the harness's consumer against a refused connection.
    ConsumerUnreachable,
    /// SSP-ERR-4: oversized request target and header refused before routing.
    PreRouting,
}

impl Kind {
    /// The fixture roles the check resolves (each through [`Env::role_id`]): one the
    /// profile does not map makes it `Unsupported` on a server that passes its earlier
    /// steps. `conform init` asks this to list the checks a generated profile leaves
    /// unsupported. Kept beside the check bodies in [`run`]: a body that resolves another
    /// role must add it here. (Not checked up front: some checks find a violation before
    /// they resolve a role, and that failure must not become `unsupported`.)
    pub fn roles(self) -> Vec<FixtureRole> {
        use FixtureRole::*;
        match self {
            Kind::WellKnown
            | Kind::Filter
            | Kind::Agreement
            | Kind::ConsumerUnreachable
            | Kind::PreRouting => vec![],
            Kind::Visibility => vec![Private, Restricted],
            Kind::DescriptorErrors => vec![Private],
            Kind::Accepted
            | Kind::LifecycleInstant
            | Kind::UnknownExecution
            | Kind::InvalidRequest
            | Kind::Concurrency
            | Kind::ConsumerCompat => vec![Instant],
            Kind::LifecycleSlow | Kind::Result | Kind::ContextTimeout => vec![Slow],
            Kind::Failing => vec![Failing],
            Kind::WrongSkill => vec![Instant, Failing],
            Kind::Overrun => vec![Overrun],
            Kind::Privacy => vec![Restricted],
            Kind::PublicNone => vec![AuthNone],
            Kind::AuthRequired(r) | Kind::PermissionDenied(r) => vec![r],
            Kind::WrongHeader => vec![AuthApiKey],
        }
    }
}

/// Runs one check body.
pub async fn run(kind: Kind, env: &mut Env) -> Step<()> {
    match kind {
        Kind::WellKnown => well_known(env).await,
        Kind::Visibility => visibility(env).await,
        Kind::Filter => filter(env).await,
        Kind::Agreement => agreement(env).await,
        Kind::DescriptorErrors => descriptor_errors(env).await,
        Kind::Accepted => accepted(env).await,
        Kind::LifecycleInstant => lifecycle(env, FixtureRole::Instant).await,
        Kind::LifecycleSlow => lifecycle(env, FixtureRole::Slow).await,
        Kind::Failing => failing(env).await,
        Kind::Result => result(env).await,
        Kind::UnknownExecution => unknown_execution(env).await,
        Kind::InvalidRequest => invalid_request(env).await,
        Kind::WrongSkill => wrong_skill(env).await,
        Kind::Overrun => overrun(env).await,
        Kind::ContextTimeout => context_timeout(env).await,
        Kind::Privacy => privacy(env).await,
        Kind::Concurrency => concurrency(env).await,
        Kind::PublicNone => public_none(env).await,
        Kind::AuthRequired(role) => auth_required(env, role).await,
        Kind::PermissionDenied(role) => permission_denied(env, role).await,
        Kind::WrongHeader => wrong_header(env).await,
        Kind::ConsumerCompat => consumer_compat(env).await,
        Kind::ConsumerUnreachable => consumer_unreachable().await,
        Kind::PreRouting => super::pre_routing::pre_routing(env).await,
    }
}

fn ids(idx: &crate::ssp::types::SkillIndex) -> BTreeSet<String> {
    idx.skills.iter().map(|e| e.id.clone()).collect()
}

/// SSP-DISC-1: 200, application/json, a valid index with unique ids.
async fn well_known(env: &mut Env) -> Step<()> {
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
async fn visibility(env: &mut Env) -> Step<()> {
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
        let got = env
            .index(&format!("?{param}={}", t.as_str()), &Cred::None)
            .await?;
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
async fn filter(env: &mut Env) -> Step<()> {
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
async fn agreement(env: &mut Env) -> Step<()> {
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
async fn descriptor_errors(env: &mut Env) -> Step<()> {
    let anon = env.index("", &Cred::None).await?;
    let Some(first) = anon.skills.first() else {
        return Err(Finding::unsupported(
            "the anonymous index lists no skill to derive a descriptor URL from",
        ));
    };
    let marker = format!("conform-unknown-{}", env.caller_id);
    let Some((unknown, layout)) =
        super::env::unknown_descriptor_url(&first.descriptor_url, &first.id, &marker)
    else {
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

/// SSP-INV-1: 202 and a full accepted InvocationResponse, even for an instant skill.
async fn accepted(env: &mut Env) -> Step<()> {
    let f = env.fixture(FixtureRole::Instant).await?;
    let cred = f.cred.clone();
    let r = env.invoke(&f, None, None, &cred).await?;
    if r.status != 202 {
        return Err(Finding::fail(
            "",
            json!(202),
            json!(r.status),
            "POST endpoint.url must answer 202 Accepted, even for a skill that finishes at once",
        ));
    }
    let body = r.body()?.clone();
    let resp: InvocationResponse = env.typed(&body, DocType::Response, "the 202 answer")?;
    if resp.status != ExecutionStatus::Accepted {
        return Err(Finding::fail(
            "/status",
            json!("accepted"),
            json!(resp.status.as_str()),
            "the 202 answer carries status accepted",
        ));
    }
    if resp.skill_id != f.descriptor.id {
        return Err(Finding::fail(
            "/skill_id",
            json!(f.descriptor.id),
            json!(resp.skill_id),
            "the 202 answer names the invoked skill",
        ));
    }
    Ok(())
}

/// SSP-INV-3 over one execution's observed responses (accepted first).
fn check_sequence(f: &Fixture, seq: &[Value]) -> Step<()> {
    let typed: Vec<InvocationResponse> = seq
        .iter()
        .map(|v| serde_json::from_value(v.clone()).map_err(|e| Finding::harness(e.to_string())))
        .collect::<Step<_>>()?;
    let Some(first) = typed.first() else {
        return Ok(());
    };
    let mut prev = first.status;
    for (i, r) in typed.iter().enumerate() {
        if r.execution_id != first.execution_id {
            return Err(Finding::fail(
                "/execution_id",
                json!(first.execution_id),
                json!(r.execution_id),
                format!("response {i} names another execution"),
            ));
        }
        if !crate::ssp::types::same_instant(&r.timestamps.created_at, &first.timestamps.created_at)
        {
            return Err(Finding::fail(
                "/timestamps/created_at",
                json!(first.timestamps.created_at),
                json!(r.timestamps.created_at),
                "created_at is constant",
            ));
        }
        if r.status.rank() < prev.rank() {
            return Err(Finding::fail(
                "/status",
                json!(format!("{} or later", prev.as_str())),
                json!(r.status.as_str()),
                "status only moves forward (accepted → running → terminal)",
            ));
        }
        if prev.is_terminal() && r.status != prev {
            return Err(Finding::fail(
                "/status",
                json!(prev.as_str()),
                json!(r.status.as_str()),
                "a terminal status never changes",
            ));
        }
        prev = r.status;
    }
    let last = typed.last().unwrap_or(first);
    if last.status == ExecutionStatus::Completed
        && let (Some(schema), Some(output)) = (&f.descriptor.output.schema, &last.output)
    {
        match jsonschema::validator_for(&Value::Object(schema.clone())) {
            Ok(v) => {
                if let Some(e) = v.iter_errors(output).next() {
                    return Err(Finding::fail(
                        &format!("/output{}", e.instance_path().as_str()),
                        Value::Object(schema.clone()),
                        output.clone(),
                        format!("output breaks the descriptor's output.schema: {e}"),
                    ));
                }
            }
            Err(e) => {
                return Err(Finding::fail(
                    "/output/schema",
                    json!("a JSON Schema"),
                    Value::Object(schema.clone()),
                    format!("the descriptor's output.schema does not compile: {e}"),
                ));
            }
        }
    }
    Ok(())
}

/// SSP-INV-3: forward-only, terminal stable, timestamps, output schema.
async fn lifecycle(env: &mut Env, role: FixtureRole) -> Step<()> {
    let f = env.fixture(role).await?;
    let (exec, accepted) = env.start(&f, None).await?;
    let cred = f.cred.clone();
    let mut seq = vec![accepted];
    seq.extend(env.poll_terminal(&f, &exec, &cred).await?);
    // Terminal stability: two more reads give the same status and payload.
    let url = env.expand(
        f.descriptor.endpoint.status_url.as_deref(),
        "status_url",
        &exec,
    )?;
    for _ in 0..2 {
        let r = env.get(&url, &cred).await?;
        let body = r.body()?.clone();
        let last = seq.last().cloned().unwrap_or(Value::Null);
        for p in ["/status", "/output", "/error", "/timestamps/completed_at"] {
            if body.pointer(p) != last.pointer(p) {
                return Err(Finding::fail(
                    p,
                    last.pointer(p).cloned().unwrap_or(Value::Null),
                    body.pointer(p).cloned().unwrap_or(Value::Null),
                    "a terminal execution never changes",
                ));
            }
        }
        seq.push(body);
    }
    check_sequence(&f, &seq)?;
    if role == FixtureRole::Instant || role == FixtureRole::Slow {
        let last = seq.last().and_then(|v| v["status"].as_str()).unwrap_or("");
        if last != "completed" {
            return Err(Finding::fail(
                "/status",
                json!("completed"),
                json!(last),
                format!("the {role} fixture must complete"),
            ));
        }
    }
    Ok(())
}

/// SSP-INV-3 / SSP-ERR-1 / SSP-ERR-3: the failing role ends failed with a unified error
/// of any code.
async fn failing(env: &mut Env) -> Step<()> {
    let f = env.fixture(FixtureRole::Failing).await?;
    let (exec, accepted) = env.start(&f, None).await?;
    let cred = f.cred.clone();
    let mut seq = vec![accepted];
    seq.extend(env.poll_terminal(&f, &exec, &cred).await?);
    check_sequence(&f, &seq)?;
    let last = seq.last().cloned().unwrap_or(Value::Null);
    if last["status"] != "failed" {
        return Err(Finding::fail(
            "/status",
            json!("failed"),
            last["status"].clone(),
            "the failing fixture must end failed",
        ));
    }
    // SSP-ERR-3: a skill's own failure uses one of the seven (ENDPOINT_UNREACHABLE, or
    // VALIDATION_ERROR for a failure its inputs caused).
    let code = last
        .pointer("/error/code")
        .and_then(Value::as_str)
        .unwrap_or("");
    env.judge_code(
        Condition::SkillFailed,
        None,
        code,
        "the failed execution's error",
    )?;
    Ok(())
}

/// SSP-INV-4: before completion 202 without output (409 + error accepted); after, 200 with output.
async fn result(env: &mut Env) -> Step<()> {
    let f = env.fixture(FixtureRole::Slow).await?;
    let (exec, _) = env.start(&f, None).await?;
    let cred = f.cred.clone();
    let url = env.expand(
        f.descriptor.endpoint.result_url.as_deref(),
        "result_url",
        &exec,
    )?;
    let early = env.get(&url, &cred).await?;
    match early.status {
        202 => {
            let body = early.body()?.clone();
            let r: InvocationResponse =
                env.typed(&body, DocType::Response, "the early result answer")?;
            if r.status.is_terminal() {
                env.warnings.push(Finding::warn(
                    "/status",
                    json!("a non-terminal status"),
                    json!(r.status.as_str()),
                    "202 with a terminal status",
                ));
            }
            if body.get("output").is_some() {
                return Err(Finding::fail(
                    "/output",
                    json!({"$absent": true}),
                    body["output"].clone(),
                    "no output before completion",
                ));
            }
        }
        409 => {
            env.expect_error(
                &early,
                &[409],
                Condition::EarlyResult,
                "result before completion",
            )?;
        }
        200 => {
            // The slow fixture finished before the first read: the 202 branch was not observable.
            env.warnings.push(Finding::warn("", json!(202), json!(200), "the slow fixture was already complete at the first result read; use a longer delay in [ssp.inputs].slow"));
        }
        s => {
            return Err(Finding::fail(
                "",
                json!([202, 409]),
                json!(s),
                "result_url before completion answers 202 (or 409)",
            ));
        }
    }
    env.poll_terminal(&f, &exec, &cred).await?;
    let done = env.get(&url, &cred).await?;
    if done.status != 200 {
        return Err(Finding::fail(
            "",
            json!(200),
            json!(done.status),
            "result_url of a completed execution answers 200",
        ));
    }
    let body = done.body()?.clone();
    let r: InvocationResponse = env.typed(&body, DocType::Response, "the result answer")?;
    if r.status != ExecutionStatus::Completed || r.output.is_none() {
        return Err(Finding::fail(
            "/output",
            json!({"$any": true}),
            body.get("output").cloned().unwrap_or(Value::Null),
            "the completed result carries output",
        ));
    }
    Ok(())
}

/// SSP-INV-4: unknown execution id → 404 SKILL_NOT_FOUND with details.execution_id, on
/// both status and result URLs.
async fn unknown_execution(env: &mut Env) -> Step<()> {
    let f = env.fixture(FixtureRole::Instant).await?;
    let bogus = format!("conform-unknown-{}", env.caller_id);
    for (t, which) in [
        (f.descriptor.endpoint.status_url.clone(), "status_url"),
        (f.descriptor.endpoint.result_url.clone(), "result_url"),
    ] {
        let Some(t) = t else { continue };
        let url = env.expand(Some(&t), which, &bogus)?;
        let cred = f.cred.clone();
        let r = env.get(&url, &cred).await?;
        let e = env.expect_error(
            &r,
            &[404],
            Condition::UnknownResource,
            &format!("{which} of an unknown execution"),
        )?;
        // Seed §8.2 makes `details` optional: SSP-INV-4's details.execution_id is a SHOULD.
        if e.details
            .as_ref()
            .and_then(|d| d.get("execution_id"))
            .and_then(Value::as_str)
            != Some(bogus.as_str())
        {
            env.warnings.push(Finding::warn(
                "/error/details/execution_id",
                json!(bogus),
                e.details.unwrap_or(Value::Null),
                "details SHOULD name the unknown execution_id (SSP-INV-4; seed §8.2: details optional)",
            ));
        }
    }
    Ok(())
}

/// Requires a 400 VALIDATION_ERROR (SSP-INV-2: MUST). Its `details` as the seed's array
/// is a SHOULD (seed §8.2 makes `details` optional; §8.3.1 says it of the validator): a
/// missing, empty or other-shaped `details` is a warning (upstream's `{field, …}` too).
fn expect_validation(env: &mut Env, r: &crate::ssp::provider::env::Resp, what: &str) -> Step<()> {
    let e = env.expect_error(r, &[400], Condition::Invalid, what)?;
    let seed_shape = json!("[{path, message, expected, actual}]");
    let observed = e.details.clone().unwrap_or(Value::Null);
    let warning = match parse_validation_details(&e) {
        Ok((issues, _)) if issues.is_empty() => Some(format!("{what}: details list no violation")),
        Ok((_, DetailsShape::Upstream)) => Some(
            "upstream {field, …} details; the seed's shape is {path, …} (ssp.md §1)".to_string(),
        ),
        Ok(_) => None,
        Err(err) => Some(format!(
            "{what}: details SHOULD be the seed's violation array ({err}; seed §8.2: details optional)"
        )),
    };
    if let Some(m) = warning {
        env.warnings
            .push(Finding::warn("/error/details", seed_shape, observed, m).on(&["SSP-INV-2"]));
    }
    Ok(())
}

/// SSP-INV-2: malformed requests and inputs breaking the ParameterDefinitions → 400.
async fn invalid_request(env: &mut Env) -> Step<()> {
    let f = env.fixture(FixtureRole::Instant).await?;
    let cred = f.cred.clone();
    let url = f.descriptor.endpoint.url.clone();
    let method = f.descriptor.endpoint.method.as_str();
    // Malformed request: no caller.
    let mut body = env.request(&f.descriptor.id, &f.inputs, None);
    if let Some(o) = body.as_object_mut() {
        o.remove("caller");
    }
    let r = env.send(method, &url, Some(&body), &cred).await?;
    expect_validation(env, &r, "request without caller")?;
    // An input that is not declared.
    let mut extra = f.inputs.clone();
    extra.insert("conform_undeclared_input".into(), json!(1));
    let r = env.invoke(&f, Some(&extra), None, &cred).await?;
    expect_validation(env, &r, "undeclared input")?;
    // A required input missing, and a wrong JSON type, when the skill declares inputs.
    if let Some(req) = f.descriptor.inputs.iter().find(|p| p.required) {
        let mut missing = f.inputs.clone();
        missing.remove(&req.name);
        let r = env.invoke(&f, Some(&missing), None, &cred).await?;
        expect_validation(env, &r, &format!("missing required input {}", req.name))?;
    }
    if let Some(p) = f.descriptor.inputs.first() {
        let wrong = match p.kind.as_str() {
            "string" => json!(12345),
            "object" | "array" => json!("not-a-structure"),
            _ => json!({"conform": "wrong type"}),
        };
        let mut bad = f.inputs.clone();
        bad.insert(p.name.clone(), wrong);
        let r = env.invoke(&f, Some(&bad), None, &cred).await?;
        expect_validation(env, &r, &format!("input {} of the wrong JSON type", p.name))?;
    }
    Ok(())
}

/// SSP-INV-2: an unknown skill_id, or another skill's id at this endpoint → 404 SKILL_NOT_FOUND.
async fn wrong_skill(env: &mut Env) -> Step<()> {
    let f = env.fixture(FixtureRole::Instant).await?;
    let cred = f.cred.clone();
    let url = f.descriptor.endpoint.url.clone();
    let method = f.descriptor.endpoint.method.as_str();
    let body = env.request(
        &format!("conform-unknown/{}", env.caller_id),
        &f.inputs,
        None,
    );
    let r = env.send(method, &url, Some(&body), &cred).await?;
    env.expect_error(&r, &[404], Condition::UnknownSkill, "unknown skill_id")?;
    let other = env.fixture(FixtureRole::Failing).await?;
    if other.descriptor.id != f.descriptor.id && other.descriptor.endpoint.url != url {
        let body = env.request(&other.descriptor.id, &f.inputs, None);
        let r = env.send(method, &url, Some(&body), &cred).await?;
        env.expect_error(
            &r,
            &[404],
            Condition::UnknownSkill,
            "another skill's id at this endpoint",
        )?;
    }
    Ok(())
}

/// SSP-INV-5: an overrun ends `timeout`; its error is judged by the one judge the model
/// uses (`ssp/timeout_error.rs`: the code must be INVOCATION_TIMEOUT, the rest warns).
fn check_timeout_error(
    env: &mut Env,
    last: &Value,
    exec: &str,
    effective: Option<u64>,
) -> Step<()> {
    if last["status"] != "timeout" {
        return Err(Finding::fail(
            "/status",
            json!("timeout"),
            last["status"].clone(),
            "an overrun ends the execution as timeout",
        ));
    }
    let found = |n: crate::ssp::timeout_error::Note, warn: bool| {
        let make = if warn { Finding::warn } else { Finding::fail };
        make(n.pointer, n.expected, n.observed, n.message).on(&n.rules)
    };
    let effective = effective.map(|e| e as f64);
    match crate::ssp::timeout_error::judge(last, exec, effective) {
        Ok(notes) => {
            (env.warnings).extend(notes.into_iter().map(|n| found(n, true)));
            Ok(())
        }
        Err(n) => Err(found(*n, false)),
    }
}

/// SSP-INV-5: the overrun fixture ends timeout with INVOCATION_TIMEOUT.
async fn overrun(env: &mut Env) -> Step<()> {
    let f = env.fixture(FixtureRole::Overrun).await?;
    let (exec, accepted) = env.start(&f, None).await?;
    let cred = f.cred.clone();
    let mut seq = vec![accepted];
    seq.extend(env.poll_terminal(&f, &exec, &cred).await?);
    check_sequence(&f, &seq)?;
    let declared = f
        .descriptor
        .endpoint
        .timeout_ms
        .as_ref()
        .and_then(serde_json::Number::as_u64);
    let last = seq.last().cloned().unwrap_or(Value::Null);
    check_timeout_error(env, &last, &exec, declared)
}

/// SSP-INV-5: context.timeout_ms below endpoint.timeout_ms is the effective timeout.
async fn context_timeout(env: &mut Env) -> Step<()> {
    let f = env.fixture(FixtureRole::Slow).await?;
    const CONTEXT_MS: u64 = 20;
    let (exec, accepted) = env.start(&f, Some(CONTEXT_MS)).await?;
    let cred = f.cred.clone();
    let mut seq = vec![accepted];
    seq.extend(env.poll_terminal(&f, &exec, &cred).await?);
    check_sequence(&f, &seq)?;
    let last = seq.last().cloned().unwrap_or(Value::Null);
    check_timeout_error(env, &last, &exec, Some(CONTEXT_MS))
}

/// SSP-INV-6: another credential (and an anonymous caller) cannot read a non-public execution.
async fn privacy(env: &mut Env) -> Step<()> {
    let f = env.fixture(FixtureRole::Restricted).await?;
    let (exec, _) = env.start(&f, None).await?;
    let url = env.expand(
        f.descriptor.endpoint.status_url.as_deref(),
        "status_url",
        &exec,
    )?;
    let other = match (
        &f.cred,
        &env.profile.credentials.api_key_limited,
        &env.profile.credentials.oauth2_token_limited,
    ) {
        (Cred::ApiKey { header, .. }, Some(k), _) => Cred::ApiKey {
            header: header.clone(),
            key: k.clone(),
        },
        (Cred::Bearer(_), _, Some(t)) => Cred::Bearer(t.clone()),
        _ => {
            return Err(Finding::untested(
                "the profile has no second valid credential for the restricted skill's auth type",
            ));
        }
    };
    let r = env.get(&url, &other).await?;
    // SSP-INV-6: 404 (no leak of existence, SHOULD) or 403 (seed §7.4: valid credentials,
    // insufficient permission) both conform.
    env.expect_error(
        &r,
        &[404, 403],
        Condition::OtherCaller,
        "another credential reading a non-public execution",
    )?;
    if r.text.contains("\"output\"") {
        return Err(Finding::fail(
            "/output",
            json!({"$absent": true}),
            json!(r.text),
            "no output leaks to another caller",
        ));
    }
    let r = env.get(&url, &Cred::None).await?;
    if r.status != 404 && r.status != 401 {
        return Err(Finding::fail(
            "",
            json!([404, 401]),
            json!(r.status),
            "an anonymous caller cannot read a non-public execution",
        ));
    }
    env.expect_error(
        &r,
        &[404, 401],
        Condition::OtherCaller,
        "anonymous read of a non-public execution",
    )?;
    Ok(())
}

/// SSP-INV-7: N concurrent invocations → N distinct ids, each followed independently.
async fn concurrency(env: &mut Env) -> Step<()> {
    const N: usize = 8;
    let f = env.fixture(FixtureRole::Instant).await?;
    let cred = f.cred.clone();
    let client = env.client_handle();
    let url = f.descriptor.endpoint.url.clone();
    let method = f.descriptor.endpoint.method.as_str();
    let bodies: Vec<Value> = (0..N)
        .map(|_| env.request(&f.descriptor.id, &f.inputs, None))
        .collect();
    let futs = bodies
        .iter()
        .map(|b| Env::send_detached(&client, method, &url, b, &cred));
    let results = futures::future::join_all(futs).await;
    let mut ids = BTreeSet::new();
    for (i, r) in results.into_iter().enumerate() {
        let (ex, status, body) = r;
        env.exchanges.push(ex);
        if status != Some(202) {
            return Err(Finding::fail(
                "",
                json!(202),
                json!(status),
                format!("concurrent invocation {i} was not accepted"),
            ));
        }
        let id = body
            .as_ref()
            .and_then(|b| b["execution_id"].as_str())
            .unwrap_or("")
            .to_owned();
        if !ids.insert(id.clone()) {
            return Err(Finding::fail(
                "/execution_id",
                json!("unique"),
                json!(id),
                "two concurrent invocations got the same execution_id",
            ));
        }
    }
    for id in &ids {
        let seq = env.poll_terminal(&f, id, &cred).await?;
        let last = seq.last().cloned().unwrap_or(Value::Null);
        if last["execution_id"] != json!(id) || last["skill_id"] != json!(f.descriptor.id) {
            return Err(Finding::fail(
                "/execution_id",
                json!(id),
                last["execution_id"].clone(),
                "each execution is reported under its own id",
            ));
        }
    }
    Ok(())
}

/// SSP-AUTH-1: a public skill with auth none is invocable without credentials.
async fn public_none(env: &mut Env) -> Step<()> {
    let f = env.fixture(FixtureRole::AuthNone).await?;
    if f.descriptor.auth.kind != AuthType::None || f.descriptor.access != AccessPolicy::Public {
        return Err(Finding::untested(format!(
            "role auth_none maps to {} which is not public + auth none",
            f.descriptor.id
        )));
    }
    let r = env.invoke(&f, None, None, &Cred::None).await?;
    if r.status == 401 || r.status == 403 || r.status != 202 {
        return Err(Finding::fail(
            "",
            json!(202),
            json!(r.status),
            "a public skill with auth none is invocable without credentials",
        ));
    }
    Ok(())
}

fn wrong_cred(c: &Cred) -> Cred {
    match c {
        Cred::ApiKey { header, .. } => Cred::ApiKey {
            header: header.clone(),
            key: "conform-invalid-key".into(),
        },
        Cred::Bearer(_) => Cred::Bearer("conform-invalid-token".into()),
        Cred::Hmac { header, .. } => Cred::Hmac {
            header: header.clone(),
            secret: "conform-wrong-secret".into(),
        },
        other => other.clone(),
    }
}

/// SSP-AUTH-2: missing and invalid credentials → 401 AUTH_REQUIRED with details, retry
/// {0, 1} and WWW-Authenticate.
async fn auth_required(env: &mut Env, role: FixtureRole) -> Step<()> {
    let f = env.fixture(role).await?;
    let d = f.descriptor.clone();
    for (label, cred) in [
        ("no credentials", Cred::None),
        ("invalid credentials", wrong_cred(&f.cred)),
    ] {
        let r = env.invoke(&f, None, None, &cred).await?;
        let e = env.expect_error(
            &r,
            &[401],
            Condition::AuthMissing,
            &format!("{} with {label}", d.id),
        )?;
        // SSP-AUTH-2: WWW-Authenticate SHOULD (RFC 9110; the seed's 401 example shows none).
        if r.header("www-authenticate").is_none() {
            env.warnings.push(Finding::warn(
                "",
                json!("a WWW-Authenticate header"),
                Value::Null,
                "401 SHOULD carry WWW-Authenticate (RFC 9110 §11.6.1; the seed's example has none)",
            ));
        }
        // Seed §8.3.2: "Le champ details DEVRAIT décrire la méthode d'authentification
        // requise" — a SHOULD (and §8.2 makes `details` optional): ssp.md's MUST reading
        // conflicts with the seed, which wins, so the details are checked as warnings.
        let details = e.details.clone().unwrap_or(Value::Null);
        let mut details_warning = |pointer: &str, expected: Value, observed: Value, what: &str| {
            env.warnings.push(Finding::warn(
                pointer,
                expected,
                observed,
                format!("{what} (seed §8.3.2: details SHOULD describe the method)"),
            ));
        };
        if details["required_auth_type"] != json!(d.auth.kind.as_str()) {
            details_warning(
                "/error/details/required_auth_type",
                json!(d.auth.kind.as_str()),
                details["required_auth_type"].clone(),
                "details describe the required method",
            );
        }
        match d.auth.kind {
            AuthType::ApiKey
                if details["header"].as_str().map(str::to_ascii_lowercase)
                    != d.auth.header.as_deref().map(str::to_ascii_lowercase) =>
            {
                details_warning(
                    "/error/details/header",
                    json!(d.auth.header),
                    details["header"].clone(),
                    "details name the key's header",
                );
            }
            AuthType::Oauth2 if details.get("authorization_url").is_none() => {
                details_warning(
                    "/error/details/authorization_url",
                    json!(d.auth.oauth2.as_ref().map(|o| o.authorization_url.clone())),
                    Value::Null,
                    "details give the authorization_url",
                );
            }
            _ => {}
        }
        // Seed §8.2: `error.retry` is optional ("Non"): its absence is a warning. When it is
        // there, ssp.md SSP-AUTH-2 fixes its value, {0, 1} (the seed's §8.3.2 and §10.2
        // show no other), and nothing in the seed contradicts that.
        match e
            .retry
            .as_ref()
            .map(|r| (r.suggested_delay_ms.as_f64(), r.max_attempts.as_f64()))
        {
            None => env.warnings.push(Finding::warn(
                "/error/retry",
                json!({"suggested_delay_ms": 0, "max_attempts": 1}),
                Value::Null,
                "AUTH_REQUIRED without retry (seed §8.2: retry is optional; ssp.md asks for {0, 1})",
            )),
            Some(retry) if retry != (Some(0.0), Some(1.0)) => {
                return Err(Finding::fail(
                    "/error/retry",
                    json!({"suggested_delay_ms": 0, "max_attempts": 1}),
                    serde_json::to_value(&e.retry).unwrap_or(Value::Null),
                    "AUTH_REQUIRED's retry is {0, 1} (ssp.md SSP-AUTH-2; seed §8.3.2)",
                ));
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// SSP-AUTH-3: valid credentials without the permission → 403 PERMISSION_DENIED with
/// details {required_scopes, granted_scopes}.
async fn permission_denied(env: &mut Env, role: FixtureRole) -> Step<()> {
    let f = env.fixture(role).await?;
    let c = &env.profile.credentials;
    let limited = match (&f.cred, &c.api_key_limited, &c.oauth2_token_limited) {
        (Cred::ApiKey { header, .. }, Some(k), _) => Cred::ApiKey {
            header: header.clone(),
            key: k.clone(),
        },
        (Cred::Bearer(_), _, Some(t)) => Cred::Bearer(t.clone()),
        _ => {
            return Err(Finding::untested(format!(
                "no limited credential for role {role} in [ssp.credentials]"
            )));
        }
    };
    let r = env.invoke(&f, None, None, &limited).await?;
    let e = env.expect_error(
        &r,
        &[403],
        Condition::PermissionMissing,
        "valid credentials without permission",
    )?;
    // Seed §8.2 makes `error.details` optional and §8.3.3 only shows an example: the
    // members ssp.md SSP-AUTH-3 asks for are checked as warnings (the seed wins).
    let details = e.details.unwrap_or(Value::Null);
    for m in ["required_scopes", "granted_scopes"] {
        if !details.get(m).is_some_and(Value::is_array) {
            env.warnings.push(Finding::warn(
                &format!("/error/details/{m}"),
                json!({"$type": "array"}),
                details.get(m).cloned().unwrap_or(Value::Null),
                "details {required_scopes, granted_scopes} (seed §8.3.3 example; §8.2: details optional)",
            ));
        }
    }
    Ok(())
}

/// SSP-AUTH-4: the right key in another header → 401.
async fn wrong_header(env: &mut Env) -> Step<()> {
    let f = env.fixture(FixtureRole::AuthApiKey).await?;
    let Cred::ApiKey { header, key } = f.cred.clone() else {
        return Err(Finding::untested(
            "role auth_api_key is not an api_key skill",
        ));
    };
    let other = if header.eq_ignore_ascii_case("x-conform-key") {
        "X-Other-Key"
    } else {
        "X-Conform-Key"
    };
    for cred in [
        Cred::Header(other.into(), key.clone()),
        Cred::Bearer(key.clone()),
    ] {
        if header.eq_ignore_ascii_case("authorization") && matches!(cred, Cred::Bearer(_)) {
            continue;
        }
        let r = env.invoke(&f, None, None, &cred).await?;
        env.expect_error(
            &r,
            &[401],
            Condition::AuthMissing,
            &format!("the right key outside {header}"),
        )?;
    }
    Ok(())
}

fn consumer_creds(c: &Cred) -> Step<Credentials> {
    Ok(match c {
        Cred::None => Credentials::None,
        Cred::ApiKey { key, .. } => Credentials::ApiKey(key.clone()),
        Cred::Bearer(t) => Credentials::Bearer(t.clone()),
        Cred::Header(n, v) => Credentials::Headers(vec![(n.clone(), v.clone())]),
        Cred::Hmac { .. } => {
            return Err(Finding::unsupported(
                "the consumer does not sign requests (custom HMAC) — map an unsigned skill to the instant role",
            ));
        }
    })
}

/// SSP-VER-1 (CONS): the harness's consumer discovers the target, invokes the instant
/// skill end to end, and refuses a descriptor of a newer MAJOR locally — its endpoint is
/// pointed at a closed port, so any invocation attempt would surface as ENDPOINT_UNREACHABLE.
async fn consumer_compat(env: &mut Env) -> Step<()> {
    let f = env.fixture(FixtureRole::Instant).await?;
    let creds = consumer_creds(&f.cred)?;
    let consumer = Consumer::new(ConsumerConfig {
        caller_id: env.caller_id.clone(),
        no_proxy: true,
        tls: env.client_handle().tls().clone(),
        ..ConsumerConfig::default()
    })
    .map_err(|e| Finding::harness(e.to_string()))?;
    let (_, descriptors) = consumer
        .discover_all(&env.base, &Credentials::None, None)
        .await
        .map_err(|e| {
            Finding::fail(
                "",
                json!("a discoverable provider"),
                json!(e.to_string()),
                "the consumer's discovery failed",
            )
        })?;
    if let Some(Err(e)) = descriptors.iter().find(|d| d.is_err()) {
        return Err(Finding::fail(
            "",
            json!("valid descriptors"),
            json!(e.to_string()),
            "the consumer rejected a discovered descriptor",
        ));
    }
    let inv = consumer
        .invoke(&f.descriptor, f.inputs.clone(), None, &creds)
        .await
        .map_err(|e| {
            Finding::fail(
                "",
                json!("a completed invocation"),
                json!(e.to_string()),
                "the consumer could not invoke the instant skill",
            )
        })?;
    if inv.result.status != ExecutionStatus::Completed {
        return Err(Finding::fail(
            "/status",
            json!("completed"),
            json!(inv.result.status.as_str()),
            "the instant skill completes through the consumer",
        ));
    }
    let mut newer = f.descriptor.clone();
    let major: u64 = consumer.config().protocol_version.major + 1;
    newer.protocol.version = format!("{major}.0.0");
    newer.endpoint.url = closed_port_url().await?;
    match consumer
        .invoke(&newer, f.inputs.clone(), None, &creds)
        .await
    {
        Err(ConsumerError::Local(e)) if e.code.as_str() == "VERSION_INCOMPATIBLE" => {
            let d = e.details.unwrap_or(Value::Null);
            let want = json!({"descriptor_version": newer.protocol.version, "consumer_version": consumer.config().protocol_version.to_string(), "supported_major": major - 1});
            if d != want {
                return Err(Finding::fail(
                    "/error/details",
                    want,
                    d,
                    "VERSION_INCOMPATIBLE details (seed §8.3.7)",
                ));
            }
            Ok(())
        }
        other => Err(Finding::fail(
            "/error/code",
            json!("VERSION_INCOMPATIBLE"),
            json!(format!("{other:?}")),
            "a newer MAJOR must be refused locally, without invoking",
        )),
    }
}

async fn closed_port_url() -> Step<String> {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| Finding::harness(e.to_string()))?;
    let addr = l
        .local_addr()
        .map_err(|e| Finding::harness(e.to_string()))?;
    drop(l);
    Ok(format!("http://{addr}/invoke"))
}

/// SSP-VER-2 (CONS): a refused connection ends in ENDPOINT_UNREACHABLE after the attempts
/// `endpoint.retry` allows.
async fn consumer_unreachable() -> Step<()> {
    let url = closed_port_url().await?;
    let d: SkillDescriptor = serde_json::from_value(json!({
        "protocol": {"version": "1.0.0"}, "id": "conform/unreachable", "name": "Unreachable", "version": "1.0.0",
        "capability_type": "api", "description": "", "provider": {"name": "conform"},
        "endpoint": {"url": url, "method": "POST", "retry": {"max_attempts": 3, "backoff_ms": 5}},
        "inputs": [], "output": {"content_type": "application/json"}, "auth": {"type": "none"}, "access": "public"
    }))
    .map_err(|e| Finding::harness(e.to_string()))?;
    let consumer = Consumer::new(ConsumerConfig {
        no_proxy: true,
        ..ConsumerConfig::default()
    })
    .map_err(|e| Finding::harness(e.to_string()))?;
    match consumer
        .invoke(&d, serde_json::Map::new(), None, &Credentials::None)
        .await
    {
        Err(ConsumerError::Local(e)) if e.code.as_str() == "ENDPOINT_UNREACHABLE" => {
            let attempts = e.details.as_ref().and_then(|d| d["attempts"].as_u64());
            if attempts != Some(3) {
                return Err(Finding::fail(
                    "/error/details/attempts",
                    json!(3),
                    json!(attempts),
                    "endpoint.retry.max_attempts is honoured",
                ));
            }
            Ok(())
        }
        other => Err(Finding::fail(
            "/error/code",
            json!("ENDPOINT_UNREACHABLE"),
            json!(format!("{other:?}")),
            "a refused connection is ENDPOINT_UNREACHABLE",
        )),
    }
}

/// The checks of the SSP provider suite: (id, title, requirements, kind).
pub fn catalogue() -> Vec<(&'static str, &'static str, &'static [&'static str], Kind)> {
    use FixtureRole::*;
    vec![
        (
            "SSP-DISC-1/well-known",
            "GET /.well-known/skill-sharing → 200 application/json, a valid index with unique ids",
            &["SSP-DISC-1", "SSP-SCH-1"],
            Kind::WellKnown,
        ),
        (
            "SSP-DISC-2/visibility",
            "anonymous discovery hides private skills and lists public and restricted ones",
            &["SSP-DISC-2"],
            Kind::Visibility,
        ),
        (
            "SSP-DISC-3/filter",
            "capability_type / type filters return exactly the matching entries",
            &["SSP-DISC-3", "SSP-ERR-1", "SSP-ERR-2", "SSP-ERR-3"],
            Kind::Filter,
        ),
        (
            "SSP-DISC-4/agreement",
            "every descriptor_url gives a valid descriptor agreeing with its index entry",
            // Every served descriptor is validated, against SSP-SCH-2…4's rules too.
            &["SSP-DISC-4", "SSP-SCH-2", "SSP-SCH-3", "SSP-SCH-4"],
            Kind::Agreement,
        ),
        (
            "SSP-DISC-4/descriptor-errors",
            "unknown descriptor → 404 SKILL_NOT_FOUND; private descriptor anonymously → 401 (or 404)",
            &["SSP-DISC-4", "SSP-ERR-1", "SSP-ERR-2", "SSP-ERR-3"],
            Kind::DescriptorErrors,
        ),
        (
            "SSP-INV-1/accepted",
            "POST endpoint.url → 202 and an accepted InvocationResponse, even for an instant skill",
            &["SSP-INV-1"],
            Kind::Accepted,
        ),
        (
            "SSP-INV-3/lifecycle-instant",
            "instant skill: forward-only status, stable terminal state, timestamps, output schema",
            &["SSP-INV-3"],
            Kind::LifecycleInstant,
        ),
        (
            "SSP-INV-3/lifecycle-slow",
            "slow skill: forward-only status, stable terminal state, timestamps, output schema",
            &["SSP-INV-3"],
            Kind::LifecycleSlow,
        ),
        (
            "SSP-INV-3/failing",
            "failing skill ends failed with a unified error, code one of the seven (SSP-ERR-3)",
            &["SSP-INV-3", "SSP-ERR-1", "SSP-ERR-2", "SSP-ERR-3"],
            Kind::Failing,
        ),
        (
            "SSP-INV-4/result",
            "result_url: 202 without output before completion, 200 with output after",
            &["SSP-INV-4", "SSP-ERR-2", "SSP-ERR-3"],
            Kind::Result,
        ),
        (
            "SSP-INV-4/unknown-execution",
            "unknown execution id → 404 SKILL_NOT_FOUND with details.execution_id",
            &["SSP-INV-4", "SSP-ERR-2", "SSP-ERR-3"],
            Kind::UnknownExecution,
        ),
        (
            "SSP-INV-2/invalid-request",
            "malformed request and inputs breaking the ParameterDefinitions → 400 VALIDATION_ERROR",
            &["SSP-INV-2", "SSP-ERR-1", "SSP-ERR-2", "SSP-ERR-3"],
            Kind::InvalidRequest,
        ),
        (
            "SSP-INV-2/wrong-skill",
            "unknown or foreign skill_id → 404 SKILL_NOT_FOUND",
            &["SSP-INV-2", "SSP-ERR-2", "SSP-ERR-3"],
            Kind::WrongSkill,
        ),
        (
            "SSP-INV-5/overrun",
            "an overrun ends as timeout with INVOCATION_TIMEOUT, details and retry",
            &["SSP-INV-5", "SSP-ERR-2", "SSP-ERR-3"],
            Kind::Overrun,
        ),
        (
            "SSP-INV-5/context-timeout",
            "context.timeout_ms below endpoint.timeout_ms is the effective timeout",
            &["SSP-INV-5", "SSP-ERR-2", "SSP-ERR-3"],
            Kind::ContextTimeout,
        ),
        (
            "SSP-INV-6/privacy",
            "a non-public execution is readable only with the credential that created it",
            &["SSP-INV-6", "SSP-ERR-2", "SSP-ERR-3"],
            Kind::Privacy,
        ),
        (
            "SSP-INV-7/concurrency",
            "concurrent invocations get distinct execution ids and independent results",
            &["SSP-INV-7"],
            Kind::Concurrency,
        ),
        (
            "SSP-AUTH-1/public-none",
            "a public skill with auth none is invocable without credentials",
            &["SSP-AUTH-1"],
            Kind::PublicNone,
        ),
        (
            "SSP-AUTH-2/api-key",
            "api_key skill: missing or invalid key → 401 AUTH_REQUIRED with details, retry and WWW-Authenticate",
            &["SSP-AUTH-2", "SSP-ERR-2", "SSP-ERR-3"],
            Kind::AuthRequired(AuthApiKey),
        ),
        (
            "SSP-AUTH-2/oauth2",
            "oauth2 skill: missing or invalid token → 401 AUTH_REQUIRED with details, retry and WWW-Authenticate",
            &["SSP-AUTH-2", "SSP-ERR-2", "SSP-ERR-3"],
            Kind::AuthRequired(AuthOauth2),
        ),
        (
            "SSP-AUTH-2/custom",
            "custom skill: missing or invalid signature → 401 AUTH_REQUIRED with details, retry and WWW-Authenticate",
            &["SSP-AUTH-2", "SSP-ERR-2", "SSP-ERR-3"],
            Kind::AuthRequired(AuthCustom),
        ),
        (
            "SSP-AUTH-3/api-key",
            "api_key without permission → 403 PERMISSION_DENIED with scopes",
            &["SSP-AUTH-3", "SSP-ERR-2", "SSP-ERR-3"],
            Kind::PermissionDenied(AuthApiKey),
        ),
        (
            "SSP-AUTH-3/oauth2",
            "oauth2 token missing the scope → 403 PERMISSION_DENIED with scopes",
            &["SSP-AUTH-3", "SSP-ERR-2", "SSP-ERR-3"],
            Kind::PermissionDenied(AuthOauth2),
        ),
        (
            "SSP-AUTH-4/wrong-header",
            "the right API key in another header → 401",
            &["SSP-AUTH-4", "SSP-ERR-2", "SSP-ERR-3"],
            Kind::WrongHeader,
        ),
        (
            "SSP-VER-1/consumer",
            "the harness's consumer discovers and invokes the target, and refuses a newer MAJOR without invoking",
            &["SSP-VER-1", "SSP-DISC-1"],
            Kind::ConsumerCompat,
        ),
        (
            "SSP-VER-2/consumer-unreachable",
            "the harness's consumer reports ENDPOINT_UNREACHABLE after honouring endpoint.retry",
            &["SSP-VER-2"],
            Kind::ConsumerUnreachable,
        ),
        (
            "SSP-ERR-4/pre-routing",
            "an oversized request target or header on the discovery path is refused before routing with its transport status (414, 431), never a 5xx",
            // SSP-ERR-4 only: its pass shows a JSON body, not SSP-ERR-1's unified shape.
            &["SSP-ERR-4"],
            Kind::PreRouting,
        ),
    ]
}
