//! Hooks of the request pipeline shared by every operation: authentication (401), the
//! PV-AU-6 check order (403 right, 429, 413, 415), the refusal as it is answered, and the
//! manifest document.

use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::domain::parley::envelope::parse_envelope;
use crate::domain::parley::operation::{Args, Operation};
use crate::domain::parley::{Limits, Reason, Refusal, Right};
use crate::faults::{Fault, Faults};

/// The reason for a bearer token nobody issued: `token_invalid` (PV-TR-4).
/// `unknown-token-as-missing` answers `token_missing`.
pub(crate) fn unknown_token(faults: Faults) -> Reason {
    if faults.is_on(Fault::UnknownTokenAsMissing) {
        Reason::TokenMissing
    } else {
        Reason::TokenInvalid
    }
}

/// Runs after authentication, before the right check. Correct servers do nothing here
/// (PV-AU-6: 403 comes before 400); `body-checked-before-right` validates the post body.
pub(crate) fn before_rights(
    faults: Faults,
    op: Operation,
    args: &Args,
    limits: &Limits,
    dialectic: bool,
    now: DateTime<Utc>,
) -> Result<(), Refusal> {
    if !faults.is_on(Fault::BodyCheckedBeforeRight) || op != Operation::Post {
        return Ok(());
    }
    match args {
        Args::Json(v) => parse_envelope(v, limits, dialectic, now).map(drop),
        Args::Malformed(why) => Err(Refusal::new(
            Reason::InvalidBody,
            format!("malformed JSON: {why}"),
        )),
    }
}

/// The rights an operation needs, from the correct `rights` (PV-AU-1, PV-DI-4).
/// `reader-can-post` asks only `read` of a post; `verify-without-right` drops `verify`.
pub(crate) fn rights(faults: Faults, op: Operation, rights: Vec<Right>) -> Vec<Right> {
    if op != Operation::Post {
        return rights;
    }
    if faults.is_on(Fault::ReaderCanPost) {
        return vec![Right::Read];
    }
    if faults.is_on(Fault::VerifyWithoutRight) {
        return rights.into_iter().filter(|r| *r != Right::Verify).collect();
    }
    rights
}

/// Whether a request target over the URI limit breaks the server (PV-TR-6: 414
/// `uri_too_long`); `uri-too-long-500` answers 500 instead.
pub(crate) fn uri_limit_crashes(faults: Faults) -> bool {
    faults.is_on(Fault::UriTooLong500)
}

/// Which transport limits of PV-TR-5 / PV-RS-4 the server enforces.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Enforced {
    /// 429 once a token's writes per minute are used up (`quota-not-enforced`).
    pub(crate) quota: bool,
    /// 413 over `request_max_bytes` (`payload-limit-not-enforced`).
    pub(crate) payload_limit: bool,
    /// 415 for a non-JSON body (`non-json-content-type-accepted`).
    pub(crate) json_content_type: bool,
}

/// The limits enforced: all of them, unless a fault switches one off.
pub(crate) fn enforced(faults: Faults) -> Enforced {
    Enforced {
        quota: !faults.is_on(Fault::QuotaNotEnforced),
        payload_limit: !faults.is_on(Fault::PayloadLimitNotEnforced),
        json_content_type: !faults.is_on(Fault::NonJsonContentTypeAccepted),
    }
}

/// A refusal on its way to the wire. `unstable-thread-not-found` generalises
/// `thread_not_found` to `not_found`; `rate-limit-without-retry-after` drops Retry-After.
pub(crate) fn refusal(faults: Faults, refusal: &mut Refusal, retry_after: &mut Option<u64>) {
    if faults.is_on(Fault::UnstableThreadNotFound) && refusal.reason == Reason::ThreadNotFound {
        refusal.reason = Reason::NotFound;
    }
    if faults.is_on(Fault::RateLimitWithoutRetryAfter) {
        *retry_after = None;
    }
}

/// The manifest document as built by the domain (PV-MF-1, PV-MF-2).
/// `manifest-misses-kind` drops `agree`, `manifest-drops-mcp-binding` nulls the MCP binding
/// of `inbox`, `manifest-body-limit-mismatch` declares a body limit of 280.
pub(crate) fn manifest(faults: Faults, manifest: &mut Value) {
    if faults.is_on(Fault::ManifestMissesKind)
        && let Some(Value::Array(kinds)) = manifest.get_mut("kinds")
    {
        kinds.retain(|k| k.get("name").or(Some(k)).and_then(Value::as_str) != Some("agree"));
    }
    if faults.is_on(Fault::ManifestDropsMcpBinding)
        && let Some(Value::Array(ops)) = manifest.get_mut("operations")
    {
        for op in ops.iter_mut() {
            if op.get("name").and_then(Value::as_str) == Some("inbox") {
                op["mcp"] = Value::Null;
            }
        }
    }
    if faults.is_on(Fault::ManifestBodyLimitMismatch)
        && let Some(limit) = manifest.pointer_mut("/limits/body_max_chars")
    {
        *limit = Value::from(280);
    }
}
