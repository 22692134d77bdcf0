//! The mean of a list of numbers: a party's `mean` of a `number` attribute
//! (docs/rules.md, "Parties"), a team's mean MMR.

/// The mean of `values`, `None` when there is none. Finite values give a
/// finite mean, however large: when their sum overflows (two players at
/// `1.7e308`), each value is divided first (and the result kept between
/// the least and the greatest value). Otherwise the same as the sum
/// divided by the count.
pub fn mean(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let n = values.len() as f64;
    let sum: f64 = values.iter().sum();
    if sum.is_finite() || values.iter().any(|v| !v.is_finite()) {
        return Some(sum / n);
    }
    // The mean lies between the least and the greatest value; rounding
    // could carry the divided sum past the greatest (to infinity at
    // `f64::MAX`).
    let (lo, hi) = values
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(*v), hi.max(*v))
        });
    Some(values.iter().map(|v| v / n).sum::<f64>().clamp(lo, hi))
}

#[cfg(test)]
mod tests {
    use super::mean;

    #[test]
    fn a_mean_of_finite_numbers_never_overflows() {
        assert_eq!(mean(&[]), None);
        assert_eq!(mean(&[1.0, 2.0]), Some(1.5));
        assert_eq!(mean(&[1.7e308, 1.7e308]), Some(1.7e308));
        assert_eq!(mean(&[f64::MAX, f64::MAX, f64::MAX]), Some(f64::MAX));
        let m = mean(&[1.7e308, -1.0e308, 1.7e308]).unwrap();
        assert!(m.is_finite() && (m - 0.8e308).abs() < 1e295, "{m}");
    }
}
