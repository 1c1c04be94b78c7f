//! SSP provider checks (issue 5, item 5): scripted checks for every HTTP-testable `SSP-`
//! rule, plugged into the engine's [`Check`] abstraction.
//!
//! The fixture roles and credentials come from the `[ssp]` table of the target profile
//! ([`profile::SspProfile`]); with `--spawn-reference` and no `[ssp]` table the reference
//! server's demo profile is used. The engine takes them (with the VAL/CONS checks) from
//! [`crate::ssp::suite::checks`].

pub mod checks;
pub mod env;
pub mod pre_routing;
pub mod profile;

use crate::engine::check::{Bindings, Check, CheckCtx, CheckOutcome};
use crate::engine::requirements::Catalogue;
use crate::engine::verdict::Verdict;
use env::Env;
use futures::FutureExt as _;
use futures::future::BoxFuture;
use profile::SspProfile;
use std::sync::Arc;

/// One scripted provider check.
pub struct ProviderCheck {
    decl: checks::Decl,
    requirements: Vec<String>,
    /// The primary requirement is a MUST: a violation is `Fail`, otherwise `Warn`.
    must: bool,
}

/// Every SSP provider check, levels taken from the catalogue.
pub fn checks(catalogue: &Catalogue) -> Vec<Arc<dyn Check>> {
    checks::catalogue()
        .into_iter()
        .map(|decl| {
            let requirements: Vec<String> = decl.rules.iter().map(|r| (*r).to_owned()).collect();
            // Same rule as the vectors: a check fails (not warns) if ANY cited rule is required.
            let must = catalogue.any_required(&requirements);
            Arc::new(ProviderCheck {
                decl,
                requirements,
                must,
            }) as Arc<dyn Check>
        })
        .collect()
}

/// The SSP profile of a target: its `[ssp]` table, else the reference demo profile when
/// the reference server was spawned, else `None` (every check is then `Unsupported`).
pub fn profile_of(ctx: &CheckCtx) -> Result<Option<SspProfile>, String> {
    profile_of_target(&ctx.target)
}

/// The environment an SSP check runs in: the target's SSP profile and its own connection
/// pool (with the run's limits and TLS settings); else the check's verdict — `untested`
/// without an `[ssp]` table, a harness error when the profile or the client cannot be made.
pub fn check_env(ctx: &CheckCtx) -> Result<Env, Box<Verdict>> {
    let profile = match profile_of(ctx) {
        Ok(Some(p)) => p,
        Ok(None) => {
            // The user's profile gap, not the target's: SSP stays untested (issue 26).
            return Err(Box::new(Verdict::untested(
                "the target profile has no [ssp] table (fixture roles and credentials)",
            )));
        }
        Err(message) => return Err(Box::new(Verdict::HarnessError { message })),
    };
    let client = ctx.target.client.renewed().map_err(|e| {
        Box::new(Verdict::HarnessError {
            message: e.to_string(),
        })
    })?;
    Ok(Env::new(
        client,
        &ctx.target.info.base_url,
        profile,
        &ctx.run_nonce,
    ))
}

/// [`profile_of`] for a target outside a check (`conform fuzz`).
pub fn profile_of_target(
    target: &crate::engine::target::Target,
) -> Result<Option<SspProfile>, String> {
    match target
        .profile
        .section("ssp")
        .and_then(toml::Value::as_table)
    {
        Some(t) => SspProfile::from_table(t)
            .map(Some)
            .map_err(|e| e.to_string()),
        None if target.info.spawned_reference => Ok(Some(SspProfile::reference_demo())),
        None => Ok(None),
    }
}

impl Check for ProviderCheck {
    fn id(&self) -> &str {
        self.decl.id
    }
    fn title(&self) -> &str {
        self.decl.title
    }
    fn requirements(&self) -> &[String] {
        &self.requirements
    }
    fn area(&self) -> &str {
        // `SSP-INV-3/…` → `inv`.
        self.decl.id.split('-').nth(1).map_or("ssp", |a| match a {
            "DISC" => "discovery",
            "INV" => "invocation",
            "AUTH" => "auth",
            _ => "ssp",
        })
    }
    fn self_test(&self) -> bool {
        self.decl.timing == checks::Timing::SelfTest
    }
    fn long_running(&self) -> bool {
        self.decl.timing == checks::Timing::Long
    }
    fn bindings(&self) -> Bindings {
        Bindings::Once
    }
    fn run<'a>(&'a self, ctx: &'a CheckCtx) -> BoxFuture<'a, CheckOutcome> {
        async move {
            let mut env = match check_env(ctx) {
                Ok(env) => env,
                Err(verdict) => return CheckOutcome::verdict(*verdict),
            };
            let result = (self.decl.run)(&mut env).await;
            crate::engine::check::CheckOutcome::scripted(
                self.decl.id,
                &self.requirements,
                self.must,
                result,
                &env.warnings,
                env.exchanges,
            )
        }
        .boxed()
    }
}
