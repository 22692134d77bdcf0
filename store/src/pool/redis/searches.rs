//! Adding, ending, touching and expiring live searches, and their
//! annotations, and the revocation of a ticket that never searched:
//! `scripts/add_search.lua`, `end_search.lua`, `expire.lua`, `revoke.lua`,
//! `touch.lua`, `ping.lua` and `reasons.lua` (the first four share
//! `common.lua`).

use async_trait::async_trait;
use redis::AsyncCommands;

use super::live::Admission;
use super::{parse_ended, parse_ping, RedisPoolStore};
use crate::pool::types::{wall_clock, MAX_CLAIM};
use crate::pool::{
    AddSearchError, EndOutcome, EndResult, Ended, EndedSearch, ModeKey, PlayerSearchScope,
    PoolError, Search, Searches,
};

/// Passes of one `expire_due` call at most (each reads up to its limit).
const MAX_EXPIRE_PASSES: usize = 20;

/// A search's pool entry to add, with the rules it is added under.
pub(super) struct AddEntry<'a> {
    pub ticket_id: &'a str,
    pub player_id: &'a str,
    /// The pool entry (compact JSON, `Search`).
    pub entry: &'a str,
    /// When it expires unless touched (Unix seconds).
    pub deadline: f64,
    /// The project's `maxConcurrentSearches`; `None` means no limit.
    pub max_live: Option<u64>,
    pub scope: PlayerSearchScope,
    /// The ticket's expiry (Unix seconds) when the search is started from
    /// a stored ticket: once added, the ticket leaves the project's pending
    /// tickets and joins its started ones (`keys::started_key`).
    pub started: Option<f64>,
}

/// The add script's answer: the measurement (pool size, version) of an
/// added search, the refusal otherwise. `script` names it in a corrupt
/// answer.
fn add_reply(
    reply: &[String],
    max_live: Option<u64>,
    script: &str,
    now: f64,
) -> Result<(String, String), AddSearchError> {
    match reply.first().map(String::as_str) {
        Some("ok") => match (reply.get(1), reply.get(2)) {
            (Some(size), Some(version)) => Ok((size.clone(), version.clone())),
            _ => Err(PoolError::Corrupt(format!("{script} answered ok without a size")).into()),
        },
        Some("active") => Err(AddSearchError::SearchAlreadyActive),
        Some("matched") => Err(AddSearchError::TicketAlreadyMatched),
        Some("revoked") => Err(AddSearchError::TicketRevoked),
        Some("cooldown") => Err(AddSearchError::DeclineCooldown {
            retry_after_seconds: reply
                .get(1)
                .and_then(|until| until.parse::<f64>().ok())
                .map_or(1, |until| (until - now).ceil().max(1.0) as u64),
        }),
        Some("quota") => Err(AddSearchError::QuotaExceeded {
            limit: max_live.unwrap_or_default(),
        }),
        Some("player") => Err(AddSearchError::PlayerAlreadySearching {
            ticket_id: reply.get(1).cloned().unwrap_or_default(),
            game_mode: reply.get(2).cloned().unwrap_or_default(),
        }),
        other => Err(PoolError::Corrupt(format!("{script} answered {other:?}")).into()),
    }
}

impl RedisPoolStore {
    /// Adds a search in the three steps of `live`: the project's admission,
    /// the add script, the project's count.
    pub(super) async fn add_entry(
        &self,
        mode: &ModeKey,
        add: &AddEntry<'_>,
    ) -> Result<(), AddSearchError> {
        let admission = self
            .admit(mode, add.ticket_id, add.player_id, add.max_live, add.scope)
            .await?;
        self.add_admitted(mode, add, admission).await
    }

