//! Role queues end to end (docs/rules.md, "Role queues"): `matchplane api`
//! and `matchplane worker` as separate processes against real PostgreSQL
//! and Redis. A `[2,2]` mode seats one tank and one damage per team; 24
//! players list their roles (tanks only, damage only, or both) and search
//! over REST; a local receiver verifies every webhook's signature, and each
//! match must seat every team exactly by its roles, each player in a role
//! it listed, in the webhook body, the stored match and the player's view.
//! A composition that breaks its rules is refused naming every field.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::Duration;
use support::{redis_url, Deployment};

fn mode() -> Value {
    json!({"name": "roles", "matchShape": [2, 2], "matchmakingCycleDurationSeconds": 1,
    "algorithm": {"type": "mmr", "minMmr": 0, "maxMmr": 3000, "baseTolerance": 100, "expansionMultiplier": 2},
    "attributes": {"roles": {"type": "stringSet", "values": ["tank", "damage", "support"]}},
    "composition": {"attribute": "roles", "perTeam": {"tank": 1, "damage": 1}}})
}

/// The roles player `i` lists: a quarter tanks only, half damage only, a
/// quarter either.
fn roles_of(i: usize) -> Vec<&'static str> {
    match i % 4 {
        0 => vec!["tank"],
        1 | 2 => vec!["damage"],
        _ => vec!["tank", "damage"],
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_team_is_seated_by_role_in_verified_webhooks() {
    let d = Deployment::start("roles", &redis_url(), 1, &[]).await;
    let modes = format!("/v1/projects/{}/game-modes", d.project);
    let tickets = format!("/v1/projects/{}/tickets", d.project);

    // A broken composition: every failure named at once.
    let mut bad = mode();
    bad["name"] = json!("broken");
    bad["composition"]["perTeam"] = json!({"tank": 1, "healer": 2});
    bad["relaxations"] = json!([{"afterSeconds": 10, "matchShape": [1, 1]}]);
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
    assert!(fields.contains(&"composition.perTeam.healer"), "{body}");
    assert!(fields.contains(&"composition.perTeam"), "{body}");
    assert!(fields.contains(&"relaxations"), "{body}");

    d.mode(mode()).await;

    // A ticket listing no role, or a role the mode does not have.
    for roles in [json!([]), json!(["healer"])] {
        let (status, body) = d
            .api
            .call(
                reqwest::Method::POST,
                &tickets,
                &d.bearer,
                Some(json!({"gameMode": "roles", "playerId": "x",
                            "attributes": {"mmr": 1500, "roles": roles}})),
            )
            .await;
        assert_eq!(status, 422, "{body}");
        assert!(
            body["errors"][0]["field"]
                .as_str()
                .unwrap()
                .starts_with("attributes.roles"),
            "{body}"
        );
    }

    let mut listed: HashMap<String, BTreeSet<String>> = HashMap::new();
    let mut searches = Vec::new();
    for i in 0..24usize {
        let player = format!("player-{i}");
        let roles = roles_of(i);
        let (ticket, token) = d
            .ticket_of(json!({"gameMode": "roles", "playerId": player,
                              "attributes": {"mmr": 1500 + i, "roles": roles}}))
            .await;
        let a = d.rest_search(&token).await;
        assert_eq!(a.status, 202, "{}", a.body);
        listed.insert(
            player.clone(),
            roles.iter().map(|r| (*r).to_owned()).collect(),
        );
        searches.push((player, ticket, token));
    }

    // Six tanks only, six either, twelve damage only: six matches fit
    // exactly; wait for at least four of them.
    let matched = d
        .until_matched(&searches, 16, Duration::from_secs(40))
        .await;
    assert!(matched.len() >= 16, "only {} of 24 matched", matched.len());

    let ids: BTreeSet<String> = matched
        .values()
        .map(|m| m["matchId"].as_str().unwrap().to_owned())
        .collect();
    for id in &ids {
        let hooks = d.hooks_of(id, 1, Duration::from_secs(30)).await;
        assert!(!hooks.is_empty(), "no webhook for {id}");
        assert!(
            hooks.iter().all(|h| h.verified),
            "{id}: a webhook failed verification"
        );
        let body = &hooks[0].body;
        let teams = body["teams"].as_array().unwrap();
        assert_eq!(teams.len(), 2, "{body}");
        for team in teams {
            let mut seats: BTreeMap<String, u32> = BTreeMap::new();
            for p in team["players"].as_array().unwrap() {
                let player = p["playerId"].as_str().unwrap();
                let role = p["role"]
                    .as_str()
                    .unwrap_or_else(|| panic!("no role: {body}"));
                assert!(
                    listed[player].contains(role),
                    "{player} seated as {role}, listed {:?}",
                    listed[player]
                );
                *seats.entry(role.to_owned()).or_default() += 1;
                // The player's own view of the match names the same role.
                let view = d.matched_view(&matched, &searches, player).await;
                assert_eq!(view["player"]["role"], json!(role), "{view}");
            }
            assert_eq!(
                seats,
                BTreeMap::from([("damage".to_owned(), 1), ("tank".to_owned(), 1)]),
                "{id}: {body}"
            );
        }
        // The studio's view of the stored match carries the same roles.
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
        for (team, sent) in stored["teams"].as_array().unwrap().iter().zip(teams) {
            let roles = |t: &Value| -> Vec<Value> {
                t["players"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|p| p["role"].clone())
                    .collect()
            };
            assert_eq!(roles(team), roles(sent), "{stored}");
        }
    }
}
