//! The WebSocket search (SPEC 4): `GET /v1/search?ticket=<token>`.
//!
//! The search is added to its pool before the upgrade, so a refused start
//! answers an ordinary problem (`401`, `409`, `429`). Then the socket gets
//! `{"type":"searching"}`, `{"type":"status"}` whenever the waiting reason
//! or the ping changes, and one final message (`matched`, `failed`,
//! `cancelled`, `expired`) before it closes. Final messages come over the
//! pool store's status channel (the worker, another API instance) and, as a
//! safety net for pub/sub's at-most-once delivery, from re-reading the
//! search's state every ping interval.
//!
//! A Ping frame goes out every `ping_interval`; each Pong's round trip is
//! recorded (`pingMs` = median of the last five). Closing the socket ends
//! the search as cancelled.

use crate::extract::ApiQuery;
use crate::play::start::{start_with_token, store_failed, ticket_invalid, Started, Via};
use crate::play::status::end;
use crate::play::{rfc3339, token, unix_now, Play};
use crate::problem::{ApiError, Problem};
use crate::state::AppState;
use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::ws::{close_code, CloseFrame, Message, WebSocket, WebSocketUpgrade};
use axum::extract::State;
use axum::response::Response;
use futures::StreamExt;
use matchplane_store::pool::{EndOutcome, Ended, SearchState, StatusStream};
use matchplane_store::tickets::StatusMessage;
use serde::Deserialize;
use serde_json::{json, Value};
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Instant;
use utoipa::IntoParams;

/// Query of `GET /v1/search`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct SearchQuery {
    /// The ticket's token (as `POST …/tickets` answered it).
    #[param(min_length = 1)]
    pub ticket: String,
}

/// Starts a search held by a WebSocket (upgrade with `101`).
#[utoipa::path(get, path = "/v1/search", tag = "searches", operation_id = "openSearchSocket",
    params(SearchQuery),
    security(("ticketQuery" = [])),
    responses(
        (status = 101, description = "Switching to the WebSocket: JSON text messages (schema `SearchMessage`) searching, status, then matched/failed/cancelled/expired, then a close with 1000"),
        (status = 400, description = "VALIDATION_ERROR: the `ticket` query parameter is missing (`errors[0].field` is `ticket`), or the request is not a WebSocket upgrade (`Connection: Upgrade`, `Upgrade: websocket`, `Sec-WebSocket-Version: 13`, `Sec-WebSocket-Key`)", body = Problem),
        (status = 401, description = "TICKET_INVALID", body = Problem),
        (status = 409, description = "SEARCH_ALREADY_ACTIVE, PLAYER_ALREADY_SEARCHING, TICKET_ALREADY_MATCHED, GAME_MODE_DISABLED", body = Problem),
        (status = 429, description = "QUOTA_EXCEEDED", body = Problem)))]
pub async fn search(
    State(state): State<AppState>,
    ApiQuery(query): ApiQuery<SearchQuery>,
    upgrade: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> Result<Response, ApiError> {
    let upgrade = upgrade.map_err(not_an_upgrade)?;
    let play = state.play.clone();
    let ticket_id = token::parse(&query.ticket)
        .ok_or_else(ticket_invalid)?
        .ticket_id;
    // Subscribed before the first state re-read, in the same round trip
    // as the start; a final published in between is caught by that
    // re-read. A refused start (a bad token too) drops the subscription.
    let (updates, started) = tokio::join!(
        play.pool.subscribe_status(&ticket_id),
        start_with_token(&play, &state.db, &query.ticket, Via::WebSocket)
    );
    let started = started?;
    let updates = match updates {
        Ok(updates) => updates,
        Err(err) => {
            let _ = end(&play, &started.ticket, EndOutcome::Cancelled).await;
            return Err(store_failed(err));
        }
    };
    let failed_play = play.clone();
    let failed_ticket = started.ticket.clone();
    Ok(upgrade
        .on_failed_upgrade(move |_| {
            tokio::spawn(async move {
                let _ = end(&failed_play, &failed_ticket, EndOutcome::Cancelled).await;
            });
        })
        .on_upgrade(move |socket| hold(play, started, updates, socket)))
}

/// `400 VALIDATION_ERROR` for a request that is not a WebSocket upgrade,
/// saying which part is missing (axum's reason, e.g. the `Connection`
/// header), before any search is started.
fn not_an_upgrade(rejection: WebSocketUpgradeRejection) -> ApiError {
    ApiError::with_status(
        axum::http::StatusCode::BAD_REQUEST,
        matchplane_matchmaker::Code::ValidationError.as_str(),
        format!(
            "a WebSocket upgrade is required (GET with Connection: Upgrade, Upgrade: websocket, \
             Sec-WebSocket-Version: 13 and Sec-WebSocket-Key): {}; REST clients use POST /v1/searches",
            rejection.body_text()
        ),
    )
}

/// What the socket task knows of its search.
struct Held {
    play: Arc<Play>,
    started: Started,
    /// Pings in flight: payload counter and when it was sent.
    pings: VecDeque<(u64, Instant)>,
    next_ping: u64,
    /// The last `status` sent: (waitingReason, pingMs rounded).
    last_status: Option<(Option<Value>, Option<i64>)>,
}

async fn hold(play: Arc<Play>, started: Started, mut updates: StatusStream, mut socket: WebSocket) {
    let mut held = Held {
        play: play.clone(),
        started,
        pings: VecDeque::new(),
        next_ping: 0,
        last_status: None,
    };
    let hello = StatusMessage::Searching {
        ticket_id: held.started.ticket.ticket_id.clone(),
        game_mode: held.started.ticket.game_mode.clone(),
        queued_at: rfc3339(held.started.queued_at),
    };
    if socket.send(text(&hello.to_json())).await.is_err() {
        return client_left(&held).await;
    }
    let mut tick = tokio::time::interval(play.settings.ping_interval);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            update = updates.next() => {
                let Some(json) = update else {
                    // The subscription stopped: the state re-read still ends the search.
                    updates = futures::stream::pending().boxed();
                    continue;
                };
                let Ok(message) = serde_json::from_str::<StatusMessage>(&json) else { continue };
                if message.is_final() {
                    return finish(&mut socket, &message).await;
                }
            }
            incoming = socket.recv() => match incoming {
                Some(Ok(Message::Pong(payload))) => held.pong(&payload).await,
                Some(Ok(Message::Close(_))) | None | Some(Err(_)) => return client_left(&held).await,
                Some(Ok(_)) => {}
            },
            _ = tick.tick() => {
                match held.check().await {
                    Check::Final(message) => return finish(&mut socket, &message).await,
                    Check::Status(message) => {
                        if socket.send(text(&message.to_json())).await.is_err() {
                            return client_left(&held).await;
                        }
                    }
                    Check::Quiet => {}
                }
                let payload = held.next_ping.to_be_bytes();
                held.pings.push_back((held.next_ping, Instant::now()));
                held.next_ping += 1;
                while held.pings.len() > 8 {
                    held.pings.pop_front();
                }
                if socket.send(Message::Ping(payload.to_vec().into())).await.is_err() {
                    return client_left(&held).await;
                }
            }
        }
    }
}

