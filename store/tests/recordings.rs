//! A mode's recorded searches on PostgreSQL (`MATCHPLANE_TEST_DATABASE_URL`,
//! a fresh `mp_t_<random>` database) and SQLite (a temp file): deleting a
//! mode deletes its recording, a batch holding the rows of a deleted
//! project stores the other projects' rows, and the stored recording key
//! is drawn once.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use chrono::Utc;
use matchplane_store::repos::recordings::{self, IdHasher, Kind, NewRecording};
use matchplane_store::repos::{game_modes, instance_keys, projects};
use matchplane_store::test_support::TestDatabase;
use sea_orm::DatabaseConnection;
use serde_json::json;

/// A start of `player` in `project_id`'s `mode` at `at_ms`.
fn start(project_id: &str, mode: &str, player: &str, at_ms: i64) -> NewRecording {
    NewRecording {
        mmr: Some(1500.0),
        ..NewRecording::event(project_id, mode, Kind::Start, player.to_owned(), at_ms)
    }
}

/// The players of the mode's recorded rows, in time order.
async fn players(db: &DatabaseConnection, project_id: &str, mode: &str) -> Vec<String> {
    recordings::window(db, project_id, mode, (0, i64::MAX), None, 1000)
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.player_hash)
        .collect()
}

async fn deleting_a_mode_deletes_its_recording(postgres: bool) {
    let (db, _database) = TestDatabase::migrated(postgres).await;
    let db = &db;
    let now = Utc::now();
    let a = projects::create(db, "A", "pro", now).await.unwrap();
    let b = projects::create(db, "B", "pro", now).await.unwrap();
    let config = |name: &str| json!({"name": name, "matchShape": [1, 1]});
    for (project, mode) in [(&a.id, "rteam"), (&a.id, "kept"), (&b.id, "rteam")] {
        game_modes::create(db, project, mode, config(mode), "whsec_x", now)
            .await
            .unwrap();
    }
    recordings::insert_batch(
        db,
        &[
            start(&a.id, "rteam", "p1", 1_000),
            start(&a.id, "rteam", "p2", 2_000),
            start(&a.id, "kept", "p3", 3_000),
            start(&b.id, "rteam", "p4", 4_000),
        ],
    )
    .await
    .unwrap();

    game_modes::delete(db, &a.id, "rteam").await.unwrap();
    assert!(players(db, &a.id, "rteam").await.is_empty());
    // A mode created again under the name is a new mode: nothing recorded.
    game_modes::create(db, &a.id, "rteam", config("rteam"), "whsec_y", now)
        .await
        .unwrap();
    assert!(players(db, &a.id, "rteam").await.is_empty());
    assert_eq!(
        recordings::starts_in(db, &a.id, "rteam", (0, i64::MAX))
            .await
            .unwrap(),
        0
    );
    // Another mode's and another project's same-named mode's rows stay.
    assert_eq!(players(db, &a.id, "kept").await, ["p3"]);
    assert_eq!(players(db, &b.id, "rteam").await, ["p4"]);
}

#[tokio::test]
async fn deleting_a_mode_deletes_its_recording_postgres() {
    deleting_a_mode_deletes_its_recording(true).await;
}

#[tokio::test]
async fn deleting_a_mode_deletes_its_recording_sqlite() {
    deleting_a_mode_deletes_its_recording(false).await;
}

/// The same id hashes differently in two projects and the same within one
/// (every row the hasher makes carries the project's hash).
#[test]
fn ids_hash_per_project() {
    let hasher = IdHasher::new(b"key").unwrap();
    let end = |project: &str, player: &str| {
        hasher
            .end_row(project, "duel", player, "matched".into(), 0)
            .player_hash
    };
    assert_ne!(
        end("prj_a", "76561198000000000"),
        end("prj_b", "76561198000000000")
    );
    assert_eq!(end("prj_a", "alice"), end("prj_a", "alice"));
    assert_eq!(end("prj_a", "alice").len(), 32);
    assert_ne!(end("prj_a", "alice"), end("prj_a", "bob"));
    assert_eq!(end("prj_a", "alice"), hasher.hash("prj_a", "alice"));
}

/// Rows queued before their mode was deleted and written after it are
/// left out, also once a mode of the name is created again: the new mode
/// records only its own searches (docs/game-modes.md, "Changing a mode").
async fn a_deleted_modes_rows_never_reach_a_new_mode(postgres: bool) {
    let (db, _database) = TestDatabase::migrated(postgres).await;
    let db = &db;
    let now = Utc::now();
    let at = |ms: i64| chrono::DateTime::from_timestamp_millis(ms).unwrap();
    let a = projects::create(db, "A", "pro", now).await.unwrap();
    let config = json!({"name": "orphan", "matchShape": [1, 1]});
    for mode in ["orphan", "kept"] {
        game_modes::create(db, &a.id, mode, config.clone(), "whsec_x", at(1_000))
            .await
            .unwrap();
    }
    // Queued while the first `orphan` lived…
    let queued = [
        start(&a.id, "orphan", "old1", 2_000),
        start(&a.id, "orphan", "old2", 3_000),
        start(&a.id, "kept", "k1", 3_000),
    ];
    game_modes::delete(db, &a.id, "orphan").await.unwrap();
    // …written after its delete: nothing of it is stored.
    let written = recordings::insert_batch_of_live_projects(db, &queued)
        .await
        .unwrap();
    assert_eq!((written.stored, written.of_gone_modes), (1, 2));
    assert!(players(db, &a.id, "orphan").await.is_empty());
    // Created again: the old mode's rows written late still stay out, the
    // new mode's own rows are stored.
    game_modes::create(db, &a.id, "orphan", config, "whsec_y", at(5_000))
        .await
        .unwrap();
    let late = [queued[0].clone(), start(&a.id, "orphan", "new1", 6_000)];
    let written = recordings::insert_batch_of_live_projects(db, &late)
        .await
        .unwrap();
    assert_eq!((written.stored, written.of_gone_modes), (1, 1));
    assert_eq!(players(db, &a.id, "orphan").await, ["new1"]);
    assert_eq!(
        recordings::starts_in(db, &a.id, "orphan", (0, i64::MAX))
            .await
            .unwrap(),
        1
    );
    // The worker's ends go the same way.
    let end =
        IdHasher::new(b"k")
            .unwrap()
            .end_row(&a.id, "orphan", "old1", "expired".into(), 4_000);
    assert_eq!(
        recordings::insert_batch_of_live_modes(db, &[end])
            .await
            .unwrap(),
        0
    );
    assert_eq!(players(db, &a.id, "kept").await, ["k1"]);
}

