//! Writing a batch of recorded rows (see the parent module): one
//! statement, and a batch again without the rows of projects deleted
//! while it waited; the writers leave out the rows whose mode is gone or
//! was created again since (docs/tuning.md, "Recording a mode's searches").

use super::NewRecording;
use crate::entities::project::{self, Entity as Projects};
use crate::entities::search_recording::{self, Entity as Recordings};
use crate::repos::StoreError;
use sea_orm::{
    ColumnTrait, ConnectionTrait, DatabaseConnection, DbBackend, DbErr, EntityTrait, QueryFilter,
    QuerySelect, Set,
};

/// Stores `rows` in one statement (nothing when empty): a `COPY` on
/// PostgreSQL (a fraction of the server's work of a multi-row `INSERT`,
/// which matters where the recording shares the database's cores with
/// the API), an `INSERT` on SQLite.
///
/// # Errors
/// A database failure (none of the rows is stored).
pub async fn insert_batch(
    db: &DatabaseConnection,
    rows: &[NewRecording],
) -> Result<(), StoreError> {
    if rows.is_empty() {
        return Ok(());
    }
    if db.get_database_backend() == DbBackend::Postgres {
        return copy_batch(db, rows).await;
    }
    insert_rows(db, rows).await
}

/// What [`insert_batch_of_live_projects`] did with a batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BatchWritten {
    /// Rows stored.
    pub stored: u64,
    /// Rows left out: their project was deleted while they waited (its
    /// recording went with it).
    pub of_deleted_projects: u64,
    /// Rows left out: their mode (or its project) was deleted while they
    /// waited, and maybe
    /// created again since (a new mode, which records only its own
    /// searches, docs/game-modes.md).
    pub of_gone_modes: u64,
}

/// How many times [`insert_batch_of_live_projects`] writes a batch again
/// without the rows of projects deleted meanwhile.
const GONE_RETRIES: usize = 2;

/// Stores `rows` as [`insert_batch_of_live_modes`] does, where the rows may
/// belong to several projects. A batch the database refuses while one of its projects
/// is gone (deleted since its rows were queued: their foreign key fails the
/// whole statement) is written again without the rows of the projects no
/// longer there, so one deleted project never loses the others' rows.
///
/// # Errors
/// A database failure with every project of the rows still there (or the
/// failure of the read of which are): none of the rows is stored.
pub async fn insert_batch_of_live_projects(
    db: &DatabaseConnection,
    rows: &[NewRecording],
) -> Result<BatchWritten, StoreError> {
    let mut of_deleted_projects = 0;
    let mut kept: Option<Vec<NewRecording>> = None;
    let mut retries = 0;
    loop {
        let batch = kept.as_deref().unwrap_or(rows);
        let error = match insert_batch_of_live_modes(db, batch).await {
            Ok(stored) => {
                return Ok(BatchWritten {
                    stored,
                    of_deleted_projects,
                    of_gone_modes: batch.len() as u64 - stored,
                })
            }
            Err(error) => error,
        };
        if retries == GONE_RETRIES {
            return Err(error);
        }
        retries += 1;
        let mut ids: Vec<&str> = batch.iter().map(|r| r.project_id.as_str()).collect();
        ids.sort_unstable();
        ids.dedup();
        let Ok(live) = existing_projects(db, &ids).await else {
            return Err(error);
        };
        let left: Vec<NewRecording> = batch
            .iter()
            .filter(|r| live.contains(&r.project_id))
            .cloned()
            .collect();
        if left.len() == batch.len() {
            return Err(error);
        }
        of_deleted_projects += (batch.len() - left.len()) as u64;
        kept = Some(left);
    }
}

