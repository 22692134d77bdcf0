//! [`KeyUsage`]: `last_used_at` of API keys, written in the background in
//! batches, never on a request's path, so a database that is out of reach
//! or read-only (a failover) never fails a key check.

use chrono::{DateTime, Utc};
use matchplane_store::repos::api_keys;
use sea_orm::DatabaseConnection;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Duration;

/// How often recorded uses are written: every second.
pub const FLUSH_EVERY: Duration = Duration::from_secs(1);

/// Last use by (project id, key id), not written yet.
type Pending = Mutex<HashMap<(Arc<str>, Arc<str>), DateTime<Utc>>>;

/// Uses of keys waiting to be written; the writer task starts with the
/// first use recorded and ends when this is dropped.
#[derive(Debug, Default)]
pub struct KeyUsage {
    pending: Arc<Pending>,
    writer: OnceLock<()>,
}

impl KeyUsage {
    /// Records that the key `key_id` of `project_id` was used `at`; written
    /// within [`FLUSH_EVERY`] while the database takes writes, kept (the
    /// latest use only) while it does not.
    pub fn record(
        &self,
        db: &DatabaseConnection,
        project_id: Arc<str>,
        key_id: Arc<str>,
        at: DateTime<Utc>,
    ) {
        if let Ok(mut pending) = self.pending.lock() {
            let last = pending.entry((project_id, key_id)).or_insert(at);
            *last = (*last).max(at);
        }
        self.writer.get_or_init(|| {
            if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                runtime.spawn(write_uses(db.clone(), Arc::downgrade(&self.pending)));
            }
        });
    }
}

/// Every [`FLUSH_EVERY`], writes the uses recorded meanwhile; a use that
/// fails to be written is kept for the next round unless a later one was
/// recorded.
async fn write_uses(db: DatabaseConnection, pending: Weak<Pending>) {
    let mut tick = tokio::time::interval(FLUSH_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let Some(pending) = pending.upgrade() else {
            return;
        };
        let batch = match pending.lock() {
            Ok(mut held) => std::mem::take(&mut *held),
            Err(_) => return,
        };
        for ((project_id, key_id), at) in batch {
            if let Err(err) = api_keys::touch(&db, &project_id, &key_id, at).await {
                tracing::debug!(error = %err, "last_used_at not written; retried later");
                if let Ok(mut held) = pending.lock() {
                    held.entry((project_id, key_id)).or_insert(at);
                }
            }
        }
    }
}
