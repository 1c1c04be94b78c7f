//! The model's quota rules (PV-TR-5).
//!
//! - [`Quota`]: the model's own count of write attempts per actor, kept across a run's
//!   sequences. A `429 rate_limited` is a pause, never a failure, once the model itself has
//!   made enough writes in the last minute to reach the token's quota (halved, for the other
//!   clients that may share the token during `conform run`). The quota role's token
//!   (`limited`) is exhausted by the quota vectors at any moment, so its 429 is always a
//!   pause.
//! - [`Bound`]: the quota role's enforcement, judged per sequence. More than twice the quota
//!   of its posts getting past the quota check within one minute fails PV-TR-5. Twice,
//!   because the notes fix no window: fixed windows aligned anywhere, or a bucket refilled
//!   per minute, admit that much within one minute and no more. Posts only, because the
//!   notes do not say whether marks and reopens count as "write attempts" too: a post is
//!   one under every reading.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;

use super::observe::Answer;
use super::state::Op;
use crate::engine::counterexample::mismatch;
use crate::engine::finding::Finding;
use crate::parley::pacing::QUOTA_WINDOW;

/// Write attempts per actor index, with each actor's quota per minute.
#[derive(Debug, Default)]
pub struct Quota {
    per_minute: Vec<Option<u64>>,
    /// Per actor: whether its token is the quota role's, which other checks exhaust.
    shared: Vec<bool>,
    attempts: Mutex<HashMap<usize, VecDeque<Instant>>>,
    /// The most posts by the quota role that one sequence sent within a minute, counted
    /// or refused 429: the run's evidence that its sequences could reach the bound.
    reached: AtomicU64,
}

const WINDOW: Duration = Duration::from_secs(61);

impl Quota {
    /// `per_minute[actor]`: the quota `whoami` shows (`None` = not shown); `shared[actor]`:
    /// the actor plays the quota role (missing = not).
    pub fn new(per_minute: Vec<Option<u64>>, shared: Vec<bool>) -> Self {
        Self {
            per_minute,
            shared,
            ..Self::default()
        }
    }

    fn shared(&self, actor: usize) -> bool {
        self.shared.get(actor).copied().unwrap_or(false)
    }

    /// Records one write attempt.
    pub fn attempt(&self, actor: usize) {
        if let Ok(mut m) = self.attempts.lock() {
            let q = m.entry(actor).or_default();
            let now = Instant::now();
            q.push_back(now);
            forget_before(q, now, WINDOW, |t| *t);
        }
    }

    /// Whether a 429 to `actor` now is explained by the model's own writes, or by the
    /// other checks that exhaust the quota role's token.
    pub fn tolerates(&self, actor: usize) -> bool {
        if self.shared(actor) {
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
    /// it with a known quota above 0.
    pub fn bound(&self, actor: usize) -> Option<Bound<'_>> {
        if !self.shared(actor) {
            return None;
        }
        let quota = self.per_minute.get(actor).copied().flatten()?;
        (quota > 0).then(|| Bound {
            actor,
            quota,
            sent: VecDeque::new(),
            reached: &self.reached,
        })
    }

    /// The quota role's quota, once the run's sequences sent more than twice it of posts
    /// within a minute (counted or refused 429); else the most they sent, the reason the
    /// bound was never within reach.
    pub fn reached(&self, actor: usize) -> Result<u64, (u64, u64)> {
        let quota = self.per_minute.get(actor).copied().flatten().unwrap_or(0);
        let most = self.reached.load(Ordering::Relaxed);
        if most > 2 * quota {
            Ok(quota)
        } else {
            Err((most, quota))
        }
    }
}

/// One sequence's posts by the quota role that got past the quota check (PV-AU-6: every
/// write attempt that got that far counts) or met its 429, each with when it was sent and
/// whether it counted.
#[derive(Debug)]
pub struct Bound<'q> {
    actor: usize,
    quota: u64,
    sent: VecDeque<(Instant, bool)>,
    reached: &'q AtomicU64,
}

/// Drops the entries of `times` (oldest first; `at` reads an entry's time) more than
/// `window` before `now`.
fn forget_before<T>(
    times: &mut VecDeque<T>,
    now: Instant,
    window: Duration,
    at: impl Fn(&T) -> Instant,
) {
    while times
        .front()
        .is_some_and(|t| now.saturating_duration_since(at(t)) > window)
    {
        times.pop_front();
    }
}

impl Bound<'_> {
    /// Judges the answer to `op`, sent at `sent` and answered now ([`Bound::judge_at`]).
    pub fn judge(&mut self, op: &Op, sent: Instant, answer: &Answer) -> Result<(), Box<Finding>> {
        self.judge_at(op, sent, answer, Instant::now())
    }

    /// Judges the answer to `op`, sent at `sent` and answered at `now`: a failure of
    /// PV-TR-5 once more than twice the quota got past the quota check within a minute,
    /// measured from the first one's send to this one's answer (with both clocks at one
    /// rate, the target's own span is shorter, never longer).
    pub fn judge_at(
        &mut self,
        op: &Op,
        sent: Instant,
        answer: &Answer,
        now: Instant,
    ) -> Result<(), Box<Finding>> {
        if op.actor() != self.actor || !op.is_post() {
            return Ok(());
        }
        let (counted, refused) = past_quota_check(answer);
        if !counted && !refused {
            return Ok(());
        }
        self.sent.push_back((sent, counted));
        forget_before(&mut self.sent, now, QUOTA_WINDOW, |(t, _)| *t);
        self.reached
            .fetch_max(self.sent.len() as u64, Ordering::Relaxed);
        let n = self.sent.iter().filter(|(_, c)| *c).count() as u64;
        let over = 2 * self.quota;
        if !counted || n <= over {
            return Ok(());
        }
        let span = self
            .sent
            .iter()
            .find(|(_, c)| *c)
            .map_or(Duration::ZERO, |(first, _)| {
                now.saturating_duration_since(*first)
            });
        Err(mismatch(
            &["PV-TR-5"],
            format!(
                "{n} posts by the quota role got past the quota check within {:.1} s (from the first one's send to the last one's answer), over twice its quota of {} per minute",
                span.as_secs_f64(),
                self.quota
            ),
            json!({"past_the_quota_check_within_a_minute": {"at_most": over}}),
            json!({"past_the_quota_check_within_a_minute": n, "seconds": span.as_secs_f64()}),
        ))
    }
}

