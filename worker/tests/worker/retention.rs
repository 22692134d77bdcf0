//! The retention pruning in the worker: one worker at a time holds its
//! lease (kept between passes, taken over once it runs out or is given
//! up), and a running worker prunes a match past its project's
//! `retentionDays` (enterprise: 365) with its delivery, keeping a younger
//! one; a pass that stopped at its budget is followed by the next one after
//! a short pause, not the interval.

use crate::env::Env;
use chrono::{TimeDelta, Utc};
use matchplane_store::entities::{match_, webhook_delivery};
use matchplane_store::repos::recordings::{self, Kind, NewRecording};
use matchplane_store::repos::{deliveries, job_leases, matches};
use matchplane_worker::retention::{Pruner, RetentionConfig, JOB};
use serde_json::json;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

#[tokio::test]
async fn one_worker_at_a_time_prunes() {
    let env = Env::new(None, 1.0).await;
    let cancel = CancellationToken::new();
    let config = RetentionConfig::default();
    let pruner = |holder| Pruner {
        db: &env.db,
        holder,
        config,
        cancel: &cancel,
    };
    let now = Utc::now();
    assert!(pruner("w1").pass(now).await.unwrap().is_some());
    // The holder keeps the lease between passes; the other skips.
    assert!(pruner("w2").pass(now).await.unwrap().is_none());
    assert!(pruner("w1").pass(now).await.unwrap().is_some());
    // Once it runs out, another worker takes the job over.
    let later = now + TimeDelta::from_std(config.lease_ttl).unwrap() + TimeDelta::seconds(5);
    assert!(pruner("w2").pass(later).await.unwrap().is_some());
    assert!(pruner("w1").pass(later).await.unwrap().is_none());
    // Given up (a worker's shutdown): taken at once.
    job_leases::release(&env.db, JOB, "w2").await.unwrap();
    assert!(pruner("w1").pass(later).await.unwrap().is_some());
}

/// A match of `days` days ago with one delivery.
async fn stored(env: &Env, days: i64) -> String {
    let at = Utc::now() - TimeDelta::days(days);
    let id = format!("mat_{}", ulid::Ulid::new());
    matches::insert_if_absent(
        &env.db,
        vec![match_::Model {
            id: id.clone(),
            project_id: env.project_id.clone(),
            game_mode: "duel".into(),
            game_mode_version: 1,
            teams: json!([]),
            quality: json!({}),
            created_at: at,
            match_shape: None,
            seats_open: None,
            region: None,
            status: "made".into(),
            answers: None,
            made_at: None,
            assignment: None,
            attributes: None,
        }],
    )
    .await
    .unwrap();
    deliveries::queue_if_absent(
        &env.db,
        vec![webhook_delivery::Model {
            id: format!("dlv_{}", ulid::Ulid::new()),
            project_id: env.project_id.clone(),
            game_mode: "duel".into(),
            match_id: Some(id.clone()),
            event_type: "match.made".into(),
            payload: "{}".into(),
            status: "succeeded".into(),
            attempt_count: 1,
            next_attempt_at: None,
            locked_until: None,
            lock_token: None,
            attempts_before_run: 0,
            created_at: at,
            updated_at: at,
        }],
    )
    .await
    .unwrap();
    id
}

#[tokio::test]
async fn a_running_worker_prunes_past_the_tiers_retention() {
    let env = Env::new(None, 1.0).await;
    let (old, young) = (stored(&env, 400).await, stored(&env, 300).await);
    let mut config = env.worker_config("w1");
    config.retention.interval = Duration::from_millis(100);
    let shutdown = CancellationToken::new();
    let worker = env.spawn_worker(config, &shutdown);
    let deadline = Instant::now() + Duration::from_secs(20);
    while matches::get(&env.db, &env.project_id, &old).await.is_ok() {
        assert!(Instant::now() < deadline, "the old match was not pruned");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    shutdown.cancel();
    worker.await.unwrap().unwrap();
    assert!(deliveries::of_match(&env.db, &env.project_id, &old)
        .await
        .unwrap()
        .is_empty());
    matches::get(&env.db, &env.project_id, &young)
        .await
        .unwrap();
    assert_eq!(
        deliveries::of_match(&env.db, &env.project_id, &young)
            .await
            .unwrap()
            .len(),
        1
    );
}

/// A recording backlog of 12 rows against a pass's budget of 4: the
/// worker's first pass stops at its budget, and the next ones follow after
/// [`RetentionConfig::backlog_pause`] (the interval is an hour) until the
/// backlog is gone.
#[tokio::test]
async fn a_pass_stopped_at_its_budget_is_followed_soon() {
    let env = Env::new(None, 1.0).await;
    let old = (Utc::now() - TimeDelta::days(8)).timestamp_millis();
    let rows: Vec<_> = (0..12)
        .map(|i| NewRecording {
            mmr: Some(1500.0),
            ..NewRecording::event(
                &env.project_id,
                "duel",
                Kind::Start,
                format!("p{i}"),
                old + i,
            )
        })
        .collect();
    recordings::insert_batch(&env.db, &rows).await.unwrap();
    let mut config = env.worker_config("w1");
    config.retention.interval = Duration::from_secs(3600);
    config.retention.recording_batch = 2;
    config.retention.recording_rows = 4;
    config.retention.backlog_pause = Duration::from_millis(50);
    let shutdown = CancellationToken::new();
    let worker = env.spawn_worker(config, &shutdown);
    let deadline = Instant::now() + Duration::from_secs(20);
    let window = (0, i64::MAX);
    while !recordings::window(&env.db, &env.project_id, "duel", window, None, 100)
        .await
        .unwrap()
        .is_empty()
    {
        assert!(
            Instant::now() < deadline,
            "the recording backlog waited for the next interval"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    shutdown.cancel();
    worker.await.unwrap().unwrap();
}
