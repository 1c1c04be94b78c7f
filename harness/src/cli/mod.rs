//! The commands of the `conform` binary, one file each: each parses its arguments, calls the
//! library, prints and returns an exit code. Also what several commands share: loading the
//! suites, `--suite`'s parser, writing stdout, the reports `run` and `merge` write.

pub(crate) mod catalogue;
pub(crate) mod diff;
pub(crate) mod matrix;
pub(crate) mod merge;
pub(crate) mod reports;
pub(crate) mod run;
pub(crate) mod verify;

use anyhow::Context as _;
use conform::engine::protocol::Suite;
use conform::registry;

/// The suites `sel` names (`all` or a protocol), loaded from the vectors in `dir`.
pub(crate) fn load_suites(sel: &str, dir: &std::path::Path) -> anyhow::Result<Vec<Suite>> {
    let protocols = registry::select(&[sel.to_string()])?;
    Ok(registry::load(&protocols, dir)?)
}

/// Writes `text` to stdout ([`crate::term::out`]: quietly nothing once the reader went away).
pub(crate) fn out(text: &str) -> anyhow::Result<()> {
    crate::term::out(text).context("writing to standard output")
}

/// The help of a `--suite` option: the registered protocols, from the registry.
pub(crate) fn suite_help(what: &str) -> String {
    format!(
        "{what}: a registered protocol ({}) or `all`",
        registry::names().join(", ")
    )
}

/// `--suite`: a registered protocol or `all`, checked by the registry that knows them.
pub(crate) fn parse_suite(s: &str) -> Result<String, String> {
    registry::select(&[s.to_string()])
        .map(|_| s.to_string())
        .map_err(|e| e.to_string())
}
