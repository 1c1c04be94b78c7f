//! Every Parley golden vector × transport as its own named, filterable test, against one
//! reference server spawned in process (`cargo test -p conform --test parley_vectors -- envelope/`).
//!
//! Test names: `<vector id>@http`, `<vector id>@mcp` (2025-11-25), `<vector id>@mcp-2026` (the
//! stateless era), `PV-TR-1/<vector id>` (both bindings agree, step by step), plus
//! `PV-TR-1a/bindings`. Exclusive vectors run alone (`support::reference::locked`).

mod support;

use conform::capability::transports::{HTTP, MCP};
use conform::engine::binding::Binding;
use conform::engine::check::{Bindings, Check};
use conform::engine::target::ConnectOptions;
use conform::engine::verdict::Verdict;
use conform::transport::McpRevision;
use libtest_mimic::{Failed, Trial};

/// Index of the MCP 2025-11-25 (legacy) server in [`servers`].
const LEGACY: usize = 0;
/// Index of the MCP 2026-07-28 (stateless) server in [`servers`].
const STATELESS: usize = 1;

/// The shared references, one per MCP era, pre-flighted for every registered protocol.
fn servers() -> Result<&'static support::reference::Shared, Failed> {
    support::reference::shared(
        &[
            ConnectOptions::revision(McpRevision::V2025_11_25),
            ConnectOptions::revision(McpRevision::V2026_07_28),
        ],
        4,
    )
}

fn run_check(check: &dyn Check, transport: Option<Binding>, stateless: bool) -> Result<(), Failed> {
    support::reference::locked(check, || {
        let s = servers()?;
        let target = s.target(if stateless { STATELESS } else { LEGACY })?;
        // Vectors for servers WITHOUT the dialectic profile are marked ignored in `main` and
        // run in tests/profile_absent.rs: the reference runs every other vector.
        support::verdicts::must_pass(&s.run(check, target, transport, "t"))
    })
}

/// PV-TR-1: runs the vector on HTTP and on MCP and compares the outcomes step by step.
fn run_comparison(check: &dyn Check) -> Result<(), Failed> {
    support::reference::locked(check, || {
        let s = servers()?;
        let http = s.run(check, s.target(LEGACY)?, Some(HTTP), "c");
        let mcp = s.run(check, s.target(LEGACY)?, Some(MCP), "c");
        match conform::parley::compare::compare(check.id(), &http.steps, &mcp.steps) {
            Verdict::Pass => Ok(()),
            Verdict::Fail(v) => Err(format!(
                "{}\n  http: {}\n  mcp:  {}",
                v.message, v.expected, v.observed
            )
            .into()),
            other => Err(format!("{other:?}").into()),
        }
    })
}

fn main() {
    let args = support::reference::arguments();
    let dir = support::vectors::dir();
    let suite = match support::vectors::suite("parley") {
        Ok(s) => s,
        Err(e) => {
            eprintln!("cannot load {e}");
            std::process::exit(2);
        }
    };
    // Vectors for a server without the dialectic profile do not apply to the reference.
    let vectors = match conform::parley::vectors::loader::load_dir(&dir.join("parley"), None, None)
    {
        Ok(v) => v,
        Err(e) => {
            eprintln!("cannot load the parley vectors: {e}");
            std::process::exit(2);
        }
    };
    let profile_absent: std::collections::HashSet<String> = vectors
        .iter()
        .filter(|lv| lv.vector.needs.iter().any(|n| n.starts_with('!')))
        .map(|lv| lv.vector.id.clone())
        .collect();
    let mut trials = Vec::new();
    for check in &suite.checks {
        let ignored = profile_absent.contains(check.id());
        match check.bindings() {
            Bindings::Once => {
                let c = check.clone();
                trials.push(
                    Trial::test(check.id().to_string(), move || {
                        run_check(c.as_ref(), None, false)
                    })
                    .with_kind(check.area())
                    .with_ignored_flag(ignored),
                );
            }
            Bindings::Each(ks) => {
                if check.compare_transports() {
                    let c = check.clone();
                    let name = format!("PV-TR-1/{}", check.id());
                    trials.push(
                        Trial::test(name, move || run_comparison(c.as_ref()))
                            .with_kind(check.area())
                            .with_ignored_flag(ignored),
                    );
                }
                for k in ks {
                    let c = check.clone();
                    let name = format!("{}@{k}", check.id());
                    trials.push(
                        Trial::test(name, move || run_check(c.as_ref(), Some(k), false))
                            .with_kind(check.area())
                            .with_ignored_flag(ignored),
                    );
                    if k == MCP {
                        let c = check.clone();
                        let name = format!("{}@mcp-2026", check.id());
                        trials.push(
                            Trial::test(name, move || run_check(c.as_ref(), Some(k), true))
                                .with_kind(check.area())
                                .with_ignored_flag(ignored),
                        );
                    }
                }
            }
        }
    }
    libtest_mimic::run(&args, trials).exit();
}
