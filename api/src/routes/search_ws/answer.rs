//! A client's answer to its match proposal over the socket
//! (docs/acceptance.md): `{"type":"accept"}` or `{"type":"decline"}`, with
//! an optional `"matchId"` naming the proposal answered.
//!
//! An answer without a `matchId` names the proposal the socket last said
//! (`proposed`), so one sent just as that proposal closed never counts in
//! the ticket's next one. An answer the pool store could not record (out of
//! reach, or too slow to answer) is tried again at each check, once a
//! second, until it is recorded or refused: a Redis outage shorter than
//! the time left to answer loses no answer (past `acceptBy` the store
//! refuses it, and the proposal ends by its deadline's rule).

use super::SocketSearch;
use axum::http::StatusCode;

/// What a client's text message answers: `(accept, matchId)`, or `None`
/// when it is no answer (ignored, as any other text).
pub(super) fn parse(body: &str) -> Option<(bool, Option<String>)> {
    let value = serde_json::from_str::<serde_json::Value>(body).ok()?;
    let accept = match value.get("type")?.as_str()? {
        "accept" => true,
        "decline" => false,
        _ => return None,
    };
    let named = match value.get("matchId") {
        None | Some(serde_json::Value::Null) => None,
        Some(id) => Some(id.as_str()?.to_owned()),
    };
    Some((accept, named))
}

impl SocketSearch {
    /// A client's text message: an answer is recorded (see the module
    /// documentation); anything else is ignored. A refused answer (closed,
    /// not proposed) changes nothing the client is not told by its next
    /// status.
    pub(super) async fn answer(&mut self, body: &str) {
        let Some((accept, named)) = parse(body) else {
            return;
        };
        let named = named.or_else(|| self.proposal.clone());
        self.record(accept, named).await;
    }

    /// The answer the store could not record, tried again.
    pub(super) async fn answer_again(&mut self) {
        if let Some((accept, named)) = self.unrecorded.take() {
            self.record(accept, Some(named)).await;
        }
    }

    async fn record(&mut self, accept: bool, named: Option<String>) {
        let ticket = &self.started.ticket;
        let answered = Box::pin(crate::play::answers::answer(
            &self.play,
            ticket,
            accept,
            named.as_deref(),
        ))
        .await;
        let Err(error) = answered else {
            return;
        };
        // Tried again only when the store was out of reach, and when it
        // names its proposal: it can then never count in another.
        match named {
            Some(named) if error.status() == StatusCode::SERVICE_UNAVAILABLE => {
                if self.unrecorded.is_none() {
                    tracing::warn!(status = %error.status(), ticket_id = %ticket.ticket_id, "an answer could not be recorded: tried again at the next check");
                }
                self.unrecorded = Some((accept, named));
            }
            _ => {
                tracing::debug!(status = %error.status(), ticket_id = %ticket.ticket_id, "an answer was refused");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn an_answer_may_name_its_proposal() {
        assert_eq!(parse(r#"{"type":"accept"}"#), Some((true, None)));
        assert_eq!(
            parse(r#"{"type":"decline","matchId":null}"#),
            Some((false, None))
        );
        assert_eq!(
            parse(r#"{"type":"accept","matchId":"mat_1"}"#),
            Some((true, Some("mat_1".to_owned())))
        );
        // Not an answer: ignored.
        assert_eq!(parse(r#"{"type":"accept","matchId":7}"#), None);
        assert_eq!(parse(r#"{"type":"ping"}"#), None);
        assert_eq!(parse("accept"), None);
    }
}
