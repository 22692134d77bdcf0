//! How a search socket closes (docs/searching.md, "Closing"): after a
//! final message (1000), on the client's Close (answered with its code),
//! when the server stops (1001), on a message over 16 KiB (1009), and when
//! the client leaves.

use super::{text, SocketSearch};
use crate::play::status::end;
use axum::extract::ws::{close_code, CloseFrame, Message, WebSocket};
use matchplane_store::pool::{EndOutcome, SERVER_STOPPING};
use matchplane_store::tickets::StatusMessage;

/// Sends the final status, then a normal closure (1000) naming it, so a
/// client sees a clean close code rather than 1005 (no status).
pub(super) async fn finish(socket: &mut WebSocket, message: &StatusMessage) {
    let _ = socket.send(text(&message.to_json())).await;
    send_close(socket, close_code::NORMAL, "search ended").await;
    client_close(socket).await;
}

/// Sends a Close frame with `code` and `reason`; whether it was sent.
pub(super) async fn send_close(socket: &mut WebSocket, code: u16, reason: &'static str) -> bool {
    let frame = CloseFrame {
        code,
        reason: reason.into(),
    };
    socket.send(Message::Close(Some(frame))).await.is_ok()
}

/// Reads until the client's Close answers ours, for at most
/// [`CLOSE_WAIT`]: dropping the socket with the client's frames unread
/// would reset the connection, and a reset can discard the frames just
/// sent.
pub(super) async fn client_close(socket: &mut WebSocket) {
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

/// The client sent a Close frame: the search ends cancelled and the Close
/// is answered (the closing handshake's reply carries the client's code,
/// 1000 for a normal closure), so the client sees a clean close rather
/// than 1006 (abnormal closure).
pub(super) async fn answer_close(held: &SocketSearch, mut socket: WebSocket) {
    client_left(held).await;
    // After the client's Close the socket only flushes the queued reply.
    send_close(&mut socket, close_code::NORMAL, "search cancelled").await;
    let _ = futures::SinkExt::close(&mut socket).await;
}

/// The server is stopping (`crate::play::sockets`): the search ends
/// cancelled with reason `SERVER_STOPPING` and the socket closes with 1001
/// (going away), without a final message, so that the client searches
/// again with the same ticket (docs/searching.md, "Closing"). The service
/// ended it, not the player: an open proposal it was in closes with
/// nobody cooled down (docs/acceptance.md, "How a proposal ends").
pub(super) async fn server_stopping(held: &SocketSearch, mut socket: WebSocket) {
    let stopping = EndOutcome::CancelledFor {
        reason: SERVER_STOPPING.to_owned(),
    };
    if let Err(error) = end(&held.play, &held.started.ticket, stopping).await {
        tracing::warn!(status = %error.status(), ticket_id = %held.started.ticket.ticket_id, "ending a stopping server's search failed");
    }
    let reason = "server stopping: search again with the same ticket";
    send_close(&mut socket, close_code::AWAY, reason).await;
    client_close(&mut socket).await;
}

/// Keeps a socket whose Close was sent until the client's Close, for at
/// most `wait`; a stream that reads nothing more (after a read error) is
/// kept the whole `wait`, so that the client reads the Close before the
/// connection closes (closed at once, the client's unread frames reset it,
/// and a reset can discard the Close).
async fn linger(socket: &mut WebSocket, wait: std::time::Duration) {
    let _ = tokio::time::timeout(wait, async {
        while let Some(Ok(message)) = socket.recv().await {
            if matches!(message, Message::Close(_)) {
                return;
            }
        }
        std::future::pending::<()>().await;
    })
    .await;
}

/// A read of the client failed while searching: the search ends cancelled
/// as when the client leaves, and the socket closes as
/// [`close_after_failed_read`] says (docs/searching.md, "Closing").
pub(super) async fn read_failed(held: &SocketSearch, mut socket: WebSocket, error: &axum::Error) {
    client_left(held).await;
    close_after_failed_read(&mut socket, error).await;
}

/// Answers a failed read of the client with a Close saying why, so that
/// the client does not read a broken connection (1006) and search again:
/// 1009 for a message over [`super::MAX_CLIENT_MESSAGE_BYTES`], 1007 for
/// text that is not UTF-8, 1002 for another breach of the protocol;
/// nothing for a connection dropped without a Close (nobody is there to
/// tell). The socket then stays a moment for the client to read it.
pub(super) async fn close_after_failed_read(socket: &mut WebSocket, error: &axum::Error) {
    use tokio_tungstenite::tungstenite::error::ProtocolError;
    use tokio_tungstenite::tungstenite::Error;
    let close = match std::error::Error::source(error).and_then(|e| e.downcast_ref::<Error>()) {
        // The rest of the message lies unread: a socket closed at once is
        // reset, and a reset can discard the Close just sent.
        Some(Error::Capacity(_)) => Some((
            close_code::SIZE,
            "message too big: 16 KiB at most",
            CLOSE_WAIT,
        )),
        Some(Error::Utf8(_)) => Some((close_code::INVALID, "text that is not UTF-8", LINGER)),
        Some(Error::Protocol(ProtocolError::ResetWithoutClosingHandshake)) => None,
        Some(Error::Protocol(_)) => Some((close_code::PROTOCOL, "protocol error", LINGER)),
        _ => None,
    };
    if let Some((code, reason, wait)) = close {
        if send_close(socket, code, reason).await {
            linger(socket, wait).await;
        }
    }
}

/// How long a socket whose stream failed stays for its client to read the
/// Close sent on it.
const LINGER: std::time::Duration = std::time::Duration::from_millis(500);

/// The client closed the socket (or it broke): the search ends cancelled.
pub(super) async fn client_left(held: &SocketSearch) {
    if let Err(error) = end(&held.play, &held.started.ticket, EndOutcome::Cancelled).await {
        tracing::warn!(status = %error.status(), ticket_id = %held.started.ticket.ticket_id, "ending a closed socket's search failed");
    }
}
