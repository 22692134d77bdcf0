//! Request-body extraction that only ever fails with a problem (docs/error-codes.md):
//! `415` for a body that is not JSON, `413` over [`MAX_BODY_BYTES`] (at
//! once when `Content-Length` says so), `408` for a body that stopped
//! coming ([`body_bytes`]), and
//! `400 VALIDATION_ERROR` naming the line and column where JSON broke, a
//! body that is not a JSON object (`$`), or every unknown, missing and
//! wrongly typed field by its JSON path ([`crate::body_errors`]). Query
//! strings: [`ApiQuery`] (in `extract/query.rs`).

use crate::problem::ApiError;
use axum::body::{Bytes, HttpBody};
use axum::extract::{FromRequest, Request};
use axum::http::{header, StatusCode};
use axum::RequestExt;
use matchplane_matchmaker::Code;
use serde::de::DeserializeOwned;
use serde_json::Value;

mod object;
mod query;
pub use object::parse_object;
pub use query::{parse_query, query_invalid, refuse_unknown_query, ApiQuery, QueryNames};

/// Largest accepted request body (bytes): 64 KiB.
pub const MAX_BODY_BYTES: usize = 64 * 1024;

/// How deep arrays and objects may nest in a body, the body object
/// itself counting as one: serde_json's recursion limit (which guards the
/// parser's stack) refuses the 128th level.
pub const MAX_JSON_DEPTH: usize = 127;

/// Whether a JSON text holds a NUL character in a string (`\u0000`: JSON
/// cannot hold a raw one). No field accepts one, and PostgreSQL cannot
/// store or even compare text with one, so a NUL is refused here, for every
/// body, before any handler sees it. An escape counts only after an even
/// run of backslashes (`"\\u0000"` is a backslash and `u0000`).
pub fn has_escaped_nul(json: &[u8]) -> bool {
    // Most bodies hold no backslash at all: one scan for it, without
    // building the substring searcher.
    if memchr::memchr(b'\\', json).is_none() {
        return false;
    }
    memchr::memmem::find_iter(json, b"\\u0000").any(|at| {
        let backslashes = json[..=at]
            .iter()
            .rev()
            .take_while(|&&b| b == b'\\')
            .count();
        backslashes % 2 == 1
    })
}

/// `422 VALIDATION_ERROR` naming the first field (JSON path) whose text or
/// key holds a NUL.
fn nul_in_body(bytes: &[u8]) -> ApiError {
    let field = serde_json::from_slice::<Value>(bytes)
        .ok()
        .and_then(|value| matchplane_matchmaker::strict_json::nul_path(&value))
        .unwrap_or_default();
    ApiError::invalid(vec![matchplane_matchmaker::FieldError::new(
        field,
        Code::ValidationError,
        matchplane_matchmaker::strict_json::NUL_MESSAGE,
    )])
}

/// A JSON body parsed into `T`, or an [`ApiError`].
#[derive(Debug)]
pub struct ApiJson<T>(pub T);

/// A JSON body parsed into `T` in one pass, or an [`ApiError`] as
/// [`ApiJson`] gives: `T` refuses a key given twice itself
/// ([`RefusesDuplicateKeys`]), so the text is not walked a second time for
/// one. The ticket route's body, on the hottest path of all.
#[derive(Debug)]
pub struct TypedJson<T>(pub T);

/// A body type that refuses a key given twice at every depth as it is
/// read: a derived struct does for its own fields; a field holding a map,
/// a JSON value or raw JSON text must check its own (e.g. with
/// [`crate::strict_json::Strict`]). Implemented only beside a test that
/// sends each such key twice.
pub trait RefusesDuplicateKeys {}

/// A JSON body kept as a [`Value`], for bodies that are cleaned before
/// they are parsed (e.g. a game mode with server-set fields).
#[derive(Debug)]
pub struct RawJson(pub Value);

