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
    assert_eq!(
        stored.attributes.data.as_ref().map(|d| d.get()),
        Some(data.to_string().as_str())
    );
    assert_eq!(
        stored.attributes.latencies.as_ref().map(|l| l.len()),
        Some(2)
    );
    // The pool entry of its search carries the latencies, never the data.
    let json = stored.entry();
    assert!(
        json.contains("\"latencies\"") && !json.contains("mage"),
        "{json}"
    );
}

on_both_pools!(the_documented_ticket_examples_are_accepted);

/// The fenced ```json blocks of `text`.
fn json_blocks(text: &str) -> Vec<serde_json::Value> {
    text.split("```json\n")
        .skip(1)
        .filter_map(|block| block.split("```").next())
        .map(|block| {
            serde_json::from_str(block).unwrap_or_else(|e| panic!("{e}: not JSON:\n{block}"))
        })
        .collect()
}

/// `text` from `heading` to the next heading of the same level or above.
fn section<'a>(text: &'a str, heading: &str) -> &'a str {
    let start = text
        .find(&format!("\n{heading}\n"))
        .unwrap_or_else(|| panic!("no `{heading}`"));
    let rest = &text[start + heading.len() + 2..];
    let level = heading.split(' ').next().unwrap_or_default();
    let end = rest
        .match_indices("\n#")
        .find(|(at, _)| {
            let line = &rest[at + 1..];
            let hashes = line.len() - line.trim_start_matches('#').len();
            hashes <= level.len()
        })
        .map_or(rest.len(), |(at, _)| at);
    &rest[..end]
}

/// README's Regions section and docs/regions.md show a whole ticket, with
/// `latencies` and `data` under `attributes`; each is accepted as shown by
/// the docs' example mode. The same keys at the ticket's top level are
/// refused naming them, as the docs say.
async fn the_documented_ticket_examples_are_accepted(pools: Pools) {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let regions = std::fs::read_to_string(root.join("docs/regions.md")).unwrap();
    let readme_tickets = json_blocks(section(&readme, "### Regions"));
    let docs_tickets = json_blocks(section(&regions, "## What a ticket carries"));
    assert!(
        !readme_tickets.is_empty(),
        "README's Regions section shows no ticket body"
    );
    let [mode] = &json_blocks(section(&regions, "## An example mode"))[..] else {
        panic!("docs/regions.md shows one example mode");
    };

    let t = TestApp::new(pools, fast()).await;
    let (p, key) = t.project("enterprise").await;
    t.mode(&p, &key, mode.clone()).await;
    for (i, ticket) in readme_tickets.iter().chain(&docs_tickets).enumerate() {
        assert!(ticket["attributes"]["latencies"].is_object(), "{ticket}");
        assert!(ticket["attributes"]["data"].is_object(), "{ticket}");
        let mut ticket = ticket.clone();
        ticket["playerId"] = json!(format!("player-{i}"));
        let created = t.ticket(&p, &key, ticket.clone()).await;
        assert_eq!(
            created.status,
            StatusCode::CREATED,
            "{ticket}: {}",
            created.body
        );
    }

    let top_level = t
        .ticket(
            &p,
            &key,
            json!({"gameMode": mode["name"], "playerId": "top",
                "attributes": {"mmr": 1500, "latencies": {"eu-west": 31}},
                "data": {"character": "mage"}}),
        )
        .await;
    top_level.assert_problem(StatusCode::BAD_REQUEST, "VALIDATION_ERROR");
    assert_eq!(
        top_level.body["errors"][0]["field"], "data",
        "{}",
        top_level.body
    );
}
