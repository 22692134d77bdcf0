//! Answers to a match proposal (acceptance), from any channel: the
//! client's WebSocket (`{"type":"accept"}` / `{"type":"decline"}`), its REST
//! routes (`POST /v1/searches/{ticketId}/accept|decline`) and the studio's
//! (`POST /v1/projects/{projectId}/tickets/{ticketId}/accept|decline`).
//!
//! An answer is recorded in the pool store, then the proposal is closed at
//! once if the rule says it is over (a decline, the last accept), with the
//! same compare-and-set closing as the worker's sweep, so whichever lands
//! first closes it and the other finds it closed. An answer at or after
//! `acceptBy` is not recorded (the store compares the deadline where it
//! records, so no sweep can be raced): it is `409 PROPOSAL_CLOSED`, and the
//! proposal is closed here by its deadline's rule if no sweep has yet
//! (docs/acceptance.md, "How a proposal ends"). The players of a
//! cancelled proposal are told here; a made match's players are told
//! `matched` by the worker once it is stored.

use super::status::mode_key;
use super::{unix_now, Play};
use crate::problem::ApiError;
use axum::http::StatusCode;
use matchplane_matchmaker::Code;
use matchplane_store::pool::{settle_excusing, AnswerOutcome, ModeKey};
use matchplane_store::tickets::{announce_settled, Ticket};
use serde::Deserialize;
use utoipa::IntoParams;

/// Query of the answer routes (`…/accept`, `…/decline`).
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
pub struct AnswerQuery {
    /// The `mat_…` id of the proposal answered, as the `proposed` message
    /// or the status's `proposal` named it. Given, the answer counts only
    /// in that proposal: if it closed meanwhile (and the ticket was
    /// proposed again), the answer is `409 PROPOSAL_CLOSED` and the new
    /// proposal is left unanswered. Without it the answer counts in
    /// whichever proposal the ticket is in.
    #[param(value_type = Option<String>, pattern = "^mat_[0-9A-Za-z]{1,64}$")]
    pub match_id: Option<crate::params::MatchId>,
}

impl AnswerQuery {
    /// The proposal named, if any.
    pub fn named(&self) -> Option<&str> {
        self.match_id.as_ref().map(crate::params::MatchId::as_str)
    }
}

/// Records `ticket`'s answer and closes its proposal if that ends it.
/// Idempotent: the same answer again, also after the close, is fine.
/// With `named` (a `mat_…` id) the answer counts only in that proposal
/// (docs/acceptance.md, "Naming the proposal"). `sent_at` (Unix seconds,
/// now for a fresh answer; never later than now) is weighed against
/// `acceptBy`: a socket's answer tried again after an outage keeps the
/// time its client sent it.
///
/// # Errors
/// `409 PROPOSAL_CLOSED` (a different answer after the close or at or
/// after `acceptBy`, an accept after a decline, or `named` not the
/// ticket's open proposal), `409 NOT_PROPOSED`, `500` when the store
/// fails.
pub async fn answer(
    play: &Play,
    ticket: &Ticket,
    (accept, named): (bool, Option<&str>),
    sent_at: f64,
) -> Result<(), ApiError> {
    let mode = mode_key(ticket);
    let asked = unix_now();
    let answered = play
        .pool
        .answer_named(&mode, &ticket.ticket_id, accept, sent_at.min(asked), named)
        .await;
    play.reached(&mode, asked, answered.is_ok());
    match answered? {
        AnswerOutcome::Open { match_id } => {
            close_if_over(play, &mode, &match_id).await?;
            Ok(())
        }
        AnswerOutcome::Closed { match_id, same } => {
            // Past its deadline but not swept yet (its worker stopped or
            // slow): closed now by the deadline's rule, so the answer is
            // told how it ended. A closed proposal costs one read.
            close_if_over(play, &mode, &match_id).await?;
            if same {
                return Ok(());
            }
            Err(ApiError::with_status(
                StatusCode::CONFLICT,
                Code::ProposalClosed.as_str(),
                "the match proposal is closed: this answer can no longer change it",
            ))
        }
        AnswerOutcome::NotProposed => Err(ApiError::with_status(
            StatusCode::CONFLICT,
            Code::NotProposed.as_str(),
            "the ticket is in no match proposal",
        )),
        AnswerOutcome::NotThatProposal => Err(ApiError::with_status(
            StatusCode::CONFLICT,
            Code::ProposalClosed.as_str(),
            format!(
                "the match proposal {} is not open for this ticket (it closed, or it was never \
                 this ticket's): the answer was not recorded",
                named.unwrap_or_default()
            ),
        )),
    }
}

/// Closes `match_id` if the rule ends it now and tells the players of a
/// cancelled one. A timeout whose `acceptBy` fell in an outage of the
/// pool this process saw (or the grace after it, [`Play::lapses`]) sends
/// the silent players back to the queue, nobody cooled down.
///
/// # Errors
/// `500` when the store fails.
pub async fn close_if_over(play: &Play, mode: &ModeKey, match_id: &str) -> Result<(), ApiError> {
    let now = unix_now();
    // A deadline in an outage this process saw, or in its grace, holds
    // nobody to the timeout (docs/acceptance.md), as the worker's sweep.
    let excused_from = play.lapses.excused_from(mode, now);
    let settled = settle_excusing(play.pool.as_ref(), mode, match_id, now, excused_from).await?;
    if let Some(settled) = settled {
        if !settled.made {
            announce_settled(play.pool.as_ref(), &settled).await;
        }
    }
    Ok(())
}

/// After `ticket`'s search ended (a cancel, a closed socket, its API
/// instance stopping): closes the proposal it was in, if any, as its
/// decline, or as nobody's when the service ended it
/// (docs/acceptance.md, "How a proposal ends").
///
/// # Errors
/// `500` when the store fails.
pub async fn after_end(play: &Play, ticket: &Ticket) -> Result<(), ApiError> {
    let mode = mode_key(ticket);
    if let Some(match_id) = play.pool.proposal_of(&mode, &ticket.ticket_id).await? {
        close_if_over(play, &mode, &match_id).await?;
    }
    Ok(())
}

/// `409 DECLINE_COOLDOWN` if `player_id` is cooled down in `mode` now.
///
/// # Errors
/// `409 DECLINE_COOLDOWN`, `500` when the store fails.
pub async fn check_cooldown(play: &Play, mode: &ModeKey, player_id: &str) -> Result<(), ApiError> {
    let now = unix_now();
    match play.pool.cooldown_of(mode, player_id, now).await? {
        Some(until) => Err(ApiError::decline_cooldown((until - now).ceil() as u64)),
        None => Ok(()),
    }
}
