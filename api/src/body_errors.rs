//! Every shape error of a JSON request body at once, each named by its JSON
//! path (`attributes.MMR`, `teams[1].place`, `playerId`) and worded for the
//! API's users: no Rust type ever shows (`expected struct CreateTicket`
//! becomes `expected an object`).
//!
//! serde stops at the first error, so the body (already parsed into a
//! [`Value`]) is deserialized again after each error, repaired where that
//! error was: an unknown field is removed, a wrongly typed or missing field
//! gets a stand-in value of a type that fits (the first of a few plain
//! candidates under which the next error is elsewhere). What stays
//! unrepairable ends the list. The work is bounded by [`MAX_ATTEMPTS`].
//!
//! A number with a zero fraction (`824.0`) where the type reads an integer
//! is that integer, not an error (JSON Schema's `integer` admits it:
//! docs/openapi.md, "Numbers"): it is rewritten in place and the body read
//! again, on every body, since every body that its type refuses comes here.

use matchplane_matchmaker::{Code, FieldError};
use serde::de::DeserializeOwned;
use serde_json::{json, Value};
use serde_path_to_error::Segment;

/// Most deserializations spent on one refused body.
pub const MAX_ATTEMPTS: usize = 64;

/// One step of a JSON path.
#[derive(Debug, Clone, PartialEq)]
enum Step {
    Key(String),
    Index(usize),
}

/// A shape error: where, what, and the path as steps (for the repair).
struct Issue {
    steps: Vec<Step>,
    field: String,
    message: String,
    repair: Repair,
}

enum Repair {
    /// Remove the key at `steps` (an unknown field).
    Remove,
    /// Put a stand-in value at `steps` (a missing or wrongly typed field).
    StandIn,
}

fn render(steps: &[Step]) -> String {
    let mut out = String::new();
    for step in steps {
        match step {
            Step::Key(key) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(key);
            }
            Step::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    if out.is_empty() {
        "$".into()
    } else {
        out
    }
}

/// The text between the first pair of backticks after `prefix`.
fn quoted_after<'a>(message: &'a str, prefix: &str) -> Option<&'a str> {
    let rest = message.strip_prefix(prefix)?.strip_prefix('`')?;
    rest.split('`').next()
}

/// What serde expected, in the API's words.
fn expected(raw: &str) -> String {
    let raw = raw.trim();
    let words = match raw {
        "u8" => "a whole number from 0 to 255",
        "u16" => "a whole number from 0 to 65535",
        "u32" => "a whole number from 0 to 4294967295",
        "u64" | "u128" | "usize" => "a whole number of at least 0",
        "i8" | "i16" | "i32" | "i64" | "i128" | "isize" => "a whole number",
        "f32" | "f64" => "a number",
        "a string" | "a borrowed string" | "a character" | "char" | "string" => "a string",
        "a boolean" | "bool" => "true or false",
        "a sequence" => "an array",
        "a map" => "an object",
        other
            if other.starts_with("struct")
                || other.starts_with("internally tagged enum")
                || other.starts_with("adjacently tagged enum")
                || other.starts_with("map") =>
        {
            "an object"
        }
        other if other.starts_with("tuple") || other.starts_with("a tuple") => "an array",
        other if other.starts_with("enum") || other.contains("variant") => {
            "one of the allowed values"
        }
        other if looks_rusty(other) => "a value of another type",
        other => return other.to_owned(),
    };
    words.to_owned()
}

/// What serde got, in the API's words.
fn unexpected(raw: &str) -> String {
    let raw = raw.trim();
    match raw {
        "sequence" => "an array".into(),
        "map" => "an object".into(),
        "unit value" | "unit" | "Option value" => "null".into(),
        other => {
            if let Some(rest) = other.strip_prefix("floating point ") {
                format!("the number {}", rest.trim_matches('`'))
            } else if let Some(rest) = other.strip_prefix("integer ") {
                format!("the number {}", rest.trim_matches('`'))
            } else if let Some(rest) = other.strip_prefix("boolean ") {
                rest.trim_matches('`').to_owned()
            } else if let Some(rest) = other.strip_prefix("string ") {
                format!("the string {rest}")
            } else if looks_rusty(other) {
                "a value of another type".into()
            } else {
                other.to_owned()
            }
        }
    }
}

