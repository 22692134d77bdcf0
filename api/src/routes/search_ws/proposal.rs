//! A socket's proposal kept in step with the pool (docs/acceptance.md).
//! `proposed` and `requeued` come over the status subscription, which
//! keeps no message for a subscriber that was away: one published while
//! the subscription's connection was being replaced never arrives. So each
//! check of the search also reads its proposal, and says a `proposed` or
//! `requeued` the socket missed; each is said once, whichever way it came
//! first.

use super::SocketSearch;
use crate::play::{rfc3339, unix_now};
use matchplane_store::pool::{ProposalState, SearchState};
use matchplane_store::tickets::StatusMessage;
use serde::Deserialize;

impl SocketSearch {
    /// Whether `message`, a `proposed` or `requeued` from the subscription,
    /// is news to the socket (a check may have said it already); notes it.
    pub(super) fn heard(&mut self, message: &StatusMessage) -> bool {
        let news = match message {
            // A late `proposed` of the proposal the socket last said ended
            // (a message held up in an outage) is old news.
            StatusMessage::Proposed { match_id, .. }
                if self.ended.as_deref() == Some(match_id.as_str()) =>
            {
                false
            }
            StatusMessage::Proposed { match_id, .. } => {
                let news = self.proposal.as_deref() != Some(match_id.as_str());
                self.proposal = Some(match_id.clone());
                news
            }
            // A `requeued` names the proposal that ended: one the socket
            // has since seen replaced (a late message after an outage) is
            // old news. One without a name ends whichever is open.
            StatusMessage::Requeued { match_id } => {
                let open = self.proposal.as_deref();
                let news = open.is_some() && match_id.as_deref().is_none_or(|id| open == Some(id));
                if news {
                    self.ended = self.proposal.take();
                }
                news
            }
            _ => false,
        };
        if news {
            // Proposed or back in the pool, the next `status` is said afresh.
            self.last_status = None;
        }
        news
    }

    /// Whether `message` from the subscription may still be news: a
    /// `proposed` naming another proposal than the one the socket last said
    /// is checked against the pool first (a message held up in an outage
    /// can arrive after a check said the newer one). Anything else, and a
    /// pool that cannot answer, passes to [`SocketSearch::heard`].
    pub(super) async fn current(&self, message: &StatusMessage) -> bool {
        let StatusMessage::Proposed { match_id, .. } = message else {
            return true;
        };
        if self
            .proposal
            .as_deref()
            .is_none_or(|known| known == match_id)
        {
            return true;
        }
        let ticket = &self.started.ticket.ticket_id;
        match self.play.pool.proposal_of(&self.started.mode, ticket).await {
            Ok(current) => current.as_deref() == Some(match_id.as_str()),
            Err(_) => true,
        }
    }

    /// The `proposed` or `requeued` the socket missed, if its live search's
    /// proposal changed since it last said one; notes it. `None` when
    /// nothing changed, outside acceptance, or when a store fails (the next
    /// check reads again).
    pub(super) async fn missed_proposal(&mut self) -> Option<StatusMessage> {
        let ticket = &self.started.ticket;
        if self.proposal.is_none() {
            let config = self
                .play
                .cache
                .mode(&self.db, &ticket.project_id, &ticket.game_mode)
                .await
                .ok()??;
            config.acceptance.as_ref()?;
        }
        let mode = &self.started.mode;
        let pool = &self.play.pool;
        let current = pool.proposal_of(mode, &ticket.ticket_id).await.ok()?;
        let message = match current {
            Some(id) if self.proposal.as_deref() != Some(id.as_str()) => {
                proposed(&pool.proposal(mode, &id).await.ok()??, unix_now())
            }
            // Closed: cancelled if the search is live again, else ended (the
            // next check says how).
            None if self.proposal.is_some() => {
                match pool.search_state(mode, &ticket.ticket_id).await {
                    Ok(Some(SearchState::Live(_))) => StatusMessage::Requeued {
                        match_id: self.proposal.clone(),
                    },
                    _ => return None,
                }
            }
            _ => return None,
        };
        self.heard(&message).then_some(message)
    }
}

/// The `proposed` message of an open proposal at `now`, as the worker
/// sends it: the teams as player ids and the rules' agreed values, from
/// the `match.made` body it holds.
fn proposed(state: &ProposalState, now: f64) -> StatusMessage {
    #[derive(Deserialize, Default)]
    struct Body {
        #[serde(default)]
        teams: Vec<Team>,
        #[serde(default)]
        attributes: matchplane_matchmaker::rules::DeclaredValues,
    }
    #[derive(Deserialize)]
    struct Team {
        players: Vec<Player>,
    }
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Player {
        player_id: String,
    }
    let body: Body = serde_json::from_str(&state.record_json).unwrap_or_default();
    StatusMessage::Proposed {
        match_id: state.match_id.clone(),
        accept_by: rfc3339(state.accept_by),
        accept_in_seconds: ((state.accept_by - now).max(0.0) * 1000.0).round() / 1000.0,
        teams: body
            .teams
            .into_iter()
            .map(|t| t.players.into_iter().map(|p| p.player_id).collect())
            .collect(),
        attributes: body.attributes,
    }
}
