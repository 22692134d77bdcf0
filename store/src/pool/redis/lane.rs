//! The project's lane: a process's requests to one project's slot that no
//! caller needs answered by itself, batched. An added search's step 3 (see
//! `live`) and the `mode` scope's quota reads queue here; while the
//! project has a batch in flight the next one gathers, and each batch is
//! one round trip: the registry's ZADD when due (see `projects`), then the
//! queued measurements and started tickets in one `live_apply.lua`, whose
//! answer (the project's live count) is every queued read's; a batch of
//! reads alone is one GET.
//!
//! Why the start does not wait for its step 3: the add stands whatever the
//! step does (a failure is repaired by the mode's worker, see `live`), and
//! what reads the counter through this process sees it anyway: a quota
//! read or [`RedisPoolStore::settle`] queued after a step 3 goes in its
//! batch or a later one, and a batch's reads run after its measurements.
//! So a client's next start, or a test's read after a start, finds the
//! start counted, and the quota is overshot by at most the starts in
//! flight when a read runs (admitted, and not yet applied), as before.
//!
//! A process that dies with a batch queued leaves its counter behind, as a
//! death between an add's steps does: the worker's probe repairs it.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use tokio::sync::oneshot;

use super::keys::{pending_key, projects_key, started_key, ProjectKeys};
use super::RedisPoolStore;
use crate::pool::types::wall_clock;
use crate::pool::PoolError;

/// Measurements and tickets one batch takes at most (the script's ARGV and
/// its `unpack` stay short); the rest go in the next.
const MAX_BATCH: usize = 1_000;

/// An added search's step 3, waiting for its project's next batch.
pub(super) struct Queued {
    /// The mode's name.
    pub mode: String,
    /// The add script's measurement: the pool's size and its version.
    pub size: String,
    pub version: String,
    /// The ticket a search was started from, if any, and its expiry: it
    /// leaves the project's pending tickets for its started ones.
    pub ticket: Option<(String, f64)>,
}

/// What waits for a project's next batch.
#[derive(Default)]
struct Lane {
    /// Whether a task is sending this project's batches.
    flushing: bool,
    applies: Vec<Queued>,
    /// Each gets the project's live count once its batch ran.
    readers: Vec<oneshot::Sender<Result<i64, redis::RedisError>>>,
    /// Each is told once the batch in flight and the queued ones ran (a
    /// batch of these alone sends nothing).
    waiters: Vec<oneshot::Sender<()>>,
}

/// Every project's lane in this process.
#[derive(Default)]
pub(super) struct Lanes(Mutex<HashMap<String, Lane>>);

impl Lanes {
    fn with<T>(&self, f: impl FnOnce(&mut HashMap<String, Lane>) -> T) -> T {
        let mut lanes = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        f(&mut lanes)
    }
}

/// Marks a project's lane idle when its sending task ends, also when the
/// task is dropped mid-batch (its runtime shutting down): the readers still
/// queued are dropped (they fail), the measurements stay for the next task.
struct Flushing<'a> {
    store: &'a RedisPoolStore,
    project_id: &'a str,
    /// Set once the task left the lane itself (it found it empty).
    done: bool,
}

impl Drop for Flushing<'_> {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        self.store.inner.lanes.with(|lanes| {
            if let Some(lane) = lanes.get_mut(self.project_id) {
                lane.flushing = false;
                lane.readers.clear();
                lane.waiters.clear();
                if lane.applies.is_empty() {
                    lanes.remove(self.project_id);
                }
            }
        });
    }
}

impl RedisPoolStore {
    /// Queues an added search's step 3 (see the module doc).
    pub(super) fn queue_apply(&self, project_id: &str, queued: Queued) {
        self.enqueue(project_id, |lane| lane.applies.push(queued));
    }

    /// The project's live count, read in its next batch (after every step
    /// 3 this process queued before).
    pub(super) async fn read_live(&self, project_id: &str) -> Result<i64, PoolError> {
        let (tx, rx) = oneshot::channel();
        self.enqueue(project_id, |lane| lane.readers.push(tx));
        match rx.await {
            Ok(answer) => Ok(answer?),
            Err(_) => Err(PoolError::Unavailable("the project's batch was dropped")),
        }
    }

    /// Waits until the step 3s this process queued for `project_id` ran,
    /// sending nothing of its own: before reading what they write (the
    /// count, the modes listed, the pending tickets). A failed batch is
    /// only logged by its task. Whether there was anything to wait for.
    pub(crate) async fn settle(&self, project_id: &str) -> bool {
        let (tx, rx) = oneshot::channel();
        let start = self.inner.lanes.with(|lanes| {
            let lane = lanes.get_mut(project_id)?;
            lane.waiters.push(tx);
            Some(!std::mem::replace(&mut lane.flushing, true))
        });
        let Some(start) = start else {
            return false;
        };
        if start {
            self.start_flush(project_id);
        }
        let _ran = rx.await;
        true
    }

