//! Request-body extraction that only ever fails with a problem (docs/error-codes.md):
//! `415` for a body that is not JSON, `413` over [`MAX_BODY_BYTES`], and
//! `400 VALIDATION_ERROR` naming the line and column where JSON broke, a
//! body that is not a JSON object (`$`), or every unknown, missing and
//! wrongly typed field by its JSON path ([`crate::body_errors`]).

use crate::problem::ApiError;
use crate::strict_json::StrictValue;
use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use axum::http::{header, StatusCode};
use matchplane_matchmaker::Code;
use serde::de::DeserializeOwned;
use serde_json::Value;

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
    fn find(value: &Value, path: &str) -> Option<String> {
        match value {
            Value::String(text) if text.contains('\0') => Some(path.to_owned()),
            Value::Array(items) => items
                .iter()
                .enumerate()
                .find_map(|(i, item)| find(item, &format!("{path}[{i}]"))),
            Value::Object(fields) => fields.iter().find_map(|(key, item)| {
                let at = if path.is_empty() {
                    key.clone()
                } else {
                    format!("{path}.{key}")
                };
                if key.contains('\0') {
                    Some(at)
                } else {
                    find(item, &at)
                }
            }),
            _ => None,
        }
    }
    let field = serde_json::from_slice::<Value>(bytes)
        .ok()
        .and_then(|value| find(&value, ""))
        .unwrap_or_default();
    ApiError::invalid(vec![matchplane_matchmaker::FieldError::new(
        field,
        Code::ValidationError,
        "text must not contain a NUL character (\\u0000)",
    )])
}

/// A JSON body parsed into `T`, or an [`ApiError`].
#[derive(Debug)]
pub struct ApiJson<T>(pub T);

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
    let essence = value
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    essence == "application/json"
        || (essence.starts_with("application/") && essence.ends_with("+json"))
}

async fn read_body<S: Send + Sync>(req: Request, state: &S) -> Result<Bytes, ApiError> {
    if !is_json(&req) {
        return Err(ApiError::new(
            Code::UnsupportedMediaType,
            "the body must be JSON with Content-Type: application/json",
        ));
    }
    Bytes::from_request(req, state).await.map_err(|rejection| {
        if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
            ApiError::new(
                Code::PayloadTooLarge,
                format!("the body is over {MAX_BODY_BYTES} bytes"),
            )
        } else {
            ApiError::bad_request("$", "the body could not be read")
        }
    })
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

/// Parses `bytes` as one JSON object, naming line and column when the text
/// is not JSON. A leading UTF-8 byte order mark (some Windows tools write
/// one) is skipped.
///
/// # Errors
/// `400 VALIDATION_ERROR`: malformed JSON, trailing text, a NUL in a
/// string (`422`), or a body that is not an object (field `$`).
pub fn parse_object(bytes: &[u8]) -> Result<Value, ApiError> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    if has_escaped_nul(bytes) {
        return Err(nul_in_body(bytes));
    }
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let read = serde_path_to_error::deserialize::<_, StrictValue>(&mut de);
    let StrictValue(value) = read.map_err(|err| {
        if err.inner().is_data() {
            // A duplicate key (the only data error of a StrictValue).
            return ApiError::bad_body(vec![crate::body_errors::field_error(err)]);
        }
        let inner = err.into_inner();
        let text = inner.to_string();
        if text.starts_with("recursion limit exceeded") {
            return ApiError::bad_request(
                "$",
                format!(
                    "the JSON is nested too deeply at line {} column {}: arrays and objects \
                     may be nested at most {MAX_JSON_DEPTH} deep, counting the body itself",
                    inner.line(),
                    inner.column()
                ),
            );
        }
        let what = text
            .rsplit_once(" at line ")
            .map_or(text.as_str(), |(w, _)| w);
        ApiError::bad_request(
            "$",
            format!(
                "malformed JSON at line {} column {}: {what}",
                inner.line(),
                inner.column()
            ),
        )
    })?;
    de.end().map_err(|inner| {
        ApiError::bad_request(
            "$",
            format!(
                "trailing characters after the JSON value at line {} column {}",
                inner.line(),
                inner.column()
            ),
        )
    })?;
    if !value.is_object() {
        return Err(ApiError::bad_request(
            "$",
            format!("the body must be a JSON object, not {}", kind(&value)),
        ));
    }
    Ok(value)
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
    if let Some(parsed) = parse_accepted(bytes) {
        return Ok(parsed);
    }
    parse_value(parse_object(bytes)?)
}

