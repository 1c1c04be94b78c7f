//! `conform list` and `conform explain ID`: the requirement catalogues and the checks that
//! judge them, as text on stdout.

use std::fmt::Write as _;

use anyhow::bail;

use conform::engine::protocol::Suite;
use conform::engine::requirements::Requirement;

use super::{load_suites, out};

pub(crate) fn cmd_list(sel: &str, dir: &std::path::Path) -> anyhow::Result<()> {
    let mut text = String::new();
    for s in load_suites(sel, dir)? {
        let _ = writeln!(
            text,
            "suite {} — {} requirements, {} checks",
            s.name,
            s.catalogue.requirements.len(),
            s.checks.len()
        );
        let _ = writeln!(
            text,
            "{:<14} {:<6} {:<12} {:>7}  rule",
            "id", "level", "area", "checks"
        );
        for r in &s.catalogue.requirements {
            let n = s
                .checks
                .iter()
                .filter(|c| c.requirements().iter().any(|x| x == &r.id))
                .count();
            let _ = writeln!(
                text,
                "{:<14} {:<6} {:<12} {:>7}  {}",
                r.id,
                r.level.to_string(),
                r.area,
                n,
                r.rule
            );
        }
        text.push('\n');
    }
    out(&text)
}

/// What an id `conform` prints names: a requirement, a check, or a derived check
/// (`PV-TR-1/<vector>`: a requirement judged from a check's outcomes).
enum Explained<'a> {
    Requirement(&'a Suite, &'a Requirement),
    Check(&'a Suite, &'a dyn conform::engine::check::Check),
    Derived(
        &'a Suite,
        &'a Requirement,
        &'a dyn conform::engine::check::Check,
    ),
}

/// The requirement of `suites` whose ID is `id` in any case (`pv-st-4`).
fn requirement<'a>(suites: &'a [Suite], id: &str) -> Option<(&'a Suite, &'a Requirement)> {
    suites.iter().find_map(|s| {
        (s.catalogue.requirements.iter())
            .find(|r| r.id.eq_ignore_ascii_case(id))
            .map(|r| (s, r))
    })
}

/// The check of `suites` whose id is `id`, exactly, else in any case.
fn check<'a>(
    suites: &'a [Suite],
    id: &str,
) -> Option<(&'a Suite, &'a dyn conform::engine::check::Check)> {
    let find = |same: &dyn Fn(&str) -> bool| {
        suites.iter().find_map(|s| {
            (s.checks.iter())
                .find(|c| same(c.id()))
                .map(|c| (s, c.as_ref()))
        })
    };
    find(&|c| c == id).or_else(|| find(&|c| c.eq_ignore_ascii_case(id)))
}

/// Resolves `id` among `suites` (no binding suffix).
fn resolve<'a>(suites: &'a [Suite], id: &str) -> Option<Explained<'a>> {
    if let Some((s, r)) = requirement(suites, id) {
        return Some(Explained::Requirement(s, r));
    }
    if let Some((s, c)) = check(suites, id) {
        return Some(Explained::Check(s, c));
    }
    let (req, rest) = id.split_once('/')?;
    let (s, r) = requirement(suites, req)?;
    let (_, c) = check(std::slice::from_ref(s), rest)?;
    Some(Explained::Derived(s, r, c))
}

/// The requirement's header, rule, seed text and method.
fn write_requirement(text: &mut String, s: &Suite, r: &Requirement) {
    let _ = writeln!(
        text,
        "{} ({}, {}) — suite {}, area {}",
        r.id, r.level, r.source, s.name, r.area
    );
    let _ = writeln!(text, "\n  {}\n", r.rule);
    if let Some(t) = &r.seed_text {
        let _ = writeln!(text, "seed text:\n  \"{}\"\n", t.trim());
    }
    if let Some(m) = r.method {
        let _ = writeln!(text, "method: {m}");
    }
}

/// The check's description and the rules it cites.
fn write_check(text: &mut String, s: &Suite, c: &dyn conform::engine::check::Check) {
    match c.describe() {
        Some(d) => {
            let _ = writeln!(text, "{d}");
        }
        None => {
            let _ = writeln!(
                text,
                "check {} (suite {}, area {})\n  {}",
                c.id(),
                s.name,
                c.area(),
                c.title()
            );
        }
    }
    for r in c.requirements() {
        let rule = s.catalogue.get(r).map(|x| x.rule.as_str()).unwrap_or("?");
        let _ = writeln!(text, "  {r}: {rule}");
    }
}

pub(crate) fn cmd_explain(id: &str, dir: &std::path::Path) -> anyhow::Result<()> {
    let suites = load_suites("all", dir)?;
    let asked = id.trim();
    // A result id names its binding (`<check>@http`): the check is the same on each.
    let (found, binding) = match resolve(&suites, asked) {
        Some(f) => (f, None),
        None => {
            let resolved = (asked.rsplit_once('@'))
                .filter(|(bare, b)| !bare.is_empty() && !b.is_empty())
                .and_then(|(bare, b)| resolve(&suites, bare).map(|f| (f, Some(b))));
            match resolved {
                Some(r) => r,
                None => bail!(
                    "{id} is neither a requirement ID (PV-ST-4), a check id, a result id \
                     (<check>@http) nor a derived check (PV-TR-1/<vector>): `conform list` \
                     shows the requirement IDs"
                ),
            }
        }
    };
    let mut text = String::new();
    if let Some(b) = binding {
        let _ = writeln!(text, "{asked}: a result on the {b} binding of\n");
    }
    match found {
        Explained::Requirement(s, r) => {
            write_requirement(&mut text, s, r);
            let checks: Vec<_> = (s.checks.iter())
                .filter(|c| c.requirements().iter().any(|x| x == &r.id))
                .collect();
            let _ = writeln!(text, "checks citing it ({}):", checks.len());
            for c in checks {
                let _ = writeln!(text, "  {:<48} {}", c.id(), c.title());
            }
            for extra in &r.checks {
                let _ = writeln!(text, "  {extra:<48} (non-vector check)");
            }
        }
        Explained::Check(s, c) => write_check(&mut text, s, c),
        Explained::Derived(s, r, c) => {
            let _ = writeln!(
                text,
                "{}/{}: a derived check — {} judged by comparing the outcomes of {} on \
                 its bindings\n",
                r.id,
                c.id(),
                r.id,
                c.id()
            );
            write_requirement(&mut text, s, r);
            text.push('\n');
            write_check(&mut text, s, c);
        }
    }
    out(&text)
}
