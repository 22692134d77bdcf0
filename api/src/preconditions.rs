//! Conditional writes of versioned configs: `If-Match` and `If-None-Match`
//! against a resource's version, whose entity tag is the version in quotes
//! (`ETag: "3"`).
//!
//! - `If-Match: "3"` (or a list, or `*`): the write applies only while the
//!   resource is at one of those versions (`*`: exists at all).
//! - `If-None-Match: *`: the write only creates; it applies only while the
//!   resource does not exist (a list of tags: while it is at none of them).
//! - A `version` in the body is an `If-Match` of that one version.
//!
//! Otherwise: `412 VERSION_MISMATCH`, naming the current version. Tags are
//! compared strongly: a weak tag (`W/"3"`) never matches.

use crate::problem::ApiError;
use axum::extract::FromRequestParts;
use axum::http::header::{IF_MATCH, IF_NONE_MATCH};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;
use std::convert::Infallible;

/// The `ETag` of version `version`: `"<version>"`.
pub fn etag(version: i64) -> HeaderValue {
    // Digits and quotes only: always a valid header value.
    HeaderValue::from_str(&format!("\"{version}\""))
        .unwrap_or_else(|_| HeaderValue::from_static("\"0\""))
}

/// One side of a condition: any version, or these tags.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Tags {
    Any,
    /// Strong tags' contents (weak ones dropped: they never match), and
    /// whether an entry was not a tag at all (`3` for `"3"`).
    List(Vec<String>, bool),
}

impl Tags {
    fn from_headers(headers: &HeaderMap, name: &HeaderName) -> Option<Tags> {
        let mut list = Vec::new();
        let mut seen = false;
        let mut unquoted = false;
        for value in headers.get_all(name) {
            seen = true;
            let Ok(value) = value.to_str() else { continue };
            for tag in value.split(',').map(str::trim) {
                if tag == "*" {
                    return Some(Tags::Any);
                }
                if let Some(inner) = tag.strip_prefix('"').and_then(|t| t.strip_suffix('"')) {
                    list.push(inner.to_owned());
                } else if !tag.is_empty() && !tag.starts_with("W/") {
                    unquoted = true;
                }
            }
        }
        seen.then_some(Tags::List(list, unquoted))
    }

    fn matches(&self, version: Option<i64>) -> bool {
        match (self, version) {
            (_, None) => false,
            (Tags::Any, Some(_)) => true,
            (Tags::List(tags, _), Some(v)) => tags.iter().any(|t| t == &v.to_string()),
        }
    }
}

/// A request's `If-Match` / `If-None-Match`, for [`Preconditions::check`].
#[derive(Debug, Clone, Default)]
pub struct Preconditions {
    if_match: Option<Tags>,
    if_none_match: Option<Tags>,
}

impl<S: Send + Sync> FromRequestParts<S> for Preconditions {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Infallible> {
        Ok(Self {
            if_match: Tags::from_headers(&parts.headers, &IF_MATCH),
            if_none_match: Tags::from_headers(&parts.headers, &IF_NONE_MATCH),
        })
    }
}

impl Preconditions {
    /// Whether the request asked for anything.
    pub fn any(&self) -> bool {
        self.if_match.is_some() || self.if_none_match.is_some()
    }

    /// Checks the conditions against the `current` version (`None`: the
    /// resource does not exist) and the body's `version` member, if any.
    ///
    /// # Errors
    /// `412 VERSION_MISMATCH` when a condition fails.
    pub fn check(&self, current: Option<i64>, body: &Value) -> Result<(), ApiError> {
        let now = match current {
            Some(v) => format!("it is at version {v}"),
            None => "it does not exist".to_owned(),
        };
        // What to do: read again, or (a deleted one restored from a saved
        // read) create it anew without a condition.
        let advice = match current {
            Some(_) => "read it again and reapply your change",
            None => "to create it, send the body without `version` and without If-Match",
        };
        if let Some(tags) = &self.if_match {
            if !tags.matches(current) {
                // `If-Match: 3` names no version: tags are quoted.
                let quoting = match tags {
                    Tags::List(_, true) => {
                        " (an entity tag is the version in double quotes, as ETag gives it: If-Match: \"3\")"
                    }
                    _ => "",
                };
                return Err(ApiError::version_mismatch(format!(
                    "If-Match does not name the current version{quoting}: {now}; {advice}"
                )));
            }
        }
        if let Some(tags) = &self.if_none_match {
            if tags.matches(current) {
                return Err(ApiError::version_mismatch(format!(
                    "If-None-Match: the write only creates, but {now}"
                )));
            }
        }
        let sent = match body.get("version") {
            None | Some(Value::Null) => return Ok(()),
            Some(sent) => whole_version(sent)?,
        };
        if current == Some(sent) {
            return Ok(());
        }
        Err(ApiError::version_mismatch(format!(
            "the body is of version {sent}, but {now}; {advice}"
        )))
    }
}

