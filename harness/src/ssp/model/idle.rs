//! The wall time an SSP model run spends only waiting (issue 25: goal ≤ 20 %).
//!
//! The run plays its sequences in concurrent lanes ([`super::runner`]), so a lane pausing
//! between two polls of a running execution is not idle time as long as another lane
//! works. [`Idle`] counts the wall time during which every live lane was pausing: the time
//! the run did nothing but wait on the provider's clock.

use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Lanes live, lanes pausing, and the idle wall time so far.
#[derive(Debug)]
pub struct Idle {
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    live: usize,
    pausing: usize,
    /// Since when every live lane has been pausing.
    since: Option<Instant>,
    total: Duration,
}

impl State {
    fn settle(&mut self, now: Instant) {
        let all = self.live > 0 && self.pausing >= self.live;
        match (all, self.since) {
            (true, None) => self.since = Some(now),
            (false, Some(s)) => {
                self.total += now - s;
                self.since = None;
            }
            _ => {}
        }
    }
}

/// One lane's pause: counted as pausing until dropped.
#[must_use = "the pause ends when the guard is dropped"]
pub struct Pause<'a>(&'a Idle);

impl Drop for Pause<'_> {
    fn drop(&mut self) {
        let mut s = self.0.lock();
        s.pausing = s.pausing.saturating_sub(1);
        s.settle(Instant::now());
    }
}

impl Idle {
    /// A tracker for `lanes` lanes, all working.
    pub fn new(lanes: usize) -> Self {
        Self {
            state: Mutex::new(State {
                live: lanes,
                pausing: 0,
                since: None,
                total: Duration::ZERO,
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A lane that panicked while holding the lock left consistent counters (every
        // update is a few integer writes): keep counting rather than lose the figure.
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A lane starts pausing; it works again when the guard drops.
    pub fn pause(&self) -> Pause<'_> {
        let mut s = self.lock();
        s.pausing += 1;
        s.settle(Instant::now());
        drop(s);
        Pause(self)
    }

    /// A lane has finished: the others alone decide whether the run is idle.
    pub fn lane_done(&self) {
        let mut s = self.lock();
        s.live = s.live.saturating_sub(1);
        s.settle(Instant::now());
    }

    /// The wall time so far during which every live lane was pausing.
    pub fn total(&self) -> Duration {
        let s = self.lock();
        s.total + s.since.map_or(Duration::ZERO, |since| since.elapsed())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idle_only_while_every_live_lane_pauses() {
        let idle = Idle::new(2);
        {
            let _a = idle.pause();
            // One of two lanes pausing: the run still works.
            assert!(idle.lock().since.is_none());
            let _b = idle.pause();
            assert!(idle.lock().since.is_some(), "both lanes pausing: idle");
        }
        assert!(idle.lock().since.is_none(), "pauses over: working again");
        let _a = idle.pause();
        assert!(idle.lock().since.is_none());
        idle.lane_done();
        assert!(
            idle.lock().since.is_some(),
            "the only live lane pauses: idle"
        );
    }
}
