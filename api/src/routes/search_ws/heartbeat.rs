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
//!
//! While the socket's loop waits on its stores (a Redis or a database slow
//! to answer, up to their command timeouts), [`keep_alive`] goes on
//! sending Pings and answering `ping`s, so a stall of the stores never
//! looks to a client like a dead path.

use axum::extract::ws::{Message, WebSocket};
use std::future::Future;
use std::time::{Duration, Instant};

/// What the socket's read gave: a message, its end (`None`) or an error.
pub(super) type Incoming = Option<Result<Message, axum::Error>>;

/// Whether the client's Close came while the loop waited (`deferred`):
/// then the loop sends nothing more but answers it (1000), since a send
/// after a Close fails and would end the socket without a Close frame.
pub(super) fn closing(deferred: &Option<Incoming>) -> bool {
    matches!(deferred, Some(Some(Ok(Message::Close(_)))))
}

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

/// Runs `work` (the loop's wait on its stores) to its end while keeping
/// the socket alive: a Ping frame every `every`, each `ping` answered, the
/// time of the last Pong noted in `pong_at` (it shows the client is there
/// as any other; its round trip, stretched by the wait, is not measured).
/// Anything else the client sends is left in `deferred`, for the loop to
/// handle once the work is done; nothing more is read until then. Write
/// failures show at the loop's next read or write.
pub(super) async fn keep_alive<T>(
    work: impl Future<Output = T>,
    socket: &mut WebSocket,
    heartbeat: &mut Heartbeat,
    every: Duration,
    deferred: &mut Option<Incoming>,
    pong_at: &mut Option<Instant>,
) -> T {
    let work = std::pin::pin!(work);
    let mut work = work;
    let start = tokio::time::Instant::now() + every;
    let mut tick = tokio::time::interval_at(start, every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            done = &mut work => return done,
            incoming = socket.recv(), if deferred.is_none() => match incoming {
                Some(Ok(Message::Text(body))) if is_ping(&body) => {
                    let _ = heartbeat.answer(socket).await;
                }
                Some(Ok(Message::Pong(_))) => *pong_at = Some(Instant::now()),
                Some(Ok(Message::Ping(_))) => {}
                other => *deferred = Some(other),
            },
            _ = tick.tick() => {
                let _ = socket.send(Message::Ping(Vec::new().into())).await;
            }
        }
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
