//! Commands of the `conform` binary that have a file of their own (`run` and `merge` are
//! still in `main.rs`): each parses its arguments, calls the library, prints and returns an
//! exit code. Also the helpers every command shares: loading the suites, writing stdout.

pub(crate) mod catalogue;
pub(crate) mod diff;
pub(crate) mod matrix;
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
