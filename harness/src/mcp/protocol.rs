//! The MCP wing's registration with the engine: its catalogue and checks, the `[mcp]`
//! profile section, and a pre-flight that learns which eras the server speaks (never an
//! error: a server without MCP makes every check `unsupported`, not the run impossible).

use std::path::Path;
use std::sync::Arc;

use futures::FutureExt as _;
use futures::future::BoxFuture;

use super::part::{McpPart, probe};
use super::profile::McpProfile;
use super::wire::TOKEN_ENV;
use crate::engine::protocol::{ProfileSection, Protocol, Secret, Suite, SuiteError};
use crate::engine::target::{ConnectOptions, Profile, Target, TargetError};

/// The MCP-layer wing.
#[derive(Debug, Default)]
pub struct Mcp;

impl ProfileSection for Mcp {
    fn profile_keys(&self) -> &'static [&'static str] {
        &["mcp"]
    }

    fn check_profile(&self, profile: &Profile) -> Result<(), String> {
        McpProfile::from_section(profile.section("mcp")).map(|_| ())
    }
}

impl Protocol for Mcp {
    fn name(&self) -> &'static str {
        "mcp"
    }

    /// The bundled reference's tool without side effects (its manifest needs no token).
    fn reference_profile(&self, profile: &mut Profile) {
        let mut t = toml::Table::new();
        t.insert("safe_tool".into(), toml::Value::from("get_manifest"));
        profile.sections.insert("mcp".into(), toml::Value::Table(t));
    }

    fn load(self: Arc<Self>, vectors_dir: &Path) -> Result<Suite, SuiteError> {
        let catalogue = self.catalogue(vectors_dir)?;
        let checks = super::checks::checks(&catalogue);
        for c in &checks {
            for r in c.requirements() {
                if catalogue.get(r).is_none() {
                    return Err(SuiteError::Checks {
                        suite: "mcp".into(),
                        message: format!(
                            "check {} cites {r}, which requirements/mcp.toml lacks",
                            c.id()
                        ),
                    });
                }
            }
        }
        Ok(Suite::new(self, catalogue, checks))
    }

    fn preflight<'a>(
        &'a self,
        target: &'a mut Target,
        _opts: &'a ConnectOptions,
    ) -> BoxFuture<'a, Result<(), TargetError>> {
        async move {
            let profile = McpProfile::from_section(target.profile.section("mcp"))
                .map_err(|m| target.preflight_error(vec![m]))?;
            let part: McpPart = probe(target, profile).await;
            target.insert_part(part);
            Ok(())
        }
        .boxed()
    }

    fn secrets(&self, target: &Target) -> Vec<Secret> {
        target
            .part::<McpPart>()
            .and_then(|p| p.profile.token.clone())
            .map(|value| Secret {
                env: TOKEN_ENV.into(),
                value,
                label: "[mcp] token".into(),
            })
            .into_iter()
            .collect()
    }
}
