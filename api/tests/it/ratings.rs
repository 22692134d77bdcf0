//! Ratings from reported results (Glicko-2): the API on both databases,
//! and concurrent reports on PostgreSQL.

use crate::common::{mode, Backend, TestApp};
use crate::on_both;
use axum::http::{Method, StatusCode};
use matchplane_store::entities::match_;
use matchplane_store::repos::matches;
use serde_json::{json, Value};

/// Stores a match of `game_mode` in `project` with one team per entry of
/// `teams`, as the worker records it, and returns its id.
async fn a_match(t: &TestApp, project: &str, game_mode: &str, teams: &[&[&str]]) -> String {
    a_match_in_status(t, project, game_mode, teams, "made").await
}

/// [`a_match`] stored with `status` (`proposed`, `cancelled`, …).
async fn a_match_in_status(
    t: &TestApp,
    project: &str,
    game_mode: &str,
    teams: &[&[&str]],
    status: &str,
) -> String {
    let id = format!("mat_{}", ulid::Ulid::new());
    let teams: Vec<Value> = teams
        .iter()
        .enumerate()
        .map(|(index, players)| {
            let players: Vec<Value> = players
                .iter()
                .map(|p| {
                    json!({"playerId": p, "ticketId": format!("tkt_{p}"), "partyId": null,
                    "mmr": 1500.0, "pingMs": null, "waitSeconds": 1.0})
                })
                .collect();
            json!({"index": index, "players": players, "meanMmr": 1500.0})
        })
        .collect();
    let row = match_::Model {
        id: id.clone(),
        project_id: project.to_owned(),
        game_mode: game_mode.to_owned(),
        game_mode_version: 1,
        teams: json!(teams),
        quality: json!({"mmrSpread": 0.0, "teamImbalance": 0.0}),
        created_at: chrono::Utc::now(),
        match_shape: None,
        seats_open: None,
        region: None,
        status: status.into(),
        answers: None,
        made_at: None,
        assignment: None,
        attributes: None,
    };
    assert_eq!(
        matches::insert_if_absent(&t.db, vec![row]).await.unwrap(),
        1
    );
    id
}

async fn rated_mode(t: &TestApp) -> (String, String, String) {
    let p = t.project("pro").await;
    let (_, key) = t.key(&p).await;
    let mut body = mode("ranked");
    body["ratings"] = json!({"enabled": true});
    let created = t
        .call(
            Method::POST,
            &format!("/v1/projects/{p}/game-modes"),
            Some(&key),
            Some(body),
        )
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    let base = format!("/v1/projects/{p}/game-modes/ranked");
    (p, key, base)
}

fn report(match_id: &str, winner: &str, loser: &str) -> Value {
    json!({"matchId": match_id, "teams": [{"players": [winner], "place": 1}, {"players": [loser], "place": 2}]})
}

