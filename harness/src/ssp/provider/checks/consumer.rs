//! SSP-VER: the harness as a consumer — SemVer compatibility against the provider, and an
//! unreachable provider (ssp.md §6).

use crate::ssp::consumer::{Consumer, ConsumerConfig, ConsumerError, Credentials};
use crate::ssp::provider::env::{Cred, Env, Finding, Step};
use crate::ssp::provider::profile::FixtureRole;
use crate::ssp::types::{ExecutionStatus, SkillDescriptor};
use serde_json::{Value, json};

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
pub(super) async fn consumer_compat(env: &mut Env) -> Step<()> {
    let f = env.fixture(FixtureRole::Instant).await?;
    let creds = consumer_creds(&f.cred)?;
    let consumer = Consumer::new(ConsumerConfig {
        caller_id: env.caller_id.clone(),
        no_proxy: true,
        ..ConsumerConfig::default().within(&env.client_handle())
    })
    .map_err(|e| Finding::harness(e.to_string()))?;
    let within = consumer.config().request_timeout.as_millis();
    let (_, descriptors) = consumer
        .discover_all(&env.base, &Credentials::None, None)
        .await
        .map_err(|e| {
            Finding::fail(
                "",
                json!("a discoverable provider"),
                json!(e.to_string()),
                format!(
                    "the consumer's discovery failed (each request within the per-request timeout of {within} ms, timeout_ms × --time-scale)"
                ),
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
pub(super) async fn consumer_unreachable(env: &mut Env) -> Step<()> {
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
        ..ConsumerConfig::default().within(&env.client_handle())
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