/// Stores the rows of `rows` whose mode is there and was created no later
/// than the row (a mode deleted while its rows waited, or deleted and
/// created again, is left out: docs/game-modes.md, "Changing a mode");
/// returns how many were stored. The modes are read in the transaction
/// that stores the rows, locked on PostgreSQL, so a mode's delete (which
/// deletes its stored recording) comes wholly before or after it.
///
/// # Errors
/// A database failure (none of the rows is stored).
pub async fn insert_batch_of_live_modes(
    db: &DatabaseConnection,
    rows: &[NewRecording],
) -> Result<u64, StoreError> {
    if rows.is_empty() {
        return Ok(0);
    }
    let mut projects: Vec<&str> = rows.iter().map(|r| r.project_id.as_str()).collect();
    let mut names: Vec<&str> = rows.iter().map(|r| r.game_mode.as_str()).collect();
    for list in [&mut projects, &mut names] {
        list.sort_unstable();
        list.dedup();
    }
    if db.get_database_backend() == DbBackend::Postgres {
        let failed = |e: &dyn std::fmt::Display| StoreError::Db(DbErr::Custom(e.to_string()));
        let mut tx = db
            .get_postgres_connection_pool()
            .begin()
            .await
            .map_err(|e| failed(&e))?;
        let modes: Vec<(String, String, i64)> = sea_orm::sqlx::query_as(
            "SELECT project_id, name, \
             floor(extract(epoch FROM created_at) * 1000)::bigint \
             FROM game_modes WHERE project_id = ANY($1) AND name = ANY($2) \
             ORDER BY project_id, name FOR SHARE",
        )
        .bind(&projects)
        .bind(&names)
        .fetch_all(&mut *tx)
        .await
        .map_err(|e| failed(&e))?;
        let kept = of_modes(rows, &modes);
        if !kept.is_empty() {
            copy_rows(&mut tx, &kept).await?;
        }
        tx.commit().await.map_err(|e| failed(&e))?;
        return Ok(kept.len() as u64);
    }
    use crate::entities::game_mode::{self, Entity as GameModes};
    use sea_orm::TransactionTrait;
    let txn = db.begin().await?;
    let modes: Vec<(String, String, chrono::DateTime<chrono::Utc>)> = GameModes::find()
        .select_only()
        .columns([game_mode::Column::ProjectId, game_mode::Column::Name])
        .column(game_mode::Column::CreatedAt)
        .filter(game_mode::Column::ProjectId.is_in(projects))
        .filter(game_mode::Column::Name.is_in(names))
        .into_tuple()
        .all(&txn)
        .await?;
    let modes: Vec<(String, String, i64)> = modes
        .into_iter()
        .map(|(p, n, at)| (p, n, at.timestamp_millis()))
        .collect();
    let kept = of_modes(rows, &modes);
    if !kept.is_empty() {
        insert_rows(&txn, &kept).await?;
    }
    txn.commit().await?;
    Ok(kept.len() as u64)
}

/// The rows of `rows` of the `modes` (project, name, created at in Unix
/// milliseconds) recorded since the mode was created
/// ([`crate::repos::matches::is_own_mode`], in milliseconds): one look-up
/// per row, however many modes the batch holds.
fn of_modes(rows: &[NewRecording], modes: &[(String, String, i64)]) -> Vec<NewRecording> {
    let created: std::collections::HashMap<(&str, &str), i64> = modes
        .iter()
        .map(|(project, name, ms)| ((project.as_str(), name.as_str()), *ms))
        .collect();
    rows.iter()
        .filter(|r| {
            created
                .get(&(r.project_id.as_str(), r.game_mode.as_str()))
                .is_some_and(|ms| *ms <= r.at_ms)
        })
        .cloned()
        .collect()
}

/// Which of the projects `ids` the database has.
async fn existing_projects<C: ConnectionTrait>(
    db: &C,
    ids: &[&str],
) -> Result<std::collections::HashSet<String>, StoreError> {
    let mut live = std::collections::HashSet::new();
    // A few hundred bound parameters per query suits every backend.
    for chunk in ids.chunks(500) {
        let found: Vec<String> = Projects::find()
            .select_only()
            .column(project::Column::Id)
            .filter(project::Column::Id.is_in(chunk.iter().copied()))
            .into_tuple()
            .all(db)
            .await?;
        live.extend(found);
    }
    Ok(live)
}

