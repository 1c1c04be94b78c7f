//! The one trait a protocol implements to plug into the engine, and the suite it loads.
//!
//! Adding a protocol = one folder implementing [`Protocol`] + one line in
//! [`crate::registry`]. The engine asks the protocol for its catalogue and checks, runs its
//! pre-flight, lets it judge across bindings after execution (derived checks), and delegates
//! profile sections and secrets in reproductions to it. What a protocol may offer beyond
//! that (fuzzing, models, `init`, estimates, subcommands) are capability traits in
//! [`crate::capability`], which this core never names.

use std::path::Path;
use std::sync::Arc;

use futures::future::BoxFuture;

use super::binding::Binding;
use super::check::{Check, CheckOutcome};
use super::report::CheckResult;
use super::requirements::{Catalogue, CatalogueError};
use super::target::{ConnectOptions, Profile, Target, TargetError};

/// A suite: one protocol's catalogue and checks, as loaded for a run.
#[derive(Clone)]
pub struct Suite {
    /// Name (the protocol's).
    pub name: String,
    /// The protocol that loaded it.
    pub protocol: Arc<dyn Protocol>,
    /// Requirement catalogue.
    pub catalogue: Catalogue,
    /// Checks.
    pub checks: Vec<Arc<dyn Check>>,
    /// The digest of the data files it was loaded from (set by the loader that read them).
    pub digest: Option<crate::engine::report::evidence::SuiteDigest>,
}

impl Suite {
    /// The suite `protocol` loaded: its catalogue and checks, named after it.
    pub fn new(
        protocol: Arc<dyn Protocol>,
        catalogue: Catalogue,
        checks: Vec<Arc<dyn Check>>,
    ) -> Self {
        Self {
            name: protocol.name().to_string(),
            protocol,
            catalogue,
            checks,
            digest: None,
        }
    }

    /// The same suite with only the checks `keep` accepts.
    pub fn retain(&self, keep: impl Fn(&dyn Check) -> bool) -> Self {
        Self {
            checks: self
                .checks
                .iter()
                .filter(|c| keep(c.as_ref()))
                .cloned()
                .collect(),
            ..self.clone()
        }
    }
}

/// Why a suite could not be loaded (exit code 2).
#[derive(Debug, thiserror::Error)]
pub enum SuiteError {
    /// Catalogue problem.
    #[error(transparent)]
    Catalogue(#[from] CatalogueError),
    /// A check could not be built from its data (vector file, profile, fixture).
    #[error("{suite} suite: {message}")]
    Checks {
        /// Suite name.
        suite: String,
        /// What is wrong, with the file.
        message: String,
    },
    /// Unknown suite name.
    #[error("unknown suite {name:?} (known: {known})")]
    Unknown {
        /// Asked for.
        name: String,
        /// Registered names.
        known: String,
    },
}

/// One finished run of a check, as a protocol sees it when judging across bindings.
pub struct CheckRun<'a> {
    /// The check.
    pub check: &'a Arc<dyn Check>,
    /// Binding it ran on (`None` for checks run once).
    pub transport: Option<Binding>,
    /// What it produced.
    pub outcome: &'a CheckOutcome,
}

/// A secret a reproduction must not print literally: the variable that stands for it.
#[derive(Debug, Clone)]
pub struct Secret {
    /// Environment variable (`CONFORM_TOKEN_AGENT_A`), as it appears in transcripts.
    pub env: String,
    /// The value (printed only for a spawned reference, whose tokens are public).
    pub value: String,
    /// What to tell a user of their own target (`agent_a token`).
    pub label: String,
}

/// What a protocol reads of a target profile: the top-level keys it owns and their check.
/// Apart from [`Protocol`] so that a profile can be checked without linking a protocol's
/// whole machinery (the `harness_parsers` fuzz target: every function a vtable names is
/// linked and instrumented, and libFuzzer pays for each counter on every execution).
pub trait ProfileSection: Send + Sync {
    /// Top-level profile keys this protocol owns.
    fn profile_keys(&self) -> &'static [&'static str] {
        &[]
    }
    /// Validates the protocol's own profile sections.
    fn check_profile(&self, _profile: &Profile) -> Result<(), String> {
        Ok(())
    }
}

