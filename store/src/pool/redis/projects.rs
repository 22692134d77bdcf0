//! The registry of projects with searches (`P:projects`, see
//! `keys::projects_key`): written ahead of the adds, read and pruned by the
//! worker's sweep through [`crate::pool::PoolReads::projects_with_searches`].
//!
//! Why a registry at all: a project's pools are found from its modes with
//! searches (`P:{<projectId>}:counts`), and the project's id from the
//! database, until
//! the project is deleted. Its searches must still end (`GAME_MODE_DISABLED`),
//! also one a stale cache let start just after the delete.
//!
//! Why it is safe without one atomic step (the registry is in another
//! Cluster slot than the pools): a process writes a project (ZADD GT, its
//! clock) in the round trip of an add's first step (alone when that step
//! sends nothing: the `mode` scope without a quota), and then skips the
//! write for [`NOTED_FOR`]; the worker forgets a project only when it lists
//! no mode with searches and its score is [`PROJECT_GRACE`] old, checked
//! and removed in one script. An add racing the worker's check was written
//! at most [`NOTED_FOR`] before, so its score is far too recent to go,
//! whatever the order; a start written after the removal writes it again.
//! So the registry costs a start with a quota no round trip of its own, and
//! a search is never in a pool the registry does not list.

use std::time::{Duration, Instant};

use redis::{AsyncCommands, ErrorKind, FromRedisValue, ScriptInvocation, ServerErrorKind};

use super::keys::{projects_key, ProjectKeys};
use super::RedisPoolStore;
use crate::pool::types::wall_clock;
use crate::pool::PoolError;

/// How long a process skips writing a project it wrote: a write a minute
/// per project and process, not one per start.
const NOTED_FOR: Duration = Duration::from_secs(60);

/// How old a project's last write must be before an empty project is
/// forgotten: far longer than [`NOTED_FOR`] plus any difference between
/// two hosts' clocks.
const PROJECT_GRACE: Duration = Duration::from_secs(600);

/// Projects remembered per process before the stale ones are dropped.
const NOTED_MAX: usize = 10_000;

impl RedisPoolStore {
    /// Runs `invocation` (the add or the start script) in `project_id`: if
    /// this process did not write the project into the registry within
    /// [`NOTED_FOR`], behind a ZADD of it, pipelined (one round trip, the
    /// registry written first). A script Redis does not know yet
    /// (NOSCRIPT) is loaded and run again, the registry written already.
    pub(super) async fn invoke_in_project<T: FromRedisValue>(
        &self,
        project_id: &str,
        invocation: &ScriptInvocation<'_>,
    ) -> redis::RedisResult<T> {
        let now = Instant::now();
        if self.noted_since(project_id, now) {
            return invocation.invoke_async(&mut self.conn()).await;
        }
        let mut pipe = redis::pipe();
        pipe.cmd("ZADD")
            .arg(projects_key(self.prefix()))
            .arg("GT")
            .arg(wall_clock())
            .arg(project_id)
            .ignore()
            .invoke_script(invocation);
        let reply = match pipe.query_async::<(T,)>(&mut self.conn()).await {
            Ok((reply,)) => reply,
            Err(err) if err.kind() == ErrorKind::Server(ServerErrorKind::NoScript) => {
                invocation.invoke_async(&mut self.conn()).await?
            }
            Err(err) => return Err(err),
        };
        self.note(project_id, now);
        Ok(reply)
    }

    /// Writes `project_id` into the registry unless this process did within
    /// [`NOTED_FOR`]: before an add whose project's step needs no command of
    /// its own (the `mode` scope without a quota).
    pub(super) async fn note_project(&self, project_id: &str) -> Result<(), PoolError> {
        let now = Instant::now();
        if self.noted_since(project_id, now) {
            return Ok(());
        }
        let _added: i64 = redis::cmd("ZADD")
            .arg(projects_key(self.prefix()))
            .arg("GT")
            .arg(wall_clock())
            .arg(project_id)
            .query_async(&mut self.conn())
            .await?;
        self.note(project_id, now);
        Ok(())
    }

    /// Whether this process wrote `project_id` less than [`NOTED_FOR`]
    /// before `now`.
    pub(super) fn noted_since(&self, project_id: &str, now: Instant) -> bool {
        let noted = self
            .inner
            .noted
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        noted
            .get(project_id)
            .is_some_and(|at| now.saturating_duration_since(*at) < NOTED_FOR)
    }

    /// Remembers that the registry got `project_id` from a write sent at
    /// `at`.
    pub(super) fn note(&self, project_id: &str, at: Instant) {
        let mut noted = self
            .inner
            .noted
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if noted.len() >= NOTED_MAX {
            noted.retain(|_, written| at.saturating_duration_since(*written) < NOTED_FOR);
        }
        noted.insert(project_id.to_owned(), at);
    }

    /// The registry's projects with modes that may have searches, sorted;
    /// forgets those with none and no add for [`PROJECT_GRACE`].
    pub(super) async fn listed_projects(&self) -> Result<Vec<String>, PoolError> {
        let registry = projects_key(self.prefix());
        let listed: Vec<(String, f64)> = self.conn().zrange_withscores(&registry, 0, -1).await?;
        if listed.is_empty() {
            return Ok(Vec::new());
        }
        for (project, _) in &listed {
            let _waited = self.settle(project).await;
        }
        let mut pipe = redis::pipe();
        for (project, _) in &listed {
            pipe.hlen(ProjectKeys::new(self.prefix(), project).counts);
        }
        let modes: Vec<u64> = pipe.query_async(&mut self.conn()).await?;
        let cutoff = wall_clock() - PROJECT_GRACE.as_secs_f64();
        let mut projects = Vec::with_capacity(listed.len());
        for ((project, added), modes) in listed.into_iter().zip(modes) {
            if modes > 0 {
                projects.push(project);
            } else if added <= cutoff {
                let _forgotten: i64 = self
                    .inner
                    .scripts
                    .forget_project
                    .key(&registry)
                    .arg(&project)
                    .arg(cutoff)
                    .invoke_async(&mut self.conn())
                    .await?;
            }
        }
        projects.sort();
        Ok(projects)
    }
}
