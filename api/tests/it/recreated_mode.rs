//! A mode created again under a deleted mode's name is a new mode
//! (docs/game-modes.md, "Changing a mode"): the deleted mode's matches, which
//! stay stored, are not its own. Their webhook deliveries are not sent to
//! the new mode's URL nor listed under it, they are not redelivered, not
//! assigned, and released within the deleted mode's window only
//! (docs/webhooks.md, "A deleted mode"). Over rows as the worker writes them,
//! with the worker's delivery loop sending.

use crate::common::{mode, Backend, TestApp};
use crate::on_both;
use axum::http::{Method, StatusCode};
use chrono::{DateTime, Duration, Utc};
use matchplane_store::entities::{match_, webhook_delivery};
use matchplane_store::repos::{deliveries, matches};
use matchplane_webhook::{Deliverer, DeliveryConfig, Dispatcher, EndpointLimits, Schedule};
use matchplane_worker::deliveries::DeliveryWorker;
use serde_json::json;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// A receiver on loopback answering `status`; returns its URL and how many
/// requests it got.
async fn receiver(status: u16) -> (String, Arc<AtomicUsize>) {
    let seen = Arc::new(AtomicUsize::new(0));
    let kept = Arc::clone(&seen);
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move || {
            let kept = Arc::clone(&kept);
            async move {
                kept.fetch_add(1, Ordering::SeqCst);
                StatusCode::from_u16(status).unwrap()
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://{addr}/hook"), seen)
}

/// A made 1v1 match of mode `rc`, as the worker stores it.
async fn store_match(t: &TestApp, p: &str, at: DateTime<Utc>) -> String {
    let id = format!("mat_{}", ulid::Ulid::new());
    let teams = json!([{ "index": 0, "players": [{ "playerId": "a", "ticketId": format!("tkt_a{id}"),
        "partyId": null, "mmr": 1500.0, "pingMs": null, "waitSeconds": 4.0 }], "meanMmr": 1500.0 },
        { "index": 1, "players": [{ "playerId": "b", "ticketId": format!("tkt_b{id}"),
        "partyId": null, "mmr": 1510.0, "pingMs": null, "waitSeconds": 8.0 }], "meanMmr": 1510.0 }]);
    let row = match_::Model {
        id: id.clone(),
        project_id: p.to_owned(),
        game_mode: "rc".into(),
        game_mode_version: 1,
        teams,
        quality: json!({ "mmrSpread": 10.0, "teamImbalance": 10.0 }),
        created_at: at,
        match_shape: None,
        seats_open: None,
        region: None,
        status: "made".into(),
        answers: None,
        made_at: None,
        assignment: None,
        attributes: None,
    };
    matches::insert_if_absent(&t.db, vec![row]).await.unwrap();
    id
}

/// Queues `match_id`'s `match.made` delivery, created at `at` and due now.
async fn queue(t: &TestApp, p: &str, match_id: &str, at: DateTime<Utc>) -> String {
    let id = format!("dlv_{}", ulid::Ulid::new());
    let row = webhook_delivery::Model {
        id: id.clone(),
        project_id: p.to_owned(),
        game_mode: "rc".into(),
        match_id: Some(match_id.to_owned()),
        event_type: "match.made".into(),
        payload: "{}".into(),
        status: "pending".into(),
        attempt_count: 0,
        next_attempt_at: Some(Utc::now()),
        locked_until: None,
        lock_token: None,
        attempts_before_run: 0,
        created_at: at,
        updated_at: at,
    };
    deliveries::queue_if_absent(&t.db, vec![row]).await.unwrap();
    id
}

/// Creates mode `rc` with its webhook at `url` and `extra` fields.
async fn create_rc(t: &TestApp, p: &str, key: &str, url: &str, extra: serde_json::Value) {
    let mut body = mode("rc");
    body["webhook"]["url"] = json!(url);
    for (field, value) in extra.as_object().unwrap() {
        body[field] = value.clone();
    }
    let created = t
        .call(
            Method::POST,
            &format!("/v1/projects/{p}/game-modes"),
            Some(key),
            Some(body),
        )
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
}

/// Runs the worker's delivery loop until none of `ids` is pending.
async fn deliver(t: &TestApp, p: &str, ids: &[&str]) {
    let deliverer = Deliverer::new(DeliveryConfig {
        allow_private: true,
        ..DeliveryConfig::default()
    })
    .unwrap();
    let dispatcher = Dispatcher::new(
        deliverer,
        Schedule::scaled(0.01).unwrap(),
        EndpointLimits::default(),
    );
    let worker = DeliveryWorker::new(
        t.db.clone(),
        Arc::new(dispatcher),
        std::time::Duration::from_secs(30),
    );
    let shutdown = tokio_util::sync::CancellationToken::new();
    let running = {
        let shutdown = shutdown.clone();
        tokio::spawn(async move {
            worker
                .run(4, std::time::Duration::from_millis(20), shutdown)
                .await;
        })
    };
    for _ in 0..500 {
        let rows = deliveries::scoped(p).all(&t.db).await.unwrap();
        let pending = rows
            .iter()
            .any(|d| ids.contains(&d.id.as_str()) && d.status == "pending");
        if !pending {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    shutdown.cancel();
    running.await.unwrap();
}

async fn a_deleted_modes_deliveries_never_reach_the_new_mode(backend: Backend) {
    let t = TestApp::with_config(backend, true).await;
    let p = t.project("pro").await;
    let (_, key) = t.key(&p).await;
    let (old_url, old_seen) = receiver(503).await;
    create_rc(&t, &p, &key, &old_url, json!({})).await;
    // A match of the first `rc`, its delivery pending (retrying), and one
    // claimed before the delete whose delivery is queued only after the
    // mode was created again.
    let made = Utc::now() - Duration::seconds(5);
    let old = store_match(&t, &p, made).await;
    let old_delivery = queue(&t, &p, &old, made).await;
    let late = store_match(&t, &p, made).await;

    let deleted = t
        .call(
            Method::DELETE,
            &format!("/v1/projects/{p}/game-modes/rc"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(deleted.status, StatusCode::NO_CONTENT, "{}", deleted.body);
    let (new_url, new_seen) = receiver(200).await;
    create_rc(&t, &p, &key, &new_url, json!({})).await;
    let late_delivery = queue(&t, &p, &late, Utc::now()).await;
    // The new mode's own match, made after it was created.
    let own = store_match(&t, &p, Utc::now()).await;
    let own_delivery = queue(&t, &p, &own, Utc::now()).await;

    deliver(&t, &p, &[&old_delivery, &late_delivery, &own_delivery]).await;
    assert_eq!(old_seen.load(Ordering::SeqCst), 0);
    assert_eq!(
        new_seen.load(Ordering::SeqCst),
        1,
        "only the new mode's own match is sent to its URL"
    );
    for (match_id, status) in [(&old, "failed"), (&late, "failed"), (&own, "succeeded")] {
        let logged = t
            .call(
                Method::GET,
                &format!("/v1/projects/{p}/matches/{match_id}/deliveries"),
                Some(&key),
                None,
            )
            .await;
        assert_eq!(logged.body[0]["status"], status, "{}", logged.body);
        if status == "failed" {
            let error = logged.body[0]["attempts"][0]["error"].as_str().unwrap();
            assert!(
                error.contains("the game mode has no enabled webhook any more"),
                "{error}"
            );
        }
    }

    // The new mode lists its own deliveries only.
    let listed = t
        .call(
            Method::GET,
            &format!("/v1/projects/{p}/game-modes/rc/deliveries"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(listed.status, StatusCode::OK, "{}", listed.body);
    let ids: Vec<&str> = listed
        .body
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["matchId"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [own.as_str()]);

    // A deleted mode's match is not sent again; the new mode's is.
    for match_id in [&old, &late] {
        let again = t
            .call(
                Method::POST,
                &format!("/v1/projects/{p}/matches/{match_id}/deliveries/redeliver"),
                Some(&key),
                None,
            )
            .await;
        again.assert_problem(StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION_ERROR");
        assert_eq!(
            again.body["errors"][0]["field"], "matchId",
            "{}",
            again.body
        );
    }
    let again = t
        .call(
            Method::POST,
            &format!("/v1/projects/{p}/matches/{own}/deliveries/redeliver"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(again.status, StatusCode::ACCEPTED, "{}", again.body);
    deliver(&t, &p, &[&old_delivery, &late_delivery, &own_delivery]).await;
    assert_eq!(new_seen.load(Ordering::SeqCst), 2);
    assert_eq!(old_seen.load(Ordering::SeqCst), 0);
}

async fn a_deleted_modes_match_is_neither_assigned_nor_released_by_the_new_mode(backend: Backend) {
    let t = TestApp::with_config(backend, true).await;
    let p = t.project("pro").await;
    let (_, key) = t.key(&p).await;
    let (url, _) = receiver(200).await;
    create_rc(&t, &p, &key, &url, json!({})).await;
    // Made 200 s ago: past the 120 s release window of the first `rc`,
    // within the 600 s of the new one.
    let old = store_match(&t, &p, Utc::now() - Duration::seconds(200)).await;
    let deleted = t
        .call(
            Method::DELETE,
            &format!("/v1/projects/{p}/game-modes/rc"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(deleted.status, StatusCode::NO_CONTENT, "{}", deleted.body);
    create_rc(
        &t,
        &p,
        &key,
        &url,
        json!({"assignment": {"waitSeconds": 600}}),
    )
    .await;

    let assigned = t
        .call(
            Method::POST,
            &format!("/v1/projects/{p}/matches/{old}/assignment"),
            Some(&key),
            Some(json!({"connection": "203.0.113.7:7777"})),
        )
        .await;
    assigned.assert_problem(StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION_ERROR");
    assert_eq!(assigned.body["errors"][0]["field"], "matchId");
    let released = t
        .call(
            Method::POST,
            &format!("/v1/projects/{p}/matches/{old}/release"),
            Some(&key),
            None,
        )
        .await;
    released.assert_problem(StatusCode::CONFLICT, "RELEASE_WINDOW_CLOSED");
    // Deleting the new mode releases its own matches waiting for their
    // assignment, never the deleted mode's, which were played.
    let deleted = t
        .call(
            Method::DELETE,
            &format!("/v1/projects/{p}/game-modes/rc"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(deleted.status, StatusCode::NO_CONTENT, "{}", deleted.body);
    assert_eq!(matches::get(&t.db, &p, &old).await.unwrap().status, "made");
}

on_both!(
    a_deleted_modes_deliveries_never_reach_the_new_mode,
    a_deleted_modes_match_is_neither_assigned_nor_released_by_the_new_mode,
);
