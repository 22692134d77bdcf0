//! The assignment wait of a matched socket in a mode with `assignment`
//! (docs/game-modes.md): assigned, released or timed out.

use super::closing::{close_after_failed_read, send_close};
use super::heartbeat::{keep_alive, Heartbeat, Incoming};
use super::{finish, text, SocketSearch};
use crate::play::matched::free_released;
use crate::play::start::{resume_queued_at, start_with_token, Via};
use axum::extract::ws::{close_code, Message, WebSocket};
use futures::{FutureExt, StreamExt};
use matchplane_store::pool::StatusStream;
use matchplane_store::repos::match_status;
use matchplane_store::tickets::StatusMessage;
use serde_json::Value;
use std::time::Instant;

/// What the assignment wait of a matched socket saw.
pub(super) enum Waited {
    /// Assigned: the message to send before closing.
    Assigned(StatusMessage),
    /// Released by the studio, or `assignment_timeout` (sent first when
    /// `true`): the search starts again.
    Released(bool),
    /// Nothing yet.
    Quiet,
}

impl SocketSearch {
    /// Sends the final `message` and closes, unless it is `matched` in a
    /// mode with `assignment`: then the socket stays open until the
    /// studio's assignment (`assigned`, close 1000), or a release or the
    /// assignment timeout, after which the search starts again (with its
    /// first `queuedAt`), the client is told `requeued`, and this answers
    /// `true` (the socket goes on searching).
    pub(super) async fn wait_assignment(
        &mut self,
        socket: &mut WebSocket,
        heartbeat: &mut Heartbeat,
        updates: &mut StatusStream,
        message: &StatusMessage,
    ) -> bool {
        let StatusMessage::Matched { match_ } = message else {
            // A socket's search is swept when its ticket runs out, or when
            // its lease lapsed (renewals that failed): said so, as its
            // status says.
            let swept;
            let message = match message {
                StatusMessage::Expired { reason: None } => {
                    let now = crate::play::unix_now();
                    let reason =
                        crate::play::status::lapsed_reason(&self.started.ticket, now, true);
                    swept = StatusMessage::Expired {
                        reason: Some(reason.to_owned()),
                    };
                    &swept
                }
                other => other,
            };
            finish(socket, message).await;
            return false;
        };
        let ticket = &self.started.ticket;
        let waits = match self
            .play
            .cache
            .mode(&self.db, &ticket.project_id, &ticket.game_mode)
            .await
        {
            Ok(config) => config.is_some_and(|c| c.assignment.is_some()),
            Err(_) => false,
        };
        let match_id = serde_json::from_str::<Value>(match_.get())
            .ok()
            .and_then(|v| Some(v.get("matchId")?.as_str()?.to_owned()));
        let Some(match_id) = match_id.filter(|_| waits) else {
            finish(socket, message).await;
            return false;
        };
        if socket.send(text(&message.to_json())).await.is_err() {
            return false;
        }
        let every = self.play.settings.ping_interval;
        let mut tick = tokio::time::interval(every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        // The first tick a period in: Pongs that came while the match was
        // stored are read before the pong timeout is checked.
        tick.reset();
        // What the client sent while the wait re-read the match.
        let mut deferred: Option<Incoming> = None;
        let mut pong_at = None;
        let released = loop {
            let incoming = match deferred.take() {
                Some(incoming) => Err(incoming),
                None => tokio::select! {
                    update = updates.next() => Ok(match update.as_deref().and_then(StatusMessage::from_json) {
                        Some(assigned @ StatusMessage::Assigned { .. }) => Waited::Assigned(assigned),
                        Some(StatusMessage::AssignmentTimeout) => Waited::Released(true),
                        Some(StatusMessage::Released) => Waited::Released(false),
                        Some(_) => Waited::Quiet,
                        None if update.is_none() => {
                            *updates = futures::stream::pending().boxed();
                            Waited::Quiet
                        }
                        None => Waited::Quiet,
                    }),
                    incoming = socket.recv() => Err(incoming),
                    _ = tick.tick() => {
                        // A client silent for the pong timeout is taken
                        // for dead: the wait ends, the match stands, and a
                        // later release does not search for it again.
                        if self.last_pong.elapsed() >= self.play.settings.pong_timeout {
                            send_close(socket, close_code::NORMAL, "PONG_TIMEOUT").await;
                            return false;
                        }
                        let _ = socket.send(Message::Ping(Vec::new().into())).await;
                        let (busy, reread) = (Instant::now(), self.reread_assignment(&match_id));
                        let waited = keep_alive(reread, socket, heartbeat, every, &mut deferred, &mut pong_at).await;
                        self.excuse(busy, pong_at.take());
                        Ok(waited)
                    }
                },
            };
            let waited = match incoming {
                Ok(waited) => waited,
                // The match stands: a client leaving the wait ends only
                // the wait. Its Close is answered, as while searching.
                Err(Some(Ok(Message::Close(_)))) => {
                    flush_close_reply(socket).await;
                    return false;
                }
                Err(None) => return false,
                // A broken frame ends the wait as a client leaving it does,
                // answered with the Close that says why (`closing.rs`).
                Err(Some(Err(error))) => {
                    close_after_failed_read(socket, &error).await;
                    return false;
                }
                Err(Some(Ok(Message::Pong(_)))) => {
                    self.last_pong = Instant::now();
                    Waited::Quiet
                }
                Err(Some(Ok(Message::Text(body)))) if super::heartbeat::is_ping(&body) => {
                    // A failed write shows at the next read.
                    let _ = heartbeat.answer(socket).await;
                    Waited::Quiet
                }
                Err(Some(Ok(_))) => Waited::Quiet,
            };
            match waited {
                Waited::Assigned(assigned) => {
                    finish(socket, &assigned).await;
                    return false;
                }
                Waited::Released(timed_out) => {
                    // A client whose close already arrived left the wait:
                    // it is not searched for again (`select!` may take the
                    // release before the close when both are ready).
                    match socket.recv().now_or_never() {
                        Some(Some(Ok(Message::Close(_)))) => {
                            flush_close_reply(socket).await;
                            return false;
                        }
                        Some(None) => return false,
                        Some(Some(Err(error))) => {
                            close_after_failed_read(socket, &error).await;
                            return false;
                        }
                        Some(Some(Ok(_))) | None => break timed_out,
                    }
                }
                Waited::Quiet => {}
            }
        };
        if released
            && socket
                .send(text(&StatusMessage::AssignmentTimeout.to_json()))
                .await
                .is_err()
        {
            return false;
        }
        let freed = free_released(&self.play, &self.db, &self.started.ticket, &match_id).await;
        if let Err(error) = freed {
            tracing::warn!(status = %error.status(), ticket_id = %self.started.ticket.ticket_id, "freeing a released match's ticket failed");
        }
        match start_with_token(&self.play, &self.db, &self.token, Via::WebSocket).await {
            Ok(started) => {
                self.started = started;
                resume_queued_at(&self.play, &mut self.started).await;
                self.last_status = None;
                // The proposal the match came from is over: the `requeued`
                // below is its last word, said once (`proposal.rs`).
                self.proposal = None;
                self.ended = Some(match_id.to_owned());
                self.last_pong = Instant::now();
                socket
                    .send(text(
                        &StatusMessage::Requeued {
                            match_id: Some(match_id.to_owned()),
                        }
                        .to_json(),
                    ))
                    .await
                    .is_ok()
            }
            Err(error) => {
                tracing::debug!(status = %error.status(), ticket_id = %self.started.ticket.ticket_id, "a released search could not start again");
                send_close(socket, close_code::NORMAL, "match released").await;
                false
            }
        }
    }

    /// The stored match, re-read (the safety net for a lost publish):
    /// assigned, released, or still waiting.
    pub(super) async fn reread_assignment(&self, match_id: &str) -> Waited {
        let ticket = &self.started.ticket;
        match matchplane_store::repos::matches::get(&self.db, &ticket.project_id, match_id).await {
            Ok(row) => match (&row.assignment, row.status.as_str()) {
                (Some(assignment), _) => Waited::Assigned(
                    crate::routes::match_lifecycle::assigned_to(assignment, &ticket.player_id),
                ),
                (None, match_status::UNASSIGNED) => Waited::Released(true),
                (None, match_status::RELEASED) => Waited::Released(false),
                _ => Waited::Quiet,
            },
            Err(error) => {
                tracing::warn!(%error, ticket_id = %ticket.ticket_id, "reading a match waiting for its assignment failed");
                Waited::Quiet
            }
        }
    }
}

/// Answers a client's Close during the assignment wait: the closing
/// handshake's reply (queued by the socket, with the client's code) is
/// flushed, so the client sees a clean close rather than 1006.
async fn flush_close_reply(socket: &mut WebSocket) {
    let _ = futures::SinkExt::close(socket).await;
}
