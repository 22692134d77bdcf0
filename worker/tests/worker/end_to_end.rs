//! A match made end to end: searches in the pool, a tick claims, the outbox
//! is recorded in PostgreSQL, the clients are told, the signed webhook
//! arrives and verifies; 500, 500, 200 gives three logged attempts.

use crate::env::{mode_config, verified_body, Env};
use crate::receiver::{Receiver, Reply};
use chrono::Utc;
use futures::StreamExt;
use matchplane_store::pool::{Ended, SearchState};
use matchplane_store::repos::{deliveries, matches};
use matchplane_worker::tick::TickOutcome;
use std::time::Duration;

#[tokio::test]
async fn a_match_is_made_end_to_end() {
    let receiver = Receiver::start(vec![], Reply::status(204)).await;
    let env = Env::new(Some(&receiver.url()), 1.0).await;
    let a = env.add("Zoë🎮", 1500.0).await;
    let b = env.add("player-2", 1520.0).await;
    let mut updates = env.pool.subscribe_status(&a).await.unwrap();

    let token = env.lease("w1", Duration::from_secs(5)).await;
    let (outcome, report) = env.tick(token).await;
    assert_eq!(outcome, TickOutcome::Matched(1));
    assert_eq!(report.pool_size, 2);
    assert_eq!(env.drain("w1").await, 1);

    let stored = matches::list(&env.db, &env.project_id, None, None, 10)
        .await
        .unwrap();
    assert_eq!(stored.len(), 1);
    let match_id = stored[0].id.clone();
    assert!(match_id.starts_with("mat_"));
    for ticket in [&a, &b] {
        let state = env.pool.search_state(&env.mode, ticket).await.unwrap();
        assert_eq!(
            state.and_then(SearchState::into_ended),
            Some(Ended::Matched {
                match_id: match_id.clone()
            })
        );
    }
    let message = tokio::time::timeout(Duration::from_secs(2), updates.next())
        .await
        .unwrap()
        .unwrap();
    let message: serde_json::Value = serde_json::from_str(&message).unwrap();
    assert_eq!(message["type"], "matched");
    assert_eq!(message["match"]["matchId"], match_id.as_str());
    // The player's own view: teams as player ids, its own entry.
    assert!(message["match"]["teams"][0][0].is_string(), "{message}");
    assert!(message["match"]["player"]["team"].is_u64(), "{message}");

    let attempted = env.deliveries(1.0).tick(Utc::now(), 10).await.unwrap();
    assert_eq!(attempted.len(), 1);
    let received = receiver.received();
    assert_eq!(received.len(), 1);
    let request = &received[0];
    assert_eq!(request.header("webhook-id"), match_id);
    let body = verified_body(&env, request);
    assert_eq!(body["type"], "match.made");
    assert_eq!(body["projectId"], env.project_id.as_str());
    // When it was stored, the stored match's own `madeAt`, from which the
    // release window and the assignment wait count.
    let made_at = stored[0].made_at.expect("a stored match has its madeAt");
    assert_eq!(
        body["madeAt"],
        matchplane_matchmaker::timestamp::format(&made_at).as_str(),
        "{body}"
    );
    assert!(std::str::from_utf8(&request.body)
        .unwrap()
        .contains("Zoë🎮"));

    let logged = deliveries::of_match(&env.db, &env.project_id, &match_id)
        .await
        .unwrap();
    assert_eq!(logged.len(), 1);
    assert_eq!(logged[0].0.status, "succeeded");
    assert_eq!(logged[0].1.len(), 1);
    assert_eq!(logged[0].1[0].status_code, Some(204));

    // Nothing is left: a second tick and drain find nothing to do.
    assert_eq!(env.tick(token).await.0, TickOutcome::Idle);
    assert_eq!(env.drain("w1").await, 0);
}

