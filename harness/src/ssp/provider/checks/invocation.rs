//! SSP-INV-1…4: accepted invocations, the execution lifecycle, failing skills, results,
//! unknown executions and invalid requests (ssp.md §4).

use crate::ssp::codes::Condition;
use crate::ssp::provider::env::{Env, Finding, Fixture, Step};
use crate::ssp::provider::profile::FixtureRole;
use crate::ssp::types::{ExecutionStatus, InvocationResponse};
use crate::ssp::validator::{DetailsShape, DocType, parse_validation_details};
use serde_json::{Value, json};

/// SSP-INV-1: 202 and a full accepted InvocationResponse, even for an instant skill.
pub(super) async fn accepted(env: &mut Env) -> Step<()> {
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
pub(super) fn check_sequence(f: &Fixture, seq: &[Value]) -> Step<()> {
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
pub(super) async fn lifecycle(env: &mut Env, role: FixtureRole) -> Step<()> {
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
        let end = seq.last().cloned().unwrap_or(Value::Null);
        let last = end["status"].as_str().unwrap_or("");
        let declared =
            (f.descriptor.endpoint.timeout_ms.as_ref()).and_then(serde_json::Number::as_f64);
        // SSP-INV-5 lets the clock start at acceptance: a timeout once the skill's timeout
        // had passed since creation may be a queue's, so the completion went unobserved.
        if last == "timeout"
            && declared.and_then(|t| crate::ssp::types::timed_out_in_time(&end, t)) == Some(true)
        {
            return Err(Finding::unsupported(format!(
                "the {role} fixture timed out once its timeout had passed since created_at (it may have waited in a queue): its completion was not observed"
            )));
        }
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
pub(super) async fn failing(env: &mut Env) -> Step<()> {
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
pub(super) async fn result(env: &mut Env) -> Step<()> {
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
pub(super) async fn unknown_execution(env: &mut Env) -> Step<()> {
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
pub(super) async fn invalid_request(env: &mut Env) -> Step<()> {
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
    // A required input missing, and a wrong JSON type, when the skill declares inputs. An
    // input with a `default` may be filled in and accepted (seed §3.5.2), and one the
    // profile's valid request does not send is not "left out" by removing it.
    let required = |p: &&crate::ssp::types::ParameterDefinition| {
        p.required && p.default.is_none() && f.inputs.contains_key(&p.name)
    };
    if let Some(req) = f.descriptor.inputs.iter().find(required) {
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
pub(super) async fn wrong_skill(env: &mut Env) -> Step<()> {
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
