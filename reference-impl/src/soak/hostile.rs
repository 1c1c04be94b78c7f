//! The hostile side of the soak: idle sockets, slowloris heads, oversized bodies and heads,
//! amplifying SSP inputs. Each attacker loops until told to stop and counts what the server
//! answered; any refusal it receives must be in the refusal shape.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::Duration;

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::watch;

use super::client::Conn;
use super::server::Target;

/// Bound on any single hostile exchange.
const EXCHANGE: Duration = Duration::from_secs(15);

/// What the attackers saw.
#[derive(Default, Debug)]
pub(super) struct Tally {
    /// Statuses of the answers, by code.
    pub statuses: BTreeMap<u16, u64>,
    /// Answers to hostile requests that were refusals without the JSON refusal body.
    pub unshaped: u64,
    /// Connections the server closed or cut (idle, slowloris, mid-upload).
    pub cut: u64,
}

impl Tally {
    fn merge(&mut self, other: Self) {
        for (k, v) in other.statuses {
            *self.statuses.entry(k).or_default() += v;
        }
        self.unshaped += other.unshaped;
        self.cut += other.cut;
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

/// Runs `count` idle, slowloris and oversized attackers and one amplifier until `stop`
/// turns true; returns their merged tally.
pub(super) async fn run(target: Target, stop: watch::Receiver<bool>, count: usize) -> Tally {
    let mut tasks = Vec::new();
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
