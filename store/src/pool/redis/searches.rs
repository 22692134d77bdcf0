//! Adding, ending, touching and expiring live searches, and their
//! annotations: `scripts/add_search.lua`, `end_search.lua`, `expire.lua`,
//! `touch.lua`, `ping.lua` and `reasons.lua` (the first three share
//! `common.lua`).

use async_trait::async_trait;
use redis::AsyncCommands;

use super::{parse_ended, parse_ping, RedisPoolStore};
use crate::pool::types::{wall_clock, MAX_CLAIM};
use crate::pool::{
    AddSearchError, EndOutcome, EndResult, Ended, EndedSearch, ModeKey, PlayerSearchScope,
    PoolError, Search, Searches,
};

/// Passes of one `expire_due` call at most (each reads up to its limit).
const MAX_EXPIRE_PASSES: usize = 20;

/// The add script's answer (also the start script's refusals): `Ok` for
/// `{'ok'}`, the refusal otherwise. `script` names it in a corrupt answer.
pub(super) fn add_reply(
    reply: &[String],
    max_live: Option<u64>,
    script: &str,
) -> Result<(), AddSearchError> {
    match reply.first().map(String::as_str) {
        Some("ok") => Ok(()),
        Some("active") => Err(AddSearchError::SearchAlreadyActive),
        Some("matched") => Err(AddSearchError::TicketAlreadyMatched),
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
    /// One pass of the expiry sweep over at most `limit` due entries of the
    /// deadline index: how many it read, and the tickets it expired.
    async fn expire_batch(
        &self,
        mode: &ModeKey,
        now: f64,
        limit: usize,
    ) -> Result<(usize, Vec<String>), PoolError> {
        let keys = self.keys(mode);
        let due: Vec<String> = self
            .conn()
            .zrangebyscore_limit(&keys.deadlines, "-inf", now, 0, limit as isize)
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
            .key(&keys.live)
            .key(&keys.modes)
            .key(&self.ended_keys(&keys)[0])
            .key(&keys.proposed)
            .key(&keys.proposal_deadlines);
        call.arg(now)
            .arg(self.ended_json(&EndedSearch::new(Ended::Expired, now))?)
            .arg(self.bucket_lifetime())
            .arg(&mode.mode);
        for ticket in &due {
            call.arg(ticket);
        }
        Ok((due.len(), call.invoke_async(&mut self.conn()).await?))
    }
}

#[async_trait]
impl Searches for RedisPoolStore {
    async fn add_search_scoped(
        &self,
        mode: &ModeKey,
        search: &Search,
        deadline: f64,
        max_live: Option<u64>,
        scope: PlayerSearchScope,
    ) -> Result<(), AddSearchError> {
        let keys = self.keys(mode);
        let ended = self.ended_keys(&keys);
        let stored = Search {
            ping_ms: None,
            ..search.clone()
        };
        let json = serde_json::to_string(&stored).map_err(|e| PoolError::Corrupt(e.to_string()))?;
        let mut invocation = self.inner.scripts.add.prepare_invoke();
        for key in keys.add_live(&ended) {
            invocation.key(key);
        }
        invocation
            .arg(search.ticket_id.as_str())
            .arg(search.player_id.as_str())
            .arg(json)
            .arg(deadline)
            .arg(max_live.map(|l| l.to_string()).unwrap_or_default())
            .arg(&mode.mode)
            .arg(scope.as_str());
        let reply: Vec<String> = self
            .invoke_in_project(&mode.project_id, &invocation)
            .await
            .map_err(PoolError::from)?;
        add_reply(&reply, max_live, "add_search")
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
            .key(&keys.live)
            .key(&keys.modes)
            .arg(ticket_id)
            .arg(self.ended_json(&EndedSearch::of(outcome, wall_clock()))?)
            .arg(self.bucket_lifetime())
            .arg(&mode.mode)
            .invoke_async(&mut self.conn())
            .await?;
        match (reply.first().map(String::as_str), reply.get(1)) {
            (Some("ended"), _) => Ok(EndResult::Ended),
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

    async fn expire_due(
        &self,
        mode: &ModeKey,
        now: f64,
        limit: usize,
    ) -> Result<Vec<String>, PoolError> {
        let limit = limit.clamp(1, MAX_CLAIM);
        let mut expired = Vec::new();
        // The index may begin with entries of searches claimed since (claims
        // leave them here); each pass drops those it reads, so keep reading
        // while a full batch came back and fewer than `limit` expired.
        for _ in 0..MAX_EXPIRE_PASSES {
            let (read, mut ended) = self.expire_batch(mode, now, limit - expired.len()).await?;
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
