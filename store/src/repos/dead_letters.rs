//! Outbox records the worker could not read as a match (docs/architecture.md), kept so
//! that acknowledging their outbox entry loses nothing. Written in the same
//! transaction as the readable matches of their batch; an entry handed over
//! twice is kept once (keyed by project, mode and outbox id).

use crate::entities::outbox_dead_letter::{self, Entity as DeadLetters};
use crate::repos::insert_absent::insert_absent;
use crate::repos::StoreError;
use sea_orm::ConnectionTrait;

/// Keeps `rows` unless already kept; many rows per statement. Returns how
/// many this call inserted.
///
/// # Errors
/// [`StoreError::Db`] on a database failure.
pub async fn keep<C: ConnectionTrait>(
    db: &C,
    rows: Vec<outbox_dead_letter::Model>,
) -> Result<u64, StoreError> {
    let key = [
        outbox_dead_letter::Column::ProjectId,
        outbox_dead_letter::Column::GameMode,
        outbox_dead_letter::Column::OutboxId,
    ];
    insert_absent::<DeadLetters, _>(db, rows, key).await
}
