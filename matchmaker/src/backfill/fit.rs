//! Whether one candidate fits one open backfill.
//!
//! - MMR modes: the distance between the candidate's MMR and the roster's
//!   mean is within both the candidate's current range and the backfill's
//!   range (the mode's formula with the backfill's age as its wait).
//! - Ping modes: the candidate's ping is within `maxDelta` of each ping the
//!   match's players had when it was made.
//! - With `regions`: every member's latency to the match's region is within
//!   the party's current ceiling (a region missing from a member's map is
//!   out of reach).
//!
//! Seats are the pass's business ([`super::pass`]); this is closeness only.

use super::OpenBackfill;
use crate::candidate::Candidate;
use crate::config::{Algorithm, GameModeConfig};
use crate::search::Search;
use crate::tolerance::{capped_mmr_range, fits as within_range};

/// Whether `candidate` (of `pool`) may join `backfill` at `now`.
pub fn fits(
    config: &GameModeConfig,
    pool: &[Search],
    candidate: &Candidate,
    backfill: &OpenBackfill,
    now: f64,
) -> bool {
    closeness(config, candidate, backfill, now) && in_region(config, pool, candidate, backfill, now)
}

fn closeness(
    config: &GameModeConfig,
    candidate: &Candidate,
    backfill: &OpenBackfill,
    now: f64,
) -> bool {
    match &config.algorithm {
        Algorithm::Mmr { .. } => {
            let Some(mean) = backfill.mean_mmr else {
                return true;
            };
            let Some(mmr) = candidate.mmr else {
                return false;
            };
            let own = capped_mmr_range(&config.algorithm, now - candidate.wait_start);
            let aged = capped_mmr_range(&config.algorithm, now - backfill.opened_at);
            within_range(mmr, own, mean, aged)
        }
        Algorithm::Ping { max_delta } => {
            let Some(ping) = candidate.ping_ms else {
                return false;
            };
            backfill
                .pings
                .iter()
                .all(|p| within_range(ping, *max_delta, *p, *max_delta))
        }
        Algorithm::Fifo {} => true,
    }
}

fn in_region(
    config: &GameModeConfig,
    pool: &[Search],
    candidate: &Candidate,
    backfill: &OpenBackfill,
    now: f64,
) -> bool {
    let (Some(regions), Some(region)) = (&config.regions, &backfill.region) else {
        return true;
    };
    let ceiling = regions.ceiling(now - candidate.wait_start);
    candidate
        .searches
        .iter()
        .all(|&i| latency_to(&pool[i], region).is_some_and(|l| l <= ceiling))
}

/// `search`'s latency to `region` (milliseconds), if its map has it.
pub fn latency_to(search: &Search, region: &str) -> Option<f64> {
    search
        .latencies
        .as_ref()
        .and_then(|l| l.get(region))
        .copied()
}
