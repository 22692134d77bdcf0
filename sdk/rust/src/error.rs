//! The SDK's one error type and the server's problem+json body.

use serde::Deserialize;
use std::time::Duration;

/// One failed field rule of a problem's `errors` list.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct FieldError {
    /// JSON path of the field, e.g. `algorithm.baseTolerance`.
    pub field: String,
    /// The rule's code, e.g. `TOLERANCE_BELOW_TIER_FLOOR`.
    pub code: String,
    /// What is wrong, with the limit that applied.
    pub message: String,
}

/// An `application/problem+json` answer of the server (RFC 9457 with
/// matchplane's stable `code` and `errors`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Problem {
    /// The HTTP status, e.g. `422`.
    pub status: u16,
    /// The stable machine-readable code, e.g. `PARTY_TOO_LARGE`.
    pub code: String,
    /// Short human summary of the code.
    #[serde(default)]
    pub title: String,
    /// What went wrong with this request.
    #[serde(default)]
    pub detail: String,
    /// Every failed field rule (empty when the error is not about fields).
    #[serde(default)]
    pub errors: Vec<FieldError>,
    /// The live ticket, for `PLAYER_ALREADY_SEARCHING`; the player's seat in
    /// the match, for `PLAYER_IN_MATCH`.
    #[serde(default)]
    pub ticket_id: Option<String>,
    /// The match waiting for its assignment, for `PLAYER_IN_MATCH` (under
    /// `playerSearchScope: "project"`, a ticket or search of a player whose
    /// match is not assigned yet): assign or release it to free the player.
    #[serde(default)]
    pub match_id: Option<String>,
    /// `retryAfterSeconds` of the body (e.g. `DECLINE_COOLDOWN`), when given.
    #[serde(default)]
    pub retry_after_seconds: Option<f64>,
    /// The `Retry-After` header (`RATE_LIMITED`, `SERVICE_UNAVAILABLE`), or
    /// the body's `retryAfterSeconds` when there is no header.
    #[serde(skip)]
    pub retry_after: Option<Duration>,
    /// The whole body as received, for fields this SDK does not name.
    #[serde(skip)]
    pub body: serde_json::Value,
}

impl Problem {
    /// Parses a problem body; `None` when `body` is not one. `retry_after`
    /// is the `Retry-After` header's value in seconds, when present.
    pub fn parse(body: &[u8], retry_after: Option<&str>) -> Option<Self> {
        let value: serde_json::Value = serde_json::from_slice(body).ok()?;
        let mut problem: Problem = serde_json::from_value(value.clone()).ok()?;
        let header = retry_after
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        let body_secs = problem
            .retry_after_seconds
            .filter(|s| s.is_finite() && *s >= 0.0)
            .map(Duration::from_secs_f64);
        problem.retry_after = header.or(body_secs);
        problem.body = value;
        Some(problem)
    }
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}: {}", self.status, self.code, self.detail)
    }
}

/// Everything a call of this SDK can fail with.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The server answered with a problem (4xx/5xx `application/problem+json`).
    #[error("{0}")]
    Problem(Box<Problem>),
    /// The server answered an error status without a problem body (e.g. a proxy).
    #[error("HTTP {status}: {body}")]
    Status {
        /// The HTTP status.
        status: u16,
        /// The first 1 KiB of the body.
        body: String,
    },
    /// The request could not be sent or its answer not read.
    #[error("transport: {0}")]
    Http(#[from] reqwest::Error),
    /// The WebSocket failed (connect, read or write).
    #[error("websocket: {0}")]
    WebSocket(Box<tokio_tungstenite::tungstenite::Error>),
    /// An answer that is not the JSON this SDK expects.
    #[error("unexpected answer: {0}")]
    Decode(String),
    /// The base URL cannot be used (not `http(s)://…`).
    #[error("invalid base URL: {0}")]
    Url(String),
    /// The search is over, so it takes no more commands.
    #[error("the search has ended")]
    Ended,
    /// The search's WebSocket closed before the search's outcome (a final
    /// message, or `matched`): `code` is the close code, `reason` the close
    /// frame's reason (`""` when none). On `1001` the server is stopping
    /// (a rolling restart) and ended the search `cancelled`: search again
    /// at once with the same ticket ([`Error::search_again`]). A
    /// connection that broke (an [`Error::WebSocket`] read error, or `1006`
    /// when the stream just ended) leaves the search to its socket lease:
    /// search again after a few seconds (`409 SEARCH_ALREADY_ACTIVE`
    /// meanwhile). The server closes with `1000` only after the outcome,
    /// so a `1000` here came from a proxy between.
    #[error("the search's WebSocket closed with {code} before the search's outcome")]
    Closed {
        /// The WebSocket close code.
        code: u16,
        /// The close frame's reason.
        reason: String,
    },
}

