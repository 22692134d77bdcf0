//! The outbox record of a cancelled proposal: what the worker's record
//! consumer needs to store the proposal's match row as `cancelled` with each
//! ticket's answer. Queued by the closing itself (in the finish's atomic
//! step), so a proposal closed by any API instance or worker is stored,
//! at least once, like a made match.

use matchplane_matchmaker::acceptance::{Answer, Fate};
use matchplane_matchmaker::Code;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use super::proposals::FinishMember;
use super::PoolError;

/// The record's `type`.
pub const CANCELLED_TYPE: &str = "proposal.cancelled";

/// `{"type": "proposal.cancelled", "matchId": "mat_…", "answers":
/// {"tkt_…": "accepted" | "declined" | "timeout" | "none"}, "closedAt":
/// <Unix seconds>}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CancelledProposal {
    /// Always [`CANCELLED_TYPE`].
    #[serde(rename = "type")]
    pub kind: String,
    /// `mat_…` id of the proposal.
    pub match_id: String,
    /// Each member's answer word ([`shown_answer`]).
    pub answers: BTreeMap<String, String>,
    /// When it closed (Unix seconds).
    pub closed_at: f64,
}

impl CancelledProposal {
    /// The record of `match_id` closed at `now` with `members`' fates.
    pub fn of(match_id: &str, members: &[FinishMember], now: f64) -> Self {
        Self {
            kind: CANCELLED_TYPE.to_owned(),
            match_id: match_id.to_owned(),
            answers: members
                .iter()
                .map(|m| {
                    (
                        m.ticket_id.clone(),
                        shown_answer(m.answer, m.fate).to_owned(),
                    )
                })
                .collect(),
            closed_at: now,
        }
    }

    /// Its JSON text.
    ///
    /// # Errors
    /// [`PoolError::Corrupt`] if it cannot be serialised (it always can).
    pub fn to_json(&self) -> Result<String, PoolError> {
        serde_json::to_string(self).map_err(|e| PoolError::Corrupt(e.to_string()))
    }

    /// The record in `json`, if it is one (any other record: `None`).
    pub fn parse(json: &str) -> Option<Self> {
        serde_json::from_str::<Self>(json)
            .ok()
            .filter(|r| r.kind == CANCELLED_TYPE)
    }
}

/// The answer the match views show for a member of a closed proposal:
/// `accepted`, `declined` (also a member who cancelled or closed its
/// socket: it counts as declining), `timeout` (silent at the deadline) or
/// `none` (silent when someone else ended it, or failed by the service).
pub fn shown_answer(answer: Answer, fate: Fate) -> &'static str {
    match answer {
        Answer::Accept => "accepted",
        Answer::Decline | Answer::Gone => "declined",
        Answer::Pending
            if matches!(
                fate,
                Fate::Fails { code, .. } if code == Code::AcceptanceTimeout.as_str()
            ) =>
        {
            "timeout"
        }
        Answer::Pending | Answer::Failed => "none",
    }
}
