//! Role waits (docs/rules.md, "Role waits"): after role-queue matches in
//! real worker cycles, the stats and each stats history bucket carry
//! `roles` (players matched per role seat and their waits), and a waiting
//! ticket's status (REST poll, studio view, WebSocket `status`) carries
//! `roleWaits` for the roles it listed. Modes without `composition` carry
//! neither.

use crate::harness::{duel, fast, Pools, TestApp};
use crate::on_both_pools;
use axum::http::{Method, StatusCode};
use futures::StreamExt;
use matchplane_api::play::unix_now;
use matchplane_store::pool::{ModeKey, Search};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::time::Duration;

on_both_pools!(role_waits_show_in_stats_history_and_waiting_statuses);

/// A `[2, 2]` mode whose teams have one tank and one damage seat (after
/// 10 minutes, one tank and one support seat).
fn role_mode(name: &str) -> Value {
    let mut mode = duel(name);
    mode["matchShape"] = json!([2, 2]);
    mode["attributes"] =
        json!({"roles": {"type": "stringSet", "values": ["tank", "damage", "support"]}});
    mode["composition"] = json!({"attribute": "roles", "perTeam": {"tank": 1, "damage": 1},
        "relax": [{"afterSeconds": 600, "perTeam": {"tank": 1, "support": 1}}]});
    mode
}

/// `p` lies in `range` (the histogram estimate of a wait).
fn within(v: &Value, range: std::ops::RangeInclusive<f64>) -> bool {
    v.as_f64().is_some_and(|p| range.contains(&p))
}

