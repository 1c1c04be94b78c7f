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

mod auth;
mod consumer;
mod discovery;
mod execution;
mod invocation;

use crate::ssp::provider::env::{Env, Step};
use crate::ssp::provider::profile::FixtureRole;

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
        Kind::WellKnown => discovery::well_known(env).await,
        Kind::Visibility => discovery::visibility(env).await,
        Kind::Filter => discovery::filter(env).await,
        Kind::Agreement => discovery::agreement(env).await,
        Kind::DescriptorErrors => discovery::descriptor_errors(env).await,
        Kind::Accepted => invocation::accepted(env).await,
        Kind::LifecycleInstant => invocation::lifecycle(env, FixtureRole::Instant).await,
        Kind::LifecycleSlow => invocation::lifecycle(env, FixtureRole::Slow).await,
        Kind::Failing => invocation::failing(env).await,
        Kind::Result => invocation::result(env).await,
        Kind::UnknownExecution => invocation::unknown_execution(env).await,
        Kind::InvalidRequest => invocation::invalid_request(env).await,
        Kind::WrongSkill => invocation::wrong_skill(env).await,
        Kind::Overrun => execution::overrun(env).await,
        Kind::ContextTimeout => execution::context_timeout(env).await,
        Kind::Privacy => execution::privacy(env).await,
        Kind::Concurrency => execution::concurrency(env).await,
        Kind::PublicNone => auth::public_none(env).await,
        Kind::AuthRequired(role) => auth::auth_required(env, role).await,
        Kind::PermissionDenied(role) => auth::permission_denied(env, role).await,
        Kind::WrongHeader => auth::wrong_header(env).await,
        Kind::ConsumerCompat => consumer::consumer_compat(env).await,
        Kind::ConsumerUnreachable => consumer::consumer_unreachable().await,
        Kind::PreRouting => super::pre_routing::pre_routing(env).await,
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
