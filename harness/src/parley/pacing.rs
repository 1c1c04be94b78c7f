//! Write pacing under the target's quotas (PV-TR-5), so that no check meets a `429` it did
//! not provoke — a `429 rate_limited` on a step that expects a success is a false failure
//! caused by the harness itself, and real deployments declare low quotas.
//!
//! The pre-flight stores one [`Pacer`] in the target: per token, the quota `whoami` reports
//! (else the manifest's `limits.writes_per_minute`) and the times of the writes sent in the
//! last minute. Before a write, [`Pacer::admit`] waits until the token's sliding minute has
//! room — or, when the role has several tokens (one identity), until one of them has, and
//! names the one to send with. The quota role (`limited`) is never paced: its checks exist
//! to exhaust it. [`Pacer::least_time`] gives the estimate printed before a run.
//!
//! The server's window may still hold writes from an earlier run against the same process;
//! those 429s are handled by the runner (wait `Retry-After`, retry the step once, both
//! exchanges in the transcript).

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

/// The window a quota counts over (PV-TR-5: writes per minute).
pub(crate) const QUOTA_WINDOW: Duration = Duration::from_secs(60);

/// The window the pacer counts over: the quota's plus a second, because the target stamps
/// a write when it handles it, after the pacer let it go — a write admitted exactly a minute
/// after an earlier one could still meet that one in the target's window (seen: a run at
/// 120 writes/minute met such a 429 at the edge and lost a minute).
const WINDOW: Duration = Duration::from_secs(61);

/// Longest a runner waits on a `Retry-After` before its one retry.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(65);

/// Per-token write budgets of one run (a part of the target).
#[derive(Debug, Default)]
pub struct Pacer {
    /// Quota per token.
    quotas: HashMap<String, u64>,
    /// Each token's pool: the tokens of its role (one identity), in profile order.
    pools: HashMap<String, Vec<String>>,
    sent: Mutex<HashMap<String, VecDeque<Instant>>>,
    /// Writes admitted per token over the whole run.
    admitted: Mutex<HashMap<String, u64>>,
    /// Tokens the target refused although they had room, and until when they count as full.
    full_until: Mutex<HashMap<String, Instant>>,
}

impl Pacer {
    /// Budgets per pool of tokens (a role's tokens with their writes per minute); a token
    /// in no pool is not paced.
    pub fn new(pools: Vec<Vec<(String, u64)>>) -> Self {
        let mut quotas = HashMap::new();
        let mut by_token = HashMap::new();
        for pool in pools {
            let names: Vec<String> = pool.iter().map(|(t, _)| t.clone()).collect();
            for (token, quota) in pool {
                by_token.insert(token.clone(), names.clone());
                quotas.insert(token, quota);
            }
        }
        Self {
            quotas,
            pools: by_token,
            sent: Mutex::new(HashMap::new()),
            admitted: Mutex::new(HashMap::new()),
            full_until: Mutex::new(HashMap::new()),
        }
    }

    /// Whether `token` is paced (it has a known quota and is not the quota role's).
    pub fn paces(&self, token: &str) -> bool {
        self.quotas.contains_key(token)
    }

    /// Waits until one more write fits the quota of `token` or of another token of its
    /// pool, counts it, and returns the index in the pool of the token to send it with
    /// (0 = `token` itself when it is first; the pool is in profile order).
    pub async fn admit(&self, token: &str) -> usize {
        let Some(pool) = self.pools.get(token) else {
            return 0;
        };
        // Bounded: each pass either admits or sleeps until the oldest write of the pool's
        // earliest-freed token leaves the window.
        loop {
            let wait = match self.try_admit(pool) {
                Ok(i) => return i,
                Err(wait) => wait,
            };
            tracing::info!(
                wait_ms = wait.as_millis() as u64,
                "pacing writes under the target's quota"
            );
            tokio::time::sleep(wait).await;
        }
    }

    /// Admits on the pool's token with the most room, or says how long until one has room.
    fn try_admit(&self, pool: &[String]) -> Result<usize, Duration> {
        let Ok(mut sent) = self.sent.lock() else {
            return Ok(0); // a poisoned lock only loses pacing, never a verdict
        };
        let full = self
            .full_until
            .lock()
            .map(|f| f.clone())
            .unwrap_or_default();
        let now = Instant::now();
        let mut best: Option<(usize, u64)> = None;
        let mut soonest = WINDOW;
        for (i, token) in pool.iter().enumerate() {
            if let Some(until) = full.get(token).filter(|u| **u > now) {
                soonest = soonest.min(*until - now);
                continue;
            }
            let quota = self.quotas.get(token).copied().unwrap_or(u64::MAX);
            let times = sent.entry(token.clone()).or_default();
            while times
                .front()
                .is_some_and(|t| now.duration_since(*t) >= WINDOW)
            {
                times.pop_front();
            }
            let room = quota.saturating_sub(times.len() as u64);
            if room > 0 && best.is_none_or(|(_, r)| room > r) {
                best = Some((i, room));
            }
            if let Some(oldest) = times.front() {
                soonest = soonest.min(WINDOW.saturating_sub(now.duration_since(*oldest)));
            }
        }
        match best {
            Some((i, _)) => {
                sent.entry(pool[i].clone()).or_default().push_back(now);
                if let Ok(mut n) = self.admitted.lock() {
                    *n.entry(pool[i].clone()).or_default() += 1;
                }
                Ok(i)
            }
            None => Err(soonest),
        }
    }

