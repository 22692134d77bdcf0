//! What a held search socket checks on each status: the pool's end of
//! the search, its stored match, and the waiting reason it reports.

use super::{SocketSearch, Waiting};
use crate::play::lost::{untracked, Started, Untracked};
use crate::play::matched::{stored_match, Reader};
use crate::play::role_waits::{self, RoleMedians};
use crate::play::status::{end, match_pending, project_gone};
use crate::play::unix_now;
use axum::extract::ws::Message;
use matchplane_matchmaker::Code;
use matchplane_store::pool::{EndOutcome, EndResult, Ended, SearchState};
use matchplane_store::tickets::StatusMessage;
use std::time::Instant;

pub(super) enum Check {
    Final(StatusMessage),
    Status(StatusMessage),
    /// A `proposed` or `requeued` the subscription did not bring.
    Proposal(StatusMessage),
    Quiet,
}

impl SocketSearch {
    pub(super) async fn pong(&mut self, payload: &[u8]) {
        // Any Pong shows the client is there, whatever its payload.
        self.last_pong = Instant::now();
        let Ok(bytes) = <[u8; 8]>::try_from(payload) else {
            return;
        };
        let seq = u64::from_be_bytes(bytes);
        let Some(pos) = self.pings.iter().position(|(s, _)| *s == seq) else {
            return;
        };
        let Some((_, sent)) = self.pings.remove(pos) else {
            return;
        };
        let rtt_ms = sent.elapsed().as_secs_f64() * 1000.0;
        let ticket = &self.started.ticket.ticket_id;
        if let Err(error) = self
            .play
            .pool
            .record_ping(&self.started.mode, ticket, rtt_ms)
            .await
        {
            tracing::warn!(%error, ticket_id = %ticket, "recording a ping failed");
        }
    }

    /// The next Ping frame, noted for its Pong's round trip (the last
    /// eight are kept).
    pub(super) fn ping(&mut self) -> Message {
        let payload = self.next_ping.to_be_bytes();
        self.pings.push_back((self.next_ping, Instant::now()));
        self.next_ping += 1;
        while self.pings.len() > 8 {
            self.pings.pop_front();
        }
        Message::Ping(payload.to_vec().into())
    }

    /// Ends the search `expired` (`PONG_TIMEOUT`): the final message, or
    /// `None` if it was no longer live (matched meanwhile, or ended
    /// elsewhere: the next re-read tells the client how) or the store
    /// failed (tried again at the next tick).
    pub(super) async fn pong_timed_out(&mut self) -> Option<StatusMessage> {
        let outcome = EndOutcome::ExpiredFor {
            reason: Code::PongTimeout.as_str().to_owned(),
        };
        match end(&self.play, &self.started.ticket, outcome).await {
            Ok(EndResult::Ended) => Some(StatusMessage::Expired {
                reason: Some(Code::PongTimeout.as_str().to_owned()),
            }),
            Ok(_) => None,
            Err(error) => {
                tracing::warn!(status = %error.status(), ticket_id = %self.started.ticket.ticket_id, "ending a silent socket's search failed");
                None
            }
        }
    }

    /// Renews the socket's lease on its live search, whose deadline is
    /// `deadline` (docs/searching.md, "The WebSocket"): once a third of the
    /// lease has passed, the deadline moves to a whole lease from now,
    /// never past the ticket's expiry. A failed renewal is tried again at
    /// the next re-read.
    async fn renew(&self, deadline: f64) {
        let lease = self.play.settings.socket_lease().as_secs_f64();
        let ticket = &self.started.ticket;
        let Some(renewed) = renewal(unix_now(), lease, deadline, ticket.expires_at) else {
            return;
        };
        let touched = self
            .play
            .pool
            .touch_search(&self.started.mode, &ticket.ticket_id, renewed)
            .await;
        if let Err(error) = touched {
            tracing::warn!(%error, ticket_id = %ticket.ticket_id, "renewing a socket's search failed");
        }
    }

