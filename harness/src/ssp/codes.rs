//! SSP-ERR-2 / SSP-ERR-3: the one judge of an SSP error code, shared by the scripted checks
//! (`provider`), the state-machine model (`model`) and the fuzz oracles (`fuzz`), so the
//! three never disagree on a code.
//!
//! ssp.md SSP-ERR-3: "A check's verdict on a code: the table's codes (or, for seed-named
//! conditions, the seed's code, SSP-ERR-2) → pass; another of the seven → warning; a code
//! outside the seven → failure (sole exception: `EXECUTION_TIMEOUT`, a warning, §1)."
//! SSP-ERR-2 (seed §8.1) adds that the seed's codes travel with their statuses: a code
//! sent with a status that neither the seed nor the table gives it fails.

use crate::ssp::types::ErrorCode as C;

/// The seven codes of seed §8.1 (seed §8.2: "L'un des sept codes d'erreur").
pub const SEVEN: [&str; 7] = [
    C::VALIDATION_ERROR,
    C::AUTH_REQUIRED,
    C::PERMISSION_DENIED,
    C::SKILL_NOT_FOUND,
    C::INVOCATION_TIMEOUT,
    C::ENDPOINT_UNREACHABLE,
    C::VERSION_INCOMPATIBLE,
];

/// Why an error was answered: the row of SSP-ERR-3's table (or the seed condition of
/// SSP-ERR-2) the request provoked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Condition {
    /// Seed-named: missing or invalid credentials (SSP-AUTH-2) → `AUTH_REQUIRED`.
    AuthMissing,
    /// Seed-named: valid credentials without permission (SSP-AUTH-3) → `PERMISSION_DENIED`.
    PermissionMissing,
    /// Seed-named: unknown skill id or descriptor URL → `SKILL_NOT_FOUND`.
    UnknownSkill,
    /// Seed-named: an execution over its timeout (SSP-INV-5) → `INVOCATION_TIMEOUT`.
    Timeout,
    /// Malformed request, invalid inputs (SSP-INV-2), unknown filter value (SSP-DISC-3).
    Invalid,
    /// 405 on an SSP route.
    MethodNotAllowed,
    /// 413: body over the provider's limit.
    TooLarge,
    /// 415: `Content-Type` not JSON.
    MediaType,
    /// Unknown path under the provider; unknown or expired execution id (SSP-INV-4).
    UnknownResource,
    /// Another caller's execution (SSP-INV-6): the code goes by the status.
    OtherCaller,
    /// A result read before completion, answered as an error (SSP-INV-4, 409).
    EarlyResult,
    /// 429 rate limit.
    RateLimited,
    /// 503 overload, connection cap.
    Overload,
    /// 500 unexpected internal error.
    Internal,
    /// The skill ran and failed (`status: failed`).
    SkillFailed,
    /// Not provoked on purpose (a fuzz case): the condition is read from the status.
    ByStatus,
}

/// The judge's verdict on one code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The table's (or the seed's) code.
    Pass,
    /// Another reading the notes tolerate; the message says which.
    Warn(String),
    /// The rule `rule` is broken; the message says how.
    Fail {
        /// SSP-ERR-2 (wrong code for a seed condition, or a code off its status) or SSP-ERR-3.
        rule: &'static str,
        /// What is wrong.
        message: String,
    },
}

impl Condition {
    /// The condition a status stands for, when nothing else is known (fuzzing).
    pub fn of_status(status: u16) -> Self {
        match status {
            401 => Self::AuthMissing,
            403 => Self::PermissionMissing,
            404 => Self::UnknownResource,
            405 => Self::MethodNotAllowed,
            408 | 504 => Self::Timeout,
            409 => Self::EarlyResult,
            413 => Self::TooLarge,
            415 => Self::MediaType,
            429 => Self::RateLimited,
            500 => Self::Internal,
            502 | 503 => Self::Overload,
            _ => Self::Invalid,
        }
    }

