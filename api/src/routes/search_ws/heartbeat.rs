//! The client's heartbeat on a search socket (docs/searching.md, "Ping,
//! Pong and the pong timeout"): a text message `{"type":"ping"}` is
//! answered `{"type":"pong"}`.
//!
//! The server's Ping frames show a client that the server is there only
//! where its WebSocket library lets it see them; a browser's and .NET's
//! answer them unseen. A client there sends its own `ping` now and then
//! and takes a socket that stays silent past its limit for cut, instead of
//! waiting minutes for TCP to give up on a dead path. At most two `pong`s a
//! second are sent (the SDKs ping at most once a second); the other `ping`s
//! are ignored, so a client that sends them faster than it reads cannot
//! make the socket write without end.

use axum::extract::ws::{Message, WebSocket};
use std::time::{Duration, Instant};

/// The answer to a client's `ping`.
const PONG: &str = r#"{"type":"pong"}"#;

/// The shortest time between two `pong`s.
const MIN_GAP: Duration = Duration::from_millis(500);

/// Whether a client's text message is a `ping` (`{"type":"ping"}`, any
/// other fields ignored).
pub(super) fn is_ping(body: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(body)
        .is_ok_and(|v| v.as_object().and_then(|o| o.get("type")) == Some(&"ping".into()))
}

/// When the socket last answered a `ping`.
#[derive(Debug, Default)]
pub(super) struct Heartbeat {
    last: Option<Instant>,
}

impl Heartbeat {
    /// Answers a `ping` on `socket`, unless a `pong` went out less than
    /// half a second before. `false` when the socket could not be written.
    pub(super) async fn answer(&mut self, socket: &mut WebSocket) -> bool {
        if !self.due(Instant::now()) {
            return true;
        }
        socket.send(Message::Text(PONG.into())).await.is_ok()
    }

    /// Whether a `ping` received at `now` is answered (and if so, notes it).
    fn due(&mut self, now: Instant) -> bool {
        if self
            .last
            .is_some_and(|last| now.duration_since(last) < MIN_GAP)
        {
            return false;
        }
        self.last = Some(now);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ping_is_told_from_other_text() {
        assert!(is_ping(r#"{"type":"ping"}"#));
        assert!(is_ping(r#"{"type":"ping","at":12}"#));
        assert!(!is_ping(r#"{"type":"accept"}"#));
        assert!(!is_ping(r#"{"type":"PING"}"#));
        assert!(!is_ping("ping"));
        assert!(!is_ping(r#"["ping"]"#));
        assert!(!is_ping(r#"{"type":7}"#));
    }

    #[test]
    fn pongs_come_at_most_twice_a_second() {
        let mut beat = Heartbeat::default();
        let start = Instant::now();
        assert!(beat.due(start));
        assert!(!beat.due(start + Duration::from_millis(200)));
        assert!(!beat.due(start + Duration::from_millis(499)));
        assert!(beat.due(start + Duration::from_millis(500)));
        assert!(!beat.due(start + Duration::from_millis(900)));
        assert!(beat.due(start + Duration::from_millis(1100)));
    }
}
