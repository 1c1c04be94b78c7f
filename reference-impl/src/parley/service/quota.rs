//! Per-token write quota (PV-TR-5): a sliding one-minute window kept in memory.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::{Duration, Instant};

const WINDOW: Duration = Duration::from_secs(60);

/// Admitted write attempts per token within the last minute.
#[derive(Debug, Default)]
pub(crate) struct Quota {
    windows: Mutex<HashMap<String, VecDeque<Instant>>>,
}

impl Quota {
    /// Admits one write attempt for `token`, or returns the `Retry-After` seconds (≥ 1)
    /// until the oldest attempt leaves the window. Refused attempts are not recorded, so the
    /// announced `Retry-After` holds (PV-TR-5).
    pub(crate) fn admit(&self, token: &str, per_minute: u32) -> Result<(), u64> {
        self.admit_at(token, per_minute, Instant::now())
    }

    pub(crate) fn admit_at(&self, token: &str, per_minute: u32, now: Instant) -> Result<(), u64> {
        // A poisoned lock only means a panic elsewhere mid-update; the deque stays valid.
        let mut windows = self.windows.lock().unwrap_or_else(|p| p.into_inner());
        let window = windows.entry(token.to_string()).or_default();
        while window
            .front()
            .is_some_and(|t| now.duration_since(*t) >= WINDOW)
        {
            window.pop_front();
        }
        if window.len() >= per_minute as usize {
            let wait = window
                .front()
                .map_or(WINDOW, |t| WINDOW.saturating_sub(now.duration_since(*t)));
            let secs = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
            return Err(secs.max(1));
        }
        window.push_back(now);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sliding_window() {
        let q = Quota::default();
        let t0 = Instant::now();
        for i in 0..5 {
            assert_eq!(q.admit_at("t", 5, t0 + Duration::from_secs(i)), Ok(()));
        }
        assert_eq!(q.admit_at("t", 5, t0 + Duration::from_secs(10)), Err(50));
        assert_eq!(q.admit_at("other", 5, t0 + Duration::from_secs(10)), Ok(()));
        assert_eq!(
            q.admit_at("t", 5, t0 + Duration::from_millis(59_500)),
            Err(1)
        );
        assert_eq!(q.admit_at("t", 5, t0 + Duration::from_secs(60)), Ok(()));
        assert_eq!(q.admit_at("z", 0, t0), Err(60));
    }
}
