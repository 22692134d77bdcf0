//! A backfill round trip with the worker (docs/backfill.md): the studio asks
//! for a replacement of a player who left; a waiting player is seated; the
//! `match.backfilled` delivery carries the newcomer's ticket `data` byte for
//! byte, as `match.made` does, and so does the request's view of its fill;
//! the newcomer's own view carries it with `backfill: true`; the request
//! ends `filled` and the mode's stats count the fill, its seat and its time
//! to fill.

use crate::harness::{Pools, TestApp};
use crate::on_both_pools;
use axum::body::Body;
use axum::http::{header, Method, Request, StatusCode};
use http_body_util::BodyExt;
use matchplane_store::repos::deliveries;
use serde_json::{json, Value};
use std::time::{Duration, Instant};
use tower::ServiceExt;

/// Data whose text any re-serialisation would change.
const CY_DATA: &str = r#"{"z": 1,  "a":[1.50,2e3], "k":"\u00e9"}"#;

/// `GET path` with `auth`: the status and the body's text as received.
async fn get(t: &TestApp, path: &str, auth: &str) -> (StatusCode, String) {
    let req = Request::builder()
        .method(Method::GET)
        .uri(path)
        .header(header::AUTHORIZATION, auth)
        .body(Body::empty())
        .unwrap();
    let response = t.app.clone().oneshot(req).await.unwrap();
    let status = response.status();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    (status, String::from_utf8(bytes.to_vec()).unwrap())
}

