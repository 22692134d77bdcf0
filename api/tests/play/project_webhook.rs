//! One webhook endpoint for every mode of a project, end to end (docs/webhooks.md,
//! "One endpoint for every mode of a project"): the API, a worker in this
//! process, the pool store and a real receiver on loopback. Two modes with
//! `webhook.useProjectEndpoint` each make a match; both `match.made`
//! webhooks arrive at the project's URL, signed with the project's secret
//! (checked with a plain HMAC, not the server's code), their `gameMode`
//! telling them apart. After a rotation both secrets sign (new first); the
//! endpoint's `eventTypes` keeps other types from being queued at all.

use crate::harness::{Pools, TestApp};
use crate::on_both_pools;
use axum::body::Bytes;
use axum::http::{HeaderMap, Method, StatusCode};
use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use hmac::{Hmac, Mac};
use matchplane_store::entities::webhook_delivery;
use matchplane_store::repos::matches;
use matchplane_worker::{run_worker, WorkerConfig};
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
use serde_json::{json, Value};
use sha2::Sha256;
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

on_both_pools!(
    two_modes_deliver_to_the_project_endpoint,
    event_types_not_sent_are_not_queued,
);

type Seen = Arc<Mutex<Vec<(HeaderMap, Bytes)>>>;

/// A receiver on loopback answering 200 and keeping headers and raw body.
async fn receiver() -> (String, Seen) {
    let seen: Seen = Arc::default();
    let kept = Arc::clone(&seen);
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move |headers: HeaderMap, body: Bytes| {
            let kept = Arc::clone(&kept);
            async move {
                kept.lock().unwrap().push((headers, body));
                "ok"
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://{addr}/hook"), seen)
}

/// `v1,<base64 HMAC-SHA256(key, "<id>.<timestamp>.<body>")>` for `secret`.
fn signature(secret: &str, id: &str, timestamp: &str, body: &[u8]) -> String {
    let key = STANDARD
        .decode(secret.strip_prefix("whsec_").unwrap())
        .unwrap();
    let mut mac = Hmac::<Sha256>::new_from_slice(&key).unwrap();
    mac.update(format!("{id}.{timestamp}.").as_bytes());
    mac.update(body);
    format!("v1,{}", STANDARD.encode(mac.finalize().into_bytes()))
}

/// The signatures of a received webhook, and what each of `secrets` signs
/// it as.
fn signatures(headers: &HeaderMap, body: &[u8], secrets: &[&str]) -> (Vec<String>, Vec<String>) {
    let header = |name: &str| headers[name].to_str().unwrap().to_owned();
    let (id, timestamp) = (header("webhook-id"), header("webhook-timestamp"));
    let sent = header("webhook-signature")
        .split(' ')
        .map(str::to_owned)
        .collect();
    let expected = secrets
        .iter()
        .map(|s| signature(s, &id, &timestamp, body))
        .collect();
    (sent, expected)
}

/// A 1v1 FIFO mode `name` on the project's endpoint, cycling every 0.2 s.
fn on_project(name: &str) -> Value {
    json!({"name": name, "enabled": true, "matchShape": [1, 1],
        "matchmakingCycleDurationSeconds": 0.2, "algorithm": {"type": "fifo"},
        "webhook": {"useProjectEndpoint": true}})
}

fn worker(
    t: &TestApp,
    shutdown: &CancellationToken,
) -> tokio::task::JoinHandle<Result<(), matchplane_worker::WorkerError>> {
    tokio::spawn(run_worker(
        WorkerConfig {
            reconcile_interval: Duration::from_millis(100),
            delivery: matchplane_webhook::DeliveryConfig {
                allow_private: true,
                ..matchplane_webhook::DeliveryConfig::default()
            },
            delivery_poll: Duration::from_millis(50),
            ..WorkerConfig::default()
        },
        t.play.pool.clone(),
        t.play.tickets.clone(),
        t.db.clone(),
        shutdown.clone(),
    ))
}

/// Two players search in `mode` (the worker matches them).
async fn pair(t: &TestApp, p: &str, key: &str, mode: &str) {
    for player in ["a", "b"] {
        let (_, token) = t
            .ticket_ok(
                p,
                key,
                json!({"gameMode": mode, "playerId": format!("{mode}-{player}")}),
            )
            .await;
        assert_eq!(t.rest_search(&token).await.status, StatusCode::ACCEPTED);
    }
}

/// Waits until `seen` holds `n` requests.
async fn received(seen: &Seen, n: usize) -> Vec<(HeaderMap, Bytes)> {
    let until = Instant::now() + Duration::from_secs(20);
    loop {
        let got = seen.lock().unwrap().clone();
        if got.len() >= n {
            return got;
        }
        assert!(
            Instant::now() < until,
            "{} of {n} webhooks arrived",
            got.len()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn two_modes_deliver_to_the_project_endpoint(pools: Pools) {
    let t = TestApp::allowing_private_webhooks(pools, crate::harness::fast()).await;
    let (p, key) = t.project("enterprise").await;
    let (url, seen) = receiver().await;
    let endpoint = format!("/v1/projects/{p}/webhook");
    let set = t
        .call(
            Method::PUT,
            &endpoint,
            Some(&key),
            Some(json!({"url": url})),
        )
        .await;
    assert_eq!(set.status, StatusCode::CREATED, "{}", set.body);
    let first = set.body["secret"].as_str().unwrap().to_owned();
    for mode in ["duel", "brawl"] {
        t.mode(&p, &key, on_project(mode)).await;
    }
    let shutdown = CancellationToken::new();
    let running = worker(&t, &shutdown);
    pair(&t, &p, &key, "duel").await;
    pair(&t, &p, &key, "brawl").await;

    let got = received(&seen, 2).await;
    let mut modes = BTreeSet::new();
    for (headers, body) in &got {
        let (sent, expected) = signatures(headers, body, &[&first]);
        assert_eq!(sent, expected, "signed with the project's secret alone");
        let event: Value = serde_json::from_slice(body).unwrap();
        assert_eq!(event["type"], "match.made", "{event}");
        assert_eq!(event["projectId"], p.as_str());
        assert_eq!(
            headers["webhook-id"].to_str().unwrap(),
            event["matchId"].as_str().unwrap()
        );
        modes.insert(event["gameMode"].as_str().unwrap().to_owned());
    }
    assert_eq!(
        modes,
        BTreeSet::from(["brawl".to_owned(), "duel".to_owned()])
    );

    // Rotation: the new secret signs first, the old one beside it for 24 h,
    // on a real match of either mode.
    let rotated = t
        .call(
            Method::POST,
            &format!("{endpoint}/rotate-secret"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(rotated.status, StatusCode::OK, "{}", rotated.body);
    let second = rotated.body["secret"].as_str().unwrap().to_owned();
    assert_ne!(first, second);
    pair(&t, &p, &key, "duel").await;
    let got = received(&seen, 3).await;
    let (headers, body) = &got[2];
    let (sent, expected) = signatures(headers, body, &[&second, &first]);
    assert_eq!(sent, expected, "new secret first, then the rotated-out one");

    // The test event of a mode on the endpoint goes there too, signed alike.
    let tested = t
        .call(
            Method::POST,
            &format!("/v1/projects/{p}/game-modes/brawl/webhook/test"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(tested.status, StatusCode::OK, "{}", tested.body);
    assert_eq!(tested.body["delivered"], true, "{}", tested.body);
    let got = received(&seen, 4).await;
    let (headers, body) = &got[3];
    let (sent, expected) = signatures(headers, body, &[&second, &first]);
    assert_eq!(sent, expected);
    let event: Value = serde_json::from_slice(body).unwrap();
    assert_eq!(event["type"], "webhook.test");
    assert_eq!(event["gameMode"], "brawl");

    // The endpoint's health: delivered, not failing.
    let read = t.call(Method::GET, &endpoint, Some(&key), None).await;
    assert_eq!(read.status, StatusCode::OK, "{}", read.body);
    assert_eq!(read.body["status"]["failing"], false, "{}", read.body);
    assert!(
        read.body["status"]["lastSuccessAt"].is_string(),
        "{}",
        read.body
    );
    shutdown.cancel();
    running.await.unwrap().unwrap();
}

/// The project's deliveries of mode `mode`, once its `n`-th match is
/// stored (the match and its delivery are stored in one transaction).
async fn deliveries_after_match(t: &TestApp, p: &str, mode: &str, n: usize) -> usize {
    let until = Instant::now() + Duration::from_secs(20);
    loop {
        let stored = matches::list(&t.db, p, None, None, 50).await.unwrap();
        if stored.iter().filter(|m| m.game_mode == mode).count() >= n {
            break;
        }
        assert!(Instant::now() < until, "match {n} of {mode} never stored");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    webhook_delivery::Entity::find()
        .filter(webhook_delivery::Column::ProjectId.eq(p))
        .filter(webhook_delivery::Column::GameMode.eq(mode))
        .all(&t.db)
        .await
        .unwrap()
        .len()
}

async fn event_types_not_sent_are_not_queued(pools: Pools) {
    let t = TestApp::allowing_private_webhooks(pools, crate::harness::fast()).await;
    let (p, key) = t.project("enterprise").await;
    let (url, seen) = receiver().await;
    let endpoint = format!("/v1/projects/{p}/webhook");
    let set = t
        .call(
            Method::PUT,
            &endpoint,
            Some(&key),
            Some(json!({"url": url, "eventTypes": ["match.backfilled"]})),
        )
        .await;
    assert_eq!(set.status, StatusCode::CREATED, "{}", set.body);
    t.mode(&p, &key, on_project("duel")).await;
    let shutdown = CancellationToken::new();
    let running = worker(&t, &shutdown);

    // match.made is not among the endpoint's types: nothing is queued.
    pair(&t, &p, &key, "duel").await;
    assert_eq!(deliveries_after_match(&t, &p, "duel", 1).await, 0);

    // Once it is, the next match is delivered.
    let changed = t
        .call(
            Method::PUT,
            &endpoint,
            Some(&key),
            Some(json!({"url": url, "eventTypes": ["match.made", "match.backfilled"]})),
        )
        .await;
    assert_eq!(changed.status, StatusCode::OK, "{}", changed.body);
    pair(&t, &p, &key, "duel").await;
    assert_eq!(deliveries_after_match(&t, &p, "duel", 2).await, 1);
    let got = received(&seen, 1).await;
    let event: Value = serde_json::from_slice(&got[0].1).unwrap();
    assert_eq!(event["gameMode"], "duel");
    assert_eq!(
        seen.lock().unwrap().len(),
        1,
        "the first match was never sent"
    );
    shutdown.cancel();
    running.await.unwrap().unwrap();
}
