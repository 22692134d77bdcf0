//! Stored webhook errors that named the address a refused host resolved to
//! lose that address (docs/webhooks.md, "Which URLs are accepted"); other
//! errors stay as they were. On SQLite and on PostgreSQL.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use matchplane_migrations::{migrate, Migrator};
use matchplane_store::test_support::TestDatabase;
use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::{ConnectionTrait, Database, Statement};

async fn stored_refusals_lose_their_address(url: &str) {
    let db = Database::connect(url).await.unwrap();
    let before = Migrator::migrations()
        .iter()
        .position(|m| MigrationName::name(m.as_ref()) == "m20261207_000199_w_refusal_addresses")
        .unwrap();
    <Migrator as MigratorTrait>::up(&db, Some(before.try_into().unwrap()))
        .await
        .unwrap();
    let backend = db.get_database_backend();
    let at = "'2026-12-01T00:00:00Z'";
    let leaked = "refused: the host is or resolves to a non-public address (10.0.0.5)";
    let kept = "the host `hooks.nowhere.invalid` does not resolve";
    for sql in [
        format!("INSERT INTO projects (id, name, tier, created_at, updated_at) VALUES ('prj_1', 'p', 'free', {at}, {at})"),
        format!("INSERT INTO webhook_deliveries (id, project_id, game_mode, event_type, payload, status, created_at, updated_at) VALUES ('dlv_1', 'prj_1', 'duel', 'match.made', '{{}}', 'failed', {at}, {at})"),
        format!("INSERT INTO webhook_attempts (id, delivery_id, project_id, attempted_at, latency_ms, error) VALUES ('att_1', 'dlv_1', 'prj_1', {at}, 0, '{leaked}')"),
        format!("INSERT INTO webhook_attempts (id, delivery_id, project_id, attempted_at, latency_ms, error) VALUES ('att_2', 'dlv_1', 'prj_1', {at}, 0, '{kept}')"),
        format!("INSERT INTO webhook_health (project_id, game_mode, consecutive_failures, last_error, updated_at) VALUES ('prj_1', 'duel', 1, '{leaked}', {at})"),
        format!("INSERT INTO webhook_health (project_id, game_mode, consecutive_failures, last_error, updated_at) VALUES ('prj_1', 'solo', 1, '{kept}', {at})"),
    ] {
        db.execute(Statement::from_string(backend, sql)).await.unwrap();
    }
    migrate(&db).await.unwrap();
    let texts = |sql: &'static str| {
        let db = &db;
        async move {
            db.query_all(Statement::from_string(backend, sql))
                .await
                .unwrap()
                .iter()
                .map(|r| r.try_get_by_index::<String>(0).unwrap())
                .collect::<Vec<String>>()
        }
    };
    let cleaned = "refused: the host is or resolves to a non-public address";
    assert_eq!(
        texts("SELECT error FROM webhook_attempts ORDER BY id").await,
        [cleaned, kept]
    );
    assert_eq!(
        texts("SELECT last_error FROM webhook_health ORDER BY game_mode").await,
        [cleaned, kept]
    );
    db.close().await.unwrap();
}

#[tokio::test]
async fn stored_refusals_lose_their_address_on_sqlite() {
    let database = TestDatabase::sqlite("mp_t_refusals_");
    stored_refusals_lose_their_address(database.url()).await;
}

#[tokio::test]
async fn stored_refusals_lose_their_address_on_postgres() {
    let database = TestDatabase::create("mp_t_refusals_").await;
    stored_refusals_lose_their_address(database.url()).await;
}
