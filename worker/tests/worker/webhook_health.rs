//! A mode's webhook health: every failed attempt counts one more failure in
//! a row (since the first one), with the last error; the next success
//! clears it. Deleting the mode forgets it.

use crate::env::Env;
use crate::receiver::{Receiver, Reply};
use chrono::Utc;
use matchplane_store::repos::{game_modes, webhook_health};
use matchplane_worker::tick::TickOutcome;
use std::time::Duration;

#[tokio::test]
async fn failures_in_a_row_make_the_mode_failing_until_a_success() {
    let receiver = Receiver::start(
        vec![Reply::status(503), Reply::status(500)],
        Reply::status(200),
    )
    .await;
    let env = Env::new(Some(&receiver.url()), 1.0).await;
    env.add("a", 1500.0).await;
    env.add("b", 1500.0).await;
    let token = env.lease("w1", Duration::from_secs(5)).await;
    assert_eq!(env.tick(token).await.0, TickOutcome::Matched(1));
    env.drain("w1").await;
    let health = || webhook_health::get(&env.db, &env.project_id, "duel");
    assert_eq!(health().await.unwrap(), None, "no attempt yet");

    let worker = env.deliveries(0.001);
    let mut seen = Vec::new();
    for _ in 0..400 {
        if !worker.tick(Utc::now(), 10).await.unwrap().is_empty() {
            seen.push(health().await.unwrap().expect("a row after an attempt"));
        }
        if seen.len() == 3 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert_eq!(seen.len(), 3, "three attempts");
    let (first, second, third) = (&seen[0], &seen[1], &seen[2]);
    assert_eq!(first.consecutive_failures, 1);
    assert_eq!(first.last_error.as_deref(), Some("HTTP 503"));
    assert!(first.failing_since.is_some());
    assert_eq!(second.consecutive_failures, 2);
    assert_eq!(second.last_error.as_deref(), Some("HTTP 500"));
    assert_eq!(second.failing_since, first.failing_since, "since the first");
    assert!(second.last_failure_at > first.last_failure_at);
    assert_eq!(third.consecutive_failures, 0, "a success clears it");
    assert_eq!(third.failing_since, None);
    assert!(third.last_success_at.is_some());
    assert_eq!(third.last_error.as_deref(), Some("HTTP 500"), "kept");

    game_modes::delete(&env.db, &env.project_id, "duel")
        .await
        .unwrap();
    assert_eq!(health().await.unwrap(), None, "forgotten with its mode");
}

#[tokio::test]
async fn an_unresolvable_host_fails_with_its_reason() {
    let env = Env::new(Some("https://hooks.nowhere.invalid/m?token=s3cr3t"), 1.0).await;
    env.add("a", 1500.0).await;
    env.add("b", 1500.0).await;
    let token = env.lease("w1", Duration::from_secs(5)).await;
    assert_eq!(env.tick(token).await.0, TickOutcome::Matched(1));
    env.drain("w1").await;
    let attempted = env.deliveries(0.001).tick(Utc::now(), 10).await.unwrap();
    assert_eq!(attempted.len(), 1);
    let health = webhook_health::get(&env.db, &env.project_id, "duel")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(health.consecutive_failures, 1);
    let error = health.last_error.unwrap();
    assert!(error.contains("does not resolve"), "{error}");
    assert!(!error.contains("s3cr3t"), "{error}");
}
