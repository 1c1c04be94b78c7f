//! Timing budgets and the one factor that scales them (`--time-scale F`, the profile's
//! `time_scale`; issue 30 item 5).
//!
//! Every timeout and waiting bound the harness applies to a target — the per-request
//! timeout, the grace an SSP provider has to notice an overrun, the longest wait for a
//! Parley expiry, a history step's bound, the consumer's polls — is a [`TimeBudget`]: a base
//! duration times the run's [`TimeScale`]. A slow runner or a slow server gets a larger
//! factor instead of a check that fails on time alone, and a message that a budget ran out
//! names the budget, its base and the factor, so the reader knows which knob to turn.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// The factor every timing budget is multiplied by (1 by default).
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Serialize, Deserialize)]
#[serde(try_from = "f64", into = "f64")]
pub struct TimeScale(f64);

impl TimeScale {
    /// No scaling.
    pub const ONE: Self = Self(1.0);
    /// The largest factor accepted: beyond it a wait is a hang, not a budget.
    pub const MAX: f64 = 1_000.0;
    /// The smallest factor accepted.
    pub const MIN: f64 = 0.01;

    /// A factor in [`TimeScale::MIN`]..=[`TimeScale::MAX`].
    pub fn new(factor: f64) -> Result<Self, String> {
        if factor.is_finite() && (Self::MIN..=Self::MAX).contains(&factor) {
            Ok(Self(factor))
        } else {
            Err(format!(
                "time scale {factor}: a factor from {} to {} is expected",
                Self::MIN,
                Self::MAX
            ))
        }
    }

    /// The factor.
    pub fn factor(self) -> f64 {
        self.0
    }

    /// Whether this is the default factor.
    pub fn is_one(&self) -> bool {
        self.0 == 1.0
    }

    /// `base` times the factor (the factor is bounded, so the product fits).
    pub fn apply(self, base: Duration) -> Duration {
        base.mul_f64(self.0)
    }

    /// The command-line flag that reproduces this factor (` --time-scale F`; empty for 1):
    /// a verdict reached under other budgets is reproduced under the same ones.
    pub fn flag(self) -> String {
        if self.is_one() {
            String::new()
        } else {
            format!(" --time-scale {self}")
        }
    }

    /// `base` as a named budget under this factor.
    pub fn budget(self, name: &'static str, base: Duration) -> TimeBudget {
        TimeBudget {
            name,
            base,
            scale: self,
        }
    }
}

impl Default for TimeScale {
    fn default() -> Self {
        Self::ONE
    }
}

impl TryFrom<f64> for TimeScale {
    type Error = String;
    fn try_from(f: f64) -> Result<Self, String> {
        Self::new(f)
    }
}

impl From<TimeScale> for f64 {
    fn from(s: TimeScale) -> Self {
        s.0
    }
}

impl FromStr for TimeScale {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let f: f64 = s
            .trim()
            .parse()
            .map_err(|_| format!("time scale {s:?}: a number is expected (e.g. 2.5)"))?;
        Self::new(f)
    }
}

impl fmt::Display for TimeScale {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// One timing bound: what it is, its base and the factor applied.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TimeBudget {
    /// What the bound limits ("per-request timeout").
    pub name: &'static str,
    /// Its duration at time scale 1.
    pub base: Duration,
    /// The run's factor.
    pub scale: TimeScale,
}

impl TimeBudget {
    /// The bound applied: base × factor.
    pub fn limit(&self) -> Duration {
        self.scale.apply(self.base)
    }

    /// The bound in whole milliseconds.
    pub fn limit_ms(&self) -> u64 {
        u64::try_from(self.limit().as_millis()).unwrap_or(u64::MAX)
    }
}

impl fmt::Display for TimeBudget {
    /// `the per-request timeout of 200 ms (20 ms × time scale 10; raise --time-scale for a
    /// slower target)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the {} of {} ms ({} ms × time scale {}; raise --time-scale for a slower target)",
            self.name,
            self.limit_ms(),
            self.base.as_millis(),
            self.scale
        )
    }
}

#[cfg(test)]
#[expect(clippy::unwrap_used, reason = "tests: a panic is the failure report")]
mod tests {
    use super::*;

    #[test]
    fn a_factor_is_bounded_and_parsed() {
        assert_eq!("2.5".parse::<TimeScale>().unwrap().factor(), 2.5);
        for bad in ["0", "-1", "NaN", "inf", "1001", "x", ""] {
            assert!(bad.parse::<TimeScale>().is_err(), "{bad}");
        }
        let s: TimeScale = serde_json::from_str("4").unwrap();
        assert_eq!(s.factor(), 4.0);
        assert!(serde_json::from_str::<TimeScale>("0").is_err());
    }

    #[test]
    fn a_budget_is_its_base_times_the_factor_and_names_both() {
        let b = TimeScale::new(10.0)
            .unwrap()
            .budget("per-request timeout", Duration::from_millis(20));
        assert_eq!(b.limit(), Duration::from_millis(200));
        let text = b.to_string();
        assert!(text.contains("per-request timeout of 200 ms"), "{text}");
        assert!(text.contains("20 ms × time scale 10"), "{text}");
    }
}
