//! `match_tickets` is keyed by ticket and match (docs/acceptance.md,
//! "Releasing a match"): the rows stored before keep their values and the
//! index on `match_id`, a ticket seated again in another match gets a
//! second row, and down keeps each ticket's latest match. On SQLite and on
//! PostgreSQL.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use matchplane_migrations::{migrate, Migrator};
use matchplane_store::test_support::TestDatabase;
use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::{ConnectionTrait, Database, DatabaseBackend, Statement};

const NAME: &str = "m20261209_000201_y_match_ticket_seatings";

fn seat(ticket: &str, match_id: &str, data: &str) -> String {
    format!(
        "INSERT INTO match_tickets (ticket_id, match_id, project_id, game_mode, player_id, \
         token_hash, created_at, expires_at, data) VALUES ('{ticket}', '{match_id}', 'prj_1', \
         'duel', 'ana', 'h', 1.5, 2.5, '{data}')"
    )
}

async fn seats_are_keyed_by_ticket_and_match(url: &str) {
    let db = Database::connect(url).await.unwrap();
    let before = Migrator::migrations()
        .iter()
        .position(|m| MigrationName::name(m.as_ref()) == NAME)
        .unwrap();
    <Migrator as MigratorTrait>::up(&db, Some(before.try_into().unwrap()))
        .await
        .unwrap();
    let backend = db.get_database_backend();
    let run = |sql: String| {
        let db = &db;
        async move { db.execute(Statement::from_string(backend, sql)).await }
    };
    run(seat("tkt_1", "mat_1", r#"{"loadout": "a"}"#))
        .await
        .unwrap();
    // Keyed by ticket: a second match of the same ticket is refused.
    assert!(run(seat("tkt_1", "mat_2", "{}")).await.is_err());
    migrate(&db).await.unwrap();
    run(seat("tkt_1", "mat_2", r#"{"loadout": "b"}"#))
        .await
        .unwrap();
    assert!(
        run(seat("tkt_1", "mat_2", "{}")).await.is_err(),
        "one row per ticket and match"
    );
    let rows = |sql: &'static str| {
        let db = &db;
        async move {
            db.query_all(Statement::from_string(backend, sql))
                .await
                .unwrap()
                .iter()
                .map(|r| {
                    (
                        r.try_get_by_index::<String>(0).unwrap(),
                        r.try_get_by_index::<String>(1).unwrap(),
                    )
                })
                .collect::<Vec<_>>()
        }
    };
    let all = "SELECT match_id, data FROM match_tickets ORDER BY match_id";
    assert_eq!(
        rows(all).await,
        [
            ("mat_1".to_owned(), r#"{"loadout": "a"}"#.to_owned()),
            ("mat_2".to_owned(), r#"{"loadout": "b"}"#.to_owned())
        ]
    );
    let index = match backend {
        DatabaseBackend::Sqlite => {
            "SELECT name, tbl_name FROM sqlite_master WHERE type = 'index' AND name = 'idx_match_tickets_match_id'"
        }
        _ => "SELECT indexname, tablename FROM pg_indexes WHERE indexname = 'idx_match_tickets_match_id'",
    };
    assert_eq!(rows(index).await.len(), 1);
    // Down to before this migration (and those after it).
    let steps = <Migrator as MigratorTrait>::migrations()
        .iter()
        .rev()
        .position(|m| m.name() == NAME)
        .unwrap()
        + 1;
    <Migrator as MigratorTrait>::down(&db, Some(steps as u32))
        .await
        .unwrap();
    assert_eq!(
        rows(all).await,
        [("mat_2".to_owned(), r#"{"loadout": "b"}"#.to_owned())]
    );
    assert_eq!(rows(index).await.len(), 1);
    db.close().await.unwrap();
}

#[tokio::test]
async fn seats_are_keyed_by_ticket_and_match_on_sqlite() {
    let database = TestDatabase::sqlite("mp_t_seatings_");
    seats_are_keyed_by_ticket_and_match(database.url()).await;
}

#[tokio::test]
async fn seats_are_keyed_by_ticket_and_match_on_postgres() {
    let database = TestDatabase::create("mp_t_seatings_").await;
    seats_are_keyed_by_ticket_and_match(database.url()).await;
}