/// Polls the search `ticket` (keeping it alive) until it is matched; its
/// view's text.
async fn matched(t: &TestApp, ticket: &str, token: &str) -> String {
    let until = Instant::now() + Duration::from_secs(20);
    loop {
        let (status, text) = get(
            t,
            &format!("/v1/searches/{ticket}"),
            &format!("Ticket {token}"),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{text}");
        if text.contains(r#""status":"matched""#) {
            return text;
        }
        assert!(Instant::now() < until, "never matched: {text}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A duel mode with backfill (`[1, 1]`, FIFO, cycles every `cycle`
/// seconds) and a running match of ana and bo (both matched): the match's
/// id, the roster left when bo left (ana on her team), ana's team and bo's
/// ticket and token.
async fn duel_without_bo(
    t: &TestApp,
    p: &str,
    key: &str,
    extra: Value,
) -> (String, Value, u64, (String, String)) {
    let mut mode = json!({"name": "duel", "enabled": true, "matchShape": [1, 1],
        "matchmakingCycleDurationSeconds": 0.5, "algorithm": {"type": "fifo"},
        "backfill": {"enabled": true, "ttlSeconds": 120}});
    for (k, v) in extra.as_object().into_iter().flatten() {
        mode[k] = v.clone();
    }
    t.mode(p, key, mode).await;
    let (ana, ana_token) = t
        .ticket_ok(p, key, json!({"gameMode": "duel", "playerId": "ana"}))
        .await;
    let (bo, bo_token) = t
        .ticket_ok(p, key, json!({"gameMode": "duel", "playerId": "bo"}))
        .await;
    for token in [&ana_token, &bo_token] {
        assert_eq!(t.rest_search(token).await.status, StatusCode::ACCEPTED);
    }
    let ana_view: Value = serde_json::from_str(&matched(t, &ana, &ana_token).await).unwrap();
    matched(t, &bo, &bo_token).await;
    let match_id = ana_view["match"]["matchId"].as_str().unwrap().to_owned();
    let ana_team = ana_view["match"]["player"]["team"].as_u64().unwrap();
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
    (
        match_id,
        json!({ "teams": teams }),
        ana_team,
        (bo, bo_token),
    )
}

on_both_pools!(a_fill_carries_its_players_data_and_counts_in_the_stats);

async fn a_fill_carries_its_players_data_and_counts_in_the_stats(pools: Pools) {
    let t = TestApp::new(pools, crate::harness::fast()).await;
    let (p, key) = t.project("enterprise").await;
    let hook = json!({"webhook": {"url": "https://93.184.216.34/hook", "enabled": true}});
    let worker = t.start_worker(crate::harness::quick_worker());
    // A running match of ana and bo; bo left: the studio asks for a
    // replacement with the roster it has.
    let (match_id, roster, ana_team, _) = duel_without_bo(&t, &p, &key, hook).await;
    let base = format!("/v1/projects/{p}/matches/{match_id}/backfill");
    let opened = t.call(Method::POST, &base, Some(&key), Some(roster)).await;
    assert_eq!(opened.status, StatusCode::CREATED, "{}", opened.body);
    let backfill_id = opened.body["backfillId"].as_str().unwrap().to_owned();

    // Cy, with data, is seated in bo's place.
    let raw =
        format!(r#"{{"gameMode": "duel", "playerId": "cy", "attributes": {{"data": {CY_DATA}}}}}"#);
    let req = Request::builder()
        .method(Method::POST)
        .uri(format!("/v1/projects/{p}/tickets"))
        .header(header::AUTHORIZATION, &key)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(raw))
        .unwrap();
    let response = t.app.clone().oneshot(req).await.unwrap();
    assert_eq!(response.status(), StatusCode::CREATED);
    let created: Value =
        serde_json::from_slice(&response.into_body().collect().await.unwrap().to_bytes()).unwrap();
    let (cy, cy_token) = (
        created["ticketId"].as_str().unwrap().to_owned(),
        created["token"].as_str().unwrap().to_owned(),
    );
    // Cy starts searching well after the match was made: its `queuedAt`
    // is its own search's start, not one counted back from the match's
    // creation (docs/backfill.md).
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let cy_started = chrono::Utc::now();
    assert_eq!(t.rest_search(&cy_token).await.status, StatusCode::ACCEPTED);
    let cy_text = matched(&t, &cy, &cy_token).await;
    let cy_queued: chrono::DateTime<chrono::Utc> = serde_json::from_str::<Value>(&cy_text).unwrap()
        ["queuedAt"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    // Milliseconds in the view: one of rounding allowed.
    assert!(
        cy_queued >= cy_started - chrono::Duration::milliseconds(1),
        "queuedAt {cy_queued} before the search started at {cy_started}: {cy_text}"
    );
    worker.stop().await;
    assert!(
        cy_text.contains(&format!(r#""data":{CY_DATA}"#)),
        "{cy_text}"
    );
    let cy_view: Value = serde_json::from_str(&cy_text).unwrap();
    assert_eq!(cy_view["match"]["matchId"], json!(match_id));
    assert_eq!(
        cy_view["match"]["player"]["team"],
        json!(1 - ana_team),
        "{cy_text}"
    );
    assert_eq!(
        cy_view["match"]["player"]["backfill"],
        json!(true),
        "{cy_text}"
    );

    // Bo, whom the studio's roster no longer lists, is not on cy's team
    // in cy's view; the studio's views keep it marked `left`, so no team
    // counts more players in the match than its seats (docs/backfill.md).
    let other = usize::try_from(1 - ana_team).unwrap();
    assert_eq!(cy_view["match"]["teams"][other], json!(["cy"]), "{cy_text}");
    assert_eq!(
        cy_view["match"]["teams"][1 - other],
        json!(["ana"]),
        "{cy_text}"
    );
    let studio = t
        .call(
            Method::GET,
            &format!("/v1/projects/{p}/matches/{match_id}"),
            Some(&key),
            None,
        )
        .await;
    let players = studio.body["teams"][other]["players"]
        .as_array()
        .unwrap()
        .clone();
    let left: Vec<(&str, bool)> = players
        .iter()
        .map(|p| (p["playerId"].as_str().unwrap(), p["left"] == json!(true)))
        .collect();
    assert_eq!(left, [("bo", true), ("cy", false)], "{}", studio.body);
    let listed = t
        .call(
            Method::GET,
            &format!("/v1/projects/{p}/matches"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(
        listed.body["items"][0]["teams"][other]["players"],
        json!(players),
        "{}",
        listed.body
    );
    let ticket = t.status(&p, &key, &cy).await.body;
    assert_eq!(
        ticket["match"]["teams"][other]["players"],
        json!(players),
        "{ticket}"
    );

    // The fill's delivery: cy's data as sent, in cy's entry only.
    let stored = deliveries::of_match(&t.db, &p, &match_id).await.unwrap();
    let fill: Vec<_> = stored
        .iter()
        .filter(|(d, _)| d.event_type == "match.backfilled")
        .collect();
    assert_eq!(fill.len(), 1, "{stored:?}");
    let payload = &fill[0].0.payload;
    assert!(
        payload.contains(&format!(r#""ticketId":"{cy}""#))
            && payload.contains(&format!(r#""data":{CY_DATA}"#)),
        "{payload}"
    );
    assert_eq!(payload.matches("\"data\"").count(), 1, "{payload}");
    let made = stored
        .iter()
        .find(|(d, _)| d.event_type == "match.made")
        .unwrap();
    assert!(!made.0.payload.contains("\"data\""), "{}", made.0.payload);

    // The request is filled; the stats count its fill.
    let read = t
        .call(
            Method::GET,
            &format!("{base}/{backfill_id}"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(read.body["status"], "filled", "{}", read.body);
    assert_eq!(read.body["fills"].as_array().unwrap().len(), 1);
    // Its fill's teams are the webhook's, cy's data in them byte for byte
    // (docs/backfill.md). Before: the view left `data` out.
    let webhook: Value = serde_json::from_str(payload).unwrap();
    assert_eq!(
        read.body["fills"][0]["teams"], webhook["teams"],
        "{}",
        read.body
    );
    let (status, text) = get(&t, &format!("{base}/{backfill_id}"), &key).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    assert!(text.contains(&format!(r#""data":{CY_DATA}"#)), "{text}");
    let stats = t
        .call(
            Method::GET,
            &format!("/v1/projects/{p}/game-modes/duel/stats"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(stats.status, StatusCode::OK, "{}", stats.body);
    let figures = &stats.body["backfill"];
    assert_eq!(figures["open"], 0, "{}", stats.body);
    assert_eq!(figures["fillsLastHour"], 1, "{}", stats.body);
    assert_eq!(figures["seatsFilledLastHour"], 1, "{}", stats.body);
    let p90 = figures["timeToFillSeconds"]["p90"].as_f64().unwrap();
    assert!((0.0..20.0).contains(&p90), "{}", stats.body);

    // Released, cy searches again from its first `queuedAt`, as the
    // match's own players do (docs/acceptance.md).
    release(&t, &p, &key, &match_id).await;
    let again = t.rest_search(&cy_token).await;
    assert_eq!(again.status, StatusCode::ACCEPTED, "{}", again.body);
    let (_, text) = get(
        &t,
        &format!("/v1/searches/{cy}"),
        &format!("Ticket {cy_token}"),
    )
    .await;
    let view: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(view["status"], "searching", "{text}");
    let requeued: chrono::DateTime<chrono::Utc> =
        view["queuedAt"].as_str().unwrap().parse().unwrap();
    assert_eq!(requeued, cy_queued, "{text}");
}

on_both_pools!(a_release_closes_the_matchs_open_backfill);

/// A released match is no longer played: its open backfill request closes
/// with it, so the player who left and searches again is not seated back
/// into it (docs/acceptance.md, "Releasing a match").
async fn a_release_closes_the_matchs_open_backfill(pools: Pools) {
    let t = TestApp::new(pools, crate::harness::fast()).await;
    let (p, key) = t.project("enterprise").await;
    let worker = t.start_worker(crate::harness::quick_worker());
    let (match_id, roster, _, (bo, bo_token)) = duel_without_bo(&t, &p, &key, json!({})).await;
    let base = format!("/v1/projects/{p}/matches/{match_id}/backfill");
    let opened = t.call(Method::POST, &base, Some(&key), Some(roster)).await;
    assert_eq!(opened.status, StatusCode::CREATED, "{}", opened.body);
    let backfill_id = opened.body["backfillId"].as_str().unwrap().to_owned();

    release(&t, &p, &key, &match_id).await;
    let request = format!("{base}/{backfill_id}");
    let read = t.call(Method::GET, &request, Some(&key), None).await;
    assert_eq!(read.body["status"], "closed", "{}", read.body);

    // Bo searches again; cycles pass; nobody seats it in the released match.
    searches_on(&t, &bo, &bo_token).await;
    let read = t.call(Method::GET, &request, Some(&key), None).await;
    assert_eq!(read.body["status"], "closed", "{}", read.body);
    assert_eq!(read.body["fills"], json!([]), "{}", read.body);
    worker.stop().await;
}

on_both_pools!(a_backfill_on_a_match_no_longer_made_is_refused);

/// Nobody is seated in a match that is not played: a request for a
/// released match is refused (`matchId`), and the player who left,
/// searching again, stays in the pool (docs/backfill.md, "Refusals").
async fn a_backfill_on_a_match_no_longer_made_is_refused(pools: Pools) {
    let t = TestApp::new(pools, crate::harness::fast()).await;
    let (p, key) = t.project("enterprise").await;
    let worker = t.start_worker(crate::harness::quick_worker());
    let (match_id, roster, _, (bo, bo_token)) = duel_without_bo(&t, &p, &key, json!({})).await;
    release(&t, &p, &key, &match_id).await;

    let base = format!("/v1/projects/{p}/matches/{match_id}/backfill");
    let opened = t.call(Method::POST, &base, Some(&key), Some(roster)).await;
    assert_eq!(
        opened.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        opened.body
    );
    assert_eq!(opened.body["code"], "VALIDATION_ERROR", "{}", opened.body);
    assert_eq!(
        opened.body["errors"][0]["field"], "matchId",
        "{}",
        opened.body
    );
    assert!(
        opened.body["errors"][0]["message"]
            .as_str()
            .is_some_and(|m| m.contains("released, not made")),
        "{}",
        opened.body
    );

    searches_on(&t, &bo, &bo_token).await;
    worker.stop().await;
}

/// Releases the made match `match_id` of project `p`.
async fn release(t: &TestApp, p: &str, key: &str, match_id: &str) {
    let released = t
        .call(
            Method::POST,
            &format!("/v1/projects/{p}/matches/{match_id}/release"),
            Some(key),
            None,
        )
        .await;
    assert_eq!(released.status, StatusCode::OK, "{}", released.body);
}

/// Starts a REST search of `ticket` (its `token`) and checks it is still
/// searching over the next cycles: nobody seats it.
async fn searches_on(t: &TestApp, ticket: &str, token: &str) {
    assert_eq!(t.rest_search(token).await.status, StatusCode::ACCEPTED);
    let until = Instant::now() + Duration::from_secs(2);
    while Instant::now() < until {
        let (_, text) = get(
            t,
            &format!("/v1/searches/{ticket}"),
            &format!("Ticket {token}"),
        )
        .await;
        assert!(text.contains(r#""status":"searching""#), "{text}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

on_both_pools!(a_deleted_modes_backfill_closes_and_a_new_mode_of_its_name_starts_afresh);

/// A mode's delete closes its open backfill request, and a mode created
/// again under the name is a new mode (docs/game-modes.md, on a deleted
/// mode): it seats nobody in the deleted mode's match, takes no new
/// request for it, and its stats count nothing of the deleted mode.
async fn a_deleted_modes_backfill_closes_and_a_new_mode_of_its_name_starts_afresh(pools: Pools) {
    let t = TestApp::new(pools, crate::harness::fast()).await;
    let (p, key) = t.project("enterprise").await;
    let worker = t.start_worker(crate::harness::quick_worker());
    let (match_id, roster, _, _) = duel_without_bo(&t, &p, &key, json!({})).await;
    let base = format!("/v1/projects/{p}/matches/{match_id}/backfill");
    let opened = t
        .call(Method::POST, &base, Some(&key), Some(roster.clone()))
        .await;
    assert_eq!(opened.status, StatusCode::CREATED, "{}", opened.body);
    let request = format!("{base}/{}", opened.body["backfillId"].as_str().unwrap());
    let mode = format!("/v1/projects/{p}/game-modes/duel");
    let deleted = t.call(Method::DELETE, &mode, Some(&key), None).await;
    assert_eq!(deleted.status, StatusCode::NO_CONTENT, "{}", deleted.body);
    let read = t.call(Method::GET, &request, Some(&key), None).await;
    assert_eq!(read.body["status"], "closed", "{}", read.body);

    // Created again, with backfill: bo searches in it and nobody seats it
    // in the deleted mode's match; a new request for that match is refused.
    let again = json!({"name": "duel", "enabled": true, "matchShape": [1, 1],
        "matchmakingCycleDurationSeconds": 0.5, "algorithm": {"type": "fifo"},
        "backfill": {"enabled": true, "ttlSeconds": 120}});
    t.mode(&p, &key, again).await;
    let (cy, cy_token) = t
        .ticket_ok(&p, &key, json!({"gameMode": "duel", "playerId": "cy"}))
        .await;
    searches_on(&t, &cy, &cy_token).await;
    let read = t.call(Method::GET, &request, Some(&key), None).await;
    assert_eq!(read.body["status"], "closed", "{}", read.body);
    assert_eq!(read.body["fills"], json!([]), "{}", read.body);
    let refused = t.call(Method::POST, &base, Some(&key), Some(roster)).await;
    assert_eq!(
        refused.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        refused.body
    );
    assert_eq!(
        refused.body["errors"][0]["field"], "matchId",
        "{}",
        refused.body
    );
    assert!(
        refused.body["errors"][0]["message"]
            .as_str()
            .is_some_and(|m| m.contains("was deleted")),
        "{}",
        refused.body
    );

    // Its stats start empty: the deleted mode's match is not its.
    let stats = t
        .call(Method::GET, &format!("{mode}/stats"), Some(&key), None)
        .await;
    assert_eq!(stats.status, StatusCode::OK, "{}", stats.body);
    assert_eq!(stats.body["backfill"]["open"], 0, "{}", stats.body);
    assert_eq!(stats.body["matchesLastMinute"], 0, "{}", stats.body);
    assert_eq!(
        stats.body["lifecycle"]["proposalsMade"], 0,
        "{}",
        stats.body
    );
    worker.stop().await;
}

on_both_pools!(a_roster_that_moves_a_player_to_another_team_moves_it_in_the_views);

/// The views follow the roster's teams (docs/backfill.md, "The roster the
/// views show"): ana moved to bo's team after bo left, so the seat that
/// opens is on ana's first team, cy is seated there, and no team shows
/// more players in the match than its seats.
async fn a_roster_that_moves_a_player_to_another_team_moves_it_in_the_views(pools: Pools) {
    let t = TestApp::new(pools, crate::harness::fast()).await;
    let (p, key) = t.project("enterprise").await;
    let worker = t.start_worker(crate::harness::quick_worker());
    let (match_id, _, ana_team, _) = duel_without_bo(&t, &p, &key, json!({})).await;
    let other = 1 - ana_team;
    let roster = json!({"teams": [
        {"index": ana_team, "players": []},
        {"index": other, "players": [{"playerId": "ana"}]}]});
    let base = format!("/v1/projects/{p}/matches/{match_id}/backfill");
    let opened = t.call(Method::POST, &base, Some(&key), Some(roster)).await;
    assert_eq!(opened.status, StatusCode::CREATED, "{}", opened.body);
    let (cy, cy_token) = t
        .ticket_ok(&p, &key, json!({"gameMode": "duel", "playerId": "cy"}))
        .await;
    assert_eq!(t.rest_search(&cy_token).await.status, StatusCode::ACCEPTED);
    let own: Value = serde_json::from_str(&matched(&t, &cy, &cy_token).await).unwrap();
    let view = t
        .call(
            Method::GET,
            &format!("/v1/projects/{p}/matches/{match_id}"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(view.status, StatusCode::OK, "{}", view.body);
    let in_match = |teams: &Value, index: u64| -> Vec<String> {
        let team = teams
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["index"] == index)
            .unwrap();
        team["players"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| p["left"] != true)
            .map(|p| p["playerId"].as_str().unwrap().to_owned())
            .collect()
    };
    let teams = &view.body["teams"];
    assert_eq!(in_match(teams, ana_team), ["cy"], "{}", view.body);
    assert_eq!(in_match(teams, other), ["ana"], "{}", view.body);
    // Cy's own view lists the players still in the match on their teams.
    assert_eq!(own["match"]["player"]["team"], ana_team, "{own}");
    let own_teams: Vec<Vec<String>> =
        serde_json::from_value(own["match"]["teams"].clone()).unwrap();
    assert_eq!(own_teams[ana_team as usize], ["cy"], "{own}");
    assert_eq!(own_teams[other as usize], ["ana"], "{own}");
    worker.stop().await;
}

on_both_pools!(an_emptied_match_is_filled_at_its_own_level);

/// A request whose roster holds nobody (`"teams": []`: everyone left) in
/// an MMR mode is measured by the mean MMR of the players the match was
/// made with (docs/backfill.md, "Who fits"): a player far from it waits,
/// one near it is seated. Before, an empty roster had no mean and the
/// request took a player of any MMR.
async fn an_emptied_match_is_filled_at_its_own_level(pools: Pools) {
    let t = TestApp::new(pools, crate::harness::fast()).await;
    let (p, key) = t.project("enterprise").await;
    let worker = t.start_worker(crate::harness::quick_worker());
    t.mode(
        &p,
        &key,
        json!({"name": "duel", "enabled": true, "matchShape": [1, 1],
            "matchmakingCycleDurationSeconds": 0.5,
            "algorithm": {"type": "mmr", "minMmr": 0, "maxMmr": 3000,
                "baseTolerance": 5, "expansionMultiplier": 1.1, "maxTolerance": 10},
            "backfill": {"enabled": true, "ttlSeconds": 120}}),
    )
    .await;
    let ticket = |player: &str, mmr: f64| json!({"gameMode": "duel", "playerId": player, "attributes": {"mmr": mmr}});
    let (ana, ana_token) = t.ticket_ok(&p, &key, ticket("ana", 1500.0)).await;
    let (bo, bo_token) = t.ticket_ok(&p, &key, ticket("bo", 1520.0)).await;
    for token in [&ana_token, &bo_token] {
        assert_eq!(t.rest_search(token).await.status, StatusCode::ACCEPTED);
    }
    let ana_view: Value = serde_json::from_str(&matched(&t, &ana, &ana_token).await).unwrap();
    matched(&t, &bo, &bo_token).await;
    let match_id = ana_view["match"]["matchId"].as_str().unwrap().to_owned();
    let base = format!("/v1/projects/{p}/matches/{match_id}/backfill");
    let opened = t
        .call(Method::POST, &base, Some(&key), Some(json!({"teams": []})))
        .await;
    assert_eq!(opened.status, StatusCode::CREATED, "{}", opened.body);

    // 1 390 from the match's mean: beyond any range the mode reaches.
    let (far, far_token) = t.ticket_ok(&p, &key, ticket("far", 2900.0)).await;
    searches_on(&t, &far, &far_token).await;
    let (near, near_token) = t.ticket_ok(&p, &key, ticket("near", 1490.0)).await;
    assert_eq!(
        t.rest_search(&near_token).await.status,
        StatusCode::ACCEPTED
    );
    let near_view = matched(&t, &near, &near_token).await;
    assert!(near_view.contains(&match_id), "{near_view}");
    let (_, far_view) = get(
        &t,
        &format!("/v1/searches/{far}"),
        &format!("Ticket {far_token}"),
    )
    .await;
    assert!(far_view.contains(r#""status":"searching""#), "{far_view}");
    worker.stop().await;
}

on_both_pools!(a_player_moved_then_dropped_is_left_on_the_team_it_moved_to);

/// A player one roster moved to the other team and a later roster dropped
/// is shown left on the team it moved to, the one it last sat on
/// (docs/backfill.md, "The roster the views show"). Before, only the
/// newest roster was known, and the player showed on the team it was
/// seated in.
async fn a_player_moved_then_dropped_is_left_on_the_team_it_moved_to(pools: Pools) {
    let t = TestApp::new(pools, crate::harness::fast()).await;
    let (p, key) = t.project("enterprise").await;
    let worker = t.start_worker(crate::harness::quick_worker());
    let (match_id, _, ana_team, _) = duel_without_bo(&t, &p, &key, json!({})).await;
    let other = 1 - ana_team;
    let moved = json!({"teams": [{"index": other, "players": [{"playerId": "ana"}]}]});
    let base = format!("/v1/projects/{p}/matches/{match_id}/backfill");
    let opened = t.call(Method::POST, &base, Some(&key), Some(moved)).await;
    assert_eq!(opened.status, StatusCode::CREATED, "{}", opened.body);
    let request = format!("{base}/{}", opened.body["backfillId"].as_str().unwrap());
    let emptied = t
        .call(
            Method::PUT,
            &request,
            Some(&key),
            Some(json!({"teams": []})),
        )
        .await;
    assert_eq!(emptied.status, StatusCode::OK, "{}", emptied.body);

    let view = t
        .call(
            Method::GET,
            &format!("/v1/projects/{p}/matches/{match_id}"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(view.status, StatusCode::OK, "{}", view.body);
    let ana = view.body["teams"]
        .as_array()
        .unwrap()
        .iter()
        .find(|team| {
            team["players"]
                .as_array()
                .unwrap()
                .iter()
                .any(|p| p["playerId"] == "ana")
        })
        .unwrap();
    assert_eq!(ana["index"], other, "{}", view.body);
    let entry = ana["players"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["playerId"] == "ana")
        .unwrap();
    assert_eq!(entry["left"], true, "{}", view.body);
    worker.stop().await;
}
