//! Parley v1 as the engine sees it: the [`Parley`] protocol — its profile section
//! (`[tokens]`), the demo tokens of the bundled reference, its suite (golden vectors, models,
//! histories, the bindings and pre-routing checks), pre-flight, the PV-TR-1 cross-binding
//! comparison, secrets — and its estimate under the target's write quotas (PV-TR-5).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use futures::FutureExt as _;
use futures::future::BoxFuture;

use super::bindings_offered::BindingsOffered;
use super::pacing::Pacer;
use super::preflight::ParleyTarget;
use super::role::Role;
use super::vectors::loader::{SchemaValidator, load_dir};
use super::vectors::runner::VectorCheck;
use crate::capability::estimate::{Estimate, Paced};
use crate::capability::transports::{self, BOTH, MCP};
use crate::engine::binding::Binding;
use crate::engine::check::Check;
use crate::engine::protocol::{CheckRun, ProfileSection, Protocol, Secret, Suite, SuiteError};
use crate::engine::report::CheckResult;
use crate::engine::target::{ConnectOptions, Profile, Target, TargetError};
use crate::transport::McpRevision;

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
        super::preflight::check_profile_tokens(profile)
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
        checks.extend(super::model::checks(&catalogue));
        checks.extend(super::history::checks(&catalogue));
        if catalogue.get("PV-TR-1a").is_some() {
            checks.push(Arc::new(BindingsOffered {
                requirements: vec!["PV-TR-1a".into()],
            }));
        }
        if catalogue.get("PV-TR-6").is_some() {
            checks.push(Arc::new(super::pre_routing::PreRouting {
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
        super::preflight::preflight(target, opts).boxed()
    }

    /// PV-TR-1: the same operations as HTTP routes and as MCP tools.
    fn bindings(&self) -> &'static [Binding] {
        &BOTH
    }

    fn offers(&self, target: &Target, binding: Binding) -> bool {
        let part = target.part::<ParleyTarget>();
        transports::kind(binding).is_some_and(|k| part.is_some_and(|p| p.manifest.offers(k)))
    }

    /// The 2025-11-25 era's handshake (`initialize`, `notifications/initialized`), made once
    /// by the shared MCP client; the 2026-07-28 era has none.
    fn setup_exchanges(&self, target: &Target, offered: &[Binding]) -> u64 {
        let handshake = target.info.mcp_revision == McpRevision::V2025_11_25;
        if handshake && offered.contains(&MCP) {
            2
        } else {
            0
        }
    }

    /// The MCP revision spoken, so that a reproduction speaks it too.
    fn reproduce_on(&self, target: &Target, binding: Binding) -> String {
        transports::kind(binding)
            .map(|k| super::preflight::revision_flag(target, k))
            .unwrap_or_default()
    }

    fn derived_ids(&self, suite: &Suite) -> Vec<String> {
        suite
            .checks
            .iter()
            .filter(|c| c.compare_transports())
            .map(|c| super::compare::derived_id(c.id()))
            .collect()
    }

    fn judge_across(&self, suite: &Suite, runs: &[CheckRun<'_>]) -> Vec<CheckResult> {
        super::compare::judge_across(suite, runs)
    }

    fn secrets(&self, target: &Target) -> Vec<Secret> {
        let Some(p) = target.part::<ParleyTarget>() else {
            return Vec::new();
        };
        p.tokens
            .iter()
            .flat_map(|(role, list)| {
                list.iter().enumerate().map(move |(i, t)| Secret {
                    env: super::tokens::token_env(*role, i),
                    value: t.clone(),
                    label: format!("{role} token"),
                })
            })
            .collect()
    }
}

impl Paced for Parley {
    fn estimate(&self, target: &Target, usage: &BTreeMap<String, u64>) -> Option<Estimate> {
        pacing_estimate(target, usage)
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
            crate::capability::estimate::human(t)
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
