//! The model's own count of write attempts per actor (PV-TR-5): a `429 rate_limited` is
//! accepted as a pause, never a failure, once the model itself has made enough writes in
//! the last minute to reach the token's quota (halved, for the other clients that may
//! share the token during `conform run`).

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Write attempts per actor index, with each actor's quota per minute.
#[derive(Debug, Default)]
pub struct Quota {
    per_minute: Vec<Option<u64>>,
    attempts: Mutex<HashMap<usize, VecDeque<Instant>>>,
}

const WINDOW: Duration = Duration::from_secs(61);

impl Quota {
    /// `per_minute[actor]`: the quota `whoami` shows (`None` = not shown).
    pub fn new(per_minute: Vec<Option<u64>>) -> Self {
        Self {
            per_minute,
            attempts: Mutex::new(HashMap::new()),
        }
    }

    /// Records one write attempt.
    pub fn attempt(&self, actor: usize) {
        if let Ok(mut m) = self.attempts.lock() {
            let q = m.entry(actor).or_default();
            let now = Instant::now();
            q.push_back(now);
            while q.front().is_some_and(|t| now.duration_since(*t) > WINDOW) {
                q.pop_front();
            }
        }
    }

    /// Whether a 429 to `actor` now is explained by the model's own writes.
    pub fn tolerates(&self, actor: usize) -> bool {
        let Some(Some(quota)) = self.per_minute.get(actor) else {
            return false;
        };
        let recent = self.attempts.lock().map_or(0, |m| {
            m.get(&actor)
                .map_or(0, |q| q.iter().filter(|t| t.elapsed() <= WINDOW).count())
        });
        recent as u64 >= quota / 2
    }
}
