//! The one list of protocols the harness certifies, with the capabilities each offers.
//! Adding a protocol = its folder + one line here.

use std::sync::Arc;

use crate::capability::command::Commands;
use crate::capability::estimate::Paced;
use crate::capability::fuzz::Fuzzable;
use crate::capability::init::Initialisable;
use crate::capability::model::Modelled;
use crate::engine::protocol::{ProfileSection, Protocol, Suite, SuiteError};

/// What the registered protocols offer beyond the engine core, one list per capability
/// (registry order). A protocol is in a list when its line names the capability, and its
/// line may name one only when it implements the trait (else the build fails).
#[derive(Default)]
pub struct Capabilities {
    /// `conform fuzz` campaigns.
    pub fuzz: Vec<Arc<dyn Fuzzable>>,
    /// `conform model` state-machine models.
    pub model: Vec<Arc<dyn Modelled>>,
    /// Sections of `conform init`.
    pub init: Vec<Arc<dyn Initialisable>>,
    /// Duration estimates under the target's budgets.
    pub estimate: Vec<Arc<dyn Paced>>,
    /// Subcommands of their own.
    pub commands: Vec<Arc<dyn Commands>>,
}

/// The list itself: each protocol's unit value, in run and report order, and the
/// capabilities it offers.
macro_rules! registered {
    ($($protocol:expr => [$($capability:ident),* $(,)?]),* $(,)?) => {
        /// Every registered protocol, in run and report order.
        pub fn protocols() -> Vec<Arc<dyn Protocol>> {
            vec![$(Arc::new($protocol)),*]
        }

        /// What each registered protocol reads of a target profile, alone (see
        /// [`ProfileSection`]).
        pub fn profile_sections() -> Vec<&'static dyn ProfileSection> {
            vec![$(&$protocol),*]
        }

        /// What the registered protocols offer, by capability.
        pub fn capabilities() -> Capabilities {
            let mut all = Capabilities::default();
            $($(all.$capability.push(Arc::new($protocol));)*)*
            all
        }
    };
}

registered!(
    crate::parley::protocol::Parley => [fuzz, model, init, estimate],
    crate::ssp::protocol::Ssp => [fuzz, model, init, commands],
    crate::mcp::protocol::Mcp => [],
);

/// Registered protocol names.
pub fn names() -> Vec<&'static str> {
    protocols().iter().map(|p| p.name()).collect()
}

/// The protocols named in `names` (`all` = every one), in registry order.
pub fn select(names: &[String]) -> Result<Vec<Arc<dyn Protocol>>, SuiteError> {
    let all = protocols();
    for n in names {
        if n != "all" && !all.iter().any(|p| p.name() == n) {
            return Err(SuiteError::Unknown {
                name: n.clone(),
                known: format!("all, {}", self::names().join(", ")),
            });
        }
    }
    let every = names.iter().any(|n| n == "all");
    Ok(all
        .into_iter()
        .filter(|p| every || names.iter().any(|n| n == p.name()))
        .collect())
}

/// The members of `offering` (one capability's list) whose protocol `names` selects (`all` =
/// every one); an unknown name is an error, a known one without the capability is left out.
pub fn selected<T: ?Sized + Protocol>(
    offering: Vec<Arc<T>>,
    names: &[String],
) -> Result<Vec<Arc<T>>, SuiteError> {
    let chosen: Vec<&str> = select(names)?.iter().map(|p| p.name()).collect();
    Ok(offering
        .into_iter()
        .filter(|c| chosen.contains(&c.name()))
        .collect())
}

/// Loads the suites of `protocols` from `vectors_dir`.
pub fn load(
    protocols: &[Arc<dyn Protocol>],
    vectors_dir: &std::path::Path,
) -> Result<Vec<Suite>, SuiteError> {
    // The suites' evidence (issue 30): one digest of the directory every suite read.
    let digest = crate::engine::report::evidence::digest_dir(vectors_dir).map_err(|e| {
        SuiteError::Checks {
            suite: "all".into(),
            message: e.to_string(),
        }
    })?;
    protocols
        .iter()
        .map(|p| {
            let mut suite = p.clone().load(vectors_dir)?;
            suite.digest = Some(digest.clone());
            Ok(suite)
        })
        .collect()
}

/// Loads one registered protocol's suite by name.
pub fn load_suite(name: &str, vectors_dir: &std::path::Path) -> Result<Suite, SuiteError> {
    let p = select(&[name.to_string()])?;
    match p.into_iter().next() {
        Some(p) if name != "all" => p.load(vectors_dir),
        _ => Err(SuiteError::Unknown {
            name: name.into(),
            known: names().join(", "),
        }),
    }
}

/// Prepares `profile` with the pre-flight of every protocol named in `suites` (`all` = every
/// registered one).
pub async fn connect(
    profile: crate::engine::target::Profile,
    opts: &crate::engine::target::ConnectOptions,
    suites: &[&str],
) -> Result<crate::engine::target::Target, crate::engine::target::TargetError> {
    let names: Vec<String> = suites.iter().map(|s| (*s).to_string()).collect();
    let protocols = select(&names).map_err(|e| crate::engine::target::TargetError::Profile {
        path: "<suites>".into(),
        message: e.to_string(),
    })?;
    crate::engine::protocol::connect(profile, opts, &protocols).await
}

#[cfg(test)]
#[expect(clippy::unwrap_used)] // tests: a panic is the failure report
mod tests {
    use super::*;
    use crate::parley::role::Role;
    use crate::transport::McpRevision;

    /// Profile sections are validated by the protocol that owns them; unknown keys fail.
    #[test]
    fn profile_loads_and_rejects_unknown_fields() {
        let ps = protocols();
        let p = crate::engine::protocol::parse_profile(
            "format_version = 1\nbase_url = \"http://127.0.0.1:8080\"\nmcp_revision = \"2026-07-28\"\n\
             concurrency = 4\n[tokens]\nagent_a = \"a\"\nreader = \"r\"\n[ssp]\nskills = { agent_a = [\"x\"] }\n",
            &ps,
        )
        .unwrap();
        assert_eq!(p.mcp_revision, Some(McpRevision::V2026_07_28));
        let tokens = crate::parley::tokens::tokens(&p).unwrap();
        assert_eq!(tokens[&Role::Reader], ["r"]);
        let err = crate::engine::protocol::parse_profile(
            "format_version = 1\nbase_url = \"http://x\"\ncolour = 1\n",
            &ps,
        )
        .unwrap_err();
        assert!(err.contains("colour"), "{err}");
        let anon = "format_version = 1\nbase_url = \"http://x\"\n[tokens]\nanonymous = \"t\"\n";
        assert!(crate::engine::protocol::parse_profile(anon, &ps).is_err());
        let bad_role = "format_version = 1\nbase_url = \"http://x\"\n[tokens]\nagent_z = \"t\"\n";
        assert!(crate::engine::protocol::parse_profile(bad_role, &ps).is_err());
        assert!(
            crate::engine::protocol::parse_profile(
                "format_version = 2\nbase_url = \"http://x\"\n",
                &ps
            )
            .is_err()
        );
    }
}