#[tokio::test]
async fn five_hundred_twice_then_two_hundred_logs_three_attempts() {
    let receiver = Receiver::start(
        vec![
            Reply::status(500).body("down"),
            Reply::status(500).body("still down"),
        ],
        Reply::status(200).body("ok"),
    )
    .await;
    let env = Env::new(Some(&receiver.url()), 1.0).await;
    env.add("a", 1500.0).await;
    env.add("b", 1500.0).await;
    let token = env.lease("w1", Duration::from_secs(5)).await;
    assert_eq!(env.tick(token).await.0, TickOutcome::Matched(1));
    env.drain("w1").await;

    // Delays are 1 s and 2 s scaled by 0.001: due within milliseconds.
    let worker = env.deliveries(0.001);
    let mut attempts = 0;
    for _ in 0..200 {
        attempts += worker.tick(Utc::now(), 10).await.unwrap().len();
        if attempts == 3 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert_eq!(attempts, 3);
    let match_id = matches::list(&env.db, &env.project_id, None, None, 1)
        .await
        .unwrap()[0]
        .id
        .clone();
    let logged = deliveries::of_match(&env.db, &env.project_id, &match_id)
        .await
        .unwrap();
    let (delivery, attempts) = &logged[0];
    assert_eq!(delivery.status, "succeeded");
    assert_eq!(delivery.attempt_count, 3);
    let codes: Vec<Option<i32>> = attempts.iter().map(|a| a.status_code).collect();
    assert_eq!(codes, [Some(500), Some(500), Some(200)]);
    assert_eq!(attempts[0].response_body.as_deref(), Some("down"));
    let received = receiver.received();
    assert_eq!(received.len(), 3);
    for request in &received {
        assert_eq!(request.header("webhook-id"), match_id);
        assert_eq!(request.body, received[0].body, "same bytes on every retry");
        verified_body(&env, request);
    }
}

/// A match claimed just before its mode was deleted (a proposal everyone
/// accepted, a cycle's last claim) is stored, as it was made, but queues
/// no webhook: a deleted mode has no endpoint, and a delivery made for it
/// would only fail (docs/webhooks.md). The outbox consumer is handed the webhook
/// flag of the config it read before the delete, as a worker's proposal
/// sweep is.
#[tokio::test]
async fn a_match_recorded_after_its_mode_was_deleted_queues_no_webhook() {
    let receiver = Receiver::start(vec![], Reply::status(204)).await;
    let env = Env::new(Some(&receiver.url()), 1.0).await;
    env.add("ana", 1500.0).await;
    env.add("bo", 1510.0).await;
    let webhook = env.config().await.webhook_enabled();
    assert!(webhook);
    let token = env.lease("w1", Duration::from_secs(5)).await;
    let (outcome, _) = env.tick(token).await;
    assert_eq!(outcome, TickOutcome::Matched(1));

    matchplane_store::repos::game_modes::delete(&env.db, &env.project_id, &env.mode.mode)
        .await
        .unwrap();
    let recorded = env
        .consumer("w1", Duration::from_secs(60))
        .drain(&env.mode, webhook, Utc::now(), 10)
        .await
        .unwrap();
    assert_eq!(recorded, 1);
    let stored = matches::list(&env.db, &env.project_id, None, None, 10)
        .await
        .unwrap();
    assert_eq!(stored.len(), 1);
    let queued = deliveries::of_match(&env.db, &env.project_id, &stored[0].id)
        .await
        .unwrap();
    assert!(queued.is_empty(), "{queued:?}");
}

/// A match claimed just before its mode was deleted, recorded once a mode
/// of the same name was created again, queues no webhook either: the new
/// mode is a new mode, whose URL and secret are not the match's
/// (docs/webhooks.md, "A deleted mode").
#[tokio::test]
async fn a_match_recorded_after_its_mode_was_created_again_queues_no_webhook() {
    let receiver = Receiver::start(vec![], Reply::status(204)).await;
    let env = Env::new(Some(&receiver.url()), 1.0).await;
    env.add("ana", 1500.0).await;
    env.add("bo", 1510.0).await;
    let token = env.lease("w1", Duration::from_secs(5)).await;
    assert_eq!(env.tick(token).await.0, TickOutcome::Matched(1));

    recreate(&env, mode_config("duel", Some(&receiver.url()), 1.0)).await;
    assert_eq!(env.drain("w1").await, 1);
    let stored = matches::list(&env.db, &env.project_id, None, None, 10)
        .await
        .unwrap();
    assert_eq!(stored.len(), 1);
    let queued = deliveries::of_match(&env.db, &env.project_id, &stored[0].id)
        .await
        .unwrap();
    assert!(queued.is_empty(), "{queued:?}");
}

/// A mode created again with an `assignment` block does not time out the
/// deleted mode's matches, which never waited for an assignment: they stay
/// `made` (docs/game-modes.md, "Changing a mode").
#[tokio::test]
async fn a_mode_created_again_does_not_time_out_the_deleted_modes_matches() {
    let env = Env::new(None, 1.0).await;
    env.add("ana", 1500.0).await;
    env.add("bo", 1510.0).await;
    let token = env.lease("w1", Duration::from_secs(5)).await;
    assert_eq!(env.tick(token).await.0, TickOutcome::Matched(1));
    assert_eq!(env.drain("w1").await, 1);

    let mut config = mode_config("duel", None, 1.0);
    config["assignment"] = serde_json::json!({ "waitSeconds": 1 });
    recreate(&env, config).await;
    let later = Utc::now() + chrono::Duration::seconds(5);
    let released = matchplane_worker::assignment::time_out(
        env.pool.as_ref(),
        &env.db,
        &env.mode,
        &env.config().await,
        later,
    )
    .await
    .unwrap();
    assert_eq!(released, 0);
    let stored = matches::list(&env.db, &env.project_id, None, None, 10)
        .await
        .unwrap();
    assert_eq!(stored[0].status, "made");
}

/// Deletes the test's mode and creates it again with `config`.
async fn recreate(env: &Env, config: serde_json::Value) {
    use matchplane_store::repos::game_modes;
    game_modes::delete(&env.db, &env.project_id, &env.mode.mode)
        .await
        .unwrap();
    game_modes::create(
        &env.db,
        &env.project_id,
        &env.mode.mode,
        config,
        &env.secret,
        Utc::now(),
    )
    .await
    .unwrap();
}
