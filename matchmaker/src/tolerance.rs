//! The MMR window of docs/game-modes.md#the-mmr-window and the fit rule shared by MMR and Ping.

/// Effective MMR range (MMR points) of a candidate that has waited
/// `wait_seconds`, by docs/game-modes.md#the-mmr-window:
///
/// `tolerancePercent = baseTolerance + (expansionMultiplier - 1) * baseTolerance * (waitSeconds / 10)`
/// `effectiveRange = tolerancePercent / 100 * (maxMmr - minMmr)`
///
/// The wait is continuous (not stepped) and negative waits count as zero.
/// Computed as `percent * span / 100` so that round percents give exact
/// ranges (10 % of 3000 is exactly 300).
///
/// Example (docs/game-modes.md#the-mmr-window): `0..3000`, base 5, multiplier 2 gives 150 at 0 s,
/// 300 at 10 s and 450 at 20 s.
pub fn mmr_range(
    min_mmr: f64,
    max_mmr: f64,
    base_tolerance: f64,
    expansion_multiplier: f64,
    wait_seconds: f64,
) -> f64 {
    let wait = wait_seconds.max(0.0);
    let percent = base_tolerance + (expansion_multiplier - 1.0) * base_tolerance * (wait / 10.0);
    percent * (max_mmr - min_mmr) / 100.0
}

/// The effective MMR range of an MMR `algorithm` after `wait_seconds`,
/// stopped at `maxTolerance` percent when the mode sets one (docs/game-modes.md#thin-pools-smaller-matches-and-bots).
/// Other algorithms have no MMR range: 0.
pub fn capped_mmr_range(algorithm: &crate::config::Algorithm, wait_seconds: f64) -> f64 {
    let crate::config::Algorithm::Mmr {
        min_mmr,
        max_mmr,
        base_tolerance,
        expansion_multiplier,
        max_tolerance,
    } = algorithm
    else {
        return 0.0;
    };
    let range = mmr_range(
        *min_mmr,
        *max_mmr,
        *base_tolerance,
        *expansion_multiplier,
        wait_seconds,
    );
    match max_tolerance {
        Some(cap) => range.min(cap * (max_mmr - min_mmr) / 100.0),
        None => range,
    }
}

/// Slack for floating-point noise when comparing a distance with a range:
/// far below any meaningful MMR or millisecond difference.
const EPSILON: f64 = 1e-9;

/// Whether two candidates fit each other (docs/game-modes.md#the-mmr-window): `|a - b| <= min(rangeA, rangeB)`.
pub fn fits(value_a: f64, range_a: f64, value_b: f64, range_b: f64) -> bool {
    (value_a - value_b).abs() <= range_a.min(range_b) + EPSILON
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_example_ranges() {
        assert_eq!(mmr_range(0.0, 3000.0, 5.0, 2.0, 0.0), 150.0);
        assert_eq!(mmr_range(0.0, 3000.0, 5.0, 2.0, 10.0), 300.0);
        assert_eq!(mmr_range(0.0, 3000.0, 5.0, 2.0, 20.0), 450.0);
    }

    #[test]
    fn widening_is_continuous_not_stepped() {
        let r = mmr_range(0.0, 3000.0, 5.0, 2.0, 5.0);
        assert_eq!(r, 225.0);
    }

    #[test]
    fn multiplier_one_never_widens() {
        assert_eq!(mmr_range(0.0, 1000.0, 10.0, 1.0, 600.0), 100.0);
    }

    #[test]
    fn max_tolerance_stops_the_widening() {
        let algorithm = crate::config::Algorithm::Mmr {
            min_mmr: 0.0,
            max_mmr: 3000.0,
            base_tolerance: 5.0,
            expansion_multiplier: 2.0,
            max_tolerance: Some(10.0),
        };
        assert_eq!(capped_mmr_range(&algorithm, 5.0), 225.0);
        assert_eq!(capped_mmr_range(&algorithm, 10.0), 300.0);
        assert_eq!(capped_mmr_range(&algorithm, 600.0), 300.0);
    }

    #[test]
    fn fit_is_mutual() {
        // A wide range does not help a partner with a narrow one.
        assert!(!fits(1500.0, 1000.0, 1800.0, 200.0));
        assert!(fits(1500.0, 300.0, 1800.0, 300.0));
        assert!(!fits(1500.0, 299.0, 1800.0, 1000.0));
    }
}
