//! [`run_worker`]: a whole worker in one call: the scheduler that keeps one
//! [`crate::mode_loop`] per game mode, and the webhook delivery loop, until
//! the shutdown token is cancelled.
//!
//! The scheduler lists the modes every [`WorkerConfig::reconcile_interval`]:
//! a new mode gets a loop at once, a changed version wakes its loop, a
//! deleted mode's loop records its outbox and stops. The sweep
//! ([`crate::sweep`]) passes over every pool every
//! [`WorkerConfig::sweep_interval`]: due searches expire, a deleted mode's
//! or project's fail. The retention pruning ([`crate::retention`]) runs a
//! pass every [`crate::retention::RetentionConfig::interval`] when this
//! worker holds its lease. Every loop is owned by one `JoinSet` and stops on
//! cancel, releasing its lease (STYLE 8).

use crate::config::WorkerConfig;
use crate::deliveries::DeliveryWorker;
use crate::error::WorkerError;
use crate::modes;
use matchplane_store::pool::{ModeKey, PoolStore};
use matchplane_store::tickets::TicketStore;
use matchplane_webhook::{Deliverer, Dispatcher, EndpointLimits};
use sea_orm::DatabaseConnection;
use std::collections::HashMap;
use std::sync::Arc;
use tokio::sync::watch;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

/// What every loop of one worker shares.
pub struct Shared {
    /// Settings.
    pub config: WorkerConfig,
    /// The live pools.
    pub pool: Arc<dyn PoolStore>,
    /// The ticket store, for the token hashes kept with each stored match;
    /// `None` keeps none.
    pub tickets: Option<Arc<dyn TicketStore>>,
    /// The database.
    pub db: DatabaseConnection,
    /// This worker start's lease epoch (the high half of its fencing
    /// tokens), taken from the database before any lease.
    pub epoch: u64,
    /// Records the ends the worker makes, for modes that record.
    pub ends: crate::recordings::EndRecorder,
}

/// Takes this start's lease epoch, waiting (a try a second) while the
/// database is unreachable: no lease is taken without it. `None` on
/// shutdown.
async fn take_epoch(
    db: &DatabaseConnection,
    worker_id: &str,
    shutdown: &CancellationToken,
) -> Option<u64> {
    loop {
        match matchplane_store::repos::lease_epochs::take(db, worker_id, chrono::Utc::now()).await {
            Ok(epoch) => return Some(epoch),
            Err(err) => {
                tracing::warn!(error = %err, "taking the lease epoch failed; waiting for the database")
            }
        }
        tokio::select! {
            () = shutdown.cancelled() => return None,
            () = tokio::time::sleep(std::time::Duration::from_secs(1)) => {}
        }
    }
}

/// Version sent to a mode's loop when the mode left the list.
const GONE: i64 = -1;

/// Runs a worker until `shutdown` is cancelled, then waits for its loops to
/// stop (leases released, in-flight webhook attempts logged).
///
/// # Errors
/// [`WorkerError::Task`] if the webhook HTTP client cannot be built.
pub async fn run_worker(
    config: WorkerConfig,
    pool: Arc<dyn PoolStore>,
    db: DatabaseConnection,
    shutdown: CancellationToken,
) -> Result<(), WorkerError> {
    run_worker_with_tickets(config, pool, None, db, shutdown).await
}

/// [`run_worker`], keeping with each stored match its tickets' token
/// hashes read from `tickets` (SPEC 15), so a matched ticket stays
/// readable from the database when the ticket store loses its record.
///
/// # Errors
/// As [`run_worker`].
pub async fn run_worker_with_tickets(
    config: WorkerConfig,
    pool: Arc<dyn PoolStore>,
    tickets: Option<Arc<dyn TicketStore>>,
    db: DatabaseConnection,
    shutdown: CancellationToken,
) -> Result<(), WorkerError> {
    let deliverer =
        Deliverer::new(config.delivery).map_err(|e| WorkerError::Task(e.to_string()))?;
    let dispatcher = Arc::new(Dispatcher::new(
        deliverer,
        config.schedule,
        EndpointLimits::new(
            config.per_endpoint,
            matchplane_webhook::dispatcher::DEFAULT_MAX_ENDPOINTS,
        ),
    ));
    let deliveries = DeliveryWorker::new(db.clone(), dispatcher, config.delivery_lock);
    let Some(epoch) = take_epoch(&db, &config.worker_id, &shutdown).await else {
        return Ok(());
    };
    tracing::info!(worker_id = %config.worker_id, epoch, "lease epoch taken");
    let ends = crate::recordings::EndRecorder::new(
        db.clone(),
        config.recording_key.as_deref(),
        tickets.clone(),
    );
    let shared = Arc::new(Shared {
        config,
        pool,
        tickets,
        db,
        epoch,
        ends,
    });

    let delivery_task = {
        let shutdown = shutdown.clone();
        let max = shared.config.max_in_flight;
        let poll = shared.config.delivery_poll;
        tokio::spawn(async move { deliveries.run(max, poll, shutdown).await })
    };
    let sweep_task = tokio::spawn(crate::sweep::run(shared.clone(), shutdown.clone()));
    let retention_task = tokio::spawn(crate::retention::run(
        shared.db.clone(),
        shared.config.worker_id.clone(),
        shared.config.retention,
        shutdown.clone(),
    ));
    schedule(&shared, &shutdown).await;
    if let Err(err) = sweep_task.await {
        tracing::warn!(error = %err, "the sweep stopped");
    }
    if let Err(err) = retention_task.await {
        tracing::warn!(error = %err, "the retention pruning stopped");
    }
    if let Err(err) = delivery_task.await {
        tracing::warn!(error = %err, "the delivery loop stopped");
    }
    Ok(())
}

/// Keeps one loop per listed mode until `shutdown`.
async fn schedule(shared: &Arc<Shared>, shutdown: &CancellationToken) {
    let mut loops: JoinSet<ModeKey> = JoinSet::new();
    let mut senders: HashMap<ModeKey, watch::Sender<i64>> = HashMap::new();
    loop {
        while let Some(done) = loops.try_join_next() {
            if let Ok(key) = done {
                senders.remove(&key);
            }
        }
        match modes::list_all(&shared.db).await {
            Ok(listed) => {
                for (key, sender) in &senders {
                    if !listed.contains_key(key) {
                        sender.send_if_modified(|v| std::mem::replace(v, GONE) != GONE);
                    }
                }
                for (key, version) in listed {
                    if let Some(sender) = senders.get(&key) {
                        sender.send_if_modified(|v| std::mem::replace(v, version) != version);
                        continue;
                    }
                    let (sender, receiver) = watch::channel(version);
                    senders.insert(key.clone(), sender);
                    let shared = Arc::clone(shared);
                    let cancel = shutdown.child_token();
                    loops.spawn(async move {
                        crate::mode_loop::run(shared, key.clone(), receiver, cancel).await;
                        key
                    });
                }
            }
            Err(err) => tracing::warn!(error = %err, "listing game modes failed"),
        }
        tokio::select! {
            () = shutdown.cancelled() => break,
            () = tokio::time::sleep(shared.config.reconcile_interval) => {}
        }
    }
    while loops.join_next().await.is_some() {}
    drop(senders);
}
