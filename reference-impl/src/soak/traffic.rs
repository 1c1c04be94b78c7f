//! The well-behaved side of the soak: 32 clients of mixed Parley (HTTP and MCP) and SSP
//! traffic, every acknowledged post remembered, latencies kept per phase, SSP rate-limit
//! refusals counted; and the final check that every acknowledged post is still there, under
//! its id, after all the kills.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::client::{Conn, Reply};
use super::server::{SSP_INTERVAL, Target, ssp_key};

/// Writer tokens of the demo set: each has its own write quota.
const TOKENS: [&str; 5] = [
    "demo-agent-a",
    "demo-agent-b",
    "demo-moderator",
    "demo-verifier",
    "demo-human",
];
/// Messages per thread before a client opens a new one (keeps `read_thread` bounded).
const THREAD_LEN: u32 = 20;
/// Unexpected answers kept verbatim for the report.
const KEEP_UNEXPECTED: usize = 10;
/// The soak's phases, as the clients see them.
pub(super) const QUIET: u8 = 0;
/// Attackers and kills running.
pub(super) const ATTACK: u8 = 1;
/// Attackers gone.
pub(super) const AFTER: u8 = 2;
/// Not a phase: the first [`RECOVERY`] after each restart, kept apart from the attack phase
/// (a restart's cost — 32 clients reconnecting to a cold server — is not the attackers').
pub(super) const RECOVERING: u8 = 3;
/// How long after a restart a request counts as [`RECOVERING`].
pub(super) const RECOVERY: Duration = Duration::from_secs(1);

/// State shared by the orchestrator and the clients.
pub(super) struct Control {
    pub phase: AtomicU8,
    pub stop: AtomicBool,
    /// Set while a kill/restart is under way: a failure then is the kill's, not the server's.
    pub restarting: AtomicBool,
    /// When the soak started, and milliseconds from then to the last restart (`u64::MAX`:
    /// none yet).
    pub epoch: Instant,
    pub restarted_ms: AtomicU64,
    pub requests: AtomicU64,
    pub max_requests: u64,
    /// The drift windows (issue 29), milliseconds from [`Control::epoch`]: a request of the
    /// quiet phase started before `first_until_ms` counts in the first window, one of the
    /// after phase started at or after `last_from_ms` in the last (set when that phase
    /// starts, which a restart at the attack's end may delay: `u64::MAX` until then).
    pub first_until_ms: u64,
    pub last_from_ms: AtomicU64,
}

impl Control {
    /// Records that a restart just completed.
    pub(super) fn restarted(&self) {
        let ms = self
            .epoch
            .elapsed()
            .as_millis()
            .min(u128::from(u64::MAX - 1)) as u64;
        self.restarted_ms.store(ms, Ordering::Relaxed);
    }

    fn recovering(&self) -> bool {
        let at = self.restarted_ms.load(Ordering::Relaxed);
        at != u64::MAX
            && (self.epoch.elapsed().as_millis() as u64).saturating_sub(at)
                < RECOVERY.as_millis() as u64
    }
}

/// One acknowledged post.
pub(super) struct Ack {
    pub thread: String,
    pub id: String,
    pub body: String,
}

/// What one client saw.
#[derive(Default)]
pub(super) struct Stats {
    /// Latencies (µs) of answered requests, per phase (and [`RECOVERING`]), excluding
    /// those spanning a restart.
    pub latency: [Vec<u32>; 4],
    /// Latencies (µs) of the requests started in the first and in the last drift window
    /// (see [`Control::first_until_ms`]).
    pub first: Vec<u32>,
    pub last: Vec<u32>,
    /// Posts refused 429 by the Parley write quota (expected: the quota is per token).
    pub rate_limited: u64,
    /// SSP invocations refused 429: must stay 0 (each client has its own key and keeps under
    /// the rate).
    pub ssp_rate_limited: u64,
    pub restart_errors: u64,
    pub other_errors: Vec<String>,
    pub unexpected: Vec<String>,
    pub unexpected_count: u64,
    pub acks: Vec<Ack>,
    pub threads: Vec<String>,
}

impl Stats {
    fn unexpected(&mut self, what: String) {
        self.unexpected_count += 1;
        if self.unexpected.len() < KEEP_UNEXPECTED {
            self.unexpected.push(what);
        }
    }
}

/// The thread a client is writing into.
struct Thread {
    id: String,
    len: u32,
}

