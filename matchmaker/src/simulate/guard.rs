//! The config guard: refuses a proposed config whose guarded figures
//! (see [`super::FIGURES`]) worsen by more than a tolerance against the
//! current config on the same arrivals.

use super::compare::{higher_is_better, Comparison, FIGURES};
use crate::codes::Code;
use crate::validation::FieldError;
use serde::Serialize;

/// `guardTolerance` when none is given: a guarded figure may worsen by 10 %.
pub const DEFAULT_GUARD_TOLERANCE: f64 = 0.1;

/// One guarded figure under both configs.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GuardedFigure {
    /// The figure, e.g. `waitP90`.
    pub figure: String,
    /// Under the current config (`a`); written to the thousandth, as the
    /// reports' figures.
    #[serde(serialize_with = "crate::timestamp::optional_seconds")]
    pub current: Option<f64>,
    /// Under the proposed config (`b`), written as `current`.
    #[serde(serialize_with = "crate::timestamp::optional_seconds")]
    pub proposed: Option<f64>,
    /// Relative worsening (0.5: 50 % worse; negative: better); `null`
    /// when the current value is 0 or either value is absent.
    pub worsened_by: Option<f64>,
    /// Whether it worsened by more than the tolerance.
    pub regressed: bool,
}

/// The guard's answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GuardVerdict {
    /// Whether the proposed config passes.
    pub passed: bool,
    /// [`CONFIG_REGRESSION`] when it does not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<&'static str>,
    /// The tolerance applied (a fraction: 0.1 is 10 %).
    pub tolerance: f64,
    /// Every guarded figure, in the order asked.
    pub figures: Vec<GuardedFigure>,
}

/// Parses a guard list such as `waitP90,mmrSpreadP50`: figure names of
/// [`FIGURES`], separated by commas, at least one.
///
/// # Errors
/// `VALIDATION_ERROR` on `field` naming the unknown figures.
pub fn parse_guard(list: &str, field: &str) -> Result<Vec<&'static str>, FieldError> {
    let mut figures = Vec::new();
    let mut unknown = Vec::new();
    for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        match FIGURES.iter().find(|f| **f == name) {
            Some(f) if !figures.contains(f) => figures.push(*f),
            Some(_) => {}
            None => unknown.push(name.to_owned()),
        }
    }
    if !unknown.is_empty() || figures.is_empty() {
        return Err(FieldError::new(
            field,
            Code::ValidationError,
            format!(
                "guard names figures among {}; unknown: {}",
                FIGURES.join(", "),
                unknown.join(", ")
            ),
        ));
    }
    Ok(figures)
}

/// Checks `guarded` figures of `comparison` (`a` current, `b` proposed):
/// a figure regresses when it worsens by more than `tolerance` (relative
/// to the current value; smaller is better except for `matches`,
/// `matchedPlayers` and `matchedShare`), when it had a value and has none
/// (no match at all), or when it was 0 and worsens at all.
pub fn check_guard(comparison: &Comparison, guarded: &[&str], tolerance: f64) -> GuardVerdict {
    let figures: Vec<GuardedFigure> = guarded
        .iter()
        .map(|figure| {
            let [current, proposed] = comparison.diff.get(figure).copied().unwrap_or([None, None]);
            let sign = if higher_is_better(figure) { -1.0 } else { 1.0 };
            let (worsened_by, regressed) = match (current, proposed) {
                (Some(c), Some(p)) if c != 0.0 => {
                    let w = sign * (p - c) / c.abs();
                    (Some(w), w > tolerance + 1e-12)
                }
                (Some(_), Some(p)) => (None, sign * p > 0.0),
                (Some(_), None) => (None, true),
                (None, _) => (None, false),
            };
            GuardedFigure {
                figure: (*figure).to_owned(),
                current,
                proposed,
                worsened_by,
                regressed,
            }
        })
        .collect();
    let passed = figures.iter().all(|f| !f.regressed);
    GuardVerdict {
        passed,
        code: (!passed).then_some(crate::Code::ConfigRegression.as_str()),
        tolerance,
        figures,
    }
}

#[cfg(test)]
mod tests {
    use super::GuardedFigure;

    /// A figure's sums carry float noise; the answer gives the thousandth.
    #[test]
    fn figures_are_written_to_the_thousandth() {
        let figure = GuardedFigure {
            figure: "waitP90".into(),
            current: Some(1.139_999_999_999_872_7),
            proposed: None,
            worsened_by: None,
            regressed: false,
        };
        let json = serde_json::to_value(&figure).unwrap_or_default();
        assert_eq!(json["current"], 1.14);
        assert!(json["proposed"].is_null());
    }
}
