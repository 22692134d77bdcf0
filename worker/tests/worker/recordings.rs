//! The pruning of the search recordings: each mode's rows past its
//! `recording.retentionDays`, 7 days for a mode without the block or gone.

use crate::env::{mode_config, Env};
use chrono::{TimeDelta, Utc};
use matchplane_store::repos::game_modes;
use matchplane_store::repos::recordings::{self, Kind, NewRecording};
use serde_json::json;

fn row(project: &str, mode: &str, days_ago: i64, player: &str) -> NewRecording {
    NewRecording {
        project_id: project.to_owned(),
        game_mode: mode.to_owned(),
        at_ms: (Utc::now() - TimeDelta::days(days_ago)).timestamp_millis(),
        kind: Kind::Start,
        player_hash: player.to_owned(),
        mmr: Some(1500.0),
        latencies: None,
        party_hash: None,
        party_members: None,
        outcome: None,
        attributes: None,
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
    let deleted = matchplane_worker::recordings::prune(&env.db, Utc::now())
        .await
        .unwrap();
    assert_eq!(deleted, 3);
    let window = (0, i64::MAX);
    let left = |mode: &'static str| {
        let (db, p) = (env.db.clone(), p.clone());
        async move {
            recordings::window(&db, &p, mode, window, None, 100)
                .await
                .unwrap()
                .into_iter()
                .map(|r| r.player_hash)
                .collect::<Vec<_>>()
        }
    };
    assert_eq!(left("duel").await, ["recent"]);
    assert_eq!(left("kept").await, ["old-kept"]);
    assert!(left("gone").await.is_empty());
    assert_eq!(
        matchplane_worker::recordings::prune(&env.db, Utc::now())
            .await
            .unwrap(),
        0
    );
}