async fn two_new_players_and_a_duplicate_report(backend: Backend) {
    let t = TestApp::new(backend).await;
    let (p, key, base) = rated_mode(&t).await;
    let m1 = a_match(&t, &p, "ranked", &[&["a"], &["b"]]).await;
    let first = t
        .call(
            Method::POST,
            &format!("{base}/results"),
            Some(&key),
            Some(report(&m1, "a", "b")),
        )
        .await;
    assert_eq!(first.status, StatusCode::OK, "{}", first.body);
    let a = t
        .call(Method::GET, &format!("{base}/ratings/a"), Some(&key), None)
        .await;
    assert!(
        (a.body["rating"].as_f64().unwrap() - 1662.31).abs() < 0.01,
        "{}",
        a.body
    );
    assert!((a.body["deviation"].as_f64().unwrap() - 290.32).abs() < 0.01);
    assert_eq!(a.body["games"], 1);
    let b = t
        .call(Method::GET, &format!("{base}/ratings/b"), Some(&key), None)
        .await;
    assert!(
        (b.body["rating"].as_f64().unwrap() - 1337.69).abs() < 0.01,
        "{}",
        b.body
    );

    // The same matchId again: 409 and nothing changes.
    let again = t
        .call(
            Method::POST,
            &format!("{base}/results"),
            Some(&key),
            Some(report(&m1, "b", "a")),
        )
        .await;
    again.assert_problem(StatusCode::CONFLICT, "RESULT_ALREADY_REPORTED");
    let a2 = t
        .call(Method::GET, &format!("{base}/ratings/a"), Some(&key), None)
        .await;
    assert_eq!(a.body, a2.body);

    // A never-rated player reads as the initial rating.
    let new = t
        .call(
            Method::GET,
            &format!("{base}/ratings/zed"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(new.body["rating"], 1500.0);
    assert_eq!(new.body["games"], 0);
    assert_eq!(new.body["conservative"], 800.0);

    let board = t
        .call(
            Method::GET,
            &format!("{base}/leaderboard?limit=1"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(board.status, StatusCode::OK);
    assert_eq!(board.body["items"][0]["playerId"], "a");
    let next = board.body["nextCursor"].as_str().unwrap().to_owned();
    let far = t
        .call(
            Method::GET,
            &format!("{base}/leaderboard?limit=200&cursor=18446744073709551615"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(far.status, StatusCode::OK, "{}", far.body);
    assert_eq!(far.body["items"], json!([]));
    assert!(far.body.get("nextCursor").is_none());
    let page2 = t
        .call(
            Method::GET,
            &format!("{base}/leaderboard?limit=1&cursor={next}"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(page2.body["items"][0]["playerId"], "b");
    assert!(page2.body.get("nextCursor").is_none());
}

async fn import_and_validation(backend: Backend) {
    let t = TestApp::new(backend).await;
    let (p, key, base) = rated_mode(&t).await;
    let put = t
        .call(
            Method::PUT,
            &format!("{base}/ratings/star"),
            Some(&key),
            Some(json!({"rating": 2100, "deviation": 60, "volatility": 0.05})),
        )
        .await;
    assert_eq!(put.status, StatusCode::OK, "{}", put.body);
    assert_eq!(put.body["conservative"], 1980.0);
    let most = t
        .call(
            Method::PUT,
            &format!("{base}/ratings/new"),
            Some(&key),
            Some(json!({"rating": 1500, "deviation": 350, "volatility": 0.06})),
        )
        .await;
    assert_eq!(most.status, StatusCode::OK, "{}", most.body);
    for bad in [
        json!({"rating": 2100, "deviation": 0, "volatility": 0.05}),
        json!({"rating": 2100, "deviation": 60, "volatility": -1}),
        json!({"rating": "high", "deviation": 60, "volatility": 0.05}),
        json!({"rating": 1.7e308, "deviation": 1e308, "volatility": 1e308}),
        // Above the mode's initialDeviation (350), the most it can be.
        json!({"rating": 1500, "deviation": 351, "volatility": 0.06}),
    ] {
        let answer = t
            .call(
                Method::PUT,
                &format!("{base}/ratings/star"),
                Some(&key),
                Some(bad),
            )
            .await;
        assert!(
            answer.status == StatusCode::UNPROCESSABLE_ENTITY
                || answer.status == StatusCode::BAD_REQUEST,
            "{}",
            answer.body
        );
        assert_eq!(answer.code(), "VALIDATION_ERROR");
    }
    let malformed = t
        .call(
            Method::POST,
            &format!("{base}/results"),
            Some(&key),
            Some(json!({"matchId": "x", "teams": [{"players": ["a"], "place": 1}]})),
        )
        .await;
    malformed.assert_problem(StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION_ERROR");

    // A mode without ratings refuses reports.
    let plain = t
        .call(
            Method::POST,
            &format!("/v1/projects/{p}/game-modes"),
            Some(&key),
            Some(mode("casual")),
        )
        .await;
    assert_eq!(plain.status, StatusCode::CREATED);
    let refused = t
        .call(
            Method::POST,
            &format!("/v1/projects/{p}/game-modes/casual/results"),
            Some(&key),
            Some(report("mat_none", "a", "b")),
        )
        .await;
    refused.assert_problem(StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION_ERROR");

    // Another project's key sees nothing.
    let other = t.project("pro").await;
    let (_, other_key) = t.key(&other).await;
    let hidden = t
        .call(
            Method::GET,
            &format!("{base}/ratings/star"),
            Some(&other_key),
            None,
        )
        .await;
    assert_eq!(hidden.status, StatusCode::NOT_FOUND);
}

/// A report is checked against the match it names: an unknown match (or
/// another project's) is 404, a match of another mode or players who were
/// not in it are 422 naming the field, and none of these refusals rates
/// anyone or spends the match's one report.
async fn reports_are_checked_against_their_match(backend: Backend) {
    let t = TestApp::new(backend).await;
    let (p, key, base) = rated_mode(&t).await;
    let mut other_mode = mode("ranked-b");
    other_mode["ratings"] = json!({"enabled": true});
    let created = t
        .call(
            Method::POST,
            &format!("/v1/projects/{p}/game-modes"),
            Some(&key),
            Some(other_mode),
        )
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    let other_project = t.project("pro").await;
    let elsewhere = a_match(&t, &other_project, "ranked", &[&["a"], &["b"]]).await;
    let of_other_mode = a_match(&t, &p, "ranked-b", &[&["a"], &["b"]]).await;
    let real = a_match(&t, &p, "ranked", &[&["a", "c"], &["b", "d"]]).await;
    let post = |body: Value| {
        let (t, key, base) = (&t, &key, &base);
        async move {
            t.call(
                Method::POST,
                &format!("{base}/results"),
                Some(key),
                Some(body),
            )
            .await
        }
    };
    let fields = |answer: &crate::common::Answer| -> Vec<String> {
        answer.body["errors"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["field"].as_str().unwrap().to_owned())
            .collect()
    };

    for unknown in ["mat_01NOSUCHMATCH0000000000000", elsewhere.as_str()] {
        let answer = post(report(unknown, "a", "b")).await;
        answer.assert_problem(StatusCode::NOT_FOUND, "NOT_FOUND");
        assert_eq!(fields(&answer), ["matchId"], "{}", answer.body);
    }
    let wrong_mode = post(report(&of_other_mode, "a", "b")).await;
    wrong_mode.assert_problem(StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION_ERROR");
    assert_eq!(fields(&wrong_mode), ["matchId"], "{}", wrong_mode.body);

    let strangers = post(json!({"matchId": real, "teams": [
        {"players": ["a", "zed"], "place": 1},
        {"players": ["b", "d", "yan"], "place": 2}]}))
    .await;
    strangers.assert_problem(StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION_ERROR");
    assert_eq!(
        fields(&strangers),
        ["teams[0].players[1]", "teams[1].players[2]"],
        "{}",
        strangers.body
    );

    // Nobody was rated by the refusals, and the match can still be reported.
    for player in ["a", "b", "zed"] {
        let rating = t
            .call(
                Method::GET,
                &format!("{base}/ratings/{player}"),
                Some(&key),
                None,
            )
            .await;
        assert_eq!(rating.body["games"], 0, "{player}: {}", rating.body);
    }
    let good = post(json!({"matchId": real, "teams": [
        {"players": ["a", "c"], "place": 1}, {"players": ["b", "d"], "place": 2}]}))
    .await;
    assert_eq!(good.status, StatusCode::OK, "{}", good.body);
    let again = post(report(&real, "a", "b")).await;
    again.assert_problem(StatusCode::CONFLICT, "RESULT_ALREADY_REPORTED");
}

on_both!(
    two_new_players_and_a_duplicate_report,
    import_and_validation,
    reports_are_checked_against_their_match
);

/// Concurrent reports that share one player lose no update (PostgreSQL).
#[tokio::test]
async fn concurrent_reports_on_overlapping_players_lose_no_update() {
    let t = TestApp::new(Backend::Postgres).await;
    let (p, key, base) = rated_mode(&t).await;
    let mut ids = Vec::new();
    for i in 0..24 {
        let opponent = format!("opp{}", i % 6);
        ids.push(a_match(&t, &p, "ranked", &[&["hub"], &[opponent.as_str()]]).await);
    }
    let t = std::sync::Arc::new(t);
    let mut tasks = Vec::new();
    for (i, id) in ids.into_iter().enumerate() {
        let (t, key, base) = (t.clone(), key.clone(), base.clone());
        tasks.push(tokio::spawn(async move {
            let body = report(&id, "hub", &format!("opp{}", i % 6));
            t.call(
                Method::POST,
                &format!("{base}/results"),
                Some(&key),
                Some(body),
            )
            .await
            .status
        }));
    }
    for task in tasks {
        assert_eq!(task.await.unwrap(), StatusCode::OK);
    }
    let hub = t
        .call(
            Method::GET,
            &format!("{base}/ratings/hub"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(hub.body["games"], 24, "{}", hub.body);
    let mut opponent_games = 0;
    for o in 0..6 {
        let opp = t
            .call(
                Method::GET,
                &format!("{base}/ratings/opp{o}"),
                Some(&key),
                None,
            )
            .await;
        opponent_games += opp.body["games"].as_i64().unwrap();
    }
    assert_eq!(opponent_games, 24);
}

/// A ticket in a mode with ratings may omit `mmr`: the stored (or initial)
/// rating stands in; without ratings the same ticket is `MMR_REQUIRED`.
async fn tickets_use_stored_ratings(backend: Backend) {
    let t = TestApp::new(backend).await;
    let (p, key, base) = rated_mode(&t).await;
    let put = t
        .call(
            Method::PUT,
            &format!("{base}/ratings/ana"),
            Some(&key),
            Some(json!({"rating": 2100, "deviation": 60, "volatility": 0.05})),
        )
        .await;
    assert_eq!(put.status, StatusCode::OK);
    // A rating past the mode's maxMmr (3000) searches at its edge: the
    // ticket is not refused for an `mmr` the studio never sent.
    let put = t
        .call(
            Method::PUT,
            &format!("{base}/ratings/climber"),
            Some(&key),
            Some(json!({"rating": 5000, "deviation": 60, "volatility": 0.05})),
        )
        .await;
    assert_eq!(put.status, StatusCode::OK);
    for player in ["ana", "never-rated", "climber"] {
        let ticket = t
            .call(
                Method::POST,
                &format!("/v1/projects/{p}/tickets"),
                Some(&key),
                Some(json!({"gameMode": "ranked", "playerId": player})),
            )
            .await;
        assert_eq!(
            ticket.status,
            StatusCode::CREATED,
            "{player}: {}",
            ticket.body
        );
    }
    let plain = t
        .call(
            Method::POST,
            &format!("/v1/projects/{p}/game-modes"),
            Some(&key),
            Some(mode("casual")),
        )
        .await;
    assert_eq!(plain.status, StatusCode::CREATED);
    let refused = t
        .call(
            Method::POST,
            &format!("/v1/projects/{p}/tickets"),
            Some(&key),
            Some(json!({"gameMode": "casual", "playerId": "bob"})),
        )
        .await;
    refused.assert_problem(StatusCode::UNPROCESSABLE_ENTITY, "MMR_REQUIRED");
}

on_both!(tickets_use_stored_ratings);

/// Only a match that was played is rated: a proposal (still being
/// answered, or cancelled), a released and an unassigned match are `422`
/// on `matchId`, and so is a match of a deleted mode once a mode of the
/// same name is created again; none of them rates anyone.
async fn unplayed_matches_and_deleted_modes_are_not_rated(backend: Backend) {
    let t = TestApp::new(backend).await;
    let (p, key, base) = rated_mode(&t).await;
    let post = |body: Value| {
        let (t, key, base) = (&t, &key, &base);
        async move {
            t.call(
                Method::POST,
                &format!("{base}/results"),
                Some(key),
                Some(body),
            )
            .await
        }
    };
    for status in ["proposed", "cancelled", "released", "unassigned"] {
        let id = a_match_in_status(&t, &p, "ranked", &[&["a"], &["b"]], status).await;
        let answer = post(report(&id, "a", "b")).await;
        answer.assert_problem(StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION_ERROR");
        assert_eq!(
            answer.body["errors"][0]["field"], "matchId",
            "{}",
            answer.body
        );
        let message = answer.body["errors"][0]["message"].as_str().unwrap();
        assert!(
            message.contains(&format!("is {status}, not made")),
            "{message}"
        );
    }

    let old = a_match(&t, &p, "ranked", &[&["a"], &["b"]]).await;
    let deleted = t.call(Method::DELETE, &base, Some(&key), None).await;
    assert_eq!(deleted.status, StatusCode::NO_CONTENT, "{}", deleted.body);
    // The new mode's creation time is after the old match's.
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    let mut again = mode("ranked");
    again["ratings"] = json!({"enabled": true});
    let created = t
        .call(
            Method::POST,
            &format!("/v1/projects/{p}/game-modes"),
            Some(&key),
            Some(again),
        )
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    let answer = post(report(&old, "a", "b")).await;
    answer.assert_problem(StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION_ERROR");
    let message = answer.body["errors"][0]["message"].as_str().unwrap();
    assert!(message.contains("deleted game mode"), "{message}");
    // A match of the new mode is rated.
    let new = a_match(&t, &p, "ranked", &[&["a"], &["b"]]).await;
    let rated = post(report(&new, "a", "b")).await;
    assert_eq!(rated.status, StatusCode::OK, "{}", rated.body);
    let rating = t
        .call(Method::GET, &format!("{base}/ratings/a"), Some(&key), None)
        .await;
    assert_eq!(rating.body["games"], 1, "{}", rating.body);
}

on_both!(unplayed_matches_and_deleted_modes_are_not_rated);

/// A match whose result was reported was played: its release answers
/// `409 RELEASE_WINDOW_CLOSED` and leaves it made, its ratings applied
/// (docs/acceptance.md, "Releasing a match"); an unreported one of the
/// same mode is released.
async fn a_reported_match_is_not_released(backend: Backend) {
    let t = TestApp::new(backend).await;
    let (p, key, base) = rated_mode(&t).await;
    let played = a_match(&t, &p, "ranked", &[&["a"], &["b"]]).await;
    let reported = t
        .call(
            Method::POST,
            &format!("{base}/results"),
            Some(&key),
            Some(report(&played, "a", "b")),
        )
        .await;
    assert_eq!(reported.status, StatusCode::OK, "{}", reported.body);
    let release = |match_id: String| {
        let (t, key, p) = (&t, &key, &p);
        async move {
            t.call(
                Method::POST,
                &format!("/v1/projects/{p}/matches/{match_id}/release"),
                Some(key),
                None,
            )
            .await
        }
    };
    let refused = release(played.clone()).await;
    refused.assert_problem(StatusCode::CONFLICT, "RELEASE_WINDOW_CLOSED");
    assert_eq!(
        matches::get(&t.db, &p, &played).await.unwrap().status,
        "made"
    );
    let unplayed = a_match(&t, &p, "ranked", &[&["c"], &["d"]]).await;
    let released = release(unplayed).await;
    assert_eq!(released.status, StatusCode::OK, "{}", released.body);
    assert_eq!(released.body["status"], "released", "{}", released.body);
}

on_both!(a_reported_match_is_not_released);
