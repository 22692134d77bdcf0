//! Rules over a mode's own attributes end to end (docs/rules.md):
//! `matchplane api` and `matchplane worker` as separate processes against
//! real PostgreSQL and Redis. A `[2,2]` mode keeps two client builds apart
//! and needs a map every player ticked; 32 players search over REST; a
//! local receiver verifies every webhook's signature, and each match's
//! `attributes` must say the build and the maps everyone shares, each
//! player entry the player's own values, each player's status the match's
//! values. Bad declarations and bad ticket attributes are refused naming
//! their fields.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::{json, Value};
use std::collections::{BTreeSet, HashMap};
use std::time::{Duration, Instant};
use support::{redis_url, Deployment};

const MAPS: [&str; 3] = ["dust", "inferno", "nuke"];

fn mode() -> Value {
    json!({"name": "vote", "matchShape": [2, 2], "matchmakingCycleDurationSeconds": 1,
    "algorithm": {"type": "mmr", "minMmr": 0, "maxMmr": 3000, "baseTolerance": 50, "expansionMultiplier": 2},
    "attributes": {
        "build": {"type": "string", "values": ["1.4", "1.5"]},
        "maps": {"type": "stringSet", "values": MAPS},
        "blocked": {"type": "playerSet", "default": []}
    },
    "rules": [
        {"name": "same-build", "type": "equal", "attribute": "build"},
        {"name": "map", "type": "intersect", "attribute": "maps"},
        {"name": "no-blocked", "type": "avoid", "attribute": "blocked"}
    ],
    "backfill": {"enabled": true}})
}

