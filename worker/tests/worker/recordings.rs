//! The pruning of the search recordings: each mode's rows past its
//! `recording.retentionDays`, 7 days for a mode without the block or gone,
//! never longer than the project's tier `retentionDays`; a pass's budget
//! shared by the modes, and a pass that stops at it says so.

use crate::env::{mode_config, Env};
use chrono::{TimeDelta, Utc};
use matchplane_matchmaker::Tier;
use matchplane_store::repos::recordings::{self, Kind, NewRecording};
use matchplane_store::repos::{game_modes, projects, retention, tiers};
use matchplane_worker::recordings::{prune, PruneBudget};
use matchplane_worker::retention::{Pruner, RetentionConfig};
use sea_orm::DatabaseConnection;
use serde_json::json;

fn row(project: &str, mode: &str, days_ago: i64, player: &str) -> NewRecording {
    let at_ms = (Utc::now() - TimeDelta::days(days_ago)).timestamp_millis();
    NewRecording {
        mmr: Some(1500.0),
        ..NewRecording::event(project, mode, Kind::Start, player.to_owned(), at_ms)
    }
}

#[tokio::test]
async fn recordings_past_their_mode_retention_are_pruned() {
    let env = Env::new(None, 1.0).await;
    let p = env.project_id.clone();
    let mut kept_long = mode_config("kept", None, 1.0);
    kept_long["recording"] = json!({"enabled": true, "retentionDays": 30});
    game_modes::create(&env.db, &p, "kept", kept_long, "whsec_x", Utc::now())
        .await
        .unwrap();
    recordings::insert_batch(
        &env.db,
        &[
            row(&p, "duel", 8, "old"),
            row(&p, "duel", 6, "recent"),
            row(&p, "kept", 8, "old-kept"),
            row(&p, "kept", 31, "too-old"),
            row(&p, "gone", 8, "old-gone"),
        ],
    )
    .await
    .unwrap();
    let report = prune_once(&env.db).await;
    assert_eq!(report.deleted, 3);
    assert!(report.complete, "{report:?}");
    assert_eq!(left(&env.db, &p, "duel").await, ["recent"]);
    assert_eq!(left(&env.db, &p, "kept").await, ["old-kept"]);
    assert!(left(&env.db, &p, "gone").await.is_empty());
    assert_eq!(prune_once(&env.db).await.deleted, 0);
}

/// One [`prune`] at now with the default budget and the projects' tiers.
async fn prune_once(db: &DatabaseConnection) -> matchplane_worker::recordings::PruneReport {
    let tiers = retention::projects(db).await.unwrap();
    prune(db, Utc::now(), &tiers, PruneBudget::default())
        .await
        .unwrap()
}

/// The player hashes of `mode`'s rows left, oldest first.
async fn left(db: &DatabaseConnection, project: &str, mode: &str) -> Vec<String> {
    recordings::window(db, project, mode, (0, i64::MAX), None, 1_000)
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.player_hash)
        .collect()
}

/// A mode's recording `retentionDays` is capped by the project's tier: a
/// project moved to a tier keeping 1 day loses its 5-day mode's rows older
/// than a day, and so does a mode whose block is gone (7 days otherwise).
#[tokio::test]
async fn the_tiers_retention_caps_a_modes_recording() {
    let env = Env::new(None, 1.0).await;
    let p = env.project_id.clone();
    let mut five = mode_config("five", None, 1.0);
    five["recording"] = json!({"enabled": true, "retentionDays": 5});
    game_modes::create(&env.db, &p, "five", five, "whsec_x", Utc::now())
        .await
        .unwrap();
    let short = Tier {
        name: "short".into(),
        retention_days: 1,
        ..Tier::free()
    };
    tiers::put(&env.db, &short, Utc::now()).await.unwrap();
    projects::update(&env.db, &p, None, Some("short"), Utc::now())
        .await
        .unwrap();
    recordings::insert_batch(
        &env.db,
        &[
            row(&p, "five", 2, "five-2d"),
            row(&p, "five", 0, "five-now"),
            row(&p, "duel", 3, "duel-3d"),
            row(&p, "duel", 0, "duel-now"),
        ],
    )
    .await
    .unwrap();
    let report = prune_once(&env.db).await;
    assert_eq!(report.deleted, 2, "{report:?}");
    assert_eq!(left(&env.db, &p, "five").await, ["five-now"]);
    assert_eq!(left(&env.db, &p, "duel").await, ["duel-now"]);
}

/// One mode's backlog larger than a pass's budget beside two modes with a
/// few old rows: the first pass clears the small modes' old rows and says
/// it stopped at its budget; passes repeated clear the backlog, each
/// within its budget, and the last says it is complete.
#[tokio::test]
async fn one_modes_backlog_does_not_starve_the_others() {
    let env = Env::new(None, 1.0).await;
    let p = env.project_id.clone();
    let mut rows = Vec::new();
    for i in 0..20 {
        rows.push(row(&p, "big", 8 + i, &format!("big-old-{i:02}")));
    }
    rows.push(row(&p, "big", 1, "big-recent"));
    for mode in ["a-small", "z-small"] {
        rows.push(row(&p, mode, 9, &format!("{mode}-old-1")));
        rows.push(row(&p, mode, 8, &format!("{mode}-old-2")));
        rows.push(row(&p, mode, 1, &format!("{mode}-recent")));
    }
    recordings::insert_batch(&env.db, &rows).await.unwrap();

    let cancel = tokio_util::sync::CancellationToken::new();
    let pruner = Pruner {
        db: &env.db,
        holder: "w1",
        config: RetentionConfig {
            recording_batch: 3,
            recording_rows: 9,
            pause: std::time::Duration::from_millis(1),
            ..RetentionConfig::default()
        },
        cancel: &cancel,
    };
    let first = pruner.pass(Utc::now()).await.unwrap().unwrap();
    assert_eq!(first.recorded_events, 9, "{first:?}");
    for mode in ["a-small", "z-small"] {
        assert_eq!(left(&env.db, &p, mode).await, [format!("{mode}-recent")]);
    }
    assert!(!first.complete, "{first:?}");
    assert!(left(&env.db, &p, "big").await.len() > 1);

    let mut passes = 1;
    let mut deleted = first.recorded_events;
    loop {
        let report = pruner.pass(Utc::now()).await.unwrap().unwrap();
        assert!(report.recorded_events <= 9, "{report:?}");
        deleted += report.recorded_events;
        passes += 1;
        if report.complete {
            break;
        }
        assert!(passes < 10, "the backlog never cleared: {report:?}");
    }
    assert_eq!(deleted, 24);
    assert_eq!(left(&env.db, &p, "big").await, ["big-recent"]);
    // Nothing is left: the next pass is complete and deletes nothing.
    let report = pruner.pass(Utc::now()).await.unwrap().unwrap();
    assert!(report.complete, "{report:?}");
    assert_eq!(report.recorded_events, 0, "{report:?}");
}
