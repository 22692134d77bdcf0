//! Ratings from reported results (Glicko-2): the API on both databases,
//! and concurrent reports on PostgreSQL.

use crate::common::{mode, Backend, TestApp};
use crate::on_both;
use axum::http::{Method, StatusCode};
use serde_json::{json, Value};

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
    let (_, key, base) = rated_mode(&t).await;
    let first = t
        .call(
            Method::POST,
            &format!("{base}/results"),
            Some(&key),
            Some(report("m1", "a", "b")),
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
            Some(report("m1", "b", "a")),
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
    for bad in [
        json!({"rating": 2100, "deviation": 0, "volatility": 0.05}),
        json!({"rating": 2100, "deviation": 60, "volatility": -1}),
        json!({"rating": "high", "deviation": 60, "volatility": 0.05}),
        json!({"rating": 1.7e308, "deviation": 1e308, "volatility": 1e308}),
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
            Some(report("m1", "a", "b")),
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

on_both!(
    two_new_players_and_a_duplicate_report,
    import_and_validation
);

/// Concurrent reports that share one player lose no update (PostgreSQL).
#[tokio::test]
async fn concurrent_reports_on_overlapping_players_lose_no_update() {
    let t = TestApp::new(Backend::Postgres).await;
    let (_, key, base) = rated_mode(&t).await;
    let t = std::sync::Arc::new(t);
    let mut tasks = Vec::new();
    for i in 0..24 {
        let (t, key, base) = (t.clone(), key.clone(), base.clone());
        tasks.push(tokio::spawn(async move {
            let body = report(&format!("m{i}"), "hub", &format!("opp{}", i % 6));
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
    for player in ["ana", "never-rated"] {
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