#[tokio::test]
async fn a_deleted_modes_rows_never_reach_a_new_mode_postgres() {
    a_deleted_modes_rows_never_reach_a_new_mode(true).await;
}

#[tokio::test]
async fn a_deleted_modes_rows_never_reach_a_new_mode_sqlite() {
    a_deleted_modes_rows_never_reach_a_new_mode(false).await;
}

/// A batch of several projects' rows, one of them deleted since its rows
/// were queued: the others' rows are stored, the deleted one's left out.
async fn a_deleted_projects_rows_leave_the_batch(postgres: bool) {
    let (db, _database) = TestDatabase::migrated(postgres).await;
    let db = &db;
    let now = Utc::now();
    let a = projects::create(db, "A", "pro", now).await.unwrap();
    let b = projects::create(db, "B", "pro", now).await.unwrap();
    let c = projects::create(db, "C", "pro", now).await.unwrap();
    let since = chrono::DateTime::from_timestamp_millis(0).unwrap();
    for project in [&a.id, &b.id, &c.id] {
        let config = json!({"name": "duel", "matchShape": [1, 1]});
        game_modes::create(db, project, "duel", config, "whsec_x", since)
            .await
            .unwrap();
    }
    let batch = [
        start(&a.id, "duel", "p1", 1_000),
        start(&b.id, "duel", "p2", 2_000),
        start(&c.id, "duel", "p3", 3_000),
        start(&b.id, "duel", "p4", 4_000),
        start(&a.id, "duel", "p5", 5_000),
    ];
    projects::delete(db, &b.id).await.unwrap();
    // The batch as it was is refused (the deleted project's foreign key)…
    assert!(recordings::insert_batch(db, &batch).await.is_err());
    assert!(players(db, &a.id, "duel").await.is_empty());
    // …and written again without its rows.
    let written = recordings::insert_batch_of_live_projects(db, &batch)
        .await
        .unwrap();
    assert_eq!(
        written,
        recordings::BatchWritten {
            stored: 3,
            // The project's modes went with it.
            of_deleted_projects: 0,
            of_gone_modes: 2,
        }
    );
    assert_eq!(players(db, &a.id, "duel").await, ["p1", "p5"]);
    assert_eq!(players(db, &c.id, "duel").await, ["p3"]);
    assert!(players(db, &b.id, "duel").await.is_empty());
    // A batch of live projects only is one statement, as before.
    let written = recordings::insert_batch_of_live_projects(db, &batch[..1])
        .await
        .unwrap();
    assert_eq!(written.stored, 1);
    assert_eq!(written.of_deleted_projects, 0);
    // Every project gone: nothing to store, nothing refused.
    projects::delete(db, &c.id).await.unwrap();
    let written = recordings::insert_batch_of_live_projects(db, &batch[1..4])
        .await
        .unwrap();
    assert_eq!(written.stored, 0);
    assert_eq!(written.of_gone_modes, 3);
}

#[tokio::test]
async fn a_deleted_projects_rows_leave_the_batch_postgres() {
    a_deleted_projects_rows_leave_the_batch(true).await;
}

#[tokio::test]
async fn a_deleted_projects_rows_leave_the_batch_sqlite() {
    a_deleted_projects_rows_leave_the_batch(false).await;
}

/// The recording key an installation keeps: drawn by the first call,
/// read by every later one (a restarted or second process), one per name.
async fn the_stored_key_is_drawn_once(postgres: bool) {
    let (db, _database) = TestDatabase::migrated(postgres).await;
    let first = instance_keys::get_or_create(&db, instance_keys::RECORDING)
        .await
        .unwrap();
    assert_eq!(first.len(), 64, "{first}");
    assert!(first.bytes().all(|b| b.is_ascii_hexdigit()), "{first}");
    let again = instance_keys::get_or_create(&db, instance_keys::RECORDING)
        .await
        .unwrap();
    assert_eq!(first, again);
    let other = instance_keys::get_or_create(&db, "another").await.unwrap();
    assert_ne!(first, other);
}

#[tokio::test]
async fn the_stored_key_is_drawn_once_postgres() {
    the_stored_key_is_drawn_once(true).await;
}

#[tokio::test]
async fn the_stored_key_is_drawn_once_sqlite() {
    the_stored_key_is_drawn_once(false).await;
}
