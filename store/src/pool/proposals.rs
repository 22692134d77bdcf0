//! Match proposals (acceptance): the [`Proposals`] part of the pool store,
//! its values, and [`settle`], which closes a proposal by the core's rule
//! ([`withdraw`] closes one whose mode ended).
//!
//! A proposal holds its searches in the pool (so a cancel, a status read or
//! a ping work as for any live search) but out of every snapshot and out of
//! the expiry sweep: nobody else can be matched with them, and a ticket's
//! expiry waits until its proposal ends. The store only keeps the answers
//! and applies a closing decided by [`matchplane_matchmaker::acceptance::close`]
//! with a compare-and-set on what the decision was read from
//! ([`Proposals::finish_proposal`]): an answer, a cancel or a claim that
//! lands in between makes the finish [`FinishOutcome::Stale`], and the
//! caller reads again. That is why an accept and a cancel racing have one
//! outcome, and why a proposal's deadline can only ever end its own
//! proposal (the finish names its match id and every ticket's answer).

use matchplane_matchmaker::acceptance::{close, Answer, Fate, Member};

use super::{ClaimOutcome, EndedSearch, ModeKey, PoolError};

pub use super::withdraw::withdraw;

/// A group to hold as a proposal (the claim of docs/acceptance.md).
#[derive(Debug, Clone, PartialEq)]
pub struct ProposalClaim {
    /// The group, as for a claim: its `match_id`, tickets, their players and
    /// the `match.made` body (`record_json`) queued once everyone accepts.
    pub claim: super::Claim,
    /// Each ticket's party id, in the claim's order (a solo player's own
    /// ticket id): who fails with `PARTY_MEMBER_DECLINED`.
    pub parties: Vec<String>,
    /// The deadline (Unix seconds).
    pub accept_by: f64,
    /// The cooldown a responsible player gets (seconds, 0 for none): the
    /// rule the proposal started with.
    pub cooldown_seconds: f64,
}

/// One member of an open proposal, as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct ProposalMember {
    /// `tkt_…` id.
    pub ticket_id: String,
    /// Its player.
    pub player_id: String,
    /// Its party id (see [`ProposalClaim::parties`]).
    pub party: String,
    /// Its answer: `Pending`, `Accept` or `Decline` while its search is
    /// live; `Gone` or `Failed` once its search ended.
    pub answer: Answer,
}

/// An open proposal.
#[derive(Debug, Clone, PartialEq)]
pub struct ProposalState {
    /// `mat_…` id.
    pub match_id: String,
    /// The deadline (Unix seconds).
    pub accept_by: f64,
    /// See [`ProposalClaim::cooldown_seconds`].
    pub cooldown_seconds: f64,
    /// The members, in the claim's order.
    pub members: Vec<ProposalMember>,
    /// The `match.made` body queued once everyone accepts.
    pub record_json: String,
}

impl ProposalState {
    /// The tickets that accepted so far.
    pub fn accepted(&self) -> Vec<String> {
        self.members
            .iter()
            .filter(|m| m.answer == Answer::Accept)
            .map(|m| m.ticket_id.clone())
            .collect()
    }
}

/// What an answer came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AnswerOutcome {
    /// Recorded (or the same answer again) in this open proposal.
    Open {
        /// `mat_…` id of the proposal.
        match_id: String,
    },
    /// The ticket's last proposal is closed; `same` when this answer
    /// repeats the one it gave (then answered with the current state).
    Closed {
        /// `mat_…` id of that proposal.
        match_id: String,
        /// Whether the ticket had given this same answer.
        same: bool,
    },
    /// The ticket was never in a proposal (`NOT_PROPOSED`).
    NotProposed,
    /// The answer named a proposal that is not the ticket's open one nor
    /// the last it answered (it closed before, or it was never the
    /// ticket's): nothing was recorded.
    NotThatProposal,
}

/// What becomes of one member, as [`Proposals::finish_proposal`] applies it.
#[derive(Debug, Clone, PartialEq)]
pub struct FinishMember {
    /// `tkt_…` id.
    pub ticket_id: String,
    /// Its player.
    pub player_id: String,
    /// The answer the decision was read with (checked again).
    pub answer: Answer,
    /// Its fate.
    pub fate: Fate,
}

/// A closing to apply.
#[derive(Debug, Clone, PartialEq)]
pub struct Finish {
    /// `mat_…` id of the proposal.
    pub match_id: String,
    /// Every member, in the proposal's order.
    pub members: Vec<FinishMember>,
    /// Until when a cooled player may not search in the mode (Unix seconds).
    pub cooldown_until: f64,
    /// The record queued to the outbox if everyone is matched.
    pub record_json: String,
    /// The record queued to the outbox if the proposal is cancelled
    /// ([`super::closed::CancelledProposal`] JSON; `""` for none), so the
    /// worker stores the cancelled proposal's status and answers.
    pub cancelled_record: String,
    /// When it is applied (Unix seconds, the ended records' `endedAt`).
    pub now: f64,
}

