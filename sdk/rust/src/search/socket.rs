//! A search's WebSocket task: reads the server's messages onto the
//! search's stream and sends the handle's commands, until the search's
//! outcome or the socket's close (a close before the outcome is an
//! [`Error::Closed`]).

use super::Command;
use crate::error::Error;
use crate::messages::SearchMessage;
use futures::{SinkExt, StreamExt};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::Message;

pub(super) type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// The ticket id once known, and whether a proposal is open (see
/// [`Search`]), shared by a search's handle and its socket task.
pub(super) type Shared = (Arc<Mutex<Option<String>>>, Arc<AtomicBool>);

pub(super) fn lock(m: &Mutex<Option<String>>) -> std::sync::MutexGuard<'_, Option<String>> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The error of a socket that did not open, or went silent, in time.
pub(super) fn timed_out(what: &'static str) -> Error {
    let io = std::io::Error::new(std::io::ErrorKind::TimedOut, what);
    tokio_tungstenite::tungstenite::Error::Io(io).into()
}

pub(super) async fn run_socket(
    mut socket: Socket,
    events: mpsc::UnboundedSender<Result<SearchMessage, Error>>,
    mut commands: mpsc::UnboundedReceiver<Command>,
    (ticket_id, proposal_open): Shared,
    silence: Duration,
) {
    let mut heard = tokio::time::Instant::now();
    // Whether the search's outcome came (a final message, or `matched`):
    // a close before it is an error the player must act on.
    let mut outcome = false;
    loop {
        tokio::select! {
            () = tokio::time::sleep_until(heard + silence) => {
                let _ = events.send(Err(timed_out("no word from the server in time")));
                return;
            }
            incoming = socket.next() => match incoming.inspect(|_| heard = tokio::time::Instant::now()) {
                Some(Ok(Message::Text(text))) => {
                    let message = SearchMessage::parse(text.as_str());
                    match &message {
                        SearchMessage::Searching { ticket_id: id, .. } => {
                            *lock(&ticket_id) = Some(id.clone());
                        }
                        SearchMessage::Proposed(_) => proposal_open.store(true, Ordering::SeqCst),
                        SearchMessage::Requeued { .. }
                        | SearchMessage::Matched { .. }
                        | SearchMessage::Assigned { .. }
                        | SearchMessage::AssignmentTimeout
                        | SearchMessage::Failed { .. }
                        | SearchMessage::Cancelled
                        | SearchMessage::Expired { .. } => proposal_open.store(false, Ordering::SeqCst),
                        _ => {}
                    }
                    outcome |= message.ends_search() || matches!(message, SearchMessage::Matched { .. });
                    let _ = events.send(Ok(message));
                }
                Some(Ok(Message::Close(frame))) => {
                    if !outcome {
                        let (code, reason) = frame.map_or((1005, String::new()), |f| (u16::from(f.code), f.reason.to_string()));
                        let _ = events.send(Err(Error::Closed { code, reason }));
                    }
                    return;
                }
                None => {
                    if !outcome {
                        let _ = events.send(Err(Error::Closed { code: 1006, reason: String::new() }));
                    }
                    return;
                }
                Some(Ok(_)) => {}
                Some(Err(e)) => {
                    let _ = events.send(Err(e.into()));
                    return;
                }
            },
            command = commands.recv() => match command {
                Some(Command::Text(text)) => {
                    if let Err(e) = socket.send(Message::Text(text.into())).await {
                        let _ = events.send(Err(e.into()));
                        return;
                    }
                }
                Some(Command::Close) => {
                    let frame = CloseFrame { code: CloseCode::Normal, reason: "cancel".into() };
                    let _ = socket.close(Some(frame)).await;
                    outcome = true;
                    let _ = events.send(Ok(SearchMessage::Cancelled));
                }
                Some(Command::PollNow) => {}
                None => {
                    // The `Search` was dropped: leaving ends the search (cancelled).
                    let _ = socket.close(None).await;
                    return;
                }
            },
        }
    }
}