    /// Re-reads the search: final if it ended, a status if it changed.
    pub(super) async fn check(&mut self) -> Check {
        Box::pin(self.answer_again()).await;
        let ticket = &self.started.ticket.ticket_id;
        let state = match self.play.search_state(&self.started.mode, ticket).await {
            Ok(state) => state,
            Err(error) => {
                tracing::warn!(%error, ticket_id = %ticket, "reading a search failed");
                return Check::Quiet;
            }
        };
        match state {
            Some(SearchState::Live(live)) => {
                self.renew(live.deadline).await;
                if let Some(message) = Box::pin(self.missed_proposal()).await {
                    return Check::Proposal(message);
                }
                let (reason, found, needed) =
                    crate::play::queue_status::split(live.waiting_reason.as_deref());
                let role_waits =
                    role_waits::of_ticket(&self.play, &self.db, &self.started.ticket).await;
                self.status(
                    (unix_now() - live.search.queued_at).max(0.0),
                    live.search.ping_ms,
                    (reason, found, needed),
                    role_waits,
                )
            }
            Some(SearchState::Ended(ended)) => match ended.how {
                Ended::Matched { match_id } => self.matched(&match_id, ended.queued_at).await,
                // Released while this socket searched again elsewhere:
                // nothing to wait for here.
                Ended::Released { .. } => Check::Final(StatusMessage::Expired { reason: None }),
                Ended::Cancelled => Check::Final(StatusMessage::Cancelled),
                Ended::Expired => Check::Final(StatusMessage::Expired {
                    reason: ended.reason,
                }),
                Ended::Failed { code, message } => {
                    Check::Final(StatusMessage::Failed { code, message })
                }
            },
            // Neither live nor ended: the rule every status read shares
            // (`play/lost.rs`). A stored match that seats it still says
            // matched; otherwise the search was lost with the pool's data
            // (`SEARCH_LOST`), which is said rather than a plain expiry: the
            // client searches again.
            None => {
                let ticket = &self.started.ticket;
                let now = unix_now();
                match untracked(&self.play, &self.db, ticket, now, Started::Held).await {
                    Ok(Untracked::Matched { match_id }) => self.matched(&match_id, None).await,
                    Ok(other) => Check::Final(StatusMessage::Expired {
                        reason: other.reason().map(str::to_owned),
                    }),
                    Err(error) => {
                        tracing::warn!(status = %error.status(), ticket_id = %ticket.ticket_id, "reading a lost search's match failed");
                        Check::Quiet
                    }
                }
            }
        }
    }

    /// A claimed search: `matched` with the player's view once the match
    /// is stored; until then a `MATCH_PENDING` status (once).
    pub(super) async fn matched(&mut self, match_id: &str, queued_at: Option<f64>) -> Check {
        let ticket = &self.started.ticket;
        let stored = stored_match(
            &self.db,
            &ticket.project_id,
            match_id,
            &ticket.ticket_id,
            Reader::Player,
        )
        .await;
        match stored {
            Ok(Some(stored)) => Check::Final(StatusMessage::Matched {
                match_: stored.view,
            }),
            // Gone with its project (docs/searching.md): final.
            Ok(None) => match project_gone(&self.db, ticket).await {
                Some(error) => Check::Final(StatusMessage::Failed {
                    code: error.code,
                    message: error.message,
                }),
                // Not stored yet, or the database out of reach.
                None => self.match_pending(queued_at),
            },
            Err(error) => {
                tracing::warn!(%error, ticket_id = %ticket.ticket_id, "reading a matched search's match failed");
                Check::Quiet
            }
        }
    }

    /// The `MATCH_PENDING` status of a claimed search (once). A proposal
    /// it was in is over (everyone accepted): the status is said.
    fn match_pending(&mut self, queued_at: Option<f64>) -> Check {
        self.proposal = None;
        let queued_at = queued_at.unwrap_or(self.started.queued_at);
        self.status(
            (unix_now() - queued_at).max(0.0),
            None,
            (Some(match_pending()), None, None),
            None,
        )
    }

