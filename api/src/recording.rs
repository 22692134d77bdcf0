//! Recording of a mode's searches (issue 22): each search start, cancel
//! and end of a mode with `recording.enabled`, written to the database off
//! the request path.
//!
//! The hooks ([`started`], [`ended`]) run in the request, read the mode's
//! config from the config cache (never the database) and put one row into
//! a bounded channel with `try_send`: a request never waits for the
//! recording and never fails because of it. A full channel (the database
//! slower than the traffic) drops the row and counts it in
//! [`DROPPED_TOTAL`]. One writer task per process takes the rows and
//! stores them in one `INSERT` per batch, every [`RecorderSettings::batch_rows`]
//! rows or [`RecorderSettings::flush_every`], whichever comes first. A
//! batch mixes projects: one refused because a project was deleted while
//! its rows waited is written again without that project's rows
//! ([`recordings::insert_batch_of_live_projects`]), so the other projects'
//! rows are stored; a batch the database refuses otherwise is dropped and
//! counted in [`WRITE_FAILED_TOTAL`] (the recording is a sample of the
//! traffic, not a ledger).
//!
//! Player and party ids are never stored: each is replaced by a keyed hash,
//! HMAC-SHA-256 with the operator's `MATCHPLANE_RECORDING_KEY` (when unset,
//! the installation's key kept in the database, which `crate::serve_on`
//! reads; a router built without either draws one of its own) of the
//! project id and the id, truncated to 16 bytes of hex.
//! The same id hashes the same within a project's recordings, so a replay
//! still sees who arrived twice, who cancelled and who came in which party;
//! it hashes differently in every other project, so ids do not link
//! projects' recordings. The hashes are pseudonyms, not anonymity
//! (docs/tuning.md).
//!
//! Which searches are hooked: the starts of both the WebSocket and the REST
//! search (`crate::play::start`), and the ends the API makes
//! (`crate::play::status::end`: cancels, closed sockets, pong timeouts).
//! The worker records the ends it makes (matches, expiries, re-check
//! failures) with the same hash when given the same key
//! (`matchplane_worker::recordings`); a replay reads the starts and
//! cancels and makes its own matches and expiries under the config it
//! runs.

use crate::play::{start::Started, Play};
use matchplane_store::pool::EndOutcome;
use matchplane_store::repos::recordings::{IdHasher, Kind, NewRecording};
use matchplane_store::tickets::Ticket;
use metrics::Counter;
use metrics_exporter_prometheus::PrometheusRecorder;
use sea_orm::DatabaseConnection;
use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::Duration;
use tokio::sync::mpsc;

mod erased;
mod writer;
use writer::{write, Queued};

/// Counter: `matchplane_recording_dropped_total`, rows dropped because the
/// writer's channel was full.
pub const DROPPED_TOTAL: &str = "matchplane_recording_dropped_total";
/// Counter: `matchplane_recording_written_total`, rows stored.
pub const WRITTEN_TOTAL: &str = "matchplane_recording_written_total";
/// Counter: `matchplane_recording_write_failed_total`, rows of batches the
/// database refused (dropped).
pub const WRITE_FAILED_TOTAL: &str = "matchplane_recording_write_failed_total";

/// The writer's bounds.
#[derive(Debug, Clone, Copy)]
pub struct RecorderSettings {
    /// Rows waiting for the writer at most (then rows are dropped).
    pub capacity: usize,
    /// Rows per `INSERT` at most (a batch is written once it has these).
    pub batch_rows: usize,
    /// A batch with fewer rows is written this long after its first row.
    pub flush_every: Duration,
}

impl Default for RecorderSettings {
    /// 65 536 rows waiting, 1 000 rows per statement, 200 ms.
    fn default() -> Self {
        Self {
            capacity: 65_536,
            batch_rows: 1_000,
            flush_every: Duration::from_millis(200),
        }
    }
}

/// What [`Recorder::attach`] sets: the hash key and the metrics.
struct Attached {
    key: IdHasher,
    dropped: Counter,
    /// The database, for a mode config this instance has not cached.
    db: DatabaseConnection,
}

/// The recording channel of one process (one per [`Play`]); records
/// nothing until [`Recorder::attach`]ed.
pub struct Recorder {
    tx: mpsc::Sender<Queued>,
    rx: Mutex<Option<mpsc::Receiver<Queued>>>,
    attached: OnceLock<Attached>,
    settings: RecorderSettings,
    erased: std::sync::Arc<erased::Erased>,
}

impl Default for Recorder {
    fn default() -> Self {
        Self::new(RecorderSettings::default())
    }
}

impl std::fmt::Debug for Recorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recorder")
            .field("attached", &self.attached.get().is_some())
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

