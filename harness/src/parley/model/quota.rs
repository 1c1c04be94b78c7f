//! The model's quota rules (PV-TR-5).
//!
//! - [`Quota`]: the model's own count of write attempts per actor, kept across a run's
//!   sequences. A `429 rate_limited` is a pause, never a failure, once the model itself has
//!   made enough writes in the last minute to reach the token's quota (halved, for the other
//!   clients that may share the token during `conform run`). The quota role's token
//!   (`limited`) is exhausted by the quota vectors at any moment, so its 429 is always a
//!   pause.
//! - [`Bound`]: the quota role's enforcement, judged per sequence. More than twice the quota
//!   getting past the quota check within one minute fails PV-TR-5. Twice, because the notes
//!   fix no window: fixed windows aligned anywhere, or a bucket refilled per minute, admit
//!   that much within one minute and no more.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::json;

use super::observe::Answer;
use crate::engine::counterexample::mismatch;
use crate::engine::finding::Finding;

/// Write attempts per actor index, with each actor's quota per minute.
#[derive(Debug, Default)]
pub struct Quota {
    per_minute: Vec<Option<u64>>,
    /// Per actor: whether its token is the quota role's, which other checks exhaust.
    shared: Vec<bool>,
    attempts: Mutex<HashMap<usize, VecDeque<Instant>>>,
}

const WINDOW: Duration = Duration::from_secs(61);

/// The window a quota counts over (PV-TR-5: per minute).
const MINUTE: Duration = Duration::from_secs(60);

impl Quota {
    /// `per_minute[actor]`: the quota `whoami` shows (`None` = not shown); `shared[actor]`:
    /// the actor plays the quota role (missing = not).
    pub fn new(per_minute: Vec<Option<u64>>, shared: Vec<bool>) -> Self {
        Self {
            per_minute,
            shared,
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

    /// Whether a 429 to `actor` now is explained by the model's own writes, or by the
    /// other checks that exhaust the quota role's token.
    pub fn tolerates(&self, actor: usize) -> bool {
        if self.shared.get(actor).copied().unwrap_or(false) {
            return true;
        }
        let Some(Some(quota)) = self.per_minute.get(actor) else {
            return false;
        };
        let recent = self.attempts.lock().map_or(0, |m| {
            m.get(&actor)
                .map_or(0, |q| q.iter().filter(|t| t.elapsed() <= WINDOW).count())
        });
        recent as u64 >= quota / 2
    }

    /// The quota role's enforcement bound for one sequence ([`Bound`]), when `actor` plays
    /// it with a known quota.
    pub fn bound(&self, actor: usize) -> Option<Bound> {
        if !self.shared.get(actor).copied().unwrap_or(false) {
            return None;
        }
        let quota = self.per_minute.get(actor).copied().flatten()?;
        Some(Bound {
            actor,
            quota,
            counted: VecDeque::new(),
        })
    }
}

/// One sequence's writes by the quota role that got past the quota check (PV-AU-6: every
/// write attempt that got that far counts), each with when it was sent.
#[derive(Debug)]
pub struct Bound {
    actor: usize,
    quota: u64,
    counted: VecDeque<Instant>,
}

impl Bound {
    /// Judges the answer to a write by `actor` sent at `sent` and answered now: a failure of
    /// PV-TR-5 once more than twice the quota got past the quota check within a minute,
    /// measured from the first one's send to this one's answer (the target's own span is
    /// shorter, never longer).
    pub fn judge(
        &mut self,
        actor: usize,
        sent: Instant,
        answer: &Answer,
    ) -> Result<(), Box<Finding>> {
        if actor != self.actor || !passed_quota_check(answer) {
            return Ok(());
        }
        let now = Instant::now();
        self.counted.push_back(sent);
        while self
            .counted
            .front()
            .is_some_and(|t| now.duration_since(*t) > MINUTE)
        {
            self.counted.pop_front();
        }
        let n = self.counted.len() as u64;
        let over = 2 * self.quota;
        if n <= over {
            return Ok(());
        }
        let span = self
            .counted
            .front()
            .map_or(Duration::ZERO, |first| now.duration_since(*first));
        Err(mismatch(
            &["PV-TR-5"],
            format!(
                "{n} write attempts by the quota role got past the quota check within {:.1} s (from the first one's send to the last one's answer), over twice its quota of {} per minute",
                span.as_secs_f64(),
                self.quota
            ),
            json!({"past_the_quota_check_within_a_minute": {"at_most": over}}),
            json!({"past_the_quota_check_within_a_minute": n, "seconds": span.as_secs_f64()}),
        ))
    }
}

/// Whether the target's answer shows the write got past the quota check (PV-AU-6's order):
/// anything but no answer, 401, 403 `token_right_missing` (checked before the quota) and
/// the 429 itself.
fn passed_quota_check(answer: &Answer) -> bool {
    match answer {
        Answer::Success(_) => true,
        Answer::Refusal { status, reason } => {
            let before =
                matches!(status, 401 | 429) || (*status == 403 && reason == "token_right_missing");
            !before
        }
        Answer::Other(_) => false,
    }
}

#[cfg(test)]
#[expect(clippy::unwrap_used, reason = "tests: a panic is the failure report")]
mod tests {
    use super::*;

    fn refusal(status: u16, reason: &str) -> Answer {
        Answer::Refusal {
            status,
            reason: reason.into(),
        }
    }

    #[test]
    fn the_quota_role_fails_past_twice_its_quota_within_a_minute() {
        let q = Quota::new(vec![None, Some(2)], vec![false, true]);
        assert!(q.bound(0).is_none(), "only the quota role is bounded");
        assert!(q.tolerates(1), "the quota role's 429 is always a pause");
        let mut b = q.bound(1).unwrap();
        let now = Instant::now();
        // Refusals before the quota check and the 429s never count.
        for a in [
            refusal(429, "rate_limited"),
            refusal(403, "token_right_missing"),
            refusal(401, "unauthenticated"),
            Answer::Other("no answer".into()),
        ] {
            b.judge(1, now, &a).unwrap();
        }
        // Another actor's writes are not the quota role's.
        for _ in 0..9 {
            b.judge(0, now, &Answer::Success(json!({}))).unwrap();
        }
        // Refusals after the quota check count (PV-AU-6), up to twice the quota.
        b.judge(1, now, &refusal(400, "invalid_body")).unwrap();
        b.judge(1, now, &refusal(403, "thread_authority_missing"))
            .unwrap();
        b.judge(1, now, &refusal(409, "thread_locked")).unwrap();
        b.judge(1, now, &Answer::Success(json!({}))).unwrap();
        let f = b.judge(1, now, &Answer::Success(json!({}))).unwrap_err();
        assert_eq!(f.rules, vec!["PV-TR-5".to_string()]);
        assert!(f.message.contains("5 write attempts"), "{}", f.message);
    }

    #[test]
    fn writes_older_than_a_minute_leave_the_count() {
        let q = Quota::new(vec![Some(1)], vec![true]);
        let mut b = q.bound(0).unwrap();
        let Some(old) = Instant::now().checked_sub(Duration::from_secs(61)) else {
            return; // a monotonic clock younger than a minute: nothing to age
        };
        for _ in 0..5 {
            b.judge(0, old, &Answer::Success(json!({}))).unwrap();
        }
        b.judge(0, Instant::now(), &Answer::Success(json!({})))
            .unwrap();
        b.judge(0, Instant::now(), &Answer::Success(json!({})))
            .unwrap();
        assert!(
            b.judge(0, Instant::now(), &Answer::Success(json!({})))
                .is_err()
        );
    }
}