fn is_json(req: &Request) -> bool {
    let Some(value) = req.headers().get(header::CONTENT_TYPE) else {
        return false;
    };
    let Ok(value) = value.to_str() else {
        return false;
    };
    // Compared without case rather than lower-cased: no allocation per
    // request (every body goes through here).
    let essence = value.split(';').next().unwrap_or("").trim().as_bytes();
    let starts = |prefix: &str| {
        essence
            .get(..prefix.len())
            .is_some_and(|head| head.eq_ignore_ascii_case(prefix.as_bytes()))
    };
    let ends = |suffix: &str| {
        essence
            .len()
            .checked_sub(suffix.len())
            .is_some_and(|at| essence[at..].eq_ignore_ascii_case(suffix.as_bytes()))
    };
    essence.eq_ignore_ascii_case(b"application/json") || (starts("application/") && ends("+json"))
}

async fn read_body<S: Send + Sync>(req: Request, state: &S) -> Result<Bytes, ApiError> {
    if !is_json(&req) {
        return Err(ApiError::new(
            Code::UnsupportedMediaType,
            "the body must be JSON with Content-Type: application/json",
        ));
    }
    body_bytes(req, state).await
}

/// The whole body of `req`, within its route's limit (axum's
/// `DefaultBodyLimit`: [`MAX_BODY_BYTES`], more on a route that says so).
///
/// # Errors
/// `413 PAYLOAD_TOO_LARGE` over the limit: at once, before a byte is read,
/// when the declared `Content-Length` is over it; `408 REQUEST_TIMEOUT`
/// when the body pauses past the body read timeout (the client's
/// slowness); `400` when it cannot be read otherwise.
pub async fn body_bytes<S: Send + Sync>(req: Request, state: &S) -> Result<Bytes, ApiError> {
    let req = req.with_limited_body();
    // A limited body gives at most its limit: the upper bound of its size.
    let limit = HttpBody::size_hint(req.body()).upper().unwrap_or(u64::MAX);
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|len| len.to_str().ok()?.parse::<u64>().ok());
    if declared.is_some_and(|declared| declared > limit) {
        return Err(ApiError::payload_too_large(limit));
    }
    Bytes::from_request(req, state).await.map_err(|rejection| {
        if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
            ApiError::payload_too_large(limit)
        } else if came_too_slowly(&rejection) {
            ApiError::request_timeout()
        } else {
            ApiError::bad_request("$", "the body could not be read")
        }
    })
}

/// Whether reading a body failed on the body read timeout
/// (`tower_http::timeout::TimeoutBody`, put on every body by the server).
fn came_too_slowly(error: &(dyn std::error::Error + 'static)) -> bool {
    std::iter::successors(Some(error), |e| e.source())
        .any(|e| e.is::<tower_http::timeout::TimeoutError>())
}

/// What kind of JSON value `value` is, for messages.
fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Parses `bytes` (one JSON object) into `T`.
///
/// A body `T` accepts as it is (the common case) is parsed straight into
/// it, with a check for duplicate keys that builds nothing; only a body
/// refused is read into a [`Value`], to name every error.
///
/// # Errors
/// As [`parse_object`], then as [`parse_value`].
pub fn parse_bytes<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    parse_bytes_scanned(bytes, true)
}

/// [`parse_bytes`], scanning the text for a duplicate key only when
/// `scan` (`false`: `T` refuses one itself).
pub(crate) fn parse_bytes_scanned<T: DeserializeOwned>(
    bytes: &[u8],
    scan: bool,
) -> Result<T, ApiError> {
    if let Some(parsed) = parse_accepted(bytes, scan) {
        return Ok(parsed);
    }
    parse_value(parse_object(bytes)?)
}

