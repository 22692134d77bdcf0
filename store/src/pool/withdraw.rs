//! Closing a proposal whose mode was disabled or deleted ([`withdraw`]).

use super::proposals::{Finish, FinishMember, FinishOutcome, Proposals, Settled};
use super::{ModeKey, PoolError};
use matchplane_matchmaker::acceptance::{Answer, Fate};

/// Closes the open proposal `match_id` because its mode was disabled or
/// deleted (docs/acceptance.md, 'How a proposal ends'): whatever
/// the answers so far, every member whose search is live fails with
/// `GAME_MODE_DISABLED`, nobody is cooled down, and the proposal is
/// cancelled (its cancelled record goes to the outbox like any other).
/// Retries when an answer or a cancel lands in between, as [`settle`].
/// Returns the closing this call applied, `None` if the proposal was
/// already closed.
///
/// # Errors
/// A store failure.
pub async fn withdraw<P: Proposals + ?Sized>(
    pool: &P,
    mode: &ModeKey,
    match_id: &str,
    now: f64,
) -> Result<Option<Settled>, PoolError> {
    let code = matchplane_matchmaker::Code::GameModeDisabled.as_str();
    for _ in 0..8 {
        let Some(state) = pool.proposal(mode, match_id).await? else {
            return Ok(None);
        };
        let members: Vec<FinishMember> = state
            .members
            .iter()
            .map(|m| FinishMember {
                ticket_id: m.ticket_id.clone(),
                player_id: m.player_id.clone(),
                answer: m.answer,
                fate: match m.answer {
                    Answer::Gone | Answer::Failed => Fate::AlreadyEnded { cooled: false },
                    Answer::Pending | Answer::Accept | Answer::Decline => Fate::Fails {
                        code,
                        cooled: false,
                    },
                },
            })
            .collect();
        let finish = Finish {
            match_id: match_id.to_owned(),
            cancelled_record: super::closed::CancelledProposal::of(match_id, &members, now)
                .to_json()?,
            members,
            cooldown_until: now,
            record_json: state.record_json.clone(),
            now,
        };
        match pool.finish_proposal(mode, &finish).await? {
            FinishOutcome::Done { .. } => {
                return Ok(Some(Settled {
                    match_id: match_id.to_owned(),
                    made: false,
                    members: finish.members,
                }))
            }
            FinishOutcome::Closed => return Ok(None),
            FinishOutcome::Stale => continue,
        }
    }
    Ok(None)
}
