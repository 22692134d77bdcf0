//! The retry schedule of a webhook delivery (docs/webhooks.md), as pure functions.
//!
//! After a failed attempt the next one follows 1, 2, 5, 10, 30, 60, 120 and
//! 300 seconds later, each with ±10 % jitter so a burst of failures (a studio
//! that is down) does not come back all at the same instant; after the ninth
//! attempt the delivery is `failed`. `410 Gone` and a refusal of the SSRF
//! check at delivery stop at once. A `Retry-After` from the receiver
//! (seconds or an HTTP date) is honoured up to the schedule's cap of 300 s:
//! the retry never comes earlier than it asks, and jitter then only adds
//! (0 to +10 %).
//!
//! The random source and the current time are inputs; a scale factor
//! (`MATCHPLANE_WEBHOOK_RETRY_SCALE`, e.g. `0.01`) shrinks every delay for tests.

use chrono::{DateTime, Utc};
use rand::Rng;
use std::time::Duration;

/// Delays before the 2nd, 3rd, … 9th attempt, in seconds (docs/webhook-events.md).
pub const RETRY_DELAYS_SECS: [u64; 8] = [1, 2, 5, 10, 30, 60, 120, 300];

/// Attempts in all: the first one and one per retry delay.
pub const MAX_ATTEMPTS: u32 = RETRY_DELAYS_SECS.len() as u32 + 1;

/// The longest delay of the schedule (seconds), also the cap on `Retry-After`.
pub const MAX_DELAY_SECS: u64 = 300;

/// Relative jitter applied to every delay (±10 %).
pub const JITTER: f64 = 0.10;

/// Environment variable holding the test scale factor of every delay.
pub const RETRY_SCALE_ENV: &str = "MATCHPLANE_WEBHOOK_RETRY_SCALE";

/// What an attempt came to, as far as retrying is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// A 2xx answer.
    Delivered,
    /// `410 Gone`: the studio wants no more; stop at once.
    Gone,
    /// Not sent: the SSRF check at delivery (docs/webhooks.md) refused the
    /// URL's scheme or IP-literal host, or a host name that resolves to a
    /// non-public address; it stops at once, nothing having been connected
    /// to (a redelivery tries again).
    Refused,
    /// Any other status, a timeout or a connection error; `retry_after` is
    /// the receiver's `Retry-After`, already turned into a delay.
    Retryable {
        /// The delay the receiver asked for, if any.
        retry_after: Option<Duration>,
    },
}

/// How a delivery ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Final {
    /// A 2xx answer.
    Delivered,
    /// `410 Gone`.
    Gone,
    /// The SSRF check at delivery refused the URL's scheme, IP literal or
    /// the address its host name resolves to.
    Refused,
    /// Every attempt of the schedule failed.
    Exhausted,
}

impl Final {
    /// The delivery's stored status (`webhook_deliveries.status`):
    /// `succeeded` or `failed` (docs/webhook-events.md).
    pub fn status(self) -> &'static str {
        match self {
            Final::Delivered => "succeeded",
            Final::Gone | Final::Refused | Final::Exhausted => "failed",
        }
    }
}

/// What to do after an attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NextAction {
    /// The delivery is over.
    Stop(Final),
    /// Attempt again after this delay (already jittered and scaled).
    Retry {
        /// Wait before the next attempt.
        after: Duration,
    },
}

/// Why a schedule could not be built.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ScheduleError {
    /// The scale factor is not a number in `(0, 1]`.
    #[error("the webhook retry scale must be a number in (0, 1], got `{0}`")]
    Scale(String),
}

/// The docs/webhook-events.md schedule, possibly scaled down for tests.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Schedule {
    scale: f64,
}

impl Default for Schedule {
    fn default() -> Self {
        Self { scale: 1.0 }
    }
}

impl Schedule {
    /// A schedule whose every delay is multiplied by `scale`, in `(0, 1]`.
    ///
    /// # Errors
    /// [`ScheduleError::Scale`] for a scale outside `(0, 1]`.
    pub fn scaled(scale: f64) -> Result<Self, ScheduleError> {
        if scale.is_finite() && scale > 0.0 && scale <= 1.0 {
            Ok(Self { scale })
        } else {
            Err(ScheduleError::Scale(scale.to_string()))
        }
    }

    /// The schedule for the value of [`RETRY_SCALE_ENV`] (`None` or empty: unscaled).
    ///
    /// # Errors
    /// [`ScheduleError::Scale`] when the value is not a number in `(0, 1]`.
    pub fn from_setting(value: Option<&str>) -> Result<Self, ScheduleError> {
        match value.map(str::trim).filter(|v| !v.is_empty()) {
            None => Ok(Self::default()),
            Some(raw) => raw
                .parse::<f64>()
                .map_err(|_| ScheduleError::Scale(raw.to_owned()))
                .and_then(Self::scaled),
        }
    }

    /// The scale factor (1 in production).
    pub fn scale(&self) -> f64 {
        self.scale
    }

    /// What follows attempt number `attempt` (1 for the first) that came to
    /// `outcome`; `rng` draws the jitter.
    pub fn next<R: Rng + ?Sized>(&self, attempt: u32, outcome: Outcome, rng: &mut R) -> NextAction {
        let retry_after = match outcome {
            Outcome::Delivered => return NextAction::Stop(Final::Delivered),
            Outcome::Gone => return NextAction::Stop(Final::Gone),
            Outcome::Refused => return NextAction::Stop(Final::Refused),
            Outcome::Retryable { retry_after } => retry_after,
        };
        let index = attempt.max(1) as usize - 1;
        let Some(&base_secs) = RETRY_DELAYS_SECS.get(index) else {
            return NextAction::Stop(Final::Exhausted);
        };
        let base = base_secs as f64;
        let asked = retry_after.map_or(0.0, |d| d.as_secs_f64().min(MAX_DELAY_SECS as f64));
        let secs = if asked > base {
            asked * (1.0 + rng.gen_range(0.0..=JITTER))
        } else {
            base * (1.0 + rng.gen_range(-JITTER..=JITTER))
        };
        NextAction::Retry {
            after: Duration::from_secs_f64(secs * self.scale),
        }
    }
}

