//! The rule cache (docs/performance.md, "Rules over attributes"): a
//! mode's next cycle reads only the searches new to it, and a change of
//! the declarations or rules reads every search again.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::*;
use matchplane_matchmaker::{
    run_cycle_with, Code, CycleOutcome, GameModeConfig, RuleCache, Search,
};
use rand::SeedableRng;
use serde_json::json;

fn kept(config: &GameModeConfig, pool: &[Search], now: f64, cache: &mut RuleCache) -> CycleOutcome {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    run_cycle_with(config, pool, now, &mut rng, cache)
}

fn voter(id: &str, mmr: f64, maps: &[&str]) -> Search {
    player(
        id,
        mmr,
        0.0,
        json!({"build": "1.4.2", "maps": maps, "level": 30}),
    )
}

#[test]
fn a_value_the_changed_declarations_refuse_fails_at_the_next_cycle() {
    let mut config = ruled(&[1, 1]);
    // Far apart by MMR: nobody is matched, both stay.
    let pool = vec![voter("a", 1000.0, &["dust"]), voter("b", 3000.0, &["nuke"])];
    let mut cache = RuleCache::default();
    let first = kept(&config, &pool, 1.0, &mut cache);
    assert!(first.failed.is_empty() && first.matches.is_empty());
    assert_eq!(cache.len(), 2, "both searches' reads are kept");

    // `nuke` leaves the map pool: b's kept read passed, the new one fails.
    let maps = config.attributes.as_mut().unwrap().get_mut("maps").unwrap();
    *maps = serde_json::from_value(json!({"type": "stringSet", "values": ["dust", "inferno"]}))
        .unwrap();
    let next = kept(&config, &pool, 2.0, &mut cache);
    assert_eq!(next, cycle(&config, &pool, 2.0));
    assert_eq!(next.failed.len(), 1);
    assert_eq!(next.failed[0].player_id.as_str(), "b");
    assert_eq!(next.failed[0].code, Code::AttributeNotAllowed);
}

#[test]
fn a_changed_rule_reads_every_search_again() {
    let mut config = ruled(&[1, 1]);
    let pool = vec![voter("a", 1500.0, &["dust"]), voter("b", 1500.0, &["nuke"])];
    let mut cache = RuleCache::default();
    // No map in common: they wait.
    assert!(kept(&config, &pool, 1.0, &mut cache).matches.is_empty());
    // Without the map rule the two match at once.
    config.rules.retain(|r| r.attribute() != "maps");
    let next = kept(&config, &pool, 2.0, &mut cache);
    assert_eq!(next.matches.len(), 1);
    assert_eq!(next, cycle(&config, &pool, 2.0));
}

#[test]
fn searches_that_left_the_pool_are_forgotten() {
    let config = ruled(&[1, 1]);
    let pool: Vec<Search> = (0..6)
        .map(|i| voter(&format!("p{i}"), 1000.0 + 300.0 * f64::from(i), &["dust"]))
        .collect();
    let mut cache = RuleCache::default();
    kept(&config, &pool, 1.0, &mut cache);
    assert_eq!(cache.len(), 6);
    kept(&config, &pool[..2], 2.0, &mut cache);
    assert_eq!(cache.len(), 2);
    // A pool of another mode's searches, or a mode without rules, keeps
    // nothing stale either.
    kept(&mmr_mode(&[1, 1], 5.0, 2.0), &pool, 3.0, &mut cache);
    assert!(cache.is_empty());
}