impl Recorder {
    /// A recorder with these bounds, not yet attached.
    pub fn new(settings: RecorderSettings) -> Self {
        let (tx, rx) = mpsc::channel(settings.capacity.max(1));
        Self {
            tx,
            rx: Mutex::new(Some(rx)),
            attached: OnceLock::new(),
            settings,
            erased: std::sync::Arc::default(),
        }
    }

    /// Starts recording: hashes with `key` (random when `None`), counts in
    /// `metrics`, and spawns the writer over `db` on the current Tokio
    /// runtime. The writer stops once the recorder is dropped (after
    /// writing what it holds). Only the first call does anything; without
    /// a runtime nothing is attached.
    pub fn attach(&self, db: DatabaseConnection, key: Option<&str>, metrics: &PrometheusRecorder) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let Some(rx) = self
            .rx
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
        else {
            return;
        };
        let key = match key {
            Some(key) => key.as_bytes().to_vec(),
            None => {
                use rand::RngCore;
                let mut bytes = vec![0u8; 32];
                rand::thread_rng().fill_bytes(&mut bytes);
                bytes
            }
        };
        let Some(hasher) = IdHasher::new(&key) else {
            return;
        };
        let (dropped, written, failed) = metrics::with_local_recorder(metrics, || {
            metrics::describe_counter!(
                DROPPED_TOTAL,
                metrics::Unit::Count,
                "Recorded search events dropped because the recording writer was behind"
            );
            metrics::describe_counter!(
                WRITTEN_TOTAL,
                metrics::Unit::Count,
                "Recorded search events stored"
            );
            metrics::describe_counter!(
                WRITE_FAILED_TOTAL,
                metrics::Unit::Count,
                "Recorded search events lost because the database refused their batch"
            );
            (
                metrics::counter!(DROPPED_TOTAL),
                metrics::counter!(WRITTEN_TOTAL),
                metrics::counter!(WRITE_FAILED_TOTAL),
            )
        });
        let _ = self.attached.set(Attached {
            key: hasher,
            dropped,
            db: db.clone(),
        });
        let erased = self.erased.clone();
        runtime.spawn(write(db, rx, self.settings, (written, failed), erased));
    }

    /// Waits, at most `within`, until every row queued before the call is
    /// written (or refused by the database): a stopping server calls it
    /// once its sockets' searches have ended, so that their cancels are
    /// recorded. `false` when the wait ran out; `true` at once when not
    /// attached.
    pub async fn flush(&self, within: Duration) -> bool {
        if self.attached.get().is_none() {
            return true;
        }
        let (done, written) = tokio::sync::oneshot::channel();
        let flushed =
            async { self.tx.send(Queued::Flush(done)).await.is_ok() && written.await.is_ok() };
        tokio::time::timeout(within, flushed).await.unwrap_or(false)
    }

    /// Drops, from now on, the rows of the player whose hashes are
    /// `hashes` ([`Recorder::hashes`]): an erasure calls it before deleting
    /// the player's recorded events, so that a row still queued (the
    /// cancel of a search the erasure ended) is not stored after them.
    pub fn forget(&self, hashes: &[String]) {
        self.erased.add(hashes);
    }

    /// The hash of `id` in `project_id`'s recordings (see [`IdHasher`]);
    /// `None` before [`Recorder::attach`].
    pub fn hash(&self, project_id: &str, id: &str) -> Option<String> {
        self.attached.get().map(|a| a.key.hash(project_id, id))
    }

    /// Every hash `id` may carry in `project_id`'s recordings: its hash
    /// now, then the one rows recorded under the previous release carry
    /// ([`IdHasher::earlier_hash`]); empty before [`Recorder::attach`].
    pub fn hashes(&self, project_id: &str, id: &str) -> Vec<String> {
        self.attached.get().map_or_else(Vec::new, |a| {
            vec![a.key.hash(project_id, id), a.key.earlier_hash(id)]
        })
    }

    /// Queues `row` of `project_id` built with the project's hash function
    /// (the keyed hash of an id in the project: 16 bytes of HMAC-SHA-256,
    /// lower-case hex); drops (and counts) it when the writer is behind.
    /// Nothing when not attached.
    fn push(&self, project_id: &str, row: impl FnOnce(&dyn Fn(&str) -> String) -> NewRecording) {
        let Some(attached) = self.attached.get() else {
            return;
        };
        let row = row(&|id| attached.key.hash(project_id, id));
        if self.tx.try_send(Queued::Row(row)).is_err() {
            attached.dropped.increment(1);
        }
    }

    /// Records a search start of `ticket` at `at` (Unix seconds); the
    /// mode's `declarations` say which attributes hold player ids (hashed).
    pub fn start(
        &self,
        ticket: &Ticket,
        at: f64,
        declarations: Option<&matchplane_matchmaker::rules::Declarations>,
    ) {
        let (project, mode) = (&ticket.project_id, &ticket.game_mode);
        self.push(project, |hash| NewRecording {
            mmr: ticket.attributes.mmr,
            latencies: ticket.attributes.latencies.as_ref().map(|l| {
                l.iter()
                    .map(|(region, ms)| format!("{region}={ms}"))
                    .collect::<Vec<_>>()
                    .join("|")
            }),
            party_hash: ticket.party.as_ref().map(|p| hash(&p.id)),
            party_members: ticket.party.as_ref().map(|p| {
                p.members
                    .iter()
                    .map(|m| hash(m))
                    .collect::<Vec<_>>()
                    .join("|")
            }),
            attributes: recorded_attributes(&ticket.attributes.declared, declarations, hash),
            ..NewRecording::event(
                project,
                mode,
                Kind::Start,
                hash(&ticket.player_id),
                millis(at),
            )
        });
    }

    /// Records the end of `ticket`'s search with `outcome` at `at`.
    pub fn end(&self, ticket: &Ticket, outcome: &EndOutcome, at: f64) {
        let (kind, outcome) = match outcome {
            EndOutcome::Cancelled | EndOutcome::CancelledFor { .. } => (Kind::Cancel, None),
            EndOutcome::Expired => (Kind::End, Some("expired".to_string())),
            EndOutcome::ExpiredFor { reason } => (Kind::End, Some(format!("expired:{reason}"))),
            EndOutcome::Failed { code, .. } => (Kind::End, Some(format!("failed:{code}"))),
        };
        let (project, mode) = (&ticket.project_id, &ticket.game_mode);
        self.push(project, |hash| NewRecording {
            outcome,
            ..NewRecording::event(project, mode, kind, hash(&ticket.player_id), millis(at))
        });
    }
}

