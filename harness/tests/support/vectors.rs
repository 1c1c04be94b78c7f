//! The repository's `vectors/` directory: requirement catalogues and suites.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use conform::engine::protocol::Suite;
use conform::engine::requirements::Catalogue;

/// `vectors/` at the root of the repository.
pub(crate) fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../vectors")
}

/// The requirement catalogue of `protocol` (`vectors/requirements/<protocol>.toml`).
pub(crate) fn catalogue(protocol: &str) -> Result<Catalogue, String> {
    let path = dir().join(format!("requirements/{protocol}.toml"));
    Catalogue::load(&path).map_err(|e| format!("{}: {e}", path.display()))
}

/// The suite of the registered protocol `name`.
pub(crate) fn suite(name: &str) -> Result<Suite, String> {
    conform::registry::load_suite(name, &dir()).map_err(|e| format!("the {name} suite: {e}"))
}

/// Every registered protocol's suite, loaded once per test binary (the binaries that run
/// the whole suite against many servers).
pub(crate) fn all_suites() -> Result<&'static [Suite], String> {
    static SUITES: OnceLock<Result<Vec<Suite>, String>> = OnceLock::new();
    SUITES
        .get_or_init(|| {
            conform::registry::load(&conform::registry::protocols(), &dir())
                .map_err(|e| e.to_string())
        })
        .as_deref()
        .map_err(|e| format!("loading the suites: {e}"))
}