/// A body's `version` as a whole number: an integer, or a number with a
/// zero fraction (`21.0` is `21`, as every integer of a body,
/// docs/openapi.md "Numbers").
///
/// # Errors
/// `400 VALIDATION_ERROR` on `version` for anything else (a string, a
/// fraction, a boolean).
fn whole_version(sent: &Value) -> Result<i64, ApiError> {
    /// Beyond this a double no longer holds every whole number.
    const EXACT: f64 = 9_007_199_254_740_992.0;
    sent.as_i64()
        .or_else(|| {
            sent.as_f64()
                .filter(|f| f.fract() == 0.0 && f.abs() <= EXACT)
                .map(|f| f as i64)
        })
        .ok_or_else(|| {
            ApiError::bad_body(vec![matchplane_matchmaker::FieldError::new(
                "version",
                matchplane_matchmaker::Code::ValidationError,
                format!("version must be a whole number (the version a GET of the mode answered), not {sent}"),
            )])
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn with(name: HeaderName, value: &str) -> Preconditions {
        let mut headers = HeaderMap::new();
        headers.insert(name.clone(), HeaderValue::from_str(value).unwrap());
        Preconditions {
            if_match: Tags::from_headers(&headers, &IF_MATCH),
            if_none_match: Tags::from_headers(&headers, &IF_NONE_MATCH),
        }
    }

    #[test]
    fn if_match_takes_the_current_version_any_or_a_list() {
        let none = json!({});
        assert!(with(IF_MATCH, "\"3\"").check(Some(3), &none).is_ok());
        assert!(with(IF_MATCH, "\"2\", \"3\"").check(Some(3), &none).is_ok());
        assert!(with(IF_MATCH, "*").check(Some(3), &none).is_ok());
        for stale in ["\"2\"", "W/\"3\"", "3", "garbage"] {
            let err = with(IF_MATCH, stale).check(Some(3), &none).unwrap_err();
            assert_eq!(err.code(), "VERSION_MISMATCH", "{stale}");
        }
        assert!(with(IF_MATCH, "*").check(None, &none).is_err());
    }

    #[test]
    fn a_body_version_is_a_whole_number() {
        let none = Preconditions {
            if_match: None,
            if_none_match: None,
        };
        assert!(none.check(Some(21), &json!({"version": 21})).is_ok());
        assert!(none.check(Some(21), &json!({"version": 21.0})).is_ok());
        assert!(none.check(Some(21), &json!({"version": null})).is_ok());
        let stale = none.check(Some(21), &json!({"version": 20.0})).unwrap_err();
        assert_eq!(stale.code(), "VERSION_MISMATCH");
        for bad in [json!("21"), json!(21.5), json!(true), json!({"v": 21})] {
            let err = none
                .check(Some(21), &json!({ "version": bad }))
                .unwrap_err();
            assert_eq!(err.code(), "VALIDATION_ERROR", "{bad}");
        }
    }

    #[test]
    fn if_none_match_any_only_creates() {
        let none = json!({});
        assert!(with(IF_NONE_MATCH, "*").check(None, &none).is_ok());
        assert!(with(IF_NONE_MATCH, "*").check(Some(1), &none).is_err());
    }

    #[test]
    fn a_body_version_is_an_if_match() {
        let p = Preconditions::default();
        assert!(p.check(Some(3), &json!({"version": 3})).is_ok());
        assert!(p.check(Some(3), &json!({"version": null})).is_ok());
        assert!(p.check(Some(3), &json!({"version": 2})).is_err());
        assert!(p.check(Some(3), &json!({"version": "3"})).is_err());
        assert!(p.check(None, &json!({"version": 1})).is_err());
    }

    /// A saved read sent back for a mode deleted since is told how to
    /// create it anew: reading it again finds nothing.
    #[test]
    fn a_missing_resources_mismatch_says_how_to_create_it() {
        for err in [
            Preconditions::default()
                .check(None, &json!({"version": 3}))
                .unwrap_err(),
            with(IF_MATCH, "\"3\"").check(None, &json!({})).unwrap_err(),
        ] {
            let detail = err.problem().detail;
            assert!(
                detail.contains("does not exist") && detail.contains("without `version`"),
                "{detail}"
            );
            assert!(!detail.contains("read it again"), "{detail}");
        }
        let stale = Preconditions::default()
            .check(Some(4), &json!({"version": 3}))
            .unwrap_err();
        assert!(stale.problem().detail.contains("read it again"));
    }

    /// `If-Match: 3` is no tag: the mismatch says tags are quoted; a
    /// quoted stale tag's does not.
    #[test]
    fn an_unquoted_if_match_is_told_tags_are_quoted() {
        let err = with(IF_MATCH, "3").check(Some(3), &json!({})).unwrap_err();
        assert!(err.problem().detail.contains("double quotes"), "{err:?}");
        let err = with(IF_MATCH, "\"2\"")
            .check(Some(3), &json!({}))
            .unwrap_err();
        assert!(!err.problem().detail.contains("double quotes"), "{err:?}");
    }

    #[test]
    fn the_etag_is_the_version_in_quotes() {
        assert_eq!(etag(3), "\"3\"");
    }
}