/// `T` from `bytes` if they are one JSON object (after a byte order mark)
/// with no NUL and no duplicate key, which `T` accepts; `None` for anything
/// else, which [`parse_object`] and [`parse_value`] then explain.
fn parse_accepted<T: DeserializeOwned>(bytes: &[u8]) -> Option<T> {
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
    (!crate::strict_json::has_duplicate_key(bytes)).then_some(parsed)
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

/// A query string parsed into `T`, or `422 VALIDATION_ERROR` whose
/// `errors[0].field` names the parameter that is missing or does not
/// parse (e.g. `limit`) and whose `detail` says in plain words what it
/// must be and what was sent: the same answer as a value out of range, on
/// every route that takes query parameters.
#[derive(Debug)]
pub struct ApiQuery<T>(pub T);

/// The parameter a query error is about: the path where one was being
/// read, else the name in serde's "missing field `x`".
fn query_field(path: &serde_path_to_error::Path, message: &str) -> String {
    let path = path.to_string();
    if !path.is_empty() && path != "." {
        return path;
    }
    message
        .split('`')
        .nth(1)
        .map(str::to_owned)
        .unwrap_or_else(|| "$".to_owned())
}

/// What a parameter must be, in plain words, from the parser's message
/// about `value` (the text sent). Number, boolean, date-time and enum
/// messages are rephrased; any other keeps the parser's words after "is
/// not valid".
fn query_rule(message: &str, value: Option<&str>) -> String {
    let negative = value.is_some_and(|v| v.trim_start().starts_with('-'));
    match message {
        "invalid digit found in string" if negative => "must not be negative".to_owned(),
        "invalid digit found in string" | "cannot parse integer from empty string" => {
            "must be a whole number".to_owned()
        }
        "number too large to fit in target type" | "number too small to fit in target type" => {
            "is out of range".to_owned()
        }
        "invalid float literal" => "must be a number".to_owned(),
        "provided string was not `true` or `false`" => "must be `true` or `false`".to_owned(),
        // chrono's messages: the parameter is a date-time.
        "input contains invalid characters"
        | "premature end of input"
        | "trailing input"
        | "input is out of range"
        | "no possible date and time matching input"
        | "input is not enough for unique date and time" => {
            "must be an RFC 3339 date-time such as 2026-12-01T10:00:00Z".to_owned()
        }
        _ => match message.split_once(", expected one of ") {
            Some((head, allowed)) if head.starts_with("unknown variant") => {
                format!("must be one of {allowed}")
            }
            _ => format!("is not valid ({message})"),
        },
    }
}

/// What a query parameter with a range must be, with the range, for every
/// answer about it (a value that does not parse, one too large for its
/// type, one out of range): `limit` and `bucketSeconds`.
pub fn query_range_rule(field: &str) -> Option<String> {
    match field {
        "limit" => Some(format!(
            "must be a whole number from 1 to {}",
            crate::routes::MAX_PAGE_LIMIT
        )),
        "bucketSeconds" => Some(crate::routes::mode_stats_history::BUCKET_RULE.to_owned()),
        _ => None,
    }
}

/// `422 VALIDATION_ERROR` on query parameter `field`: "the `field` query
/// parameter {rule}; got {value}", the one shape of every query answer.
pub fn query_invalid(field: &str, rule: &str, value: Option<&str>) -> ApiError {
    let detail = match value {
        Some(value) => format!("the `{field}` query parameter {rule}; got {value:?}"),
        None => format!("the `{field}` query parameter {rule}"),
    };
    ApiError::invalid(vec![matchplane_matchmaker::FieldError::new(
        field,
        Code::ValidationError,
        detail,
    )])
}

/// `422 VALIDATION_ERROR` on a query parameter the route does not take,
/// listing those it does.
fn unknown_parameter<K: AsRef<str>>(name: &str, known: &[K]) -> ApiError {
    let rule = if known.is_empty() {
        "is not known: this route takes no query parameters".to_owned()
    } else {
        let list: Vec<String> = known.iter().map(|k| format!("`{}`", k.as_ref())).collect();
        format!("is not known: this route takes {}", list.join(", "))
    };
    query_invalid(name, &rule, None)
}

/// The query parameters each documented operation takes, from the OpenAPI
/// document, keyed by method and path template (`GET
/// /v1/projects/{projectId}/matches`): the routes without a query struct
/// ([`ApiQuery`]) are checked against it by [`refuse_unknown_query`].
#[derive(Debug, Default)]
pub struct QueryNames(std::collections::HashMap<String, Vec<String>>);

impl QueryNames {
    /// The query parameters of every operation of `spec`.
    pub fn of(spec: &utoipa::openapi::OpenApi) -> Self {
        let mut names = std::collections::HashMap::new();
        let Ok(Value::Object(paths)) = serde_json::to_value(&spec.paths.paths) else {
            return Self(names);
        };
        for (path, ops) in paths {
            let Value::Object(ops) = ops else { continue };
            for (method, op) in ops {
                let query = op["parameters"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter(|p| p["in"] == "query")
                    .filter_map(|p| p["name"].as_str().map(str::to_owned))
                    .collect();
                names.insert(format!("{} {path}", method.to_ascii_uppercase()), query);
            }
        }
        Self(names)
    }
}

/// Middleware (a route layer, so the route is known): a query parameter
/// the matched operation does not document is refused with `422
/// VALIDATION_ERROR` naming it, before the handler runs, so a misspelled
/// or made-up parameter (`POST …/tickets?dryRun=true`) is never ignored
/// silently on a route that reads no query at all. Routes the document
/// does not hold (the console, `/docs`) are left alone.
pub async fn refuse_unknown_query(
    axum::extract::State(names): axum::extract::State<std::sync::Arc<QueryNames>>,
    matched: Option<axum::extract::MatchedPath>,
    req: Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    if let (Some(query), Some(matched)) = (req.uri().query(), matched) {
        let method = if req.method() == axum::http::Method::HEAD {
            "GET"
        } else {
            req.method().as_str()
        };
        if let Some(known) = names.0.get(&format!("{method} {}", matched.as_str())) {
            let unknown = form_urlencoded::parse(query.as_bytes())
                .find(|(name, _)| !known.iter().any(|k| k == name));
            if let Some((name, _)) = unknown {
                return unknown_parameter(&name, known).into_response();
            }
        }
    }
    next.run(req).await
}

/// Refuses a parameter given more than once. A parameter the route does
/// not take is refused before the handler, by [`refuse_unknown_query`]
/// (every route with a query is a documented operation).
fn refuse_repeated_query(query: &str) -> Result<(), ApiError> {
    let mut seen: Vec<std::borrow::Cow<'_, str>> = Vec::new();
    for (name, _) in form_urlencoded::parse(query.as_bytes()) {
        if seen.contains(&name) {
            return Err(query_invalid(&name, "is given more than once", None));
        }
        seen.push(name);
    }
    Ok(())
}

/// Parses a raw query string (without `?`) into `T`.
///
/// # Errors
/// `422 VALIDATION_ERROR` naming the parameter, what it must be and the
/// value sent; for a parameter given twice, naming it and saying so.
pub fn parse_query<T: DeserializeOwned>(query: &str) -> Result<T, ApiError> {
    refuse_repeated_query(query)?;
    let de = serde_urlencoded::Deserializer::new(form_urlencoded::parse(query.as_bytes()));
    serde_path_to_error::deserialize(de).map_err(|err| {
        let message = err.inner().to_string();
        let field = query_field(err.path(), &message);
        if message.starts_with("missing field") {
            return query_invalid(&field, "is required", None);
        }
        let value = form_urlencoded::parse(query.as_bytes())
            .find(|(name, _)| *name == *field)
            .map(|(_, value)| value.into_owned());
        let rule =
            query_range_rule(&field).unwrap_or_else(|| query_rule(&message, value.as_deref()));
        query_invalid(&field, &rule, value.as_deref())
    })
}

impl<S: Send + Sync, T: DeserializeOwned> axum::extract::FromRequestParts<S> for ApiQuery<T> {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        _: &S,
    ) -> Result<Self, Self::Rejection> {
        parse_query(parts.uri.query().unwrap_or_default()).map(ApiQuery)
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

    #[derive(Debug, serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    #[allow(dead_code)]
    struct Q {
        page_size: Option<u32>,
    }

    #[test]
    fn a_query_parameter_given_twice_is_refused() {
        assert!(parse_query::<Q>("pageSize=3").is_ok());
        assert!(parse_query::<Q>("pageSize=3&pageSize=4").is_err());
    }
}