/// What a finish did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FinishOutcome {
    /// Applied. `outbox_id` is set when the match was made.
    Done {
        /// The outbox entry of the made match.
        outbox_id: Option<String>,
    },
    /// Something changed since the state was read: read again.
    Stale,
    /// The proposal is no longer open (another caller finished it).
    Closed,
}

/// Holding groups as proposals, answering them, and closing them.
#[async_trait::async_trait]
pub trait Proposals: Send + Sync {
    /// Holds each group as a proposal, fenced like
    /// [`super::Claims::claim_many`]: under a stale token every outcome is
    /// [`ClaimOutcome::LeaseLost`]; a group with a ticket no longer live (or
    /// already proposed) is a [`ClaimOutcome::Conflict`] and holds nothing.
    /// A held group's searches stay live but leave every snapshot.
    ///
    /// Errors: [`PoolError::InvalidClaim`] as for a claim.
    async fn propose_many(
        &self,
        mode: &ModeKey,
        lease_token: u64,
        proposals: &[ProposalClaim],
    ) -> Result<Vec<ClaimOutcome>, PoolError>;

    /// Records `ticket_id`'s answer (`accept` or decline) in its open
    /// proposal at `now` (Unix seconds); idempotent. A decline is final: an
    /// accept after it is answered as [`AnswerOutcome::Closed`]. So is any
    /// answer at or after the proposal's `accept_by`, even while nobody has
    /// closed it yet (`same` when it repeats the answer given in time):
    /// the deadline is compared where the answer is recorded, atomically.
    /// The answer counts in whichever proposal the ticket is in; see
    /// [`Proposals::answer_named`] for one that names its proposal.
    async fn answer(
        &self,
        mode: &ModeKey,
        ticket_id: &str,
        accept: bool,
        now: f64,
    ) -> Result<AnswerOutcome, PoolError> {
        self.answer_named(mode, ticket_id, accept, now, None).await
    }

    /// [`Proposals::answer`], counted only in the proposal `named` (its
    /// `mat_…` id) when given: an answer sent for a proposal that closed
    /// meanwhile never lands in the ticket's next one. A ticket that is in
    /// another proposal, or in none, and did not answer the named one is
    /// [`AnswerOutcome::NotThatProposal`]; one that answered the named
    /// one before it closed is [`AnswerOutcome::Closed`] as usual.
    async fn answer_named(
        &self,
        mode: &ModeKey,
        ticket_id: &str,
        accept: bool,
        now: f64,
        named: Option<&str>,
    ) -> Result<AnswerOutcome, PoolError>;

    /// The `mat_…` id of `ticket_id`'s open proposal, if it is in one.
    async fn proposal_of(
        &self,
        mode: &ModeKey,
        ticket_id: &str,
    ) -> Result<Option<String>, PoolError>;

    /// An open proposal with each member's answer, `None` once closed.
    async fn proposal(
        &self,
        mode: &ModeKey,
        match_id: &str,
    ) -> Result<Option<ProposalState>, PoolError>;

    /// The ids of `mode`'s open proposals whose `acceptBy` is at or before
    /// `due_by` (Unix seconds; `f64::INFINITY` for all), earliest deadline
    /// first, at most `limit`.
    async fn open_proposals(
        &self,
        mode: &ModeKey,
        due_by: f64,
        limit: usize,
    ) -> Result<Vec<String>, PoolError>;

    /// Applies `finish` if every member still stands as it was read (same
    /// answer, search still live or still ended); see [`FinishOutcome`].
    async fn finish_proposal(
        &self,
        mode: &ModeKey,
        finish: &Finish,
    ) -> Result<FinishOutcome, PoolError>;

    /// Until when `player_id` is cooled down in `mode` (Unix seconds), if
    /// that is after `now`.
    async fn cooldown_of(
        &self,
        mode: &ModeKey,
        player_id: &str,
        now: f64,
    ) -> Result<Option<f64>, PoolError>;

    /// Forgets every cooldown of `mode` (the mode was deleted: one created
    /// again under its name starts with none).
    async fn forget_cooldowns(&self, mode: &ModeKey) -> Result<(), PoolError>;
}

/// How one member's closed proposal left it, for its client.
#[derive(Debug, Clone, PartialEq)]
pub struct Settled {
    /// `mat_…` id of the proposal.
    pub match_id: String,
    /// Whether the match was made (then the outbox has it, and the record
    /// consumer tells everyone `matched`).
    pub made: bool,
    /// Each member with its fate.
    pub members: Vec<FinishMember>,
}

impl Settled {
    /// The tickets back in the pool.
    pub fn requeued(&self) -> impl Iterator<Item = &str> {
        self.members
            .iter()
            .filter(|m| m.fate == Fate::Requeued)
            .map(|m| m.ticket_id.as_str())
    }

    /// The tickets failed by the closing, with their code.
    pub fn failed(&self) -> impl Iterator<Item = (&str, &'static str)> {
        self.members.iter().filter_map(|m| match m.fate {
            Fate::Fails { code, .. } => Some((m.ticket_id.as_str(), code)),
            _ => None,
        })
    }
}

