//! `conform merge`: the shard reports of one sharded run (`conform run --shard k/n`) put back
//! together into the report the unsharded run would have written — results in unsharded
//! order, summary recounted, requirement matrix re-judged from the merged results with
//! [`judge::judge_matrix`].
//!
//! Merging refuses, with the reason, anything that would make the merged report lie: a report
//! written without `--shard`, shards of different splits, a missing or repeated shard,
//! different tool versions, targets, suites, transports, filters, baselines or catalogues,
//! two shards holding the same result, and a planned job no shard ran.

use std::collections::{BTreeMap, BTreeSet};

use super::judge;
use super::report::{Report, RequirementRow};
use super::target::TargetInfo;

/// Why shard reports cannot be merged (exit code 2).
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    /// Nothing given.
    #[error("no report to merge")]
    Empty,
    /// A report without shard information.
    #[error("{0} is not a shard report (it was written without `conform run --shard k/n`)")]
    NotAShard(String),
    /// Reports of different splits, or a shard given twice, or one missing.
    #[error("incomplete shard set: {0}")]
    Incomplete(String),
    /// The shards do not describe one run.
    #[error("{what} differs between {a} and {b}: {va} vs {vb}")]
    Mismatch {
        /// The field.
        what: &'static str,
        /// First report.
        a: String,
        /// Other report.
        b: String,
        /// Its value in `a`.
        va: String,
        /// Its value in `b`.
        vb: String,
    },
    /// One result in two shards.
    #[error("result {id} is in both {a} and {b} (overlapping shards)")]
    Overlap {
        /// Result id.
        id: String,
        /// First report.
        a: String,
        /// Other report.
        b: String,
    },
    /// A report's own shard record is inconsistent.
    #[error("{0}: corrupt shard record ({1})")]
    Corrupt(String, String),
}

/// A shard report and the name errors call it by (its file).
pub struct ShardReport {
    /// Where it came from.
    pub name: String,
    /// The report.
    pub report: Report,
}

/// Merges the complete set of shard reports of one run into one report.
pub fn merge(shards: Vec<ShardReport>) -> Result<Report, MergeError> {
    let first = shards.first().ok_or(MergeError::Empty)?;
    for s in &shards {
        let info =
            (s.report.shard.as_ref()).ok_or_else(|| MergeError::NotAShard(s.name.clone()))?;
        if info.positions.len() != s.report.checks.len() {
            return Err(MergeError::Corrupt(
                s.name.clone(),
                format!(
                    "{} positions for {} results",
                    info.positions.len(),
                    s.report.checks.len()
                ),
            ));
        }
        same_run(first, s)?;
    }
    complete_set(&shards)?;
    let mut base = first.report.clone();
    // A shard's signature covers that shard only: the merged report is unsigned.
    base.signature = None;
    let planned = base.shard.as_ref().map_or(0, |i| i.planned);
    let mut placed: BTreeMap<usize, &str> = BTreeMap::new();
    let mut by_id: BTreeMap<&str, &str> = BTreeMap::new();
    let mut checks = Vec::new();
    for (si, s) in shards.iter().enumerate() {
        let positions = s.report.shard.as_ref().map(|i| i.positions.as_slice());
        for (c, &p) in s.report.checks.iter().zip(positions.unwrap_or(&[])) {
            if let Some(a) = by_id.insert(c.id.as_str(), s.name.as_str()) {
                return Err(overlap(&c.id, a, &s.name));
            }
            // A planned job has one position; derived checks may share one (their order is
            // then the shards' order), their ids being unique is enough.
            if p < planned
                && let Some(a) = placed.insert(p, s.name.as_str())
            {
                return Err(overlap(&c.id, a, &s.name));
            }
            checks.push((p, si, c.clone()));
        }
    }
    if let Some(missing) = (0..planned).find(|p| !placed.contains_key(p)) {
        return Err(MergeError::Incomplete(format!(
            "planned job #{missing} of {planned} is in no shard (were the shards run with \
             the same suites, transports and filter against one target?)"
        )));
    }
    checks.sort_by_key(|(p, si, _)| (*p, *si));
    base.checks = checks.into_iter().map(|(_, _, c)| c).collect();
    let reports: Vec<&Report> = shards.iter().map(|s| &s.report).collect();
    combine_run_figures(&mut base, &reports);
    base.shard = None;
    // Each shard was partial by its `--shard`; the merged run is not.
    (base.completeness.partial).retain(|r| !r.starts_with("--shard "));
    judge::judge_matrix(&mut base.requirements, &base.checks);
    base.recount();
    Ok(base)
}

fn overlap(id: &str, a: &str, b: &str) -> MergeError {
    MergeError::Overlap {
        id: id.to_string(),
        a: a.to_string(),
        b: b.to_string(),
    }
}