    /// Steps 2 and 3 of [`Self::add_entry`], once the project admitted it.
    pub(super) async fn add_admitted(
        &self,
        mode: &ModeKey,
        add: &AddEntry<'_>,
        admission: Admission,
    ) -> Result<(), AddSearchError> {
        let keys = self.keys(mode);
        let ended = self.ended_keys(&keys);
        let mut invocation = self.inner.scripts.add.prepare_invoke();
        for key in keys.add_live(&ended) {
            invocation.key(key);
        }
        invocation
            .key(&keys.revoked)
            .key(&keys.proposals)
            .key(&keys.proposed)
            .key(&keys.leaving)
            .key(&keys.cooldowns);
        let [refusal, held_ticket, held_mode] = admission.refusal.args();
        let now = wall_clock();
        invocation
            .arg(add.ticket_id)
            .arg(add.player_id)
            .arg(add.entry)
            .arg(add.deadline)
            .arg(&mode.mode)
            .arg(refusal)
            .arg(held_ticket)
            .arg(held_mode)
            .arg(now);
        let reply: Vec<String> = invocation
            .invoke_async(&mut self.conn())
            .await
            .map_err(PoolError::from)?;
        let added = add_reply(&reply, add.max_live, "add_search", now);
        let started = add
            .started
            .filter(|_| added.is_ok())
            .map(|expires_at| (add.ticket_id, expires_at));
        // The add's outcome stands whatever this step does: on a failure the
        // mode's worker repairs the count (see `live`).
        if let Err(err) = self
            .after_add(
                mode,
                &admission,
                add.ticket_id,
                added.as_ref().ok().cloned(),
                started,
            )
            .await
        {
            tracing::warn!(project_id = %mode.project_id, game_mode = %mode.mode, error = %err,
                "the project's live count was not updated after an add");
        }
        added.map(|_| ())
    }

    /// One pass of the expiry sweep over at most `limit` due entries of the
    /// deadline index: how many it read, and the tickets it expired.
    async fn expire_batch(
        &self,
        mode: &ModeKey,
        (due_by, now): (f64, f64),
        limit: usize,
    ) -> Result<(usize, Vec<String>), PoolError> {
        let keys = self.keys(mode);
        let due: Vec<String> = self
            .conn()
            .zrangebyscore_limit(&keys.deadlines, "-inf", due_by, 0, limit as isize)
            .await?;
        if due.is_empty() {
            return Ok((0, Vec::new()));
        }
        let mut call = self.inner.scripts.expire.prepare_invoke();
        call.key(&keys.pool)
            .key(&keys.players)
            .key(&keys.deadlines)
            .key(&keys.pings)
            .key(&keys.reasons)
            .key(&self.ended_keys(&keys)[0])
            .key(&keys.proposed)
            .key(&keys.proposal_deadlines);
        call.arg(now)
            .arg(self.ended_json(&EndedSearch::new(Ended::Expired, now))?)
            .arg(self.bucket_lifetime())
            .arg(due_by);
        for ticket in &due {
            call.arg(ticket);
        }
        let expired: Vec<String> = call.invoke_async(&mut self.conn()).await?;
        if !expired.is_empty() {
            self.sync_live(mode).await;
        }
        Ok((due.len(), expired))
    }
}

#[async_trait]
impl Searches for RedisPoolStore {
    async fn revoke_ticket(
        &self,
        mode: &ModeKey,
        ticket_id: &str,
        expires_at: f64,
    ) -> Result<bool, PoolError> {
        let keys = self.keys(mode);
        let [current, next, previous] = self.ended_keys(&keys);
        let mut call = self.inner.scripts.revoke.prepare_invoke();
        call.key(&keys.pool)
            .key(current)
            .key(next)
            .key(previous)
            .key(&keys.revoked)
            .arg(ticket_id)
            .arg(expires_at)
            .arg(wall_clock());
        let revoked: i64 = call.invoke_async(&mut self.conn()).await?;
        Ok(revoked == 1)
    }

    async fn recount(&self, mode: &ModeKey) -> Result<(), PoolError> {
        self.measure_and_apply(mode).await
    }

    async fn add_search_scoped(
        &self,
        mode: &ModeKey,
        search: &Search,
        deadline: f64,
        max_live: Option<u64>,
        scope: PlayerSearchScope,
        socket: bool,
    ) -> Result<(), AddSearchError> {
        let stored = Search {
            ping_ms: None,
            ..search.clone()
        };
        let mut json =
            serde_json::to_string(&stored).map_err(|e| PoolError::Corrupt(e.to_string()))?;
        if socket {
            super::start::held_by_socket(&mut json);
        }
        self.add_entry(
            mode,
            &AddEntry {
                ticket_id: &search.ticket_id,
                player_id: &search.player_id,
                entry: &json,
                deadline,
                max_live,
                scope,
                started: None,
            },
        )
        .await
    }

