//! The OpenAPI shapes of a game mode's `regions` and `backfill` blocks (the core's
//! `Regions` is what is parsed; this only documents it).

use serde::Deserialize;
use utoipa::ToSchema;

/// Region rule: tickets carry `attributes.latencies`, and a match is
/// played in a region within every member's own ceiling.
#[derive(Debug, Deserialize, ToSchema)]
#[schema(as = Regions, example = json!({"names": ["eu-west", "us-east"], "maxLatencyMs": 80, "expansion": [{"afterSeconds": 20, "maxLatencyMs": 120}]}))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RegionsSchema {
    /// The region names tickets may name (1..=32, each
    /// `^[a-z0-9][a-z0-9-]{0,31}$`); absent: any well-formed name.
    #[serde(default)]
    #[schema(nullable = false, min_items = 1, max_items = 32)]
    pub names: Option<Vec<String>>,
    /// A ticket's ceiling before any expansion step (milliseconds).
    #[schema(minimum = 1, maximum = 5000)]
    pub max_latency_ms: f64,
    /// Ceilings raised as a ticket waits: at most 8 steps, `afterSeconds`
    /// and `maxLatencyMs` both strictly increasing.
    #[serde(default)]
    #[schema(nullable = false, max_items = 8)]
    pub expansion: Option<Vec<LatencyStepSchema>>,
}

/// One expansion step: from `afterSeconds` of a ticket's own wait, its
/// ceiling is `maxLatencyMs`.
#[derive(Debug, Deserialize, ToSchema)]
#[schema(as = LatencyStep)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LatencyStepSchema {
    /// Seconds of the ticket's own wait.
    #[schema(minimum = 0, maximum = 86400)]
    pub after_seconds: f64,
    /// The ceiling from then on (milliseconds).
    #[schema(minimum = 1, maximum = 5000)]
    pub max_latency_ms: f64,
}

/// Backfill of running matches: studios may ask for replacements of
/// players who left (`POST …/matches/{matchId}/backfill`).
#[derive(Debug, Deserialize, ToSchema)]
#[schema(as = Backfill, example = json!({"enabled": true, "auto": false, "ttlSeconds": 120}))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BackfillSchema {
    /// Whether backfill requests are accepted; default `true` (left out,
    /// not `null`).
    #[serde(default)]
    #[schema(nullable = false)]
    pub enabled: Option<bool>,
    /// Whether a match made with empty seats opens a backfill for them at
    /// once; default `false` (left out, not `null`).
    #[serde(default)]
    #[schema(nullable = false)]
    pub auto: Option<bool>,
    /// How long a request stays open (seconds); default 120 (left out, not
    /// `null`).
    #[serde(default)]
    #[schema(nullable = false, minimum = 5, maximum = 3600)]
    pub ttl_seconds: Option<u32>,
}
