//! Every migration applies, reverts and re-applies on PostgreSQL (a fresh
//! `mp_t_<random>` database through `MATCHPLANE_TEST_DATABASE_URL`) and on
//! SQLite (a temp file); the tiers are seeded with docs/game-modes.md#tier-limits's three.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use matchplane_migrations::{migrate, pending, Migrator};
use matchplane_store::test_support::TestDatabase;
use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::{ConnectionTrait, Database, Statement};

async fn round_trip(url: &str) {
    let db = Database::connect(url).await.unwrap();
    let total = pending(&db).await.unwrap();
    assert!(total >= 3);
    migrate(&db).await.unwrap();
    assert_eq!(pending(&db).await.unwrap(), 0);
    let backend = db.get_database_backend();
    let tiers = db
        .query_all(Statement::from_string(
            backend,
            "SELECT name, max_game_modes, requests_per_second FROM tiers ORDER BY requests_per_second",
        ))
        .await
        .unwrap();
    let names: Vec<String> = tiers
        .iter()
        .map(|r| r.try_get("", "name").unwrap())
        .collect();
    assert_eq!(names, ["free", "pro", "enterprise"]);
    let free_modes: i64 = tiers[0].try_get("", "max_game_modes").unwrap();
    assert_eq!(free_modes, 3);
    let pending_tickets: Vec<i64> = db
        .query_all(Statement::from_string(
            backend,
            "SELECT max_pending_tickets FROM tiers ORDER BY requests_per_second",
        ))
        .await
        .unwrap()
        .iter()
        .map(|r| r.try_get("", "max_pending_tickets").unwrap())
        .collect();
    assert_eq!(pending_tickets, [10_000, 1_000_000, 20_000_000]);
    let retention_days: Vec<i32> = db
        .query_all(Statement::from_string(
            backend,
            "SELECT retention_days FROM tiers ORDER BY requests_per_second",
        ))
        .await
        .unwrap()
        .iter()
        .map(|r| r.try_get("", "retention_days").unwrap())
        .collect();
    assert_eq!(retention_days, [30, 90, 365]);
    // The worker's incremental listing of modes reads by `updated_at`.
    let index_query = match backend {
        sea_orm_migration::sea_orm::DatabaseBackend::Sqlite => {
            "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'game_modes'"
        }
        _ => "SELECT indexname AS name FROM pg_indexes WHERE tablename = 'game_modes'",
    };
    let indexes: Vec<String> = db
        .query_all(Statement::from_string(backend, index_query))
        .await
        .unwrap()
        .iter()
        .map(|r| r.try_get("", "name").unwrap())
        .collect();
    assert!(
        indexes.iter().any(|i| i == "idx_game_modes_updated_at"),
        "{indexes:?}"
    );

    Migrator::down(&db, None).await.unwrap();
    assert_eq!(pending(&db).await.unwrap(), total);
    migrate(&db).await.unwrap();
    assert_eq!(pending(&db).await.unwrap(), 0);
    db.close().await.unwrap();
}

#[tokio::test]
async fn up_down_up_on_sqlite() {
    let database = TestDatabase::sqlite("mp_t_mig_");
    round_trip(database.url()).await;
}

#[tokio::test]
async fn up_down_up_on_postgres() {
    let database = TestDatabase::create("mp_t_mig_").await;
    round_trip(database.url()).await;
}

/// `pending` (behind `migrate --check` and the API's start-up check) only
/// reads: on an empty database it creates no table, and on a migrated one
/// it counts what is left.
async fn pending_only_reads(url: &str) {
    let db = Database::connect(url).await.unwrap();
    let manager = SchemaManager::new(&db);
    let total = Migrator::migrations().len();
    assert_eq!(pending(&db).await.unwrap(), total);
    assert_eq!(pending(&db).await.unwrap(), total);
    assert!(
        !manager.has_table("seaql_migrations").await.unwrap(),
        "the check created the migration table"
    );
    assert!(!manager.has_table("tiers").await.unwrap());
    Migrator::up(&db, Some(2)).await.unwrap();
    assert_eq!(pending(&db).await.unwrap(), total - 2);
    migrate(&db).await.unwrap();
    assert_eq!(pending(&db).await.unwrap(), 0);
    db.close().await.unwrap();
}

#[tokio::test]
async fn pending_only_reads_on_sqlite() {
    let database = TestDatabase::sqlite("mp_t_mig_");
    pending_only_reads(database.url()).await;
}

#[tokio::test]
async fn pending_only_reads_on_postgres() {
    let database = TestDatabase::create("mp_t_mig_").await;
    pending_only_reads(database.url()).await;
}
