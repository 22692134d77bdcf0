//! Matches, their deliveries (every attempt), redeliver, the webhook test
//! route and the mode stats, over rows as the worker writes them.

use crate::common::{mode, Backend, TestApp};
use crate::on_both;
use axum::http::{Method, StatusCode};
use chrono::{Duration, Utc};
use matchplane_store::entities::{match_, mode_cycle_stat, webhook_attempt, webhook_delivery};
use matchplane_store::repos::deliveries::{self, AfterAttempt};
use matchplane_store::repos::{cycle_stats, matches};
use serde_json::json;
use std::sync::{Arc, Mutex};

/// A receiver on loopback answering 200 and keeping the headers it got.
async fn receiver() -> (String, Arc<Mutex<Vec<axum::http::HeaderMap>>>) {
    let seen: Arc<Mutex<Vec<axum::http::HeaderMap>>> = Arc::default();
    let kept = Arc::clone(&seen);
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move |headers: axum::http::HeaderMap| {
            let kept = Arc::clone(&kept);
            async move {
                kept.lock().unwrap().push(headers);
                "thanks"
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://{addr}/hook"), seen)
}

async fn matches_deliveries_test_and_stats(backend: Backend) {
    let t = TestApp::with_config(backend, true).await;
    let p = t.project("pro").await;
    let (_, key) = t.key(&p).await;
    let (url, seen) = receiver().await;
    let mut body = mode("duel");
    body["webhook"]["url"] = json!(url);
    let created = t
        .call(
            Method::POST,
            &format!("/v1/projects/{p}/game-modes"),
            Some(&key),
            Some(body),
        )
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);

    let now = Utc::now();
    let match_id = format!("mat_{}", ulid::Ulid::new());
    let teams = json!([{ "index": 0, "players": [{ "playerId": "a", "ticketId": "tkt_a",
        "partyId": null, "mmr": 1500.0, "pingMs": null, "waitSeconds": 4.0 }], "meanMmr": 1500.0 },
        { "index": 1, "players": [{ "playerId": "b", "ticketId": "tkt_b",
        "partyId": null, "mmr": 1510.0, "pingMs": null, "waitSeconds": 8.0 }], "meanMmr": 1510.0 }]);
    matches::insert_if_absent(
        &t.db,
        vec![match_::Model {
            id: match_id.clone(),
            project_id: p.clone(),
            game_mode: "duel".into(),
            game_mode_version: 1,
            teams,
            quality: json!({ "mmrSpread": 10.0, "teamImbalance": 10.0 }),
            created_at: now,
            match_shape: None,
            seats_open: None,
            region: None,
            status: "made".into(),
            answers: None,
            // A proposal its players accepted 3 s after it was made.
            made_at: Some(now + Duration::seconds(3)),
            assignment: None,
            attributes: None,
        }],
    )
    .await
    .unwrap();
    let delivery_id = format!("dlv_{}", ulid::Ulid::new());
    deliveries::queue_if_absent(
        &t.db,
        vec![webhook_delivery::Model {
            id: delivery_id.clone(),
            project_id: p.clone(),
            game_mode: "duel".into(),
            match_id: Some(match_id.clone()),
            event_type: "match.made".into(),
            payload: "{}".into(),
            status: "pending".into(),
            attempt_count: 0,
            next_attempt_at: Some(now),
            locked_until: None,
            lock_token: None,
            attempts_before_run: 0,
            created_at: now,
            updated_at: now,
        }],
    )
    .await
    .unwrap();
    for (n, status) in [(1, 500), (2, 500), (3, 200)] {
        let after = if status == 200 {
            AfterAttempt::Finished("succeeded")
        } else {
            AfterAttempt::RetryAt(now + Duration::seconds(n.into()))
        };
        deliveries::record_attempt(
            &t.db,
            webhook_attempt::Model {
                id: format!("att_{}", ulid::Ulid::new()),
                delivery_id: delivery_id.clone(),
                project_id: p.clone(),
                attempted_at: now + Duration::seconds(n.into()),
                status_code: Some(status),
                latency_ms: 12,
                error: None,
                response_body: Some(format!("answer {n}")),
            },
            n,
            after,
            now,
        )
        .await
        .unwrap();
    }

    let base = format!("/v1/projects/{p}/matches");
    let listed = t
        .call(
            Method::GET,
            &format!("{base}?gameMode=duel&limit=10"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(listed.status, StatusCode::OK, "{}", listed.body);
    assert_eq!(listed.body["items"][0]["matchId"], match_id.as_str());
    assert!(listed.body.get("nextCursor").is_none());
    let bad = t
        .call(Method::GET, &format!("{base}?limit=0"), Some(&key), None)
        .await;
    bad.assert_problem(StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION_ERROR");
    let one = t
        .call(Method::GET, &format!("{base}/{match_id}"), Some(&key), None)
        .await;
    assert_eq!(one.body["teams"][1]["players"][0]["playerId"], "b");
    assert_eq!(
        one.body["madeAt"],
        matchplane_matchmaker::timestamp::format(&(now + Duration::seconds(3))),
        "{}",
        one.body
    );

    let other = t.project("pro").await;
    let (_, other_key) = t.key(&other).await;
    let hidden = t
        .call(
            Method::GET,
            &format!("/v1/projects/{other}/matches/{match_id}"),
            Some(&other_key),
            None,
        )
        .await;
    hidden.assert_problem(StatusCode::NOT_FOUND, "NOT_FOUND");

    let logged = t
        .call(
            Method::GET,
            &format!("{base}/{match_id}/deliveries"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(logged.status, StatusCode::OK, "{}", logged.body);
    assert_eq!(logged.body[0]["status"], "succeeded");
    let codes: Vec<i64> = logged.body[0]["attempts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["statusCode"].as_i64().unwrap())
        .collect();
    assert_eq!(codes, [500, 500, 200]);
    assert_eq!(logged.body[0]["attempts"][0]["responseBody"], "answer 1");

    let again = t
        .call(
            Method::POST,
            &format!("{base}/{match_id}/deliveries/redeliver"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(again.status, StatusCode::ACCEPTED, "{}", again.body);
    assert_eq!(again.body[0]["status"], "pending");
    assert_eq!(again.body[0]["attempts"].as_array().unwrap().len(), 3);
    assert_eq!(
        again.body[0]["attemptCount"], 3,
        "the count agrees with the attempts listed"
    );

    // A match made with no delivery queued (its webhook off, or filtered
    // out) has nothing to send again, and the answer says so: the match
    // itself exists.
    let quiet_id = format!("mat_{}", ulid::Ulid::new());
    let mut quiet = matches::get(&t.db, &p, &match_id).await.unwrap();
    quiet.id = quiet_id.clone();
    // Outside the mode's stats read below.
    quiet.created_at = now - Duration::hours(2);
    matches::insert_if_absent(&t.db, vec![quiet]).await.unwrap();
    let nothing = t
        .call(
            Method::POST,
            &format!("{base}/{quiet_id}/deliveries/redeliver"),
            Some(&key),
            None,
        )
        .await;
    nothing.assert_problem(StatusCode::NOT_FOUND, "NOT_FOUND");
    let detail = nothing.body["detail"].as_str().unwrap();
    assert!(detail.contains("no webhook delivery"), "{detail}");

    let tested = t
        .call(
            Method::POST,
            &format!("/v1/projects/{p}/game-modes/duel/webhook/test"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(tested.status, StatusCode::OK, "{}", tested.body);
    assert_eq!(tested.body["delivered"], true);
    assert_eq!(tested.body["statusCode"], 200);
    assert_eq!(tested.body["responseBody"], "thanks");
    let headers = seen.lock().unwrap().clone();
    assert_eq!(headers.len(), 1);
    assert!(headers[0]["webhook-signature"]
        .to_str()
        .unwrap()
        .starts_with("v1,"));
    assert!(headers[0]["webhook-id"]
        .to_str()
        .unwrap()
        .starts_with("tst_"));

    // The test attempt is logged like every other (docs/webhook-events.md), under the mode.
    let logged = t
        .call(
            Method::GET,
            &format!("/v1/projects/{p}/game-modes/duel/deliveries?eventType=webhook.test"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(logged.status, StatusCode::OK, "{}", logged.body);
    let logged = logged.body.as_array().unwrap().clone();
    assert_eq!(logged.len(), 1, "{logged:?}");
    assert_eq!(logged[0]["id"], tested.body["deliveryId"]);
    assert_eq!(logged[0]["eventType"], "webhook.test");
    assert_eq!(logged[0]["status"], "succeeded");
    assert_eq!(logged[0]["attemptCount"], 1);
    assert!(logged[0]["nextAttemptAt"].is_null());
    assert!(logged[0].get("matchId").is_none());
    let attempts = logged[0]["attempts"].as_array().unwrap();
    assert_eq!(attempts.len(), 1);
    assert_eq!(attempts[0]["statusCode"], 200);
    assert_eq!(attempts[0]["responseBody"], "thanks");
    // Every delivery of the mode, newest first: the test, then the match's.
    let all = t
        .call(
            Method::GET,
            &format!("/v1/projects/{p}/game-modes/duel/deliveries"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(all.status, StatusCode::OK, "{}", all.body);
    let types: Vec<&str> = all
        .body
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["eventType"].as_str().unwrap())
        .collect();
    assert_eq!(types, ["webhook.test", "match.made"]);
    assert_eq!(all.body[1]["matchId"], json!(match_id));
    // Another project sees none of it.
    let other = t.project("pro").await;
    let (_, other_key) = t.key(&other).await;
    let foreign = t
        .call(
            Method::GET,
            &format!("/v1/projects/{p}/game-modes/duel/deliveries"),
            Some(&other_key),
            None,
        )
        .await;
    assert_eq!(foreign.status, StatusCode::NOT_FOUND, "{}", foreign.body);

    cycle_stats::put(
        &t.db,
        mode_cycle_stat::Model {
            project_id: p.clone(),
            game_mode: "duel".into(),
            pool_size: 42,
            candidates: 40,
            matches: 1,
            duration_ms: 3.5,
            ran_at: now,
            pool_summary: None,
            period_seconds: Some(1.0),
        },
    )
    .await
    .unwrap();
    let stats = t
        .call(
            Method::GET,
            &format!("/v1/projects/{p}/game-modes/duel/stats"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(stats.status, StatusCode::OK, "{}", stats.body);
    assert_eq!(stats.body["searchingNow"], 42);
    assert_eq!(stats.body["cyclePeriodSeconds"], 1.0);
    assert!(stats.body["hold"].is_null(), "{}", stats.body);
    assert_eq!(stats.body["candidates"], 40);
    assert_eq!(stats.body["matchesLastMinute"], 1);
    assert_eq!(stats.body["waitSeconds"]["p50"], 4.0);
    assert_eq!(stats.body["waitSeconds"]["p99"], 8.0);
    assert_eq!(stats.body["lastCycleDurationMs"], 3.5);
}

/// A stored match of `p`'s mode `duel`, created `age_seconds` ago.
fn stored_match(p: &str, age_seconds: i64) -> match_::Model {
    let created_at = Utc::now() - Duration::seconds(age_seconds);
    match_::Model {
        id: format!("mat_{}", ulid::Ulid::from_datetime(created_at.into())),
        project_id: p.to_owned(),
        game_mode: "duel".into(),
        game_mode_version: 1,
        teams: json!([]),
        quality: json!({ "mmrSpread": 0.0, "teamImbalance": 0.0 }),
        created_at,
        match_shape: None,
        seats_open: None,
        region: None,
        status: "made".into(),
        answers: None,
        made_at: None,
        assignment: None,
        attributes: None,
    }
}

/// A cursor is a `nextCursor` the list gave (`mat_` and a ULID): one that
/// only starts like a match id is refused as `cursor=garbage` is, never
/// read as page 1.
async fn junk_cursors_are_refused_like_garbage(backend: Backend) {
    let t = TestApp::new(backend).await;
    let p = t.project("pro").await;
    let (_, key) = t.key(&p).await;
    let (older, newer) = (stored_match(&p, 60), stored_match(&p, 0));
    let ids = (older.id.clone(), newer.id.clone());
    matches::insert_if_absent(&t.db, vec![older, newer])
        .await
        .unwrap();
    let list = format!("/v1/projects/{p}/matches?limit=1");
    let page = |cursor: String| {
        let url = format!("{list}&cursor={cursor}");
        let key = key.clone();
        let t = &t;
        async move { t.call(Method::GET, &url, Some(&key), None).await }
    };
    let first = t.call(Method::GET, &list, Some(&key), None).await;
    assert_eq!(first.status, StatusCode::OK, "{}", first.body);
    assert_eq!(first.body["items"][0]["matchId"], ids.1.as_str());
    let next = first.body["nextCursor"].as_str().unwrap().to_owned();
    let second = page(next.clone()).await;
    assert_eq!(second.status, StatusCode::OK, "{}", second.body);
    assert_eq!(second.body["items"][0]["matchId"], ids.0.as_str());
    let garbage = page("garbage".into()).await;
    garbage.assert_problem(StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION_ERROR");
    assert_eq!(garbage.body["errors"][0]["field"], "cursor");
    for junk in [
        "mat_bogus".to_owned(),
        "mat_".to_owned(),
        format!("{next}0"),
        next.to_lowercase(),
        "mat_ZZZZZZZZZZZZZZZZZZZZZZZZZZ".to_owned(),
    ] {
        let refused = page(junk.clone()).await;
        assert_eq!(refused.status, garbage.status, "{junk}: {}", refused.body);
        assert_eq!(refused.body, garbage.body, "{junk}");
    }
}

on_both!(
    matches_deliveries_test_and_stats,
    junk_cursors_are_refused_like_garbage
);
