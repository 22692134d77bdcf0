//! Idempotent batch inserts: rows whose key exists are left alone, so a
//! batch handed over twice (the worker's outbox) is stored once.

use crate::repos::StoreError;
use sea_orm::sea_query::OnConflict;
use sea_orm::{ConnectionTrait, EntityTrait, IntoActiveModel};

/// Rows per statement: the backends' bound-parameter limits (SQLite:
/// 32 766, PostgreSQL: 65 535) bound a statement's rows, and the widest row
/// inserted this way has 14 columns.
pub(crate) const ROWS_PER_STATEMENT: usize = 1000;

/// Inserts `rows` into `E` in statements of at most [`ROWS_PER_STATEMENT`]
/// rows, doing nothing for a row whose `key` (a unique set of columns) is
/// taken. Returns how many rows this call inserted; no statement at all for
/// no row.
///
/// # Errors
/// [`StoreError::Db`] on a database failure.
pub(crate) async fn insert_absent<E, C>(
    db: &C,
    rows: Vec<E::Model>,
    key: impl IntoIterator<Item = E::Column>,
) -> Result<u64, StoreError>
where
    E: EntityTrait,
    E::Model: IntoActiveModel<E::ActiveModel>,
    C: ConnectionTrait,
{
    let conflict = OnConflict::columns(key).do_nothing().to_owned();
    let mut inserted = 0;
    let mut rows = rows.into_iter().peekable();
    while rows.peek().is_some() {
        let chunk: Vec<E::ActiveModel> = rows
            .by_ref()
            .take(ROWS_PER_STATEMENT)
            .map(IntoActiveModel::into_active_model)
            .collect();
        inserted += E::insert_many(chunk)
            .on_conflict(conflict.clone())
            .exec_without_returning(db)
            .await?;
    }
    Ok(inserted)
}
