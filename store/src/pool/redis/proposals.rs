//! Proposals (`scripts/propose.lua`, `answer.lua`, `proposal.lua`,
//! `finish_proposal.lua`): the fenced hold, answers, reads and the
//! compare-and-set finish (see [`crate::pool::proposals`]).

use async_trait::async_trait;
use matchplane_matchmaker::acceptance::Fate;
use redis::AsyncCommands;
use serde::{Deserialize, Serialize};

use super::RedisPoolStore;
use crate::pool::proposals::{
    answer_from_word, answer_word, check_proposal, fail_message, AnswerOutcome, Finish,
    FinishOutcome, ProposalClaim, ProposalMember, ProposalState, Proposals,
};
use crate::pool::{ClaimOutcome, Ended, EndedSearch, ModeKey, PoolError};

/// How long a mode's `answers` hash lives after its last write (seconds):
/// the longest ticket lifetime.
const ANSWERS_LIFETIME: u64 = 86_400;

/// A proposal as kept in the `proposals` hash.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Meta {
    accept_by: f64,
    cooldown_seconds: f64,
    /// `[ticketId, playerId, partyId]`, in the claim's order.
    members: Vec<(String, String, String)>,
    record: String,
}

fn corrupt(what: impl std::fmt::Display) -> PoolError {
    PoolError::Corrupt(format!("proposal: {what}"))
}

#[async_trait]
impl Proposals for RedisPoolStore {
    async fn propose_many(
        &self,
        mode: &ModeKey,
        lease_token: u64,
        proposals: &[ProposalClaim],
    ) -> Result<Vec<ClaimOutcome>, PoolError> {
        for p in proposals {
            check_proposal(p)?;
        }
        if proposals.is_empty() {
            return Ok(Vec::new());
        }
        let keys = self.keys(mode);
        let mut call = self.inner.scripts.propose.prepare_invoke();
        call.key(&keys.lease)
            .key(&keys.players)
            .key(&keys.proposed)
            .key(&keys.answers)
            .key(&keys.proposals)
            .key(&keys.proposal_deadlines);
        call.arg(lease_token).arg(ANSWERS_LIFETIME);
        for p in proposals {
            let meta = Meta {
                accept_by: p.accept_by,
                cooldown_seconds: p.cooldown_seconds,
                members: p
                    .claim
                    .ticket_ids
                    .iter()
                    .zip(&p.claim.player_ids)
                    .zip(&p.parties)
                    .map(|((t, pl), pa)| (t.clone(), pl.clone(), pa.clone()))
                    .collect(),
                record: p.claim.record_json.clone(),
            };
            let meta = serde_json::to_string(&meta).map_err(corrupt)?;
            call.arg(&p.claim.match_id)
                .arg(p.accept_by)
                .arg(meta)
                .arg(p.claim.ticket_ids.len());
            for ticket in &p.claim.ticket_ids {
                call.arg(ticket);
            }
            for player in &p.claim.player_ids {
                call.arg(player);
            }
        }
        let reply: Vec<String> = call.invoke_async(&mut self.conn()).await?;
        if reply.first().map(String::as_str) == Some("lease_lost") {
            return Ok(vec![ClaimOutcome::LeaseLost; proposals.len()]);
        }
        let mut outcomes = Vec::with_capacity(proposals.len());
        let mut words = reply.into_iter();
        while let Some(word) = words.next() {
            match word.as_str() {
                "claimed" => {
                    words.next();
                    outcomes.push(ClaimOutcome::Claimed {
                        outbox_id: String::new(),
                    });
                }
                "conflict" => {
                    let count: usize = words
                        .next()
                        .and_then(|n| n.parse().ok())
                        .ok_or_else(|| corrupt("no count of gone tickets"))?;
                    let gone: Vec<String> = words.by_ref().take(count).collect();
                    outcomes.push(ClaimOutcome::Conflict { gone });
                }
                other => return Err(corrupt(format!("propose answered {other:?}"))),
            }
        }
        if outcomes.len() != proposals.len() {
            return Err(corrupt("propose answered too few groups"));
        }
        Ok(outcomes)
    }

    async fn answer_named(
        &self,
        mode: &ModeKey,
        ticket_id: &str,
        accept: bool,
        now: f64,
        named: Option<&str>,
    ) -> Result<AnswerOutcome, PoolError> {
        // The script reads an empty name as none: no proposal is named so.
        if named == Some("") {
            return Ok(AnswerOutcome::NotThatProposal);
        }
        let keys = self.keys(mode);
        let reply: Vec<String> = self
            .inner
            .scripts
            .answer
            .key(&keys.proposed)
            .key(&keys.answers)
            .key(&keys.proposal_deadlines)
            .key(&keys.proposals)
            .arg(ticket_id)
            .arg(if accept { "accept" } else { "decline" })
            .arg(ANSWERS_LIFETIME)
            .arg(now)
            .arg(named.unwrap_or(""))
            .invoke_async(&mut self.conn())
            .await?;
        let mut words = reply.into_iter();
        match words.next().as_deref() {
            Some("other") => Ok(AnswerOutcome::NotThatProposal),
            Some("open") => Ok(AnswerOutcome::Open {
                match_id: words.next().ok_or_else(|| corrupt("no match id"))?,
            }),
            Some("closed") => Ok(AnswerOutcome::Closed {
                match_id: words.next().ok_or_else(|| corrupt("no match id"))?,
                same: words.next().as_deref() == Some("1"),
            }),
            Some("not_proposed") => Ok(AnswerOutcome::NotProposed),
            other => Err(corrupt(format!("answer answered {other:?}"))),
        }
    }