/// `T` from `bytes` if they are one JSON object (after a byte order mark)
/// with no NUL and no duplicate key, which `T` accepts; `None` for anything
/// else, which [`parse_object`] and [`parse_value`] then explain.
fn parse_accepted<T: DeserializeOwned>(bytes: &[u8], scan: bool) -> Option<T> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    // An object: derived structs also accept an array of their fields.
    let first = bytes
        .iter()
        .find(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'));
    if first != Some(&b'{') || has_escaped_nul(bytes) {
        return None;
    }
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let parsed = T::deserialize(&mut de).ok()?;
    de.end().ok()?;
    // A derived struct refuses a field given twice; a map-valued field
    // would keep the last one silently.
    (!scan || !crate::strict_json::has_duplicate_key(bytes)).then_some(parsed)
}

/// Parses an already-read JSON `value` (an object) into `T`, listing every
/// unknown, missing or wrongly typed field at once by its JSON path (see
/// [`crate::body_errors`]).
///
/// # Errors
/// `400 VALIDATION_ERROR` with one entry per field.
pub fn parse_value<T: DeserializeOwned>(value: Value) -> Result<T, ApiError> {
    if !value.is_object() {
        return Err(ApiError::bad_request(
            "$",
            format!("the body must be a JSON object, not {}", kind(&value)),
        ));
    }
    crate::body_errors::deserialize_all(value).map_err(ApiError::bad_body)
}

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let bytes = read_body(req, state).await?;
        parse_bytes(&bytes).map(ApiJson)
    }
}

impl<S: Send + Sync, T: DeserializeOwned + RefusesDuplicateKeys> FromRequest<S> for TypedJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let bytes = read_body(req, state).await?;
        parse_bytes_scanned(&bytes, false).map(TypedJson)
    }
}

impl<S: Send + Sync> FromRequest<S> for RawJson {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let bytes = read_body(req, state).await?;
        parse_object(&bytes).map(RawJson)
    }
}

impl<S: Send + Sync, T: DeserializeOwned> axum::extract::OptionalFromRequest<S> for ApiJson<T> {
    type Rejection = ApiError;

    /// No body at all (no `Content-Type`, no length) is `None`.
    async fn from_request(req: Request, state: &S) -> Result<Option<Self>, Self::Rejection> {
        let empty = !req.headers().contains_key(header::CONTENT_TYPE)
            && req
                .headers()
                .get(header::CONTENT_LENGTH)
                .is_none_or(|len| len.as_bytes() == b"0");
        if empty {
            return Ok(None);
        }
        <Self as FromRequest<S>>::from_request(req, state)
            .await
            .map(Some)
    }
}

/// The body of a route that takes none: nothing, or an empty JSON object
/// (`{}` carries nothing). Anything else is refused rather than dropped
/// without a word, as every body is strict (docs/errors.md): `400
/// VALIDATION_ERROR` at `$`. Extracted last, as it reads the body.
#[derive(Debug)]
pub struct NoBody;

impl<S: Send + Sync> FromRequest<S> for NoBody {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let bytes = body_bytes(req, state).await?;
        let text = bytes.trim_ascii();
        let empty_object = || {
            serde_json::from_slice::<Value>(text)
                .is_ok_and(|v| v.as_object().is_some_and(|o| o.is_empty()))
        };
        if text.is_empty() || empty_object() {
            Ok(NoBody)
        } else {
            Err(ApiError::bad_request(
                "$",
                "this request takes no body: send none (or {})",
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A body `depth` arrays and objects deep, the body object counting.
    fn nested(depth: usize) -> String {
        format!(
            "{{\"a\":{}1{}}}",
            "[".repeat(depth - 1),
            "]".repeat(depth - 1)
        )
    }

    #[test]
    fn bodies_nest_at_most_max_json_depth() {
        assert!(parse_object(nested(MAX_JSON_DEPTH).as_bytes()).is_ok());
        let Err(err) = parse_object(nested(MAX_JSON_DEPTH + 1).as_bytes()) else {
            panic!("{} deep was accepted", MAX_JSON_DEPTH + 1);
        };
        let text = format!("{err:?}");
        assert!(text.contains("nested too deeply"), "{text}");
    }
}
