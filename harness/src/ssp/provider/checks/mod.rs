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

use futures::FutureExt as _;
use futures::future::BoxFuture;

use crate::ssp::provider::env::{Env, Step};
use crate::ssp::provider::profile::FixtureRole;

/// Runs one check's body in its environment.
pub type Runner = for<'a> fn(&'a mut Env) -> BoxFuture<'a, Step<()>>;

/// How a check spends its time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Timing {
    /// Milliseconds.
    Quick,
    /// Waits for an execution to run its course on the provider's clock: started first.
    Long,
    /// Tests the harness's own consumer against a closed local port: the target is not
    /// involved, so its verdict is no evidence about the target.
    SelfTest,
}

/// One check, declared once: id, title, cited requirement IDs (first = primary), the
/// fixture roles it resolves, how it spends its time, and the function that runs it. A new
/// check is one row of [`catalogue`] and its function.
#[derive(Clone, Copy)]
pub struct Decl {
    /// Stable id (`SSP-DISC-1/well-known`).
    pub id: &'static str,
    /// One line.
    pub title: &'static str,
    /// Cited requirement IDs, the primary first.
    pub rules: &'static [&'static str],
    /// The fixture roles the check resolves (each through [`Env::role_id`]): one the
    /// profile does not map makes it `Unsupported` on a server that passes its earlier
    /// steps. `conform init` reads them to list the checks a generated profile leaves
    /// unsupported; a body that resolves another role must add it here. (Not checked up
    /// front: some checks find a violation before they resolve a role, and that failure
    /// must not become `unsupported`.)
    pub roles: &'static [FixtureRole],
    /// How it spends its time.
    pub timing: Timing,
    /// What runs.
    pub run: Runner,
}

/// A check body as a [`Runner`]: `async fn(&mut Env)`, or one taking a fixture role too.
macro_rules! runs {
    ($f:path, $role:expr) => {
        runs!(@wrap |env| $f(env, $role))
    };
    ($f:path) => {
        runs!(@wrap |env| $f(env))
    };
    (@wrap |$env:ident| $call:expr) => {{
        fn run($env: &mut Env) -> BoxFuture<'_, Step<()>> {
            $call.boxed()
        }
        run as Runner
    }};
}