/// Whether `text` names a Rust type (`struct X`, `a::B`, `Vec<…>`, `u32`…).
pub fn looks_rusty(text: &str) -> bool {
    const PRIMITIVES: [&str; 14] = [
        "u8", "u16", "u32", "u64", "u128", "usize", "i8", "i16", "i32", "i64", "i128", "isize",
        "f32", "f64",
    ];
    text.contains("::")
        || text.contains("struct ")
        || text.contains("enum ")
        || text.contains("Vec<")
        || text.contains("Option<")
        || text
            .split(|c: char| !c.is_ascii_alphanumeric())
            .any(|word| PRIMITIVES.contains(&word))
}

/// `message` (serde's) worded for users, or `None` to keep serde's own.
fn plain(message: &str) -> String {
    // serde_json appends " at line L column C" to data errors of a text; a
    // Value has no lines, but strip it in case.
    let message = message
        .rsplit_once(" at line ")
        .map_or(message, |(head, _)| head);
    for (prefix, verb) in [("invalid type: ", "got"), ("invalid value: ", "got")] {
        if let Some(rest) = message.strip_prefix(prefix) {
            if let Some((got, want)) = rest.rsplit_once(", expected ") {
                return format!("expected {}, {verb} {}", expected(want), unexpected(got));
            }
        }
    }
    if let Some(rest) = message.strip_prefix("invalid length ") {
        if let Some((len, want)) = rest.split_once(", expected ") {
            return format!("expected {}, got {len} items", expected(want));
        }
    }
    if looks_rusty(message) {
        "this value is not valid here".into()
    } else {
        message.to_owned()
    }
}

fn steps_of(path: &serde_path_to_error::Path) -> Vec<Step> {
    let mut steps = Vec::new();
    for segment in path.iter() {
        match segment {
            Segment::Seq { index } => steps.push(Step::Index(*index)),
            Segment::Map { key } => steps.push(Step::Key(key.clone())),
            Segment::Enum { variant } => steps.push(Step::Key(variant.clone())),
            // Past an unknown segment the path means nothing: stop there.
            Segment::Unknown => break,
        }
    }
    steps
}

/// `steps` ending at field `name` (serde_path_to_error already ends an
/// unknown field's path with it; a missing field's path ends at its parent).
fn ending_at(mut steps: Vec<Step>, name: &str) -> Vec<Step> {
    if steps.last() != Some(&Step::Key(name.to_owned())) {
        steps.push(Step::Key(name.to_owned()));
    }
    steps
}

fn issue(err: serde_path_to_error::Error<serde_json::Error>) -> Issue {
    let steps = steps_of(err.path());
    let message = err.into_inner().to_string();
    if let Some(name) = quoted_after(&message, "unknown field ") {
        let steps = ending_at(steps, name);
        let known = message
            .split_once(", ")
            .map(|(_, rest)| rest.to_owned())
            .unwrap_or_default();
        let message = if known.is_empty() {
            "unknown field".to_owned()
        } else {
            format!("unknown field; {known}")
        };
        return Issue {
            field: render(&steps),
            steps,
            message,
            repair: Repair::Remove,
        };
    }
    if let Some(name) = quoted_after(&message, "missing field ") {
        let steps = ending_at(steps, name);
        return Issue {
            field: render(&steps),
            steps,
            message: "this field is required".into(),
            repair: Repair::StandIn,
        };
    }
    if let Some(name) = quoted_after(&message, "duplicate field ") {
        let steps = ending_at(steps, name);
        return Issue {
            field: render(&steps),
            steps,
            message: "this field is given twice".into(),
            repair: Repair::StandIn,
        };
    }
    Issue {
        field: render(&steps),
        steps,
        message: plain(&message),
        repair: Repair::StandIn,
    }
}

/// The integer a number with a zero fraction at `steps` stands for
/// (`824.0` is `824`), if that is what is there and it is exact.
fn whole_number_at(value: &Value, steps: &[Step]) -> Option<Value> {
    let mut at = value;
    for step in steps {
        at = match step {
            Step::Key(key) => at.get(key.as_str())?,
            Step::Index(i) => at.get(*i)?,
        };
    }
    let number = at.as_number().filter(|n| n.is_f64())?.as_f64()?;
    // Integers a double holds exactly: ±2^53.
    let exact = number.fract() == 0.0 && number.abs() <= 9_007_199_254_740_992.0;
    exact.then(|| {
        if number < 0.0 {
            json!(number as i64)
        } else {
            json!(number as u64)
        }
    })
}

/// The value at `steps`' parent, and the last step.
fn parent_mut<'a>(value: &'a mut Value, steps: &[Step]) -> Option<(&'a mut Value, Step)> {
    let (last, parents) = steps.split_last()?;
    let mut at = value;
    for step in parents {
        at = match step {
            Step::Key(key) => at.get_mut(key.as_str())?,
            Step::Index(i) => at.get_mut(*i)?,
        };
    }
    Some((at, last.clone()))
}

