//! The indexed walk forms exactly the groups of the walk over the whole
//! partition: same anchors, same groups, in the same order, on random
//! pools with parties, relaxed rules, coarse ratings (many ties in
//! distance) and one to five builds.

use super::super::Grouper;
use crate::candidate::build_candidates;
use crate::config::GameModeConfig;
use crate::rules::RuleTable;
use crate::search::{Party, Search};
use proptest::prelude::*;
use serde_json::json;

fn config(keep_together: bool) -> GameModeConfig {
    serde_json::from_value(json!({
        "name": "m", "matchShape": [3, 3], "matchmakingCycleDurationSeconds": 1,
        "algorithm": {"type": "mmr", "minMmr": 0, "maxMmr": 3000, "baseTolerance": 2,
                      "expansionMultiplier": 4},
        "parties": {"allowParties": true, "maxSize": 3, "keepTogether": keep_together},
        "attributes": {
            "build": {"type": "string"},
            "pool": {"type": "string", "default": "crossplay"},
            "maps": {"type": "stringSet", "values": ["dust", "inferno", "nuke"]},
            "level": {"type": "number", "min": 1, "max": 100, "party": "max"}
        },
        "rules": [
            {"name": "same-build", "type": "equal", "attribute": "build"},
            {"name": "platform", "type": "equal", "attribute": "pool",
             "relax": [{"afterSeconds": 40, "off": true}]},
            {"name": "map", "type": "intersect", "attribute": "maps", "minOverlap": 1},
            {"name": "level", "type": "distance", "attribute": "level", "max": 10,
             "relax": [{"afterSeconds": 20, "max": 20}]}
        ]
    }))
    .expect("a valid mode")
}

/// (rating step, build, maps bits, level, wait, party size)
type Player = (u32, u8, u8, u8, u8, u8);

fn pool(players: &[Player]) -> Vec<Search> {
    let mut out = Vec::new();
    for (i, &(rating, build, maps, level, wait, size)) in players.iter().enumerate() {
        let size = size.clamp(1, 3) as usize;
        let party = (size > 1).then(|| Party {
            id: format!("party{i}").into(),
            members: (0..size).map(|m| format!("p{i}-{m}")).collect(),
        });
        let names = ["dust", "inferno", "nuke"];
        let maps: Vec<&str> = (0..3)
            .filter(|b| maps >> b & 1 == 1)
            .map(|b| names[b])
            .collect();
        let maps = if maps.is_empty() { vec!["dust"] } else { maps };
        for m in 0..size {
            let mut s = Search::solo(
                format!("t{i}-{m}"),
                format!("p{i}-{m}"),
                1400.0 + f64::from(rating % 40) * 10.0,
                -f64::from(wait % 60),
            );
            s.party = party.clone();
            s.attributes = std::sync::Arc::new(
                serde_json::from_value(json!({
                    "build": format!("1.{}", build % 5),
                    "maps": maps,
                    "level": 1 + u32::from(level) % 100,
                }))
                .expect("values"),
            );
            out.push(s);
        }
    }
    out
}

/// Every full group of a pass over all anchors, with or without the index;
/// `None` when the pool gives no index (levels too close to narrow a walk).
fn groups(config: &GameModeConfig, pool: &[Search], indexed: bool) -> Option<Vec<Vec<usize>>> {
    let valid: Vec<usize> = (0..pool.len()).collect();
    let set = build_candidates(config, pool, &valid);
    let candidates = &set.candidates;
    let waits: Vec<f64> = candidates.iter().map(|c| -c.wait_start).collect();
    let values: Vec<f64> = candidates.iter().map(|c| c.mmr.unwrap_or(0.0)).collect();
    let ranges: Vec<f64> = waits.iter().map(|w| 50.0 + 4.0 * w).collect();
    let table = RuleTable::build(config, pool, candidates, &waits);
    let mut g = Grouper::closeness(candidates, &values, &ranges, config.parties.keep_together)
        .with_rules(table.as_ref());
    if !indexed {
        g.rules.index = None;
    } else if g.rules.index.is_none() {
        return None;
    }
    let mut out = Vec::new();
    for anchor in 0..g.len() {
        if g.is_matched(anchor) {
            continue;
        }
        let attempt = g.try_anchor(anchor, &[3, 3]);
        if attempt.short.is_none() {
            g.take(&attempt.group);
            out.push(attempt.group);
        }
    }
    Some(out)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    #[test]
    fn the_indexed_walk_forms_the_groups_of_the_whole_walk(
        players in prop::collection::vec(any::<Player>(), 6..160),
        keep_together in any::<bool>(),
    ) {
        let config = config(keep_together);
        let pool = pool(&players);
        let indexed = groups(&config, &pool, true);
        prop_assume!(indexed.is_some());
        prop_assert_eq!(indexed, groups(&config, &pool, false));
    }
}