/// A start's declared attributes as recorded: JSON text, every
/// `playerSet` entry replaced by its keyed hash (docs/rules.md); `None`
/// without any.
fn recorded_attributes(
    values: &matchplane_matchmaker::rules::DeclaredValues,
    declarations: Option<&matchplane_matchmaker::rules::Declarations>,
    hash: &dyn Fn(&str) -> String,
) -> Option<String> {
    use matchplane_matchmaker::rules::{AttributeValue, Declaration};
    if values.is_empty() {
        return None;
    }
    let mut kept = values.clone();
    for (name, value) in kept.iter_mut() {
        let is_player_set = declarations
            .and_then(|d| d.get(name))
            .is_some_and(|d| matches!(d, Declaration::PlayerSet { .. }));
        if let (true, AttributeValue::Set(ids)) = (is_player_set, value) {
            for id in ids.iter_mut() {
                *id = hash(id);
            }
        }
    }
    serde_json::to_string(&kept).ok()
}

fn millis(unix: f64) -> i64 {
    (unix * 1000.0).round() as i64
}

/// Records `started` when its mode records (the config as cached).
pub async fn started(play: &Play, started: &Started) {
    if let Some(config) = play
        .cache
        .peek_mode(&started.mode.project_id, &started.mode.mode)
        .await
    {
        if config.records() {
            play.recorder.start(
                &started.ticket,
                started.queued_at,
                config.attributes.as_ref(),
            );
        }
    }
}

/// Records the end of `ticket`'s search with `outcome` now, when its mode
/// records. The config is the cached one; an instance that has not cached
/// the mode (the search started on another replica) reads it through the
/// cache, so a cancel is recorded wherever it lands. A config that cannot
/// be read records nothing (the end itself is done already).
pub async fn ended(play: &Play, ticket: &Ticket, outcome: &EndOutcome) {
    let Some(attached) = play.recorder.attached.get() else {
        return;
    };
    let config = match play
        .cache
        .peek_mode(&ticket.project_id, &ticket.game_mode)
        .await
    {
        Some(config) => Some(config),
        None => play
            .cache
            .mode(&attached.db, &ticket.project_id, &ticket.game_mode)
            .await
            .ok()
            .flatten(),
    };
    if config.is_some_and(|c| c.records()) {
        play.recorder.end(ticket, outcome, crate::play::unix_now());
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::recorded_attributes;

    #[test]
    fn player_sets_are_recorded_as_keyed_hashes_and_other_sets_as_sent() {
        let declarations = serde_json::from_value(serde_json::json!({
            "maps": {"type": "stringSet", "values": ["dust", "nuke"]},
            "blocked": {"type": "playerSet"},
            "build": {"type": "string"}
        }))
        .unwrap();
        let values = serde_json::from_value(serde_json::json!({
            "maps": ["dust"], "blocked": ["ana", "ben"], "build": "1.4"
        }))
        .unwrap();
        let hash = |id: &str| format!("h({id})");
        let text = recorded_attributes(&values, Some(&declarations), &hash).unwrap();
        let recorded: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            recorded,
            serde_json::json!({"maps": ["dust"], "blocked": ["h(ana)", "h(ben)"], "build": "1.4"})
        );
        assert_eq!(recorded_attributes(&Default::default(), None, &hash), None);
    }
}
