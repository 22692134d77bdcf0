//! The checks a search start makes of its ticket against the mode's
//! current config are the cycle's re-check of a lone search
//! (docs/game-modes.md, "Changing a mode"): one rule, the same code and
//! message, whichever change ruled the ticket out.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::*;
use matchplane_matchmaker::recheck::{recheck, SearchCheck};
use matchplane_matchmaker::{Code, GameModeConfig, Party, Search};
use serde_json::json;

/// A `[2, 2]` MMR mode with parties of two, a `build` out of two values,
/// a `maps` set read by an `intersect` rule, and a role queue.
fn mode() -> serde_json::Value {
    json!({"name": "arena", "matchShape": [2, 2], "matchmakingCycleDurationSeconds": 1,
        "algorithm": {"type": "mmr", "minMmr": 0, "maxMmr": 3000,
            "baseTolerance": 5, "expansionMultiplier": 2},
        "parties": {"allowParties": true, "maxSize": 2, "keepTogether": false},
        "attributes": {"build": {"type": "string", "values": ["mage", "rogue"]},
            "maps": {"type": "stringSet", "values": ["dust", "nuke", "inferno"]},
            "roles": {"type": "stringSet", "values": ["tank", "healer"]}},
        "rules": [{"name": "map", "type": "intersect", "attribute": "maps", "minOverlap": 1}],
        "composition": {"attribute": "roles", "perTeam": {"tank": 1, "healer": 1}}})
}

fn config(changes: serde_json::Value) -> GameModeConfig {
    let mut body = mode();
    for (k, v) in changes.as_object().unwrap() {
        match k.split_once('.') {
            Some((outer, inner)) => body[outer][inner] = v.clone(),
            None => body[k] = v.clone(),
        }
    }
    serde_json::from_value(body).unwrap()
}

/// `ana`'s search: MMR 2500, in a duo, a rogue on dust and nuke, a tank.
fn search() -> Search {
    let mut s = player(
        "ana",
        2500.0,
        0.0,
        json!({"build": "rogue", "maps": ["dust", "nuke"], "roles": ["tank"]}),
    );
    s.party = Some(Party {
        id: "duo".into(),
        members: vec!["ana".into(), "bo".into()],
    });
    s
}

#[test]
fn a_start_and_a_cycle_rule_a_ticket_out_alike() {
    let cases = [
        (json!({}), None),
        (json!({"algorithm.maxMmr": 2000}), Some(Code::MmrOutOfRange)),
        (
            json!({"parties": {"allowParties": false, "maxSize": 1, "keepTogether": false}}),
            Some(Code::PartiesNotEnabled),
        ),
        (
            json!({"regions": {"maxLatencyMs": 60}}),
            Some(Code::LatenciesRequired),
        ),
        (
            json!({"attributes.build": {"type": "string", "values": ["mage"]}}),
            Some(Code::AttributeNotAllowed),
        ),
        (
            json!({"attributes.level": {"type": "number"}}),
            Some(Code::AttributeRequired),
        ),
        (
            json!({"rules": [{"name": "map", "type": "intersect", "attribute": "maps",
                "minOverlap": 3}]}),
            Some(Code::AttributeNotAllowed),
        ),
        (
            json!({"composition.perTeam": {"healer": 2}}),
            Some(Code::AttributeNotAllowed),
        ),
    ];
    let s = search();
    for (changes, code) in cases {
        let config = config(changes.clone());
        let at_start = SearchCheck::new(&config).check(&s);
        let (_, failed) = recheck(&config, std::slice::from_ref(&s));
        assert_eq!(at_start.as_ref().err().map(|e| e.code), code, "{changes}");
        match (at_start, failed.as_slice()) {
            (Ok(()), []) => {}
            (Err(e), [f]) => assert_eq!((e.code, e.message), (f.code, f.message.clone())),
            (at_start, failed) => panic!("{changes}: {at_start:?} against {failed:?}"),
        }
    }
}
