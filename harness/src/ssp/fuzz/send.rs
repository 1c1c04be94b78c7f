//! Sending one hostile request as the campaign does (the request vectors that replay a
//! promoted finding send it the same way).

use super::cases::Case;
use crate::capability::fuzz;
use crate::ssp::provider::env::{Env, Resp};
use crate::transport::Exchange;

/// Sends one case on `client`: the exchange, the answer, and how many requests that took.
///
/// A connection that fails without an answer is tried once more on a fresh connection:
/// HTTP lets a server close a kept-alive connection at any time (RFC 9112 §9.3), so a
/// pooled connection closed under the request is a race, not a finding.
pub async fn send_case(
    client: &crate::transport::Client,
    case: &Case,
) -> (Exchange, Option<Resp>, u64) {
    let (mut ex, mut resp) = send_once(client, case).await;
    let mut sent = 1;
    if !case.may_drop
        && fuzz::worth_retrying(ex.status, ex.error.as_deref())
        && let Ok(fresh) = client.renewed()
    {
        (ex, resp) = send_once(&fresh, case).await;
        sent += 1;
    }
    (ex, resp, sent)
}

async fn send_once(client: &crate::transport::Client, case: &Case) -> (Exchange, Option<Resp>) {
    Env::send_raw(
        client,
        &case.method,
        &case.url,
        &case.headers,
        case.body.clone(),
        &case.cred,
    )
    .await
}
