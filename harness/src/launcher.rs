//! What the CLI's [`Launcher`] reaches targets with: profiles validated by every registered
//! protocol, and the bundled reference server (feature `reference`), so that no wing imports
//! the registry or the reference itself.
//!
//! [`Launcher`]: crate::capability::command::Launcher

use std::path::Path;
use std::sync::Arc;

use crate::engine::protocol::Protocol;
use crate::engine::target::{ConnectOptions, Profile, Target, TargetError};

/// Reads a profile file, its sections validated by every registered protocol.
pub fn load_profile(path: &Path) -> Result<Profile, TargetError> {
    crate::engine::protocol::load_profile(path, &crate::registry::protocols())
}

/// Spawns the bundled reference with the seeded `faults` named (empty: none) and
/// pre-flights it for `protocols`.
#[cfg(feature = "reference")]
pub async fn spawn_reference(
    opts: &ConnectOptions,
    protocols: &[Arc<dyn Protocol>],
    faults: &[String],
) -> Result<Target, TargetError> {
    let mut config = reference_impl::Config::demo_in_memory();
    if !faults.is_empty() {
        if !cfg!(feature = "faults") {
            return Err(TargetError::Spawn(
                "seeded faults need conform's feature `faults`".into(),
            ));
        }
        config.faults = faults.to_vec();
    }
    crate::reference::spawn_with(config, opts, protocols).await
}

/// Without the bundled reference: an error saying how to get it.
#[cfg(not(feature = "reference"))]
pub async fn spawn_reference(
    _: &ConnectOptions,
    _: &[Arc<dyn Protocol>],
    _: &[String],
) -> Result<Target, TargetError> {
    Err(TargetError::Spawn(
        "--spawn-reference needs the bundled reference server (conform's default feature `reference`)"
            .into(),
    ))
}
