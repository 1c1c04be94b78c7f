//! SSP-ERR-4: refusals the HTTP layer raises before the request reaches an SSP route. An
//! oversized request target and an oversized header, sent to the discovery path without
//! credentials, are judged on status only with PV-TR-6's statuses (the shared judgement of
//! [`crate::transport::pre_routing`]): 414 / 431 passes — any JSON body conforms, a non-JSON
//! one is a warning —, another 4xx, another row's 5xx or no answer is a warning. A 5xx no
//! row gives is reported on SSP-ERR-4 too, a SHOULD: a warning here (`conform fuzz`'s no-5xx
//! oracle fails it on SSP-ERR-1). An answer from
//! the route itself (an SSP error with another status, or a 2xx) means the request was
//! within the provider's limit: the next size is tried, and a provider that serves both is
//! `unsupported` here, never passed.

use serde_json::json;

use super::env::{Cred, Env, Finding, Resp, Step};
use crate::transport::pre_routing::{
    Condition, Status, describe, judge_status, oversized, shortened, sizes,
};

/// The discovery path (seed §4: the one path every provider serves).
const DISCOVERY: &str = "/.well-known/skill-sharing";

/// SSP-ERR-4 for both conditions; warnings go to `env.warnings`.
pub async fn pre_routing(env: &mut Env) -> Step<()> {
    let mut judged = 0;
    let mut tried = Vec::new();
    for cond in [Condition::UriTooLong, Condition::HeadTooLarge] {
        let (size, status, resp) = probe(env, cond).await;
        let what = describe(cond, size);
        if status.is_some() {
            tried.push(what.clone());
        }
        let rules: &[&str] = &["SSP-ERR-4"];
        match status {
            None | Some(Status::Served) => {}
            Some(Status::Row) => {
                judged += 1;
                if let Some(r) = resp.filter(|r| r.json.is_none()) {
                    env.warnings.push(
                        Finding::warn(
                            "",
                            json!("a JSON body (SSP's unified error where the path is SSP's)"),
                            json!(crate::engine::target::truncate(&r.text, 120)),
                            format!("{what}: HTTP {} without a JSON body", r.status),
                        )
                        .on(rules),
                    );
                }
            }
            Some(Status::Other(m)) => {
                judged += 1;
                env.warnings.push(
                    Finding::warn("", json!(cond.status()), json!(m), format!("{what}: {m}"))
                        .on(rules),
                );
            }
            Some(Status::ServerError(m)) => {
                return Err(Finding::fail(
                    "",
                    json!(format!("{} (or another 4xx)", cond.status())),
                    json!(m),
                    format!("{what}: {m}"),
                )
                .on(rules));
            }
        }
    }
    if judged == 0 {
        if tried.is_empty() {
            return Err(Finding::harness(
                "the harness could not send an oversized request",
            ));
        }
        return Err(Finding::unsupported(format!(
            "no transport refusal to judge: the provider served {}",
            tried.join(" and ")
        )));
    }
    Ok(())
}

/// Sends `cond`'s request at each size until one is not served: the size, the judged status
/// (`None`: the harness could not send it) and the response.
async fn probe(env: &mut Env, cond: Condition) -> (usize, Option<Status>, Option<Resp>) {
    let client = env.client_handle();
    let mut last = (0, None, None);
    for size in sizes(cond) {
        let (target, headers) = oversized(cond, DISCOVERY, size);
        let url = env.url(&target);
        let (ex, resp) = Env::send_raw(&client, "GET", &url, &headers, None, &Cred::None).await;
        let unsent = resp.is_none()
            && ex.status.is_none()
            && ex
                .error
                .as_deref()
                .is_some_and(crate::transport::never_built);
        if unsent {
            // The harness's HTTP stack refused to build it: nothing reached the provider.
            return last;
        }
        let status = resp.as_ref().map(|r| r.status).or(ex.status);
        env.exchanges.push(shortened(ex));
        // The SSP route's own error (another 4xx, not about size, in the unified shape): the
        // request was within the limit. Never a 5xx: a crash with a JSON body is a crash.
        let routed = resp.as_ref().is_some_and(|r| {
            (400..500).contains(&r.status)
                && !matches!(r.status, 413 | 414 | 431)
                && r.json
                    .as_ref()
                    .and_then(|j| j.pointer("/error/code"))
                    .is_some()
        });
        let judged = if routed {
            Status::Served
        } else {
            judge_status(cond, status)
        };
        let done = judged != Status::Served;
        last = (size, Some(judged), resp);
        if done {
            break;
        }
    }
    last
}
