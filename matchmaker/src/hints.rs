//! Unblock hints: what would match a waiting search, carried by its
//! waiting reason. For `NO_CANDIDATES_IN_RANGE`, the seconds until the
//! nearest candidate is in range both ways if nobody else arrives; for
//! `NO_EXACT_SEATING`, the party sizes that would complete a seating; for
//! `NO_COMMON_REGION`, the seconds until the search's ceiling reaches the
//! best region's worst latency.
//!
//! Pure arithmetic over the config: no clock (waits are handed in).

use crate::config::Algorithm;
use crate::latency::Regions;
use crate::teams::pack_partial;

/// Slack for floating-point noise, as in [`crate::tolerance::fits`].
const EPSILON: f64 = 1e-9;

/// Seconds (>= 0) until the range of a candidate that has waited `wait`
/// seconds reaches `distance` (MMR points or milliseconds) under
/// `algorithm`; `None` when it never does. MMR ranges widen linearly with
/// the wait (docs/game-modes.md#the-mmr-window) up to `maxTolerance`; Ping ranges are flat; FIFO
/// has no range (always 0).
pub fn seconds_until_range(algorithm: &Algorithm, wait: f64, distance: f64) -> Option<f64> {
    let wait = wait.max(0.0);
    match algorithm {
        Algorithm::Fifo {} => Some(0.0),
        Algorithm::Ping { max_delta } => (distance <= max_delta + EPSILON).then_some(0.0),
        Algorithm::Mmr {
            min_mmr,
            max_mmr,
            base_tolerance,
            expansion_multiplier,
            max_tolerance,
        } => {
            if distance <= crate::tolerance::capped_mmr_range(algorithm, wait) + EPSILON {
                return Some(0.0);
            }
            let span = max_mmr - min_mmr;
            let slope = (expansion_multiplier - 1.0) * base_tolerance / 10.0;
            if span <= 0.0 || slope <= 0.0 {
                return None;
            }
            let percent = distance * 100.0 / span;
            if max_tolerance.is_some_and(|cap| percent > cap + EPSILON) {
                return None;
            }
            // base + slope * w >= percent.
            let reach = (percent - base_tolerance) / slope;
            reach.is_finite().then_some((reach - wait).max(0.0))
        }
    }
}

/// Seconds until two candidates, that have waited `wait_a` and `wait_b`
/// seconds, are both in range of each other at `distance` (the fit rule
/// takes the smaller range): the later of the two; `None` when never.
pub fn seconds_until_mutual_fit(
    algorithm: &Algorithm,
    wait_a: f64,
    wait_b: f64,
    distance: f64,
) -> Option<f64> {
    let a = seconds_until_range(algorithm, wait_a, distance)?;
    let b = seconds_until_range(algorithm, wait_b, distance)?;
    Some(a.max(b))
}

/// Seconds until the ceiling of a search that has waited `wait` seconds
/// reaches `latency_ms` (its `expansion` steps); `None` when no step does.
pub fn seconds_until_ceiling(regions: &Regions, wait: f64, latency_ms: f64) -> Option<f64> {
    if latency_ms <= regions.ceiling(wait) + EPSILON {
        return Some(0.0);
    }
    regions
        .expansion
        .iter()
        .filter(|s| s.max_latency_ms + EPSILON >= latency_ms)
        .map(|s| (s.after_seconds - wait).max(0.0))
        .reduce(f64::min)
}

/// Party sizes that would complete an exact seating of a group whose
/// parties have `sizes` seats in teams of `caps` seats: the open seats of
/// each team under one seating of the group, largest first (empty when the
/// group cannot be seated at all, or is full).
pub fn completing_party_sizes(sizes: &[u32], caps: &[u32]) -> Vec<u32> {
    let Some(seat) = pack_partial(sizes, caps) else {
        return Vec::new();
    };
    let mut open = caps.to_vec();
    for (unit, team) in seat.iter().enumerate() {
        if let (Some(o), Some(s)) = (open.get_mut(*team), sizes.get(unit)) {
            *o = o.saturating_sub(*s);
        }
    }
    open.retain(|o| *o > 0);
    open.sort_unstable_by(|a, b| b.cmp(a));
    open
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mmr(base: f64, mult: f64, cap: Option<f64>) -> Algorithm {
        Algorithm::Mmr {
            min_mmr: 0.0,
            max_mmr: 3000.0,
            base_tolerance: base,
            expansion_multiplier: mult,
            max_tolerance: cap,
        }
    }

    #[test]
    fn mmr_range_reaches_the_distance_on_the_spec_schedule() {
        // 150 at 0 s, 300 at 10 s, 450 at 20 s.
        let a = mmr(5.0, 2.0, None);
        assert_eq!(seconds_until_range(&a, 0.0, 300.0), Some(10.0));
        assert_eq!(seconds_until_range(&a, 4.0, 450.0), Some(16.0));
        assert_eq!(seconds_until_range(&a, 30.0, 450.0), Some(0.0));
        // The later of the two ranges decides.
        assert_eq!(seconds_until_mutual_fit(&a, 8.0, 0.0, 300.0), Some(10.0));
    }

    #[test]
    fn never_when_the_range_stops_or_never_widens() {
        assert_eq!(
            seconds_until_range(&mmr(5.0, 2.0, Some(10.0)), 0.0, 301.0),
            None
        );
        assert_eq!(
            seconds_until_range(&mmr(5.0, 2.0, Some(10.0)), 0.0, 300.0),
            Some(10.0)
        );
        assert_eq!(seconds_until_range(&mmr(5.0, 1.0, None), 0.0, 151.0), None);
        let ping = Algorithm::Ping { max_delta: 40.0 };
        assert_eq!(seconds_until_range(&ping, 0.0, 41.0), None);
        assert_eq!(seconds_until_range(&ping, 0.0, 40.0), Some(0.0));
    }

    #[test]
    fn ceilings_follow_the_expansion_steps() {
        let regions = Regions {
            names: None,
            max_latency_ms: 60.0,
            expansion: vec![
                crate::latency::LatencyStep {
                    after_seconds: 20.0,
                    max_latency_ms: 100.0,
                },
                crate::latency::LatencyStep {
                    after_seconds: 40.0,
                    max_latency_ms: 150.0,
                },
            ],
        };
        assert_eq!(seconds_until_ceiling(&regions, 5.0, 50.0), Some(0.0));
        assert_eq!(seconds_until_ceiling(&regions, 5.0, 90.0), Some(15.0));
        assert_eq!(seconds_until_ceiling(&regions, 5.0, 120.0), Some(35.0));
        assert_eq!(seconds_until_ceiling(&regions, 5.0, 151.0), None);
    }

    #[test]
    fn two_duos_in_a_3v3_need_two_solos() {
        assert_eq!(completing_party_sizes(&[2, 2], &[3, 3]), vec![1, 1]);
        assert_eq!(completing_party_sizes(&[3, 2], &[3, 3]), vec![1]);
        assert!(completing_party_sizes(&[3, 3], &[3, 3]).is_empty());
    }
}
