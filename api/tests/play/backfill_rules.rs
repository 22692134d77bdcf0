//! Backfill with rules (docs/rules.md#backfill), with the worker: a running
//! match's roster keeps the build its players were matched with, and the
//! request's `maps` (the map being played) stands for the whole roster; a
//! newcomer of another build, or one who will not play that map, is not
//! seated, one who fits is. Values a request sends are checked against the
//! mode's declarations, every failure named, and a block list naming the
//! roster's own players is refused.

use crate::harness::{Pools, TestApp};
use crate::on_both_pools;
use axum::http::{Method, StatusCode};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

on_both_pools!(a_fill_keeps_the_rosters_build_and_the_map_being_played);

async fn a_fill_keeps_the_rosters_build_and_the_map_being_played(pools: Pools) {
    let t = TestApp::new(pools, crate::harness::fast()).await;
    let (p, key) = t.project("enterprise").await;
    t.mode(
        &p,
        &key,
        json!({"name": "duel", "enabled": true, "matchShape": [1, 1],
            "matchmakingCycleDurationSeconds": 0.5, "algorithm": {"type": "fifo"},
            "attributes": {
                "build": {"type": "string"},
                "maps": {"type": "stringSet", "values": ["dust", "inferno"]},
                "blocked": {"type": "playerSet", "default": []}
            },
            "rules": [
                {"name": "same-build", "type": "equal", "attribute": "build"},
                {"name": "map", "type": "intersect", "attribute": "maps"}
            ],
            "backfill": {"enabled": true, "ttlSeconds": 120}}),
    )
    .await;
    let worker = t.start_worker(crate::harness::quick_worker());
    let ticket = |player: &str, build: &str, maps: &[&str]| {
        json!({"gameMode": "duel", "playerId": player,
               "attributes": {"build": build, "maps": maps}})
    };
    // A running match of ana and bo, both on 1.4 with both maps.
    let mut tokens = Vec::new();
    for player in ["ana", "bo"] {
        let (id, token) = t
            .ticket_ok(&p, &key, ticket(player, "1.4", &["dust", "inferno"]))
            .await;
        assert_eq!(t.rest_search(&token).await.status, StatusCode::ACCEPTED);
        tokens.push((id, token));
    }
    let ana = t
        .poll_until(&tokens[..1], |v| v["status"] == "matched")
        .await
        .remove(0);
    let match_id = ana["match"]["matchId"].as_str().unwrap().to_owned();
    let ana_team = ana["match"]["player"]["team"].as_u64().unwrap();
    let teams: Vec<Value> = (0..2)
        .map(|i| {
            let players = if i == ana_team {
                json!([{"playerId": "ana"}])
            } else {
                json!([])
            };
            json!({"index": i, "players": players})
        })
        .collect();
    let base = format!("/v1/projects/{p}/matches/{match_id}/backfill");

    // Values the mode does not declare, or of the wrong kind: 422, each named.
    let mut bad_teams = teams.clone();
    bad_teams[usize::try_from(ana_team).unwrap()]["players"][0]["attributes"] =
        json!({"maps": ["mirage"]});
    let refused = t
        .call(
            Method::POST,
            &base,
            Some(&key),
            Some(json!({"teams": bad_teams, "attributes": {"nope": "x"}})),
        )
        .await;
    assert_eq!(
        refused.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        refused.body
    );
    let fields = error_fields(&refused.body);
    assert!(fields.contains(&"attributes.nope"), "{}", refused.body);
    let player_field = format!("teams[{ana_team}].players[0].attributes.maps[0]");
    assert!(fields.contains(&player_field.as_str()), "{}", refused.body);
    // A wrong type beside a set too small for its rule: both listed at
    // once, as a ticket lists them.
    let mut bad_teams = teams.clone();
    bad_teams[usize::try_from(ana_team).unwrap()]["players"][0]["attributes"] =
        json!({"build": 5, "maps": []});
    let refused = t
        .call(
            Method::POST,
            &base,
            Some(&key),
            Some(json!({"teams": bad_teams})),
        )
        .await;
    let fields = error_fields(&refused.body);
    for name in ["build", "maps"] {
        let field = format!("teams[{ana_team}].players[0].attributes.{name}");
        assert!(
            fields.contains(&field.as_str()),
            "{field}: {}",
            refused.body
        );
    }

    // A block list naming the roster's own players, the request's (which
    // stands for the whole roster) or a roster player's: the roster is
    // already one match, as a ticket's own party is (docs/rules.md).
    let mut bad_teams = teams.clone();
    bad_teams[usize::try_from(ana_team).unwrap()]["players"][0]["attributes"] =
        json!({"blocked": ["ana"]});
    let refused = t
        .call(
            Method::POST,
            &base,
            Some(&key),
            Some(json!({"teams": bad_teams, "attributes": {"blocked": ["cy", "ana"]}})),
        )
        .await;
    assert_eq!(
        refused.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        refused.body
    );
    let fields = error_fields(&refused.body);
    let entry = format!("teams[{ana_team}].players[0].attributes.blocked[0]");
    assert_eq!(
        fields,
        ["attributes.blocked[1]", entry.as_str()],
        "{}",
        refused.body
    );

    // Bo left; dust is being played.
    let opened = t
        .call(
            Method::POST,
            &base,
            Some(&key),
            Some(json!({"teams": teams, "attributes": {"maps": ["dust"]}})),
        )
        .await;
    assert_eq!(opened.status, StatusCode::CREATED, "{}", opened.body);
    assert_eq!(
        opened.body["attributes"],
        json!({"maps": ["dust"]}),
        "{}",
        opened.body
    );

    let mut waiting = Vec::new();
    for (player, build, maps) in [
        ("cy", "1.5", &["dust"][..]),
        ("di", "1.4", &["inferno"][..]),
        ("ed", "1.4", &["dust"][..]),
    ] {
        let (id, token) = t.ticket_ok(&p, &key, ticket(player, build, maps)).await;
        assert_eq!(t.rest_search(&token).await.status, StatusCode::ACCEPTED);
        waiting.push((player, id, token));
    }
    let until = Instant::now() + Duration::from_secs(20);
    let ed = loop {
        // Every poll keeps its REST search alive.
        for (player, id, token) in &waiting[..2] {
            let s = t.search_view(id, token).await;
            assert_eq!(s["status"], "searching", "{player}: {s}");
        }
        let s = t.search_view(&waiting[2].1, &waiting[2].2).await;
        if s["status"] == "matched" {
            break s;
        }
        assert!(Instant::now() < until, "ed never seated: {s}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(ed["match"]["matchId"], json!(match_id), "{ed}");
    assert_eq!(ed["match"]["player"]["backfill"], json!(true), "{ed}");
    // A few more cycles (polled, so their REST searches stay alive): cy
    // and di still wait, never seated.
    let until = Instant::now() + Duration::from_millis(1500);
    while Instant::now() < until {
        for (player, id, token) in &waiting[..2] {
            let s = t.search_view(id, token).await;
            assert_eq!(s["status"], "searching", "{player}: {s}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    worker.stop().await;
}

/// The `field` of each entry of a problem's `errors`.
fn error_fields(problem: &Value) -> Vec<&str> {
    problem["errors"]
        .as_array()
        .map(|errors| errors.iter().filter_map(|e| e["field"].as_str()).collect())
        .unwrap_or_default()
}
