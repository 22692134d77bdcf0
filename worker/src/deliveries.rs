//! The webhook delivery loop (docs/webhooks.md): takes due deliveries from the
//! database, makes one attempt of each with [`Dispatcher::step_holding`],
//! logs the attempt and schedules the next one.
//!
//! One tenant never stalls another: [`DeliveryWorker::run`] takes a slot of
//! a delivery's project ([`project_share`] of the in-flight attempts) and
//! one of its endpoint *before* any shared capacity (its in-flight slots),
//! and gives a claimed delivery back at once when its project or its
//! endpoint has no free slot; a project at its share and a mode whose
//! endpoint is busy are left out of the next claims, and one claim takes at
//! most an endpoint's cap of one mode's deliveries and a project's share of
//! one project's. So a slow endpoint holds its own slots only, a studio
//! with many slow endpoints at most its share, and the claimed deliveries
//! are the ones being attempted now.
//!
//! The claim's lock is renewed while its attempt runs, and every write of
//! the attempt compares the claim's token. An attempt is sent only while
//! its lock has at least the attempt's timeout and a margin left, measured
//! on the worker's monotonic clock ([`lock`]); with less (a slow database
//! between the claim and the send) it is taken back unsent and the
//! delivery given back. So a delivery is sent again only when its worker
//! is gone or lost its database during the attempt (at least once), never
//! because a live worker sent it under a lapsing lock. The attempt is
//! logged before it is sent and completed after, so a worker killed during
//! it leaves it in the log, counted.
//!
//! The URL and the signing secrets are read from the mode at each attempt
//! (from the project's endpoint for a mode with `webhook.useProjectEndpoint`,
//! docs/webhooks.md), so a rotation signs with both secrets for its 24 hours
//! and a changed URL is used from the next attempt; never from a new mode
//! of a deleted mode's name (docs/webhooks.md, "A deleted mode"). The body is the stored payload, the exact
//! bytes of the first attempt.

use crate::db_wait::{within, DELIVERY_LIMIT};
use crate::error::WorkerError;
use crate::modes;
use chrono::{DateTime, Utc};
use matchplane_store::entities::webhook_delivery;
use matchplane_store::repos::deliveries::{self, AfterAttempt, ClaimFilter};
use matchplane_store::repos::matches;
use matchplane_store::repos::project_webhooks::ModeTarget;
use matchplane_webhook::{Delivery, Dispatcher};
use sea_orm::DatabaseConnection;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

mod attempt;
mod lock;
mod project_slots;

pub use lock::LOCK_MARGIN;
use lock::{HeldLock, Stamp};
use project_slots::ProjectSlots;
pub use project_slots::{project_share, PROJECT_SHARE_DIVISOR};

/// How often the delivery loop counts the due deliveries for
/// [`crate::metrics::WEBHOOK_BACKLOG`] (at most; a loop asleep counts at
/// its next wake).
pub const BACKLOG_EVERY: Duration = Duration::from_secs(5);

/// What one delivery attempt came to.
#[derive(Debug, Clone, PartialEq)]
pub struct Attempted {
    /// The delivery.
    pub delivery_id: String,
    /// The attempt's number (1 for the first; a redelivery counts on).
    pub number: i32,
    /// The HTTP status, if an answer came.
    pub status: Option<u16>,
    /// What follows.
    pub after: AfterAttempt,
}

/// The delivery side of a worker; cheap to clone.
#[derive(Clone)]
pub struct DeliveryWorker {
    db: DatabaseConnection,
    dispatcher: Arc<Dispatcher>,
    lock_for: Duration,
}

/// A claimed row with its claim's lock.
type Claimed = (webhook_delivery::Model, Arc<HeldLock>);

/// Webhook targets (URL and secrets) read in one turn of the loop, by mode:
/// one read per mode per turn, not per delivery.
type Targets = HashMap<(String, String), Option<ModeTarget>>;

/// The slots an attempt of [`DeliveryWorker::run`] holds besides its
/// endpoint's, until it ends: its project's and the worker's.
struct InFlight {
    _project: OwnedSemaphorePermit,
    _worker: OwnedSemaphorePermit,
}

