//! One error type, [`ApiError`], answered as `application/problem+json`
//! exactly as docs/error-codes.md: `type`, `title`, `status`, `code`, `detail`, `errors`.
//!
//! A 5xx says nothing about its cause: the cause is logged once, here, and
//! the body only says `INTERNAL`.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use matchplane_matchmaker::{Code, FieldError, ValidationErrors};
use serde::Serialize;
use utoipa::ToSchema;

mod listed;
mod named;
mod store_errors;

pub use listed::{listed, MAX_LISTED_ERRORS};

/// The media type of every error body.
pub const PROBLEM_JSON: &str = "application/problem+json";

/// `Retry-After` of a `503 SERVICE_UNAVAILABLE` (seconds): about the time
/// a dependency's restart or failover takes to be noticed.
pub const UNAVAILABLE_RETRY_AFTER_SECONDS: u64 = 5;

/// A response extension that tells [`safety_net`] to leave an error
/// answer's body as it is (`/readyz`'s documented body).
#[derive(Debug, Clone, Copy)]
pub struct KeepBody;

/// One failed rule in a problem's `errors` list.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ProblemFieldError {
    /// JSON path of the field, e.g. `algorithm.baseTolerance`.
    pub field: String,
    /// The rule's code, e.g. `TOLERANCE_BELOW_TIER_FLOOR`.
    pub code: String,
    /// What is wrong, with the limit that applied.
    pub message: String,
}

/// An RFC 9457 problem body with matchplane's `code` and `errors`.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(example = json!({"type": "about:blank", "title": "Party too large", "status": 422,
    "code": "PARTY_TOO_LARGE", "detail": "a party of 4 exceeds maxSize 3",
    "errors": [{"field": "party.members", "code": "PARTY_TOO_LARGE", "message": "a party of 4 exceeds maxSize 3"}]}))]
pub struct Problem {
    /// Always `about:blank`.
    #[serde(rename = "type")]
    pub kind: String,
    /// Short human summary of the code.
    pub title: String,
    /// The HTTP status, repeated.
    #[schema(minimum = 400, maximum = 599)]
    pub status: u16,
    /// Machine-readable code, e.g. `VALIDATION_ERROR`.
    pub code: String,
    /// What went wrong with this request.
    pub detail: String,
    /// Every failed field rule (empty when the error is not about fields).
    pub errors: Vec<ProblemFieldError>,
    /// The live ticket, for `PLAYER_ALREADY_SEARCHING`.
    #[serde(rename = "ticketId", skip_serializing_if = "Option::is_none")]
    pub ticket_id: Option<String>,
    /// Seconds until the player may search again, for `DECLINE_COOLDOWN`
    /// (also in `Retry-After`).
    #[serde(rename = "retryAfterSeconds", skip_serializing_if = "Option::is_none")]
    pub retry_after_seconds: Option<u64>,
    /// The open request, for `BACKFILL_ALREADY_OPEN`.
    #[serde(rename = "backfillId", skip_serializing_if = "Option::is_none")]
    pub backfill_id: Option<String>,
    /// The guard's verdict, for `CONFIG_REGRESSION`: `passed`, `tolerance`
    /// and per guarded figure `current`, `proposed`, `worsenedBy`,
    /// `regressed`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub guard: Option<serde_json::Value>,
    /// The mode of the live ticket, for `PLAYER_ALREADY_SEARCHING`; the
    /// match's mode, for `PLAYER_IN_MATCH`.
    #[serde(rename = "gameMode", skip_serializing_if = "Option::is_none")]
    pub game_mode: Option<String>,
    /// The match waiting for its assignment, for `PLAYER_IN_MATCH`.
    #[serde(rename = "matchId", skip_serializing_if = "Option::is_none")]
    pub match_id: Option<String>,
}

/// An error answer of the API; build it with the constructors below.
#[derive(Debug, Clone)]
pub struct ApiError {
    status: StatusCode,
    code: &'static str,
    detail: String,
    errors: Vec<ProblemFieldError>,
    retry_after_seconds: Option<u64>,
    ticket_id: Option<String>,
    /// Members few errors carry, boxed so that every `Result` of the API
    /// stays small.
    extra: Option<Box<Extra>>,
}

