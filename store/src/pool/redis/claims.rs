//! Claims (`scripts/claim.lua`): many groups per script run, fenced by the
//! mode's lease, each claimed group's record appended to the outbox in the
//! same step.

use async_trait::async_trait;

use super::keys::ModeKeys;
use super::RedisPoolStore;
use crate::pool::types::{check_claim, wall_clock};
use crate::pool::{Claim, ClaimOutcome, Claims, Ended, EndedSearch, ModeKey, PoolError};

/// Tickets one claim script run takes at most (its groups are whole).
const CLAIM_BATCH_TICKETS: usize = 2_000;

/// The claim script's answer for `groups` groups, in order.
fn parse_claim_reply(reply: Vec<String>, groups: usize) -> Result<Vec<ClaimOutcome>, PoolError> {
    let corrupt = |what: &str| PoolError::Corrupt(format!("claim answered {what}"));
    if reply.first().map(String::as_str) == Some("lease_lost") {
        return Ok(vec![ClaimOutcome::LeaseLost; groups]);
    }
    let mut outcomes = Vec::with_capacity(groups);
    let mut words = reply.into_iter();
    while let Some(word) = words.next() {
        match word.as_str() {
            "claimed" => outcomes.push(ClaimOutcome::Claimed {
                outbox_id: words.next().ok_or_else(|| corrupt("no outbox id"))?,
            }),
            "conflict" => {
                let count: usize = words
                    .next()
                    .and_then(|n| n.parse().ok())
                    .ok_or_else(|| corrupt("no count of gone tickets"))?;
                let gone: Vec<String> = words.by_ref().take(count).collect();
                if gone.len() != count {
                    return Err(corrupt("fewer gone tickets than counted"));
                }
                outcomes.push(ClaimOutcome::Conflict { gone });
            }
            other => return Err(corrupt(&format!("{other:?}"))),
        }
    }
    if outcomes.len() != groups {
        return Err(corrupt(&format!(
            "{} outcomes for {groups} groups",
            outcomes.len()
        )));
    }
    Ok(outcomes)
}

impl RedisPoolStore {
    /// One run of the claim script over `batch` (see `scripts/claim.lua`).
    async fn claim_batch(
        &self,
        keys: &ModeKeys,
        lease_token: u64,
        batch: &[Claim],
    ) -> Result<Vec<ClaimOutcome>, PoolError> {
        // EVALSHA built as one command rather than through a
        // `ScriptInvocation`, which keeps every argument in an allocation of
        // its own before copying it into the command: a cycle sends two
        // arguments per search and a record per match.
        let script = &self.inner.scripts.claim;
        let tickets: usize = batch.iter().map(|claim| claim.ticket_ids.len()).sum();
        // Sized up front (the ended records are about 100 bytes each): a
        // batch is hundreds of kilobytes, which doubling would copy again
        // and again.
        let data: usize = batch
            .iter()
            .map(|claim| {
                let ids = claim.ticket_ids.iter().chain(&claim.player_ids);
                claim.match_id.len() * 2
                    + claim.record_json.len()
                    + 128
                    + ids.map(String::len).sum::<usize>()
            })
            .sum();
        let mut call = redis::Cmd::with_capacity(15 + 4 * batch.len() + 2 * tickets, data + 1024);
        call.arg("EVALSHA")
            .arg(script.get_hash())
            .arg(8)
            .arg(&keys.lease)
            .arg(&keys.pool)
            .arg(&keys.players)
            .arg(&keys.deadlines)
            .arg(&keys.pings)
            .arg(&keys.reasons)
            .arg(&keys.outbox)
            .arg(&self.ended_keys(keys)[0]);
        call.arg(lease_token)
            .arg(self.bucket_lifetime())
            .arg(batch.len())
            .arg(tickets);
        let now = wall_clock();
        for claim in batch {
            let ended = self.ended_json(&EndedSearch::new(
                Ended::Matched {
                    match_id: claim.match_id.clone(),
                },
                now,
            ))?;
            call.arg(&claim.match_id)
                .arg(ended)
                .arg(&claim.record_json)
                .arg(claim.ticket_ids.len());
        }
        // Every ticket of the batch, then every player in the same order:
        // the script hands each run to one Redis command as it is.
        for claim in batch {
            for ticket in &claim.ticket_ids {
                call.arg(ticket);
            }
        }
        for claim in batch {
            for player in &claim.player_ids {
                call.arg(player);
            }
        }
        let mut conn = self.conn();
        let reply: Vec<String> = match call.query_async(&mut conn).await {
            Err(e) if e.kind() == redis::ErrorKind::Server(redis::ServerErrorKind::NoScript) => {
                script.load_async(&mut conn).await?;
                call.query_async(&mut conn).await?
            }
            other => other?,
        };
        parse_claim_reply(reply, batch.len())
    }
}

#[async_trait]
impl Claims for RedisPoolStore {
    async fn claim(
        &self,
        mode: &ModeKey,
        lease_token: u64,
        claim: &Claim,
    ) -> Result<ClaimOutcome, PoolError> {
        let mut outcomes = self
            .claim_many(mode, lease_token, std::slice::from_ref(claim))
            .await?;
        outcomes
            .pop()
            .ok_or_else(|| PoolError::Corrupt("claim answered nothing".into()))
    }

    async fn claim_many(
        &self,
        mode: &ModeKey,
        lease_token: u64,
        claims: &[Claim],
    ) -> Result<Vec<ClaimOutcome>, PoolError> {
        for claim in claims {
            check_claim(claim)?;
        }
        let keys = self.keys(mode);
        let mut batches: Vec<&[Claim]> = Vec::new();
        let (mut start, mut tickets) = (0, 0);
        for (i, claim) in claims.iter().enumerate() {
            if tickets > 0 && tickets + claim.ticket_ids.len() > CLAIM_BATCH_TICKETS {
                batches.push(&claims[start..i]);
                (start, tickets) = (i, 0);
            }
            tickets += claim.ticket_ids.len();
        }
        if start < claims.len() {
            batches.push(&claims[start..]);
        }
        // Every batch is sent at once: the multiplexed connection pipelines
        // them, so Redis runs one script after the other without waiting
        // for a round trip in between.
        let calls = batches
            .into_iter()
            .map(|batch| self.claim_batch(&keys, lease_token, batch));
        let answers = futures::future::try_join_all(calls).await?;
        let outcomes: Vec<ClaimOutcome> = answers.into_iter().flatten().collect();
        if outcomes
            .iter()
            .any(|o| matches!(o, ClaimOutcome::Claimed { .. }))
        {
            self.sync_live(mode).await;
        }
        Ok(outcomes)
    }
}
