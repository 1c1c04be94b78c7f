//! The server under soak: a `reference-server serve` child on a file database, killed with
//! SIGKILL and restarted on demand, and sampled for resident memory and open descriptors.

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

/// The `serve` flags of the server under soak.
#[derive(Debug, Clone, Copy)]
pub(super) struct Flags {
    pub max_connections: usize,
    pub head_timeout_secs: u64,
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
    let mut child = Command::new(exe)
        .args(["serve", "--listen", "127.0.0.1:0", "--demo"])
        .arg("--max-connections")
        .arg(flags.max_connections.to_string())
        .arg("--head-timeout-secs")
        .arg(flags.head_timeout_secs.to_string())
        // The 32 well-behaved clients all come from 127.0.0.1: one SSP rate bucket would
        // refuse them as one client. The rate limit has its own tests.
        .args(["--ssp-rate-per-minute", "0"])
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