/// A claimed delivery ready to send: the row, its claim's lock, what to
/// send (`None` when the mode has no enabled webhook any more), and its
/// endpoint's slot.
struct Ready {
    row: webhook_delivery::Model,
    lock: Arc<HeldLock>,
    delivery: Option<Delivery>,
    slot: Option<OwnedSemaphorePermit>,
    /// Whether it goes to the project's endpoint (whose health is kept too).
    project_endpoint: bool,
}

/// What `row` is sent as to `target`: `None` without a target, when the
/// target (a project endpoint's `eventTypes`) does not send its type, or
/// when the target's mode is a new mode of the same name, created after
/// the event (`born_at`): a deleted mode's deliveries are not sent
/// (docs/webhooks.md, "A deleted mode").
fn to_target(
    row: &webhook_delivery::Model,
    born_at: DateTime<Utc>,
    target: Option<&ModeTarget>,
) -> (Option<Delivery>, bool) {
    match target {
        Some(ModeTarget {
            target,
            mode_created_at,
        }) if target.sends(&row.event_type) => {
            if !matches::is_own_mode(*mode_created_at, born_at) {
                tracing::info!(delivery_id = %row.id, project_id = %row.project_id,
                    game_mode = %row.game_mode,
                    "the delivery's game mode was deleted and created again: not sent");
                return (None, false);
            }
            (
                attempt::build(row, &target.url, &target.secrets),
                target.project_endpoint,
            )
        }
        _ => (None, false),
    }
}

/// [`to_target`], reading when `row`'s event happened only when there is
/// a target to send to.
///
/// # Errors
/// A database failure.
async fn ready(
    db: &DatabaseConnection,
    (row, lock): Claimed,
    target: Option<&ModeTarget>,
) -> Result<Ready, WorkerError> {
    let born_at = match target {
        Some(_) => {
            within(
                DELIVERY_LIMIT,
                "reading the delivery's event time",
                deliveries::born_at(db, &row),
            )
            .await?
        }
        None => row.created_at,
    };
    let (delivery, project_endpoint) = to_target(&row, born_at, target);
    Ok(Ready {
        row,
        lock,
        delivery,
        slot: None,
        project_endpoint,
    })
}

impl DeliveryWorker {
    /// Deliveries of `db` sent by `dispatcher`, each locked for `lock_for`
    /// at a time (renewed while its attempt runs). The lock is at least
    /// twice what an attempt needs left of it (the dispatcher's attempt
    /// timeout and [`LOCK_MARGIN`]: 12 s with the 5 s timeout), so a fresh
    /// claim always has room to send.
    pub fn new(db: DatabaseConnection, dispatcher: Arc<Dispatcher>, lock_for: Duration) -> Self {
        let least = (dispatcher.attempt_timeout() + LOCK_MARGIN) * 2;
        Self {
            db,
            dispatcher,
            lock_for: lock_for.max(least),
        }
    }

    /// Takes up to `limit` due deliveries and makes one attempt of each,
    /// concurrently (each waiting for its endpoint's slot, its lock renewed
    /// meanwhile), returning how each went. Never sleeps.
    ///
    /// For tests (feature `test-support`): the binary runs
    /// [`DeliveryWorker::run`].
    ///
    /// # Errors
    /// A database failure while taking them; a failure of one attempt's
    /// record is logged, its delivery left locked until the lock runs out.
    #[cfg(feature = "test-support")]
    pub async fn tick(
        &self,
        now: DateTime<Utc>,
        limit: u64,
    ) -> Result<Vec<Attempted>, WorkerError> {
        let taken = self.take(now, limit, &ClaimFilter::default()).await?;
        let mut set = JoinSet::new();
        for claimed in taken {
            let this = self.clone();
            set.spawn(async move {
                let _renewal = this.keep_locked(&claimed.0, &claimed.1);
                let mut ready = this.prepare(claimed).await?;
                if let Some(delivery) = &ready.delivery {
                    let key = delivery.endpoint_key();
                    ready.slot = this.dispatcher.limits().acquire(&key).await;
                }
                this.attempt(ready).await
            });
        }
        let mut out = Vec::new();
        while let Some(joined) = set.join_next().await {
            match joined {
                Ok(Ok(Some(attempted))) => out.push(attempted),
                Ok(Ok(None)) => {}
                Ok(Err(err)) => tracing::warn!(error = %err, "webhook attempt not recorded"),
                Err(err) => tracing::warn!(error = %err, "webhook task stopped"),
            }
        }
        Ok(out)
    }

