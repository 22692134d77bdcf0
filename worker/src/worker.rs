//! [`run_worker`]: a whole worker in one call: the scheduler that keeps one
//! [`crate::mode_loop`] per game mode, and the webhook delivery loop, until the
//! shutdown token is cancelled.
//!
//! The scheduler lists the modes every [`WorkerConfig::reconcile_interval`]
//! ([`modes::Catalogue`]: only the modes changed since the last pass, the whole
//! table once a minute or when the count shows a deletion): a new mode gets a
//! loop at once, a changed version wakes its loop, a deleted mode's loop
//! records its outbox and stops. Which modes are this worker's
//! ([`crate::shares`]) is recomputed over every mode only when the live workers
//! change; an unchanged mode's loop is not woken by a pass. The sweep
//! ([`crate::sweep`]) passes over every pool every
//! [`WorkerConfig::sweep_interval`]: due searches expire, a deleted mode's or
//! project's fail. Retention pruning ([`crate::retention`]) runs while this
//! worker holds its lease. Every loop is owned by one `JoinSet` and stops on
//! cancel, releasing its lease.

use crate::config::WorkerConfig;
use crate::deliveries::DeliveryWorker;
use crate::error::WorkerError;
use crate::modes;
use matchplane_store::pool::{ModeKey, PoolStore};
use matchplane_store::tickets::TicketStore;
use matchplane_webhook::{Deliverer, Dispatcher, EndpointLimits};
use sea_orm::DatabaseConnection;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;
use tokio::sync::watch;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

mod sharing;

use sharing::{Sharing, Watch};

/// What every loop of one worker shares.
pub struct Shared {
    /// Settings.
    pub config: WorkerConfig,
    /// The live pools.
    pub pool: Arc<dyn PoolStore>,
    /// The ticket store, for the token hashes kept with each stored match
    /// and the players of recorded expiries.
    pub tickets: Arc<dyn TicketStore>,
    /// The database.
    pub db: DatabaseConnection,
    /// This worker start's lease epoch (the high half of its fencing
    /// tokens), taken from the database before any lease.
    pub epoch: u64,
    /// Records the ends the worker makes, for modes that record.
    pub ends: crate::recordings::EndRecorder,
    /// The lapses excused after an outage of the store ([`crate::lapse_grace`]).
    pub lapses: crate::lapse_grace::LapseGrace,
    /// Modes whose lease this worker holds now.
    pub held: AtomicUsize,
    /// When the scheduler last listed the modes from the database: a mode
    /// whose listed version is its cached config's cycles on that config
    /// without reading it again while this is within
    /// [`WorkerConfig::config_grace`].
    pub listed_at: Mutex<Option<Instant>>,
}

impl Shared {
    /// Counts a lease taken (`true`) or given up / lost (`false`).
    pub(crate) fn count_held(&self, taken: bool) {
        let now = if taken {
            self.held.fetch_add(1, Ordering::Relaxed) + 1
        } else {
            self.held.fetch_sub(1, Ordering::Relaxed).saturating_sub(1)
        };
        crate::metrics::modes_held(now);
    }