    fn enqueue(&self, project_id: &str, push: impl FnOnce(&mut Lane)) {
        let start = self.inner.lanes.with(|lanes| {
            let lane = lanes.entry(project_id.to_owned()).or_default();
            push(lane);
            !std::mem::replace(&mut lane.flushing, true)
        });
        if start {
            self.start_flush(project_id);
        }
    }

    /// Starts the task sending the project's batches (its lane was marked
    /// flushing).
    fn start_flush(&self, project_id: &str) {
        let store = self.clone();
        let project_id = project_id.to_owned();
        tokio::spawn(async move { store.flush(&project_id).await });
    }

    /// Sends the project's batches until its lane is empty.
    async fn flush(&self, project_id: &str) {
        let mut flushing = Flushing {
            store: self,
            project_id,
            done: false,
        };
        loop {
            // Taking the batch and leaving an empty lane are one step, so
            // an item queued meanwhile either goes in this batch or finds
            // the lane idle and starts a task.
            let batch = self.inner.lanes.with(|lanes| {
                let lane = lanes.get_mut(project_id)?;
                if lane.applies.is_empty() && lane.readers.is_empty() {
                    // Whatever waits came after the last batch sent.
                    for waiter in lane.waiters.drain(..) {
                        let _gone = waiter.send(());
                    }
                    lanes.remove(project_id);
                    return None;
                }
                let take = lane.applies.len().min(MAX_BATCH);
                let applies: Vec<Queued> = lane.applies.drain(..take).collect();
                // Waiters go with the batch that takes the last queued step.
                let waiters = if lane.applies.is_empty() {
                    std::mem::take(&mut lane.waiters)
                } else {
                    Vec::new()
                };
                Some((applies, std::mem::take(&mut lane.readers), waiters))
            });
            let Some((applies, readers, waiters)) = batch else {
                flushing.done = true;
                return;
            };
            let answer = self.send_batch(project_id, applies).await;
            if let Err(err) = &answer {
                tracing::warn!(project = %project_id, error = %err,
                    "the project's live count was not updated after adds; the modes' workers will");
            }
            for reader in readers {
                let _gone = reader.send(answer.clone());
            }
            for waiter in waiters {
                let _gone = waiter.send(());
            }
        }
    }

    /// One batch: the registry's write when due, then the measurements (the
    /// newest of each mode) and tickets, or a read of the count alone.
    async fn send_batch(
        &self,
        project_id: &str,
        applies: Vec<Queued>,
    ) -> Result<i64, redis::RedisError> {
        let project = ProjectKeys::new(self.prefix(), project_id);
        let mut newest: HashMap<&str, (&str, &str, u64)> = HashMap::new();
        let mut tickets = Vec::new();
        for queued in &applies {
            let version = queued.version.parse::<u64>().unwrap_or(0);
            let entry = newest.entry(queued.mode.as_str()).or_insert((
                &queued.size,
                &queued.version,
                version,
            ));
            if version > entry.2 {
                *entry = (&queued.size, &queued.version, version);
            }
            if let Some((ticket, expires_at)) = &queued.ticket {
                tickets.push((ticket.as_str(), *expires_at));
            }
        }
        let now = std::time::Instant::now();
        let register = !self.noted_since(project_id, now);
        let mut pipe = redis::pipe();
        if register {
            pipe.cmd("ZADD")
                .arg(projects_key(self.prefix()))
                .arg("GT")
                .arg(wall_clock())
                .arg(project_id)
                .ignore();
        }
        let mut call = self.inner.live.apply.prepare_invoke();
        if applies.is_empty() {
            pipe.get(&project.live);
        } else {
            call.key(&project.live)
                .key(&project.counts)
                .key(&project.versions)
                .key(pending_key(self.prefix(), project_id))
                .key(started_key(self.prefix(), project_id))
                .arg("")
                .arg(wall_clock())
                .arg(newest.len());
            for (mode, (size, version, _)) in &newest {
                call.arg(*mode).arg(*size).arg(*version);
            }
            for (ticket, expires_at) in &tickets {
                call.arg(*ticket).arg(*expires_at);
            }
            pipe.invoke_script(&call);
        }
        let live = match pipe.query_async::<(Option<i64>,)>(&mut self.conn()).await {
            Ok((live,)) => live.unwrap_or(0),
            Err(err)
                if err.kind() == redis::ErrorKind::Server(redis::ServerErrorKind::NoScript) =>
            {
                call.invoke_async::<i64>(&mut self.conn()).await?
            }
            Err(err) => return Err(err),
        };
        if register {
            self.note(project_id, now);
        }
        for (mode, (size, _, _)) in &newest {
            if let Ok(size) = size.parse() {
                self.inner
                    .applied
                    .set(&crate::pool::ModeKey::new(project_id, *mode), size);
            }
        }
        Ok(live)
    }
}
