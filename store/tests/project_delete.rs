//! Deleting a project (docs/retention.md, "Deleting a project") leaves no
//! row of it in any table with a `project_id` column, and every row of
//! another project where it was, on PostgreSQL and SQLite.
//!
//! The tables are read from the migrated schema (`information_schema` on
//! PostgreSQL, `sqlite_master` and `pragma_table_info` on SQLite), and each
//! is seeded from its own columns: every string column (so every id and
//! every reference to one) holds the project's id, so the rows of one
//! project reference each other and their foreign keys hold. A table added
//! later is covered without a change here; one that cannot be seeded so
//! fails the test, naming it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use chrono::Utc;
use matchplane_store::repos::projects;
use matchplane_store::test_support::TestDatabase;
use sea_orm::{ConnectionTrait, DatabaseBackend, DatabaseConnection, Statement};

/// A column a row must be given a value for (`NOT NULL`, no default).
struct Required {
    name: String,
    /// The declared type, lower case.
    kind: String,
}

async fn rows(db: &DatabaseConnection, sql: &str) -> Vec<sea_orm::QueryResult> {
    let backend = db.get_database_backend();
    db.query_all(Statement::from_string(backend, sql.to_owned()))
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
}

/// Every table with a `project_id` column, by name.
async fn project_tables(db: &DatabaseConnection) -> Vec<String> {
    let sql = match db.get_database_backend() {
        DatabaseBackend::Postgres => {
            "SELECT table_name::text AS name FROM information_schema.columns \
             WHERE table_schema = current_schema() AND column_name = 'project_id' \
             ORDER BY 1"
        }
        _ => {
            "SELECT m.name AS name FROM sqlite_master m WHERE m.type = 'table' \
             AND EXISTS (SELECT 1 FROM pragma_table_info(m.name) p WHERE p.name = 'project_id') \
             ORDER BY 1"
        }
    };
    rows(db, sql)
        .await
        .iter()
        .map(|r| r.try_get::<String>("", "name").unwrap())
        .collect()
}

/// The columns of `table` a new row needs a value for.
async fn required(db: &DatabaseConnection, table: &str) -> Vec<Required> {
    let sql = match db.get_database_backend() {
        DatabaseBackend::Postgres => format!(
            "SELECT column_name::text AS name, data_type::text AS kind FROM information_schema.columns \
             WHERE table_schema = current_schema() AND table_name = '{table}' \
             AND is_nullable = 'NO' AND column_default IS NULL"
        ),
        // An `INTEGER` primary key is the rowid: it numbers itself.
        _ => format!(
            "SELECT name, type AS kind FROM pragma_table_info('{table}') \
             WHERE \"notnull\" = 1 AND dflt_value IS NULL \
             AND NOT (pk = 1 AND upper(type) = 'INTEGER')"
        ),
    };
    rows(db, &sql)
        .await
        .iter()
        .map(|r| Required {
            name: r.try_get::<String>("", "name").unwrap(),
            kind: r.try_get::<String>("", "kind").unwrap().to_lowercase(),
        })
        .collect()
}

/// A literal of a column's declared type; strings are `project`'s id.
fn literal(kind: &str, project: &str) -> String {
    let any = |words: &[&str]| words.iter().any(|w| kind.contains(w));
    if any(&[
        "int", "double", "real", "float", "numeric", "decimal", "bool",
    ]) {
        // Quoted: PostgreSQL takes an untyped literal as the column's type
        // (a bare `1` is no boolean), SQLite converts it by affinity.
        "'1'".to_owned()
    } else if any(&["timestamp", "date"]) {
        "'2026-12-01T10:00:00+00:00'".to_owned()
    } else if any(&["json"]) {
        "'{}'".to_owned()
    } else {
        format!("'{project}'")
    }
}

/// Seeds one row of `project` in every table of `tables`; a table whose
/// foreign keys need another table's row first is tried again after it.
async fn seed(db: &DatabaseConnection, tables: &[String], project: &str) {
    let mut pending: Vec<String> = tables.to_vec();
    while !pending.is_empty() {
        let mut failed = Vec::new();
        let mut errors = Vec::new();
        for table in &pending {
            let columns = required(db, table).await;
            let names: Vec<String> = columns.iter().map(|c| format!("\"{}\"", c.name)).collect();
            let values: Vec<String> = columns.iter().map(|c| literal(&c.kind, project)).collect();
            let sql = format!(
                "INSERT INTO \"{table}\" ({}) VALUES ({})",
                names.join(", "),
                values.join(", ")
            );
            let backend = db.get_database_backend();
            if let Err(e) = db.execute(Statement::from_string(backend, sql)).await {
                failed.push(table.clone());
                errors.push(format!("{table}: {e}"));
            }
        }
        assert!(
            failed.len() < pending.len(),
            "tables that could not be seeded: {errors:#?}"
        );
        pending = failed;
    }
}

async fn count(db: &DatabaseConnection, table: &str, project: &str) -> i64 {
    let sql = format!("SELECT COUNT(*) AS n FROM \"{table}\" WHERE project_id = '{project}'");
    rows(db, &sql).await[0].try_get::<i64>("", "n").unwrap()
}

async fn deleting_a_project_leaves_no_row_of_it(postgres: bool) {
    let (db, _database) = TestDatabase::migrated(postgres).await;
    let tables = project_tables(&db).await;
    for known in [
        "api_keys",
        "matches",
        "match_tickets",
        "mode_cycle_stats",
        "outbox_dead_letters",
        "idempotency_keys",
    ] {
        assert!(tables.iter().any(|t| t == known), "{known}: {tables:?}");
    }
    let now = Utc::now();
    let gone = projects::create(&db, "Gone", "free", now).await.unwrap().id;
    let kept = projects::create(&db, "Kept", "pro", now).await.unwrap().id;
    seed(&db, &tables, &gone).await;
    seed(&db, &tables, &kept).await;
    for table in &tables {
        assert_eq!(count(&db, table, &gone).await, 1, "{table}");
        assert_eq!(count(&db, table, &kept).await, 1, "{table}");
    }

    projects::delete(&db, &gone).await.unwrap();
    let mut left = Vec::new();
    for table in &tables {
        if count(&db, table, &gone).await != 0 {
            left.push(table.as_str());
        }
        assert_eq!(
            count(&db, table, &kept).await,
            1,
            "{table} of the other project"
        );
    }
    assert!(
        left.is_empty(),
        "rows of the deleted project left in {left:?}"
    );
    assert!(projects::get(&db, &kept).await.is_ok());
}

#[tokio::test]
async fn deleting_a_project_leaves_no_row_of_it_postgres() {
    deleting_a_project_leaves_no_row_of_it(true).await;
}

#[tokio::test]
async fn deleting_a_project_leaves_no_row_of_it_sqlite() {
    deleting_a_project_leaves_no_row_of_it(false).await;
}
