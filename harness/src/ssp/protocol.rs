//! SSP's registration with the engine: catalogue, checks, the `[ssp]` profile section and a
//! pre-flight that requires the target to answer its well-known URI with JSON (a server
//! that is no SSP provider stops there, exit 2).

use std::path::Path;
use std::sync::Arc;

use futures::FutureExt as _;
use futures::future::BoxFuture;

use clap::{Args as _, FromArgMatches as _};

use super::cli::ValidateArgs;
use super::provider::env::{Cred, Env};
use crate::capability::command::{CommandError, Commands, Launcher, Output};
use crate::engine::protocol::{ProfileSection, Protocol, Suite, SuiteError};
use crate::engine::target::{ConnectOptions, Profile, Target, TargetError, truncate};

/// The Skill Sharing Protocol 1.0 wing.
#[derive(Debug, Default)]
pub struct Ssp;

impl ProfileSection for Ssp {
    fn profile_keys(&self) -> &'static [&'static str] {
        &["ssp"]
    }

    fn check_profile(&self, profile: &Profile) -> Result<(), String> {
        match profile.section("ssp") {
            None | Some(toml::Value::Table(_)) => Ok(()),
            Some(_) => Err("[ssp] must be a table".into()),
        }
    }
}

impl Protocol for Ssp {
    fn name(&self) -> &'static str {
        "ssp"
    }

    fn load(self: Arc<Self>, vectors_dir: &Path) -> Result<Suite, SuiteError> {
        let catalogue = self.catalogue(vectors_dir)?;
        let checks =
            super::suite::checks(vectors_dir, &catalogue).map_err(|e| SuiteError::Checks {
                suite: "ssp".into(),
                message: format!("{}: {}", e.file, e.message),
            })?;
        Ok(Suite::new(self, catalogue, checks))
    }

    /// The provider must answer its well-known URI with a JSON document, in any shape and
    /// with any status but 404 (judging the document is the checks' job: a broken Skill
    /// Index fails them). No answer, a 404 or a body that is not JSON means the target is
    /// no SSP provider: one clear message (exit 2) instead of a run of identical failures.
    fn preflight<'a>(
        &'a self,
        target: &'a mut Target,
        _opts: &'a ConnectOptions,
    ) -> BoxFuture<'a, Result<(), TargetError>> {
        async move {
            match discovery_problem(target).await {
                Ok((url, index)) => {
                    super::fingerprint::record(target, &url, &index).await;
                    Ok(())
                }
                Err(problem) => Err(target.preflight_error(vec![problem])),
            }
        }
        .boxed()
    }
}

impl Commands for Ssp {
    fn commands(&self) -> Vec<clap::Command> {
        // `augment_args` sets the struct's own doc as `about`: ours must come after it.
        vec![
            ValidateArgs::augment_args(clap::Command::new("validate")).about(
                "Validate an SSP document (file or URL) against the protocol schema (exit 1 if invalid)",
            ),
        ]
    }

    fn run_command(
        &self,
        name: &str,
        args: &clap::ArgMatches,
        launcher: &dyn Launcher,
    ) -> Result<u8, CommandError> {
        if name != "validate" {
            return Err(CommandError(format!("ssp has no command {name:?}")));
        }
        let args = ValidateArgs::from_arg_matches(args).map_err(|e| CommandError(e.to_string()))?;
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| CommandError(format!("starting the async runtime: {e}")))?;
        let code = rt
            .block_on(super::cli::run(&args, &mut Output(launcher)))
            .map_err(|e| CommandError(e.to_string()))?;
        // `run` returns EXIT_VALID (0) or EXIT_INVALID (1).
        Ok(u8::try_from(code).unwrap_or(2))
    }
}

/// The provider's anonymous Skill Index and its URL, or why `target` is no SSP provider:
/// its well-known URI (the profile's `[ssp] well_known`, else `/.well-known/skill-sharing`)
/// does not answer, answers 404, or answers something that is not JSON.
async fn discovery_problem(target: &Target) -> Result<(String, serde_json::Value), String> {
    let path = match super::provider::profile_of_target(target) {
        Ok(Some(p)) => p.well_known_path().to_owned(),
        Ok(None) => super::consumer::WELL_KNOWN_PATH.to_owned(),
        Err(message) => return Err(message),
    };
    let base = &target.info.base_url;
    let url = if path.starts_with("http://") || path.starts_with("https://") {
        path
    } else {
        format!("{base}{path}")
    };
    let (ex, resp) = Env::send_raw(&target.client, "GET", &url, &[], None, &Cred::None).await;
    let not_provider = |why: String| {
        Err(format!(
            "not an SSP provider at {base}: GET {url} {why} (no Skill Index; to certify \
             the other protocols only, name them with --suite)"
        ))
    };
    match resp {
        None => {
            let error = ex.error.as_deref().unwrap_or("no response");
            Err(match ex.status {
                Some(status) => format!("GET {url} answered HTTP {status}, unusable: {error}"),
                None => format!("provider unreachable: GET {url}: {error}"),
            })
        }
        Some(r) if r.status == 404 => not_provider("answered 404 Not Found".into()),
        Some(r) => match r.json {
            Some(index) => Ok((url, index)),
            None => not_provider(format!(
                "answered HTTP {} with a body that is not JSON: {:?}",
                r.status,
                truncate(&r.text, 120)
            )),
        },
    }
}