/// The members of a problem body that only some codes carry.
#[derive(Debug, Clone)]
struct Extra {
    /// `backfillId` of `BACKFILL_ALREADY_OPEN`.
    backfill_id: Option<String>,
    /// `guard` of `CONFIG_REGRESSION`.
    guard: Option<serde_json::Value>,
    /// `gameMode` of `PLAYER_ALREADY_SEARCHING` and `PLAYER_IN_MATCH`.
    game_mode: Option<String>,
    /// `matchId` of `PLAYER_IN_MATCH`.
    match_id: Option<String>,
}

/// The HTTP status docs/error-codes.md gives a code.
pub fn status_of(code: Code) -> StatusCode {
    match code {
        Code::Unauthorized | Code::TicketInvalid => StatusCode::UNAUTHORIZED,
        Code::NotFound | Code::GameModeNotFound => StatusCode::NOT_FOUND,
        Code::Conflict
        | Code::GameModeDisabled
        | Code::PlayerAlreadySearching
        | Code::PlayerInMatch
        | Code::SearchAlreadyActive
        | Code::TicketAlreadyMatched
        | Code::ResultAlreadyReported
        | Code::BackfillAlreadyOpen
        | Code::IdempotencyKeyInUse
        | Code::ProposalClosed
        | Code::NotProposed
        | Code::DeclineCooldown
        | Code::ReleaseWindowClosed
        | Code::AlreadyAssigned
        | Code::ConfigRegression => StatusCode::CONFLICT,
        Code::Forbidden => StatusCode::FORBIDDEN,
        Code::VersionMismatch => StatusCode::PRECONDITION_FAILED,
        Code::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
        Code::UriTooLong => StatusCode::URI_TOO_LONG,
        Code::HeadersTooLarge => StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
        Code::RequestTimeout => StatusCode::REQUEST_TIMEOUT,
        Code::ServiceUnavailable => StatusCode::SERVICE_UNAVAILABLE,
        Code::RateLimited | Code::QuotaExceeded | Code::TicketLimitExceeded => {
            StatusCode::TOO_MANY_REQUESTS
        }
        Code::PayloadTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
        Code::UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
        Code::Internal => StatusCode::INTERNAL_SERVER_ERROR,
        _ => StatusCode::UNPROCESSABLE_ENTITY,
    }
}

/// Words a title keeps in capitals.
const ACRONYMS: [&str; 3] = ["MMR", "URL", "URI"];

/// The `title` member of a problem with `code` (docs/error-codes.md,
/// "Titles"): the code's words in sentence case, `MMR`, `URL` and `URI`
/// kept in capitals (`PARTY_TOO_LARGE` is "Party too large",
/// `INVALID_WEBHOOK_URL` "Invalid webhook URL"); `INTERNAL` is "Internal
/// error".
pub fn title_of(code: &str) -> String {
    if code == "INTERNAL" {
        return "Internal error".to_owned();
    }
    let words: Vec<String> = code
        .split('_')
        .filter(|word| !word.is_empty())
        .enumerate()
        .map(|(i, word)| {
            if ACRONYMS.contains(&word) {
                word.to_owned()
            } else if i == 0 {
                let mut chars = word.chars();
                chars.next().map_or_else(String::new, |first| {
                    first.to_string() + &chars.as_str().to_ascii_lowercase()
                })
            } else {
                word.to_ascii_lowercase()
            }
        })
        .collect();
    words.join(" ")
}

impl ApiError {
    /// An error with `code` at its documented status.
    pub fn new(code: Code, detail: impl Into<String>) -> Self {
        Self::with_status(status_of(code), code.as_str(), detail)
    }