    /// Records that the target refused a write by `token` for its quota although the pacer
    /// had room: the target's window holds writes this run did not make (an earlier run,
    /// another client). The token is then treated as full for a whole window — after a
    /// minute without writes from us the target's window holds none of those — and its pool
    /// carries the writes meanwhile.
    pub fn saturate(&self, token: &str) {
        if let Ok(mut full) = self.full_until.lock() {
            full.insert(token.to_string(), Instant::now() + WINDOW);
        }
    }

    /// Writes admitted with `token` so far in this run.
    pub fn admitted(&self, token: &str) -> u64 {
        self.admitted
            .lock()
            .map_or(0, |n| n.get(token).copied().unwrap_or(0))
    }

    /// `token`'s pool: how many tokens, and their writes per minute together.
    pub fn pool_rate(&self, token: &str) -> Option<(usize, u64)> {
        let pool = self.pools.get(token)?;
        let rate = pool.iter().filter_map(|t| self.quotas.get(t)).sum();
        Some((pool.len(), rate))
    }

    /// The least time `writes` writes take through `token`'s pool, from an empty window:
    /// the pool's first minute's worth go at once, then one minute per further batch.
    pub fn least_time(&self, token: &str, writes: u64) -> Option<Duration> {
        let (_, rate) = self.pool_rate(token)?;
        let minutes = writes.saturating_sub(1).checked_div(rate)?;
        Some(QUOTA_WINDOW * u32::try_from(minutes).unwrap_or(u32::MAX))
    }

    /// The token at `index` of `token`'s pool (`token` itself when unpooled).
    pub fn pooled<'a>(&'a self, token: &'a str, index: usize) -> &'a str {
        self.pools
            .get(token)
            .and_then(|p| p.get(index))
            .map_or(token, String::as_str)
    }
}

/// The delay a `Retry-After` value asks for (delay-seconds or an HTTP-date, RFC 9110
/// §10.2.3), capped at [`MAX_RETRY_AFTER`]; `None` when absent or unreadable.
pub fn retry_after(value: Option<&str>) -> Option<Duration> {
    let v = value?.trim();
    let d = if let Ok(secs) = v.parse::<u64>() {
        Duration::from_secs(secs)
    } else {
        let at = chrono::DateTime::parse_from_rfc2822(v).ok()?;
        (at.with_timezone(&chrono::Utc) - chrono::Utc::now())
            .to_std()
            .unwrap_or(Duration::ZERO)
    };
    Some(d.min(MAX_RETRY_AFTER))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_reads_both_forms() {
        assert_eq!(retry_after(Some("7")), Some(Duration::from_secs(7)));
        assert_eq!(retry_after(Some("99999")), Some(MAX_RETRY_AFTER));
        assert_eq!(
            retry_after(Some("Mon, 01 Jan 2001 00:00:00 GMT")),
            Some(Duration::ZERO)
        );
        assert_eq!(retry_after(Some("soon")), None);
        assert_eq!(retry_after(None), None);
    }

    #[tokio::test(start_paused = true)]
    async fn a_full_minute_waits_for_the_oldest_write() {
        let pacer = Pacer::new(vec![vec![("t".to_string(), 2)]]);
        let start = tokio::time::Instant::now();
        pacer.admit("t").await;
        pacer.admit("t").await;
        assert!(start.elapsed() < Duration::from_secs(1));
        pacer.admit("t").await; // the third write of the minute waits for the first to age out
        assert!(start.elapsed() >= WINDOW);
        assert_eq!(pacer.admit("unpaced").await, 0);
    }

    #[tokio::test(start_paused = true)]
    async fn a_pool_spreads_writes_over_its_tokens() {
        let pool = vec![("a1".to_string(), 2), ("a2".to_string(), 2)];
        let pacer = Pacer::new(vec![pool]);
        let start = tokio::time::Instant::now();
        let mut used = Vec::new();
        for _ in 0..4 {
            let i = pacer.admit("a1").await;
            used.push(pacer.pooled("a1", i).to_string());
        }
        // Four writes at 2 per token per minute: both tokens, no wait.
        assert!(start.elapsed() < Duration::from_secs(1));
        assert_eq!(used.iter().filter(|t| *t == "a1").count(), 2);
        assert_eq!(used.iter().filter(|t| *t == "a2").count(), 2);
        assert_eq!((pacer.admitted("a1"), pacer.admitted("a2")), (2, 2));
        pacer.admit("a2").await; // the pool is full: the fifth waits a window
        assert!(start.elapsed() >= WINDOW);
        assert_eq!(pacer.pool_rate("a2"), Some((2, 4)));
        assert_eq!(pacer.least_time("a1", 4), Some(Duration::ZERO));
        assert_eq!(pacer.least_time("a1", 5), Some(QUOTA_WINDOW));
        assert_eq!(pacer.least_time("a1", 9), Some(QUOTA_WINDOW * 2));
        assert_eq!(pacer.least_time("unpaced", 9), None);
    }

    #[tokio::test(start_paused = true)]
    async fn a_saturated_token_hands_its_writes_to_its_pool() {
        let pool = vec![("a1".to_string(), 3), ("a2".to_string(), 3)];
        let pacer = Pacer::new(vec![pool]);
        let start = tokio::time::Instant::now();
        pacer.saturate("a1"); // the target refused a1: its window is full of others' writes
        for _ in 0..3 {
            assert_eq!(pacer.admit("a1").await, 1, "a2 carries the writes");
        }
        assert!(start.elapsed() < Duration::from_secs(1));
        pacer.admit("a1").await; // both full now: a window's wait
        assert!(start.elapsed() >= WINDOW);
    }
}
