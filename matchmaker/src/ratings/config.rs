//! The optional `ratings` block of a game mode.

use crate::codes::Code;
use crate::validation::FieldError;
use serde::{Deserialize, Serialize};

/// Glicko-2 ratings of a game mode: results are accepted, and a stored
/// rating stands in for a ticket without `attributes.mmr`:
/// `{"enabled","tau","initialRating","initialDeviation","initialVolatility","ratingPeriodSeconds"}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = Ratings))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RatingsConfig {
    /// Whether results are accepted and stored ratings stand in for a
    /// missing ticket `mmr`; default `true`.
    #[serde(default = "yes")]
    pub enabled: bool,
    /// Glicko-2 system constant τ (how fast volatility may change), in
    /// (0, 10], 0.2..=1.2 typical; default 0.5.
    #[serde(default = "tau")]
    #[cfg_attr(feature = "openapi", schema(exclusive_minimum = 0, maximum = 10))]
    pub tau: f64,
    /// Rating of a player never seen (Glicko scale, 1500 = average);
    /// default 1500.
    #[serde(default = "initial_rating")]
    #[cfg_attr(feature = "openapi", schema(minimum = -1e9, maximum = 1e9))]
    pub initial_rating: f64,
    /// Deviation of a player never seen, in (0, 1000]; also the cap of idle
    /// growth; default 350.
    #[serde(default = "initial_deviation")]
    #[cfg_attr(feature = "openapi", schema(exclusive_minimum = 0, maximum = 1000))]
    pub initial_deviation: f64,
    /// Volatility σ of a player never seen, in (0, 1]; default 0.06.
    #[serde(default = "initial_volatility")]
    #[cfg_attr(feature = "openapi", schema(exclusive_minimum = 0, maximum = 1))]
    pub initial_volatility: f64,
    /// Length of one rating period (seconds, >= 1) for idle deviation
    /// growth; default 86400.
    #[serde(default = "rating_period")]
    #[cfg_attr(feature = "openapi", schema(minimum = 1))]
    pub rating_period_seconds: f64,
}

fn yes() -> bool {
    true
}
fn tau() -> f64 {
    0.5
}
fn initial_rating() -> f64 {
    1500.0
}
fn initial_deviation() -> f64 {
    350.0
}
fn initial_volatility() -> f64 {
    0.06
}
fn rating_period() -> f64 {
    86_400.0
}

impl Default for RatingsConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            tau: tau(),
            initial_rating: initial_rating(),
            initial_deviation: initial_deviation(),
            initial_volatility: initial_volatility(),
            rating_period_seconds: rating_period(),
        }
    }
}

impl RatingsConfig {
    /// Every failed rule, each `VALIDATION_ERROR` with its field under `ratings.`.
    pub fn validate(&self) -> Vec<FieldError> {
        let mut errors = Vec::new();
        let mut check = |ok: bool, field: &str, message: &str| {
            if !ok {
                errors.push(FieldError::new(
                    format!("ratings.{field}"),
                    Code::ValidationError,
                    message,
                ));
            }
        };
        check(
            self.tau.is_finite() && self.tau > 0.0 && self.tau <= 10.0,
            "tau",
            "tau must be in (0, 10]",
        );
        check(
            crate::validation::within(self.initial_rating, crate::validation::MAX_ABS_MMR),
            "initialRating",
            "initialRating must be a number within ±1e9",
        );
        check(
            self.initial_deviation.is_finite()
                && self.initial_deviation > 0.0
                && self.initial_deviation <= 1000.0,
            "initialDeviation",
            "initialDeviation must be in (0, 1000]",
        );
        check(
            self.initial_volatility.is_finite()
                && self.initial_volatility > 0.0
                && self.initial_volatility <= 1.0,
            "initialVolatility",
            "initialVolatility must be in (0, 1]",
        );
        check(
            self.rating_period_seconds.is_finite() && self.rating_period_seconds >= 1.0,
            "ratingPeriodSeconds",
            "ratingPeriodSeconds must be at least 1",
        );
        errors
    }
}
