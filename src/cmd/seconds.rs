//! Flags given in seconds (fractions allowed, docs/configuration.md): one
//! way from the parsed number to a `Duration`, so that no value (`NaN`,
//! `inf`, `1e300`) can reach `Duration::from_secs_f64`, which panics on
//! them. Each flag names its range once, in a [`SecondsFlag`].

use std::time::Duration;

/// A flag in seconds and the range docs/configuration.md gives it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SecondsFlag {
    /// The flag, with its dashes (`--socket-lease`).
    pub flag: &'static str,
    /// Its environment variable.
    pub variable: &'static str,
    /// The smallest value accepted.
    pub min: f64,
    /// The largest value accepted.
    pub max: f64,
}

/// A value in seconds outside its flag's range, or not a number at all
/// (`NaN`, `inf`): exit 1 (docs/configuration.md, "Exit codes").
#[derive(Debug, thiserror::Error, PartialEq)]
#[error(
    "{flag} ({variable}) must be a number of seconds from {min} to {max}, not {value}",
    flag = .flag.flag,
    variable = .flag.variable,
    min = .flag.min,
    max = .flag.max
)]
pub struct InvalidSeconds {
    /// The flag refused.
    pub flag: SecondsFlag,
    /// The value given.
    pub value: f64,
}

impl SecondsFlag {
    /// `value` as a duration.
    ///
    /// # Errors
    /// [`InvalidSeconds`] when `value` is not a finite number within the
    /// flag's range.
    pub fn parse(self, value: f64) -> Result<Duration, InvalidSeconds> {
        // `contains` is false for NaN; the bounds are finite, so a value
        // within them is too.
        if (self.min..=self.max).contains(&value) {
            Ok(Duration::from_secs_f64(value))
        } else {
            Err(InvalidSeconds { flag: self, value })
        }
    }

    /// `value` as a duration, a finite value outside the range brought to
    /// its nearer end with a warning (the flags whose docs say they are
    /// clamped).
    ///
    /// # Errors
    /// [`InvalidSeconds`] when `value` is `NaN` or infinite.
    pub fn clamp(self, value: f64) -> Result<Duration, InvalidSeconds> {
        if !value.is_finite() {
            return Err(InvalidSeconds { flag: self, value });
        }
        let kept = value.clamp(self.min, self.max);
        if kept != value {
            tracing::warn!(
                flag = self.flag,
                variable = self.variable,
                given = value,
                used = kept,
                "a number of seconds outside {} to {} is clamped",
                self.min,
                self.max
            );
        }
        self.parse(kept)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LEASE: SecondsFlag = SecondsFlag {
        flag: "--socket-lease",
        variable: "MATCHPLANE_SOCKET_LEASE",
        min: 3.0,
        max: 86_400.0,
    };

    #[test]
    fn a_value_in_range_is_its_duration() {
        assert_eq!(LEASE.parse(3.5), Ok(Duration::from_millis(3_500)));
        assert_eq!(LEASE.parse(86_400.0), Ok(Duration::from_secs(86_400)));
    }

    #[test]
    fn what_is_not_a_number_in_range_is_refused_by_name() {
        for value in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 1e300, 1.0, -3.0] {
            let err = LEASE.parse(value).unwrap_err();
            let text = err.to_string();
            assert!(text.contains("--socket-lease"), "{text}");
            assert!(text.contains("MATCHPLANE_SOCKET_LEASE"), "{text}");
            assert!(text.contains("from 3 to 86400"), "{text}");
        }
    }

    #[test]
    fn clamping_keeps_finite_values_and_refuses_the_rest() {
        assert_eq!(LEASE.clamp(1e300), Ok(Duration::from_secs(86_400)));
        assert_eq!(LEASE.clamp(0.0), Ok(Duration::from_secs(3)));
        assert!(LEASE.clamp(f64::NAN).is_err());
        assert!(LEASE.clamp(f64::INFINITY).is_err());
    }
}