fn remove(value: &mut Value, steps: &[Step]) -> bool {
    match parent_mut(value, steps) {
        Some((Value::Object(map), Step::Key(key))) => map.remove(&key).is_some(),
        _ => false,
    }
}

fn put(value: &mut Value, steps: &[Step], stand_in: Value) -> bool {
    match parent_mut(value, steps) {
        Some((Value::Object(map), Step::Key(key))) => {
            map.insert(key, stand_in);
            true
        }
        Some((Value::Array(items), Step::Index(i))) if i < items.len() => {
            items[i] = stand_in;
            true
        }
        _ => false,
    }
}

fn is_within(field: &str, of: &str) -> bool {
    field == of
        || of == "$"
        || field
            .strip_prefix(of)
            .is_some_and(|rest| rest.starts_with('.') || rest.starts_with('['))
}

/// The field error of one failed read, by JSON path and in plain words.
pub fn field_error(err: serde_path_to_error::Error<serde_json::Error>) -> FieldError {
    let found = issue(err);
    FieldError::new(found.field, Code::ValidationError, found.message)
}

/// serde reports a wrong `type` of an internally tagged object (a game
/// mode's `algorithm`) at the object; name the `type` member itself.
fn tag_of_tagged_enum(value: &Value, issue: &mut Issue) {
    if !issue.message.starts_with("unknown variant") {
        return;
    }
    let mut at = Some(value);
    for step in &issue.steps {
        at = at.and_then(|v| match step {
            Step::Key(key) => v.get(key.as_str()),
            Step::Index(i) => v.get(*i),
        });
    }
    if at.is_some_and(|v| v.get("type").is_some()) {
        issue.steps.push(Step::Key("type".into()));
        issue.field = render(&issue.steps);
    }
}

/// Deserializes `value` as `T`, or lists every shape error serde lets us
/// find (see the module docs), in the order found.
///
/// # Errors
/// The field errors, never empty, all `VALIDATION_ERROR`.
pub fn deserialize_all<T: DeserializeOwned>(mut value: Value) -> Result<T, Vec<FieldError>> {
    let mut attempts = 0;
    let mut next = match serde_path_to_error::deserialize::<_, T>(&value) {
        Ok(parsed) => return Ok(parsed),
        Err(err) => issue(err),
    };
    let mut found: Vec<FieldError> = Vec::new();
    loop {
        tag_of_tagged_enum(&value, &mut next);
        if let Some(whole) = whole_number_at(&value, &next.steps) {
            let mut tried = value.clone();
            if attempts < MAX_ATTEMPTS && put(&mut tried, &next.steps, whole) {
                attempts += 1;
                match serde_path_to_error::deserialize::<_, T>(&tried) {
                    Ok(parsed) if found.is_empty() => return Ok(parsed),
                    Ok(_) => break,
                    Err(err) => {
                        let later = issue(err);
                        if later.field != next.field {
                            value = tried;
                            next = later;
                            continue;
                        }
                    }
                }
            }
        }
        if found.iter().any(|f| f.field == next.field) {
            break;
        }
        found.push(FieldError::new(
            next.field.clone(),
            Code::ValidationError,
            next.message.clone(),
        ));
        let following = match next.repair {
            Repair::Remove => {
                if !remove(&mut value, &next.steps) {
                    break;
                }
                attempts += 1;
                serde_path_to_error::deserialize::<_, T>(&value)
                    .err()
                    .map(issue)
            }
            Repair::StandIn => {
                let mut chosen = None;
                for stand_in in [
                    json!(""),
                    json!(0),
                    json!(false),
                    json!([]),
                    json!({}),
                    Value::Null,
                ] {
                    if attempts >= MAX_ATTEMPTS {
                        break;
                    }
                    let mut tried = value.clone();
                    if !put(&mut tried, &next.steps, stand_in) {
                        break;
                    }
                    attempts += 1;
                    let outcome = serde_path_to_error::deserialize::<_, T>(&tried)
                        .err()
                        .map(issue);
                    if outcome
                        .as_ref()
                        .is_none_or(|later| !is_within(&later.field, &next.field))
                    {
                        chosen = Some((tried, outcome));
                        break;
                    }
                }
                match chosen {
                    Some((repaired, outcome)) => {
                        value = repaired;
                        outcome
                    }
                    None => break,
                }
            }
        };
        match following {
            Some(later) if attempts < MAX_ATTEMPTS => next = later,
            _ => break,
        }
    }
    Err(found)
}

#[cfg(test)]
mod tests;
