//! The target's clock as the model sees it (PV-DI-2, `valid_until`): its offset to the
//! harness's clock and the resolution of its timestamps, both read off the `created_at` of
//! its messages, and the run's one expiry deadline.
//!
//! Why one deadline per run: a read "after expiry" must wait in real time for a
//! `valid_until` to pass on the target. Every `soon` assert of a run takes the current
//! deadline while it is still far enough ahead, so one wait serves every claim made before
//! it instead of one wait per claim, and the deadline lies only as far ahead as the target's
//! round trip requires.
//!
//! Precision: until the target shows it keeps `valid_until` to the millisecond (it gives
//! back the fraction it was sent), a deadline is a whole second plus 1 ms, and the claim may
//! expire anywhere within that second — a target keeping seconds drops the millisecond or
//! rounds it up to the next second. Once the target has shown it keeps milliseconds,
//! deadlines are the lead itself, with no rounding up to the next second. Each run learns it
//! before its first deadline with one probe claim valid a day ahead
//! ([`SharedClock::probe_until`]): without it the first read "after expiry" of a run waited
//! up to a second (issue 25: the claims model then spent 42–74 % of its wall time waiting).

use std::sync::Mutex;
use std::time::Duration;

use chrono::{DateTime, Utc};

use crate::transport::budget::TimeScale;

/// The least lead of a new deadline over the target's clock: the assert that carries it
/// must reach the target before it passes. Short, because every read "after expiry" waits
/// about this long: the lead grows with the slowest round trip seen (see [`Clock::soon`]),
/// and doubles each time an assert still arrived late ([`Clock::late`]; the driver sends
/// such an assert again), so a loaded machine costs retries, never a false failure.
const MIN_LEAD: chrono::Duration = chrono::Duration::milliseconds(20);
/// The most [`Clock::late`] lets the least lead grow to: a read "after expiry" still waits
/// within [`MAX_WAIT`] (both times the run's time scale) for a deadline this far ahead on a target keeping whole seconds
/// (lead + up to a second of rounding + a second of tolerance).
const MAX_LEAD: chrono::Duration = chrono::Duration::seconds(2);
/// The longest wait for an expiry (a larger one means the clock estimate is off: no wait).
const MAX_WAIT: Duration = Duration::from_secs(6);
/// How far past `valid_until` + tolerance a read "after expiry" is sent. Small: the
/// tolerance already covers the round trip and the timestamps' resolution, timers never
/// fire early, and a read that still arrives too early is left unjudged (`expired` is
/// compared only when certain), never failed.
const PAST_MARGIN: chrono::Duration = chrono::Duration::milliseconds(5);

/// The target's clock as seen from the harness.
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    /// Target time minus harness time, when a message was seen.
    offset: Option<chrono::Duration>,
    /// Round trip of the request that gave it.
    rtt: chrono::Duration,
    /// The slowest round trip seen.
    max_rtt: chrono::Duration,
    /// The finest step of the target's timestamps seen so far: a second until a
    /// `created_at` shows a non-zero fraction (a server may print `.000` and keep seconds).
    resolution: chrono::Duration,
    /// The `valid_until` of the run's `soon` asserts while it is far enough ahead.
    deadline: Option<DateTime<Utc>>,
    /// The target gave back a `valid_until` with the fraction it was sent.
    keeps_millis: bool,
    /// The least lead of a new deadline ([`MIN_LEAD`], doubled by each [`Clock::late`]).
    lead: chrono::Duration,
    /// [`MAX_LEAD`] and [`MAX_WAIT`] times the run's time scale (a slow target's deadlines
    /// need more lead, and its expiries a longer wait).
    max_lead: chrono::Duration,
    max_wait: Duration,
}

impl Default for Clock {
    fn default() -> Self {
        Self {
            offset: None,
            rtt: chrono::Duration::zero(),
            max_rtt: chrono::Duration::zero(),
            resolution: chrono::Duration::seconds(1),
            deadline: None,
            keeps_millis: false,
            lead: MIN_LEAD,
            max_lead: MAX_LEAD,
            max_wait: MAX_WAIT,
        }
    }
}