/// Closes `match_id` if the core's rule says it is over at `now`, retrying
/// when an answer or a cancel lands in between (at most a few times: each
/// retry means someone else moved the proposal on). Returns the closing
/// this call applied, `None` if the proposal stays open or someone else
/// closed it.
///
/// # Errors
/// A store failure.
pub async fn settle<P: Proposals + ?Sized>(
    pool: &P,
    mode: &ModeKey,
    match_id: &str,
    now: f64,
) -> Result<Option<Settled>, PoolError> {
    settle_excusing(pool, mode, match_id, now, f64::INFINITY).await
}

/// [`settle`], except that a timeout whose `acceptBy` is after
/// `excused_from` (Unix seconds) makes nobody responsible
/// ([`matchplane_matchmaker::acceptance::excuse_silence`]): the worker's
/// store was out of reach from then, so an answer may not have arrived.
///
/// # Errors
/// A store failure.
pub async fn settle_excusing<P: Proposals + ?Sized>(
    pool: &P,
    mode: &ModeKey,
    match_id: &str,
    now: f64,
    excused_from: f64,
) -> Result<Option<Settled>, PoolError> {
    for _ in 0..8 {
        let Some(state) = pool.proposal(mode, match_id).await? else {
            return Ok(None);
        };
        let members: Vec<Member<'_>> = state
            .members
            .iter()
            .map(|m| Member {
                ticket_id: &m.ticket_id,
                party: &m.party,
                answer: m.answer,
            })
            .collect();
        let Some(mut fates) = close(&members, state.accept_by, now) else {
            return Ok(None);
        };
        if state.accept_by > excused_from {
            matchplane_matchmaker::acceptance::excuse_silence(&mut fates);
        }
        let members: Vec<FinishMember> = state
            .members
            .iter()
            .zip(fates)
            .map(|(m, fate)| FinishMember {
                ticket_id: m.ticket_id.clone(),
                player_id: m.player_id.clone(),
                answer: m.answer,
                fate,
            })
            .collect();
        let made = members.iter().all(|m| m.fate == Fate::Matched);
        let cancelled_record = if made {
            String::new()
        } else {
            super::closed::CancelledProposal::of(match_id, &members, now).to_json()?
        };
        let finish = Finish {
            match_id: match_id.to_owned(),
            members,
            cooldown_until: now + state.cooldown_seconds,
            record_json: state.record_json.clone(),
            cancelled_record,
            now,
        };
        match pool.finish_proposal(mode, &finish).await? {
            FinishOutcome::Done { .. } => {
                return Ok(Some(Settled {
                    match_id: match_id.to_owned(),
                    made,
                    members: finish.members,
                }))
            }
            FinishOutcome::Closed => return Ok(None),
            FinishOutcome::Stale => continue,
        }
    }
    Ok(None)
}

/// The answer an ended search counts as in its proposal: one the service
/// ended ([`EndedSearch::ended_by_service`]) makes nobody responsible; one
/// cancelled or expired otherwise counts as a decline.
pub(crate) fn answer_of_ended(ended: Option<&EndedSearch>) -> Answer {
    match ended {
        Some(e) if e.ended_by_service() => Answer::Failed,
        _ => Answer::Gone,
    }
}

/// The wire word of an answer in the stores (`pending`, `accept`, …).
pub(crate) fn answer_word(answer: Answer) -> &'static str {
    match answer {
        Answer::Pending => "pending",
        Answer::Accept => "accept",
        Answer::Decline => "decline",
        Answer::Gone => "gone",
        Answer::Failed => "failed",
    }
}

/// The answer a stored word names.
pub(crate) fn answer_from_word(word: &str) -> Option<Answer> {
    Some(match word {
        "pending" => Answer::Pending,
        "accept" => Answer::Accept,
        "decline" => Answer::Decline,
        "gone" => Answer::Gone,
        "failed" => Answer::Failed,
        _ => return None,
    })
}

/// Checks a proposal claim's shape before it reaches a backend.
pub(crate) fn check_proposal(p: &ProposalClaim) -> Result<(), PoolError> {
    super::types::check_claim(&p.claim)?;
    if p.parties.len() != p.claim.ticket_ids.len() {
        return Err(PoolError::InvalidClaim(format!(
            "{} tickets but {} parties",
            p.claim.ticket_ids.len(),
            p.parties.len()
        )));
    }
    if !p.accept_by.is_finite() || !p.cooldown_seconds.is_finite() {
        return Err(PoolError::InvalidClaim("deadline not finite".into()));
    }
    Ok(())
}

/// The message kept with a search failed by a closing proposal.
pub fn fail_message(code: &str) -> &'static str {
    use matchplane_matchmaker::Code;
    match code {
        c if c == Code::MatchDeclined.as_str() => "the player declined the match",
        c if c == Code::AcceptanceTimeout.as_str() => {
            "the player did not answer the match proposal in time"
        }
        c if c == Code::GameModeDisabled.as_str() => "the game mode was disabled or deleted",
        _ => "another member of the party declined the match",
    }
}
