//! Latency maps and the mode's `regions` block (docs/regions.md): their
//! shapes and their validation. The cycle's rule is in [`crate::regions`].

use crate::codes::Code;
use crate::config::GameModeConfig;
use crate::validation::FieldError;
use arcstr::ArcStr;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A ticket's `attributes.latencies`: round trips (milliseconds) the client
/// measured to the studio's regions, by region name.
pub type Latencies = BTreeMap<ArcStr, f64>;

/// Most entries of a latency map, and most `names` of a `regions` block.
pub const MAX_REGIONS: usize = 32;
/// Largest latency and ceiling (milliseconds).
pub const MAX_LATENCY_MS: f64 = 5000.0;
/// Most `expansion` steps.
pub const MAX_EXPANSION_STEPS: usize = 8;

/// The mode's `regions` block (docs/regions.md): tickets carry
/// `attributes.latencies`, and a match is played in a region within every
/// member's own ceiling.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(example = json!({"names": ["eu-west", "us-east"], "maxLatencyMs": 80, "expansion": [{"afterSeconds": 20, "maxLatencyMs": 120}]})))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Regions {
    /// The region names tickets may name (1..=32, each
    /// `^[a-z0-9][a-z0-9-]{0,31}$`); absent: any well-formed name.
    #[serde(
        default,
        deserialize_with = "crate::config::present",
        skip_serializing_if = "Option::is_none"
    )]
    #[cfg_attr(
        feature = "openapi",
        schema(nullable = false, min_items = 1, max_items = 32)
    )]
    pub names: Option<Vec<String>>,
    /// A ticket's ceiling (milliseconds, 1..=5000) before any expansion step.
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 5000))]
    pub max_latency_ms: f64,
    /// Ceilings raised as a ticket waits (at most 8 steps, both fields
    /// strictly increasing).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "openapi", schema(max_items = 8))]
    pub expansion: Vec<LatencyStep>,
}

/// One expansion step: from `afterSeconds` of a ticket's own wait, its
/// ceiling is `maxLatencyMs`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LatencyStep {
    /// Wait (seconds) from which the step applies.
    #[cfg_attr(feature = "openapi", schema(minimum = 0, maximum = 86400))]
    pub after_seconds: f64,
    /// The ceiling from then on (milliseconds).
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 5000))]
    pub max_latency_ms: f64,
}

impl Regions {
    /// The ceiling (milliseconds) of a ticket that has waited `wait` seconds:
    /// the last step reached, else `maxLatencyMs`.
    pub fn ceiling(&self, wait: f64) -> f64 {
        self.expansion
            .iter()
            .filter(|s| wait >= s.after_seconds)
            .map(|s| s.max_latency_ms)
            .fold(self.max_latency_ms, f64::max)
    }
}

/// Whether `name` matches `^[a-z0-9][a-z0-9-]{0,31}$`.
pub fn is_valid_region_name(name: &str) -> bool {
    let b = name.as_bytes();
    !b.is_empty()
        && b.len() <= 32
        && (b[0].is_ascii_lowercase() || b[0].is_ascii_digit())
        && b[1..]
            .iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
}

fn ceiling_ok(ms: f64) -> bool {
    (1.0..=MAX_LATENCY_MS).contains(&ms)
}