enum Check {
    Final(StatusMessage),
    Status(StatusMessage),
    Quiet,
}

impl Held {
    async fn pong(&mut self, payload: &[u8]) {
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

    /// Re-reads the search: final if it ended, a status if it changed.
    async fn check(&mut self) -> Check {
        let ticket = &self.started.ticket.ticket_id;
        let state = match self
            .play
            .pool
            .search_state(&self.started.mode, ticket)
            .await
        {
            Ok(state) => state,
            Err(error) => {
                tracing::warn!(%error, ticket_id = %ticket, "reading a search failed");
                return Check::Quiet;
            }
        };
        match state {
            Some(SearchState::Live(live)) => {
                let reason: Option<Value> = live
                    .waiting_reason
                    .and_then(|r| serde_json::from_str(&r).ok());
                let current = (
                    reason.clone(),
                    live.search.ping_ms.map(|p| p.round() as i64),
                );
                if self.last_status.as_ref() == Some(&current) {
                    return Check::Quiet;
                }
                self.last_status = Some(current);
                Check::Status(StatusMessage::Status {
                    wait_seconds: (unix_now() - live.search.queued_at).max(0.0),
                    ping_ms: live.search.ping_ms,
                    waiting_reason: reason,
                })
            }
            Some(SearchState::Ended(ended)) => Check::Final(match ended {
                Ended::Matched { match_id } => StatusMessage::Matched {
                    match_: json!({ "matchId": match_id }),
                },
                Ended::Cancelled => StatusMessage::Cancelled,
                Ended::Expired => StatusMessage::Expired,
                Ended::Failed { code, message } => StatusMessage::Failed { code, message },
            }),
            None => Check::Final(StatusMessage::Expired),
        }
    }
}

fn text(json: &str) -> Message {
    Message::Text(json.to_owned().into())
}

/// Sends the final status, then a normal closure (1000) naming it, so a
/// client sees a clean close code rather than 1005 (no status).
async fn finish(socket: &mut WebSocket, message: &StatusMessage) {
    let _ = socket.send(text(&message.to_json())).await;
    let frame = CloseFrame {
        code: close_code::NORMAL,
        reason: "search ended".into(),
    };
    let _ = socket.send(Message::Close(Some(frame))).await;
    // Read until the client's Close answers ours (briefly): dropping the
    // socket with the client's frames unread would reset the connection,
    // and a reset can discard the final frames just sent.
    let _ = tokio::time::timeout(CLOSE_WAIT, async {
        while let Some(Ok(message)) = socket.recv().await {
            if matches!(message, Message::Close(_)) {
                break;
            }
        }
    })
    .await;
}

/// How long a finished search's socket waits for the client's Close.
const CLOSE_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// The client closed the socket (or it broke): the search ends cancelled.
async fn client_left(held: &Held) {
    if let Err(error) = end(&held.play, &held.started.ticket, EndOutcome::Cancelled).await {
        tracing::warn!(status = %error.status(), ticket_id = %held.started.ticket.ticket_id, "ending a closed socket's search failed");
    }
}