    async fn proposal_of(
        &self,
        mode: &ModeKey,
        ticket_id: &str,
    ) -> Result<Option<String>, PoolError> {
        let keys = self.keys(mode);
        Ok(self.conn().hget(&keys.proposed, ticket_id).await?)
    }

    async fn proposal(
        &self,
        mode: &ModeKey,
        match_id: &str,
    ) -> Result<Option<ProposalState>, PoolError> {
        let keys = self.keys(mode);
        let [current, next, previous] = self.ended_keys(&keys);
        let reply: Vec<String> = self
            .inner
            .scripts
            .proposal
            .key(&keys.proposals)
            .key(&keys.players)
            .key(&keys.answers)
            .key(current)
            .key(next)
            .key(previous)
            .arg(match_id)
            .invoke_async(&mut self.conn())
            .await?;
        let mut words = reply.into_iter();
        let Some(meta) = words.next() else {
            return Ok(None);
        };
        let meta: Meta = serde_json::from_str(&meta).map_err(corrupt)?;
        let members = meta
            .members
            .into_iter()
            .map(|(ticket_id, player_id, party)| {
                let answer = words
                    .next()
                    .as_deref()
                    .and_then(answer_from_word)
                    .ok_or_else(|| corrupt("no answer for a member"))?;
                Ok(ProposalMember {
                    ticket_id,
                    player_id,
                    party,
                    answer,
                })
            })
            .collect::<Result<Vec<_>, PoolError>>()?;
        Ok(Some(ProposalState {
            match_id: match_id.to_owned(),
            accept_by: meta.accept_by,
            cooldown_seconds: meta.cooldown_seconds,
            members,
            record_json: meta.record,
        }))
    }

    async fn open_proposals(
        &self,
        mode: &ModeKey,
        due_by: f64,
        limit: usize,
    ) -> Result<Vec<String>, PoolError> {
        let keys = self.keys(mode);
        let count = isize::try_from(limit).unwrap_or(isize::MAX);
        let max = if due_by.is_finite() {
            due_by.to_string()
        } else {
            "+inf".to_owned()
        };
        Ok(self
            .conn()
            .zrangebyscore_limit(&keys.proposal_deadlines, "-inf", max, 0, count)
            .await?)
    }

    async fn finish_proposal(
        &self,
        mode: &ModeKey,
        finish: &Finish,
    ) -> Result<FinishOutcome, PoolError> {
        let keys = self.keys(mode);
        let [current, next, previous] = self.ended_keys(&keys);
        let made = finish.members.iter().all(|m| m.fate == Fate::Matched);
        let mut call = self.inner.scripts.finish_proposal.prepare_invoke();
        call.key(&keys.proposals)
            .key(&keys.proposal_deadlines)
            .key(&keys.proposed)
            .key(&keys.answers)
            .key(&keys.pool)
            .key(&keys.players)
            .key(&keys.deadlines)
            .key(&keys.pings)
            .key(&keys.reasons)
            .key(&keys.outbox)
            .key(&keys.cooldowns)
            .key(current)
            .key(next)
            .key(previous)
            .key(&keys.leaving);
        call.arg(&finish.match_id)
            .arg(self.bucket_lifetime())
            .arg(finish.cooldown_until)
            .arg(if made {
                finish.record_json.as_str()
            } else {
                finish.cancelled_record.as_str()
            });
        for m in &finish.members {
            let (fate, cooled, ended) = match m.fate {
                Fate::Matched => (
                    "matched",
                    false,
                    Some(Ended::Matched {
                        match_id: finish.match_id.clone(),
                    }),
                ),
                Fate::Requeued => ("requeued", false, None),
                Fate::AlreadyEnded { cooled } => ("ended", cooled, None),
                Fate::Fails { code, cooled } => (
                    "fail",
                    cooled,
                    Some(Ended::Failed {
                        code: code.to_owned(),
                        message: fail_message(code).to_owned(),
                    }),
                ),
            };
            let ended = match ended {
                Some(how) => self.ended_json(&EndedSearch::new(how, finish.now))?,
                None => String::new(),
            };
            call.arg(&m.ticket_id)
                .arg(&m.player_id)
                .arg(answer_word(m.answer))
                .arg(fate)
                .arg(if cooled { "1" } else { "0" })
                .arg(ended);
        }
        let reply: Vec<String> = call.invoke_async(&mut self.conn()).await?;
        let mut words = reply.into_iter();
        match words.next().as_deref() {
            Some("done") => {
                // Members may have left the pool (matched, failed).
                self.sync_live(mode).await;
                Ok(FinishOutcome::Done {
                    outbox_id: words.next().filter(|id| made && !id.is_empty()),
                })
            }
            Some("stale") => Ok(FinishOutcome::Stale),
            Some("closed") => Ok(FinishOutcome::Closed),
            other => Err(corrupt(format!("finish answered {other:?}"))),
        }
    }

    async fn cooldown_of(
        &self,
        mode: &ModeKey,
        player_id: &str,
        now: f64,
    ) -> Result<Option<f64>, PoolError> {
        let keys = self.keys(mode);
        let until: Option<f64> = self.conn().hget(&keys.cooldowns, player_id).await?;
        Ok(until.filter(|until| *until > now))
    }

    async fn forget_cooldowns(&self, mode: &ModeKey) -> Result<(), PoolError> {
        let keys = self.keys(mode);
        let () = self.conn().del(&keys.cooldowns).await?;
        Ok(())
    }
}