    /// Runs until `shutdown`: keeps at most `max_in_flight` attempts going,
    /// each in its own task, at most [`project_share`] of them for one
    /// project. A delivery gets one of those slots only after a slot of its
    /// project and one of its endpoint; one whose project is at its share or
    /// whose endpoint is busy is given back at once (unchanged, still due),
    /// and the project or the mode left out of the claims until it has room,
    /// so neither a slow endpoint nor a studio with many of them holds up
    /// another's deliveries.
    pub async fn run(&self, max_in_flight: usize, poll: Duration, shutdown: CancellationToken) {
        let max_in_flight = max_in_flight.max(1);
        let slots = Arc::new(Semaphore::new(max_in_flight));
        let per_endpoint = self.dispatcher.limits().per_endpoint();
        let mut projects = ProjectSlots::new(project_share(max_in_flight, per_endpoint));
        let mut busy: HashMap<(String, String), String> = HashMap::new();
        let mut set = JoinSet::new();
        let mut backlog_counted: Option<std::time::Instant> = None;
        loop {
            while set.try_join_next().is_some() {}
            if backlog_counted.is_none_or(|at| at.elapsed() >= BACKLOG_EVERY) {
                self.count_backlog().await;
                backlog_counted = Some(std::time::Instant::now());
            }
            let limits = self.dispatcher.limits();
            // A slot taken and dropped at once: is the endpoint still full?
            busy.retain(|_, key| limits.try_acquire(key).is_none());
            let free = slots.available_permits() as u64;
            let filter = ClaimFilter {
                skip: busy.keys().cloned().collect(),
                per_mode: limits.per_endpoint(),
                skip_projects: projects.full(),
                per_project: projects.per_project(),
            };
            let taken = if free == 0 {
                Vec::new()
            } else {
                match self.take(Utc::now(), free, &filter).await {
                    Ok(rows) => rows,
                    Err(err) => {
                        tracing::warn!(error = %err, "taking due webhook deliveries failed");
                        Vec::new()
                    }
                }
            };
            let mut started = 0usize;
            let mut targets = Targets::new();
            for claimed in taken {
                let prepared = self
                    .prepare_now(claimed, &mut busy, &mut projects, &mut targets, &slots)
                    .await;
                let Some((ready, in_flight)) = prepared else {
                    continue;
                };
                started += 1;
                let this = self.clone();
                set.spawn(async move {
                    let _renewal = this.keep_locked(&ready.row, &ready.lock);
                    if let Err(err) = this.attempt(ready).await {
                        tracing::warn!(error = %err, "webhook attempt not recorded");
                    }
                    drop(in_flight);
                });
            }
            if started == 0 {
                tokio::select! {
                    () = shutdown.cancelled() => break,
                    () = tokio::time::sleep(poll) => {}
                }
            } else if shutdown.is_cancelled() {
                break;
            }
        }
        // In-flight attempts finish (each at most its timeout) and are logged.
        while set.join_next().await.is_some() {}
    }

    /// Sets the backlog gauge ([`crate::metrics::WEBHOOK_BACKLOG`]); a
    /// database failure leaves it as it was (logged).
    pub async fn count_backlog(&self) {
        let due = deliveries::count_due(&self.db, Utc::now());
        match within(DELIVERY_LIMIT, "counting due webhook deliveries", due).await {
            Ok(due) => crate::metrics::webhook_backlog(due),
            Err(err) => tracing::warn!(error = %err, "counting due webhook deliveries failed"),
        }
    }

