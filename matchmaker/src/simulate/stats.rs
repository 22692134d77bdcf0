//! Percentiles for the simulation's `stats` block (docs/simulate.md).

use serde::Serialize;

/// Nearest-rank percentile `q` (0..=100) of sorted `values`; `None` if empty.
pub fn percentile(sorted: &[f64], q: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = ((q / 100.0) * sorted.len() as f64).ceil() as usize;
    Some(sorted[rank.clamp(1, sorted.len()) - 1])
}

fn sorted(values: &[f64]) -> Vec<f64> {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    v
}

/// `{p50, p90, p99, max}` of a sample (seconds for waits); `null`s when empty.
#[derive(Debug, Clone, PartialEq, Serialize)]
/// Written to three decimals: a wait to the millisecond, as every
/// duration (docs/openapi.md).
pub struct Percentiles {
    /// Median.
    #[serde(serialize_with = "crate::timestamp::optional_seconds")]
    pub p50: Option<f64>,
    /// 90th percentile.
    #[serde(serialize_with = "crate::timestamp::optional_seconds")]
    pub p90: Option<f64>,
    /// 99th percentile.
    #[serde(serialize_with = "crate::timestamp::optional_seconds")]
    pub p99: Option<f64>,
    /// Largest value.
    #[serde(serialize_with = "crate::timestamp::optional_seconds")]
    pub max: Option<f64>,
}

impl Percentiles {
    /// Nearest-rank percentiles of `values`.
    pub fn of(values: &[f64]) -> Self {
        let s = sorted(values);
        Self {
            p50: percentile(&s, 50.0),
            p90: percentile(&s, 90.0),
            p99: percentile(&s, 99.0),
            max: s.last().copied(),
        }
    }
}

/// `{p50, p90, max}` of a sample (MMR points); `null`s when empty.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = SpreadSchema))]
pub struct Spread {
    /// Median.
    pub p50: Option<f64>,
    /// 90th percentile.
    pub p90: Option<f64>,
    /// Largest value.
    pub max: Option<f64>,
}

impl Spread {
    /// Nearest-rank percentiles of `values`.
    pub fn of(values: &[f64]) -> Self {
        let s = sorted(values);
        Self {
            p50: percentile(&s, 50.0),
            p90: percentile(&s, 90.0),
            max: s.last().copied(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank() {
        let v: Vec<f64> = (1..=10).map(f64::from).collect();
        assert_eq!(percentile(&v, 50.0), Some(5.0));
        assert_eq!(percentile(&v, 90.0), Some(9.0));
        assert_eq!(percentile(&v, 99.0), Some(10.0));
        assert_eq!(percentile(&[], 50.0), None);
    }
}
