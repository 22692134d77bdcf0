//! A request body's text read as one JSON object, every refusal worded
//! from what the reading found (docs/errors.md): where the text broke, a
//! key given twice, nesting past [`MAX_JSON_DEPTH`], trailing text.

use super::{has_escaped_nul, kind, nul_in_body, MAX_JSON_DEPTH};
use crate::problem::ApiError;
use matchplane_matchmaker::strict_json::{read_strict, StrictError, GIVEN_TWICE};
use matchplane_matchmaker::{Code, FieldError};
use serde_json::error::Category;
use serde_json::Value;

/// Parses `bytes` as one JSON object, naming line and column when the text
/// is not JSON. A leading UTF-8 byte order mark (some Windows tools write
/// one) is skipped.
///
/// # Errors
/// `400 VALIDATION_ERROR`: malformed JSON, nesting deeper than
/// [`MAX_JSON_DEPTH`], trailing text, a key given twice (named by its
/// path), a NUL in a string (`422`), or a body that is not an object
/// (field `$`).
pub fn parse_object(bytes: &[u8]) -> Result<Value, ApiError> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    if has_escaped_nul(bytes) {
        return Err(nul_in_body(bytes));
    }
    if let Some((line, column)) = too_deep(bytes) {
        return Err(ApiError::bad_request(
            "$",
            format!(
                "the JSON is nested too deeply at line {line} column {column}: arrays and \
                 objects may be nested at most {MAX_JSON_DEPTH} deep, counting the body itself"
            ),
        ));
    }
    let value = read_strict(bytes).map_err(|err| {
        let err = match err {
            StrictError::Duplicate { field } => {
                return ApiError::bad_body(vec![FieldError::new(
                    field,
                    Code::ValidationError,
                    GIVEN_TWICE,
                )]);
            }
            StrictError::Trailing(err) => {
                return ApiError::bad_request(
                    "$",
                    format!(
                        "trailing characters after the JSON value at line {} column {}",
                        err.line(),
                        err.column()
                    ),
                );
            }
            StrictError::Json(err) => err,
        };
        let why = match err.classify() {
            Category::Eof => ": the text ends before the JSON value does",
            Category::Io | Category::Syntax | Category::Data => {
                broken_at(bytes, err.line(), err.column())
            }
        };
        ApiError::bad_request(
            "$",
            format!(
                "malformed JSON at line {} column {}{why}",
                err.line(),
                err.column()
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

/// Why the text broke at `line`, `column` (1-based, as the parser counts
/// them), read from the text itself: bytes that are not UTF-8 there, or a
/// number there too large for a 64-bit float (`1e400`). Empty otherwise.
fn broken_at(bytes: &[u8], line: usize, column: usize) -> &'static str {
    let start = bytes
        .split(|b| *b == b'\n')
        .take(line.saturating_sub(1))
        .map(|l| l.len() + 1)
        .sum::<usize>();
    let at = (start + column).saturating_sub(1).min(bytes.len());
    let near = &bytes[at.saturating_sub(4)..(at + 4).min(bytes.len())];
    if std::str::from_utf8(near).is_err() || std::str::from_utf8(bytes).is_err() {
        return ": the body is not UTF-8 text there (send JSON as UTF-8)";
    }
    // The number the parser was reading, around where it stopped.
    let in_number = |b: &u8| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-');
    let from = at
        - bytes[..at]
            .iter()
            .rev()
            .take_while(|b| in_number(b))
            .count();
    let to = at + bytes[at..].iter().take_while(|b| in_number(b)).count();
    let number = to - from;
    let finite = std::str::from_utf8(&bytes[from..to])
        .ok()
        .and_then(|n| n.parse::<f64>().ok())
        .is_some_and(f64::is_finite);
    if number > 0 && !finite {
        return ": a number there is out of range (a JSON number must fit a 64-bit float)";
    }
    ""
}

/// The line and column (1-based, in bytes) of the first `[` or `{` that
/// nests deeper than [`MAX_JSON_DEPTH`], outside strings; `None` when
/// nothing does (or the text breaks first, which the parser then names).
fn too_deep(bytes: &[u8]) -> Option<(usize, usize)> {
    let (mut depth, mut line, mut line_start) = (0usize, 1usize, 0usize);
    let (mut in_string, mut escaped) = (false, false);
    for (at, &b) in bytes.iter().enumerate() {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'\n' => {
                line += 1;
                line_start = at + 1;
            }
            b'[' | b'{' => {
                depth += 1;
                if depth > MAX_JSON_DEPTH {
                    return Some((line, at - line_start + 1));
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn detail(body: &str) -> String {
        let Err(err) = parse_object(body.as_bytes()) else {
            panic!("{body} was accepted");
        };
        format!("{err:?}")
    }

    #[test]
    fn names_where_the_text_broke_and_why() {
        let text = detail("{\"a\": 1,\n \"b\" 2}");
        assert!(text.contains("malformed JSON at line 2 column 6"), "{text}");
        let text = detail("{\"a\": [1, 2");
        assert!(text.contains("ends before the JSON value does"), "{text}");
        let text = detail("{\"a\": 1} x");
        assert!(text.contains("trailing characters"), "{text}");
        let text = detail("{\"mmr\": 1e400}");
        assert!(text.contains("a number there is out of range"), "{text}");
        let Err(err) = parse_object(b"{\"playerId\": \"a\xff\xfeb\"}") else {
            panic!("invalid UTF-8 was accepted");
        };
        let text = format!("{err:?}");
        assert!(text.contains("not UTF-8 text"), "{text}");
    }

    #[test]
    fn names_a_key_given_twice_by_its_path() {
        let text = detail(r#"{"attributes": {"mmr": 1, "mmr": 2}}"#);
        assert!(text.contains("attributes.mmr"), "{text}");
        assert!(text.contains("given twice"), "{text}");
    }

    #[test]
    fn brackets_inside_strings_do_not_nest() {
        let deep = "[".repeat(MAX_JSON_DEPTH + 5);
        let body = format!("{{\"a\": \"{deep}\", \"b\": \"\\\"{deep}\"}}");
        assert!(parse_object(body.as_bytes()).is_ok());
        assert_eq!(too_deep(b"{\n  \"a\": [[1]]}"), None);
    }
}
