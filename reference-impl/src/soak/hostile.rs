//! The hostile side of the soak: idle sockets, slowloris heads, oversized bodies and heads,
//! amplifying SSP inputs, and an anonymous SSP invocation flood that the provider's rate
//! limit must hold back. Each attacker loops until told to stop and counts what the server
//! answered; any refusal it receives must be in the refusal shape (SSP's unified error
//! shape, with `Retry-After`, for the flood's 429s).

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Duration;

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::watch;

use super::client::{self, Conn, Reply};
use super::server::Target;

/// Bound on any single hostile exchange.
const EXCHANGE: Duration = Duration::from_secs(15);
/// The flood's own loopback address where the system has one (Linux: all of 127.0.0.0/8):
/// the limit then refuses the flood in a bucket of its own and the amplifier, which calls
/// from 127.0.0.1, still gets its inputs parsed. Elsewhere both share 127.0.0.1's bucket.
const FLOOD_SOURCE: IpAddr = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2));

/// What the anonymous SSP flood saw.
#[derive(Default, Debug)]
pub(super) struct Flood {
    /// Invocations answered (any status).
    pub answered: u64,
    /// Answered 429 in SSP's unified error shape with a `Retry-After`.
    pub limited: u64,
    /// Admitted (202): what the limit let through.
    pub admitted: u64,
    /// The address it called from (`None`: the default one, 127.0.0.1).
    pub source: Option<IpAddr>,
}

/// What the attackers saw.
#[derive(Default, Debug)]
pub(super) struct Tally {
    /// Statuses of the answers, by code.
    pub statuses: BTreeMap<u16, u64>,
    /// Answers to hostile requests that were refusals without the JSON refusal body.
    pub unshaped: u64,
    /// Connections the server closed or cut (idle, slowloris, mid-upload).
    pub cut: u64,
    /// The anonymous SSP flood (its 202s and 429s are here, not in `statuses`).
    pub flood: Flood,
}

impl Tally {
    fn merge(&mut self, other: Self) {
        for (k, v) in other.statuses {
            *self.statuses.entry(k).or_default() += v;
        }
        self.unshaped += other.unshaped;
        self.cut += other.cut;
        self.flood.answered += other.flood.answered;
        self.flood.limited += other.flood.limited;
        self.flood.admitted += other.flood.admitted;
        self.flood.source = self.flood.source.or(other.flood.source);
    }
}

/// The kinds of attacker.
#[derive(Debug, Clone, Copy)]
pub(super) enum Attack {
    /// Connects and sends nothing.
    Idle,
    /// Sends a head one header line at a time, never finishing it.
    Slowloris,
    /// A 2 MiB Parley post, a 2 MiB MCP call, a 100 KiB header, a 10 KiB URI.
    Oversized,
    /// An SSP echo whose input is a large array (memory amplification).
    Amplify,
}

/// Runs `count` idle, slowloris and oversized attackers, one amplifier and one flood until
/// `stop` turns true; returns their merged tally.
pub(super) async fn run(target: Target, stop: watch::Receiver<bool>, count: usize) -> Tally {
    let mut tasks = vec![tokio::spawn(flood(target.clone(), stop.clone()))];
    for attack in [
        Attack::Idle,
        Attack::Slowloris,
        Attack::Oversized,
        Attack::Amplify,
    ] {
        // One amplifier: the point is that it is present, not that it alone exhausts memory.
        let n = if matches!(attack, Attack::Amplify) {
            1
        } else {
            count
        };
        for _ in 0..n {
            let (target, stop) = (target.clone(), stop.clone());
            tasks.push(tokio::spawn(attacker(attack, target, stop)));
        }
    }
    let mut tally = Tally::default();
    for t in tasks {
        if let Ok(t) = t.await {
            tally.merge(t);
        }
    }
    tally
}

