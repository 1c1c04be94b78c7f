//! Sharding (`conform run --shard k/n`): which planned jobs one of `n` CI jobs runs, and
//! where each result of a shard belongs in the unsharded report, so that
//! [`crate::engine::merge`] can put the shards back together.
//!
//! Assignment is by a hash of a *group key*, never by plan position, so adding or removing a
//! check moves only that check. The key keeps together what must run in one process:
//! - every run of one check (its `<id>@<binding>` instances share the check id): a protocol
//!   judges its derived checks (the cross-binding comparison) from the runs of one check, so
//!   both runs must be in the shard that judges them;
//! - every exclusive check (one group): they run alone, one by one, after the shared checks of
//!   their shard, and observe global state of the target; keeping them in one shard keeps
//!   them out of the other shards' runs.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};

use super::check::Check;
use super::plan::Job;
use super::protocol::Suite;
use super::report::{CheckResult, ShardInfo};

/// The group key of every exclusive check.
const EXCLUSIVE_GROUP: &str = "\u{0}exclusive";

/// One shard of `count`: `index` is 1-based.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    /// Which shard (1..=count).
    pub index: u32,
    /// How many shards the run is split into.
    pub count: u32,
}

/// Why a `--shard` value is not `k/n` with `1 <= k <= n`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid shard {0:?}: expected k/n with 1 <= k <= n (e.g. 2/3)")]
pub struct ShardParseError(String);

impl FromStr for Shard {
    type Err = ShardParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = || ShardParseError(s.to_string());
        let (k, n) = s.split_once('/').ok_or_else(err)?;
        let index: u32 = k.trim().parse().map_err(|_| err())?;
        let count: u32 = n.trim().parse().map_err(|_| err())?;
        if index == 0 || count == 0 || index > count {
            return Err(err());
        }
        Ok(Self { index, count })
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// The key whose hash places `check`: its id, or the one group of exclusive checks.
pub fn group_key(check: &dyn Check) -> &str {
    if check.exclusive() {
        EXCLUSIVE_GROUP
    } else {
        check.id()
    }
}

/// The 1-based shard of `count` a group key belongs to: the first 8 bytes of its SHA-256,
/// modulo `count`. SHA-256 rather than std's hasher, whose output may change between Rust
/// releases: a shard must mean the same checks on every CI runner.
pub fn shard_of(key: &str, count: u32) -> u32 {
    let digest = Sha256::digest(key.as_bytes());
    let mut head = [0u8; 8];
    head.copy_from_slice(&digest[..8]);
    let n = u64::from(count.max(1));
    // The remainder is below `count`, a u32: the conversion cannot fail.
    u32::try_from(u64::from_be_bytes(head) % n).unwrap_or(0) + 1
}

impl Shard {
    /// Whether this shard runs `check`.
    pub fn selects(&self, check: &dyn Check) -> bool {
        shard_of(group_key(check), self.count) == self.index
    }

    /// This shard's jobs of the full `plan`, renumbered from 0 (the executor indexes its
    /// results by `order`), with each job's position in the full plan.
    pub fn jobs_of(&self, plan: Vec<Job>) -> (Vec<Job>, Vec<usize>) {
        let mut jobs = Vec::new();
        let mut positions = Vec::new();
        for mut job in plan {
            if self.selects(job.check.as_ref()) {
                positions.push(job.order);
                job.order = jobs.len();
                jobs.push(job);
            }
        }
        (jobs, positions)
    }
}

/// The shard record of a report: `checks` are the shard's results, first its planned jobs
/// (whose full-plan positions are `job_positions`), then the derived checks of `suites`.
pub fn info(
    shard: Shard,
    planned: usize,
    job_positions: &[usize],
    checks: &[CheckResult],
    suites: &[Suite],
) -> ShardInfo {
    let derived: Vec<String> = suites
        .iter()
        .flat_map(|s| s.protocol.derived_ids(s))
        .collect();
    let mut positions = job_positions.to_vec();
    for (i, c) in checks.iter().enumerate().skip(job_positions.len()) {
        // A derived id the protocol does not list still gets a position after every listed
        // one (in shard order): the merge stays complete, only its order is then arbitrary.
        let p = derived
            .iter()
            .position(|d| *d == c.check)
            .unwrap_or(derived.len() + i);
        positions.push(planned + p);
    }
    ShardInfo {
        index: shard.index,
        count: shard.count,
        planned,
        positions,
    }
}

#[cfg(test)]
#[expect(clippy::unwrap_used, clippy::panic)] // tests: a panic is the failure report
mod tests {
    use std::collections::BTreeSet;
    use std::sync::Arc;

    use futures::future::BoxFuture;