fn set(v: &Value) -> BTreeSet<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn matches_keep_builds_apart_and_carry_the_shared_maps_in_verified_webhooks() {
    let d = Deployment::start("rules", &redis_url(), 1, &[]).await;
    let modes = format!("/v1/projects/{}/game-modes", d.project);
    let tickets = format!("/v1/projects/{}/tickets", d.project);

    // A broken declaration block: every failure named at once.
    let mut bad = mode();
    bad["name"] = json!("broken");
    bad["attributes"]["maps"] = json!({"type": "stringSet"});
    bad["rules"][0]["attribute"] = json!("nope");
    let (status, body) = d
        .api
        .call(reqwest::Method::POST, &modes, &d.bearer, Some(bad))
        .await;
    assert_eq!(status, 422, "{body}");
    let fields: Vec<&str> = body["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["field"].as_str().unwrap())
        .collect();
    assert!(fields.contains(&"rules[0].attribute"), "{body}");
    assert!(fields.contains(&"rules[1].attribute"), "{body}");

    d.mode(mode()).await;
    let (status, got) = d
        .api
        .call(
            reqwest::Method::GET,
            &format!("{modes}/vote"),
            &d.bearer,
            None,
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(got["rules"][1]["minOverlap"], 1, "{got}");

    // Bad ticket attributes: the field, with the index of a set entry.
    let (status, body) = d
        .api
        .call(
            reqwest::Method::POST,
            &tickets,
            &d.bearer,
            Some(json!({"gameMode": "vote", "playerId": "x",
                        "attributes": {"mmr": 1500, "maps": ["dust", "mirage"]}})),
        )
        .await;
    assert_eq!(status, 422, "{body}");
    let errors: Vec<(String, String)> = body["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["field"].as_str().unwrap().into(),
                e["code"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert!(
        errors.contains(&("attributes.maps[1]".into(), "VALIDATION_ERROR".into())),
        "{body}"
    );
    assert!(
        errors.contains(&("attributes.build".into(), "ATTRIBUTE_REQUIRED".into())),
        "{body}"
    );
    let (status, body) = d
        .api
        .call(
            reqwest::Method::POST,
            &tickets,
            &d.bearer,
            Some(json!({"gameMode": "vote", "playerId": "x", "attributes": {"mmr": 1500, "maps": ["dust"]}})),
        )
        .await;
    assert_eq!(
        (status, body["code"].as_str()),
        (422, Some("ATTRIBUTE_REQUIRED")),
        "{body}"
    );

    // 32 players: builds alternate, maps rotate so that neighbours share one.
    let mut own: HashMap<String, (String, BTreeSet<String>)> = HashMap::new();
    let mut searches = Vec::new();
    for i in 0..32usize {
        let player = format!("player-{i}");
        let build = if i % 2 == 0 { "1.4" } else { "1.5" };
        let maps: Vec<&str> = vec![MAPS[i % 3], MAPS[(i / 2) % 3]];
        let maps: BTreeSet<String> = maps.into_iter().map(str::to_owned).collect();
        let (ticket, token) = d
            .ticket_of(json!({"gameMode": "vote", "playerId": player,
                              "attributes": {"mmr": 1500 + i, "build": build, "maps": maps}}))
            .await;
        let a = d.rest_search(&token).await;
        assert_eq!(a.status, 202, "{}", a.body);
        own.insert(player.clone(), (build.to_owned(), maps));
        searches.push((player, ticket, token));
    }

    // Wait until the players are matched or say why not.
    let matched = d
        .until_matched(&searches, 24, Duration::from_secs(40))
        .await;
    assert!(matched.len() >= 24, "only {} of 32 matched", matched.len());

    // Every match's webhook arrives, verified, and carries what all share.
    let ids: BTreeSet<String> = matched
        .values()
        .map(|m| m["matchId"].as_str().unwrap().to_owned())
        .collect();
    let hooks_deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < hooks_deadline
        && !ids.iter().all(|id| !d.receiver.of_match(id).is_empty())
    {
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    for id in &ids {
        let hooks = d.receiver.of_match(id);
        assert!(!hooks.is_empty(), "no webhook for {id}");
        assert!(
            hooks.iter().all(|h| h.verified),
            "{id}: a webhook failed verification"
        );
        let body = &hooks[0].body;
        let players: Vec<&Value> = body["teams"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|t| t["players"].as_array().unwrap())
            .collect();
        assert_eq!(players.len(), 4);
        let mut shared: Option<BTreeSet<String>> = None;
        let mut builds = BTreeSet::new();
        for p in &players {
            let (build, maps) = &own[p["playerId"].as_str().unwrap()];
            assert_eq!(p["attributes"]["build"], json!(build), "{body}");
            assert_eq!(&set(&p["attributes"]["maps"]), maps, "{body}");
            builds.insert(build.clone());
            shared = Some(match shared {
                None => maps.clone(),
                Some(s) => s.intersection(maps).cloned().collect(),
            });
        }
        assert_eq!(builds.len(), 1, "builds mixed in {id}: {body}");
        let shared = shared.unwrap();
        assert!(!shared.is_empty(), "{id} has no map every player ticked");
        assert_eq!(body["attributes"]["build"], json!(builds.first().unwrap()));
        assert_eq!(set(&body["attributes"]["maps"]), shared, "{body}");
        // A player's own view carries the match's values and only its own.
        for p in &players {
            let view = d
                .matched_view(&matched, &searches, p["playerId"].as_str().unwrap())
                .await;
            assert_eq!(view["attributes"], body["attributes"], "{view}");
            assert_eq!(view["player"]["attributes"], p["attributes"], "{view}");
        }
        // The studio's view of the stored match says the same.
        let (status, stored) = d
            .api
            .call(
                reqwest::Method::GET,
                &format!("/v1/projects/{}/matches/{id}", d.project),
                &d.bearer,
                None,
            )
            .await;
        assert_eq!(status, 200, "{stored}");
        assert_eq!(stored["attributes"], body["attributes"], "{stored}");
    }

    // A backfill's values are checked as a ticket's: a map list no `map`
    // rule could ever share, or a block list of numbers, is refused
    // naming the field, never opened to wait forever.
    let id = ids.first().unwrap();
    let url = format!("/v1/projects/{}/matches/{id}/backfill", d.project);
    let hook = &d.receiver.of_match(id)[0].body;
    let roster: Vec<Value> = hook["teams"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let players: Vec<Value> = t["players"].as_array().unwrap()[..1]
                .iter()
                .map(|p| json!({"playerId": p["playerId"]}))
                .collect();
            json!({"index": i, "players": players})
        })
        .collect();
    for (attributes, field) in [
        (json!({"maps": []}), "attributes.maps"),
        (json!({"maps": ["dust", "mirage"]}), "attributes.maps[1]"),
    ] {
        let (status, body) = d
            .api
            .call(
                reqwest::Method::POST,
                &url,
                &d.bearer,
                Some(json!({"attributes": attributes, "teams": roster})),
            )
            .await;
        assert_eq!(status, 422, "{attributes}: {body}");
        assert_eq!(body["errors"][0]["field"], field, "{body}");
    }
}