impl Clock {
    /// A clock whose waiting bounds are multiplied by `scale` (the least lead never falls
    /// under [`MIN_LEAD`]).
    pub fn scaled(scale: TimeScale) -> Self {
        let ms = MAX_LEAD.num_milliseconds() as f64 * scale.factor();
        let max_lead = chrono::Duration::milliseconds(ms as i64).max(MIN_LEAD);
        Self {
            max_lead,
            max_wait: scale.apply(MAX_WAIT),
            ..Self::default()
        }
    }
}

/// The step of a timestamp's fraction when it shows one that is not zero (at least 1 ms).
fn fraction_step(created_at: &str) -> Option<chrono::Duration> {
    let (_, rest) = created_at.split_once('.')?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    if digits.is_empty() || digits.bytes().all(|b| b == b'0') {
        return None;
    }
    let nanos = 10_i64.pow(9u32.saturating_sub(digits.len().min(9) as u32));
    Some(chrono::Duration::nanoseconds(nanos.max(1_000_000)))
}

/// `t` rounded up to a whole second.
fn ceil_second(t: DateTime<Utc>) -> DateTime<Utc> {
    if t.timestamp_subsec_nanos() == 0 {
        return t;
    }
    DateTime::from_timestamp(t.timestamp() + 1, 0).unwrap_or(t)
}

/// `t` rounded up to a whole millisecond (`valid_until` is sent with at most three digits).
fn ceil_milli(t: DateTime<Utc>) -> DateTime<Utc> {
    let ms =
        t.timestamp_millis() + i64::from(!t.timestamp_subsec_nanos().is_multiple_of(1_000_000));
    DateTime::from_timestamp_millis(ms).unwrap_or(t)
}

/// `t` cut down to its whole second.
fn floor_second(t: DateTime<Utc>) -> DateTime<Utc> {
    DateTime::from_timestamp(t.timestamp(), 0).unwrap_or(t)
}

impl Clock {
    /// Records a message's `created_at`, stamped between `sent` and `now`.
    pub fn observe(&mut self, created_at: &str, sent: DateTime<Utc>, now: DateTime<Utc>) {
        let Ok(t) = DateTime::parse_from_rfc3339(created_at) else {
            return;
        };
        let mid = sent + (now - sent) / 2;
        self.offset = Some(t.with_timezone(&Utc) - mid);
        self.rtt = now - sent;
        self.max_rtt = self.max_rtt.max(self.rtt);
        if let Some(step) = fraction_step(created_at) {
            self.resolution = self.resolution.min(step);
        }
    }

    /// The target's time at harness time `t` (the harness's when nothing was seen yet).
    fn target_at(&self, t: DateTime<Utc>) -> DateTime<Utc> {
        t + self.offset.unwrap_or_default()
    }

    /// The target's time now.
    pub fn target_now(&self) -> DateTime<Utc> {
        self.target_at(Utc::now())
    }

    /// How far the estimate may be off: the timestamps' resolution plus the round trip.
    pub fn tolerance(&self) -> chrono::Duration {
        self.resolution + self.rtt
    }

    /// The `valid_until` of a `soon` assert: the run's deadline while it is at least a lead
    /// ahead of the target's clock, else a new one (see the module docs for its precision).
    pub fn soon(&mut self) -> DateTime<Utc> {
        // An assert is as slow as the slowest request seen, at worst several times over.
        let lead = self.lead.max(self.tolerance() * 2 + self.max_rtt * 4);
        let earliest = self.target_now() + lead;
        match self.deadline {
            Some(d) if d >= earliest => d,
            _ => {
                let d = if self.keeps_millis {
                    ceil_milli(earliest)
                } else {
                    ceil_second(earliest) + chrono::Duration::milliseconds(1)
                };
                self.deadline = Some(d);
                d
            }
        }
    }

    /// The `valid_until` of the run's precision probe ([`SharedClock::probe_until`]): a day
    /// ahead of the target's clock, with a fraction of 987 ms — only a target keeping
    /// milliseconds gives it back (one keeping seconds, or steps of 10 ms, 250 ms or 1/300 s,
    /// cannot).
    fn probe_until(&self) -> DateTime<Utc> {
        floor_second(self.target_now() + chrono::Duration::days(1))
            + chrono::Duration::milliseconds(987)
    }

    /// An assert carrying the deadline may have reached the target after it (it was refused
    /// for it): the least lead doubles (up to [`MAX_LEAD`] × the time scale) and a new deadline is taken,
    /// which is returned.
    pub fn late(&mut self) -> DateTime<Utc> {
        self.lead = (self.lead * 2).min(self.max_lead);
        self.deadline = None;
        self.soon()
    }