    use super::*;
    use crate::engine::binding::Binding;
    use crate::engine::check::{Bindings, CheckCtx, CheckOutcome};

    struct Fake {
        id: String,
        exclusive: bool,
    }

    impl Check for Fake {
        fn id(&self) -> &str {
            &self.id
        }
        fn title(&self) -> &str {
            "fake"
        }
        fn requirements(&self) -> &[String] {
            &[]
        }
        fn exclusive(&self) -> bool {
            self.exclusive
        }
        fn bindings(&self) -> Bindings {
            Bindings::Each(vec![Binding::new("http"), Binding::new("mcp")])
        }
        fn run<'a>(&'a self, _ctx: &'a CheckCtx) -> BoxFuture<'a, CheckOutcome> {
            panic!("not run in these tests")
        }
    }

    /// A plan of `n` checks, each on two bindings, every 7th exclusive.
    fn plan(n: usize) -> Vec<Job> {
        let mut jobs = Vec::new();
        for i in 0..n {
            let check: Arc<dyn Check> = Arc::new(Fake {
                id: format!("area/check-{i}"),
                exclusive: i % 7 == 3,
            });
            for t in [Binding::new("http"), Binding::new("mcp")] {
                jobs.push(Job {
                    suite: 0,
                    check: check.clone(),
                    transport: Some(t),
                    order: jobs.len(),
                });
            }
        }
        jobs
    }

    fn shards(plan: &[Job], count: u32) -> Vec<(Vec<Job>, Vec<usize>)> {
        (1..=count)
            .map(|index| Shard { index, count }.jobs_of(plan.to_vec()))
            .collect()
    }

    #[test]
    fn parses_k_of_n_and_refuses_the_rest() {
        assert_eq!(
            "2/3".parse::<Shard>().unwrap(),
            Shard { index: 2, count: 3 }
        );
        assert_eq!("1/1".parse::<Shard>().unwrap().to_string(), "1/1");
        for bad in ["0/3", "4/3", "3", "a/b", "1/0", "", "1/3/4", "-1/3"] {
            assert!(bad.parse::<Shard>().is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn shards_are_disjoint_and_complete_and_positions_point_back() {
        let full = plan(200);
        for count in [1, 2, 3, 5, 8] {
            let mut seen = BTreeSet::new();
            for (jobs, positions) in shards(&full, count) {
                assert_eq!(jobs.len(), positions.len());
                for (i, (job, &p)) in jobs.iter().zip(&positions).enumerate() {
                    assert_eq!(job.order, i, "shard jobs are renumbered from 0");
                    assert_eq!(full[p].check.id(), job.check.id());
                    assert_eq!(full[p].transport, job.transport);
                    assert!(seen.insert(p), "position {p} in two shards of {count}");
                }
            }
            assert_eq!(seen.len(), full.len(), "{count} shards miss a job");
        }
    }

    #[test]
    fn both_bindings_of_a_check_and_all_exclusive_checks_share_a_shard() {
        let full = plan(200);
        for (index, (jobs, _)) in shards(&full, 4).into_iter().enumerate() {
            let ids: BTreeSet<&str> = jobs.iter().map(|j| j.check.id()).collect();
            for id in &ids {
                let n = jobs.iter().filter(|j| j.check.id() == *id).count();
                assert_eq!(n, 2, "{id}: one binding left shard {}", index + 1);
            }
            let exclusive = jobs.iter().filter(|j| j.check.exclusive()).count();
            assert!(
                exclusive == 0 || exclusive == full.iter().filter(|j| j.check.exclusive()).count(),
                "exclusive checks split across shards"
            );
        }
    }

    #[test]
    fn assignment_is_stable_when_checks_are_added() {
        let before = plan(200);
        let after = plan(230); // 30 more checks
        let place = |jobs: &[Job]| -> Vec<u32> {
            jobs.iter()
                .map(|j| shard_of(group_key(j.check.as_ref()), 3))
                .collect()
        };
        // The old checks keep their shard: the assignment depends on the id alone.
        assert_eq!(place(&before), place(&after)[..before.len()]);
        // Known values (computed independently with Python's hashlib): the assignment must
        // not change between releases or machines.
        assert_eq!(shard_of("envelope/body-501-utf16", 3), 3);
        assert_eq!(shard_of("envelope/body-501-utf16", 5), 1);
        assert_eq!(shard_of("state/x", 3), 2);
        assert_eq!(shard_of("state/x", 5), 4);
        let spread: BTreeSet<u32> = (0..50).map(|i| shard_of(&format!("c{i}"), 3)).collect();
        assert_eq!(spread, BTreeSet::from([1, 2, 3]), "every shard gets checks");
    }
}
