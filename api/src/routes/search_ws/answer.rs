//! A client's answer to its match proposal over the socket
//! (docs/acceptance.md): `{"type":"accept"}` or `{"type":"decline"}`, with
//! an optional `"matchId"` naming the proposal answered.
//!
//! An answer without a `matchId` names the proposal the socket last said
//! (`proposed`), so one sent just as that proposal closed never counts in
//! the ticket's next one. An answer the pool store could not record (out of
//! reach, or too slow to answer) is tried again at each check, once a
//! second, until it is recorded or refused, weighed against `acceptBy` by
//! the time the client sent it: an answer sent in time counts as long as
//! its proposal is still open when the store is back (a proposal already
//! closed by its deadline's rule refuses it).

use super::SocketSearch;
use crate::play::unix_now;
use axum::http::StatusCode;

/// A client's answer as sent: `{"type":"accept"|"decline"}`, with an
/// optional `matchId`.
#[derive(serde::Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
enum Sent {
    Accept {
        #[serde(rename = "matchId", default)]
        match_id: Option<String>,
    },
    Decline {
        #[serde(rename = "matchId", default)]
        match_id: Option<String>,
    },
}

/// What a client's text message answers: `(accept, matchId)`, or `None`
/// when it is no answer (ignored, as any other text).
pub(super) fn parse(body: &str) -> Option<(bool, Option<String>)> {
    match serde_json::from_str::<Sent>(body).ok()? {
        Sent::Accept { match_id } => Some((true, match_id)),
        Sent::Decline { match_id } => Some((false, match_id)),
    }
}

impl SocketSearch {
    /// A client's text message: an answer is recorded (see the module
    /// documentation); anything else is ignored. A refused answer (closed,
    /// not proposed) changes nothing the client is not told by its next
    /// status. An answer that names no proposal while the socket has said
    /// none (none yet, or `requeued` since) answers nothing the client was
    /// told of, and is not recorded.
    pub(super) async fn answer(&mut self, body: &str) {
        let Some((accept, named)) = parse(body) else {
            return;
        };
        let Some(named) = named.or_else(|| self.proposal.clone()) else {
            tracing::debug!(ticket_id = %self.started.ticket.ticket_id, "an answer to no proposal the socket said");
            return;
        };
        self.record(Unrecorded {
            accept,
            named,
            sent_at: unix_now(),
            told: false,
        })
        .await;
    }

    /// The answer the store could not record, tried again.
    pub(super) async fn answer_again(&mut self) {
        if let Some(unrecorded) = self.unrecorded.take() {
            self.record(unrecorded).await;
        }
    }

    async fn record(&mut self, answer: Unrecorded) {
        let ticket = &self.started.ticket;
        let answered = Box::pin(crate::play::answers::answer(
            &self.play,
            ticket,
            (answer.accept, Some(&answer.named)),
            answer.sent_at,
        ))
        .await;
        let Err(error) = answered else {
            return;
        };
        // Tried again only when the store was out of reach: it names its
        // proposal, so it can never count in another.
        if error.status() == StatusCode::SERVICE_UNAVAILABLE {
            if !answer.told {
                tracing::warn!(status = %error.status(), ticket_id = %ticket.ticket_id, "an answer could not be recorded: tried again at each check");
            }
            self.unrecorded = Some(Unrecorded {
                told: true,
                ..answer
            });
        } else {
            tracing::debug!(status = %error.status(), ticket_id = %ticket.ticket_id, "an answer was refused");
        }
    }
}

/// An answer the store could not record yet.
pub(super) struct Unrecorded {
    accept: bool,
    /// The proposal it names.
    named: String,
    /// When the client sent it (Unix seconds): the store weighs it against
    /// `acceptBy` by this time, so an answer sent in time and recorded
    /// once the store is back still counts while its proposal is open.
    sent_at: f64,
    /// Whether its first failure was logged (once per answer).
    told: bool,
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
