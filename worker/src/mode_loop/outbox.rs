//! Recording the mode's outbox from its loop (`crate::record`): after
//! each cycle, between cycles in a mode with proposals, and before a
//! deleted mode's loop stops.

use super::lease::{renewing, HeldLease};
use super::Shared;
use crate::record::OutboxConsumer;
use chrono::Utc;
use matchplane_store::pool::ModeKey;

/// Outbox batches recorded after each cycle at most (the rest waits a cycle).
const MAX_DRAIN_BATCHES: usize = 64;

/// What recording the outbox takes from the mode's config.
#[derive(Debug, Clone, Copy)]
pub(super) struct Recording {
    /// Queue each match's webhook (the mode's flag).
    pub(super) webhooks: bool,
    /// The config's version when it has acceptance (see
    /// [`OutboxConsumer::proposals_of`]).
    pub(super) proposals_of: Option<i64>,
}

impl Recording {
    /// No webhook, no proposal's row: a deleted mode's last records (and
    /// the unused setting of a wait without proposal sweeps).
    pub(super) const BARE: Recording = Recording {
        webhooks: false,
        proposals_of: None,
    };

    /// As `config` says.
    pub(super) fn of(config: &crate::modes::ModeConfig) -> Self {
        Recording {
            webhooks: config.webhook_enabled(),
            proposals_of: config.config.acceptance.is_some().then_some(config.version),
        }
    }
}

/// How recording the outbox went.
pub(super) enum Recorded {
    /// Everything it held was stored (or it held nothing).
    Stored,
    /// A batch was not stored (it stays in the outbox): the database or
    /// Redis failed, or the database did not answer in time.
    Failed,
    /// The lease was lost meanwhile.
    Lost,
}

/// Records what the mode's outbox holds (at most [`MAX_DRAIN_BATCHES`]
/// batches, each waiting for the database at most
/// [`crate::db_wait::STORE_LIMIT`]), renewing the lease.
pub(super) async fn record(
    shared: &Shared,
    key: &ModeKey,
    lease: &mut HeldLease<'_>,
    recording: Recording,
) -> Recorded {
    let outbox = OutboxConsumer {
        pool: shared.pool.as_ref(),
        db: &shared.db,
        tickets: shared.tickets.as_ref(),
        consumer: &shared.config.worker_id,
        batch: shared.config.outbox_batch,
        min_idle: shared.config.outbox_min_idle,
        concurrency: shared.config.claim_concurrency,
        ends: Some(&shared.ends),
        proposals_of: recording.proposals_of,
    };
    let drain = outbox.drain(key, recording.webhooks, Utc::now(), MAX_DRAIN_BATCHES);
    let (drained, lost) = renewing(shared, key, lease, drain).await;
    if let Err(err) = &drained {
        tracing::warn!(game_mode = %key.mode, error = %err, "recording matches failed");
    }
    match (lost, drained) {
        (true, _) => Recorded::Lost,
        (false, Ok(_)) => Recorded::Stored,
        (false, Err(_)) => Recorded::Failed,
    }
}