/// The checks of the SSP provider suite, in report order.
pub fn catalogue() -> Vec<Decl> {
    vec![
        Decl {
            id: "SSP-DISC-1/well-known",
            title: "GET /.well-known/skill-sharing → 200 application/json, a valid index with unique ids",
            rules: &["SSP-DISC-1", "SSP-SCH-1"],
            roles: &[],
            timing: Timing::Quick,
            run: runs!(discovery::well_known),
        },
        Decl {
            id: "SSP-DISC-2/visibility",
            title: "anonymous discovery hides private skills and lists public and restricted ones",
            rules: &["SSP-DISC-2"],
            roles: &[FixtureRole::Private, FixtureRole::Restricted],
            timing: Timing::Quick,
            run: runs!(discovery::visibility),
        },
        Decl {
            id: "SSP-DISC-3/filter",
            title: "capability_type / type filters return exactly the matching entries",
            rules: &["SSP-DISC-3", "SSP-ERR-1", "SSP-ERR-2", "SSP-ERR-3"],
            roles: &[],
            timing: Timing::Quick,
            run: runs!(discovery::filter),
        },
        Decl {
            id: "SSP-DISC-4/agreement",
            title: "every descriptor_url gives a valid descriptor agreeing with its index entry",
            // Every served descriptor is validated, against SSP-SCH-2…4's rules too.
            rules: &["SSP-DISC-4", "SSP-SCH-2", "SSP-SCH-3", "SSP-SCH-4"],
            roles: &[],
            timing: Timing::Quick,
            run: runs!(discovery::agreement),
        },
        Decl {
            id: "SSP-DISC-4/descriptor-errors",
            title: "unknown descriptor → 404 SKILL_NOT_FOUND; private descriptor anonymously → 401 (or 404)",
            rules: &["SSP-DISC-4", "SSP-ERR-1", "SSP-ERR-2", "SSP-ERR-3"],
            roles: &[FixtureRole::Private],
            timing: Timing::Quick,
            run: runs!(discovery::descriptor_errors),
        },
        Decl {
            id: "SSP-INV-1/accepted",
            title: "POST endpoint.url → 202 and an accepted InvocationResponse, even for an instant skill",
            rules: &["SSP-INV-1"],
            roles: &[FixtureRole::Instant],
            timing: Timing::Quick,
            run: runs!(invocation::accepted),
        },
        Decl {
            id: "SSP-INV-3/lifecycle-instant",
            title: "instant skill: forward-only status, stable terminal state, timestamps, output schema",
            rules: &["SSP-INV-3"],
            roles: &[FixtureRole::Instant],
            timing: Timing::Quick,
            run: runs!(invocation::lifecycle, FixtureRole::Instant),
        },
        Decl {
            id: "SSP-INV-3/lifecycle-slow",
            title: "slow skill: forward-only status, stable terminal state, timestamps, output schema",
            rules: &["SSP-INV-3"],
            roles: &[FixtureRole::Slow],
            timing: Timing::Long,
            run: runs!(invocation::lifecycle, FixtureRole::Slow),
        },
        Decl {
            id: "SSP-INV-3/failing",
            title: "failing skill ends failed with a unified error, code one of the seven (SSP-ERR-3)",
            rules: &["SSP-INV-3", "SSP-ERR-1", "SSP-ERR-2", "SSP-ERR-3"],
            roles: &[FixtureRole::Failing],
            timing: Timing::Quick,
            run: runs!(invocation::failing),
        },
        Decl {
            id: "SSP-INV-4/result",
            title: "result_url: 202 without output before completion, 200 with output after",
            rules: &["SSP-INV-4", "SSP-ERR-2", "SSP-ERR-3"],
            roles: &[FixtureRole::Slow],
            timing: Timing::Long,
            run: runs!(invocation::result),
        },
        Decl {
            id: "SSP-INV-4/unknown-execution",
            title: "unknown execution id → 404 SKILL_NOT_FOUND with details.execution_id",
            rules: &["SSP-INV-4", "SSP-ERR-2", "SSP-ERR-3"],
            roles: &[FixtureRole::Instant],
            timing: Timing::Quick,
            run: runs!(invocation::unknown_execution),
        },
        Decl {
            id: "SSP-INV-2/invalid-request",
            title: "malformed request and inputs breaking the ParameterDefinitions → 400 VALIDATION_ERROR",
            rules: &["SSP-INV-2", "SSP-ERR-1", "SSP-ERR-2", "SSP-ERR-3"],
            roles: &[FixtureRole::Instant],
            timing: Timing::Quick,
            run: runs!(invocation::invalid_request),
        },
        Decl {
            id: "SSP-INV-2/wrong-skill",
            title: "unknown or foreign skill_id → 404 SKILL_NOT_FOUND",
            rules: &["SSP-INV-2", "SSP-ERR-2", "SSP-ERR-3"],
            roles: &[FixtureRole::Instant, FixtureRole::Failing],
            timing: Timing::Quick,
            run: runs!(invocation::wrong_skill),
        },
        Decl {
            id: "SSP-INV-5/overrun",
            title: "an overrun ends as timeout with INVOCATION_TIMEOUT, details and retry",
            rules: &["SSP-INV-5", "SSP-ERR-2", "SSP-ERR-3"],
            roles: &[FixtureRole::Overrun],
            timing: Timing::Long,
            run: runs!(execution::overrun),
        },
        Decl {
            id: "SSP-INV-5/context-timeout",
            title: "context.timeout_ms below endpoint.timeout_ms is the effective timeout",
            rules: &["SSP-INV-5", "SSP-ERR-2", "SSP-ERR-3"],
            roles: &[FixtureRole::Slow],
            timing: Timing::Long,
            run: runs!(execution::context_timeout),
        },
        Decl {
            id: "SSP-INV-6/privacy",
            title: "a non-public execution is readable only with the credential that created it",
            rules: &["SSP-INV-6", "SSP-ERR-2", "SSP-ERR-3"],
            roles: &[FixtureRole::Restricted],
            timing: Timing::Quick,
            run: runs!(execution::privacy),
        },
        Decl {
            id: "SSP-INV-7/concurrency",
            title: "concurrent invocations get distinct execution ids and independent results",
            rules: &["SSP-INV-7"],
            roles: &[FixtureRole::Instant],
            timing: Timing::Quick,
            run: runs!(execution::concurrency),
        },
        Decl {
            id: "SSP-AUTH-1/public-none",
            title: "a public skill with auth none is invocable without credentials",
            rules: &["SSP-AUTH-1"],
            roles: &[FixtureRole::AuthNone],
            timing: Timing::Quick,
            run: runs!(auth::public_none),
        },
        Decl {
            id: "SSP-AUTH-2/api-key",
            title: "api_key skill: missing or invalid key → 401 AUTH_REQUIRED with details, retry and WWW-Authenticate",
            rules: &["SSP-AUTH-2", "SSP-ERR-2", "SSP-ERR-3"],
            roles: &[FixtureRole::AuthApiKey],
            timing: Timing::Quick,
            run: runs!(auth::auth_required, FixtureRole::AuthApiKey),
        },
        Decl {
            id: "SSP-AUTH-2/oauth2",
            title: "oauth2 skill: missing or invalid token → 401 AUTH_REQUIRED with details, retry and WWW-Authenticate",
            rules: &["SSP-AUTH-2", "SSP-ERR-2", "SSP-ERR-3"],
            roles: &[FixtureRole::AuthOauth2],
            timing: Timing::Quick,
            run: runs!(auth::auth_required, FixtureRole::AuthOauth2),
        },
        Decl {
            id: "SSP-AUTH-2/custom",
            title: "custom skill: missing or invalid signature → 401 AUTH_REQUIRED with details, retry and WWW-Authenticate",
            rules: &["SSP-AUTH-2", "SSP-ERR-2", "SSP-ERR-3"],
            roles: &[FixtureRole::AuthCustom],
            timing: Timing::Quick,
            run: runs!(auth::auth_required, FixtureRole::AuthCustom),
        },
        Decl {
            id: "SSP-AUTH-3/api-key",
            title: "api_key without permission → 403 PERMISSION_DENIED with scopes",
            rules: &["SSP-AUTH-3", "SSP-ERR-2", "SSP-ERR-3"],
            roles: &[FixtureRole::AuthApiKey],
            timing: Timing::Quick,
            run: runs!(auth::permission_denied, FixtureRole::AuthApiKey),
        },
        Decl {
            id: "SSP-AUTH-3/oauth2",
            title: "oauth2 token missing the scope → 403 PERMISSION_DENIED with scopes",
            rules: &["SSP-AUTH-3", "SSP-ERR-2", "SSP-ERR-3"],
            roles: &[FixtureRole::AuthOauth2],
            timing: Timing::Quick,
            run: runs!(auth::permission_denied, FixtureRole::AuthOauth2),
        },
        Decl {
            id: "SSP-AUTH-4/wrong-header",
            title: "the right API key in another header → 401",
            rules: &["SSP-AUTH-4", "SSP-ERR-2", "SSP-ERR-3"],
            roles: &[FixtureRole::AuthApiKey],
            timing: Timing::Quick,
            run: runs!(auth::wrong_header),
        },
        Decl {
            id: "SSP-VER-1/consumer",
            title: "the harness's consumer discovers and invokes the target, and refuses a newer MAJOR without invoking",
            rules: &["SSP-VER-1", "SSP-DISC-1"],
            roles: &[FixtureRole::Instant],
            timing: Timing::Quick,
            run: runs!(consumer::consumer_compat),
        },
        Decl {
            id: "SSP-VER-2/consumer-unreachable",
            title: "the harness's consumer reports ENDPOINT_UNREACHABLE after honouring endpoint.retry",
            rules: &["SSP-VER-2"],
            roles: &[],
            timing: Timing::SelfTest,
            run: runs!(consumer::consumer_unreachable),
        },
        Decl {
            id: "SSP-ERR-4/pre-routing",
            title: "an oversized request target or header on the discovery path is refused before routing with its transport status (414, 431), never a 5xx",
            // SSP-ERR-4 only: its pass shows a JSON body, not SSP-ERR-1's unified shape.
            rules: &["SSP-ERR-4"],
            roles: &[],
            timing: Timing::Quick,
            run: runs!(crate::ssp::provider::pre_routing::pre_routing),
        },
    ]
}
