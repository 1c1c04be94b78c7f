//! SSP's registration with the engine: catalogue, checks, the `[ssp]` profile section and a
//! pre-flight that only requires the provider to answer its well-known URI.

use std::path::Path;
use std::sync::Arc;

use futures::FutureExt as _;
use futures::future::BoxFuture;

use clap::{Args as _, FromArgMatches as _};

use super::cli::ValidateArgs;
use crate::engine::protocol::{CommandError, Protocol, Suite, SuiteError};
use crate::engine::target::{ConnectOptions, Profile, Target, TargetError};

/// The Skill Sharing Protocol 1.0 wing.
#[derive(Debug, Default)]
pub struct Ssp;

impl Protocol for Ssp {
    fn name(&self) -> &'static str {
        "ssp"
    }

    fn profile_keys(&self) -> &'static [&'static str] {
        &["ssp"]
    }

    fn check_profile(&self, profile: &Profile) -> Result<(), String> {
        match profile.section("ssp") {
            None | Some(toml::Value::Table(_)) => Ok(()),
            Some(_) => Err("[ssp] must be a table".into()),
        }
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

    /// The provider must at least answer its well-known URI (any HTTP status: judging the
    /// answer is the checks' job); an unreachable provider is one clear message.
    fn preflight<'a>(
        &'a self,
        target: &'a mut Target,
        _opts: &'a ConnectOptions,
    ) -> BoxFuture<'a, Result<(), TargetError>> {
        async move {
            let url = format!("{}/.well-known/skill-sharing", target.info.base_url);
            match target.client.http().get(&url).send().await {
                Ok(_) => Ok(()),
                Err(e) => Err(target.preflight_error(vec![format!(
                    "provider unreachable: GET {url}: {}",
                    crate::transport::tls::error_chain(&e)
                )])),
            }
        }
        .boxed()
    }

    fn model_command(
        &self,
        args: &crate::engine::model::ModelArgs,
        launcher: &dyn crate::engine::protocol::Launcher,
    ) -> Option<Result<u8, crate::engine::protocol::CommandError>> {
        Some(crate::ssp::model::cli::execute(args, launcher))
    }

    fn fuzz_campaign(
        &self,
        settings: &crate::engine::fuzz::Settings,
    ) -> Option<Arc<dyn crate::engine::fuzz::Campaign>> {
        Some(Arc::new(crate::ssp::fuzz::SspCampaign::new(
            settings.clone(),
        )))
    }

    fn commands(&self) -> Vec<clap::Command> {
        // `augment_args` sets the struct's own doc as `about`: ours must come after it.
        vec![
            ValidateArgs::augment_args(clap::Command::new("validate")).about(
                "Validate an SSP document (file or URL) against the protocol schema (exit 1 if invalid)",
            ),
        ]
    }

    fn init_roles(&self) -> Vec<&'static str> {
        super::init::CREDENTIALS.to_vec()
    }

    fn init<'a>(
        &'a self,
        target: &'a Target,
        tokens: &'a [crate::engine::init::GivenToken],
        _vectors_dir: &'a Path,
    ) -> BoxFuture<'a, crate::engine::init::InitPart> {
        super::init::init(target, tokens).boxed()
    }

    fn run_command(
        &self,
        name: &str,
        args: &clap::ArgMatches,
        _launcher: &dyn crate::engine::protocol::Launcher,
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
            .block_on(super::cli::run(&args, &mut std::io::stdout()))
            .map_err(|e| CommandError(e.to_string()))?;
        // `run` returns EXIT_VALID (0) or EXIT_INVALID (1).
        Ok(u8::try_from(code).unwrap_or(2))
    }
}
