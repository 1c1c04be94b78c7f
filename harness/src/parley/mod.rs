//! Parley v1 — everything the harness knows about it: roles and the profile's `[tokens]`,
//! the manifest, the pre-flight, the golden vectors (typed model, loader, runner), the
//! PV-TR-1 cross-binding comparison and the PV-TR-1a bindings check. It registers itself
//! with the engine as [`Parley`].
//!
//! Next kinds of check get their own folders here: `model/` (proptest-state-machine models
//! of threads, authority, inbox and claims); `history/` races small groups of clients and
//! checks each history for linearizability against that model; `fuzz/` holds `conform fuzz` (mutators and oracles).

pub mod bindings_offered;
pub mod compare;
pub mod fuzz;
pub mod history;
pub mod init;
pub mod manifest;
pub mod model;
pub mod pacing;
pub mod pre_routing;
pub mod preflight;
pub mod refusal;
pub mod role;
pub mod tokens;
pub mod vectors;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use futures::FutureExt as _;
use futures::future::BoxFuture;

use crate::engine::check::Check;
use crate::engine::estimate::Estimate;
use crate::engine::protocol::{CheckRun, ProfileSection, Protocol, Secret, Suite, SuiteError};
use crate::engine::report::CheckResult;
use crate::engine::target::{ConnectOptions, Profile, Target, TargetError};
use crate::transport::TransportKind;
use bindings_offered::BindingsOffered;
use pacing::Pacer;
use preflight::ParleyTarget;
use role::Role;
use vectors::loader::{SchemaValidator, load_dir};
use vectors::runner::VectorCheck;

/// The Parley v1 wing.
#[derive(Debug, Default)]
pub struct Parley;

/// The tokens of the reference server's demo configuration, per role.
const DEMO_TOKENS: [(Role, &str); 7] = [
    (Role::AgentA, "demo-agent-a"),
    (Role::AgentB, "demo-agent-b"),
    (Role::Moderator, "demo-moderator"),
    (Role::Verifier, "demo-verifier"),
    (Role::Reader, "demo-reader"),
    (Role::Human, "demo-human"),
    (Role::Limited, "demo-limited"),
];

impl ProfileSection for Parley {
    fn profile_keys(&self) -> &'static [&'static str] {
        &["tokens"]
    }

    fn check_profile(&self, profile: &Profile) -> Result<(), String> {
        preflight::check_profile_tokens(profile)
    }
}

impl Protocol for Parley {
    fn name(&self) -> &'static str {
        "parley"
    }

    fn reference_profile(&self, profile: &mut Profile) {
        let tokens: toml::Table = DEMO_TOKENS
            .iter()
            .map(|(r, t)| (r.as_str().to_string(), toml::Value::from(*t)))
            .collect();
        profile
            .sections
            .insert("tokens".into(), toml::Value::Table(tokens));
    }

    fn load(self: Arc<Self>, vectors_dir: &Path) -> Result<Suite, SuiteError> {
        let catalogue = self.catalogue(vectors_dir)?;
        let schema = SchemaValidator::load(&vectors_dir.join("schemas/vector.schema.json"))
            .map_err(|e| checks_error(e.to_string()))?;
        let vectors = load_dir(&vectors_dir.join("parley"), Some(&schema), Some(&catalogue))
            .map_err(|e| checks_error(e.to_string()))?;
        let mut checks: Vec<Arc<dyn Check>> = vectors
            .into_iter()
            .map(|lv| Arc::new(VectorCheck::new(lv, &catalogue)) as Arc<dyn Check>)
            .collect();
        checks.extend(model::checks(&catalogue));
        checks.extend(history::checks(&catalogue));
        if catalogue.get("PV-TR-1a").is_some() {
            checks.push(Arc::new(BindingsOffered {
                requirements: vec!["PV-TR-1a".into()],
            }));
        }
        if catalogue.get("PV-TR-6").is_some() {
            checks.push(Arc::new(pre_routing::PreRouting {
                requirements: vec!["PV-TR-6".into(), "PV-TR-3".into()],
            }));
        }
        Ok(Suite::new(self, catalogue, checks))
    }

    fn preflight<'a>(
        &'a self,
        target: &'a mut Target,
        opts: &'a ConnectOptions,
    ) -> BoxFuture<'a, Result<(), TargetError>> {
        preflight::preflight(target, opts).boxed()
    }

    fn fuzz_campaign(
        &self,
        settings: &crate::engine::fuzz::Settings,
    ) -> Option<Arc<dyn crate::engine::fuzz::Campaign>> {
        Some(Arc::new(fuzz::ParleyCampaign::new(settings.clone())))
    }

    fn model_command(
        &self,
        args: &crate::engine::model::ModelArgs,
        launcher: &dyn crate::engine::protocol::Launcher,
    ) -> Option<Result<u8, crate::engine::protocol::CommandError>> {
        Some(model::cli::execute(args, launcher))
    }

    fn init_roles(&self) -> Vec<&'static str> {
        init::roles()
    }

    fn init<'a>(
        &'a self,
        target: &'a Target,
        tokens: &'a [crate::engine::init::GivenToken],
        vectors_dir: &'a Path,
    ) -> BoxFuture<'a, crate::engine::init::InitPart> {
        init::init(target, tokens, vectors_dir).boxed()
    }

    fn offers(&self, target: &Target, kind: TransportKind) -> bool {
        target
            .part::<ParleyTarget>()
            .is_some_and(|p| p.manifest.offers(kind))
    }

    fn derived_ids(&self, suite: &Suite) -> Vec<String> {
        suite
            .checks
            .iter()
            .filter(|c| c.compare_transports())
            .map(|c| compare::derived_id(c.id()))
            .collect()
    }

    fn judge_across(&self, suite: &Suite, runs: &[CheckRun<'_>]) -> Vec<CheckResult> {
        compare::judge_across(suite, runs)
    }

    fn estimate(&self, target: &Target, usage: &BTreeMap<String, u64>) -> Option<Estimate> {
        pacing_estimate(target, usage)
    }

    fn secrets(&self, target: &Target) -> Vec<Secret> {
        let Some(p) = target.part::<ParleyTarget>() else {
            return Vec::new();
        };
        p.tokens
            .iter()
            .flat_map(|(role, list)| {
                list.iter().enumerate().map(move |(i, t)| Secret {
                    env: tokens::token_env(*role, i),
                    value: t.clone(),
                    label: format!("{role} token"),
                })
            })
            .collect()
    }
}

/// The least time the planned writes take under the tokens' quotas (PV-TR-5): roles are
/// paced independently and concurrently, so the slowest role bounds the run.
fn pacing_estimate(target: &Target, usage: &BTreeMap<String, u64>) -> Option<Estimate> {
    let part = target.part::<ParleyTarget>()?;
    let pacer = target.part::<Pacer>()?;
    let mut at_least = std::time::Duration::ZERO;
    let mut detail = Vec::new();
    for (name, writes) in usage {
        let Some(token) = Role::parse(name).and_then(|r| part.tokens.get(&r)?.first()) else {
            continue;
        };
        let (Some((n, rate)), Some(t)) = (pacer.pool_rate(token), pacer.least_time(token, *writes))
        else {
            continue;
        };
        at_least = at_least.max(t);
        detail.push(format!(
            "{name}: {writes} writes over {n} token(s) at {rate}/min together: at least {}",
            crate::engine::estimate::human(t)
        ));
    }
    (!detail.is_empty()).then_some(Estimate { at_least, detail })
}

fn checks_error(message: String) -> SuiteError {
    SuiteError::Checks {
        suite: "parley".into(),
        message,
    }
}
