//! Proposals under the one lock: the fenced hold, answers, and the
//! compare-and-set finish (see [`crate::pool::proposals`]).

use async_trait::async_trait;
use matchplane_matchmaker::acceptance::{Answer, Fate};
use tokio::time::Instant;

use super::{MemoryPoolStore, ModeState, OutboxItem};
use crate::pool::proposals::{
    answer_of_ended, check_proposal, fail_message, AnswerOutcome, Finish, FinishOutcome,
    ProposalClaim, ProposalMember, ProposalState, Proposals,
};
use crate::pool::{ClaimOutcome, Ended, EndedSearch, ModeKey, PoolError};

/// An open proposal as held.
pub(super) struct OpenProposal {
    accept_by: f64,
    cooldown_seconds: f64,
    /// (ticket, player, party), in the claim's order.
    members: Vec<(String, String, String)>,
    record_json: String,
}

impl ModeState {
    fn is_live(&self, ticket: &str, player: &str) -> bool {
        self.pool.get(ticket).is_some_and(|s| s.player_id == player)
    }

    /// A member's answer now: its recorded one while live, else how its
    /// search ended.
    fn answer_now(&self, match_id: &str, ticket: &str, player: &str) -> Answer {
        if !self.is_live(ticket, player) {
            return answer_of_ended(self.ended.get(ticket));
        }
        match self.answers.get(ticket) {
            Some((m, a)) if m == match_id => *a,
            _ => Answer::Pending,
        }
    }
}

