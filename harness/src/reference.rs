//! The bundled reference server, spawned in process (`--spawn-reference`, default cargo
//! feature `reference`): the only place the harness starts `reference_impl`.

use std::net::SocketAddr;
use std::sync::Arc;

use crate::engine::protocol::Protocol;
use crate::engine::target::{ConnectOptions, Profile, Target, TargetError};

/// The demo profile of a reference server at `base_url`: each registered protocol adds its
/// section (the demo tokens are public).
pub fn demo_profile(base_url: &str) -> Profile {
    let mut profile = Profile::new(base_url);
    profile.name = Some("reference (spawned in process)".into());
    for p in &crate::registry::protocols() {
        p.reference_profile(&mut profile);
    }
    profile
}

/// Spawns the reference server with `config` on an ephemeral loopback port and prepares it
/// as a target with the demo profile; the server lives as long as the target.
pub async fn spawn_with(
    config: reference_impl::Config,
    opts: &ConnectOptions,
    protocols: &[Arc<dyn Protocol>],
) -> Result<Target, TargetError> {
    let listen = SocketAddr::from(([127, 0, 0, 1], 0));
    let server = reference_impl::spawn(config, listen)
        .await
        .map_err(|e| TargetError::Spawn(e.to_string()))?;
    let profile = demo_profile(&server.base_url());
    let mut target = Target::new(profile, opts)?;
    target.info.spawned_reference = true;
    target.keep_alive(Box::new(server));
    for p in protocols {
        p.preflight(&mut target, opts).await?;
    }
    Ok(target)
}

/// Spawns the reference server with its demo configuration (in-memory database).
pub async fn spawn(
    opts: &ConnectOptions,
    protocols: &[Arc<dyn Protocol>],
) -> Result<Target, TargetError> {
    spawn_with(reference_impl::Config::demo_in_memory(), opts, protocols).await
}
