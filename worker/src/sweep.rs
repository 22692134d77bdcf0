//! The sweep: the worker's pass over every pool with searches, every
//! [`WorkerConfig::sweep_interval`](crate::WorkerConfig::sweep_interval)
//! (one second by default), on every worker.
//!
//! It ends the searches nothing else would end in time:
//!
//! - a search whose deadline passed (its ticket expired, or a REST search
//!   went unpolled) ends `expired`, within a second, whatever the mode's
//!   cycle duration (a cycle also expires before it reads the pool, so an
//!   expired search is never matched);
//! - the searches of a mode the database no longer has (the mode deleted,
//!   or its project) end `failed` with `GAME_MODE_DISABLED`, due or not,
//!   and its open proposals are cancelled with nobody cooled down: what a
//!   project's delete left, and what a replica's stale config cache let
//!   start just after a mode's delete (the delete itself ends the mode's
//!   searches and proposals, `api/src/routes/game_modes.rs`).
//!
//! Each client is told. The pools are found through the pool store
//! ([`PoolReads::projects_with_searches`], then each project's modes with
//! searches), never through the database, so a deleted project's pools are
//! found too. Every step is an atomic store operation that ends a search at
//! most once, so workers sweeping side by side (or a cycle expiring the same
//! search) never end one twice; no lease is needed.
//!
//! Disabled modes and modes whose config changed are the cycle's: their
//! loop wakes at the change and fails what the config rules out
//! ([`crate::tick`]).

use crate::db_wait::{within, READ_LIMIT};
use crate::error::WorkerError;
use crate::tick::fail_searches;
use crate::worker::Shared;
use chrono::{DateTime, Utc};
use matchplane_matchmaker::{Code, FailedSearch};
use matchplane_store::pool::{ModeKey, PoolStore};
use matchplane_store::repos::{game_modes, projects, StoreError};
use matchplane_store::tickets::{publish, StatusMessage};
use sea_orm::DatabaseConnection;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// What one pass did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SweepReport {
    /// Modes with searches it looked at.
    pub modes: usize,
    /// Searches it ended `expired`.
    pub expired: usize,
    /// Searches of gone modes it ended `failed`.
    pub failed: usize,
}

/// What a pass runs against.
#[derive(Clone, Copy)]
pub struct Sweeper<'a> {
    /// The pool store.
    pub pool: &'a dyn PoolStore,
    /// The database (which modes still exist).
    pub db: &'a DatabaseConnection,
    /// Searches expired per mode and pass at most.
    pub expire_batch: usize,
    /// Store calls in flight at once when a gone mode's searches are failed.
    pub concurrency: usize,
    /// Records the expiries in modes that record; `None` records none.
    pub ends: Option<&'a crate::recordings::EndRecorder>,
    /// The worker's reach of the store, for the lapses excused after an
    /// outage ([`crate::lapse_grace`]); `None` excuses none.
    pub lapses: Option<&'a crate::lapse_grace::LapseGrace>,
}

