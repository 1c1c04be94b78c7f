//! The per-client invocation rate limit (issue 13 §3): one token bucket per client — the
//! credential that authenticated the invocation, else the peer's IP address (IPv6 by its
//! /64, the block one host usually holds) — refilled at the configured sustained rate up to
//! the burst size. A refused invocation learns how long to wait (`429` + `Retry-After`).
//!
//! The table of buckets is bounded: past [`MAX_CLIENTS`] the idle (full) buckets are
//! dropped, and if every client is active, newcomers share one overflow bucket, so many
//! addresses cannot grow memory either.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Most clients tracked at once.
pub const MAX_CLIENTS: usize = 65_536;
const OVERFLOW: &str = "overflow";

#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

/// Token buckets per client.
#[derive(Debug)]
pub struct RateLimiter {
    per_minute: u32,
    burst: u32,
    buckets: Mutex<HashMap<String, Bucket>>,
}

/// The bucket key of an invocation: its credential's fingerprint, else its peer address
/// (`None` in process, without a socket: one shared bucket).
pub fn client_key(credential: Option<&str>, peer: Option<SocketAddr>) -> String {
    if let Some(c) = credential {
        return format!("credential:{c}");
    }
    match peer.map(|p| p.ip().to_canonical()) {
        Some(IpAddr::V4(ip)) => format!("ip:{ip}"),
        Some(IpAddr::V6(ip)) => {
            let s = ip.segments();
            format!("ip:{:x}:{:x}:{:x}:{:x}::/64", s[0], s[1], s[2], s[3])
        }
        None => "local".into(),
    }
}

impl RateLimiter {
    /// `per_minute` sustained, bursts of `burst` (at least 1).
    pub fn new(per_minute: u32, burst: u32) -> Self {
        Self {
            per_minute: per_minute.max(1),
            burst: burst.max(1),
            buckets: Mutex::new(HashMap::new()),
        }
    }

    /// The sustained rate.
    pub fn per_minute(&self) -> u32 {
        self.per_minute
    }

    /// The burst size.
    pub fn burst(&self) -> u32 {
        self.burst
    }

    fn refilled(&self, b: Bucket, now: Instant) -> f64 {
        let per_sec = f64::from(self.per_minute) / 60.0;
        let elapsed = now.saturating_duration_since(b.at).as_secs_f64();
        (b.tokens + elapsed * per_sec).min(f64::from(self.burst))
    }

    /// Takes one invocation from `client`'s bucket at `now`; `Err(wait)`: none left, one
    /// will be in `wait`.
    pub fn take(&self, client: &str, now: Instant) -> Result<(), Duration> {
        // A poisoned lock means a panic elsewhere mid-update; the buckets are still valid.
        let mut buckets = self.buckets.lock().unwrap_or_else(|p| p.into_inner());
        let mut key = client;
        if !buckets.contains_key(key) && buckets.len() >= MAX_CLIENTS {
            let full = f64::from(self.burst);
            buckets.retain(|_, b| self.refilled(*b, now) < full);
            if buckets.len() >= MAX_CLIENTS {
                key = OVERFLOW;
            }
        }
        let full = Bucket {
            tokens: f64::from(self.burst),
            at: now,
        };
        let b = buckets.entry(key.to_string()).or_insert(full);
        let tokens = self.refilled(*b, now);
        if tokens >= 1.0 {
            *b = Bucket {
                tokens: tokens - 1.0,
                at: now,
            };
            Ok(())
        } else {
            let per_sec = f64::from(self.per_minute) / 60.0;
            Err(Duration::from_secs_f64((1.0 - tokens) / per_sec))
        }
    }
}

#[cfg(test)]
#[expect(clippy::unwrap_used)] // tests: a panic is the failure report
mod tests {
    use super::*;

    #[test]
    fn bursts_then_the_sustained_rate_per_client() {
        let l = RateLimiter::new(60, 3); // one per second after a burst of 3
        let t0 = Instant::now();
        for _ in 0..3 {
            assert_eq!(l.take("a", t0), Ok(()));
        }
        let wait = l.take("a", t0).unwrap_err();
        assert!(wait > Duration::from_millis(990) && wait <= Duration::from_secs(1));
        // Another client has its own bucket.
        assert_eq!(l.take("b", t0), Ok(()));
        // Refill: one per second, never beyond the burst.
        assert_eq!(l.take("a", t0 + Duration::from_secs(1)), Ok(()));
        assert!(l.take("a", t0 + Duration::from_secs(1)).is_err());
        let later = t0 + Duration::from_secs(3600);
        for _ in 0..3 {
            assert_eq!(l.take("a", later), Ok(()));
        }
        assert!(l.take("a", later).is_err());
    }

    #[test]
    fn keys_are_credentials_else_addresses() {
        let v4: SocketAddr = "192.0.2.7:1234".parse().unwrap();
        let v6a: SocketAddr = "[2001:db8:1:2:aaaa::1]:1".parse().unwrap();
        let v6b: SocketAddr = "[2001:db8:1:2:bbbb::9]:2".parse().unwrap();
        let mapped: SocketAddr = "[::ffff:192.0.2.7]:9".parse().unwrap();
        assert_eq!(client_key(None, Some(v4)), "ip:192.0.2.7");
        assert_eq!(client_key(None, Some(mapped)), "ip:192.0.2.7");
        assert_eq!(client_key(None, Some(v6a)), client_key(None, Some(v6b)));
        assert_eq!(
            client_key(Some("api_key:ab"), Some(v4)),
            "credential:api_key:ab"
        );
        assert_eq!(client_key(None, None), "local");
    }

    #[test]
    fn the_table_of_clients_is_bounded() {
        let l = RateLimiter::new(60, 1);
        let t0 = Instant::now();
        for n in 0..MAX_CLIENTS {
            assert_eq!(l.take(&format!("c{n}"), t0), Ok(()));
        }
        // Every bucket is empty (active): a newcomer lands in the shared overflow bucket.
        assert_eq!(l.take("new-1", t0), Ok(()));
        assert!(l.take("new-2", t0).is_err());
        // Once the others refilled (idle), they are dropped and newcomers get their own.
        let later = t0 + Duration::from_secs(2);
        assert_eq!(l.take("new-2", later), Ok(()));
        assert!(l.buckets.lock().unwrap().len() < 10);
    }
}