    /// A `status` message if `waitingReason`, `found`, `needed` or
    /// `roleWaits` changed, or `pingMs` moved a millisecond or more from
    /// the last one sent ([`ping_moved`]).
    pub(super) fn status(
        &mut self,
        wait_seconds: f64,
        ping_ms: Option<f64>,
        (reason, found, needed): Waiting,
        role_waits: Option<RoleMedians>,
    ) -> Check {
        let waiting = (reason.clone(), found, needed);
        if let Some((w, ping, roles)) = &self.last_status {
            if *w == waiting && *roles == role_waits && !ping_moved(*ping, ping_ms) {
                return Check::Quiet;
            }
        }
        self.last_status = Some((waiting, ping_ms, role_waits.clone()));
        Check::Status(StatusMessage::Status {
            wait_seconds,
            ping_ms,
            waiting_reason: reason,
            found,
            needed,
            role_waits,
        })
    }
}

/// Whether `pingMs` moved enough from the `last` one sent to be said: by
/// a millisecond or more, or it came or went. Compared by whole
/// milliseconds, a round trip near a half millisecond (0.46, 0.54, ...)
/// flipped between 0 and 1 and the same status went out every few
/// seconds.
fn ping_moved(last: Option<f64>, now: Option<f64>) -> bool {
    match (last, now) {
        (Some(last), Some(now)) => (now - last).abs() >= 1.0,
        (last, now) => last.is_some() != now.is_some(),
    }
}

/// The deadline a socket's renewal at `now` moves its search's `deadline`
/// to (`None`: not yet): a whole `lease` (seconds) from now once a third
/// of it has passed, never past the ticket's expiry `expires_at`, and the
/// expiry itself as soon as a lease from now reaches it. A renewal that
/// waited for a third of a lease there left the deadline up to a third
/// of a lease short of the expiry, and a healthy socket's search ended
/// `SOCKET_LAPSED` those seconds before its ticket ran out.
fn renewal(now: f64, lease: f64, deadline: f64, expires_at: f64) -> Option<f64> {
    let renewed = (now + lease).min(expires_at);
    let due = renewed - deadline >= lease / 3.0 || renewed >= expires_at;
    (due && renewed > deadline).then_some(renewed)
}

#[cfg(test)]
mod tests {
    use super::{ping_moved, renewal};

    #[test]
    fn a_ping_near_half_a_millisecond_is_not_said_again() {
        assert!(!ping_moved(Some(0.46), Some(0.54)));
        assert!(!ping_moved(Some(0.54), Some(0.41)));
        assert!(!ping_moved(Some(20.2), Some(21.1)));
        assert!(ping_moved(Some(20.2), Some(21.2)));
        assert!(ping_moved(Some(20.2), Some(19.1)));
        assert!(ping_moved(None, Some(0.4)));
        assert!(ping_moved(Some(0.4), None));
        assert!(!ping_moved(None, None));
    }

    #[test]
    fn a_renewal_reaches_the_tickets_expiry() {
        // A 30 s lease, a ticket expiring at 100, renewed last at 65.
        assert_eq!(renewal(66.0, 30.0, 95.0, 100.0), None, "a third not passed");
        assert_eq!(
            renewal(75.0, 30.0, 95.0, 100.0),
            Some(100.0),
            "up to the expiry"
        );
        assert_eq!(
            renewal(71.0, 30.0, 95.0, 100.0),
            Some(100.0),
            "the expiry is near"
        );
        assert_eq!(
            renewal(80.0, 30.0, 100.0, 100.0),
            None,
            "at the expiry already"
        );
        assert_eq!(
            renewal(10.0, 30.0, 30.0, 100.0),
            Some(40.0),
            "a whole lease"
        );
        assert_eq!(renewal(10.0, 30.0, 35.0, 100.0), None);
    }
}