    /// Records the `valid_until` a target gave back for the instant `sent`.
    pub fn observe_until(&mut self, sent: DateTime<Utc>, echoed: &str) {
        let Ok(t) = DateTime::parse_from_rfc3339(echoed) else {
            return;
        };
        if sent.timestamp_subsec_nanos() != 0 && t.with_timezone(&Utc) == sent {
            self.keeps_millis = true;
        }
    }

    /// The earliest and the latest instant at which the target may expire a claim sent with
    /// `until`: `until` itself once it keeps milliseconds, else the whole second around it.
    fn expiry_bounds(&self, until: DateTime<Utc>) -> (DateTime<Utc>, DateTime<Utc>) {
        if self.keeps_millis {
            (until, until)
        } else {
            (floor_second(until), ceil_second(until))
        }
    }

    /// `Some(expired)` when a read sent at harness time `sent` and answered by `answered`
    /// was certainly handled before, or certainly after, `until` on the target.
    pub fn expired(
        &self,
        until: DateTime<Utc>,
        sent: DateTime<Utc>,
        answered: DateTime<Utc>,
    ) -> Option<bool> {
        let tol = self.tolerance();
        let (earliest, latest) = self.expiry_bounds(until);
        if self.target_at(answered) + tol < earliest {
            Some(false)
        } else if self.target_at(sent) - tol > latest {
            Some(true)
        } else {
            None
        }
    }

    /// How long to wait until `until` has clearly passed (`None`: already, or too far).
    pub fn wait_for(&self, until: DateTime<Utc>) -> Option<Duration> {
        let (_, latest) = self.expiry_bounds(until);
        let left = latest + self.tolerance() + PAST_MARGIN - self.target_now();
        let left = left.to_std().ok()?;
        (left <= self.max_wait).then_some(left)
    }
}

/// One run's [`Clock`], shared by the drivers of its sequences (each sequence's driver is
/// new; the target's clock and the run's deadline are not).
#[derive(Debug, Default)]
pub struct SharedClock {
    clock: Mutex<Clock>,
    /// Time spent waiting for expiries (the rest of a run is work).
    waited: Mutex<Duration>,
}

impl SharedClock {
    /// A run's clock under the run's time scale ([`Clock::scaled`]).
    pub fn scaled(scale: TimeScale) -> Self {
        Self {
            clock: Mutex::new(Clock::scaled(scale)),
            waited: Mutex::default(),
        }
    }

    fn with<R>(&self, f: impl FnOnce(&mut Clock) -> R) -> R {
        // A poisoned lock only means a panicking step elsewhere: the clock itself is sound.
        let mut c = self
            .clock
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        f(&mut c)
    }

    /// [`Clock::observe`].
    pub fn observe(&self, created_at: &str, sent: DateTime<Utc>, now: DateTime<Utc>) {
        self.with(|c| c.observe(created_at, sent, now));
    }

    /// [`Clock::target_now`].
    pub fn target_now(&self) -> DateTime<Utc> {
        self.with(|c| c.target_now())
    }

    /// [`Clock::soon`].
    pub fn soon(&self) -> DateTime<Utc> {
        self.with(Clock::soon)
    }

    /// [`Clock::late`].
    pub fn late(&self) -> DateTime<Utc> {
        self.with(Clock::late)
    }

    /// [`Clock::probe_until`].
    pub fn probe_until(&self) -> DateTime<Utc> {
        self.with(|c| c.probe_until())
    }

    /// Whether the target has shown it keeps `valid_until` to the millisecond.
    #[cfg(test)]
    fn keeps_millis(&self) -> bool {
        self.with(|c| c.keeps_millis)
    }

    /// [`Clock::observe_until`].
    pub fn observe_until(&self, sent: DateTime<Utc>, echoed: &str) {
        self.with(|c| c.observe_until(sent, echoed));
    }

    /// [`Clock::expired`].
    pub fn expired(
        &self,
        until: DateTime<Utc>,
        sent: DateTime<Utc>,
        answered: DateTime<Utc>,
    ) -> Option<bool> {
        self.with(|c| c.expired(until, sent, answered))
    }

