//! The duration estimate printed before a run: what the planned checks draw from the
//! target's budgets (quotas), summed over the plan, and the least time each protocol says
//! that takes. A user certifying a server with a low quota learns before the run that it
//! takes an hour, not after.

use std::collections::BTreeMap;
use std::time::Duration;

use std::sync::Arc;

use crate::engine::binding::Binding;
use crate::engine::plan::{Filter, offered, plan};
use crate::engine::protocol::{Protocol, Suite};
use crate::engine::shard::Shard;
use crate::engine::target::Target;

/// A protocol's lower bound on a run's duration under the target's budgets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Estimate {
    /// The run cannot be shorter than this (the budgets' refill time alone).
    pub at_least: Duration,
    /// One line per budget: what is drawn from it and at what rate.
    pub detail: Vec<String>,
}

/// A protocol whose checks draw from the target's budgets (Parley's write quotas).
pub trait Paced: Protocol {
    /// The least time the planned checks take under the target's budgets, given what they
    /// draw in all (`Check::budget_use` summed over the plan); `None` when nothing paces.
    fn estimate(&self, target: &Target, usage: &BTreeMap<String, u64>) -> Option<Estimate>;
}

/// The estimates of the selected checks' suites, by suite name (suites whose budgets do
/// not constrain the run give none). `filter` as `--filter`, `shard` as `--shard`; an
/// invalid glob gives none.
pub fn estimate(
    target: &Target,
    suites: &[Suite],
    filter: Option<&str>,
    transports: &[Binding],
    shard: Option<Shard>,
    paced: &[Arc<dyn Paced>],
) -> Vec<(String, Estimate)> {
    let Ok(filter) = Filter::new(filter) else {
        return Vec::new();
    };
    let planned = plan(suites, &filter, &offered(target, suites, transports));
    let jobs = match shard {
        Some(s) => s.jobs_of(planned).0,
        None => planned,
    };
    suites
        .iter()
        .enumerate()
        .filter_map(|(i, s)| {
            let mut usage: BTreeMap<String, u64> = BTreeMap::new();
            for j in jobs.iter().filter(|j| j.suite == i) {
                for (budget, n) in j.check.budget_use() {
                    *usage.entry(budget).or_default() += n;
                }
            }
            let protocol = paced.iter().find(|p| p.name() == s.name)?;
            let e = protocol.estimate(target, &usage)?;
            Some((s.name.clone(), e))
        })
        .collect()
}

/// `1 h 02 min`, `3 min 20 s`, `45 s`.
pub fn human(d: Duration) -> String {
    let s = d.as_secs();
    match (s / 3600, (s % 3600) / 60, s % 60) {
        (0, 0, s) => format!("{s} s"),
        (0, m, s) => format!("{m} min {s:02} s"),
        (h, m, _) => format!("{h} h {m:02} min"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_durations() {
        assert_eq!(human(Duration::from_secs(45)), "45 s");
        assert_eq!(human(Duration::from_secs(200)), "3 min 20 s");
        assert_eq!(human(Duration::from_secs(3720)), "1 h 02 min");
    }
}
