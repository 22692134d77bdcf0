//! The matches list (`GET …/matches`: a project's matches newest first,
//! optionally of one mode) reads an index in its order instead of sorting
//! every stored match of the project for each page.

#![allow(clippy::unwrap_used)]

use matchplane_store::test_support::TestDatabase;
use sea_orm::{ConnectionTrait, Statement, TransactionTrait};

/// The plan of the list's query shape, on PostgreSQL with sequential
/// scans off (a table this small would be scanned anyway).
async fn plans(postgres: bool) -> Vec<String> {
    let (db, _database) = TestDatabase::migrated(postgres).await;
    let backend = db.get_database_backend();
    let (explain, filters) = if postgres {
        (
            "EXPLAIN",
            [
                "project_id = 'p'",
                "project_id = 'p' AND game_mode = 'duel' AND id < 'mat_9'",
            ],
        )
    } else {
        (
            "EXPLAIN QUERY PLAN",
            [
                "project_id = 'p'",
                "project_id = 'p' AND game_mode = 'duel' AND id < 'mat_9'",
            ],
        )
    };
    let txn = db.begin().await.unwrap();
    if postgres {
        txn.execute_unprepared("SET LOCAL enable_seqscan = off")
            .await
            .unwrap();
    }
    let mut out = Vec::new();
    for filter in filters {
        let sql =
            format!("{explain} SELECT * FROM matches WHERE {filter} ORDER BY id DESC LIMIT 51");
        let rows = txn
            .query_all(Statement::from_string(backend, sql))
            .await
            .unwrap();
        let lines: Vec<String> = rows
            .iter()
            .map(|row| {
                let column = if postgres { "QUERY PLAN" } else { "detail" };
                row.try_get::<String>("", column).unwrap()
            })
            .collect();
        out.push(lines.join("\n"));
    }
    txn.commit().await.unwrap();
    out
}

async fn the_list_reads_an_index_in_its_order(postgres: bool) {
    let plans = plans(postgres).await;
    for plan in &plans {
        // SQLite says "USE TEMP B-TREE FOR ORDER BY", PostgreSQL "Sort".
        assert!(
            !plan.contains("TEMP B-TREE") && !plan.contains("Sort"),
            "the list sorts: {plan}"
        );
    }
    assert!(
        plans[0].contains("idx_matches_project_id_id"),
        "{}",
        plans[0]
    );
    assert!(
        plans[1].contains("idx_matches_project_id_game_mode_id"),
        "{}",
        plans[1]
    );
}

#[tokio::test]
async fn the_list_reads_an_index_in_its_order_postgres() {
    the_list_reads_an_index_in_its_order(true).await;
}

#[tokio::test]
async fn the_list_reads_an_index_in_its_order_sqlite() {
    the_list_reads_an_index_in_its_order(false).await;
}