async fn role_waits_show_in_stats_history_and_waiting_statuses(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    let (p, key) = t.project("free").await;
    t.mode(&p, &key, role_mode("roles")).await;
    t.mode(&p, &key, duel("duel")).await;
    // Two tanks queued 18 s ago, two damage players 165 s ago (inside the
    // wait histogram's (15, 20] and (150, 180] buckets): one match.
    let mode = ModeKey::new(&p, "roles");
    let now = unix_now();
    for (ticket, role, ago) in [
        ("tkt_t1", "tank", 18.0),
        ("tkt_t2", "tank", 18.0),
        ("tkt_d1", "damage", 165.0),
        ("tkt_d2", "damage", 165.0),
    ] {
        let mut search = Search::solo(ticket, ticket, 1500.0, now - ago);
        search.attributes =
            std::sync::Arc::new(serde_json::from_value(json!({ "roles": [role] })).unwrap());
        t.play
            .pool
            .add_search(&mode, &search, now + 600.0, None)
            .await
            .unwrap();
    }
    let config = matchplane_worker::modes::refresh(&t.db, &mode, None)
        .await
        .unwrap()
        .expect("the mode exists");
    let token = t
        .play
        .pool
        .acquire_lease(&mode, "w", Duration::from_secs(30))
        .await
        .unwrap()
        .unwrap();
    let ticker = matchplane_worker::tick::Ticker {
        pool: t.play.pool.as_ref(),
        db: &t.db,
        claim_concurrency: 16,
        expire_batch: 100,
        ends: None,
        lapses: None,
        period: None,
        carried: None,
    };
    let (_, report) = ticker
        .tick(&mode, &config, token, chrono::Utc::now())
        .await
        .unwrap();
    assert_eq!(report.matches, 1, "{report:?}");

    // The stats: every role of the composition, support never matched.
    let stats = t
        .call(
            Method::GET,
            &format!("/v1/projects/{p}/game-modes/roles/stats"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(stats.status, StatusCode::OK, "{}", stats.body);
    let roles = &stats.body["roles"];
    assert_eq!(roles["tank"]["matched"], 2, "{}", stats.body);
    assert_eq!(roles["damage"]["matched"], 2, "{}", stats.body);
    assert!(
        within(&roles["tank"]["waitSeconds"]["p50"], 15.0..=20.0),
        "{}",
        stats.body
    );
    assert!(
        within(&roles["damage"]["waitSeconds"]["p50"], 150.0..=180.0),
        "{}",
        stats.body
    );
    assert!(
        within(&roles["damage"]["waitSeconds"]["p90"], 150.0..=180.0),
        "{}",
        stats.body
    );
    assert_eq!(
        roles["support"],
        json!({"matched": 0, "waitSeconds": null}),
        "{}",
        stats.body
    );

    // The history: the buckets' per-role counts add up to the match's.
    let history = t
        .call(
            Method::GET,
            &format!("/v1/projects/{p}/game-modes/roles/stats/history"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(history.status, StatusCode::OK, "{}", history.body);
    let mut matched: BTreeMap<String, u64> = BTreeMap::new();
    for bucket in history.body["buckets"].as_array().unwrap() {
        for (role, figure) in bucket["roles"].as_object().into_iter().flatten() {
            *matched.entry(role.clone()).or_insert(0) += figure["matched"].as_u64().unwrap();
            assert!(figure["waitSeconds"]["p50"].is_number(), "{}", history.body);
        }
    }
    let expected: BTreeMap<String, u64> = [("damage".into(), 2), ("tank".into(), 2)].into();
    assert_eq!(matched, expected, "{}", history.body);

    // A waiting ticket listing tank and support: the tank median only
    // (nobody was matched as support), in the REST poll and the studio's
    // view.
    let body = json!({"gameMode": "roles", "playerId": "w",
        "attributes": {"mmr": 1500, "roles": ["tank", "support"]}});
    let (ticket, token) = t.ticket_ok(&p, &key, body).await;
    assert_eq!(t.rest_search(&token).await.status, StatusCode::ACCEPTED);
    let polled = t
        .call(
            Method::GET,
            &format!("/v1/searches/{ticket}"),
            Some(&format!("Ticket {token}")),
            None,
        )
        .await;
    assert_eq!(polled.status, StatusCode::OK, "{}", polled.body);
    assert_eq!(polled.body["status"], "searching", "{}", polled.body);
    let waits = polled.body["roleWaits"].as_object().unwrap();
    assert_eq!(
        waits.keys().collect::<Vec<_>>(),
        ["tank"],
        "{}",
        polled.body
    );
    assert!(within(&waits["tank"], 15.0..=20.0), "{}", polled.body);
    let studio = t.status(&p, &key, &ticket).await;
    assert_eq!(studio.body["roleWaits"], polled.body["roleWaits"]);

    // The WebSocket `status` of a damage player carries the damage median.
    let addr = t.serve().await;
    let body = json!({"gameMode": "roles", "playerId": "s",
        "attributes": {"mmr": 1500, "roles": ["damage"]}});
    let (_, token) = t.ticket_ok(&p, &key, body).await;
    let (mut ws, _) =
        tokio_tungstenite::connect_async(format!("ws://{addr}/v1/search?ticket={token}"))
            .await
            .expect("websocket upgrade");
    let status = loop {
        let msg = tokio::time::timeout(Duration::from_secs(5), ws.next())
            .await
            .expect("a message within 5 s")
            .expect("socket open")
            .expect("no error");
        if let tokio_tungstenite::tungstenite::Message::Text(text) = msg {
            let msg = crate::harness::search_message(&text);
            if msg["type"] == "status" {
                break msg;
            }
        }
    };
    let waits = status["roleWaits"].as_object().unwrap();
    assert_eq!(waits.keys().collect::<Vec<_>>(), ["damage"], "{status}");
    assert!(within(&waits["damage"], 150.0..=180.0), "{status}");

    // A mode without composition: no `roles`, no `roleWaits`.
    let stats = t
        .call(
            Method::GET,
            &format!("/v1/projects/{p}/game-modes/duel/stats"),
            Some(&key),
            None,
        )
        .await;
    assert!(stats.body.get("roles").is_none(), "{}", stats.body);
    let (ticket, token) = t
        .ticket_ok(&p, &key, crate::harness::solo("duel", "x"))
        .await;
    assert_eq!(t.rest_search(&token).await.status, StatusCode::ACCEPTED);
    let studio = t.status(&p, &key, &ticket).await;
    assert_eq!(studio.body["status"], "searching", "{}", studio.body);
    assert!(studio.body.get("roleWaits").is_none(), "{}", studio.body);
}