/// The `regions` block rules (docs/regions.md), every failure pushed.
pub(crate) fn check_regions(config: &GameModeConfig, push: &mut impl FnMut(&str, Code, String)) {
    let Some(regions) = &config.regions else {
        return;
    };
    if let Some(names) = &regions.names {
        if names.is_empty() || names.len() > MAX_REGIONS {
            push(
                "regions.names",
                Code::ValidationError,
                format!("names must list 1 to {MAX_REGIONS} regions"),
            );
        }
        for (i, n) in names.iter().enumerate() {
            if !is_valid_region_name(n) {
                push(
                    &format!("regions.names[{i}]"),
                    Code::ValidationError,
                    "a region name must match ^[a-z0-9][a-z0-9-]{0,31}$".into(),
                );
            } else if names[..i].contains(n) {
                push(
                    &format!("regions.names[{i}]"),
                    Code::ValidationError,
                    format!("region {n} is listed twice"),
                );
            }
        }
    }
    if !ceiling_ok(regions.max_latency_ms) {
        push(
            "regions.maxLatencyMs",
            Code::ValidationError,
            format!("maxLatencyMs must be 1 to {MAX_LATENCY_MS} ms"),
        );
    }
    if regions.expansion.len() > MAX_EXPANSION_STEPS {
        push(
            "regions.expansion",
            Code::ValidationError,
            format!("at most {MAX_EXPANSION_STEPS} expansion steps"),
        );
    }
    let (mut after, mut ceiling) = (0.0_f64, regions.max_latency_ms);
    for (i, step) in regions.expansion.iter().enumerate() {
        let a = step.after_seconds;
        if !a.is_finite() || a <= after || a > crate::thin_validation::MAX_AFTER_SECONDS {
            push(
                &format!("regions.expansion[{i}].afterSeconds"),
                Code::ValidationError,
                "afterSeconds must be above 0 and above the previous step's, at most one day"
                    .into(),
            );
        }
        if !ceiling_ok(step.max_latency_ms) || step.max_latency_ms <= ceiling {
            push(
                &format!("regions.expansion[{i}].maxLatencyMs"),
                Code::ValidationError,
                format!(
                    "maxLatencyMs must be 1 to {MAX_LATENCY_MS} ms and above the previous ceiling"
                ),
            );
        }
        if a.is_finite() {
            after = after.max(a);
        }
        if step.max_latency_ms.is_finite() {
            ceiling = ceiling.max(step.max_latency_ms);
        }
    }
}

/// Parses and checks `attributes.latencies` (docs/regions.md): an object of
/// 1..=32 entries, names `^[a-z0-9][a-z0-9-]{0,31}$` (and among
/// `regions.names` when the mode lists them), values 0..=5000 ms.
///
/// # Errors
/// Every failure, each with its field (`attributes.latencies` or
/// `attributes.latencies.<name>`), all `VALIDATION_ERROR`.
pub fn parse_latencies(
    value: &serde_json::Value,
    regions: Option<&Regions>,
) -> Result<Latencies, Vec<FieldError>> {
    const FIELD: &str = "attributes.latencies";
    let Some(object) = value.as_object() else {
        return Err(vec![FieldError::new(
            FIELD,
            Code::ValidationError,
            "latencies must be an object of region name to milliseconds",
        )]);
    };
    let mut errors = Vec::new();
    if object.is_empty() || object.len() > MAX_REGIONS {
        errors.push(FieldError::new(
            FIELD,
            Code::ValidationError,
            format!("latencies must have 1 to {MAX_REGIONS} entries"),
        ));
    }
    let names = regions.and_then(|r| r.names.as_deref());
    let mut map = Latencies::new();
    for (name, ms) in object {
        let field = format!("{FIELD}.{name}");
        if !is_valid_region_name(name) {
            errors.push(FieldError::new(
                &field,
                Code::ValidationError,
                "a region name must match ^[a-z0-9][a-z0-9-]{0,31}$",
            ));
            continue;
        }
        if names.is_some_and(|n| !n.iter().any(|x| x == name)) {
            errors.push(FieldError::new(
                &field,
                Code::ValidationError,
                format!("region {name} is not one of the mode's regions.names"),
            ));
            continue;
        }
        match ms.as_f64() {
            Some(v) if (0.0..=MAX_LATENCY_MS).contains(&v) => {
                map.insert(ArcStr::from(name.as_str()), v);
            }
            _ => errors.push(FieldError::new(
                &field,
                Code::ValidationError,
                format!("a latency must be a number of milliseconds from 0 to {MAX_LATENCY_MS}"),
            )),
        }
    }
    if errors.is_empty() {
        Ok(map)
    } else {
        Err(errors)
    }
}
