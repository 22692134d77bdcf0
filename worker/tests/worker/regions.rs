//! Regions end to end on PostgreSQL and Redis: two searches with latency
//! maps are matched in the region both reach, and the signed `match.made`
//! webhook, the stored match and each player's own view carry `region` and
//! the player's `latencyMs`; a search without a map in a mode that gained
//! `regions` fails `LATENCIES_REQUIRED` at the next cycle.

use crate::env::{mode_config, Env};
use crate::receiver::{Receiver, Reply};
use crate::verify::verify;
use chrono::Utc;
use matchplane_matchmaker::Search;
use matchplane_store::repos::{game_modes, matches};
use matchplane_worker::tick::TickOutcome;
use serde_json::{json, Value};
use std::time::Duration;

fn with_latencies(player: &str, mmr: f64, latencies: &[(&str, f64)]) -> Search {
    let now = Utc::now().timestamp_micros() as f64 / 1e6;
    let mut s = Search::solo(format!("tkt_{}", ulid::Ulid::new()), player, mmr, now);
    s.latencies = Some(latencies.iter().map(|(n, v)| ((*n).into(), *v)).collect());
    s
}

async fn regional(env: &Env, url: &str) {
    let mut config = mode_config("duel", Some(url), 1.0);
    config["regions"] = json!({"names": ["eu-west", "us-east"], "maxLatencyMs": 80});
    game_modes::replace(&env.db, &env.project_id, "duel", config, Utc::now())
        .await
        .unwrap();
}

#[tokio::test]
async fn a_match_is_played_in_the_region_both_reach_and_says_so() {
    let receiver = Receiver::start(vec![], Reply::status(204)).await;
    let env = Env::new(Some(&receiver.url()), 1.0).await;
    regional(&env, &receiver.url()).await;
    let a = with_latencies("ana", 1500.0, &[("eu-west", 31.0), ("us-east", 110.0)]);
    let b = with_latencies("ben", 1510.0, &[("eu-west", 45.0), ("us-east", 20.0)]);
    env.add_search(&a).await;
    env.add_search(&b).await;
    let token = env.lease("w1", Duration::from_secs(5)).await;
    assert_eq!(env.tick(token).await.0, TickOutcome::Matched(1));
    assert_eq!(env.drain("w1").await, 1);

    let attempted = env.deliveries(1.0).tick(Utc::now(), 10).await.unwrap();
    assert_eq!(attempted.len(), 1);
    let request = receiver.received().last().cloned().unwrap();
    verify(
        &env.secret,
        &request.header("webhook-id"),
        &request.header("webhook-timestamp"),
        &request.header("webhook-signature"),
        &request.body,
        request.received_at.timestamp(),
        300,
    )
    .unwrap();
    let body: Value = serde_json::from_slice(&request.body).unwrap();
    assert_eq!(body["region"], "eu-west");
    let latency_of = |ticket: &str| {
        body["teams"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|t| t["players"].as_array().unwrap())
            .find(|p| p["ticketId"] == ticket)
            .map(|p| p["latencyMs"].clone())
            .unwrap()
    };
    assert_eq!(latency_of(a.ticket_id.as_str()), json!(31.0));
    assert_eq!(latency_of(b.ticket_id.as_str()), json!(45.0));

    let stored = matches::list(&env.db, &env.project_id, None, None, 10)
        .await
        .unwrap();
    assert_eq!(stored[0].region.as_deref(), Some("eu-west"));

    // Each player's `matched` view: the region and its own latency.
    let made: matchplane_webhook::MatchMade = serde_json::from_value(body.clone()).unwrap();
    let view = matchplane_webhook::player_match(&made, b.ticket_id.as_str()).unwrap();
    let view: serde_json::Value = serde_json::from_str(view.get()).unwrap();
    assert_eq!(view["region"], "eu-west");
    assert_eq!(view["player"]["latencyMs"], json!(45.0));
}

#[tokio::test]
async fn a_mode_that_gains_regions_fails_searches_without_a_map() {
    let receiver = Receiver::start(vec![], Reply::status(204)).await;
    let env = Env::new(Some(&receiver.url()), 1.0).await;
    let bare = env.add("ana", 1500.0).await;
    regional(&env, &receiver.url()).await;
    let token = env.lease("w1", Duration::from_secs(5)).await;
    env.tick(token).await;
    let state = env.pool.search_state(&env.mode, &bare).await.unwrap();
    let text = format!("{state:?}");
    assert!(
        text.contains("LATENCIES_REQUIRED") || text.contains("LatenciesRequired"),
        "{text}"
    );
}
