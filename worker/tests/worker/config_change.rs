//! A config change is in force from the next cycle: searches it rules out
//! fail with their code and their clients are told; with the whole worker
//! running, within one cycle plus one second.

use crate::env::{mode_config, Env};
use chrono::Utc;
use futures::StreamExt;
use matchplane_store::pool::{Ended, SearchState};
use matchplane_store::repos::game_modes;
use matchplane_worker::tick::TickOutcome;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

#[tokio::test]
async fn disabling_a_mode_fails_its_searches_at_the_next_tick() {
    let env = Env::new(None, 1.0).await;
    let a = env.add("a", 100.0).await;
    env.add("b", 2900.0).await; // out of range: both wait
    let mut updates = env.pool.subscribe_status(&a).await.unwrap();
    let token = env.lease("w1", Duration::from_secs(5)).await;
    let (_, report) = env.tick(token).await;
    assert_eq!(report.pool_size, 2);
    match env.pool.search_state(&env.mode, &a).await.unwrap() {
        Some(SearchState::Live(live)) => {
            let reason: serde_json::Value =
                serde_json::from_str(live.waiting_reason.as_deref().unwrap()).unwrap();
            assert_eq!(reason["code"], "NO_CANDIDATES_IN_RANGE");
            // The unblock hint the status serves: 2800 apart, ranges of
            // 150 + 15 per second of wait cover it after 176.7 s.
            assert_eq!(reason["nearestDistance"], 2800.0, "{reason}");
            let unblocks = reason["unblocksInSeconds"].as_f64().unwrap();
            assert!((170.0..=176.7).contains(&unblocks), "{reason}");
        }
        other => panic!("expected live, got {other:?}"),
    }

    let mut config = mode_config("duel", None, 1.0);
    config["enabled"] = false.into();
    game_modes::replace(&env.db, &env.project_id, "duel", config, Utc::now())
        .await
        .unwrap();
    let (_, report) = env.tick(token).await;
    assert_eq!(report.failed, 2);
    assert!(matches!(
        env.pool
            .search_state(&env.mode, &a)
            .await
            .unwrap()
            .and_then(SearchState::into_ended),
        Some(Ended::Failed { code, .. }) if code == "GAME_MODE_DISABLED"
    ));
    let message = tokio::time::timeout(Duration::from_secs(2), updates.next())
        .await
        .unwrap()
        .unwrap();
    let message: serde_json::Value = serde_json::from_str(&message).unwrap();
    assert_eq!(message["type"], "failed");
    assert_eq!(message["code"], "GAME_MODE_DISABLED");
}

/// The API checks new tickets against a mode's new config at once, and a
/// worker's loop may still hold the config it read before the change: a
/// cycle started on a config the database has replaced stops before it
/// reads the pool (the loop reads the new one and cycles on it at once),
/// so a search the new config accepts is neither failed nor matched by the
/// old one.
#[tokio::test]
async fn a_cycle_on_a_replaced_config_fails_nobody_the_new_one_accepts() {
    let env = Env::new(None, 1.0).await;
    let mut narrow = mode_config("duel", None, 1.0);
    narrow["algorithm"]["maxMmr"] = 2000.into();
    game_modes::replace(&env.db, &env.project_id, "duel", narrow, Utc::now())
        .await
        .unwrap();
    // The worker's cached config, before the studio widens the range again.
    let cached = env.config().await;
    game_modes::replace(
        &env.db,
        &env.project_id,
        "duel",
        mode_config("duel", None, 1.0),
        Utc::now(),
    )
    .await
    .unwrap();
    // Checked by the API against the wide range.
    let a = env.add("a", 2900.0).await;
    let token = env.lease("w1", Duration::from_secs(5)).await;
    let live = |state: Option<SearchState>| matches!(state, Some(SearchState::Live(_)));

    let (outcome, report) = env.tick_with(token, &cached).await;
    assert_eq!(outcome, TickOutcome::ConfigReplaced);
    assert_eq!((report.failed, report.pool_size), (0, 0));
    assert!(live(env.pool.search_state(&env.mode, &a).await.unwrap()));
    let (_, report) = env.tick(token).await;
    assert_eq!((report.failed, report.pool_size), (0, 1));
    assert!(live(env.pool.search_state(&env.mode, &a).await.unwrap()));

    // The same cycle on the current config fails what it refuses.
    let b = env.add("b", 3500.0).await;
    let (_, report) = env.tick(token).await;
    assert_eq!(report.failed, 1);
    assert!(matches!(
        env.pool
            .search_state(&env.mode, &b)
            .await
            .unwrap()
            .and_then(SearchState::into_ended),
        Some(Ended::Failed { code, .. }) if code == "MMR_OUT_OF_RANGE"
    ));
}

