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
