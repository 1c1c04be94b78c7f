//! `reference-server soak`: the reference server under load, attack and `kill -9` (issue 13).
//!
//! A `serve` child on a file database, SSP rate limit on, takes mixed Parley (HTTP and MCP)
//! and SSP traffic from well-behaved clients (each invoking SSP with an API key of its own)
//! through three phases: quiet (the reference latency), attack (idle sockets, slowloris,
//! oversized heads and bodies, an amplifying SSP input, an anonymous SSP invocation flood
//! from one address, and a `kill -9` + restart every N seconds) and after (attackers gone).
//! It then asserts: no acknowledged post lost and no id handed out twice across the
//! restarts, peak RSS and open descriptors within their bounds, p99 under attack within
//! `p99_factor` × the quiet p99, no unexpected answer to a well-behaved client and no 429 on
//! their SSP invocations, the flood answered 429 and held to what the limit allows, every
//! refusal to an attacker in its refusal shape, and the server still answering once the
//! attackers left. One table on stdout; a failed assertion makes the command fail. Bounded
//! in time and requests; loopback only.

mod client;
mod hostile;
mod server;
mod traffic;

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};
use std::time::Duration;

use anyhow::Context;
use tokio::sync::watch;
use tokio::time::Instant;

use server::Supervisor;
use traffic::{AFTER, ATTACK, Control, QUIET, RECOVERING, Stats};

/// Options of `reference-server soak`.
#[derive(Debug, clap::Args)]
pub(crate) struct SoakArgs {
    /// Total run time, seconds: 25 % quiet, 65 % under attack, 10 % after.
    #[arg(long, default_value_t = 600)]
    duration_secs: u64,
    /// Well-behaved clients.
    #[arg(long, default_value_t = 32)]
    clients: usize,
    /// Idle, slowloris and oversized attackers, each (plus one amplifier and one flood).
    #[arg(long, default_value_t = 16)]
    attackers: usize,
    /// Seconds between two `kill -9` + restart during the attack phase.
    #[arg(long, default_value_t = 20)]
    kill_every_secs: u64,
    /// Stop the well-behaved clients after this many requests in all.
    #[arg(long, default_value_t = 20_000_000)]
    max_requests: u64,
    /// Bound on the server's peak resident memory, MiB.
    #[arg(long, default_value_t = 512)]
    rss_limit_mib: u64,
    /// `--max-connections` of the server under soak (the descriptor bound follows from it).
    #[arg(long, default_value_t = 256)]
    max_connections: usize,
    /// `--head-timeout-secs` of the server under soak (how long idle sockets live).
    #[arg(long, default_value_t = 10)]
    head_timeout_secs: u64,
    /// Allowed ratio of p99 under attack to the quiet p99 (the quiet p99 counts as ≥ 1 ms).
    #[arg(long, default_value_t = 3.0)]
    p99_factor: f64,
    /// Allowed ratio of the well-behaved clients' p50 in the last window of the run (the
    /// after phase, at most a minute) to their p50 in the first window of the same length
    /// (the quiet phase, on a fresh database): latency must not drift as the run goes on.
    #[arg(long, default_value_t = 1.3)]
    drift_factor: f64,
    /// Report the latencies without asserting the p99 and drift bounds.
    #[arg(long)]
    latency_report_only: bool,
    /// Directory for the database (default: a fresh one under the system temp dir).
    #[arg(long)]
    db_dir: Option<PathBuf>,
}

/// Descriptors beyond the connection cap: refusals in progress (64), SQLite files, the
/// listener, stdio, the runtime's own.
const FD_SLACK: u64 = 96;

/// Peaks sampled from `/proc` while the soak runs.
#[derive(Default)]
struct Peaks {
    rss: u64,
    fds: u64,
}

impl Peaks {
    fn sample(&mut self, pid: Option<u32>) {
        let Some(pid) = pid else { return };
        self.rss = self.rss.max(server::rss_bytes(pid).unwrap_or(0));
        self.fds = self.fds.max(server::open_fds(pid).unwrap_or(0));
    }
}

/// Samples the server every 100 ms for `span`.
async fn observe(sup: &Supervisor, span: Duration, peaks: &mut Peaks) {
    let end = Instant::now() + span;
    while Instant::now() < end {
        peaks.sample(sup.pid());
        tokio::time::sleep(Duration::from_millis(100).min(end - Instant::now())).await;
    }
}

