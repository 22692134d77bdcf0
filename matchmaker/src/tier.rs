//! Tiers: the limits a project's plan puts on its game modes (docs/game-modes.md#tier-limits).
//!
//! The three tiers are constants here so that the store seeds its `tiers`
//! table from the same numbers the matching core validates against.

use serde::{Deserialize, Serialize};

/// The limits of one tier, in the JSON of docs/game-modes.md#tier-limits (camelCase).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tier {
    /// Tier name, e.g. `free`.
    pub name: String,
    /// Shortest allowed `matchmakingCycleDurationSeconds` (seconds).
    pub min_cycle_duration_seconds: f64,
    /// Lowest allowed MMR `baseTolerance` (percent of the MMR range).
    pub min_base_tolerance: f64,
    /// Lowest allowed MMR `expansionMultiplier`.
    pub min_expansion_multiplier: f64,
    /// Largest allowed sum of a `matchShape` (players).
    pub max_match_size: u32,
    /// Most game modes a project may have.
    pub max_game_modes: u32,
    /// Most searches a project may have live at once.
    pub max_concurrent_searches: u64,
    /// Per-project token bucket rate (requests per second).
    pub requests_per_second: u32,
    /// Most tickets a project may hold generated but not yet searching
    /// (`TICKET_LIMIT_EXCEEDED` beyond).
    pub max_pending_tickets: u64,
    /// Days a project's matches and webhook deliveries (with their
    /// attempts) are kept before the worker prunes them, between 1 and
    /// [`MAX_RETENTION_DAYS`].
    pub retention_days: u32,
}

/// `retentionDays` of a tier written without one (docs/game-modes.md#tier-limits's `pro`; the
/// issue's default of 90 days).
pub const DEFAULT_RETENTION_DAYS: u32 = 90;

/// The tier a project gets when it is created without one; it cannot be
/// deleted (docs/api-tour.md).
pub const DEFAULT_TIER: &str = "free";

/// Largest `retentionDays` a tier may have: ten years.
pub const MAX_RETENTION_DAYS: u32 = 3650;

impl Tier {
    /// The `free` tier of docs/game-modes.md#tier-limits.
    pub fn free() -> Self {
        Self {
            name: DEFAULT_TIER.into(),
            min_cycle_duration_seconds: 5.0,
            min_base_tolerance: 5.0,
            min_expansion_multiplier: 1.0,
            max_match_size: 16,
            max_game_modes: 3,
            max_concurrent_searches: 1_000,
            requests_per_second: 50,
            max_pending_tickets: 10_000,
            retention_days: 30,
        }
    }

    /// The `pro` tier of docs/game-modes.md#tier-limits.
    pub fn pro() -> Self {
        Self {
            name: "pro".into(),
            min_cycle_duration_seconds: 1.0,
            min_base_tolerance: 1.0,
            min_expansion_multiplier: 1.0,
            max_match_size: 64,
            max_game_modes: 50,
            max_concurrent_searches: 100_000,
            requests_per_second: 2_000,
            max_pending_tickets: 1_000_000,
            retention_days: 90,
        }
    }

    /// The `enterprise` tier of docs/game-modes.md#tier-limits.
    pub fn enterprise() -> Self {
        Self {
            name: "enterprise".into(),
            min_cycle_duration_seconds: 0.1,
            min_base_tolerance: 0.0,
            min_expansion_multiplier: 1.0,
            max_match_size: 200,
            max_game_modes: 1_000,
            max_concurrent_searches: 10_000_000,
            requests_per_second: 50_000,
            max_pending_tickets: 20_000_000,
            retention_days: 365,
        }
    }

    /// The three seeded tiers, in order `free`, `pro`, `enterprise`.
    pub fn seeded() -> [Tier; 3] {
        [Self::free(), Self::pro(), Self::enterprise()]
    }

    /// Looks up a seeded tier by name.
    pub fn by_name(name: &str) -> Option<Tier> {
        Self::seeded().into_iter().find(|t| t.name == name)
    }
}