#[async_trait]
impl Proposals for MemoryPoolStore {
    async fn propose_many(
        &self,
        mode: &ModeKey,
        lease_token: u64,
        proposals: &[ProposalClaim],
    ) -> Result<Vec<ClaimOutcome>, PoolError> {
        for p in proposals {
            check_proposal(p)?;
        }
        let now = Instant::now();
        let mut state = self.state();
        let pool = state.mode(mode);
        if pool.lease_token(now) != Some(lease_token) {
            return Ok(vec![ClaimOutcome::LeaseLost; proposals.len()]);
        }
        let mut outcomes = Vec::with_capacity(proposals.len());
        for p in proposals {
            let claim = &p.claim;
            let gone: Vec<String> = claim
                .ticket_ids
                .iter()
                .zip(&claim.player_ids)
                .filter(|(t, pl)| !pool.is_live(t, pl) || pool.proposed.contains_key(t.as_str()))
                .map(|(t, _)| t.clone())
                .collect();
            if !gone.is_empty() {
                outcomes.push(ClaimOutcome::Conflict { gone });
                continue;
            }
            for ticket in &claim.ticket_ids {
                pool.proposed.insert(ticket.clone(), claim.match_id.clone());
                pool.answers
                    .insert(ticket.clone(), (claim.match_id.clone(), Answer::Pending));
            }
            let members = claim
                .ticket_ids
                .iter()
                .zip(&claim.player_ids)
                .zip(&p.parties)
                .map(|((t, pl), pa)| (t.clone(), pl.clone(), pa.clone()))
                .collect();
            pool.proposals.insert(
                claim.match_id.clone(),
                OpenProposal {
                    accept_by: p.accept_by,
                    cooldown_seconds: p.cooldown_seconds,
                    members,
                    record_json: claim.record_json.clone(),
                },
            );
            outcomes.push(ClaimOutcome::Claimed {
                outbox_id: String::new(),
            });
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
        let given = if accept {
            Answer::Accept
        } else {
            Answer::Decline
        };
        let mut state = self.state();
        let pool = state.mode(mode);
        let mut last = pool.answers.get(ticket_id).cloned();
        let mut open = pool.proposed.get(ticket_id).cloned();
        // Named: only that proposal counts (the Redis script's rule).
        if let Some(named) = named {
            open = open.filter(|m| m == named);
            last = last.filter(|(m, _)| m == named);
            if open.is_none() && last.is_none() {
                return Ok(AnswerOutcome::NotThatProposal);
            }
        }
        Ok(match (open, last) {
            (Some(match_id), last) => {
                let previous = last
                    .filter(|(m, _)| *m == match_id)
                    .map(|(_, a)| a)
                    .unwrap_or(Answer::Pending);
                // At or after `acceptBy` nothing is recorded, closed yet
                // or not (docs/acceptance.md, "How a proposal ends").
                let late = pool
                    .proposals
                    .get(&match_id)
                    .is_some_and(|held| now >= held.accept_by);
                if late {
                    AnswerOutcome::Closed {
                        match_id,
                        same: previous == given,
                    }
                } else if previous == Answer::Decline && given != Answer::Decline {
                    AnswerOutcome::Closed {
                        match_id,
                        same: false,
                    }
                } else if given == Answer::Decline
                    && previous != Answer::Decline
                    && pool.proposals.get(&match_id).is_some_and(|held| {
                        held.members.iter().any(|(other, _, _)| {
                            other != ticket_id
                                && pool.answers.get(other)
                                    == Some(&(match_id.clone(), Answer::Decline))
                        })
                    })
                {
                    // The first decline ends it: a second is not recorded.
                    AnswerOutcome::Closed {
                        match_id,
                        same: false,
                    }
                } else {
                    pool.answers
                        .insert(ticket_id.to_owned(), (match_id.clone(), given));
                    AnswerOutcome::Open { match_id }
                }
            }
            (None, Some((match_id, previous))) => AnswerOutcome::Closed {
                match_id,
                same: previous == given,
            },
            (None, None) => AnswerOutcome::NotProposed,
        })
    }

    async fn proposal_of(
        &self,
        mode: &ModeKey,
        ticket_id: &str,
    ) -> Result<Option<String>, PoolError> {
        let state = self.state();
        Ok(state
            .modes
            .get(mode)
            .and_then(|pool| pool.proposed.get(ticket_id).cloned()))
    }

    async fn proposal(
        &self,
        mode: &ModeKey,
        match_id: &str,
    ) -> Result<Option<ProposalState>, PoolError> {
        let state = self.state();
        let Some(pool) = state.modes.get(mode) else {
            return Ok(None);
        };
        let Some(held) = pool.proposals.get(match_id) else {
            return Ok(None);
        };
        Ok(Some(ProposalState {
            match_id: match_id.to_owned(),
            accept_by: held.accept_by,
            cooldown_seconds: held.cooldown_seconds,
            members: held
                .members
                .iter()
                .map(|(t, pl, pa)| ProposalMember {
                    ticket_id: t.clone(),
                    player_id: pl.clone(),
                    party: pa.clone(),
                    answer: pool.answer_now(match_id, t, pl),
                })
                .collect(),
            record_json: held.record_json.clone(),
        }))
    }

    async fn open_proposals(
        &self,
        mode: &ModeKey,
        due_by: f64,
        limit: usize,
    ) -> Result<Vec<String>, PoolError> {
        let state = self.state();
        let Some(pool) = state.modes.get(mode) else {
            return Ok(Vec::new());
        };
        let mut open: Vec<(f64, &String)> = pool
            .proposals
            .iter()
            .filter(|(_, held)| held.accept_by <= due_by)
            .map(|(id, held)| (held.accept_by, id))
            .collect();
        open.sort_by(|a, b| a.0.total_cmp(&b.0).then_with(|| a.1.cmp(b.1)));
        Ok(open
            .into_iter()
            .take(limit)
            .map(|(_, id)| id.clone())
            .collect())
    }

    async fn finish_proposal(
        &self,
        mode: &ModeKey,
        finish: &Finish,
    ) -> Result<FinishOutcome, PoolError> {
        let mut state = self.state();
        let pool = state.mode(mode);
        let Some(held) = pool.proposals.get(&finish.match_id) else {
            return Ok(FinishOutcome::Closed);
        };
        let same_members = held.members.len() == finish.members.len()
            && held
                .members
                .iter()
                .zip(&finish.members)
                .all(|((t, pl, _), m)| *t == m.ticket_id && *pl == m.player_id);
        if !same_members {
            return Ok(FinishOutcome::Stale);
        }
        let unchanged = finish
            .members
            .iter()
            .all(|m| pool.answer_now(&finish.match_id, &m.ticket_id, &m.player_id) == m.answer);
        if !unchanged {
            return Ok(FinishOutcome::Stale);
        }
        pool.proposals.remove(&finish.match_id);
        let mut removed = 0;
        let made = finish.members.iter().all(|m| m.fate == Fate::Matched);
        for m in &finish.members {
            pool.proposed.remove(&m.ticket_id);
            if pool
                .leaving
                .get(&m.player_id)
                .is_some_and(|(t, id)| *t == m.ticket_id && *id == finish.match_id)
            {
                pool.leaving.remove(&m.player_id);
            }
            let ended = match m.fate {
                Fate::Matched => Some(Ended::Matched {
                    match_id: finish.match_id.clone(),
                }),
                Fate::Fails { code, .. } => Some(Ended::Failed {
                    code: code.to_owned(),
                    message: fail_message(code).to_owned(),
                }),
                Fate::Requeued | Fate::AlreadyEnded { .. } => None,
            };
            if let Some(how) = ended {
                if pool.remove(&m.ticket_id, EndedSearch::new(how, finish.now)) {
                    removed += 1;
                }
            }
            if let Fate::Fails { cooled: true, .. } | Fate::AlreadyEnded { cooled: true } = m.fate {
                pool.cooldowns
                    .insert(m.player_id.clone(), finish.cooldown_until);
            }
        }
        // A made match's record, or a cancelled proposal's closing record
        // (the worker stores its status), goes to the outbox.
        let record = if made {
            &finish.record_json
        } else {
            &finish.cancelled_record
        };
        let outbox_id = (!record.is_empty()).then(|| {
            pool.outbox_seq += 1;
            let seq = pool.outbox_seq;
            pool.outbox.insert(
                seq,
                OutboxItem {
                    match_id: finish.match_id.clone(),
                    record_json: record.clone(),
                    delivered: None,
                },
            );
            format!("0-{seq}")
        });
        let outbox_id = outbox_id.filter(|_| made);
        state.decrease_live(&mode.project_id, removed);
        Ok(FinishOutcome::Done { outbox_id })
    }

    async fn cooldown_of(
        &self,
        mode: &ModeKey,
        player_id: &str,
        now: f64,
    ) -> Result<Option<f64>, PoolError> {
        let state = self.state();
        Ok(state
            .modes
            .get(mode)
            .and_then(|pool| pool.cooldowns.get(player_id).copied())
            .filter(|until| *until > now))
    }

    async fn forget_cooldowns(&self, mode: &ModeKey) -> Result<(), PoolError> {
        if let Some(pool) = self.state().modes.get_mut(mode) {
            pool.cooldowns.clear();
        }
        Ok(())
    }
}
