//! Ticket attributes in a mode with `regions`: `latencies` validated (every
//! failure on its field, names among `regions.names`), `LATENCIES_REQUIRED`,
//! any other attribute key refused naming it, `data` kept with the ticket
//! as the exact text sent and never in the pool entry.

use crate::harness::{duel, fast, Pools, TestApp};
use crate::on_both_pools;
use axum::http::StatusCode;
use serde_json::json;

on_both_pools!(ticket_attributes_in_a_regions_mode);

async fn ticket_attributes_in_a_regions_mode(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    let (p, key) = t.project("free").await;
    let mut mode = duel("duel");
    mode["regions"] = json!({"names": ["eu-west", "us-east"], "maxLatencyMs": 80,
        "expansion": [{"afterSeconds": 20, "maxLatencyMs": 120}]});
    t.mode(&p, &key, mode).await;

    let missing = t
        .ticket(
            &p,
            &key,
            json!({"gameMode": "duel", "playerId": "a", "attributes": {"mmr": 1500}}),
        )
        .await;
    missing.assert_problem(StatusCode::UNPROCESSABLE_ENTITY, "LATENCIES_REQUIRED");

    let bad = t
        .ticket(
            &p,
            &key,
            json!({"gameMode": "duel", "playerId": "a",
                "attributes": {"mmr": 1500, "latencies": {"eu-west": 9000, "ap-south": 20}}}),
        )
        .await;
    bad.assert_problem(StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION_ERROR");
    let fields: Vec<&str> = bad.body["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["field"].as_str().unwrap())
        .collect();
    assert_eq!(
        fields,
        [
            "attributes.latencies.ap-south",
            "attributes.latencies.eu-west"
        ],
        "{}",
        bad.body
    );

    let unknown = t
        .ticket(
            &p,
            &key,
            json!({"gameMode": "duel", "playerId": "a",
                "attributes": {"mmr": 1500, "latencies": {"eu-west": 30}, "lag": 3}}),
        )
        .await;
    assert_eq!(unknown.status.as_u16() / 100, 4, "{}", unknown.body);
    assert!(
        unknown.body.to_string().contains("attributes.lag"),
        "{}",
        unknown.body
    );

    let big = t
        .ticket(
            &p,
            &key,
            json!({"gameMode": "duel", "playerId": "a",
                "attributes": {"mmr": 1500, "latencies": {"eu-west": 30},
                               "data": {"blob": "x".repeat(5000)}}}),
        )
        .await;
    big.assert_problem(StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION_ERROR");

    let data = json!({"character": "mage", "loadout": [3, 7], "nested": {"é": 1.50}});
    let ok = t
        .ticket(
            &p,
            &key,
            json!({"gameMode": "duel", "playerId": "a",
                "attributes": {"mmr": 1500, "latencies": {"eu-west": 30, "us-east": 95},
                               "data": data}}),
        )
        .await;
    assert_eq!(ok.status, StatusCode::CREATED, "{}", ok.body);
    let ticket_id = ok.body["ticketId"].as_str().unwrap();
    let stored = t.play.tickets.get(&p, ticket_id).await.unwrap().unwrap();
    assert_eq!(stored.data.as_deref(), Some(data.to_string().as_str()));
    assert_eq!(stored.latencies.as_ref().map(|l| l.len()), Some(2));
    // The pool entry of its search carries the latencies, never the data.
    let entry = matchplane_store::tickets::search_of(&stored, 1.0);
    let json = serde_json::to_string(&entry).unwrap();
    assert!(
        json.contains("\"latencies\"") && !json.contains("mage"),
        "{json}"
    );
}