/// The rows as `COPY … FROM STDIN` text: tab-separated, `\N` for none.
pub(super) fn copy_text(rows: &[NewRecording]) -> String {
    use std::fmt::Write;
    fn field(out: &mut String, value: Option<&str>) {
        match value {
            None => out.push_str("\\N"),
            Some(v) => {
                for ch in v.chars() {
                    match ch {
                        '\\' => out.push_str("\\\\"),
                        '\t' => out.push_str("\\t"),
                        '\n' => out.push_str("\\n"),
                        '\r' => out.push_str("\\r"),
                        other => out.push(other),
                    }
                }
            }
        }
    }
    let mut out = String::with_capacity(rows.len() * 96);
    for r in rows {
        field(&mut out, Some(&r.project_id));
        out.push('\t');
        field(&mut out, Some(&r.game_mode));
        let _ = write!(out, "\t{}\t{}\t", r.at_ms, r.kind.code());
        field(&mut out, Some(&r.player_hash));
        out.push('\t');
        match r.mmr.filter(|m| m.is_finite()) {
            Some(mmr) => {
                let _ = write!(out, "{mmr}");
            }
            None => out.push_str("\\N"),
        }
        for value in [
            &r.latencies,
            &r.party_hash,
            &r.party_members,
            &r.outcome,
            &r.attributes,
        ] {
            out.push('\t');
            field(&mut out, value.as_deref());
        }
        out.push('\n');
    }
    out
}

async fn copy_batch(db: &DatabaseConnection, rows: &[NewRecording]) -> Result<(), StoreError> {
    let failed = |e: &dyn std::fmt::Display| StoreError::Db(DbErr::Custom(e.to_string()));
    let mut conn = db
        .get_postgres_connection_pool()
        .acquire()
        .await
        .map_err(|e| failed(&e))?;
    copy_rows(&mut conn, rows).await
}

/// `COPY`s `rows` on `conn`.
async fn copy_rows(
    conn: &mut sea_orm::sqlx::PgConnection,
    rows: &[NewRecording],
) -> Result<(), StoreError> {
    let failed = |e: &dyn std::fmt::Display| StoreError::Db(DbErr::Custom(e.to_string()));
    let mut copy = conn
        .copy_in_raw(
            "COPY search_recordings (project_id, game_mode, at_ms, event, player_hash, mmr, \
             latencies, party_hash, party_members, outcome, attributes) FROM STDIN",
        )
        .await
        .map_err(|e| failed(&e))?;
    if let Err(e) = copy.send(copy_text(rows).into_bytes()).await {
        let _ = copy.abort(e.to_string()).await;
        return Err(failed(&e));
    }
    copy.finish().await.map_err(|e| failed(&e))?;
    Ok(())
}

/// Stores `rows` in one multi-row `INSERT`.
async fn insert_rows<C: ConnectionTrait>(db: &C, rows: &[NewRecording]) -> Result<(), StoreError> {
    let models = rows.iter().map(|r| search_recording::ActiveModel {
        project_id: Set(r.project_id.clone()),
        game_mode: Set(r.game_mode.clone()),
        at_ms: Set(r.at_ms),
        event: Set(r.kind.code()),
        player_hash: Set(r.player_hash.clone()),
        mmr: Set(r.mmr),
        latencies: Set(r.latencies.clone()),
        party_hash: Set(r.party_hash.clone()),
        party_members: Set(r.party_members.clone()),
        outcome: Set(r.outcome.clone()),
        attributes: Set(r.attributes.clone()),
        ..Default::default()
    });
    Recordings::insert_many(models)
        .exec_without_returning(db)
        .await?;
    Ok(())
}