async fn attacker(attack: Attack, target: Target, mut stop: watch::Receiver<bool>) -> Tally {
    let mut tally = Tally::default();
    // Paced: the point is to hold the server's resources, not to saturate the CPU that the
    // well-behaved clients and the server share with the attackers.
    let pace = match attack {
        Attack::Amplify => Duration::from_millis(500),
        _ => Duration::from_millis(100),
    };
    for round in 0u64.. {
        let addr = target.borrow().1;
        tokio::select! {
            _ = one(attack, addr, round, &mut tally) => {}
            _ = stop.wait_for(|s| *s) => break,
        }
        tokio::select! {
            _ = tokio::time::sleep(pace) => {}
            _ = stop.wait_for(|s| *s) => break,
        }
    }
    tally
}

async fn one(attack: Attack, addr: SocketAddr, round: u64, tally: &mut Tally) {
    let _ = tokio::time::timeout(EXCHANGE, async {
        match attack {
            Attack::Idle => hold(addr, None, tally).await,
            Attack::Slowloris => hold(addr, Some(round), tally).await,
            Attack::Oversized => oversized(addr, round, tally).await,
            Attack::Amplify => amplify(addr, tally).await,
        }
    })
    .await;
}

/// Holds a connection, trickling header lines when `slow`, until the server closes it.
async fn hold(addr: SocketAddr, slow: Option<u64>, tally: &mut Tally) {
    let Ok(mut stream) = TcpStream::connect(addr).await else {
        return;
    };
    if slow.is_some() {
        let _ = stream
            .write_all(b"GET /v1/manifest HTTP/1.1\r\nHost: x\r\n")
            .await;
    }
    let mut answer = Vec::new();
    let mut buf = [0u8; 1024];
    for line in 0u32.. {
        let read = tokio::time::timeout(Duration::from_millis(700), stream.read(&mut buf)).await;
        match read {
            Ok(Ok(0) | Err(_)) => break,
            Ok(Ok(n)) => answer.extend_from_slice(&buf[..n]),
            Err(_) if slow.is_some() => {
                if stream
                    .write_all(format!("X-Slow-{line}: a\r\n").as_bytes())
                    .await
                    .is_err()
                {
                    break;
                }
            }
            Err(_) => {}
        }
    }
    tally.cut += 1;
    if !answer.is_empty() {
        check_raw(&answer, tally);
    }
}

async fn oversized(addr: SocketAddr, round: u64, tally: &mut Tally) {
    let big = format!(
        "{{\"kind\":\"ask\",\"body\":\"{}\"}}",
        "x".repeat(2 * 1024 * 1024)
    );
    let header = format!("X-Big: {}", "h".repeat(100 * 1024));
    let uri = format!("/v1/threads/{}", "t".repeat(10 * 1024));
    let auth = "Authorization: Bearer demo-agent-a";
    let mcp = [
        "Accept: application/json, text/event-stream",
        "MCP-Protocol-Version: 2025-11-25",
    ];
    let Ok(mut c) = Conn::connect(addr).await else {
        return;
    };
    let reply = match round % 4 {
        0 => {
            c.request("POST", "/v1/messages", &[auth], Some(big.as_bytes()))
                .await
        }
        1 => {
            c.request(
                "POST",
                "/mcp",
                &[auth, mcp[0], mcp[1]],
                Some(big.as_bytes()),
            )
            .await
        }
        2 => c.request("GET", "/v1/manifest", &[&header], None).await,
        _ => c.request("GET", &uri, &[auth], None).await,
    };
    match reply {
        Ok(r) => {
            *tally.statuses.entry(r.status).or_default() += 1;
            // MCP refusals are JSON-RPC errors; Parley and transport ones the refusal shape.
            let shaped = r.json()["error"]["status"] == r.status
                || (round % 4 == 1 && r.json()["error"]["code"].is_i64());
            if r.status >= 400 && !shaped {
                tally.unshaped += 1;
            }
        }
        Err(_) => tally.cut += 1,
    }
}

async fn amplify(addr: SocketAddr, tally: &mut Tally) {
    let zeros = vec![0u8; 30_000];
    let call = json!({"caller": {"id": "soak-amplifier", "type": "service"},
        "skill_id": "conform/echo", "inputs": {"message": "amp", "metadata": {"pad": zeros}}});
    let Ok(mut c) = Conn::connect(addr).await else {
        return;
    };
    match c
        .request(
            "POST",
            "/ssp/invoke/echo",
            &[],
            Some(call.to_string().as_bytes()),
        )
        .await
    {
        Ok(r) => *tally.statuses.entry(r.status).or_default() += 1,
        Err(_) => tally.cut += 1,
    }
}

