//! Refusal reasons (§10): stable, machine-readable, each with exactly one status.

use std::fmt;

/// A stable refusal reason of parley-v1.md §10.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Reason {
    /// 400: malformed envelope or arguments (PV-EN-1).
    InvalidBody,
    /// 400: body over `body_max_chars` (PV-EN-2).
    BodyTooLong,
    /// 400: kind not among the enabled kinds (PV-EN-3, PV-DI-8).
    KindUnknown,
    /// 400: a non-opening kind without thread/parent (PV-EN-6).
    ThreadRequired,
    /// 400: a dialectic act without 1..evidence_max items (PV-DI-1).
    EvidenceRequired,
    /// 400: an evidence item whose ref does not fit its kind (PV-DI-1).
    EvidenceInvalid,
    /// 401: no `Authorization` header (PV-TR-4).
    TokenMissing,
    /// 401: unknown or malformed token (PV-TR-4).
    TokenInvalid,
    /// 403: the token row lacks the operation's right (PV-AU-1, PV-DI-4).
    TokenRightMissing,
    /// 403: no thread authority (PV-AU-2, PV-AU-3, PV-DI-6).
    ThreadAuthorityMissing,
    /// 403: attesting/verifying one's own claim (PV-DI-3, PV-DI-4).
    SelfAttest,
    /// 404: unknown thread (PV-EN-5).
    ThreadNotFound,
    /// 404: unknown message (PV-EN-5).
    MessageNotFound,
    /// 404: unknown claim (PV-DI-7).
    ClaimNotFound,
    /// 404: unknown route (binding level).
    NotFound,
    /// 405: wrong method on a known route (binding level).
    MethodNotAllowed,
    /// 409: a transition the state machine forbids (PV-ST-1..3, PV-ST-6, PV-DI-3..5).
    InvalidTransition,
    /// 409: the thread is confirmed `closed` (PV-ST-4).
    ThreadLocked,
    /// 409: replying to one's own `(identity, extension)` (PV-ID-2).
    SelfReply,
    /// 413: request over `request_max_bytes` (PV-TR-5).
    PayloadTooLarge,
    /// 415: POST body whose Content-Type is not JSON (PV-RS-4).
    UnsupportedMediaType,
    /// 429: write quota exceeded (PV-TR-5).
    RateLimited,
}

impl Reason {
    /// Every reason this server can emit (the manifest's `reasons`, PV-MF-1).
    pub const ALL: [Reason; 22] = [
        Reason::InvalidBody,
        Reason::BodyTooLong,
        Reason::KindUnknown,
        Reason::ThreadRequired,
        Reason::EvidenceRequired,
        Reason::EvidenceInvalid,
        Reason::TokenMissing,
        Reason::TokenInvalid,
        Reason::TokenRightMissing,
        Reason::ThreadAuthorityMissing,
        Reason::SelfAttest,
        Reason::ThreadNotFound,
        Reason::MessageNotFound,
        Reason::ClaimNotFound,
        Reason::NotFound,
        Reason::MethodNotAllowed,
        Reason::InvalidTransition,
        Reason::ThreadLocked,
        Reason::SelfReply,
        Reason::PayloadTooLarge,
        Reason::UnsupportedMediaType,
        Reason::RateLimited,
    ];

    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::InvalidBody => "invalid_body",
            Reason::BodyTooLong => "body_too_long",
            Reason::KindUnknown => "kind_unknown",
            Reason::ThreadRequired => "thread_required",
            Reason::EvidenceRequired => "evidence_required",
            Reason::EvidenceInvalid => "evidence_invalid",
            Reason::TokenMissing => "token_missing",
            Reason::TokenInvalid => "token_invalid",
            Reason::TokenRightMissing => "token_right_missing",
            Reason::ThreadAuthorityMissing => "thread_authority_missing",
            Reason::SelfAttest => "self_attest",
            Reason::ThreadNotFound => "thread_not_found",
            Reason::MessageNotFound => "message_not_found",
            Reason::ClaimNotFound => "claim_not_found",
            Reason::NotFound => "not_found",
            Reason::MethodNotAllowed => "method_not_allowed",
            Reason::InvalidTransition => "invalid_transition",
            Reason::ThreadLocked => "thread_locked",
            Reason::SelfReply => "self_reply",
            Reason::PayloadTooLarge => "payload_too_large",
            Reason::UnsupportedMediaType => "unsupported_media_type",
            Reason::RateLimited => "rate_limited",
        }
    }

    /// The HTTP status the reason always travels with (§10).
    pub fn status(self) -> u16 {
        match self {
            Reason::InvalidBody
            | Reason::BodyTooLong
            | Reason::KindUnknown
            | Reason::ThreadRequired
            | Reason::EvidenceRequired
            | Reason::EvidenceInvalid => 400,
            Reason::TokenMissing | Reason::TokenInvalid => 401,
            Reason::TokenRightMissing | Reason::ThreadAuthorityMissing | Reason::SelfAttest => 403,
            Reason::ThreadNotFound
            | Reason::MessageNotFound
            | Reason::ClaimNotFound
            | Reason::NotFound => 404,
            Reason::MethodNotAllowed => 405,
            Reason::InvalidTransition | Reason::ThreadLocked | Reason::SelfReply => 409,
            Reason::PayloadTooLarge => 413,
            Reason::UnsupportedMediaType => 415,
            Reason::RateLimited => 429,
        }
    }

    /// Parses the wire spelling (the tests' inverse of `as_str`).
    #[cfg(test)]
    pub fn from_str_opt(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|r| r.as_str() == s)
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A refusal decided by the domain: the stable reason plus a human-readable message that
/// says what exactly was wrong (the message is not part of the contract, the reason is).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The stable reason.
    pub reason: Reason,
    /// Explanation for humans and logs.
    pub message: String,
}