    /// Whether the seed itself names the condition (SSP-ERR-2: another code fails).
    fn seed_named(self) -> bool {
        matches!(
            self,
            Self::AuthMissing | Self::PermissionMissing | Self::UnknownSkill | Self::Timeout
        )
    }

    /// The codes that pass for this condition (the table's code and its "also passes").
    fn passing(self, status: Option<u16>) -> &'static [&'static str] {
        match self {
            Self::AuthMissing => &[C::AUTH_REQUIRED],
            Self::PermissionMissing => &[C::PERMISSION_DENIED],
            Self::UnknownSkill | Self::UnknownResource => &[C::SKILL_NOT_FOUND],
            Self::Timeout => &[C::INVOCATION_TIMEOUT],
            Self::Invalid | Self::TooLarge | Self::MediaType => &[C::VALIDATION_ERROR],
            Self::MethodNotAllowed | Self::EarlyResult => {
                &[C::VALIDATION_ERROR, C::SKILL_NOT_FOUND]
            }
            Self::OtherCaller => match status {
                Some(401) => &[C::AUTH_REQUIRED],
                Some(403) => &[C::PERMISSION_DENIED],
                _ => &[C::SKILL_NOT_FOUND],
            },
            Self::RateLimited => &[C::ENDPOINT_UNREACHABLE, C::PERMISSION_DENIED],
            Self::Overload | Self::Internal => &[C::ENDPOINT_UNREACHABLE],
            Self::SkillFailed => &[C::ENDPOINT_UNREACHABLE, C::VALIDATION_ERROR],
            Self::ByStatus => match status {
                Some(s) => Self::of_status(s).passing(Some(s)),
                None => &[],
            },
        }
    }
}

/// The statuses a code may travel with: the seed's (§8.1) and the table's rows that name
/// it (SSP-ERR-3). `None`: `VALIDATION_ERROR`, local in the seed, is bound to no status.
pub fn statuses(code: &str) -> Option<&'static [u16]> {
    Some(match code {
        C::AUTH_REQUIRED => &[401],
        C::PERMISSION_DENIED => &[403, 429],
        C::SKILL_NOT_FOUND => &[404, 405, 409],
        C::INVOCATION_TIMEOUT | C::EXECUTION_TIMEOUT => &[408, 504],
        C::ENDPOINT_UNREACHABLE => &[429, 500, 502, 503],
        C::VERSION_INCOMPATIBLE => &[422],
        _ => return None,
    })
}

/// Judges `code`, answered with HTTP `status` (`None`: the `error` of a failed or timed-out
/// execution, read on a 200 poll) to a request that provoked `cond`.
pub fn judge(cond: Condition, status: Option<u16>, code: &str) -> Verdict {
    let cond = match (cond, status) {
        (Condition::ByStatus, Some(s)) => Condition::of_status(s),
        _ => cond,
    };
    if let (Some(s), Some(allowed)) = (status, statuses(code))
        && !allowed.contains(&s)
    {
        return Verdict::Fail {
            rule: "SSP-ERR-2",
            message: format!("{code} travels with HTTP {allowed:?}, not {s} (seed §8.1)"),
        };
    }
    if code == C::EXECUTION_TIMEOUT {
        return Verdict::Warn(
            "EXECUTION_TIMEOUT is upstream's alias; the seed says INVOCATION_TIMEOUT (ssp.md §1)"
                .into(),
        );
    }
    if !SEVEN.contains(&code) {
        return Verdict::Fail {
            rule: "SSP-ERR-3",
            message: format!("{code} is not one of the seed's seven error codes (seed §8.2)"),
        };
    }
    let passing = cond.passing(status);
    if passing.contains(&code) {
        Verdict::Pass
    } else if cond.seed_named() {
        Verdict::Fail {
            rule: "SSP-ERR-2",
            message: format!(
                "the seed names {} for this condition, not {code}",
                passing.join(" / ")
            ),
        }
    } else {
        Verdict::Warn(format!(
            "{code} is one of the seven, but this condition's code is {} (SSP-ERR-3 table)",
            passing.join(" or ")
        ))
    }
}

