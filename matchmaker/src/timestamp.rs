//! Timestamps as every answer, message and webhook body writes them
//! (docs/openapi.md, "Timestamps"): RFC 3339 in UTC with exactly three
//! fractional digits and `Z`, e.g. `2026-12-01T10:00:00.000Z`; and
//! durations in seconds rounded to the millisecond.
//!
//! Formatting only: the core takes no clock, its callers hand it times.

use chrono::{DateTime, SecondsFormat, Utc};
use serde::Serializer;

/// `at` as `2026-12-01T10:00:00.000Z`, rounded to the millisecond as
/// [`from_unix_seconds`] rounds: a time stored with finer precision (a
/// match's `queuedAt` in the database) reads as it did as Unix seconds
/// (the search's own status).
pub fn format(at: &DateTime<Utc>) -> String {
    let millis = (at.timestamp_micros() + 500).div_euclid(1000);
    DateTime::from_timestamp_millis(millis)
        .unwrap_or(*at)
        .to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// Unix seconds `unix` as [`format`] writes them, rounded to the
/// millisecond; the empty string for a time chrono cannot represent.
pub fn from_unix_seconds(unix: f64) -> String {
    let millis = (unix * 1000.0).round() as i64;
    DateTime::from_timestamp_millis(millis)
        .map(|at| format(&at))
        .unwrap_or_default()
}

/// Seconds rounded to the millisecond, never below 0 (a `waitSeconds`).
pub fn round_millis(seconds: f64) -> f64 {
    (seconds.max(0.0) * 1000.0).round() / 1000.0
}

/// `#[serde(serialize_with = "matchplane_matchmaker::timestamp::seconds")]`
/// on an `f64` of seconds waited: written rounded to the millisecond
/// ([`round_millis`]).
///
/// # Errors
/// The serializer's.
pub fn seconds<S: Serializer>(seconds: &f64, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_f64(round_millis(*seconds))
}

/// [`seconds`] for a duration that may be absent (`null`).
///
/// # Errors
/// The serializer's.
pub fn optional_seconds<S: Serializer>(
    seconds: &Option<f64>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    match seconds {
        Some(s) => serializer.serialize_some(&round_millis(*s)),
        None => serializer.serialize_none(),
    }
}

/// Whether `text` is a timestamp in the one form [`format`] writes.
pub fn is_canonical(text: &str) -> bool {
    let b = text.as_bytes();
    let digits = |range: std::ops::Range<usize>| range.into_iter().all(|i| b[i].is_ascii_digit());
    b.len() == 24
        && digits(0..4)
        && b[4] == b'-'
        && digits(5..7)
        && b[7] == b'-'
        && digits(8..10)
        && b[10] == b'T'
        && digits(11..13)
        && b[13] == b':'
        && digits(14..16)
        && b[16] == b':'
        && digits(17..19)
        && b[19] == b'.'
        && digits(20..23)
        && b[23] == b'Z'
        && DateTime::parse_from_rfc3339(text).is_ok()
}

/// `#[serde(serialize_with = "matchplane_matchmaker::timestamp::serialize")]`
/// on a `DateTime<Utc>` field.
///
/// # Errors
/// The serializer's.
pub fn serialize<S: Serializer>(at: &DateTime<Utc>, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(&format(at))
}

/// [`serialize`] for an `Option<DateTime<Utc>>` field (`None` is `null`).
pub mod option {
    use chrono::{DateTime, Utc};
    use serde::Serializer;

    /// `#[serde(serialize_with = "matchplane_matchmaker::timestamp::option::serialize")]`.
    ///
    /// # Errors
    /// The serializer's.
    pub fn serialize<S: Serializer>(
        at: &Option<DateTime<Utc>>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        match at {
            Some(at) => super::serialize(at, serializer),
            None => serializer.serialize_none(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_form_with_milliseconds_and_z() {
        let at = DateTime::parse_from_rfc3339("2026-12-01T10:00:00.123456789+00:00")
            .unwrap()
            .with_timezone(&Utc);
        assert_eq!(format(&at), "2026-12-01T10:00:00.123Z");
        // Rounded as Unix seconds are: a search's `queuedAt` reads the same
        // from its status and from its stored match.
        let unix = 1_796_675_469.612_6;
        let stored = DateTime::from_timestamp_micros((unix * 1e6) as i64).unwrap();
        assert_eq!(format(&stored), from_unix_seconds(unix));
        assert_eq!(format(&stored), "2026-12-07T20:31:09.613Z");
        assert_eq!(
            from_unix_seconds(1_764_583_200.0),
            "2025-12-01T10:00:00.000Z"
        );
        assert!(is_canonical("2026-12-01T10:00:00.123Z"));
        for other in [
            "2026-12-01T10:00:00Z",
            "2026-12-01T10:00:00.123456Z",
            "2026-12-01T10:00:00.123+00:00",
            "2026-13-01T10:00:00.123Z",
            "tkt_01JDZ8M4Q7N4W1Y8A5V3C2B6D9",
        ] {
            assert!(!is_canonical(other), "{other}");
        }
        assert_eq!(round_millis(2.123_456), 2.123);
        assert_eq!(round_millis(-1.0), 0.0);
    }
}