    /// An error with an explicit status and code string.
    pub fn with_status(status: StatusCode, code: &'static str, detail: impl Into<String>) -> Self {
        Self {
            status,
            code,
            detail: detail.into(),
            errors: Vec::new(),
            retry_after_seconds: None,
            ticket_id: None,
            extra: None,
        }
    }

    /// Adds the `ticketId` member (the live ticket of
    /// `PLAYER_ALREADY_SEARCHING`).
    pub fn with_ticket_id(mut self, ticket_id: impl Into<String>) -> Self {
        self.ticket_id = Some(ticket_id.into());
        self
    }

    /// Names the open backfill request (`backfillId`) of a
    /// `BACKFILL_ALREADY_OPEN`.
    pub fn with_backfill_id(mut self, backfill_id: impl Into<String>) -> Self {
        self.extra = Some(Box::new(Extra {
            backfill_id: Some(backfill_id.into()),
            guard: None,
            game_mode: None,
            match_id: None,
        }));
        self
    }

    /// Adds the guard's verdict (`guard`) of a `CONFIG_REGRESSION`.
    pub fn with_guard(mut self, verdict: impl serde::Serialize) -> Self {
        self.extra = Some(Box::new(Extra {
            backfill_id: None,
            guard: serde_json::to_value(verdict).ok(),
            game_mode: None,
            match_id: None,
        }));
        self
    }

    /// Names the mode (`gameMode`) of the live ticket of a
    /// `PLAYER_ALREADY_SEARCHING`.
    pub fn with_game_mode(mut self, game_mode: impl Into<String>) -> Self {
        self.extra = Some(Box::new(Extra {
            backfill_id: None,
            guard: None,
            game_mode: Some(game_mode.into()),
            match_id: None,
        }));
        self
    }

    /// `400 VALIDATION_ERROR` for a body that cannot be read, naming where.
    pub fn bad_request(field: impl Into<String>, detail: impl Into<String>) -> Self {
        let detail = detail.into();
        let mut err = Self::with_status(
            StatusCode::BAD_REQUEST,
            Code::ValidationError.as_str(),
            &*detail,
        );
        err.errors.push(ProblemFieldError {
            field: field.into(),
            code: Code::ValidationError.as_str().into(),
            message: detail,
        });
        err
    }

    /// `400 VALIDATION_ERROR` for a body of the wrong shape (unknown or
    /// missing fields, wrong types), every field listed; never empty-handed
    /// (an empty list names the whole body, `$`).
    pub fn bad_body(errors: Vec<FieldError>) -> Self {
        let detail = match errors.as_slice() {
            [] => "the body is invalid".to_owned(),
            [one] => format!("`{}`: {}", one.field, one.message),
            many => format!("{} fields are invalid; see errors", many.len()),
        };
        let mut err = Self::with_status(
            StatusCode::BAD_REQUEST,
            Code::ValidationError.as_str(),
            detail,
        );
        err.errors = errors
            .into_iter()
            .map(|e| ProblemFieldError {
                field: e.field,
                code: Code::ValidationError.as_str().into(),
                message: e.message,
            })
            .collect();
        if err.errors.is_empty() {
            err.errors.push(ProblemFieldError {
                field: "$".into(),
                code: Code::ValidationError.as_str().into(),
                message: "the body is invalid".into(),
            });
        }
        err
    }

    /// `422` with every failed check listed ("N fields are invalid" when
    /// more than one, as a `400` of the body's shape says); the status and code are those
    /// of the most specific code (see [`ValidationErrors::primary_code`]).
    pub fn invalid(errors: Vec<FieldError>) -> Self {
        if errors.is_empty() {
            return Self::new(Code::ValidationError, "the request is invalid");
        }
        let code = ValidationErrors(errors.clone()).primary_code();
        let detail = if errors.len() == 1 {
            errors[0].message.clone()
        } else {
            format!("{} fields are invalid; see errors", errors.len())
        };
        let mut err = Self::new(code, detail);
        if code == Code::ValidationError {
            err.status = StatusCode::UNPROCESSABLE_ENTITY;
        }
        err.errors = listed(errors)
            .into_iter()
            .map(|e| ProblemFieldError {
                field: e.field,
                code: e.code.as_str().into(),
                message: e.message,
            })
            .collect();
        err
    }
}