/// Shards of one split, each exactly once.
fn complete_set(shards: &[ShardReport]) -> Result<(), MergeError> {
    let mut seen: BTreeMap<u32, &str> = BTreeMap::new();
    let mut count = None;
    for s in shards {
        let Some(info) = &s.report.shard else {
            return Err(MergeError::NotAShard(s.name.clone()));
        };
        match count {
            Some(n) if n != info.count => {
                return Err(MergeError::Incomplete(format!(
                    "{} is shard {}/{}, but an earlier report is of {n} shards",
                    s.name, info.index, info.count
                )));
            }
            _ => count = Some(info.count),
        }
        if let Some(other) = seen.insert(info.index, &s.name) {
            return Err(MergeError::Incomplete(format!(
                "shard {}/{} is given twice ({other} and {})",
                info.index, info.count, s.name
            )));
        }
    }
    let n = count.unwrap_or(0);
    let missing: Vec<String> = (1..=n)
        .filter(|k| !seen.contains_key(k))
        .map(|k| format!("{k}/{n}"))
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(MergeError::Incomplete(format!(
            "missing shard {}",
            missing.join(", ")
        )))
    }
}

/// The target as far as it identifies one server: a spawned reference listens on a new
/// ephemeral port in every shard, so its URLs are left out.
fn target_identity(t: &TargetInfo) -> String {
    let urls = if t.spawned_reference {
        "(spawned reference)".to_string()
    } else {
        format!("{} {}", t.base_url, t.mcp_url)
    };
    format!(
        "{} {urls} mcp {} server {:?} profiles {:?}",
        t.name, t.mcp_revision, t.server_version, t.profiles
    )
}

/// The catalogue part of a matrix row (what a suite version fixes, not what a run found).
fn catalogue_of(rows: &[RequirementRow]) -> BTreeSet<String> {
    rows.iter()
        .map(|r| {
            format!(
                "{} {} {} {} {} {}",
                r.suite, r.id, r.level, r.area, r.rule, r.source
            )
        })
        .collect()
}

