//! Backfills on Redis: the roster views in `backfills`, the seats in
//! `backfill_seats` (see `keys::ModeKeys`), changed by
//! `scripts/backfill_change.lua` and filled by `scripts/fill.lua`.

use async_trait::async_trait;
use std::collections::HashMap;

use super::RedisPoolStore;
use crate::pool::backfills::check_fill;
use crate::pool::types::wall_clock;
use crate::pool::{
    BackfillChange, BackfillStatus, Backfills, Ended, EndedSearch, FillClaim, FillOutcome,
    LiveBackfill, ModeKey, OpenBackfill, PoolError,
};

/// `<status>|<revision>|<expiresAt>|<seats>` of a backfill, `<seats>` its
/// seat counters (the open seats per team, then in a role queue the open
/// seats per team and role: [`OpenBackfill::seat_counters`]).
fn seats_field(status: BackfillStatus, backfill: &OpenBackfill) -> String {
    format!(
        "{}|{}|{}|{}",
        status.as_str(),
        backfill.revision,
        backfill.expires_at,
        csv(&backfill.seat_counters())
    )
}

fn csv(seats: &[u32]) -> String {
    seats
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

fn corrupt(what: impl std::fmt::Display) -> PoolError {
    PoolError::Corrupt(format!("backfill: {what}"))
}

/// The live state of a roster view `json` and its seats field.
fn live_of(json: &str, seats: &str) -> Result<LiveBackfill, PoolError> {
    let mut backfill: OpenBackfill = serde_json::from_str(json).map_err(corrupt)?;
    let mut parts = seats.splitn(4, '|');
    let status = parts
        .next()
        .and_then(BackfillStatus::parse)
        .ok_or_else(|| corrupt("status"))?;
    backfill.revision = parts
        .next()
        .and_then(|r| r.parse().ok())
        .ok_or_else(|| corrupt("revision"))?;
    backfill.expires_at = parts
        .next()
        .and_then(|r| r.parse().ok())
        .ok_or_else(|| corrupt("expiresAt"))?;
    let counters: Vec<u32> = parts
        .next()
        .unwrap_or_default()
        .split(',')
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().map_err(corrupt))
        .collect::<Result<_, _>>()?;
    if !backfill.set_seat_counters(&counters) {
        return Err(corrupt("seat counters do not match the view"));
    }
    Ok(LiveBackfill { backfill, status })
}

fn change_of(reply: Vec<String>) -> Result<BackfillChange, PoolError> {
    match reply.first().map(String::as_str) {
        Some("changed") => Ok(BackfillChange::Changed {
            revision: reply
                .get(1)
                .and_then(|r| r.parse().ok())
                .ok_or_else(|| corrupt("no revision"))?,
        }),
        Some("not_open") => Ok(BackfillChange::NotOpen(
            reply
                .get(1)
                .and_then(|s| BackfillStatus::parse(s))
                .ok_or_else(|| corrupt("status"))?,
        )),
        Some("unknown") => Ok(BackfillChange::Unknown),
        other => Err(corrupt(format!("change answered {other:?}"))),
    }
}

impl RedisPoolStore {
    async fn change_backfill(
        &self,
        mode: &ModeKey,
        backfill_id: &str,
        replace: Option<&OpenBackfill>,
    ) -> Result<BackfillChange, PoolError> {
        let keys = self.keys(mode);
        let mut call = self.inner.scripts.backfill_change.prepare_invoke();
        call.key(&keys.backfills).key(&keys.backfill_seats);
        match replace {
            None => {
                call.arg("close").arg(backfill_id);
            }
            Some(b) => {
                let json = serde_json::to_string(b).map_err(corrupt)?;
                call.arg("replace")
                    .arg(backfill_id)
                    .arg(json)
                    .arg(b.expires_at.to_string())
                    .arg(csv(&b.seat_counters()));
            }
        }
        let reply: Vec<String> = call.invoke_async(&mut self.conn()).await?;
        change_of(reply)
    }
}

#[async_trait]
impl Backfills for RedisPoolStore {
    async fn open_backfill(
        &self,
        mode: &ModeKey,
        backfill: &OpenBackfill,
    ) -> Result<bool, PoolError> {
        let keys = self.keys(mode);
        let json = serde_json::to_string(backfill).map_err(corrupt)?;
        let id = backfill.backfill_id.as_str();
        // The seats field decides (fills and changes read it); the view is
        // written only with it, so a backfill already there keeps both.
        let mut call = self.inner.scripts.backfill_change.prepare_invoke();
        call.key(&keys.backfills)
            .key(&keys.backfill_seats)
            .arg("open")
            .arg(id)
            .arg(json)
            .arg(seats_field(BackfillStatus::Open, backfill));
        let reply: Vec<String> = call.invoke_async(&mut self.conn()).await?;
        Ok(reply.first().map(String::as_str) == Some("opened"))
    }