    async fn end_search(
        &self,
        mode: &ModeKey,
        ticket_id: &str,
        outcome: &EndOutcome,
    ) -> Result<EndResult, PoolError> {
        let keys = self.keys(mode);
        let [current, next, previous] = self.ended_keys(&keys);
        let reply: Vec<String> = self
            .inner
            .scripts
            .end
            .key(&keys.pool)
            .key(&keys.players)
            .key(&keys.deadlines)
            .key(&keys.pings)
            .key(&keys.reasons)
            .key(current)
            .key(next)
            .key(previous)
            .key(&keys.proposed)
            .key(&keys.leaving)
            .arg(ticket_id)
            .arg(self.ended_json(&EndedSearch::of(outcome, wall_clock()))?)
            .arg(self.bucket_lifetime())
            .invoke_async(&mut self.conn())
            .await?;
        match (reply.first().map(String::as_str), reply.get(1)) {
            (Some("ended"), _) => {
                self.sync_live(mode).await;
                Ok(EndResult::Ended)
            }
            (Some("not_live"), _) => Ok(EndResult::NotLive),
            (Some("matched"), Some(json)) => match parse_ended(json)?.how {
                Ended::Matched { match_id } => Ok(EndResult::Matched { match_id }),
                _ => Ok(EndResult::NotLive),
            },
            other => Err(PoolError::Corrupt(format!("end_search answered {other:?}"))),
        }
    }

    async fn touch_search(
        &self,
        mode: &ModeKey,
        ticket_id: &str,
        deadline: f64,
    ) -> Result<bool, PoolError> {
        let keys = self.keys(mode);
        let live: i64 = self
            .inner
            .scripts
            .touch
            .key(&keys.pool)
            .key(&keys.deadlines)
            .arg(ticket_id)
            .arg(deadline)
            .invoke_async(&mut self.conn())
            .await?;
        Ok(live == 1)
    }

    async fn expire_due_by(
        &self,
        mode: &ModeKey,
        due_by: f64,
        now: f64,
        limit: usize,
    ) -> Result<Vec<String>, PoolError> {
        let (due_by, limit) = (due_by.min(now), limit.clamp(1, MAX_CLAIM));
        let mut expired = Vec::new();
        // The index may begin with entries of searches claimed since (claims
        // leave them here); each pass drops those it reads, so keep reading
        // while a full batch came back and fewer than `limit` expired.
        for _ in 0..MAX_EXPIRE_PASSES {
            let (read, mut ended) = self
                .expire_batch(mode, (due_by, now), limit - expired.len())
                .await?;
            let full = read == limit - expired.len();
            expired.append(&mut ended);
            if !full || expired.len() >= limit {
                break;
            }
        }
        Ok(expired)
    }

    async fn record_ping(
        &self,
        mode: &ModeKey,
        ticket_id: &str,
        rtt_ms: f64,
    ) -> Result<Option<f64>, PoolError> {
        let keys = self.keys(mode);
        let samples: Option<String> = self
            .inner
            .scripts
            .ping
            .key(&keys.pool)
            .key(&keys.pings)
            .arg(ticket_id)
            .arg(rtt_ms.to_string())
            .invoke_async(&mut self.conn())
            .await?;
        match samples {
            Some(samples) => parse_ping(&samples),
            None => Ok(None),
        }
    }

    async fn set_waiting_reasons(
        &self,
        mode: &ModeKey,
        reasons: &[(String, String)],
    ) -> Result<(), PoolError> {
        let keys = self.keys(mode);
        // Chunks keep each script short, so it never blocks Redis for long.
        for chunk in reasons.chunks(5_000) {
            let mut call = self.inner.scripts.reasons.prepare_invoke();
            call.key(&keys.pool).key(&keys.reasons);
            for (ticket, reason) in chunk {
                call.arg(ticket).arg(reason);
            }
            let _stored: i64 = call.invoke_async(&mut self.conn()).await?;
        }
        Ok(())
    }
}
