//! A ticket's `attributes.data` reaches its match byte for byte (docs/searching.md,
//! 15): the `match.made` webhook body, the studio's match view and ticket
//! status carry each player's data as sent; the player's own view carries
//! its own data and nobody else's.

use crate::harness::{Pools, TestApp};
use crate::on_both_pools;
use axum::http::{Method, StatusCode};
use matchplane_store::repos::deliveries;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

/// Data whose text any re-serialisation would change: keys out of order,
/// spaces, a trailing zero, an exponent and an escape.
const ANA_DATA: &str = r#"{"z": 1,  "a":[1.50,2e3], "k":"\u00e9"}"#;

on_both_pools!(ticket_data_reaches_the_match_byte_for_byte);

async fn ticket_data_reaches_the_match_byte_for_byte(pools: Pools) {
    let t = TestApp::new(pools, crate::harness::fast()).await;
    let (p, key) = t.project("enterprise").await;
    t.mode(
        &p,
        &key,
        json!({"name": "duel", "enabled": true, "matchShape": [1, 1],
            "matchmakingCycleDurationSeconds": 0.5, "algorithm": {"type": "fifo"},
            "webhook": {"url": "https://93.184.216.34/hook", "enabled": true}}),
    )
    .await;
    let worker = t.start_worker(crate::harness::quick_worker());
    let tickets_path = format!("/v1/projects/{p}/tickets");
    let body = format!(
        r#"{{"gameMode": "duel", "playerId": "ana", "attributes": {{"data": {ANA_DATA}}}}}"#
    );
    let (status, created) = t.raw(Method::POST, &tickets_path, &key, Some(body)).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let created: Value = serde_json::from_str(&created).unwrap();
    let (ana, ana_token) = (
        created["ticketId"].as_str().unwrap().to_owned(),
        created["token"].as_str().unwrap().to_owned(),
    );
    let (bo, bo_token) = t
        .ticket_ok(&p, &key, json!({"gameMode": "duel", "playerId": "bo"}))
        .await;
    for token in [&ana_token, &bo_token] {
        assert_eq!(t.rest_search(token).await.status, StatusCode::ACCEPTED);
    }

    // Ana's own view: her data as sent.
    let until = Instant::now() + Duration::from_secs(20);
    let ana_view = loop {
        let (status, text) = t
            .raw(
                Method::GET,
                &format!("/v1/searches/{ana}"),
                &format!("Ticket {ana_token}"),
                None,
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{text}");
        if text.contains(r#""status":"matched""#) {
            break text;
        }
        assert!(Instant::now() < until, "never matched: {text}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    worker.stop().await;
    assert!(
        ana_view.contains(&format!(r#""data":{ANA_DATA}"#)),
        "{ana_view}"
    );
    let parsed: Value = serde_json::from_str(&ana_view).unwrap();
    let match_id = parsed["match"]["matchId"].as_str().unwrap().to_owned();

    // Bo brought no data and sees none, not Ana's either.
    let (status, bo_view) = t
        .raw(
            Method::GET,
            &format!("/v1/searches/{bo}"),
            &format!("Ticket {bo_token}"),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{bo_view}");
    assert!(bo_view.contains(r#""status":"matched""#), "{bo_view}");
    assert!(!bo_view.contains("\"data\""), "{bo_view}");
    assert!(!bo_view.contains("1.50"), "{bo_view}");

    // The studio's views and the webhook body: Ana's data as sent, in her
    // entry only.
    let seen = [
        t.raw(
            Method::GET,
            &format!("/v1/projects/{p}/matches/{match_id}"),
            &key,
            None,
        )
        .await,
        t.raw(
            Method::GET,
            &format!("/v1/projects/{p}/matches"),
            &key,
            None,
        )
        .await,
        t.raw(
            Method::GET,
            &format!("/v1/projects/{p}/tickets/{ana}"),
            &key,
            None,
        )
        .await,
    ];
    for (status, text) in seen {
        assert_eq!(status, StatusCode::OK, "{text}");
        assert_eq!(
            text.matches(&format!(r#""data":{ANA_DATA}"#)).count(),
            1,
            "{text}"
        );
        assert_eq!(text.matches("\"data\"").count(), 1, "{text}");
    }
    let delivery = deliveries::of_match(&t.db, &p, &match_id).await.unwrap();
    assert_eq!(delivery.len(), 1);
    let payload = &delivery[0].0.payload;
    assert!(
        payload.contains(&format!(r#""ticketId":"{ana}""#))
            && payload.contains(&format!(r#""data":{ANA_DATA}"#)),
        "{payload}"
    );
    assert_eq!(payload.matches("\"data\"").count(), 1, "{payload}");
}