/// Runs the soak and prints its table; an error when an assertion failed.
pub(crate) async fn run(args: SoakArgs) -> anyhow::Result<()> {
    let exe = std::env::current_exe().context("locating reference-server")?;
    let (dir, own_dir) = match &args.db_dir {
        Some(d) => (d.clone(), false),
        None => (
            std::env::temp_dir().join(format!("reference-soak-{}", std::process::id())),
            true,
        ),
    };
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let db = dir.join("soak.db");
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", db.display()));
    }
    let outcome = phases(&args, &exe, &db).await;
    if own_dir {
        let _ = std::fs::remove_dir_all(&dir);
    }
    let report = outcome?;
    println!("{}", report.table(&args));
    let failed = report.failures(&args);
    anyhow::ensure!(failed.is_empty(), "soak failed: {}", failed.join("; "));
    Ok(())
}

async fn phases(
    args: &SoakArgs,
    exe: &std::path::Path,
    db: &std::path::Path,
) -> anyhow::Result<Report> {
    let total = Duration::from_secs(args.duration_secs.max(6));
    let quiet = total / 4;
    let after = (total / 10).max(Duration::from_secs(1));
    let attack = total - quiet - after;
    // The drift windows: the after phase's length, at most a minute: the first of the quiet
    // phase and the last of the after phase.
    let window = after.min(Duration::from_secs(60));
    let kill_every = Duration::from_secs(args.kill_every_secs.max(1));
    let mut sup = Supervisor::start(
        exe,
        db,
        server::Flags {
            max_connections: args.max_connections,
            head_timeout_secs: args.head_timeout_secs,
            ssp_clients: args.clients,
        },
    )
    .await?;
    let control = Arc::new(Control {
        phase: AtomicU8::new(QUIET),
        stop: AtomicBool::new(false),
        restarting: AtomicBool::new(false),
        epoch: std::time::Instant::now(),
        restarted_ms: AtomicU64::new(u64::MAX),
        requests: AtomicU64::new(0),
        max_requests: args.max_requests,
        first_until_ms: window.as_millis() as u64,
        last_from_ms: AtomicU64::new(u64::MAX),
    });
    let clients: Vec<_> = (0..args.clients)
        .map(|k| tokio::spawn(traffic::client(k, sup.target(), control.clone())))
        .collect();
    let mut peaks = Peaks::default();
    observe(&sup, quiet, &mut peaks).await;

    control.phase.store(ATTACK, Ordering::Relaxed);
    let (stop_tx, stop_rx) = watch::channel(false);
    // Taken before the flood starts, as its end after its last answer: the span the rate
    // limit's allowance is computed over can only be too long, never too short.
    let attack_start = Instant::now();
    let attackers = tokio::spawn(hostile::run(sup.target(), stop_rx, args.attackers));
    let attack_end = attack_start + attack;
    let mut next_kill = Instant::now() + kill_every;
    while Instant::now() < attack_end {
        observe(&sup, next_kill.min(attack_end) - Instant::now(), &mut peaks).await;
        if Instant::now() >= next_kill && Instant::now() < attack_end {
            control.restarting.store(true, Ordering::Relaxed);
            sup.kill9_and_restart().await?;
            control.restarted();
            control.restarting.store(false, Ordering::Relaxed);
            next_kill += kill_every;
        }
    }
    let _ = stop_tx.send(true);
    let tally = attackers.await.context("attackers")?;
    let flood_span = attack_start.elapsed();

    let last_from = control.epoch.elapsed() + (after - window);
    (control.last_from_ms).store(last_from.as_millis() as u64, Ordering::Relaxed);
    control.phase.store(AFTER, Ordering::Relaxed);
    observe(&sup, after, &mut peaks).await;
    control.stop.store(true, Ordering::Relaxed);
    let mut stats = Vec::new();
    for c in clients {
        stats.push(c.await.context("client task")?);
    }
    let addr = sup.target().borrow().1;
    let answers_after = probe(addr).await;
    let durability = traffic::verify(addr, &stats).await?;
    let starts = sup.starts();
    sup.stop().await;
    let mut report = Report::new(stats, tally, durability, peaks, starts, answers_after);
    report.flood_allowed = flood_allowed(starts, flood_span);
    Ok(report)
}

