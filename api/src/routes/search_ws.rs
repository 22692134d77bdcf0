//! The WebSocket search (docs/searching.md): `GET /v1/search?ticket=<token>`.
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
//! recorded (`pingMs` = median of the last five). A socket with no Pong
//! for `pong_timeout` (10 s: ten missed pongs at one ping a second) ends
//! `expired` with `reason` `PONG_TIMEOUT`, freeing the player and the
//! project's quota. A `{"type":"ping"}` text is answered (`heartbeat.rs`).
//! A client's Close is answered with a Close and ends the search as
//! cancelled; so does a socket that breaks. The server stopping ends it
//! cancelled with reason `SERVER_STOPPING`.
//!
//! A `matched` final always carries the player's view of the match: the
//! worker publishes it once the match is stored, and the re-read, which
//! sees the claim before the match is stored, takes it from the database
//! ([`crate::play::matched`]) or, while it is not stored yet, reports
//! `waitingReason` `MATCH_PENDING` and waits.

use crate::extract::ApiQuery;
use crate::play::start::{resume_queued_at, start_with_token, Started, Via};
use crate::play::status::end;
use crate::play::{rfc3339, token, Play};
use crate::problem::{ApiError, Problem};
use crate::state::AppState;
use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::State;
use axum::response::Response;
use futures::StreamExt;
use matchplane_store::pool::{EndOutcome, StatusStream};
use matchplane_store::tickets::StatusMessage;
use sea_orm::DatabaseConnection;
use serde::Deserialize;
use serde_json::Value;
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Instant;
use tracing::Instrument;
use utoipa::IntoParams;

mod answer;
mod armed;
mod assignment;
mod check;
mod closing;
mod heartbeat;
mod proposal;
mod subscribe;
use armed::Armed;
use check::Check;
use closing::{answer_close, client_left, finish, read_failed, server_stopping};

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
        (status = 101, description = "Switching to the WebSocket: JSON text messages (schema `SearchMessage`) searching, status, then matched/failed/cancelled/expired, then a close with 1000; a client's text `{\"type\":\"ping\"}` is answered `{\"type\":\"pong\"}` (a heartbeat for clients whose WebSocket hides Ping frames)"),
        (status = 400, description = "VALIDATION_ERROR: the request is not a WebSocket upgrade (`Connection: Upgrade`, `Upgrade: websocket`, `Sec-WebSocket-Version: 13`, `Sec-WebSocket-Key`)", body = Problem),
        (status = 401, description = "TICKET_INVALID", body = Problem),
        (status = 409, description = "SEARCH_ALREADY_ACTIVE, PLAYER_ALREADY_SEARCHING, TICKET_ALREADY_MATCHED, GAME_MODE_DISABLED", body = Problem),
        (status = 422, description = "VALIDATION_ERROR: the `ticket` query parameter is missing (`errors[0].field` is `ticket`). Also the code a cycle would fail the search with when the mode's config changed since the ticket was generated and rules it out (MMR_REQUIRED, MMR_OUT_OF_RANGE, LATENCIES_REQUIRED, PARTIES_NOT_ENABLED, PARTY_TOO_LARGE, INVALID_PARTY, ATTRIBUTE_REQUIRED, ATTRIBUTE_NOT_ALLOWED, VALIDATION_ERROR; `errors[0].field` names the field)", body = Problem),
        (status = 429, description = "QUOTA_EXCEEDED", body = Problem)))]