/// The code the table (or the seed) names for `cond`, for messages and expected values.
pub fn expected(cond: Condition, status: Option<u16>) -> &'static str {
    cond.passing(status)
        .first()
        .copied()
        .unwrap_or(C::VALIDATION_ERROR)
}

#[cfg(test)]
mod tests {
    //! Each verdict of SSP-ERR-3's sentence, in both directions.
    use super::*;

    fn fails(v: &Verdict, rule: &str) -> bool {
        matches!(v, Verdict::Fail { rule: r, .. } if *r == rule)
    }

    #[test]
    fn the_table_code_passes_another_of_the_seven_warns_and_others_fail() {
        use Condition as K;
        let cases: &[(K, Option<u16>, &str, &str)] = &[
            (K::RateLimited, Some(429), "ENDPOINT_UNREACHABLE", "pass"),
            (K::RateLimited, Some(429), "PERMISSION_DENIED", "pass"),
            (K::RateLimited, Some(429), "RATE_LIMITED", "SSP-ERR-3"),
            (K::MethodNotAllowed, Some(405), "VALIDATION_ERROR", "pass"),
            (K::MethodNotAllowed, Some(405), "SKILL_NOT_FOUND", "pass"),
            (K::TooLarge, Some(413), "VALIDATION_ERROR", "pass"),
            (K::TooLarge, Some(413), "PAYLOAD_TOO_LARGE", "SSP-ERR-3"),
            (K::Invalid, Some(400), "AUTH_REQUIRED", "SSP-ERR-2"),
            (K::SkillFailed, None, "ENDPOINT_UNREACHABLE", "pass"),
            (K::SkillFailed, None, "VALIDATION_ERROR", "pass"),
            (K::SkillFailed, None, "PERMISSION_DENIED", "warn"),
            (K::SkillFailed, None, "SKILL_FAILED", "SSP-ERR-3"),
            (K::AuthMissing, Some(401), "AUTH_REQUIRED", "pass"),
            (K::AuthMissing, Some(401), "PERMISSION_DENIED", "SSP-ERR-2"),
            (K::PermissionMissing, Some(403), "PERMISSION_DENIED", "pass"),
            (K::Timeout, None, "INVOCATION_TIMEOUT", "pass"),
            (K::Timeout, None, "EXECUTION_TIMEOUT", "warn"),
            (K::Timeout, None, "ENDPOINT_UNREACHABLE", "SSP-ERR-2"),
            (K::UnknownResource, Some(404), "SKILL_NOT_FOUND", "pass"),
            (K::UnknownResource, Some(404), "NOT_FOUND", "SSP-ERR-3"),
            (K::EarlyResult, Some(409), "VALIDATION_ERROR", "pass"),
            (K::EarlyResult, Some(409), "RESULT_NOT_READY", "SSP-ERR-3"),
            (K::OtherCaller, Some(403), "PERMISSION_DENIED", "pass"),
            (K::OtherCaller, Some(401), "AUTH_REQUIRED", "pass"),
            (K::OtherCaller, Some(404), "SKILL_NOT_FOUND", "pass"),
            (K::OtherCaller, Some(404), "PERMISSION_DENIED", "SSP-ERR-2"),
            (K::Internal, Some(500), "ENDPOINT_UNREACHABLE", "pass"),
            (K::Overload, Some(503), "ENDPOINT_UNREACHABLE", "pass"),
            (K::Invalid, Some(400), "VERSION_INCOMPATIBLE", "SSP-ERR-2"),
            (K::ByStatus, Some(415), "VALIDATION_ERROR", "pass"),
            (K::ByStatus, Some(400), "SKILL_FAILED", "SSP-ERR-3"),
        ];
        for (cond, status, code, want) in cases {
            let v = judge(*cond, *status, code);
            let ok = match *want {
                "pass" => v == Verdict::Pass,
                "warn" => matches!(v, Verdict::Warn(_)),
                rule => fails(&v, rule),
            };
            assert!(ok, "{cond:?} {status:?} {code}: expected {want}, got {v:?}");
        }
    }
}
