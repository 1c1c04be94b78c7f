//! The server under soak: a `reference-server serve` child on a file database, with the SSP
//! rate limit on and one SSP API key per well-behaved client, killed with SIGKILL and
//! restarted on demand, and sampled for resident memory and open descriptors.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use anyhow::{Context, bail};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::watch;

/// Where clients find the server: a generation number (one per start) and its address.
pub(super) type Target = watch::Receiver<(u64, SocketAddr)>;

/// Least time between two SSP invocations of one client: a well-behaved SSP consumer stays
/// under the provider's per-client rate ([`SSP_RATE_PER_MINUTE`] is derived
/// from it). Without it a client's SSP rate would follow the machine's speed, and no fixed
/// limit could tell it from a flood on every machine.
pub(super) const SSP_INTERVAL: Duration = Duration::from_millis(40);

/// Client `k`'s own SSP API key (the server under soak is started with one per client): its
/// invocations are then a rate-limit client of their own, not the shared loopback address.
pub(super) fn ssp_key(k: usize) -> String {
    format!("soak-ssp-key-{k}")
}

/// The SSP invocation rate of the server under soak, per client (credential, else address).
///
/// A well-behaved client invokes SSP in at most one request of 8 and never twice within
/// [`SSP_INTERVAL`] (40 ms), with its own API key: at most 25/s = 1,500 per minute in its own
/// bucket (about what a client's 1-in-8 share is anyway at 200 requests a second, so the
/// interval seldom changes the mix). Its invocations are sequential (each admitted before the
/// next is sent), so within any span the provider admits at most 2 more than 25/s allows.
/// Twice that sustained rate — 3,000 per minute, 50/s, the provider's default — with a burst
/// of [`SSP_RATE_BURST`] never empties a well-behaved client's bucket, whatever the
/// machine's speed. The anonymous flood sends back to back from one address: even a debug
/// build on a loaded machine answers hundreds of invocations a second on one connection, so
/// it exceeds 50/s within its first second and is held to one burst per server start plus
/// 50/s.
pub(super) const SSP_RATE_PER_MINUTE: u32 = 2 * (60_000 / SSP_INTERVAL.as_millis()) as u32;
/// The burst of [`SSP_RATE_PER_MINUTE`]: one second of it. Far above the 2 a well-behaved
/// client can bunch; small (the default is 1,000), so that the flood is refused at once.
pub(super) const SSP_RATE_BURST: u32 = 50;

/// The `serve` flags of the server under soak.
#[derive(Debug, Clone, Copy)]
pub(super) struct Flags {
    pub max_connections: usize,
    pub head_timeout_secs: u64,
    /// Well-behaved clients: the server accepts [`ssp_key`]`(k)` for `k` below it.
    pub ssp_clients: usize,
}

/// The child process and its restarts.
pub(super) struct Supervisor {
    exe: PathBuf,
    db: PathBuf,
    flags: Flags,
    child: Child,
    generation: u64,
    tx: watch::Sender<(u64, SocketAddr)>,
}

impl Supervisor {
    /// Starts the first server; clients follow [`Supervisor::target`].
    pub(super) async fn start(exe: &Path, db: &Path, flags: Flags) -> anyhow::Result<Self> {
        let (child, addr) = spawn(exe, db, flags).await?;
        let (tx, _) = watch::channel((1, addr));
        Ok(Self {
            exe: exe.to_owned(),
            db: db.to_owned(),
            flags,
            child,
            generation: 1,
            tx,
        })
    }

    /// A receiver of the current generation and address.
    pub(super) fn target(&self) -> Target {
        self.tx.subscribe()
    }

    /// The current server's process id.
    pub(super) fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    /// SIGKILL (no flush, no shutdown) and a fresh start on the same database.
    pub(super) async fn kill9_and_restart(&mut self) -> anyhow::Result<()> {
        self.child.kill().await.context("SIGKILL")?;
        let (child, addr) = spawn(&self.exe, &self.db, self.flags).await?;
        self.child = child;
        self.generation += 1;
        self.tx.send_replace((self.generation, addr));
        Ok(())
    }

    /// How many times the server was started.
    pub(super) fn starts(&self) -> u64 {
        self.generation
    }

    /// Stops the last server (SIGKILL: the soak does not measure shutdown).
    pub(super) async fn stop(mut self) {
        let _ = self.child.kill().await;
    }
}

async fn spawn(exe: &Path, db: &Path, flags: Flags) -> anyhow::Result<(Child, SocketAddr)> {
    let mut command = Command::new(exe);
    command
        .args(["serve", "--listen", "127.0.0.1:0", "--demo"])
        .arg("--max-connections")
        .arg(flags.max_connections.to_string())
        .arg("--head-timeout-secs")
        .arg(flags.head_timeout_secs.to_string())
        .arg("--ssp-rate-per-minute")
        .arg(SSP_RATE_PER_MINUTE.to_string())
        .arg("--ssp-rate-burst")
        .arg(SSP_RATE_BURST.to_string());
    // The well-behaved clients all call from 127.0.0.1: each needs a key of its own to be a
    // rate-limit client of its own.
    for k in 0..flags.ssp_clients {
        command.arg("--ssp-api-key").arg(ssp_key(k));
    }
    let mut child = command
        .arg("--db")
        .arg(db)
        .env("RUST_LOG", "error")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .with_context(|| format!("spawning {}", exe.display()))?;
    let stdout = child.stdout.take().context("child stdout")?;
    let mut lines = BufReader::new(stdout).lines();
    let line = tokio::time::timeout(Duration::from_secs(20), lines.next_line())
        .await
        .context("the server did not print its listening line within 20 s")??;
    let Some(addr) = line
        .as_deref()
        .and_then(|l| l.strip_prefix("listening on http://"))
        .and_then(|a| a.parse::<SocketAddr>().ok())
    else {
        bail!("unexpected first line from the server: {line:?}");
    };
    Ok((child, addr))
}

/// Resident set size of `pid`, bytes (Linux `/proc`; `None` elsewhere).
pub(super) fn rss_bytes(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let kb = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse::<u64>()
        .ok()?;
    Some(kb * 1024)
}

/// Open file descriptors of `pid` (Linux `/proc`; `None` elsewhere).
pub(super) fn open_fds(pid: u32) -> Option<u64> {
    Some(std::fs::read_dir(format!("/proc/{pid}/fd")).ok()?.count() as u64)
}
