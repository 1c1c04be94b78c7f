//! Write pacing under the target's quotas (PV-TR-5), so that no check meets a `429` it did
//! not provoke — a `429 rate_limited` on a step that expects a success is a false failure
//! caused by the harness itself, and real deployments declare low quotas.
//!
//! The pre-flight stores one [`Pacer`] in the target: per token, the quota `whoami` reports
//! (else the manifest's `limits.writes_per_minute`) and the times of the writes sent in the
//! last minute. Before a write, [`Pacer::admit`] waits until the token's sliding minute has
//! room. The quota role (`limited`) is never paced: its checks exist to exhaust it.
//!
//! The server's window may still hold writes from an earlier run against the same process;
//! those 429s are handled by the runner (wait `Retry-After`, retry the step once, both
//! exchanges in the transcript).

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

/// The window a quota counts over (PV-TR-5: writes per minute).
const WINDOW: Duration = Duration::from_secs(60);

/// Longest a runner waits on a `Retry-After` before its one retry.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(65);

/// Per-token write budgets of one run (a part of the target).
#[derive(Debug, Default)]
pub struct Pacer {
    quotas: HashMap<String, u64>,
    sent: Mutex<HashMap<String, VecDeque<Instant>>>,
}

impl Pacer {
    /// Budgets per token (writes per minute); a token without one is not paced.
    pub fn new(quotas: HashMap<String, u64>) -> Self {
        Self {
            quotas,
            sent: Mutex::new(HashMap::new()),
        }
    }

    /// Whether `token` is paced (it has a known quota and is not the quota role's).
    pub fn paces(&self, token: &str) -> bool {
        self.quotas.contains_key(token)
    }

    /// Waits until one more write by `token` fits its quota, then counts it.
    pub async fn admit(&self, token: &str) {
        let Some(&quota) = self.quotas.get(token) else {
            return;
        };
        // Bounded: each pass either admits or sleeps until the oldest write leaves the window.
        loop {
            let wait = {
                let Ok(mut sent) = self.sent.lock() else {
                    return; // a poisoned lock only loses pacing, never a verdict
                };
                let times = sent.entry(token.to_string()).or_default();
                let now = Instant::now();
                while times
                    .front()
                    .is_some_and(|t| now.duration_since(*t) >= WINDOW)
                {
                    times.pop_front();
                }
                if (times.len() as u64) < quota {
                    times.push_back(now);
                    return;
                }
                match times.front() {
                    Some(oldest) => WINDOW.saturating_sub(now.duration_since(*oldest)),
                    None => return,
                }
            };
            tracing::info!(
                wait_ms = wait.as_millis() as u64,
                "pacing writes under the target's quota"
            );
            tokio::time::sleep(wait).await;
        }
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
        let pacer = Pacer::new(HashMap::from([("t".to_string(), 2)]));
        let start = tokio::time::Instant::now();
        pacer.admit("t").await;
        pacer.admit("t").await;
        assert!(start.elapsed() < Duration::from_secs(1));
        pacer.admit("t").await; // the third write of the minute waits for the first to age out
        assert!(start.elapsed() >= WINDOW);
        pacer.admit("unpaced").await;
    }
}