/// An answer read off a raw socket: if it is a refusal, it must carry the refusal body.
fn check_raw(raw: &[u8], tally: &mut Tally) {
    let text = String::from_utf8_lossy(raw);
    let status = text
        .strip_prefix("HTTP/1.1 ")
        .and_then(|t| t.get(..3))
        .and_then(|s| s.parse::<u16>().ok())
        .unwrap_or(0);
    *tally.statuses.entry(status).or_default() += 1;
    let body = text.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    let json: serde_json::Value = serde_json::from_str(body).unwrap_or_default();
    if json["error"]["status"] != status {
        tally.unshaped += 1;
    }
}

/// The anonymous SSP flood: echo invocations without a credential, back to back on one
/// kept-alive connection from one address (no pacing: as fast as the server answers),
/// following the server across restarts until told to stop.
async fn flood(mut target: Target, mut stop: watch::Receiver<bool>) -> Tally {
    let source = client::bindable(FLOOD_SOURCE).then_some(FLOOD_SOURCE);
    let mut tally = Tally::default();
    tally.flood.source = source;
    let call = json!({"caller": {"id": "soak-flood", "type": "service"},
        "skill_id": "conform/echo", "inputs": {"message": "flood"}})
    .to_string();
    let mut conn: Option<(u64, Conn)> = None;
    while !*stop.borrow() {
        let (generation, addr) = *target.borrow_and_update();
        let mut c = match conn.take() {
            Some((g, c)) if g == generation && c.reusable => c,
            _ => match Conn::connect_from(addr, source).await {
                Ok(c) => c,
                Err(_) => {
                    // The server is being restarted: wait for the next one (bounded).
                    tokio::select! {
                        _ = tokio::time::timeout(Duration::from_secs(2), target.changed()) => {}
                        _ = stop.wait_for(|s| *s) => break,
                    }
                    continue;
                }
            },
        };
        let send = c.request("POST", "/ssp/invoke/echo", &[], Some(call.as_bytes()));
        let reply = tokio::select! {
            r = tokio::time::timeout(EXCHANGE, send) => r,
            _ = stop.wait_for(|s| *s) => break,
        };
        match reply {
            Ok(Ok(r)) => {
                flood_answer(&r, &mut tally);
                conn = Some((generation, c));
            }
            // Cut by a kill -9 (or no answer within the exchange bound): a fresh connection.
            _ => tally.cut += 1,
        }
    }
    tally
}

/// Counts one answer to the flood: admitted, rate limited in the SSP shape, or another
/// status (which must be a shaped refusal too).
fn flood_answer(r: &Reply, tally: &mut Tally) {
    tally.flood.answered += 1;
    match r.status {
        200..=202 => tally.flood.admitted += 1,
        429 if rate_limited_shape(r) => tally.flood.limited += 1,
        status => {
            *tally.statuses.entry(status).or_default() += 1;
            // Another refusal: SSP's shape, or the transport's (503 busy, 408) — but a 429
            // outside the SSP shape with `Retry-After` is a malformed rate-limit answer.
            let e = &r.json()["error"];
            let shaped = status != 429
                && ((e["code"].is_string() && e["message"].is_string()) || e["status"] == status);
            if !shaped {
                tally.unshaped += 1;
            }
        }
    }
}

/// SSP's unified error shape for a rate limit (seed §8.2, SSP-ERR-3): `error.code`
/// `ENDPOINT_UNREACHABLE`, a message, `error.retry`, and a `Retry-After` of whole seconds
/// that covers `error.retry.suggested_delay_ms`.
fn rate_limited_shape(r: &Reply) -> bool {
    let v = r.json();
    let e = &v["error"];
    let delay_ms = e["retry"]["suggested_delay_ms"].as_u64();
    let retry_after = r.retry_after.as_deref().and_then(|s| s.parse::<u64>().ok());
    e["code"] == "ENDPOINT_UNREACHABLE"
        && e["message"].is_string()
        && matches!((delay_ms, retry_after), (Some(ms), Some(secs)) if secs * 1000 >= ms)
}