impl Refusal {
    /// Builds a refusal.
    pub fn new(reason: Reason, message: impl Into<String>) -> Self {
        Self {
            reason,
            message: message.into(),
        }
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} ({}): {}",
            self.reason,
            self.reason.status(),
            self.message
        )
    }
}

impl std::error::Error for Refusal {}

/// Shorthand for `Err(Refusal::new(..))`.
pub fn refuse<T>(reason: Reason, message: impl Into<String>) -> Result<T, Refusal> {
    Err(Refusal::new(reason, message))
}

/// Reasons of the refusals the transport itself emits before routing (malformed or oversized
/// request heads, deadlines, the connection cap, h2c, a foreign `Host` or `Origin`): outside the operation table of §10,
/// listed in the manifest too because `reasons` names every reason the server can emit
/// (PV-MF-1). `server::refusal` is tested to emit exactly these.
pub const TRANSPORT_REASONS: [&str; 8] = [
    "invalid_request",
    "request_timeout",
    "uri_too_long",
    "headers_too_large",
    "server_busy",
    "http_version_not_supported",
    "forbidden_host",
    "forbidden_origin",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_of_section_10() {
        let table: &[(u16, &[&str])] = &[
            (
                400,
                &[
                    "invalid_body",
                    "body_too_long",
                    "kind_unknown",
                    "thread_required",
                    "evidence_required",
                    "evidence_invalid",
                ],
            ),
            (401, &["token_missing", "token_invalid"]),
            (
                403,
                &[
                    "token_right_missing",
                    "thread_authority_missing",
                    "self_attest",
                ],
            ),
            (
                404,
                &[
                    "thread_not_found",
                    "message_not_found",
                    "claim_not_found",
                    "not_found",
                ],
            ),
            (405, &["method_not_allowed"]),
            (409, &["invalid_transition", "thread_locked", "self_reply"]),
            (413, &["payload_too_large"]),
            (415, &["unsupported_media_type"]),
            (429, &["rate_limited"]),
        ];
        let mut n = 0;
        for (status, names) in table {
            for name in *names {
                let r = Reason::from_str_opt(name).unwrap_or_else(|| panic!("missing {name}"));
                assert_eq!(r.status(), *status, "{name}");
                n += 1;
            }
        }
        assert_eq!(n, Reason::ALL.len());
    }
}