/// A protocol wing, registered in [`crate::registry`].
pub trait Protocol: ProfileSection {
    /// Suite name (`--suite NAME`, report `suite`).
    fn name(&self) -> &'static str;
    /// Fills the protocol's sections of the bundled reference's demo profile.
    fn reference_profile(&self, _profile: &mut Profile) {}
    /// The requirement catalogue alone, `vectors_dir/requirements/<name>.toml` (what `load`
    /// starts from; `conform fuzz` needs nothing more).
    fn catalogue(&self, vectors_dir: &Path) -> Result<Catalogue, SuiteError> {
        let file = format!("requirements/{}.toml", self.name());
        Ok(Catalogue::load(&vectors_dir.join(file))?)
    }
    /// Loads the catalogue and builds the checks from `vectors_dir`.
    fn load(self: Arc<Self>, vectors_dir: &Path) -> Result<Suite, SuiteError>;
    /// Verifies the target can be tested and stores what the checks need as a part of it.
    fn preflight<'a>(
        &'a self,
        target: &'a mut Target,
        opts: &'a ConnectOptions,
    ) -> BoxFuture<'a, Result<(), TargetError>>;
    /// The bindings the protocol is reached by (Parley: `http`, `mcp`), in the order a run
    /// takes them: the values of `--transport`, and what its checks are bound to.
    fn bindings(&self) -> &'static [Binding] {
        &[]
    }
    /// Whether the target offers this protocol on one of its bindings (checks bound to a
    /// binding run only where some selected protocol offers it).
    fn offers(&self, _target: &Target, _binding: Binding) -> bool {
        false
    }
    /// Exchanges the protocol makes once per run outside any check, on the bindings `offered`
    /// (Parley: the MCP handshake): counted in the report's exchanges.
    fn setup_exchanges(&self, _target: &Target, _offered: &[Binding]) -> u64 {
        0
    }
    /// What a reproduction adds to `conform run … --transport <binding>` to reach the target
    /// the same way (Parley: ` --mcp-revision <rev>` on `mcp`).
    fn reproduce_on(&self, _target: &Target, _binding: Binding) -> String {
        String::new()
    }
    /// Ids of the derived checks [`Protocol::judge_across`] may produce for `suite` (so a
    /// baseline entry naming one is not stale).
    fn derived_ids(&self, _suite: &Suite) -> Vec<String> {
        Vec::new()
    }
    /// Derived checks judged from finished runs (e.g. the same check on two bindings). Each
    /// derived check may depend only on the runs of one check: `--shard` keeps those in one
    /// shard, not runs of different checks.
    fn judge_across(&self, _suite: &Suite, _runs: &[CheckRun<'_>]) -> Vec<CheckResult> {
        Vec::new()
    }
    /// Secrets that transcripts name by variable.
    fn secrets(&self, _target: &Target) -> Vec<Secret> {
        Vec::new()
    }
}

pub use super::vectors_dir::default_vectors_dir;

/// The bindings `protocols` declare, each once, in protocol order.
pub fn declared_bindings<'a>(
    protocols: impl IntoIterator<Item = &'a Arc<dyn Protocol>>,
) -> Vec<Binding> {
    let mut all: Vec<Binding> = Vec::new();
    for b in protocols.into_iter().flat_map(|p| p.bindings()) {
        if !all.contains(b) {
            all.push(*b);
        }
    }
    all
}

/// Reads a profile file; the engine checks its own keys, every other top-level key must be
/// claimed by one of `protocols`, which validates it.
pub fn load_profile(path: &Path, protocols: &[Arc<dyn Protocol>]) -> Result<Profile, TargetError> {
    Profile::load(path, |p| check_sections(p, &sections(protocols)))
}

/// What each of `protocols` reads of a profile.
fn sections(protocols: &[Arc<dyn Protocol>]) -> Vec<&dyn ProfileSection> {
    protocols
        .iter()
        .map(|p| p.as_ref() as &dyn ProfileSection)
        .collect()
}

/// Parses profile text like [`load_profile`].
pub fn parse_profile(text: &str, protocols: &[Arc<dyn Protocol>]) -> Result<Profile, String> {
    parse_profile_sections(text, &sections(protocols))
}

/// [`parse_profile`] with only what each protocol reads of a profile
/// ([`crate::registry::profile_sections`]).
pub fn parse_profile_sections(
    text: &str,
    protocols: &[&dyn ProfileSection],
) -> Result<Profile, String> {
    let p = Profile::parse(text)?;
    check_sections(&p, protocols)?;
    Ok(p)
}

fn check_sections(p: &Profile, protocols: &[&dyn ProfileSection]) -> Result<(), String> {
    for key in p.sections.keys() {
        if !protocols
            .iter()
            .any(|pr| pr.profile_keys().contains(&key.as_str()))
        {
            let known: Vec<&str> = protocols
                .iter()
                .flat_map(|pr| pr.profile_keys().iter().copied())
                .collect();
            return Err(format!(
                "unknown field `{key}` (engine keys: format_version, name, base_url, \
                 mcp_endpoint, mcp_revision, timeout_ms, time_scale, concurrency, limits, tls; protocol keys: {})",
                known.join(", ")
            ));
        }
    }
    protocols.iter().try_for_each(|pr| pr.check_profile(p))
}

/// Prepares `profile`: every protocol of `protocols` runs its pre-flight, in order.
pub async fn connect(
    profile: Profile,
    opts: &ConnectOptions,
    protocols: &[Arc<dyn Protocol>],
) -> Result<Target, TargetError> {
    let mut target = Target::new(profile, opts)?;
    for p in protocols {
        p.preflight(&mut target, opts).await?;
    }
    Ok(target)
}