#[tokio::test]
async fn a_running_worker_applies_a_change_within_one_cycle_plus_one_second() {
    let cycle = 2.0;
    let env = Env::new(None, cycle).await;
    let shutdown = CancellationToken::new();
    let worker = env.spawn_worker(env.worker_config("w1"), &shutdown);
    // Two searches that wait; the mode is deleted mid-wait.
    let a = env.add("a", 100.0).await;
    env.add("b", 2900.0).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let changed = Instant::now();
    game_modes::delete(&env.db, &env.project_id, "duel")
        .await
        .unwrap();
    let bound = Duration::from_secs_f64(cycle + 1.0);
    loop {
        if let Some(Ended::Failed { code, .. }) = env
            .pool
            .search_state(&env.mode, &a)
            .await
            .unwrap()
            .and_then(SearchState::into_ended)
        {
            assert_eq!(code, "GAME_MODE_DISABLED");
            break;
        }
        assert!(changed.elapsed() < bound, "not failed within {bound:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    shutdown.cancel();
    worker.await.unwrap().unwrap();
}

/// A mode disabled with a proposal open (one member accepted, one silent):
/// the next cycle cancels the proposal, every search of the mode, proposed
/// or waiting, fails `GAME_MODE_DISABLED`, and nobody is cooled down
/// (docs/acceptance.md, 'How a proposal ends').
#[tokio::test]
async fn disabling_a_mode_ends_its_open_proposals_and_cools_nobody_down() {
    let env = Env::new(None, 1.0).await;
    let acceptance = serde_json::json!({"timeoutSeconds": 20, "declineCooldownSeconds": 60});
    let mut config = mode_config("duel", None, 1.0);
    config["acceptance"] = acceptance.clone();
    game_modes::replace(&env.db, &env.project_id, "duel", config, Utc::now())
        .await
        .unwrap();
    let a = env.add("a", 1500.0).await;
    let b = env.add("b", 1500.0).await;
    let c = env.add("c", 2900.0).await; // out of range: waits
    let token = env.lease("w1", Duration::from_secs(5)).await;
    env.tick(token).await;
    let match_id = env.pool.proposal_of(&env.mode, &a).await.unwrap();
    assert!(match_id.is_some(), "a and b are proposed");
    env.pool
        .answer(
            &env.mode,
            &a,
            true,
            Utc::now().timestamp_micros() as f64 / 1e6,
        )
        .await
        .unwrap();
    let mut b_updates = env.pool.subscribe_status(&b).await.unwrap();

    let mut config = mode_config("duel", None, 1.0);
    config["acceptance"] = acceptance;
    config["enabled"] = false.into();
    game_modes::replace(&env.db, &env.project_id, "duel", config, Utc::now())
        .await
        .unwrap();
    env.tick(token).await;
    assert_eq!(env.pool.proposal_of(&env.mode, &a).await.unwrap(), None);
    for ticket in [&a, &b, &c] {
        assert!(
            matches!(
                env.pool
                    .search_state(&env.mode, ticket)
                    .await
                    .unwrap()
                    .and_then(SearchState::into_ended),
                Some(Ended::Failed { code, .. }) if code == "GAME_MODE_DISABLED"
            ),
            "{ticket}"
        );
    }
    let now = Utc::now().timestamp_micros() as f64 / 1e6;
    for player in ["a", "b", "c"] {
        assert_eq!(
            env.pool.cooldown_of(&env.mode, player, now).await.unwrap(),
            None,
            "{player} is not cooled down"
        );
    }
    let message = tokio::time::timeout(Duration::from_secs(2), b_updates.next())
        .await
        .unwrap()
        .unwrap();
    let message: serde_json::Value = serde_json::from_str(&message).unwrap();
    assert_eq!(message["code"], "GAME_MODE_DISABLED", "{message}");
}