/// The most invocations the rate limit can admit from one client in `span` over `starts`
/// server starts (each start begins with full buckets): a burst per start plus the
/// sustained rate, rounded up.
fn flood_allowed(starts: u64, span: Duration) -> u64 {
    let sustained = f64::from(server::SSP_RATE_PER_MINUTE) / 60.0 * span.as_secs_f64();
    starts * u64::from(server::SSP_RATE_BURST) + sustained.ceil() as u64
}

/// A fresh client after the attack: the manifest and a post must be answered.
async fn probe(addr: std::net::SocketAddr) -> bool {
    let Ok(mut c) = client::Conn::connect(addr).await else {
        return false;
    };
    let manifest = c.request("GET", "/v1/manifest", &[], None).await;
    let post = c
        .request(
            "POST",
            "/v1/messages",
            &["Authorization: Bearer demo-reader"],
            Some(br#"{"kind":"ask","body":"still there?"}"#),
        )
        .await;
    // demo-reader may not write: a 403 in the refusal shape is an answer too.
    matches!(manifest, Ok(r) if r.status == 200)
        && matches!(post, Ok(r) if r.status == 403 && r.json()["error"]["status"] == 403)
}

/// Everything the table shows and the assertions judge.
struct Report {
    latency: [Latency; 4],
    /// The well-behaved clients' latency in the first and the last drift window.
    drift: [Latency; 2],
    rate_limited: u64,
    /// Well-behaved SSP invocations refused 429 (must be 0).
    ssp_rate_limited: u64,
    /// What the rate limit may admit of the flood (see [`flood_allowed`]).
    flood_allowed: u64,
    restart_errors: u64,
    errors: Vec<String>,
    unexpected: Vec<String>,
    unexpected_count: u64,
    tally: hostile::Tally,
    durability: traffic::Durability,
    peaks: Peaks,
    starts: u64,
    answers_after: bool,
}

/// A latency distribution, microseconds.
struct Latency {
    count: usize,
    p50: u32,
    p99: u32,
    max: u32,
}

impl Latency {
    fn of(mut v: Vec<u32>) -> Self {
        v.sort_unstable();
        let at = |q: f64| {
            v.get(((v.len() as f64 * q).ceil() as usize).saturating_sub(1))
                .copied()
                .unwrap_or(0)
        };
        Self {
            count: v.len(),
            p50: at(0.50),
            p99: at(0.99),
            max: v.last().copied().unwrap_or(0),
        }
    }

    fn show(&self) -> String {
        format!(
            "{} req · p50 {:.2} ms · p99 {:.2} ms · max {:.1} ms",
            self.count,
            ms(self.p50),
            ms(self.p99),
            ms(self.max)
        )
    }
}

fn ms(micros: u32) -> f64 {
    f64::from(micros) / 1000.0
}

impl Report {
    fn new(
        stats: Vec<Stats>,
        tally: hostile::Tally,
        durability: traffic::Durability,
        peaks: Peaks,
        starts: u64,
        answers_after: bool,
    ) -> Self {
        let phase = |p: u8| {
            Latency::of(
                stats
                    .iter()
                    .flat_map(|s| s.latency[usize::from(p)].iter().copied())
                    .collect(),
            )
        };
        Self {
            latency: [phase(QUIET), phase(ATTACK), phase(AFTER), phase(RECOVERING)],
            drift: [
                Latency::of(stats.iter().flat_map(|s| s.first.iter().copied()).collect()),
                Latency::of(stats.iter().flat_map(|s| s.last.iter().copied()).collect()),
            ],
            rate_limited: stats.iter().map(|s| s.rate_limited).sum(),
            ssp_rate_limited: stats.iter().map(|s| s.ssp_rate_limited).sum(),
            flood_allowed: 0,
            restart_errors: stats.iter().map(|s| s.restart_errors).sum(),
            errors: stats.iter().flat_map(|s| s.other_errors.clone()).collect(),
            unexpected: stats
                .iter()
                .flat_map(|s| s.unexpected.clone())
                .take(10)
                .collect(),
            unexpected_count: stats.iter().map(|s| s.unexpected_count).sum(),
            tally,
            durability,
            peaks,
            starts,
            answers_after,
        }
    }

    fn p99_bound(&self, args: &SoakArgs) -> u32 {
        (f64::from(self.latency[0].p99.max(1000)) * args.p99_factor) as u32
    }

    /// The last window's p50 over the first's (the first counted as at least 100 µs).
    fn drift_ratio(&self) -> f64 {
        f64::from(self.drift[1].p50) / f64::from(self.drift[0].p50.max(100))
    }

    fn p99_held(&self, args: &SoakArgs) -> bool {
        self.latency[1].p99 <= self.p99_bound(args)
    }

    fn drift_held(&self, args: &SoakArgs) -> bool {
        self.drift[0].count > 0
            && self.drift[1].count > 0
            && self.drift_ratio() <= args.drift_factor
    }

    fn fd_bound(args: &SoakArgs) -> u64 {
        args.max_connections as u64 + FD_SLACK
    }

    /// The flood was refused (429) and admitted no more than the limit allows.
    fn flood_held(&self) -> bool {
        self.tally.flood.limited > 0 && self.tally.flood.admitted <= self.flood_allowed
    }

    /// The failed assertions, in words (empty: the soak passed).
    fn failures(&self, args: &SoakArgs) -> Vec<String> {
        let mut out = Vec::new();
        let mut check = |ok: bool, what: String| {
            if !ok {
                out.push(what);
            }
        };
        let d = &self.durability;
        check(
            d.lost.is_empty(),
            format!(
                "{} acknowledged posts lost: {:?}",
                d.lost.len(),
                &d.lost[..d.lost.len().min(5)]
            ),
        );
        check(d.reused == 0, format!("{} ids handed out twice", d.reused));
        check(
            self.peaks.rss <= args.rss_limit_mib * 1024 * 1024,
            format!("peak RSS {} MiB", self.peaks.rss >> 20),
        );
        check(
            self.peaks.fds <= Self::fd_bound(args),
            format!("peak fds {}", self.peaks.fds),
        );
        check(
            args.latency_report_only || self.p99_held(args),
            format!("p99 under attack {:.2} ms", ms(self.latency[1].p99)),
        );
        check(
            args.latency_report_only || self.drift_held(args),
            format!(
                "p50 drifted {:.2} ms ({} req) -> {:.2} ms ({} req): {:.2}x, allowed {}x \
                 with requests in both windows",
                ms(self.drift[0].p50),
                self.drift[0].count,
                ms(self.drift[1].p50),
                self.drift[1].count,
                self.drift_ratio(),
                args.drift_factor
            ),
        );
        check(
            self.unexpected_count == 0,
            format!(
                "{} unexpected answers: {:?}",
                self.unexpected_count, self.unexpected
            ),
        );
        check(
            self.errors.is_empty(),
            format!("transport errors outside restarts: {:?}", self.errors),
        );
        check(
            self.tally.unshaped == 0,
            format!("{} refusals without the refusal body", self.tally.unshaped),
        );
        check(
            self.ssp_rate_limited == 0,
            format!(
                "{} well-behaved SSP invocations answered 429",
                self.ssp_rate_limited
            ),
        );
        check(
            self.flood_held(),
            format!(
                "anonymous SSP flood not held back: {} answered 429, {} admitted (≤ {})",
                self.tally.flood.limited, self.tally.flood.admitted, self.flood_allowed
            ),
        );
        check(
            self.answers_after,
            "no answer once the attackers left".into(),
        );
        check(
            self.latency[..3].iter().all(|l| l.count > 0),
            "a phase without a single answered request".into(),
        );
        out
    }

    fn table(&self, args: &SoakArgs) -> String {
        let mut out = String::from("| soak | measured | bound | verdict |\n|---|---|---|---|\n");
        let rows = self.latency_rows(args).into_iter();
        let rows = rows
            .chain(self.bound_rows(args))
            .chain(self.attacker_rows());
        for [a, b, c, v] in rows {
            out.push_str(&format!("| {a} | {b} | {c} | {v} |\n"));
        }
        out
    }

    /// The latency of each phase and of restart recovery.
    fn latency_rows(&self, args: &SoakArgs) -> Vec<[String; 4]> {
        let l = &self.latency;
        vec![
            [
                "quiet".into(),
                l[0].show(),
                "reference".into(),
                String::new(),
            ],
            [
                "under attack".into(),
                l[1].show(),
                format!("p99 ≤ {:.2} ms", ms(self.p99_bound(args))),
                asserted(args, self.p99_held(args)),
            ],
            [
                "after attack".into(),
                l[2].show(),
                "answers".into(),
                verdict(self.answers_after && l[2].count > 0),
            ],
            [
                "p50 drift: first window → last window".into(),
                format!(
                    "{:.2} ms ({} req) → {:.2} ms ({} req): {:.2}×",
                    ms(self.drift[0].p50),
                    self.drift[0].count,
                    ms(self.drift[1].p50),
                    self.drift[1].count,
                    self.drift_ratio()
                ),
                format!("≤ {}×", args.drift_factor),
                asserted(args, self.drift_held(args)),
            ],
            [
                "restart recovery (1 s after each kill)".into(),
                l[3].show(),
                "reported".into(),
                String::new(),
            ],
        ]
    }

    /// Durability, resources and what the well-behaved clients were answered.
    fn bound_rows(&self, args: &SoakArgs) -> Vec<[String; 4]> {
        let d = &self.durability;
        let row = |name: &str, measured: String, bound: String, verdict: String| {
            [name.to_owned(), measured, bound, verdict]
        };
        vec![
            row(
                "acknowledged posts",
                format!("{} ({} rate-limited)", d.acked, self.rate_limited),
                String::new(),
                String::new(),
            ),
            row(
                "lost after kill -9",
                d.lost.len().to_string(),
                "0".into(),
                verdict(d.lost.is_empty()),
            ),
            row(
                "ids handed out twice",
                d.reused.to_string(),
                "0".into(),
                verdict(d.reused == 0),
            ),
            row(
                "server starts (kill -9)",
                format!(
                    "{} ({} requests cut by kills)",
                    self.starts, self.restart_errors
                ),
                String::new(),
                String::new(),
            ),
            row(
                "peak RSS",
                format!("{} MiB", self.peaks.rss >> 20),
                format!("≤ {} MiB", args.rss_limit_mib),
                verdict(self.peaks.rss <= args.rss_limit_mib << 20),
            ),
            row(
                "peak open fds",
                self.peaks.fds.to_string(),
                format!("≤ {}", Self::fd_bound(args)),
                verdict(self.peaks.fds <= Self::fd_bound(args)),
            ),
            row(
                "unexpected answers",
                self.unexpected_count.to_string(),
                "0".into(),
                verdict(self.unexpected_count == 0 && self.errors.is_empty()),
            ),
            row(
                "well-behaved SSP answered 429",
                self.ssp_rate_limited.to_string(),
                "0".into(),
                verdict(self.ssp_rate_limited == 0),
            ),
        ]
    }

    /// What the attackers were answered, the flood apart.
    fn attacker_rows(&self) -> Vec<[String; 4]> {
        let t = &self.tally;
        let statuses: Vec<String> = t.statuses.iter().map(|(s, n)| format!("{s}×{n}")).collect();
        let f = &t.flood;
        let from = f.source.map_or("127.0.0.1".into(), |s| s.to_string());
        vec![
            [
                "attackers: answers".into(),
                format!("{} · {} cut", statuses.join(" "), t.cut),
                String::new(),
                String::new(),
            ],
            [
                format!("attackers: anonymous SSP flood (from {from})"),
                format!(
                    "{} invocations · {} answered 429 (SSP shape, Retry-After) · {} admitted",
                    f.answered, f.limited, f.admitted
                ),
                format!("429 > 0 · admitted ≤ {}", self.flood_allowed),
                verdict(self.flood_held()),
            ],
            [
                "attackers: unshaped refusals".into(),
                t.unshaped.to_string(),
                "0".into(),
                verdict(t.unshaped == 0),
            ],
        ]
    }
}

fn verdict(ok: bool) -> String {
    if ok { "ok" } else { "FAIL" }.into()
}

/// The verdict of a latency bound, or `not asserted` under `--latency-report-only`.
fn asserted(args: &SoakArgs, ok: bool) -> String {
    if args.latency_report_only {
        "not asserted".into()
    } else {
        verdict(ok)
    }
}
