//! The recording's writer task: rows in batches, and the flushes a
//! stopping server asks for.

use super::erased::Erased;
use super::RecorderSettings;
use matchplane_store::repos::recordings::{self, NewRecording};
use metrics::Counter;
use sea_orm::DatabaseConnection;
use std::sync::Arc;
use tokio::sync::{mpsc, oneshot};

/// What the recorder queues for its writer.
// Rows are nearly every message; a flush is sent once, by a stopping
// server: boxing the rows to shrink the flush would cost an allocation a
// row.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub(super) enum Queued {
    /// A row to store.
    Row(NewRecording),
    /// Answered once every row queued before it is written.
    Flush(oneshot::Sender<()>),
}

/// The writer: batches of at most `batch_rows`, each written at most
/// `flush_every` after its first row, or at once when a flush is asked
/// for; ends when every sender is gone.
pub(super) async fn write(
    db: DatabaseConnection,
    mut rx: mpsc::Receiver<Queued>,
    settings: RecorderSettings,
    (written, failed): (Counter, Counter),
    erased: Arc<Erased>,
) {
    let mut batch = Vec::with_capacity(settings.batch_rows);
    loop {
        let mut flush = None;
        match rx.recv().await {
            None => return,
            Some(Queued::Row(row)) => batch.push(row),
            Some(Queued::Flush(done)) => flush = Some(done),
        }
        let deadline = tokio::time::Instant::now() + settings.flush_every;
        while flush.is_none() && batch.len() < settings.batch_rows {
            match tokio::time::timeout_at(deadline, rx.recv()).await {
                Ok(Some(Queued::Row(row))) => batch.push(row),
                Ok(Some(Queued::Flush(done))) => flush = Some(done),
                Ok(None) | Err(_) => break,
            }
        }
        erased.take_out(&mut batch);
        if !batch.is_empty() {
            store(&db, &batch, &written, &failed).await;
            batch.clear();
        }
        if let Some(done) = flush {
            let _ = done.send(());
        }
    }
}

/// Stores one batch, counting it in `written` or `failed`.
async fn store(
    db: &DatabaseConnection,
    batch: &[NewRecording],
    written: &Counter,
    failed: &Counter,
) {
    let rows = batch.len() as u64;
    match recordings::insert_batch_of_live_projects(db, batch).await {
        Ok(done) => {
            written.increment(done.stored);
            if done.of_deleted_projects + done.of_gone_modes > 0 {
                // Their project's or mode's recording went with it: not a
                // failure (docs/tuning.md).
                tracing::debug!(
                    projects = done.of_deleted_projects,
                    modes = done.of_gone_modes,
                    "recorded rows of deleted projects or modes left out"
                );
            }
        }
        Err(error) => {
            tracing::warn!(%error, rows, "a batch of the search recording was not stored");
            failed.increment(rows);
        }
    }
}