impl ApiError {
    /// The HTTP status.
    pub fn status(&self) -> StatusCode {
        self.status
    }

    /// The machine-readable code.
    pub fn code(&self) -> &'static str {
        self.code
    }

    /// The body of this error.
    pub fn problem(&self) -> Problem {
        Problem {
            kind: "about:blank".into(),
            title: title_of(self.code),
            status: self.status.as_u16(),
            code: self.code.into(),
            detail: self.detail.clone(),
            errors: self.errors.clone(),
            ticket_id: self.ticket_id.clone(),
            retry_after_seconds: (self.code == Code::DeclineCooldown.as_str())
                .then_some(self.retry_after_seconds)
                .flatten(),
            backfill_id: self.extra.as_ref().and_then(|e| e.backfill_id.clone()),
            guard: self.extra.as_ref().and_then(|e| e.guard.clone()),
            game_mode: self.extra.as_ref().and_then(|e| e.game_mode.clone()),
            match_id: self.extra.as_ref().and_then(|e| e.match_id.clone()),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = serde_json::to_vec(&self.problem()).unwrap_or_default();
        let mut response = (self.status, body).into_response();
        let headers = response.headers_mut();
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(PROBLEM_JSON));
        if let Some(seconds) = self.retry_after_seconds {
            headers.insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        }
        response
    }
}

/// Turns any error answer that is not already a problem (axum's 405, a
/// body-limit 413, an extractor's plain-text rejection) into one.
pub fn safety_net(response: Response) -> Response {
    let status = response.status();
    let is_problem = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes() == PROBLEM_JSON.as_bytes());
    let kept = response.extensions().get::<KeepBody>().is_some();
    if !(status.is_client_error() || status.is_server_error()) || is_problem || kept {
        return response;
    }
    let (code, detail) = match status {
        StatusCode::BAD_REQUEST => (Code::ValidationError.as_str(), "the request is malformed"),
        StatusCode::UNAUTHORIZED => (Code::Unauthorized.as_str(), "invalid credentials"),
        StatusCode::NOT_FOUND => (Code::NotFound.as_str(), "no such resource"),
        StatusCode::METHOD_NOT_ALLOWED => (
            Code::MethodNotAllowed.as_str(),
            "this route does not accept that method",
        ),
        StatusCode::PAYLOAD_TOO_LARGE => {
            (Code::PayloadTooLarge.as_str(), "the body is over 64 KiB")
        }
        StatusCode::UNSUPPORTED_MEDIA_TYPE => {
            (Code::UnsupportedMediaType.as_str(), "the body must be JSON")
        }
        StatusCode::TOO_MANY_REQUESTS => (Code::RateLimited.as_str(), "too many requests"),
        StatusCode::SERVICE_UNAVAILABLE => {
            return ApiError::unavailable("the service cannot answer now; retry shortly")
                .into_response()
        }
        s if s.is_server_error() => (Code::Internal.as_str(), "something failed on our side"),
        _ => (Code::ValidationError.as_str(), "the request was refused"),
    };
    let allow = response.headers().get(header::ALLOW).cloned();
    let mut problem = ApiError::with_status(status, code, detail).into_response();
    if let Some(allow) = allow {
        problem.headers_mut().insert(header::ALLOW, allow);
    }
    problem
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `422` with several errors says how many fields are invalid, in the
    /// words of a `400` (never "rules", which name a mode's matching rules).
    #[test]
    fn several_invalid_fields_are_counted_as_fields() {
        let errors = vec![
            FieldError::new(
                "attributes.level",
                Code::ValidationError,
                "500 is outside [1, 100]",
            ),
            FieldError::new("attributes.maps[0]", Code::ValidationError, "not a map"),
        ];
        let err = ApiError::invalid(errors);
        assert_eq!(err.status, StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(err.detail, "2 fields are invalid; see errors");
    }
}