pub async fn search(
    State(state): State<AppState>,
    ApiQuery(query): ApiQuery<SearchQuery>,
    upgrade: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> Result<Response, ApiError> {
    let upgrade = upgrade.map_err(not_an_upgrade)?;
    let play = state.play.clone();
    let ticket_id = token::parse(&query.ticket)
        .ok_or_else(ApiError::ticket_invalid)?
        .ticket_id;
    // Subscribed before the first state re-read, in the same round trip
    // as the start; a final published in between is caught by that
    // re-read. A refused start (a bad token too) drops the subscription.
    // A start is armed until the socket takes it over: a request dropped
    // in between (cut at its deadline while the subscription waits) ends
    // its search, so no search waits in the pool without its socket.
    let start = async {
        let started = start_with_token(&play, &state.db, &query.ticket, Via::WebSocket).await?;
        let armed = Armed::new(&play, &started);
        Ok::<_, ApiError>((started, armed))
    };
    let subscribing = subscribe::or_re_reads(&ticket_id, play.pool.subscribe_status(&ticket_id));
    let (updates, started) = tokio::join!(subscribing, start);
    let (started, armed) = started?;
    armed.disarm();
    let (db, ops) = (state.db.clone(), state.ops.clone());
    let failed_play = play.clone();
    let failed_ticket = started.ticket.clone();
    Ok(upgrade
        .read_buffer_size(READ_BUFFER_BYTES)
        .write_buffer_size(0)
        .max_message_size(MAX_CLIENT_MESSAGE_BYTES)
        .max_frame_size(MAX_CLIENT_MESSAGE_BYTES)
        .on_failed_upgrade(move |_| {
            tokio::spawn(async move {
                let _ = end(&failed_play, &failed_ticket, EndOutcome::Cancelled).await;
            });
        })
        .on_upgrade(move |socket| {
            // Every line the socket's task writes names its search.
            let span = tracing::info_span!(
                "search_socket",
                project_id = %started.ticket.project_id,
                game_mode = %started.ticket.game_mode,
                ticket_id = %started.ticket.ticket_id,
            );
            let held = hold(play.clone(), db, started, query.ticket, updates, socket);
            play.sockets.track(ops.while_open(held.instrument(span)))
        }))
}

/// The socket's read buffer (bytes). A client sends pongs and, with
/// acceptance, an answer of a few dozen bytes: the library's default of
/// 128 KiB, allocated up front for every socket, was most of an open
/// search's memory. A larger message still fits, the buffer grows for it.
const READ_BUFFER_BYTES: usize = 1024;

/// Largest message (and frame) a client may send (bytes): a larger one ends
/// the connection and, like a client that left, cancels the search.
const MAX_CLIENT_MESSAGE_BYTES: usize = 16 * 1024;

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
struct SocketSearch {
    play: Arc<Play>,
    db: DatabaseConnection,
    started: Started,
    /// The ticket's token: a released match's search starts again with it.
    token: String,
    /// Pings in flight: payload counter and when it was sent.
    pings: VecDeque<(u64, Instant)>,
    next_ping: u64,
    /// When the last Pong came (the start, before the first).
    last_pong: Instant,
    /// The proposal a `proposed` message named, while it was the last word
    /// on the search: it waits for answers, so no `status` is sent until it
    /// is `requeued` (docs/acceptance.md; kept in step in `proposal.rs`).
    proposal: Option<String>,
    /// The last proposal the socket said ended: a late `proposed` of it is
    /// not said again (`proposal.rs`).
    ended: Option<String>,
    /// An answer the pool store could not record, tried again at each
    /// check (`answer.rs`).
    unrecorded: Option<answer::Unrecorded>,
    /// The last `status` sent: (waitingReason, found, needed), pingMs,
    /// roleWaits.
    last_status: Option<(
        Waiting,
        Option<f64>,
        Option<crate::play::role_waits::RoleMedians>,
    )>,
}

async fn hold(
    play: Arc<Play>,
    db: DatabaseConnection,
    started: Started,
    token: String,
    mut updates: StatusStream,
    mut socket: WebSocket,
) {
    let mut held = SocketSearch {
        play: play.clone(),
        db,
        started,
        token,
        pings: VecDeque::new(),
        next_ping: 0,
        last_pong: Instant::now(),
        proposal: None,
        ended: None,
        unrecorded: None,
        last_status: None,
    };
    Box::pin(resume_queued_at(&held.play, &mut held.started)).await;
    let hello = StatusMessage::Searching {
        ticket_id: held.started.ticket.ticket_id.clone(),
        game_mode: held.started.ticket.game_mode.clone(),
        queued_at: rfc3339(held.started.queued_at),
    };
    if socket.send(text(&hello.to_json())).await.is_err() {
        return Box::pin(client_left(&held)).await;
    }
    // Every step but the three waits of the loop runs boxed: a task's
    // future is as large as its largest step (the database reads of a
    // check or an answer, the restart of a released search), and an open
    // search holds it the whole time it waits.
    let mut tick = tokio::time::interval(play.settings.ping_interval);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let stopping = play.sockets.stopping();
    let every = play.settings.ping_interval;
    let mut heartbeat = heartbeat::Heartbeat::default();
    // What the client sent while the loop waited on its stores.
    let mut deferred: Option<heartbeat::Incoming> = None;
    let mut pong_at: Option<Instant> = None;
    loop {
        let incoming = match deferred.take() {
            Some(incoming) => incoming,
            None => tokio::select! {
                () = stopping.cancelled() => return Box::pin(server_stopping(&held, socket)).await,
                update = updates.next() => {
                    let Some(json) = update else {
                        // The subscription stopped: the state re-read still ends the search.
                        updates = futures::stream::pending().boxed();
                        continue;
                    };
                    let Some(message) = StatusMessage::from_json(&json) else { continue };
                    if message.is_final() {
                        let waited = held.wait_assignment(&mut socket, &mut heartbeat, &mut updates, &message);
                        if Box::pin(waited).await {
                            continue;
                        }
                        return;
                    }
                    // Its check against the pool (rare) keeps the heartbeat.
                    let busy = Instant::now();
                    let current = heartbeat::keep_alive(held.current(&message), &mut socket, &mut heartbeat, every, &mut deferred, &mut pong_at);
                    let current = Box::pin(current).await;
                    held.excuse(busy, pong_at.take());
                    if heartbeat::closing(&deferred) {
                        continue;
                    }
                    let news = current && held.heard(&message);
                    if news && socket.send(text(&message.to_json())).await.is_err() {
                        return Box::pin(client_left(&held)).await;
                    }
                    continue;
                }
                incoming = socket.recv() => incoming,
                _ = tick.tick() => {
                    let busy = Instant::now();
                    let check = heartbeat::keep_alive(held.check(), &mut socket, &mut heartbeat, every, &mut deferred, &mut pong_at);
                    let checked = Box::pin(check).await;
                    held.excuse(busy, pong_at.take());
                    if heartbeat::closing(&deferred) {
                        continue;
                    }
                    match checked {
                        Check::Final(message) => {
                            let waited = held.wait_assignment(&mut socket, &mut heartbeat, &mut updates, &message);
                            if Box::pin(waited).await {
                                continue;
                            }
                            return;
                        }
                        Check::Status(_) if held.proposal.is_some() => {}
                        Check::Status(message) | Check::Proposal(message) => {
                            if socket.send(text(&message.to_json())).await.is_err() {
                                return Box::pin(client_left(&held)).await;
                            }
                        }
                        Check::Quiet => {}
                    }
                    if held.last_pong.elapsed() >= play.settings.pong_timeout {
                        if let Some(message) = Box::pin(held.pong_timed_out()).await {
                            return Box::pin(finish(&mut socket, &message)).await;
                        }
                    }
                    if socket.send(held.ping()).await.is_err() {
                        return Box::pin(client_left(&held)).await;
                    }
                    continue;
                }
            },
        };
        match incoming {
            Some(Ok(Message::Pong(payload))) => {
                let busy = Instant::now();
                let pong = heartbeat::keep_alive(
                    held.pong(&payload),
                    &mut socket,
                    &mut heartbeat,
                    every,
                    &mut deferred,
                    &mut pong_at,
                );
                Box::pin(pong).await;
                held.excuse(busy, pong_at.take());
            }
            Some(Ok(Message::Text(body))) if heartbeat::is_ping(&body) => {
                if !heartbeat.answer(&mut socket).await {
                    return Box::pin(client_left(&held)).await;
                }
            }
            Some(Ok(Message::Text(body))) => {
                let busy = Instant::now();
                let answer = heartbeat::keep_alive(
                    held.answer(body.as_str()),
                    &mut socket,
                    &mut heartbeat,
                    every,
                    &mut deferred,
                    &mut pong_at,
                );
                Box::pin(answer).await;
                held.excuse(busy, pong_at.take());
            }
            Some(Ok(Message::Close(_))) => return Box::pin(answer_close(&held, socket)).await,
            Some(Err(error)) => return Box::pin(read_failed(&held, socket, &error)).await,
            None => return Box::pin(client_left(&held)).await,
            Some(Ok(_)) => {}
        }
    }
}

impl SocketSearch {
    /// The loop waited on the stores since `busy` (a slow Redis, a slow
    /// database): the client's pongs sat unread meanwhile, so that time is
    /// not its silence. `PONG_TIMEOUT` counts only the time the loop was
    /// listening (docs/searching.md).
    /// A Pong that came meanwhile (`pong_at`, [`heartbeat::keep_alive`])
    /// counts as any other.
    fn excuse(&mut self, busy: Instant, pong_at: Option<Instant>) {
        self.last_pong = excused(self.last_pong, busy, pong_at, Instant::now());
    }
}

/// The last Pong a loop that waited from `busy` to `now` counts: the one
/// before, moved on by the wait, or one that came meanwhile.
fn excused(last_pong: Instant, busy: Instant, pong_at: Option<Instant>, now: Instant) -> Instant {
    let moved = (last_pong + now.duration_since(busy)).min(now);
    pong_at.map_or(moved, |at| moved.max(at))
}

/// A searching status's `waitingReason`, `found` and `needed`.
type Waiting = (Option<Value>, Option<u32>, Option<u32>);

fn text(json: &str) -> Message {
    Message::Text(json.to_owned().into())
}

#[cfg(test)]
mod excuse {
    use std::time::{Duration, Instant};

    #[test]
    fn a_pong_during_the_wait_counts() {
        let start = Instant::now();
        let at = |ms: u64| start + Duration::from_millis(ms);
        // Last Pong at 0, the loop waited from 9 000 to 9 500 ms.
        assert_eq!(super::excused(at(0), at(9_000), None, at(9_500)), at(500));
        // A Pong came at 9 200 ms, while it waited.
        let pong = Some(at(9_200));
        assert_eq!(super::excused(at(0), at(9_000), pong, at(9_500)), at(9_200));
        // Never later than now.
        assert_eq!(
            super::excused(at(9_400), at(9_000), None, at(9_500)),
            at(9_500)
        );
    }
}

#[cfg(test)]
mod future_size {
    /// The size of the future `f` returns, from its signature alone.
    fn returned_size<F, A, B, C, D, E, G, Fut>(_: &F) -> usize
    where
        F: Fn(A, B, C, D, E, G) -> Fut,
    {
        std::mem::size_of::<Fut>()
    }

    /// An open search's task holds its socket's future the whole time it
    /// waits: its rare steps (database reads, a restart) are boxed so that
    /// it stays a few kilobytes (it was 5.4 KB with them inline).
    #[test]
    fn an_open_search_holds_a_small_future() {
        let size = returned_size(&super::hold);
        assert!(size <= 3 * 1024, "the socket's future is {size} bytes");
    }
}
