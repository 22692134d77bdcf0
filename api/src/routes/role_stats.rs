//! Per role seat figures of a mode with `composition` (docs/rules.md,
//! "Role waits"), as the stats (`roles`, the last hour) and each stats
//! history bucket (`roles`) serve them: the players matched in the role
//! and their waits' percentiles, estimated from the minutes' histograms
//! (each within one histogram bucket of the exact figure).

use matchplane_matchmaker::role_waits::RoleWaits;
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;
use utoipa::ToSchema;

/// Waits (seconds from `queuedAt` to the matching cycle) of the players
/// matched in one role.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(example = json!({"p50": 20.5, "p90": 41.0}))]
pub struct RoleWaitPercentiles {
    /// Median.
    #[serde(serialize_with = "matchplane_matchmaker::timestamp::seconds")]
    pub p50: f64,
    /// 90th percentile.
    #[serde(serialize_with = "matchplane_matchmaker::timestamp::seconds")]
    pub p90: f64,
}

/// One role seat's figures.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(example = json!({"matched": 42, "waitSeconds": {"p50": 20.5, "p90": 41.0}}))]
#[serde(rename_all = "camelCase")]
pub struct RoleStats {
    /// Players matched in the role.
    pub matched: u64,
    /// Their waits; `null` when none was matched.
    pub wait_seconds: Option<RoleWaitPercentiles>,
}

/// The figures of `roles`, by role.
pub fn of(roles: &RoleWaits) -> BTreeMap<String, RoleStats> {
    roles
        .roles()
        .iter()
        .map(|(role, figure)| {
            let wait_seconds = match (figure.wait_quantile(0.5), figure.wait_quantile(0.9)) {
                (Some(p50), Some(p90)) => Some(RoleWaitPercentiles {
                    p50: round(p50),
                    p90: round(p90),
                }),
                _ => None,
            };
            let stats = RoleStats {
                matched: figure.matched,
                wait_seconds,
            };
            (role.clone(), stats)
        })
        .collect()
}

/// The stats' `roles` of a mode whose stored config is `config`: every role
/// of its `composition` (those without matches at 0), with the figures of
/// `roles` over them; `None` without `composition`.
pub fn of_mode(config: &Value, roles: &RoleWaits) -> Option<BTreeMap<String, RoleStats>> {
    let composition = config.get("composition").filter(|c| c.is_object())?;
    let mut out = of(roles);
    if let Ok(c) =
        serde_json::from_value::<matchplane_matchmaker::roles::Composition>(composition.clone())
    {
        for role in c.roles() {
            out.entry(role.to_owned()).or_insert(RoleStats {
                matched: 0,
                wait_seconds: None,
            });
        }
    }
    Some(out)
}

/// Two decimals: the estimates are not finer than that.
fn round(value: f64) -> f64 {
    (value * 100.0).round() / 100.0
}
