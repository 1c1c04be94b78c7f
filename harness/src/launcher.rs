//! The [`Launcher`] the CLI hands to protocols' own subcommands: profiles validated by
//! every registered protocol, and the bundled reference server (feature `reference`), so
//! that no wing imports the registry or the reference itself.

use std::path::Path;
use std::sync::Arc;

use futures::FutureExt as _;
use futures::future::BoxFuture;

use crate::capability::command::Launcher;
use crate::engine::protocol::{Protocol, load_profile};
use crate::engine::target::{ConnectOptions, Profile, Target, TargetError};

/// Every registered protocol, and the reference this build bundles.
#[derive(Debug, Default, Clone, Copy)]
pub struct Registered;

impl Launcher for Registered {
    fn load_profile(&self, path: &Path) -> Result<Profile, TargetError> {
        load_profile(path, &crate::registry::protocols())
    }

    fn spawn_reference<'a>(
        &'a self,
        opts: &'a ConnectOptions,
        protocols: &'a [Arc<dyn Protocol>],
        faults: &'a [String],
    ) -> BoxFuture<'a, Result<Target, TargetError>> {
        spawn(opts, protocols, faults).boxed()
    }
}

#[cfg(feature = "reference")]
async fn spawn(
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

#[cfg(not(feature = "reference"))]
async fn spawn(
    _: &ConnectOptions,
    _: &[Arc<dyn Protocol>],
    _: &[String],
) -> Result<Target, TargetError> {
    Err(TargetError::Spawn(
        "--spawn-reference needs the bundled reference server (conform's default feature `reference`)"
            .into(),
    ))
}
