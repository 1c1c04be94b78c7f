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
    pub const ALL: [Self; 22] = [
        Self::InvalidBody,
        Self::BodyTooLong,
        Self::KindUnknown,
        Self::ThreadRequired,
        Self::EvidenceRequired,
        Self::EvidenceInvalid,
        Self::TokenMissing,
        Self::TokenInvalid,
        Self::TokenRightMissing,
        Self::ThreadAuthorityMissing,
        Self::SelfAttest,
        Self::ThreadNotFound,
        Self::MessageNotFound,
        Self::ClaimNotFound,
        Self::NotFound,
        Self::MethodNotAllowed,
        Self::InvalidTransition,
        Self::ThreadLocked,
        Self::SelfReply,
        Self::PayloadTooLarge,
        Self::UnsupportedMediaType,
        Self::RateLimited,
    ];

    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InvalidBody => "invalid_body",
            Self::BodyTooLong => "body_too_long",
            Self::KindUnknown => "kind_unknown",
            Self::ThreadRequired => "thread_required",
            Self::EvidenceRequired => "evidence_required",
            Self::EvidenceInvalid => "evidence_invalid",
            Self::TokenMissing => "token_missing",
            Self::TokenInvalid => "token_invalid",
            Self::TokenRightMissing => "token_right_missing",
            Self::ThreadAuthorityMissing => "thread_authority_missing",
            Self::SelfAttest => "self_attest",
            Self::ThreadNotFound => "thread_not_found",
            Self::MessageNotFound => "message_not_found",
            Self::ClaimNotFound => "claim_not_found",
            Self::NotFound => "not_found",
            Self::MethodNotAllowed => "method_not_allowed",
            Self::InvalidTransition => "invalid_transition",
            Self::ThreadLocked => "thread_locked",
            Self::SelfReply => "self_reply",
            Self::PayloadTooLarge => "payload_too_large",
            Self::UnsupportedMediaType => "unsupported_media_type",
            Self::RateLimited => "rate_limited",
        }
    }

    /// The HTTP status the reason always travels with (§10).
    pub fn status(self) -> u16 {
        match self {
            Self::InvalidBody
            | Self::BodyTooLong
            | Self::KindUnknown
            | Self::ThreadRequired
            | Self::EvidenceRequired
            | Self::EvidenceInvalid => 400,
            Self::TokenMissing | Self::TokenInvalid => 401,
            Self::TokenRightMissing | Self::ThreadAuthorityMissing | Self::SelfAttest => 403,
            Self::ThreadNotFound | Self::MessageNotFound | Self::ClaimNotFound | Self::NotFound => {
                404
            }
            Self::MethodNotAllowed => 405,
            Self::InvalidTransition | Self::ThreadLocked | Self::SelfReply => 409,
            Self::PayloadTooLarge => 413,
            Self::UnsupportedMediaType => 415,
            Self::RateLimited => 429,
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