impl Error {
    /// The problem, when the server answered with one.
    pub fn problem(&self) -> Option<&Problem> {
        match self {
            Error::Problem(p) => Some(p),
            _ => None,
        }
    }

    /// Whether the server asked to search again with the same ticket at
    /// once: the socket closed with `1001` (the server is stopping) before
    /// the outcome.
    pub fn search_again(&self) -> bool {
        matches!(self, Error::Closed { code: 1001, .. })
    }

    /// The problem's `code` (e.g. `TICKET_INVALID`), when there is one.
    pub fn code(&self) -> Option<&str> {
        self.problem().map(|p| p.code.as_str())
    }
}

impl From<tokio_tungstenite::tungstenite::Error> for Error {
    fn from(e: tokio_tungstenite::tungstenite::Error) -> Self {
        Error::WebSocket(Box::new(e))
    }
}

/// Turns an answer into `T` or the problem it carries.
pub(crate) async fn read_json<T: serde::de::DeserializeOwned>(
    response: reqwest::Response,
) -> Result<T, Error> {
    let status = response.status();
    if status.is_success() {
        let bytes = response.bytes().await?;
        return serde_json::from_slice(&bytes).map_err(|e| Error::Decode(e.to_string()));
    }
    Err(error_of(response).await)
}

/// The error an unsuccessful answer stands for.
pub(crate) async fn error_of(response: reqwest::Response) -> Error {
    let status = response.status().as_u16();
    let retry_after = response
        .headers()
        .get(reqwest::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    match response.bytes().await {
        Ok(bytes) => match Problem::parse(&bytes, retry_after.as_deref()) {
            Some(p) => Error::Problem(Box::new(p)),
            None => Error::Status {
                status,
                body: String::from_utf8_lossy(&bytes[..bytes.len().min(1024)]).into_owned(),
            },
        },
        Err(e) => Error::Http(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_problem_keeps_code_errors_and_retry_after() {
        let body = br#"{"type":"about:blank","title":"Party too large","status":422,
            "code":"PARTY_TOO_LARGE","detail":"a party of 4 exceeds maxSize 3",
            "errors":[{"field":"party.members","code":"PARTY_TOO_LARGE","message":"too many"}]}"#;
        let p = Problem::parse(body, Some("7")).unwrap();
        assert_eq!(p.code, "PARTY_TOO_LARGE");
        assert_eq!(p.errors[0].field, "party.members");
        assert_eq!(p.retry_after, Some(Duration::from_secs(7)));
        let cooldown = br#"{"status":409,"code":"DECLINE_COOLDOWN","retryAfterSeconds":12.5}"#;
        let p = Problem::parse(cooldown, None).unwrap();
        assert_eq!(p.retry_after, Some(Duration::from_millis(12_500)));
        assert!(Problem::parse(b"<html>", None).is_none());
    }

    #[test]
    fn a_player_in_match_problem_names_its_match() {
        let body = br#"{"type":"about:blank","title":"Player in match","status":409,
            "code":"PLAYER_IN_MATCH",
            "detail":"the player is in match mat_01JE of game mode ranked, which waits for its assignment",
            "errors":[],"ticketId":"tkt_01JE","gameMode":"ranked","matchId":"mat_01JE"}"#;
        let p = Problem::parse(body, None).unwrap();
        assert_eq!(p.status, 409);
        assert_eq!(p.code, "PLAYER_IN_MATCH");
        assert_eq!(p.match_id.as_deref(), Some("mat_01JE"));
        assert_eq!(p.ticket_id.as_deref(), Some("tkt_01JE"));
        assert_eq!(p.body["gameMode"], "ranked");
        // Other problems carry no match.
        let searching = br#"{"status":409,"code":"PLAYER_ALREADY_SEARCHING","ticketId":"tkt_1","matchId":null}"#;
        let p = Problem::parse(searching, None).unwrap();
        assert_eq!(p.match_id, None);
        assert_eq!(p.ticket_id.as_deref(), Some("tkt_1"));
    }
}
