//! Thin pools end to end: a relaxed match and a bot match reach the studio
//! as signed `match.made` webhooks carrying `matchShape`, `seatsOpen` and
//! the bot seats, and are stored with them; relaxations added to (and
//! removed from) a mode are in force from the next cycle; a waiting search
//! carries `found` and `needed`.

use crate::env::{mode_config, verified_body, Env};
use crate::receiver::{Receiver, Reply};
use chrono::Utc;
use matchplane_store::pool::SearchState;
use matchplane_store::repos::{game_modes, matches};
use matchplane_worker::tick::TickOutcome;
use serde_json::{json, Value};
use std::time::Duration;

/// The test mode as a `[2, 2]` with `extra` fields merged in.
fn two_v_two(url: &str, extra: Value) -> Value {
    let mut config = mode_config("duel", Some(url), 1.0);
    config["matchShape"] = json!([2, 2]);
    for (k, v) in extra.as_object().unwrap() {
        config[k] = v.clone();
    }
    config
}

async fn set_config(env: &Env, config: Value) {
    game_modes::replace(&env.db, &env.project_id, "duel", config, Utc::now())
        .await
        .unwrap();
}

/// Delivers the one pending webhook, checks its signature, returns its body.
async fn delivered_body(env: &Env, receiver: &Receiver) -> Value {
    let attempted = env.deliveries(1.0).tick(Utc::now(), 10).await.unwrap();
    assert_eq!(attempted.len(), 1);
    let received = receiver.received();
    let request = received.last().unwrap();
    verified_body(env, request)
}

async fn status_of(env: &Env, ticket: &str) -> Value {
    match env.pool.search_state(&env.mode, ticket).await.unwrap() {
        Some(SearchState::Live(live)) => {
            serde_json::from_str(live.waiting_reason.as_deref().unwrap()).unwrap()
        }
        other => panic!("expected a live search, got {other:?}"),
    }
}

#[tokio::test]
async fn a_relaxed_match_is_delivered_with_its_shape_and_open_seats() {
    let receiver = Receiver::start(vec![], Reply::status(204)).await;
    let env = Env::new(Some(&receiver.url()), 1.0).await;
    set_config(
        &env,
        two_v_two(
            &receiver.url(),
            json!({"relaxations": [{"afterSeconds": 20, "matchShape": [1, 1]}]}),
        ),
    )
    .await;
    let a = env.add_waited("a", 1500.0, 30.0).await;
    let b = env.add("b", 1510.0).await;
    let token = env.lease("w1", Duration::from_secs(5)).await;
    assert_eq!(env.tick(token).await.0, TickOutcome::Matched(1));
    assert_eq!(env.drain("w1").await, 1);

    let body = delivered_body(&env, &receiver).await;
    assert_eq!(body["type"], "match.made");
    assert_eq!(body["matchShape"], json!([1, 1]));
    assert_eq!(body["seatsOpen"], json!([1, 1]));
    let seated: Vec<&str> = body["teams"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|t| t["players"].as_array().unwrap())
        .map(|p| p["ticketId"].as_str().unwrap())
        .collect();
    assert_eq!(seated.len(), 2);
    assert!(seated.contains(&a.as_str()) && seated.contains(&b.as_str()));

    let stored = matches::list(&env.db, &env.project_id, None, None, 10)
        .await
        .unwrap();
    assert_eq!(stored[0].match_shape, Some(json!([1, 1])));
    assert_eq!(stored[0].seats_open, Some(json!([1, 1])));
}

#[tokio::test]
async fn a_bot_match_is_delivered_with_bot_seats() {
    let receiver = Receiver::start(vec![], Reply::status(204)).await;
    let env = Env::new(Some(&receiver.url()), 1.0).await;
    set_config(
        &env,
        two_v_two(
            &receiver.url(),
            json!({"bots": {"fillAfterSeconds": 10, "minHumans": 2, "replaceable": true}}),
        ),
    )
    .await;
    let young = env.add_waited("a", 1500.0, 5.0).await;
    env.add("b", 1510.0).await;
    let token = env.lease("w1", Duration::from_secs(5)).await;
    // Before its time: nothing, and the status says 2 found of 4 needed.
    assert_eq!(env.tick(token).await.0, TickOutcome::Idle);
    let status = status_of(&env, &young).await;
    assert_eq!(
        (status["found"].clone(), status["needed"].clone()),
        (json!(2), json!(4))
    );

    env.add_waited("c", 1490.0, 30.0).await;
    assert_eq!(env.tick(token).await.0, TickOutcome::Matched(1));
    assert_eq!(env.drain("w1").await, 1);
    let body = delivered_body(&env, &receiver).await;
    assert_eq!(body["matchShape"], json!([2, 2]));
    let teams = body["teams"].as_array().unwrap();
    let bots: Vec<&Value> = teams
        .iter()
        .flat_map(|t| t["players"].as_array().unwrap())
        .filter(|p| p["bot"] == true)
        .collect();
    assert_eq!(bots.len(), 1, "three humans and one bot: {body}");
    assert_eq!(
        *bots[0],
        json!({"bot": true, "playerId": null, "ticketId": null, "mmr": 1500.0})
    );
    let open: Vec<u64> = body["seatsOpen"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    assert_eq!(
        open.iter().sum::<u64>(),
        1,
        "the replaceable bot seat is open"
    );
    // Quality counts the humans only.
    assert_eq!(body["quality"]["mmrSpread"], 20.0);
}

#[tokio::test]
async fn relaxations_added_or_removed_are_in_force_from_the_next_cycle() {
    let receiver = Receiver::start(vec![], Reply::status(204)).await;
    let env = Env::new(Some(&receiver.url()), 1.0).await;
    let strict = two_v_two(&receiver.url(), json!({}));
    set_config(&env, strict.clone()).await;
    let a = env.add_waited("a", 1500.0, 30.0).await;
    env.add_waited("b", 1510.0, 30.0).await;
    let token = env.lease("w1", Duration::from_secs(5)).await;
    assert_eq!(env.tick(token).await.0, TickOutcome::Idle);
    let status = status_of(&env, &a).await;
    assert_eq!(status["code"], "NOT_ENOUGH_PLAYERS");
    assert_eq!(
        (status["found"].clone(), status["needed"].clone()),
        (json!(2), json!(4))
    );

    let relaxed = two_v_two(
        &receiver.url(),
        json!({"relaxations": [{"afterSeconds": 20, "matchShape": [1, 1]}]}),
    );
    set_config(&env, relaxed).await;
    assert_eq!(env.tick(token).await.0, TickOutcome::Matched(1));
    assert_eq!(env.drain("w1").await, 1);
    assert_eq!(
        delivered_body(&env, &receiver).await["matchShape"],
        json!([1, 1])
    );

    // Removed again: the next pair waits for a full match.
    set_config(&env, strict).await;
    let c = env.add_waited("c", 1500.0, 30.0).await;
    env.add_waited("d", 1510.0, 30.0).await;
    assert_eq!(env.tick(token).await.0, TickOutcome::Idle);
    assert_eq!(status_of(&env, &c).await["needed"], 4);
}
