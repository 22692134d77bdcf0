//! `POST …/game-modes/{name}/preview`: a proposed config's cycle over the
//! live pool, next to the current one's, claiming nothing.

use crate::harness::{duel, fast, Pools, TestApp};
use crate::on_both_pools;
use axum::http::{Method, StatusCode};
use matchplane_api::play::unix_now;
use matchplane_store::pool::{ModeKey, Party, Search, SearchState};
use serde_json::json;

on_both_pools!(
    preview_answers_both_cycles_and_claims_nothing,
    preview_validates_like_a_put_and_is_rate_limited
);

async fn fill(t: &TestApp, project: &str) -> ModeKey {
    let mode = ModeKey::new(project, "duel");
    let now = unix_now();
    let duo = Party {
        id: "pty_d".into(),
        members: vec!["d1".into(), "d2".into()],
    };
    let mut searches = vec![
        Search::solo("tkt_a", "a", 1500.0, now - 1.0),
        Search::solo("tkt_b", "b", 1560.0, now - 1.0),
    ];
    for p in ["d1", "d2"] {
        let mut s = Search::solo(format!("tkt_{p}"), p, 1500.0, now - 1.0);
        s.party = Some(duo.clone());
        searches.push(s);
    }
    for s in &searches {
        t.play
            .pool
            .add_search(&mode, s, now + 600.0, None)
            .await
            .unwrap();
    }
    mode
}

async fn preview_answers_both_cycles_and_claims_nothing(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    let (p, key) = t.project("free").await;
    t.mode(&p, &key, duel("duel")).await;
    let mode = fill(&t, &p).await;

    // 2v2 without parties: the duo fails, two solos cannot fill a 2v2.
    let mut proposed = duel("duel");
    proposed["matchShape"] = json!([2, 2]);
    proposed["parties"] = json!({"allowParties": false, "maxSize": 1, "keepTogether": true});
    let path = format!("/v1/projects/{p}/game-modes/duel/preview");
    let a = t
        .call(Method::POST, &path, Some(&key), Some(proposed.clone()))
        .await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    let b = &a.body;
    assert_eq!(b["poolSize"], 4, "{b}");
    assert_eq!(b["truncated"], false, "{b}");
    // Current (1v1, duo split allowed): a and b, and the duo's two.
    assert_eq!(b["current"]["matches"], 2, "{b}");
    assert_eq!(b["current"]["playersMatched"], 4, "{b}");
    assert_eq!(b["current"]["mmrSpread"]["max"], 60.0, "{b}");
    assert_eq!(b["proposed"]["matches"], 0, "{b}");
    assert_eq!(b["proposed"]["failed"]["count"], 2, "{b}");
    assert_eq!(
        b["proposed"]["failed"]["byCode"]["PARTIES_NOT_ENABLED"], 2,
        "{b}"
    );
    assert_eq!(
        b["proposed"]["failed"]["searches"][0]["ticketId"], "tkt_d1",
        "{b}"
    );
    assert_eq!(
        b["waitingReasons"]["NOT_ENOUGH_PLAYERS"],
        json!({"current": 0, "proposed": 2}),
        "{b}"
    );

    // Nothing claimed, nothing failed, the mode unchanged.
    assert_eq!(t.play.pool.snapshot(&mode).await.unwrap().len(), 4);
    for ticket in ["tkt_a", "tkt_d1"] {
        let state = t.play.pool.search_state(&mode, ticket).await.unwrap();
        assert!(matches!(state, Some(SearchState::Live(_))), "{state:?}");
    }
    let got = t
        .call(
            Method::GET,
            &format!("/v1/projects/{p}/game-modes/duel"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(got.body["version"], 1, "{}", got.body);
    assert_eq!(got.body["matchShape"], json!([1, 1]), "{}", got.body);

    // A backend key may preview, as it may read the mode.
    let op = format!("Bearer {}", crate::harness::OPERATOR);
    let made = t
        .call(
            Method::POST,
            &format!("/v1/projects/{p}/keys"),
            Some(&op),
            Some(json!({"name": "game", "scopes": ["backend"]})),
        )
        .await;
    assert_eq!(made.status, StatusCode::CREATED, "{}", made.body);
    let backend = format!("Bearer {}", made.body["key"].as_str().unwrap());
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    let a = t
        .call(Method::POST, &path, Some(&backend), Some(proposed))
        .await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
}

async fn preview_validates_like_a_put_and_is_rate_limited(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    let (p, key) = t.project("free").await;
    t.mode(&p, &key, duel("duel")).await;
    fill(&t, &p).await;
    let path = format!("/v1/projects/{p}/game-modes/duel/preview");

    let mut bad = duel("other");
    bad["matchShape"] = json!([]);
    let a = t
        .call(Method::POST, &path, Some(&key), Some(bad.clone()))
        .await;
    a.assert_problem(StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION_ERROR");
    let put = t
        .call(
            Method::PUT,
            &format!("/v1/projects/{p}/game-modes/duel"),
            Some(&key),
            Some(bad),
        )
        .await;
    assert_eq!(a.body["errors"], put.body["errors"], "the same as a PUT");
    assert!(
        a.body["errors"].as_array().unwrap().len() >= 2,
        "{}",
        a.body
    );

    let missing = format!("/v1/projects/{p}/game-modes/nope/preview");
    let a = t
        .call(Method::POST, &missing, Some(&key), Some(duel("nope")))
        .await;
    a.assert_problem(StatusCode::NOT_FOUND, "GAME_MODE_NOT_FOUND");

    // Two previews a second per project, then 429 with Retry-After.
    let mut limited = None;
    for _ in 0..5 {
        let a = t
            .call(Method::POST, &path, Some(&key), Some(duel("duel")))
            .await;
        if a.status == StatusCode::TOO_MANY_REQUESTS {
            limited = Some(a);
            break;
        }
        assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    }
    let a = limited.expect("the sixth preview within a second is refused");
    a.assert_problem(StatusCode::TOO_MANY_REQUESTS, "RATE_LIMITED");
    // The detail names the limit that was hit, not the request rate.
    let detail = a.body["detail"].as_str().unwrap_or_default();
    assert!(detail.contains("previews and replays"), "{}", a.body);
}