/// One well-behaved client until told to stop.
pub(super) async fn client(k: usize, mut target: Target, control: Arc<Control>) -> Stats {
    let token = TOKENS[k % TOKENS.len()];
    let auth = format!("Authorization: Bearer {token}");
    let ssp_auth = format!("X-API-Key: {}", ssp_key(k));
    let mut last_ssp: Option<Instant> = None;
    let mut stats = Stats::default();
    let mut conn: Option<(u64, Conn)> = None;
    let mut thread: Option<Thread> = None;
    let mut seq = 0u64;
    while !control.stop.load(Ordering::Relaxed)
        && control.requests.fetch_add(1, Ordering::Relaxed) < control.max_requests
    {
        seq += 1;
        let (generation, addr) = *target.borrow_and_update();
        if conn
            .as_ref()
            .is_none_or(|(g, c)| *g != generation || !c.reusable)
        {
            match Conn::connect(addr).await {
                Ok(c) => conn = Some((generation, c)),
                Err(_) => {
                    // The server is being restarted: wait for the next one (bounded).
                    let _ = tokio::time::timeout(Duration::from_secs(2), target.changed()).await;
                    continue;
                }
            }
        }
        let Some((_, c)) = conn.as_mut() else {
            continue;
        };
        let phase = if control.recovering() {
            RECOVERING
        } else {
            control.phase.load(Ordering::Relaxed).min(AFTER)
        };
        let started = Instant::now();
        let ssp_due = last_ssp.is_none_or(|t| started.duration_since(t) >= SSP_INTERVAL);
        let op = Op::pick(seq, thread.as_ref(), ssp_due);
        if matches!(op, Op::SspInvoke) {
            last_ssp = Some(started);
        }
        // Parley calls carry the client's bearer token, SSP invocations its own API key.
        let credential = if matches!(op, Op::SspInvoke) {
            &ssp_auth
        } else {
            &auth
        };
        match op.send(c, credential, k, seq, thread.as_ref()).await {
            Ok(reply) => {
                let same_server =
                    target.borrow().0 == generation && !control.restarting.load(Ordering::Relaxed);
                if same_server {
                    let micros = started.elapsed().as_micros().min(u128::from(u32::MAX)) as u32;
                    stats.latency[usize::from(phase)].push(micros);
                    let at = started.duration_since(control.epoch).as_millis() as u64;
                    if phase == QUIET && at < control.first_until_ms {
                        stats.first.push(micros);
                    } else if phase == AFTER && at >= control.last_from_ms.load(Ordering::Relaxed) {
                        stats.last.push(micros);
                    }
                }
                op.record(&reply, &mut stats, &mut thread, k, seq);
            }
            Err(err) => {
                conn = None;
                if control.restarting.load(Ordering::Relaxed) || target.borrow().0 != generation {
                    stats.restart_errors += 1;
                } else if stats.other_errors.len() < KEEP_UNEXPECTED {
                    stats.other_errors.push(format!("{op:?}: {err}"));
                }
            }
        }
    }
    stats
}

/// The request mix.
#[derive(Debug, Clone, Copy)]
enum Op {
    Open,
    Post,
    ReadThread,
    Events,
    Manifest,
    Inbox,
    McpReadThread,
    /// `conform/slow-task` (`delay_ms` 0) with the client's own API key: the demo skill with
    /// `api_key` auth. On an `auth: none` skill (echo) the provider ignores any credential
    /// and keys the rate limit by address, which all clients share (127.0.0.1).
    SspInvoke,
}

impl Op {
    /// The mix: per 8 requests two posts (or a new thread), a thread read over HTTP and one
    /// over MCP, the manifest, the inbox, the events and one SSP invocation — a manifest read
    /// instead when the client invoked within [`SSP_INTERVAL`] (`ssp_due` false).
    fn pick(seq: u64, thread: Option<&Thread>, ssp_due: bool) -> Self {
        let Some(t) = thread else { return Self::Open };
        match seq % 8 {
            0 | 4 if t.len >= THREAD_LEN => Self::Open,
            0 | 4 => Self::Post,
            1 => Self::ReadThread,
            2 => Self::Manifest,
            3 => Self::Inbox,
            5 => Self::McpReadThread,
            6 if ssp_due => Self::SspInvoke,
            6 => Self::Manifest,
            _ => Self::Events,
        }
    }