    async fn replace_backfill(
        &self,
        mode: &ModeKey,
        backfill: &OpenBackfill,
    ) -> Result<BackfillChange, PoolError> {
        self.change_backfill(mode, &backfill.backfill_id, Some(backfill))
            .await
    }

    async fn close_backfill(
        &self,
        mode: &ModeKey,
        backfill_id: &str,
    ) -> Result<BackfillChange, PoolError> {
        self.change_backfill(mode, backfill_id, None).await
    }

    async fn backfill(
        &self,
        mode: &ModeKey,
        backfill_id: &str,
    ) -> Result<Option<LiveBackfill>, PoolError> {
        let keys = self.keys(mode);
        let (json, seats): (Option<String>, Option<String>) = redis::pipe()
            .hget(&keys.backfills, backfill_id)
            .hget(&keys.backfill_seats, backfill_id)
            .query_async(&mut self.conn())
            .await?;
        match (json, seats) {
            (Some(json), Some(seats)) => live_of(&json, &seats).map(Some),
            _ => Ok(None),
        }
    }

    async fn open_backfills(&self, mode: &ModeKey) -> Result<Vec<OpenBackfill>, PoolError> {
        let keys = self.keys(mode);
        let (views, seats): (HashMap<String, String>, HashMap<String, String>) = redis::pipe()
            .hgetall(&keys.backfills)
            .hgetall(&keys.backfill_seats)
            .query_async(&mut self.conn())
            .await?;
        let mut open = Vec::new();
        for (id, field) in seats {
            if !field.starts_with("open|") {
                continue;
            }
            if let Some(json) = views.get(&id) {
                open.push(live_of(json, &field)?.backfill);
            }
        }
        Ok(open)
    }

    async fn forget_backfill(&self, mode: &ModeKey, backfill_id: &str) -> Result<(), PoolError> {
        let keys = self.keys(mode);
        let mut conn = self.conn();
        let () = redis::pipe()
            .atomic()
            .hdel(&keys.backfills, backfill_id)
            .ignore()
            .hdel(&keys.backfill_seats, backfill_id)
            .ignore()
            .query_async(&mut conn)
            .await?;
        Ok(())
    }

    async fn claim_fill(
        &self,
        mode: &ModeKey,
        lease_token: u64,
        fill: &FillClaim,
        now: f64,
    ) -> Result<FillOutcome, PoolError> {
        check_fill(fill)?;
        let keys = self.keys(mode);
        let claim = &fill.claim;
        let ended = self.ended_json(&EndedSearch::new(
            Ended::Matched {
                match_id: claim.match_id.clone(),
            },
            wall_clock(),
        ))?;
        let mut call = self.inner.scripts.fill.prepare_invoke();
        call.key(&keys.lease)
            .key(&keys.pool)
            .key(&keys.players)
            .key(&keys.deadlines)
            .key(&keys.pings)
            .key(&keys.reasons)
            .key(&keys.outbox)
            .key(&self.ended_keys(&keys)[0])
            .key(&keys.backfill_seats)
            .key(&keys.backfills);
        let view_after = match &fill.view_after {
            Some(view) => serde_json::to_string(view).map_err(corrupt)?,
            None => String::new(),
        };
        call.arg(lease_token)
            .arg(self.bucket_lifetime())
            .arg(&fill.backfill_id)
            .arg(fill.revision)
            .arg(now.to_string())
            .arg(csv(&fill.counters_taken()))
            .arg(&claim.match_id)
            .arg(ended)
            .arg(&claim.record_json)
            .arg(claim.ticket_ids.len());
        for ticket in &claim.ticket_ids {
            call.arg(ticket);
        }
        for player in &claim.player_ids {
            call.arg(player);
        }
        call.arg(view_after);
        let reply: Vec<String> = call.invoke_async(&mut self.conn()).await?;
        if reply.first().map(String::as_str) == Some("claimed") {
            self.sync_live(mode).await;
        }
        match reply.first().map(String::as_str) {
            Some("lease_lost") => Ok(FillOutcome::LeaseLost),
            Some("stale") => Ok(FillOutcome::Stale),
            Some("conflict") => Ok(FillOutcome::Conflict {
                gone: reply.into_iter().skip(2).collect(),
            }),
            Some("claimed") => Ok(FillOutcome::Claimed {
                outbox_id: reply
                    .get(1)
                    .cloned()
                    .ok_or_else(|| corrupt("no outbox id"))?,
                status: reply
                    .get(2)
                    .and_then(|s| BackfillStatus::parse(s))
                    .ok_or_else(|| corrupt("no status"))?,
            }),
            other => Err(corrupt(format!("fill answered {other:?}"))),
        }
    }
}
