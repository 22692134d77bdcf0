//! The recording key an installation keeps (docs/retention.md, "Erasing a
//! player"): `matchplane api` and `matchplane worker` as separate processes,
//! neither given `MATCHPLANE_RECORDING_KEY`, hash a player the same (the
//! worker's `matched` end links to the API's start), and an API restarted
//! since still finds every recorded event of the player it erases.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::json;
use std::time::{Duration, Instant};
use support::{count, redis_url, Deployment};

/// Recorded rows of `project`, with `filter` (SQL over `search_recordings`).
async fn rows(d: &Deployment, filter: &str) -> i64 {
    let sql = format!("SELECT count(*) AS n FROM search_recordings WHERE project_id = $1 {filter}");
    count(d.database.url(), &sql, vec![d.project.clone().into()]).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn without_a_configured_key_every_process_and_restart_hashes_alike() {
    let mut d = Deployment::start("reckey", &redis_url(), 1, &[]).await;
    d.mode(json!({"name": "duel", "matchShape": [1, 1], "matchmakingCycleDurationSeconds": 1,
        "algorithm": {"type": "mmr", "minMmr": 0, "maxMmr": 3000, "baseTolerance": 100, "expansionMultiplier": 2},
        "recording": {"enabled": true, "retentionDays": 7}}))
        .await;
    for player in ["rk-a", "rk-b"] {
        let (_, token) = d.ticket("duel", player, 1500.0).await;
        assert_eq!(d.rest_search(&token).await.status, 202);
    }
    // Two starts (the API's) and two `matched` ends (the worker's), the
    // worker's rows written in the background.
    let deadline = Instant::now() + Duration::from_secs(30);
    while rows(&d, "").await < 4 {
        assert!(
            Instant::now() < deadline,
            "recorded {} rows, want 2 starts and 2 matched ends",
            rows(&d, "").await
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    // Each player's start and end carry one hash: two hashes in all.
    let hashes = rows(
        &d,
        "AND player_hash IN (SELECT player_hash FROM search_recordings GROUP BY player_hash HAVING count(*) = 2)",
    )
    .await;
    assert_eq!(hashes, 4, "a start and its end hashed differently");

    // A restarted API erases all of one player's rows.
    d.restart_api(2).await;
    let (status, erased) = d
        .api
        .call(
            reqwest::Method::DELETE,
            &format!("/v1/projects/{}/players/rk-a", d.project),
            &d.bearer,
            None,
        )
        .await;
    assert_eq!(status, 200, "{erased}");
    assert_eq!(erased["recordedEventsDeleted"], 2, "{erased}");
    assert_eq!(rows(&d, "").await, 2, "the other player's rows stay");
}