    /// Whether the last listing of the modes is recent enough for a cached
    /// config of the listed version to be used without a read.
    pub(crate) fn listing_fresh(&self) -> bool {
        self.listed_at
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_some_and(|at| at.elapsed() < self.config.config_grace)
    }
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

/// The key of the recorded player-id hashes: `configured`
/// (`MATCHPLANE_RECORDING_KEY`), else the installation's stored one, the
/// API's too (`instance_keys`), waiting (a try a second) while the database
/// cannot give it. `None` on shutdown.
async fn recording_key(
    db: &DatabaseConnection,
    configured: Option<String>,
    shutdown: &CancellationToken,
) -> Option<String> {
    if configured.is_some() {
        return configured;
    }
    use matchplane_store::repos::instance_keys;
    loop {
        match instance_keys::get_or_create(db, instance_keys::RECORDING).await {
            Ok(key) => return Some(key),
            Err(err) => {
                tracing::warn!(error = %err, "reading the recording key failed; waiting for the database")
            }
        }
        tokio::select! {
            () = shutdown.cancelled() => return None,
            () = tokio::time::sleep(std::time::Duration::from_secs(1)) => {}
        }
    }
}

/// What the scheduler tells a mode's loop of its mode.
#[derive(Clone, Debug)]
pub enum Listed {
    /// Listed at `version`, with that revision's config if the scheduler
    /// read it.
    At {
        /// The revision listed.
        version: modes::Revision,
        /// The config of that version, when the scheduler read it.
        config: Option<Arc<modes::ModeConfig>>,
    },
    /// The mode left the list.
    Gone,
}

/// Runs a worker until `shutdown` is cancelled, then waits for its loops to
/// stop (leases released, in-flight webhook attempts logged).
///
/// `tickets` is the ticket store beside `pool`: each stored match keeps its
/// tickets' token hashes read from it, so a matched ticket stays readable
/// from the database when the ticket store loses its record
/// (docs/architecture.md#where-each-rule-lives), and recorded expiries name
/// their players from it.
///
/// # Errors
/// [`WorkerError::Task`] if the webhook HTTP client cannot be built.
pub async fn run_worker(
    config: WorkerConfig,
    pool: Arc<dyn PoolStore>,
    tickets: Arc<dyn TicketStore>,
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
    let Some(recording_key) = recording_key(&db, config.recording_key.clone(), &shutdown).await
    else {
        return Ok(());
    };
    let ends =
        crate::recordings::EndRecorder::new(db.clone(), Some(&recording_key), tickets.clone());
    let shared = Arc::new(Shared {
        config,
        pool,
        tickets,
        db,
        epoch,
        ends,
        lapses: crate::lapse_grace::LapseGrace::default(),
        held: AtomicUsize::new(0),
        listed_at: Mutex::new(None),
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

/// How long a worker's heartbeat lasts: a killed worker's modes go to the
/// others once it lapses (a lease time, or three listings if those are
/// slower).
fn heartbeat_ttl(config: &WorkerConfig) -> std::time::Duration {
    config.lease_ttl.max(config.reconcile_interval * 3)
}

/// The live workers, this one's heartbeat renewed; on a store failure the
/// last view (this worker alone at first).
async fn live_workers(shared: &Shared, last: Vec<String>) -> Vec<String> {
    let me = &shared.config.worker_id;
    match shared
        .pool
        .worker_heartbeat(me, heartbeat_ttl(&shared.config))
        .await
    {
        Ok(live) => live,
        Err(err) => {
            tracing::warn!(error = %err, "worker heartbeat failed; keeping the last view");
            if last.is_empty() {
                vec![me.clone()]
            } else {
                last
            }
        }
    }
}

/// What the scheduler keeps per mode: the channels to its loop.
struct ModeChannels {
    /// The mode's listed version ([`Listed::Gone`] once unlisted), with its
    /// config when the scheduler read it.
    version: watch::Sender<Listed>,
    /// Whether the mode is this worker's ([`crate::shares`]).
    mine: watch::Sender<bool>,
}

/// Keeps one loop per listed mode until `shutdown`, and tells each whether
/// its mode is this worker's share. Leaves the worker set first on
/// shutdown, so the others take the modes as soon as the leases go.
async fn schedule(shared: &Arc<Shared>, shutdown: &CancellationToken) {
    let mut loops: JoinSet<ModeKey> = JoinSet::new();
    let mut channels: HashMap<ModeKey, ModeChannels> = HashMap::new();
    let me = shared.config.worker_id.clone();
    // The heartbeat beats on its own, so a slow listing never lets it lapse.
    let first = live_workers(shared, Vec::new()).await;
    let (view, mut views) = watch::channel(first);
    // Aborted with the scheduler (an aborted worker task must stop beating).
    let beat = tokio_util::task::AbortOnDropHandle::new({
        let shared = Arc::clone(shared);
        let shutdown = shutdown.clone();
        tokio::spawn(async move {
            let every = (heartbeat_ttl(&shared.config) / 5).min(shared.config.reconcile_interval);
            loop {
                tokio::select! {
                    () = shutdown.cancelled() => break,
                    () = tokio::time::sleep(every) => {}
                }
                let last = view.borrow().clone();
                let seen = live_workers(&shared, last).await;
                view.send_if_modified(|v| {
                    if *v == seen {
                        return false;
                    }
                    tracing::info!(workers = seen.len(), "live workers changed");
                    crate::metrics::workers_live(seen.len());
                    *v = seen;
                    true
                });
            }
        })
    });
    crate::metrics::workers_live(views.borrow().len());
    let mut catalogue = modes::Catalogue::default();
    // The membership the shares in `channels` were computed over.
    let mut sharing = Sharing::default();
    // Modes whose loop ended while still listed (started again).
    let mut restart: Vec<ModeKey> = Vec::new();
    loop {
        let began = Instant::now();
        while let Some(done) = loops.try_join_next() {
            if let Ok(key) = done {
                channels.remove(&key);
                if catalogue.revision(&key).is_some() {
                    restart.push(key);
                }
            }
        }
        // Shares are recomputed over every mode only when the membership
        // changed; otherwise only a changed mode's.
        let workers = views.borrow_and_update().clone();
        sharing.apply(&me, &workers, &channels);
        let mut watch = Watch {
            me: &me,
            views: &mut views,
            sharing: &mut sharing,
            channels: &channels,
            shutdown,
        };
        let mut full = false;
        let Some(listed) = watch
            .listing("listing the game modes", catalogue.refresh(&shared.db))
            .await
        else {
            break;
        };
        match listed {
            Ok(mut changes) => {
                full = changes.full;
                *shared
                    .listed_at
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner) = Some(Instant::now());
                for key in &changes.gone {
                    if let Some(sender) = channels.get(key) {
                        sender.version.send_if_modified(|v| {
                            let listed = matches!(v, Listed::At { .. });
                            *v = Listed::Gone;
                            listed
                        });
                    }
                }
                for key in restart.drain(..) {
                    if let Some(revision) = catalogue.revision(&key) {
                        changes.changed.push((key.clone(), revision.clone()));
                    }
                }
                // Configs of new versions, read here in one go rather than
                // by each loop (thousands at a worker's start).
                let moved: Vec<ModeKey> =
                    changes.changed.iter().map(|(key, _)| key.clone()).collect();
                let mut configs = if moved.is_empty() {
                    HashMap::new()
                } else {
                    let read = modes::configs_of(&shared.db, &moved);
                    let Some(read) = watch.listing("reading game modes", read).await else {
                        break;
                    };
                    read.unwrap_or_else(|err| {
                        tracing::warn!(error = %err, "reading game modes failed");
                        HashMap::new()
                    })
                };
                let workers = sharing.over.clone();
                let mine_of =
                    |key: &ModeKey| crate::shares::owner(&workers, key) == Some(me.as_str());
                for (key, version) in changes.changed {
                    let mine = mine_of(&key);
                    let config = configs
                        .remove(&key)
                        .filter(|c| c.is_at(&version))
                        .map(Arc::new);
                    if let Some(sender) = channels.get(&key) {
                        sender.version.send_if_modified(|v| {
                            if let Listed::At {
                                version: at,
                                config: read,
                            } = v
                            {
                                if *at == version && (read.is_some() || config.is_none()) {
                                    return false;
                                }
                            }
                            *v = Listed::At { version, config };
                            true
                        });
                        sender
                            .mine
                            .send_if_modified(|m| std::mem::replace(m, mine) != mine);
                        continue;
                    }
                    let (version, versions) = watch::channel(Listed::At { version, config });
                    let (mine, mines) = watch::channel(mine);
                    channels.insert(key.clone(), ModeChannels { version, mine });
                    let shared = Arc::clone(shared);
                    let cancel = shutdown.child_token();
                    // Every line the mode's loop logs names its project
                    // and mode (two projects may each have a `duel`). At
                    // the error level, so that a filter that keeps only
                    // warnings (`RUST_LOG=warn`) keeps these fields too; a
                    // span writes no line of its own.
                    let span = tracing::error_span!(
                        "mode_loop",
                        project_id = %key.project_id,
                        game_mode = %key.mode
                    );
                    loops.spawn(
                        async move {
                            crate::mode_loop::run(shared, key.clone(), versions, mines, cancel)
                                .await;
                            key
                        }
                        .instrument(span),
                    );
                }
            }
            Err(err) => {
                tracing::warn!(error = %err, "listing game modes failed");
            }
        }
        let took = began.elapsed();
        crate::metrics::scheduler_pass(took, full);
        if took > shared.config.reconcile_interval * 2 {
            tracing::warn!(?took, modes = channels.len(), "listing the modes is slow");
        }
        tokio::select! {
            () = shutdown.cancelled() => break,
            () = tokio::time::sleep(shared.config.reconcile_interval) => {}
            // A worker joined or left: hand over or take modes at once.
            changed = views.changed() => {
                if changed.is_err() {
                    break;
                }
            }
        }
    }
    drop(beat);
    if let Err(err) = shared.pool.worker_leave(&me).await {
        tracing::warn!(error = %err, "leaving the worker set failed");
    }
    while loops.join_next().await.is_some() {}
    drop(channels);
}