/// Whether the target's answer shows the post got past the quota check, and whether it was
/// the quota's 429. Past it: a success, or a refusal PV-AU-6 orders after the quota (413,
/// 415, 400, 404, 403 `thread_authority_missing`/`self_attest`, 409). Anything else — 401,
/// 403 `token_right_missing`, a 5xx or a status the order does not name (load shedding, a
/// proxy), an answer that is not Parley's — shows nothing about the quota.
fn past_quota_check(answer: &Answer) -> (bool, bool) {
    match answer {
        Answer::Success(_) => (true, false),
        Answer::Refusal { status: 429, .. } => (false, true),
        Answer::Refusal { status, reason } => {
            let after = matches!(status, 400 | 404 | 409 | 413 | 415)
                || (*status == 403
                    && matches!(reason.as_str(), "thread_authority_missing" | "self_attest"));
            (after, false)
        }
        Answer::Other(_) => (false, false),
    }
}

#[cfg(test)]
#[expect(clippy::unwrap_used, reason = "tests: a panic is the failure report")]
mod tests {
    use super::*;
    use crate::parley::model::party::Party;
    use crate::parley::model::state::Body;

    fn refusal(status: u16, reason: &str) -> Answer {
        Answer::Refusal {
            status,
            reason: reason.into(),
        }
    }

    fn open(actor: usize) -> Op {
        Op::Open {
            by: Party { actor, ext: None },
            body: Body::Short,
        }
    }

    fn ok() -> Answer {
        Answer::Success(json!({}))
    }

    #[test]
    fn the_quota_role_fails_past_twice_its_quota_within_a_minute() {
        let q = Quota::new(vec![None, Some(2)], vec![false, true]);
        assert!(q.bound(0).is_none(), "only the quota role is bounded");
        assert!(q.tolerates(1), "the quota role's 429 is always a pause");
        let mut b = q.bound(1).unwrap();
        let t = Instant::now();
        // Refusals before the quota check, the 429s, statuses PV-AU-6 does not order and
        // non-answers never count.
        for a in [
            refusal(429, "rate_limited"),
            refusal(403, "token_right_missing"),
            refusal(401, "token_missing"),
            refusal(503, "unavailable"),
            refusal(500, "internal"),
            Answer::Other("no answer".into()),
        ] {
            b.judge_at(&open(1), t, &a, t).unwrap();
        }
        // Nor another actor's posts, nor the quota role's marks.
        for _ in 0..9 {
            b.judge_at(&open(0), t, &ok(), t).unwrap();
            let mark = Op::Reopen { by: 1, thread: 0 };
            b.judge_at(&mark, t, &ok(), t).unwrap();
        }
        // Refusals after the quota check count (PV-AU-6), up to twice the quota.
        b.judge_at(&open(1), t, &refusal(400, "invalid_body"), t)
            .unwrap();
        b.judge_at(&open(1), t, &refusal(409, "self_reply"), t)
            .unwrap();
        b.judge_at(&open(1), t, &refusal(404, "thread_not_found"), t)
            .unwrap();
        b.judge_at(&open(1), t, &ok(), t).unwrap();
        let f = b.judge_at(&open(1), t, &ok(), t).unwrap_err();
        assert_eq!(f.rules, vec!["PV-TR-5".to_string()]);
        assert!(f.message.contains("5 posts"), "{}", f.message);
        drop(b);
        assert_eq!(q.reached(1), Ok(2), "6 posts counted or refused 429");
    }

    #[test]
    fn posts_older_than_a_minute_leave_the_count() {
        let q = Quota::new(vec![Some(1)], vec![true]);
        let mut b = q.bound(0).unwrap();
        let t0 = Instant::now();
        b.judge_at(&open(0), t0, &ok(), t0).unwrap();
        b.judge_at(&open(0), t0, &ok(), t0).unwrap();
        let t1 = t0 + Duration::from_secs(61);
        b.judge_at(&open(0), t1, &ok(), t1).unwrap();
        b.judge_at(&open(0), t1, &ok(), t1).unwrap();
        assert!(b.judge_at(&open(0), t1, &ok(), t1).is_err());
    }

    #[test]
    fn the_bound_is_out_of_reach_until_a_sequence_sends_enough() {
        let q = Quota::new(vec![Some(2)], vec![true]);
        let t = Instant::now();
        let mut b = q.bound(0).unwrap();
        for _ in 0..4 {
            b.judge_at(&open(0), t, &refusal(429, "rate_limited"), t)
                .unwrap();
        }
        drop(b);
        assert_eq!(q.reached(0), Err((4, 2)));
        assert!(Quota::new(vec![Some(0)], vec![true]).bound(0).is_none());
    }
}
