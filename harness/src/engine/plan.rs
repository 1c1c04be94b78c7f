//! Plan: which checks run, on which transports, in which order.
//!
//! The plan is the selected suites' checks, filtered by `--filter` (a glob over check ids
//! and cited requirement IDs), each expanded once per transport it runs on that the target
//! offers. Plan order is report order.

use std::sync::Arc;

use globset::{Glob, GlobMatcher};

use super::binding::Binding;
use super::check::{Bindings, Check};
use super::protocol::{Suite, declared_bindings};
use super::target::Target;

/// One planned run of a check.
#[derive(Clone)]
pub struct Job {
    /// Index of its suite.
    pub suite: usize,
    /// The check.
    pub check: Arc<dyn Check>,
    /// The binding (`None` for checks run once).
    pub transport: Option<Binding>,
    /// Position in the plan (= in the report).
    pub order: usize,
}

/// A compiled `--filter`.
pub struct Filter(Option<GlobMatcher>);

impl Filter {
    /// Compiles a glob (`None` selects everything).
    pub fn new(glob: Option<&str>) -> Result<Self, String> {
        glob.map(|f| {
            Glob::new(f)
                .map(|g| g.compile_matcher())
                .map_err(|e| e.to_string())
        })
        .transpose()
        .map(Self)
    }

    /// Whether the filter selects `check` (by id or by one of its requirement IDs).
    pub fn selects(&self, check: &dyn Check) -> bool {
        match &self.0 {
            None => true,
            Some(m) => m.is_match(check.id()) || check.requirements().iter().any(|r| m.is_match(r)),
        }
    }
}

/// The bindings of `selected` (empty: every binding the suites' protocols declare, each
/// once, in suite order) that some selected protocol offers at `target`.
pub fn offered(target: &Target, suites: &[Suite], selected: &[Binding]) -> Vec<Binding> {
    let mut wanted: Vec<Binding> = selected.to_vec();
    if wanted.is_empty() {
        wanted = declared_bindings(suites.iter().map(|s| &s.protocol));
    }
    wanted.retain(|k| suites.iter().any(|s| s.protocol.offers(target, *k)));
    wanted
}

/// Expands the selected checks into jobs, in suite and check order.
pub fn plan(suites: &[Suite], filter: &Filter, offered: &[Binding]) -> Vec<Job> {
    let mut jobs = Vec::new();
    for (si, s) in suites.iter().enumerate() {
        for c in s.checks.iter().filter(|c| filter.selects(c.as_ref())) {
            let transports: Vec<Option<Binding>> = match c.bindings() {
                Bindings::Once => vec![None],
                Bindings::Each(ks) => ks
                    .into_iter()
                    .filter(|k| offered.contains(k))
                    .map(Some)
                    .collect(),
            };
            for transport in transports {
                jobs.push(Job {
                    suite: si,
                    check: c.clone(),
                    transport,
                    order: jobs.len(),
                });
            }
        }
    }
    jobs
}
