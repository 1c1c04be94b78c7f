//! Every check of the SSP suite (provider, consumer and validator-vector checks) as its own
//! named, filterable test against one reference server spawned in process:
//! `cargo test -p conform --test ssp_checks -- SSP-INV-3` runs exactly the checks citing
//! SSP-INV-3.
//!
//! Test names are check ids (SSP checks run once, on no transport); the kind shown before
//! the name is the check's area followed by every requirement it cites, so a filter on a
//! requirement ID also selects the checks citing it second (`-- SSP-ERR-2`). A check passes
//! only on a pass verdict and otherwise fails with its violation. Two more tests guard the
//! suite itself: every requirement of the catalogue is cited by a check, and a filter on a
//! requirement ID selects exactly the checks citing it.

mod support;

use std::collections::BTreeSet;
use std::sync::Arc;

use conform::engine::binding::Binding;
use conform::engine::check::{Bindings, Check};
use conform::engine::protocol::Suite;
use conform::engine::target::ConnectOptions;
use libtest_mimic::{Failed, Trial};

/// Runs one check against the shared reference (demo profile, default options).
fn run_check(check: &dyn Check, transport: Option<Binding>) -> Result<(), Failed> {
    support::reference::locked(check, || {
        // Worker threads: checks wait on the network, two keep both cores busy.
        let shared = support::reference::shared(&[ConnectOptions::default()], 2)?;
        let outcome = shared.run(check, shared.target(0)?, transport, "t");
        support::verdicts::must_pass(&outcome)
    })
}

/// The kind a trial is listed under: the check's area and every requirement it cites.
fn kind(check: &dyn Check) -> String {
    let mut kind = check.area().to_string();
    for r in check.requirements() {
        kind.push(' ');
        kind.push_str(r);
    }
    kind
}

/// Every requirement of the catalogue is cited by at least one check (no untested rule),
/// and the suite holds more than the provider checks (consumer and validator vectors too).
fn covers_catalogue(suite: &Suite) -> Result<(), Failed> {
    let cited: BTreeSet<&str> = suite
        .checks
        .iter()
        .flat_map(|c| c.requirements().iter().map(String::as_str))
        .collect();
    let untested: Vec<String> = suite
        .catalogue
        .requirements
        .iter()
        .filter(|r| !cited.contains(r.id.as_str()))
        .map(|r| format!("{} ({})", r.id, r.level))
        .collect();
    if !untested.is_empty() {
        return Err(format!("requirements no check cites: {untested:?}").into());
    }
    let provider = conform::ssp::provider::checks::catalogue().len();
    if suite.checks.len() <= provider {
        return Err(format!(
            "{} checks: no more than the {provider} provider checks",
            suite.checks.len()
        )
        .into());
    }
    Ok(())
}

/// A filter on a requirement ID selects exactly the trials of the checks citing it (no ID is
/// a prefix of another that would drag foreign checks in). `listed` holds each trial's
/// `[kind] name` and the requirements of its check.
fn filters_select_citing_checks(
    suite: &Suite,
    listed: &[(String, Vec<String>)],
) -> Result<(), Failed> {
    let mut wrong = Vec::new();
    for r in &suite.catalogue.requirements {
        for (line, cites) in listed {
            if line.contains(&r.id) != cites.contains(&r.id) {
                wrong.push(format!("-- {} and `{line}`", r.id));
            }
        }
    }
    if wrong.is_empty() {
        Ok(())
    } else {
        Err(format!("filters selecting the wrong checks:\n{}", wrong.join("\n")).into())
    }
}

fn main() {
    let args = support::reference::arguments();
    let suite = match support::vectors::suite("ssp") {
        Ok(s) => Arc::new(s),
        Err(e) => {
            eprintln!("cannot load {e}");
            std::process::exit(2);
        }
    };
    let mut trials = Vec::new();
    let mut listed = Vec::new();
    for check in &suite.checks {
        let kind = kind(check.as_ref());
        let runs: Vec<(String, Option<Binding>)> = match check.bindings() {
            Bindings::Once => vec![(check.id().to_string(), None)],
            Bindings::Each(ks) => ks
                .into_iter()
                .map(|k| (format!("{}@{k}", check.id()), Some(k)))
                .collect(),
        };
        for (name, transport) in runs {
            listed.push((format!("[{kind}] {name}"), check.requirements().to_vec()));
            let c = check.clone();
            trials
                .push(Trial::test(name, move || run_check(c.as_ref(), transport)).with_kind(&kind));
        }
    }
    let s = suite.clone();
    trials.push(Trial::test("suite/covers-the-catalogue", move || {
        covers_catalogue(&s)
    }));
    trials.push(Trial::test(
        "suite/requirement-filters-select-citing-checks",
        move || filters_select_citing_checks(&suite, &listed),
    ));
    libtest_mimic::run(&args, trials).exit();
}