/// Refuses `b` unless it comes from the same run configuration as `a`.
fn same_run(a: &ShardReport, b: &ShardReport) -> Result<(), MergeError> {
    let (ra, rb) = (&a.report, &b.report);
    let planned = |r: &Report| r.shard.as_ref().map(|i| i.planned).unwrap_or_default();
    let fields: [(&'static str, String, String); 9] = [
        (
            "report format",
            ra.format_version.to_string(),
            rb.format_version.to_string(),
        ),
        (
            "tool",
            format!("{} {}", ra.tool.name, ra.tool.version),
            format!("{} {}", rb.tool.name, rb.tool.version),
        ),
        (
            "target",
            target_identity(&ra.target),
            target_identity(&rb.target),
        ),
        ("suites", ra.suites.join(","), rb.suites.join(",")),
        (
            "transports",
            format!("{:?}", ra.transports),
            format!("{:?}", rb.transports),
        ),
        (
            "filter",
            format!("{:?}", ra.filter),
            format!("{:?}", rb.filter),
        ),
        (
            "baseline",
            format!("{:?}", ra.baseline),
            format!("{:?}", rb.baseline),
        ),
        (
            "planned jobs",
            planned(ra).to_string(),
            planned(rb).to_string(),
        ),
        (
            "suite digest",
            format!("{:?}", ra.suite_digest),
            format!("{:?}", rb.suite_digest),
        ),
    ];
    for (what, va, vb) in fields {
        if va != vb {
            return Err(MergeError::Mismatch {
                what,
                a: a.name.clone(),
                b: b.name.clone(),
                va,
                vb,
            });
        }
    }
    if catalogue_of(&ra.requirements) != catalogue_of(&rb.requirements) {
        return Err(MergeError::Mismatch {
            what: "requirement catalogue",
            a: a.name.clone(),
            b: b.name.clone(),
            va: format!("{} requirements", ra.requirements.len()),
            vb: format!(
                "{} requirements (or different rules)",
                rb.requirements.len()
            ),
        });
    }
    Ok(())
}

/// Run-wide figures of the merged report: the earliest start; the longest shard's wall time
/// (CI runs the shards side by side); every shard's exchanges, at that wall time.
fn combine_run_figures(base: &mut Report, shards: &[&Report]) {
    if let Some(start) = shards.iter().map(|r| r.started_at.as_str()).min_by(|x, y| {
        let parse = |s: &str| chrono::DateTime::parse_from_rfc3339(s).ok();
        parse(x).cmp(&parse(y))
    }) {
        base.started_at = start.to_string();
    }
    base.wall_time_ms = shards.iter().map(|r| r.wall_time_ms).max().unwrap_or(0);
    base.exchanges = shards.iter().map(|r| r.exchanges).sum();
    let secs = (base.wall_time_ms as f64 / 1000.0).max(1e-9);
    base.exchanges_per_second = (base.exchanges as f64 / secs * 10.0).round() / 10.0;
    base.jobs = shards.iter().map(|r| r.jobs).max().unwrap_or(base.jobs);
}

#[cfg(test)]
#[expect(clippy::unwrap_used)] // tests: a panic is the failure report
mod tests {
    use super::*;
    use crate::engine::diff::tests::{report, result, violation};
    use crate::engine::report::ShardInfo;
    use crate::engine::verdict::Verdict;

    /// An unsharded report: four planned jobs and two derived results after them.
    fn whole() -> Report {
        report(vec![
            result("env/a@http", Verdict::Pass, &["R-A-1"], 3),
            result("env/a@mcp", Verdict::Pass, &["R-A-1"], 4),
            result("env/b@http", Verdict::Fail(violation("x")), &["R-A-2"], 5),
            result("env/s@http", Verdict::Warn(violation("y")), &["R-B-1"], 6),
            result("CMP/env/a", Verdict::Pass, &["R-C-1"], 0),
            result("CMP/env/z", Verdict::Pass, &["R-C-1"], 0),
        ])
    }

    /// Shard `k` of `n` holding the results at `positions` of [`whole`] (4 planned).
    fn shard(k: u32, n: u32, positions: &[usize]) -> ShardReport {
        let all = whole();
        let mut r = report(positions.iter().map(|&p| all.checks[p].clone()).collect());
        r.shard = Some(ShardInfo {
            index: k,
            count: n,
            planned: 4,
            positions: positions.to_vec(),
        });
        r.wall_time_ms = 100 * u64::from(k);
        ShardReport {
            name: format!("shard{k}.json"),
            report: r,
        }
    }

    fn three() -> Vec<ShardReport> {
        vec![
            shard(2, 3, &[1, 0, 4]),
            shard(1, 3, &[2, 5]),
            shard(3, 3, &[3]),
        ]
    }

    #[test]
    fn shards_merge_into_the_unsharded_report() {
        let merged = merge(three()).unwrap();
        let want = whole();
        assert_eq!(merged.checks, want.checks, "unsharded order restored");
        assert_eq!(merged.requirements, want.requirements, "matrix re-judged");
        assert_eq!(merged.summary, want.summary);
        assert_eq!(merged.exit_code(), 1);
        assert_eq!(merged.shard, None);
        assert_eq!(merged.wall_time_ms, 300, "the longest shard");
    }

    #[test]
    fn an_incomplete_or_repeated_set_is_refused() {
        let mut s = three();
        s.pop();
        let e = merge(s).unwrap_err().to_string();
        assert!(e.contains("missing shard 3/3"), "{e}");

        let mut s = three();
        s.push(shard(3, 3, &[3]));
        let e = merge(s).unwrap_err().to_string();
        assert!(e.contains("shard 3/3 is given twice"), "{e}");

        let mut s = three();
        s[2] = shard(3, 4, &[3]);
        let e = merge(s).unwrap_err().to_string();
        assert!(e.contains("incomplete shard set"), "{e}");
    }

    #[test]
    fn overlapping_or_missing_jobs_are_refused() {
        let s = vec![shard(1, 2, &[0, 1, 2]), shard(2, 2, &[2, 3])];
        let e = merge(s).unwrap_err().to_string();
        assert!(
            e.contains("env/b@http is in both shard1.json and shard2.json"),
            "{e}"
        );

        let s = vec![shard(1, 2, &[0, 1]), shard(2, 2, &[3])];
        let e = merge(s).unwrap_err().to_string();
        assert!(e.contains("planned job #2 of 4 is in no shard"), "{e}");
    }

    #[test]
    fn shards_of_different_runs_are_refused() {
        let mut s = three();
        s[1].report.tool.version = "9.9.9".into();
        let e = merge(s).unwrap_err().to_string();
        assert!(
            e.contains("tool differs between shard2.json and shard1.json"),
            "{e}"
        );

        let mut s = three();
        s[2].report.target.spawned_reference = false;
        s[2].report.target.base_url = "https://elsewhere".into();
        let e = merge(s).unwrap_err().to_string();
        assert!(e.contains("target differs"), "{e}");

        let mut s = three();
        s[2].report.filter = Some("env/*".into());
        assert!(merge(s).unwrap_err().to_string().contains("filter differs"));

        let mut s = three();
        s[0].report.requirements[0].rule = "changed".into();
        let e = merge(s).unwrap_err().to_string();
        assert!(e.contains("requirement catalogue differs"), "{e}");

        // A spawned reference listens on a new port in each shard: not a different target.
        let mut s = three();
        s[1].report.target.base_url = "http://127.0.0.1:2".into();
        assert!(merge(s).is_ok());
    }

    #[test]
    fn a_report_without_shard_record_is_refused() {
        let mut s = three();
        s[0].report.shard = None;
        let e = merge(s).unwrap_err().to_string();
        assert!(e.contains("shard2.json is not a shard report"), "{e}");
        assert!(matches!(merge(Vec::new()), Err(MergeError::Empty)));
    }
}