impl Sweeper<'_> {
    /// One pass at `now`. A mode whose step fails is logged and left to the
    /// next pass; the others go on.
    ///
    /// # Errors
    /// A pool store failure while listing the pools (a database out of
    /// reach only leaves deleted modes to a later pass).
    pub async fn pass(&self, now: DateTime<Utc>) -> Result<SweepReport, WorkerError> {
        let now_secs = now.timestamp_micros() as f64 / 1e6;
        let projects = self.pool.projects_with_searches().await.inspect_err(|_| {
            if let Some(lapses) = self.lapses {
                lapses.failed_all();
            }
        })?;
        let mut modes = Vec::new();
        for project in &projects {
            for name in self.pool.modes_with_searches(project).await? {
                modes.push(ModeKey::new(project.clone(), name));
            }
        }
        // A database out of reach, or not answering within [`READ_LIMIT`],
        // leaves deleted modes to a later pass; every other pool is still
        // swept (docs/operations.md, "What losing a dependency costs").
        let names = game_modes::names_in(self.db, &projects);
        let stored = match within(READ_LIMIT, "listing the stored modes", names).await {
            Ok(stored) => Some(stored),
            Err(error) => {
                tracing::warn!(%error, "listing the stored modes failed: the sweep expires due searches and leaves deleted modes for later");
                None
            }
        };
        let mut report = SweepReport {
            modes: modes.len(),
            ..SweepReport::default()
        };
        for mode in &modes {
            let gone = stored
                .as_ref()
                .is_some_and(|s| !s.contains(&(mode.project_id.clone(), mode.mode.clone())));
            if gone {
                // Gone: every search fails, due or not.
                match self.fail_gone(mode).await {
                    Ok(n) => report.failed += n,
                    Err(error) => {
                        tracing::warn!(%error, project_id = %mode.project_id, game_mode = %mode.mode, "failing a deleted mode's searches failed");
                    }
                }
                continue;
            }
            let expiry = Expiry {
                ends: self.ends,
                lapses: self.lapses,
                limit: self.expire_batch,
            };
            match expiry.run(self.pool, mode, now_secs).await {
                Ok(n) => report.expired += n,
                Err(error) => {
                    tracing::warn!(%error, project_id = %mode.project_id, game_mode = %mode.mode, "expiring searches failed");
                }
            }
        }
        Ok(report)
    }

    /// Fails every search of `mode`, found without a row, as
    /// `GAME_MODE_DISABLED`; returns how many this call ended.
    ///
    /// The pool is read first and the database again after it: a search in
    /// that snapshot was added before the mode was found missing, so it is
    /// the deleted mode's (or a stale cache's), never one of a mode created
    /// again under the name since (that one has a row again: nothing fails).
    async fn fail_gone(&self, mode: &ModeKey) -> Result<usize, WorkerError> {
        let live = self.pool.snapshot(mode).await?;
        // A pool of proposed searches only has an empty snapshot.
        let proposals = self.pool.open_proposals(mode, f64::INFINITY, 1).await?;
        if live.is_empty() && proposals.is_empty() {
            return Ok(0);
        }
        let rows = async {
            match game_modes::get(self.db, &mode.project_id, &mode.mode).await {
                Ok(_) => Ok(None),
                Err(StoreError::NotFound) => match projects::get(self.db, &mode.project_id).await {
                    Err(StoreError::NotFound) => Ok(Some(projects::DELETED_MESSAGE)),
                    Ok(_) => Ok(Some("the game mode was deleted")),
                    Err(error) => Err(error),
                },
                Err(error) => Err(error),
            }
        };
        let Some(message) = within(READ_LIMIT, "reading a deleted mode", rows).await? else {
            return Ok(0);
        };
        let now = Utc::now().timestamp_micros() as f64 / 1e6;
        matchplane_store::tickets::withdraw_proposals(self.pool, mode, now).await?;
        let failed: Vec<FailedSearch> = live
            .into_iter()
            .map(|search| FailedSearch {
                ticket_id: search.ticket_id,
                player_id: search.player_id,
                code: Code::GameModeDisabled,
                message: message.to_owned(),
            })
            .collect();
        let ended = fail_searches(self.pool, mode, &failed, self.concurrency).await?;
        if ended > 0 {
            tracing::info!(project_id = %mode.project_id, game_mode = %mode.mode, ended, message, "searches of a deleted game mode failed");
        }
        Ok(ended)
    }
}

/// How a worker expires due searches; shared by the sweep and the cycle.
#[derive(Clone, Copy)]
pub(crate) struct Expiry<'a> {
    /// Records the ends in modes that record.
    pub ends: Option<&'a crate::recordings::EndRecorder>,
    /// The lapses excused after an outage of the store.
    pub lapses: Option<&'a crate::lapse_grace::LapseGrace>,
    /// Searches expired per call at most.
    pub limit: usize,
}

impl Expiry<'_> {
    /// Ends as `expired` up to `limit` searches of `mode` due at `now_secs`
    /// (Unix seconds; after an outage of the store, only those due before
    /// it: [`crate::lapse_grace`]), tells each client and records the ends;
    /// returns how many.
    ///
    /// # Errors
    /// A pool store failure.
    pub(crate) async fn run(
        &self,
        pool: &dyn PoolStore,
        mode: &ModeKey,
        now_secs: f64,
    ) -> Result<usize, WorkerError> {
        let due_by = self.lapses.map_or(now_secs, |l| l.due_by(mode, now_secs));
        let asked = std::time::Instant::now();
        let expired = pool
            .expire_due_by(mode, due_by, now_secs, self.limit)
            .await
            .inspect_err(|_| {
                if let Some(lapses) = self.lapses {
                    lapses.failed(mode);
                }
            })?;
        if let Some(lapses) = self.lapses {
            lapses.answered(mode, now_secs, now_secs + asked.elapsed().as_secs_f64());
        }
        crate::metrics::searches_ended(matchplane_store::search_ends::EXPIRED, expired.len());
        for ticket in &expired {
            publish(pool, ticket, &StatusMessage::Expired { reason: None }).await;
        }
        if let Some(ends) = self.ends {
            ends.expired(mode, &expired, (now_secs * 1000.0).round() as i64)
                .await;
        }
        Ok(expired.len())
    }
}

/// Sweeps every `sweep_interval` until `shutdown`.
pub(crate) async fn run(shared: Arc<Shared>, shutdown: CancellationToken) {
    let mut tick = tokio::time::interval(shared.config.sweep_interval);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let sweeper = Sweeper {
        pool: shared.pool.as_ref(),
        db: &shared.db,
        expire_batch: shared.config.expire_batch,
        concurrency: shared.config.claim_concurrency,
        ends: Some(&shared.ends),
        lapses: Some(&shared.lapses),
    };
    loop {
        tokio::select! {
            () = shutdown.cancelled() => return,
            _ = tick.tick() => {
                match sweeper.pass(Utc::now()).await {
                    Ok(report) => tracing::trace!(?report, "sweep"),
                    Err(error) => tracing::warn!(%error, "the sweep failed"),
                }
            }
        }
    }
}
