//! Deadlines in a mode that is otherwise idle (an empty pool, nothing in
//! its outbox): a made match nobody assigned is released `unassigned` at
//! the end of its `assignment.waitSeconds` by the running worker, without
//! any other search arriving to wake the mode (docs/acceptance.md,
//! "Telling the players where to play").
//!
//! Before: the idle check counted the pool, outbox, proposals and
//! backfills only, so the match waited (minutes, in a fault run) until the
//! next search made the mode busy again.

use crate::env::{mode_config, Env};
use chrono::Utc;
use matchplane_store::repos::{game_modes, match_status, matches};
use serde_json::json;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Runs a worker on `env` (a 0.2 s cycle, `waitSeconds` 1), makes one match
/// and waits for it to be released `unassigned`.
async fn an_unassigned_match_is_released_in_an_idle_mode(env: Env) {
    let mut config = mode_config("duel", None, 0.2);
    config["assignment"] = json!({ "waitSeconds": 1 });
    game_modes::replace(&env.db, &env.project_id, "duel", config, Utc::now())
        .await
        .unwrap();
    let stop = CancellationToken::new();
    let worker = env.spawn_worker(env.worker_config("w1"), &stop);
    env.add("a", 1500.0).await;
    env.add("b", 1500.0).await;
    let mut status = None;
    // Made within a few cycles, released a second after; 10 s is slack.
    for _ in 0..200 {
        let stored = matches::list(&env.db, &env.project_id, None, None, 10)
            .await
            .unwrap();
        status = stored.first().map(|m| m.status.clone());
        if status.as_deref() == Some(match_status::UNASSIGNED) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    stop.cancel();
    let _ = worker.await;
    assert_eq!(
        status.as_deref(),
        Some(match_status::UNASSIGNED),
        "the made match was not released in the idle mode"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unassigned_match_is_released_in_an_idle_mode_on_redis() {
    an_unassigned_match_is_released_in_an_idle_mode(Env::new(None, 0.2).await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unassigned_match_is_released_in_an_idle_mode_in_memory() {
    an_unassigned_match_is_released_in_an_idle_mode(Env::on_memory(None, 0.2).await).await;
}

/// A match whose record waited in the outbox (the database out of reach)
/// is made when it is stored: its players are told `matched` and the
/// studio gets `match.made` only then, so its assignment wait counts from
/// then, not from the cycle that formed it (docs/acceptance.md).
///
/// Before: a match made without a proposal kept no `madeAt`, and the wait
/// counted from `createdAt`: a match stored after an outage longer than
/// `waitSeconds` was released `unassigned` within a second of `matched`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_match_stored_late_waits_for_its_assignment_from_when_it_was_stored() {
    let env = Env::new(None, 0.2).await;
    let mut config = mode_config("duel", None, 0.2);
    config["assignment"] = json!({ "waitSeconds": 1 });
    game_modes::replace(&env.db, &env.project_id, "duel", config, Utc::now())
        .await
        .unwrap();
    let token = env.lease("w1", Duration::from_secs(30)).await;
    env.add("a", 1500.0).await;
    env.add("b", 1500.0).await;
    env.tick(token).await;
    // The record waits in the outbox longer than the assignment wait.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let stored_from = Utc::now();
    assert_eq!(env.drain("c1").await, 1);
    let row = matches::list(&env.db, &env.project_id, None, None, 10)
        .await
        .unwrap()
        .remove(0);
    let made_at = row.made_at.expect("a stored match has its madeAt");
    assert!(made_at >= stored_from, "{made_at} before {stored_from}");
    assert!(made_at - row.created_at >= chrono::Duration::milliseconds(1500));
    // Not due for its assignment timeout a moment after it was stored.
    let due = match_status::unassigned_due(
        &env.db,
        &env.project_id,
        ("duel", None),
        Utc::now() - chrono::Duration::seconds(1),
        row.created_at - chrono::Duration::hours(1),
        10,
    )
    .await
    .unwrap();
    assert!(due.is_empty(), "due at once: {due:?}");
}
