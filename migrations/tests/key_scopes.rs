//! Keys that existed before `api_keys.scopes` become `admin`: what they did
//! before, they still may. On SQLite and on PostgreSQL.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use matchplane_migrations::{migrate, Migrator};
use matchplane_store::test_support::TestDatabase;
use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::{ConnectionTrait, Database, Statement};

async fn older_keys_become_admin(url: &str) {
    let db = Database::connect(url).await.unwrap();
    let before = Migrator::migrations()
        .iter()
        .position(|m| MigrationName::name(m.as_ref()) == "m20261201_000012_d_key_scopes")
        .unwrap();
    <Migrator as MigratorTrait>::up(&db, Some(before.try_into().unwrap()))
        .await
        .unwrap();
    let backend = db.get_database_backend();
    for sql in [
        "INSERT INTO projects (id, name, tier, created_at, updated_at) VALUES ('prj_old', 'old', 'free', '2026-11-30T00:00:00Z', '2026-11-30T00:00:00Z')",
        "INSERT INTO api_keys (id, project_id, name, prefix, hash, created_at) VALUES ('key_old', 'prj_old', 'old', 'mp_sk_old', 'ab', '2026-11-30T00:00:00Z')",
    ] {
        db.execute(Statement::from_string(backend, sql)).await.unwrap();
    }
    migrate(&db).await.unwrap();
    let row = db
        .query_one(Statement::from_string(
            backend,
            "SELECT scopes FROM api_keys WHERE id = 'key_old'",
        ))
        .await
        .unwrap()
        .unwrap();
    let scopes: String = row.try_get("", "scopes").unwrap();
    assert_eq!(scopes, "admin");
    db.close().await.unwrap();
}

#[tokio::test]
async fn older_keys_become_admin_on_sqlite() {
    let database = TestDatabase::sqlite("mp_t_scopes_");
    older_keys_become_admin(database.url()).await;
}

#[tokio::test]
async fn older_keys_become_admin_on_postgres() {
    let database = TestDatabase::create("mp_t_scopes_").await;
    older_keys_become_admin(database.url()).await;
}
