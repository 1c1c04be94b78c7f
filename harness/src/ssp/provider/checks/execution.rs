//! SSP-INV-5…7: timeouts (the skill's own and the context's), the privacy of executions,
//! concurrent invocations (ssp.md §4).

use super::invocation::check_sequence;
use crate::ssp::codes::Condition;
use crate::ssp::provider::env::{Cred, Env, Finding, Step};
use crate::ssp::provider::profile::FixtureRole;
use serde_json::{Value, json};
use std::collections::BTreeSet;

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
pub(super) async fn overrun(env: &mut Env) -> Step<()> {
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
pub(super) async fn context_timeout(env: &mut Env) -> Step<()> {
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
pub(super) async fn privacy(env: &mut Env) -> Step<()> {
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
pub(super) async fn concurrency(env: &mut Env) -> Step<()> {
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
    let mut throttled = 0;
    for (i, r) in results.into_iter().enumerate() {
        let (ex, status, body) = r;
        env.exchanges.push(ex);
        // A provider may cap concurrent work with 429/503 (SSP-ERR-3's table): those
        // invocations were not taken, and the rule judges the ones that were.
        if status.is_some_and(crate::ssp::provider::env::throttling) {
            throttled += 1;
            continue;
        }
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
    if ids.len() < 2 {
        return Err(Finding::untested(format!(
            "{throttled} of {N} concurrent invocations were throttled: fewer than two to compare"
        )));
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