    async fn send(
        self,
        c: &mut Conn,
        auth: &str,
        k: usize,
        seq: u64,
        thread: Option<&Thread>,
    ) -> std::io::Result<Reply> {
        let tid = thread.map_or("th_0", |t| t.id.as_str());
        match self {
            Self::Open => {
                let body = json!({"kind": "ask", "body": body_text(k, seq), "from": {"extension": format!("r{k}")}});
                c.request(
                    "POST",
                    "/v1/messages",
                    &[auth],
                    Some(body.to_string().as_bytes()),
                )
                .await
            }
            Self::Post => {
                let body = json!({"kind": "inform", "thread": tid, "body": body_text(k, seq), "from": {"extension": format!("c{k}")}});
                c.request(
                    "POST",
                    "/v1/messages",
                    &[auth],
                    Some(body.to_string().as_bytes()),
                )
                .await
            }
            Self::ReadThread => {
                c.request("GET", &format!("/v1/threads/{tid}"), &[auth], None)
                    .await
            }
            Self::Events => {
                c.request("GET", &format!("/v1/threads/{tid}/events"), &[auth], None)
                    .await
            }
            Self::Manifest => c.request("GET", "/v1/manifest", &[], None).await,
            Self::Inbox => c.request("GET", "/v1/inbox?limit=10", &[auth], None).await,
            Self::McpReadThread => {
                let call = json!({"jsonrpc": "2.0", "id": seq, "method": "tools/call",
                    "params": {"name": "read_thread", "arguments": {"thread": tid}}});
                let headers = [
                    auth,
                    "Accept: application/json, text/event-stream",
                    "MCP-Protocol-Version: 2025-11-25",
                ];
                c.request("POST", "/mcp", &headers, Some(call.to_string().as_bytes()))
                    .await
            }
            Self::SspInvoke => {
                let call = json!({"caller": {"id": format!("soak-{k}"), "type": "service"},
                    "skill_id": "conform/slow-task", "inputs": {"delay_ms": 0}});
                c.request(
                    "POST",
                    "/ssp/invoke/slow-task",
                    &[auth],
                    Some(call.to_string().as_bytes()),
                )
                .await
            }
        }
    }

    fn record(
        self,
        reply: &Reply,
        stats: &mut Stats,
        thread: &mut Option<Thread>,
        k: usize,
        seq: u64,
    ) {
        let ok = match (self, reply.status) {
            (Self::Open | Self::Post, 201) => {
                let v = reply.json();
                let id = v["message"]["id"].as_str().unwrap_or_default().to_owned();
                let tid = v["thread"]["id"].as_str().unwrap_or_default().to_owned();
                if matches!(self, Self::Open) {
                    stats.threads.push(tid.clone());
                    *thread = Some(Thread {
                        id: tid.clone(),
                        len: 1,
                    });
                } else if let Some(t) = thread.as_mut() {
                    t.len += 1;
                }
                stats.acks.push(Ack {
                    thread: tid,
                    id,
                    body: body_text(k, seq),
                });
                true
            }
            (Self::Open | Self::Post, 429) => {
                stats.rate_limited += 1;
                true
            }
            (Self::SspInvoke, 200..=202) => true,
            (Self::SspInvoke, 429) => {
                // Counted apart: the row "well-behaved SSP answered 429" must stay 0.
                stats.ssp_rate_limited += 1;
                true
            }
            (_, 200) => true,
            _ => false,
        };
        if !ok {
            let body =
                String::from_utf8_lossy(&reply.body[..reply.body.len().min(300)]).into_owned();
            stats.unexpected(format!("{self:?} → {}: {body}", reply.status));
        }
    }
}

fn body_text(k: usize, seq: u64) -> String {
    format!("soak client {k} message {seq}")
}

/// What the final check found.
pub(super) struct Durability {
    pub acked: usize,
    pub lost: Vec<String>,
    pub reused: usize,
}

/// Reads every thread the clients opened and checks each acknowledged post is there with
/// its body, and that no id was handed out twice.
pub(super) async fn verify(
    addr: std::net::SocketAddr,
    stats: &[Stats],
) -> anyhow::Result<Durability> {
    let mut seen = HashSet::new();
    let ids = stats
        .iter()
        .flat_map(|s| s.acks.iter().map(|a| a.id.as_str()));
    let threads = stats
        .iter()
        .flat_map(|s| s.threads.iter().map(String::as_str));
    let reused = ids.chain(threads).filter(|id| !seen.insert(*id)).count();
    let mut stored: HashMap<String, (String, String)> = HashMap::new();
    let mut conn = Conn::connect(addr).await?;
    for tid in stats.iter().flat_map(|s| &s.threads) {
        if !conn.reusable {
            conn = Conn::connect(addr).await?;
        }
        let reply = conn
            .request(
                "GET",
                &format!("/v1/threads/{tid}"),
                &["Authorization: Bearer demo-reader"],
                None,
            )
            .await?;
        anyhow::ensure!(reply.status == 200, "read_thread {tid}: {}", reply.status);
        collect(&reply.json()["messages"], tid, &mut stored);
    }
    let acks: Vec<&Ack> = stats.iter().flat_map(|s| &s.acks).collect();
    let lost = acks
        .iter()
        .filter(|a| stored.get(&a.id) != Some(&(a.thread.clone(), a.body.clone())))
        .map(|a| format!("{} in {}", a.id, a.thread))
        .collect();
    Ok(Durability {
        acked: acks.len(),
        lost,
        reused,
    })
}

fn collect(messages: &Value, thread: &str, out: &mut HashMap<String, (String, String)>) {
    for m in messages.as_array().into_iter().flatten() {
        if let (Some(id), Some(body)) = (m["id"].as_str(), m["body"].as_str()) {
            out.insert(id.to_owned(), (thread.to_owned(), body.to_owned()));
        }
        collect(&m["replies"], thread, out);
    }
}