    /// Waits until `until` has clearly passed on the target (no wait when it has, or when
    /// the estimate puts it implausibly far).
    pub async fn await_past(&self, until: DateTime<Utc>) {
        if let Some(d) = self.with(|c| c.wait_for(until)) {
            tokio::time::sleep(d).await;
            let mut w = self
                .waited
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            *w += d;
        }
    }

    /// Time spent in [`SharedClock::await_past`] so far.
    pub fn waited(&self) -> Duration {
        *self
            .waited
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[cfg(test)]
#[expect(clippy::unwrap_used)] // tests: a panic is the failure report
mod tests {
    use super::*;

    fn at(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
    }

    #[test]
    fn a_fraction_that_is_not_zero_sets_the_resolution() {
        assert_eq!(fraction_step("2026-12-04T10:00:00Z"), None);
        assert_eq!(fraction_step("2026-12-04T10:00:00.000Z"), None);
        assert_eq!(
            fraction_step("2026-12-04T10:00:00.120Z"),
            Some(chrono::Duration::milliseconds(1))
        );
        assert_eq!(
            fraction_step("2026-12-04T10:00:00.5+01:00"),
            Some(chrono::Duration::milliseconds(100))
        );
        // Finer than a millisecond counts as a millisecond.
        assert_eq!(
            fraction_step("2026-12-04T10:00:00.123456789Z"),
            Some(chrono::Duration::milliseconds(1))
        );
    }

    const ONE_MS: u32 = 1_000_000;

    /// In step with the harness, 2 ms round trips, millisecond timestamps.
    fn loopback_clock(keeps_millis: bool) -> Clock {
        Clock {
            offset: Some(chrono::Duration::zero()),
            rtt: chrono::Duration::milliseconds(2),
            max_rtt: chrono::Duration::milliseconds(2),
            resolution: chrono::Duration::milliseconds(1),
            deadline: None,
            keeps_millis,
            lead: MIN_LEAD,
            ..Clock::default()
        }
    }

    /// A clock that has seen a `created_at` with milliseconds (never `.000`).
    fn millisecond_clock() -> Clock {
        let mut c = Clock::default();
        let now = Utc::now();
        let shown = now.to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
        c.observe(&shown.replace(".000", ".001"), now, now);
        c
    }

    #[test]
    fn whole_second_timestamps_keep_a_second_of_tolerance() {
        let mut c = Clock::default();
        let sent = Utc::now();
        c.observe(
            &sent.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            sent,
            sent,
        );
        assert_eq!(c.tolerance(), chrono::Duration::seconds(1));
        let d = c.soon();
        // At least two tolerances ahead, a millisecond past a whole second.
        assert!(
            d - c.target_now() >= chrono::Duration::seconds(2) - chrono::Duration::milliseconds(5)
        );
        assert_eq!(d.timestamp_subsec_nanos(), ONE_MS);
    }

    #[test]
    fn soon_asserts_share_one_deadline_while_it_is_far_enough_ahead() {
        let mut c = millisecond_clock();
        let first = c.soon();
        assert_eq!(first.timestamp_subsec_nanos(), ONE_MS);
        // The least lead, rounded up to a whole second: never a second more.
        assert!(first - c.target_now() < MIN_LEAD + chrono::Duration::seconds(1));
        assert_eq!(c.soon(), first);
        // Once it is too close, a new one follows, at least the least lead ahead.
        let close = c.target_now() + MIN_LEAD / 2;
        c.deadline = Some(close);
        let next = c.soon();
        assert!(next > close);
        assert!(next - c.target_now() >= MIN_LEAD - chrono::Duration::milliseconds(5));
    }

    #[test]
    fn a_late_assert_doubles_the_lead_and_takes_a_new_deadline() {
        let mut c = loopback_clock(true);
        let first = c.soon();
        let next = c.late();
        assert_ne!(next, first);
        assert!(next - c.target_now() >= MIN_LEAD * 2 - chrono::Duration::milliseconds(5));
        assert_eq!(c.soon(), next, "later asserts share the new deadline");
        for _ in 0..10 {
            c.late();
        }
        assert_eq!(c.lead, MAX_LEAD);
    }

    #[test]
    fn the_time_scale_multiplies_the_longest_wait_and_lead() {
        let ten = TimeScale::new(10.0).unwrap();
        let far = Utc::now() + chrono::Duration::seconds(20);
        let plain = loopback_clock(true);
        assert_eq!(plain.wait_for(far), None, "beyond the 6 s wait");
        let scaled = Clock {
            max_lead: Clock::scaled(ten).max_lead,
            max_wait: Clock::scaled(ten).max_wait,
            ..plain
        };
        assert!(scaled.wait_for(far).is_some(), "within 60 s");
        let mut c = scaled;
        for _ in 0..20 {
            c.late();
        }
        assert_eq!(c.lead, MAX_LEAD * 10);
        // A small factor never brings the most lead under the least one.
        let tiny = Clock::scaled(TimeScale::new(0.01).unwrap());
        assert_eq!(tiny.max_lead, MIN_LEAD);
    }

    #[test]
    fn a_target_that_gives_the_fraction_back_gets_deadlines_without_rounding() {
        let mut c = millisecond_clock();
        let first = c.soon();
        // Given back in whole seconds: the fraction was dropped, nothing learnt.
        c.observe_until(
            first,
            &floor_second(first).to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        );
        assert!(!c.keeps_millis);
        c.observe_until(
            first,
            &first.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true),
        );
        assert!(c.keeps_millis);
        c.deadline = None;
        let next = c.soon();
        assert!(next - c.target_now() < MIN_LEAD + chrono::Duration::milliseconds(50));
        assert_eq!(next.timestamp_subsec_nanos() % ONE_MS, 0);
    }

    #[test]
    fn the_probe_deadline_tells_a_millisecond_target_from_a_seconds_one() {
        let c = SharedClock::default();
        // The probe's own answer shows millisecond timestamps (as the reference's do).
        let t = floor_second(Utc::now()) + chrono::Duration::milliseconds(123);
        c.observe(
            &t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            t,
            t,
        );
        let probe = c.probe_until();
        assert_eq!(probe.timestamp_subsec_nanos(), 987 * ONE_MS);
        assert!(probe - c.target_now() > chrono::Duration::hours(23));
        // Precision unknown: a deadline is a whole second plus 1 ms.
        assert_eq!(c.soon().timestamp_subsec_nanos(), ONE_MS);
        // A target keeping seconds, or coarser steps, gives back another instant.
        for kept in ["Secs", "centis"] {
            let back = if kept == "Secs" {
                probe.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
            } else {
                (probe - chrono::Duration::milliseconds(7))
                    .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
            };
            c.observe_until(probe, &back);
            assert!(!c.keeps_millis(), "{back}");
        }
        c.observe_until(
            probe,
            &probe.to_rfc3339_opts(chrono::SecondsFormat::Micros, false),
        );
        assert!(c.keeps_millis());
        // From then on a new deadline is the lead itself, not the next whole second.
        c.with(|k| k.deadline = None);
        let d = c.soon();
        assert!(d - c.target_now() < chrono::Duration::milliseconds(100));
    }

    #[test]
    fn a_claim_may_expire_from_the_whole_second_until_precision_is_known() {
        let mut c = loopback_clock(false);
        let until = at("2026-12-04T10:00:01.400Z");
        let just_before = at("2026-12-04T10:00:01.100Z");
        let just_after = at("2026-12-04T10:00:01.700Z");
        // A target keeping seconds may expire it at 01 or at 02.
        assert_eq!(c.expired(until, just_before, just_before), None);
        assert_eq!(c.expired(until, just_after, just_after), None);
        assert_eq!(
            c.expired(
                until,
                at("2026-12-04T10:00:02.100Z"),
                at("2026-12-04T10:00:02.100Z")
            ),
            Some(true)
        );
        c.keeps_millis = true;
        assert_eq!(c.expired(until, just_before, just_before), Some(false));
        assert_eq!(c.expired(until, just_after, just_after), Some(true));
    }

    #[test]
    fn expiry_is_judged_only_when_the_whole_read_is_on_one_side() {
        let c = loopback_clock(true);
        let until = at("2026-12-04T10:00:01Z");
        let before = at("2026-12-04T10:00:00.900Z");
        let after = at("2026-12-04T10:00:01.100Z");
        assert_eq!(c.expired(until, before, before), Some(false));
        assert_eq!(c.expired(until, after, after), Some(true));
        // Sent before, answered after: the target may have read it on either side.
        assert_eq!(c.expired(until, before, after), None);
        // Within the tolerance of the instant.
        assert_eq!(
            c.expired(
                until,
                at("2026-12-04T10:00:01.002Z"),
                at("2026-12-04T10:00:01.002Z")
            ),
            None
        );
    }
}