    /// Readies a claimed `row` without waiting: its project's slot first,
    /// then its endpoint's, then one of `slots`. `None` when any is full or
    /// the row cannot be read; the row is then given back (unlocked,
    /// unchanged) and, for a busy endpoint, its mode noted in `busy` (a
    /// project at its share is listed by [`ProjectSlots::full`]).
    async fn prepare_now(
        &self,
        (row, lock): Claimed,
        busy: &mut HashMap<(String, String), String>,
        projects: &mut ProjectSlots,
        targets: &mut Targets,
        slots: &Arc<Semaphore>,
    ) -> Option<(Ready, InFlight)> {
        let mode = (row.project_id.clone(), row.game_mode.clone());
        let (id, token) = (row.id.clone(), row.lock_token.clone().unwrap_or_default());
        if busy.contains_key(&mode) {
            self.give_back(&id, &token).await;
            return None;
        }
        let Some(project_slot) = projects.try_acquire(&row.project_id) else {
            self.give_back(&id, &token).await;
            return None;
        };
        let target = match targets.get(&mode) {
            Some(target) => target.clone(),
            None => {
                let read = modes::delivery_target(&self.db, &mode.0, &mode.1, Utc::now());
                let read = within(DELIVERY_LIMIT, "reading the webhook target", read).await;
                match read {
                    Ok(target) => {
                        targets.insert(mode.clone(), target.clone());
                        target
                    }
                    Err(err) => {
                        tracing::warn!(delivery_id = %id, error = %err, "webhook target not read");
                        self.give_back(&id, &token).await;
                        return None;
                    }
                }
            }
        };
        let mut ready = match ready(&self.db, (row, lock), target.as_ref()).await {
            Ok(ready) => ready,
            Err(err) => {
                tracing::warn!(delivery_id = %id, error = %err, "webhook delivery not read");
                self.give_back(&id, &token).await;
                return None;
            }
        };
        if let Some(delivery) = &ready.delivery {
            let key = delivery.endpoint_key();
            match self.dispatcher.limits().try_acquire(&key) {
                Some(slot) => ready.slot = Some(slot),
                None => {
                    busy.insert(mode, key);
                    self.give_back(&id, &token).await;
                    return None;
                }
            }
        }
        match Arc::clone(slots).try_acquire_owned() {
            Ok(slot) => Some((
                ready,
                InFlight {
                    _project: project_slot,
                    _worker: slot,
                },
            )),
            Err(_) => {
                self.give_back(&id, &token).await;
                None
            }
        }
    }

    async fn give_back(&self, id: &str, token: &str) {
        let release = deliveries::release(&self.db, id, token);
        if let Err(err) = within(DELIVERY_LIMIT, "giving a delivery back", release).await {
            // The lock runs out by itself; the delivery waits until then.
            tracing::warn!(delivery_id = %id, error = %err, "webhook delivery not given back");
        }
    }

    /// Claims up to `limit` deliveries due at `now`, each with its lock as
    /// measured from the moment the claim was sent.
    async fn take(
        &self,
        now: DateTime<Utc>,
        limit: u64,
        filter: &ClaimFilter,
    ) -> Result<Vec<Claimed>, WorkerError> {
        let stamp = Stamp::now();
        let claim = deliveries::claim_due_fairly(&self.db, now, self.lock_span(), limit, filter);
        let rows = within(DELIVERY_LIMIT, "claiming due webhook deliveries", claim).await?;
        Ok(rows
            .into_iter()
            .map(|row| {
                let lock = HeldLock::taken(stamp, row.locked_until);
                (row, lock)
            })
            .collect())
    }

    fn lock_span(&self) -> chrono::Duration {
        chrono::Duration::from_std(self.lock_for).unwrap_or_else(|_| chrono::Duration::seconds(30))
    }

    /// Reads what `row` is to be sent as (the mode's URL and secrets now).
    #[cfg(feature = "test-support")]
    async fn prepare(&self, claimed: Claimed) -> Result<Ready, WorkerError> {
        let row = &claimed.0;
        let target =
            modes::delivery_target(&self.db, &row.project_id, &row.game_mode, Utc::now()).await?;
        ready(&self.db, claimed, target.as_ref()).await
    }
}
