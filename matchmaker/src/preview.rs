//! Preview of a proposed config on a live pool: one cycle of the current
//! config and one of the proposed one over the same snapshot at the same
//! `now`, summarised side by side. Nothing is claimed: the caller only
//! reads the pool.
//!
//! Deterministic: FIFO shuffles use a fixed seed, so the same snapshot and
//! `now` give the same answer.

use crate::config::GameModeConfig;
use crate::cycle::{run_cycle, CycleOutcome};
use crate::search::Search;
use crate::simulate::Spread;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use std::collections::BTreeMap;

/// Most failed searches listed one by one in a [`FailedSummary`] (all
/// are counted).
pub const MAX_LISTED_FAILURES: usize = 100;

/// What one cycle of a config would do to the pool now.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = CycleSummarySchema))]
#[serde(rename_all = "camelCase")]
pub struct CycleSummary {
    /// Matches it would make.
    #[cfg_attr(feature = "openapi", schema(value_type = u64))]
    pub matches: usize,
    /// Players in them (humans).
    #[cfg_attr(feature = "openapi", schema(value_type = u64))]
    pub players_matched: usize,
    /// Players matched over searches in the pool (0 for an empty pool).
    pub matched_share: f64,
    /// Max minus min player MMR per match: `p50`, `p90`, `max` (MMR
    /// points; `null` without matches).
    pub mmr_spread: Spread,
    /// Max minus min team mean MMR per match (MMR points).
    pub team_imbalance: Spread,
    /// Matches completed with bots.
    #[cfg_attr(feature = "openapi", schema(value_type = u64))]
    pub bot_matches: usize,
    /// Matches on a shape smaller than the base one (relaxed, settled
    /// flexible).
    #[cfg_attr(feature = "openapi", schema(value_type = u64))]
    pub relaxed_matches: usize,
    /// Searches its re-check would fail.
    pub failed: FailedSummary,
    /// Searches left waiting.
    #[cfg_attr(feature = "openapi", schema(value_type = u64))]
    pub waiting: usize,
}

/// The searches a config's re-check would fail.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = FailedSummarySchema))]
#[serde(rename_all = "camelCase")]
pub struct FailedSummary {
    /// How many.
    #[cfg_attr(feature = "openapi", schema(value_type = u64))]
    pub count: usize,
    /// How many per code (`PARTY_TOO_LARGE`, `PARTIES_NOT_ENABLED`,
    /// `MMR_REQUIRED`, `MMR_OUT_OF_RANGE`, `LATENCIES_REQUIRED`,
    /// `GAME_MODE_DISABLED`, …).
    #[cfg_attr(feature = "openapi", schema(value_type = BTreeMap<String, u64>))]
    pub by_code: BTreeMap<String, usize>,
    /// The first 100 by ticket id.
    pub searches: Vec<FailedRef>,
}

/// One search a re-check would fail.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = FailedRefSchema))]
#[serde(rename_all = "camelCase")]
pub struct FailedRef {
    /// Its ticket.
    pub ticket_id: String,
    /// Its player.
    pub player_id: String,
    /// The code it would fail with.
    pub code: String,
}

/// Waiting searches with one reason under each config.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = ReasonCountsSchema))]
pub struct ReasonCounts {
    /// Under the current config.
    #[cfg_attr(feature = "openapi", schema(value_type = u64))]
    pub current: usize,
    /// Under the proposed config.
    #[cfg_attr(feature = "openapi", schema(value_type = u64))]
    pub proposed: usize,
}

/// A preview: the current and the proposed config's cycle over one
/// snapshot, side by side.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Preview {
    /// The time both cycles ran at (the pool's clock, Unix seconds).
    pub at: f64,
    /// Searches in the snapshot.
    pub pool_size: usize,
    /// The current config's cycle.
    pub current: CycleSummary,
    /// The proposed config's cycle.
    pub proposed: CycleSummary,
    /// Per waiting-reason code, the waiting searches under each config.
    pub waiting_reasons: BTreeMap<String, ReasonCounts>,
}

/// Runs one cycle of `current` and one of `proposed` over `pool` at `now`
/// and summarises both. Never panics on any pool.
pub fn preview(
    current: &GameModeConfig,
    proposed: &GameModeConfig,
    pool: &[Search],
    now: f64,
) -> Preview {
    let before = run_cycle(current, pool, now, &mut ChaCha8Rng::seed_from_u64(0));
    let after = run_cycle(proposed, pool, now, &mut ChaCha8Rng::seed_from_u64(0));
    let mut waiting_reasons: BTreeMap<String, ReasonCounts> = BTreeMap::new();
    for w in &before.waiting {
        waiting_reasons
            .entry(w.reason.code().as_str().to_owned())
            .or_default()
            .current += 1;
    }
    for w in &after.waiting {
        waiting_reasons
            .entry(w.reason.code().as_str().to_owned())
            .or_default()
            .proposed += 1;
    }
    Preview {
        at: now,
        pool_size: pool.len(),
        current: summarise(current, &before),
        proposed: summarise(proposed, &after),
        waiting_reasons,
    }
}

/// The summary of one cycle's `outcome` under `config`.
pub fn summarise(config: &GameModeConfig, outcome: &CycleOutcome) -> CycleSummary {
    let base = config.match_size();
    let players: usize = outcome
        .matches
        .iter()
        .map(|m| m.teams.iter().map(|t| t.players.len()).sum::<usize>())
        .sum();
    let spreads: Vec<f64> = outcome.matches.iter().map(|m| m.mmr_spread).collect();
    let imbalances: Vec<f64> = outcome.matches.iter().map(|m| m.team_imbalance).collect();
    let bot_matches = outcome
        .matches
        .iter()
        .filter(|m| m.teams.iter().any(|t| t.bots > 0))
        .count();
    let relaxed_matches = outcome
        .matches
        .iter()
        .filter(|m| m.teams.iter().all(|t| t.bots == 0) && m.match_shape.iter().sum::<u32>() < base)
        .count();
    let mut by_code: BTreeMap<String, usize> = BTreeMap::new();
    for f in &outcome.failed {
        *by_code.entry(f.code.as_str().to_owned()).or_default() += 1;
    }
    let mut listed: Vec<FailedRef> = outcome
        .failed
        .iter()
        .map(|f| FailedRef {
            ticket_id: f.ticket_id.to_string(),
            player_id: f.player_id.to_string(),
            code: f.code.as_str().to_owned(),
        })
        .collect();
    listed.sort_by(|a, b| a.ticket_id.cmp(&b.ticket_id));
    listed.truncate(MAX_LISTED_FAILURES);
    CycleSummary {
        matches: outcome.matches.len(),
        players_matched: players,
        matched_share: if outcome.pool_size == 0 {
            0.0
        } else {
            players as f64 / outcome.pool_size as f64
        },
        mmr_spread: Spread::of(&spreads),
        team_imbalance: Spread::of(&imbalances),
        bot_matches,
        relaxed_matches,
        failed: FailedSummary {
            count: outcome.failed.len(),
            by_code,
            searches: listed,
        },
        waiting: outcome.waiting.len(),
    }
}
