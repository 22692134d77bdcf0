//! A held cycle (docs/game-modes.md#holding-matching): the mode's matching is held (the
//! game's servers are full), so its cycles form no new matches and no
//! proposals, yet nobody is failed for it.
//!
//! A held cycle still re-checks the pool against the config (a search the
//! config rules out fails as in any cycle), still fills the mode's open
//! backfills (their matches are running already), and leaves every other
//! search waiting with [`WaitingReason::MatchingHeld`]: their `queuedAt`
//! is untouched, so their wait and their ranges keep growing and the first
//! cycle after the hold is cleared matches them as it would have.
//!
//! The worker and the simulator both call [`run_held_cycle_with_backfills`]
//! for a held mode, and [`crate::run_cycle_with_backfills`] otherwise.

use crate::backfill::{fill_pass, CycleWithFills, OpenBackfill};
use crate::candidate::build_candidates;
use crate::config::GameModeConfig;
use crate::cycle::{CycleOutcome, WaitingSearch};
use crate::reasons::WaitingReason;
use crate::recheck::recheck;
use crate::search::Search;

/// One held cycle of `config` over `pool` at `now` (seconds, on the pool's
/// `queuedAt` clock), without backfills: the re-check's failures, and
/// every other search waiting [`WaitingReason::MatchingHeld`] (with
/// `found` 0 and the `needed` its wait gives). Forms no match. Never
/// panics; an empty pool gives an empty outcome.
pub fn run_held_cycle(config: &GameModeConfig, pool: &[Search], now: f64) -> CycleOutcome {
    let (valid, failed) = recheck(config, pool);
    let candidates = build_candidates(config, pool, &valid).candidates.len();
    let waiting = valid
        .iter()
        .filter_map(|&i| pool.get(i))
        .map(|s| WaitingSearch {
            ticket_id: s.ticket_id.clone(),
            player_id: s.player_id.clone(),
            reason: WaitingReason::MatchingHeld,
            found: 0,
            needed: crate::queue_status::needed(config, now - s.queued_at, s.party_seats()),
        })
        .collect();
    CycleOutcome {
        matches: Vec::new(),
        failed,
        waiting,
        pool_size: pool.len(),
        candidates,
        rule_turned_away: Default::default(),
        waiting_by_role: Default::default(),
    }
}

/// [`crate::run_cycle_with_backfills`] for a held mode: the open
/// `backfills` are filled first exactly as in any cycle (docs/backfill.md),
/// then [`run_held_cycle`] over the searches no fill took: no new match.
pub fn run_held_cycle_with_backfills(
    config: &GameModeConfig,
    pool: &[Search],
    backfills: &[OpenBackfill],
    now: f64,
) -> CycleWithFills {
    let fills = fill_pass(config, pool, backfills, now);
    if fills.fills.is_empty() {
        return CycleWithFills {
            fills: Vec::new(),
            cycle: run_held_cycle(config, pool, now),
        };
    }
    let rest: Vec<Search> = pool
        .iter()
        .zip(&fills.taken)
        .filter(|(_, taken)| !**taken)
        .map(|(s, _)| s.clone())
        .collect();
    let mut cycle = run_held_cycle(config, &rest, now);
    cycle.pool_size = pool.len();
    CycleWithFills {
        fills: fills.fills,
        cycle,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::GameModeConfig;
    use rand::SeedableRng;

    fn duel() -> GameModeConfig {
        serde_json::from_value(serde_json::json!({
            "name": "duel",
            "matchShape": [1, 1],
            "algorithm": {"type": "mmr", "minMmr": 0, "maxMmr": 3000,
                "baseTolerance": 100, "expansionMultiplier": 10},
            "matchmakingCycleDurationSeconds": 1,
            "ticketTtlSeconds": 300
        }))
        .unwrap()
    }

    fn search(id: &str, mmr: Option<f64>) -> Search {
        Search {
            ticket_id: format!("tkt_{id}").into(),
            player_id: id.into(),
            party: None,
            mmr,
            ping_ms: None,
            latencies: None,
            queued_at: 0.0,
            attributes: Default::default(),
        }
    }

    /// Two players a normal cycle matches wait `MATCHING_HELD` in a held
    /// cycle, while one the config rules out still fails; the same pool
    /// matches at once when the hold is cleared.
    #[test]
    fn a_held_cycle_forms_nothing_fails_what_the_config_rules_out_and_keeps_the_rest() {
        let config = duel();
        let pool = vec![
            search("ana", Some(1500.0)),
            search("bo", Some(1510.0)),
            search("cy", None),
        ];
        let held = run_held_cycle_with_backfills(&config, &pool, &[], 30.0);
        assert!(held.fills.is_empty());
        assert!(held.cycle.matches.is_empty());
        assert_eq!(held.cycle.pool_size, 3);
        assert_eq!(held.cycle.candidates, 2);
        assert_eq!(held.cycle.failed.len(), 1);
        assert_eq!(held.cycle.failed[0].code, crate::Code::MmrRequired);
        let waiting: Vec<_> = held
            .cycle
            .waiting
            .iter()
            .map(|w| (w.player_id.as_str(), w.reason.code()))
            .collect();
        assert_eq!(
            waiting,
            [
                ("ana", crate::Code::MatchingHeld),
                ("bo", crate::Code::MatchingHeld)
            ]
        );
        assert_eq!(held.cycle.waiting[0].needed, 2);
        let json = serde_json::to_value(held.cycle.waiting[0].status()).unwrap();
        assert_eq!(json["code"], "MATCHING_HELD");

        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0);
        let free = crate::run_cycle_with_backfills(&config, &pool, &[], 30.0, &mut rng);
        assert_eq!(free.cycle.matches.len(), 1);
    }
}
