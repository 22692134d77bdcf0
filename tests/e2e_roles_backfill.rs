//! Backfill by role end to end (docs/rules.md, "Backfill by role"):
//! `matchplane api` and `matchplane worker` against real PostgreSQL and
//! Redis. A `[2,2]` role queue (one tank, one damage per team) makes a
//! match; its tank leaves, and the studio opens a backfill with the three
//! players left (their roles known from the match). The request shows the
//! open tank seat; a damage-only player who waited longer is not taken, a
//! tank-only player is, in a verified `match.backfilled` carrying its role.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::{json, Value};
use std::time::{Duration, Instant};
use support::{redis_url, Deployment};

fn mode() -> Value {
    json!({"name": "roles-bf", "matchShape": [2, 2], "matchmakingCycleDurationSeconds": 1,
    "algorithm": {"type": "fifo"},
    "attributes": {"roles": {"type": "stringSet", "values": ["tank", "damage"]}},
    "composition": {"attribute": "roles", "perTeam": {"tank": 1, "damage": 1}},
    "backfill": {"enabled": true}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_backfill_takes_only_a_player_for_the_open_role() {
    let d = Deployment::start("roles-backfill", &redis_url(), 1, &[]).await;
    d.mode(mode()).await;
    let search = |player: &str, roles: Value| json!({"gameMode": "roles-bf", "playerId": player, "attributes": {"roles": roles}});
    let mut first = Vec::new();
    for (player, role) in [
        ("t1", "tank"),
        ("d1", "damage"),
        ("t2", "tank"),
        ("d2", "damage"),
    ] {
        let (ticket, token) = d.ticket_of(search(player, json!([role]))).await;
        assert_eq!(d.rest_search(&token).await.status, 202);
        first.push((ticket, token));
    }
    let ended = d
        .until_ended(&first[0].0, &first[0].1, Duration::from_secs(30))
        .await;
    assert_eq!(ended["status"], "matched", "{ended}");
    let match_id = ended["match"]["matchId"].as_str().unwrap().to_owned();
    let made = d.hooks_of(&match_id, 1, Duration::from_secs(30)).await;
    assert!(made[0].verified);
    // The roster without t1 (who left): its team keeps the damage player.
    let teams = made[0].body["teams"].as_array().unwrap().clone();
    let (left_team, _) = teams
        .iter()
        .enumerate()
        .find(|(_, t)| {
            t["players"]
                .as_array()
                .unwrap()
                .iter()
                .any(|p| p["playerId"] == "t1")
        })
        .unwrap();
    let roster: Vec<Value> = teams
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let players: Vec<Value> = t["players"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|p| p["playerId"] != "t1")
                .map(|p| json!({"playerId": p["playerId"]}))
                .collect();
            json!({"index": i, "players": players})
        })
        .collect();
    let url = format!("/v1/projects/{}/matches/{match_id}/backfill", d.project);

    // A role the composition does not have is refused, naming the field.
    let mut bad = roster.clone();
    bad[0]["players"][0]["role"] = json!("healer");
    let (status, body) = d
        .api
        .call(
            reqwest::Method::POST,
            &url,
            &d.bearer,
            Some(json!({"teams": bad})),
        )
        .await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(
        body["errors"][0]["field"], "teams[0].players[0].role",
        "{body}"
    );
    assert_eq!(body["errors"][0]["code"], "INVALID_ROSTER", "{body}");

    let (status, view) = d
        .api
        .call(
            reqwest::Method::POST,
            &url,
            &d.bearer,
            Some(json!({"teams": roster})),
        )
        .await;
    assert_eq!(status, 201, "{view}");
    let mut open_seats = vec![0, 0];
    open_seats[left_team] = 1;
    assert_eq!(view["openSeats"], json!(open_seats), "{view}");
    assert_eq!(
        view["openRoles"][left_team],
        json!({"damage": 0, "tank": 1, "any": 0}),
        "{view}"
    );
    assert_eq!(
        view["openRoles"][1 - left_team],
        json!({"damage": 0, "tank": 0, "any": 0}),
        "{view}"
    );
    let backfill_id = view["backfillId"].as_str().unwrap().to_owned();

    // A damage player first (longest waiting), then a tank player.
    let (dps, dps_token) = d.ticket_of(search("d3", json!(["damage"]))).await;
    assert_eq!(d.rest_search(&dps_token).await.status, 202);
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let (tank, tank_token) = d.ticket_of(search("t3", json!(["tank"]))).await;
    assert_eq!(d.rest_search(&tank_token).await.status, 202);
    let ended = d
        .until_ended(&tank, &tank_token, Duration::from_secs(30))
        .await;
    assert_eq!(ended["status"], "matched", "{ended}");
    assert_eq!(ended["match"]["matchId"], json!(match_id), "{ended}");

    let deadline = Instant::now() + Duration::from_secs(30);
    let filled = loop {
        let hooks = d.hooks_of(&match_id, 2, Duration::from_secs(1)).await;
        if let Some(h) = hooks.iter().find(|h| h.body["type"] == "match.backfilled") {
            break h.clone();
        }
        assert!(
            Instant::now() < deadline,
            "no match.backfilled for {match_id}"
        );
    };
    assert!(filled.verified);
    let newcomers = &filled.body["teams"][0]["players"];
    assert_eq!(newcomers[0]["playerId"], "t3", "{}", filled.body);
    assert_eq!(newcomers[0]["role"], "tank", "{}", filled.body);
    assert_eq!(
        filled.body["openRolesLeft"][left_team]["tank"], 0,
        "{}",
        filled.body
    );

    let (status, view) = d
        .api
        .call(
            reqwest::Method::GET,
            &format!("{url}/{backfill_id}"),
            &d.bearer,
            None,
        )
        .await;
    assert_eq!(status, 200, "{view}");
    assert_eq!(view["status"], "filled", "{view}");
    assert_eq!(view["openRoles"][left_team]["tank"], 0, "{view}");
    // The damage player was not taken: still searching.
    assert_eq!(d.status(&dps, &dps_token).await.body["status"], "searching");
}