/// A `Retry-After` header value as a delay from `now`: delta seconds
/// (`120`) or an HTTP date (`Wed, 21 Oct 2026 07:28:00 GMT`); a date in the
/// past is no delay. `None` for anything else.
pub fn parse_retry_after(value: &str, now: DateTime<Utc>) -> Option<Duration> {
    let value = value.trim();
    if let Ok(secs) = value.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let at = DateTime::parse_from_rfc2822(value)
        .ok()?
        .with_timezone(&Utc);
    Some((at - now).to_std().unwrap_or(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::StdRng;
    use rand::SeedableRng;

    fn retry(after: Option<u64>) -> Outcome {
        Outcome::Retryable {
            retry_after: after.map(Duration::from_secs),
        }
    }

    fn delay(action: NextAction) -> f64 {
        match action {
            NextAction::Retry { after } => after.as_secs_f64(),
            NextAction::Stop(end) => panic!("expected a retry, got {end:?}"),
        }
    }

    #[test]
    fn follows_the_schedule_within_jitter_then_fails() {
        let schedule = Schedule::default();
        let mut rng = StdRng::seed_from_u64(1);
        for (i, &base) in RETRY_DELAYS_SECS.iter().enumerate() {
            let secs = delay(schedule.next(i as u32 + 1, retry(None), &mut rng));
            let base = base as f64;
            assert!(
                (base * 0.9..=base * 1.1).contains(&secs),
                "{secs} vs {base}"
            );
        }
        assert_eq!(
            schedule.next(MAX_ATTEMPTS, retry(None), &mut rng),
            NextAction::Stop(Final::Exhausted)
        );
        assert_eq!(MAX_ATTEMPTS, 9);
    }

    #[test]
    fn success_gone_and_refused_stop_at_once() {
        let schedule = Schedule::default();
        let mut rng = StdRng::seed_from_u64(2);
        for (outcome, end) in [
            (Outcome::Delivered, Final::Delivered),
            (Outcome::Gone, Final::Gone),
            (Outcome::Refused, Final::Refused),
        ] {
            assert_eq!(schedule.next(1, outcome, &mut rng), NextAction::Stop(end));
        }
        assert_eq!(Final::Gone.status(), "failed");
        assert_eq!(Final::Delivered.status(), "succeeded");
    }

    #[test]
    fn retry_after_is_honoured_up_to_the_cap() {
        let schedule = Schedule::default();
        let mut rng = StdRng::seed_from_u64(3);
        for _ in 0..200 {
            let asked = delay(schedule.next(1, retry(Some(42)), &mut rng));
            assert!((42.0..=42.0 * 1.1).contains(&asked), "{asked}");
            let capped = delay(schedule.next(1, retry(Some(3_600)), &mut rng));
            assert!((300.0..=330.0).contains(&capped), "{capped}");
            // A shorter Retry-After than the schedule keeps the schedule.
            let scheduled = delay(schedule.next(6, retry(Some(5)), &mut rng));
            assert!((54.0..=66.0).contains(&scheduled), "{scheduled}");
        }
    }

    #[test]
    fn the_scale_shrinks_every_delay() {
        let schedule = Schedule::from_setting(Some("0.01")).unwrap();
        let mut rng = StdRng::seed_from_u64(4);
        let secs = delay(schedule.next(8, retry(None), &mut rng));
        assert!((2.7..=3.3).contains(&secs), "{secs}");
        assert_eq!(Schedule::from_setting(None).unwrap(), Schedule::default());
        assert_eq!(
            Schedule::from_setting(Some(" ")).unwrap(),
            Schedule::default()
        );
        for bad in ["0", "-1", "2", "NaN", "fast"] {
            assert!(Schedule::from_setting(Some(bad)).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_burst_of_failures_is_spread_by_jitter() {
        let schedule = Schedule::default();
        let mut rng = StdRng::seed_from_u64(5);
        let delays: Vec<f64> = (0..1_000)
            .map(|_| delay(schedule.next(5, retry(None), &mut rng)))
            .collect();
        let min = delays.iter().copied().fold(f64::MAX, f64::min);
        let max = delays.iter().copied().fold(f64::MIN, f64::max);
        assert!(min >= 27.0 && max <= 33.0, "{min}..{max}");
        assert!(
            max - min > 4.0,
            "jitter should spread the burst: {min}..{max}"
        );
    }

    #[test]
    fn parses_retry_after_seconds_and_dates() {
        let now = DateTime::parse_from_rfc3339("2026-10-21T07:27:00Z")
            .unwrap()
            .with_timezone(&Utc);
        assert_eq!(
            parse_retry_after("120", now),
            Some(Duration::from_secs(120))
        );
        assert_eq!(
            parse_retry_after("Wed, 21 Oct 2026 07:28:00 GMT", now),
            Some(Duration::from_secs(60))
        );
        assert_eq!(
            parse_retry_after("Wed, 21 Oct 2026 07:00:00 GMT", now),
            Some(Duration::ZERO)
        );
        assert_eq!(parse_retry_after("soon", now), None);
    }
}
