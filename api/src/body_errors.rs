//! Every shape error of a JSON request body at once, each named by its JSON
//! path (`attributes.MMR`, `teams[1].place`, `playerId`) and worded for the
//! API's users: no Rust type ever shows (`expected struct CreateTicket`
//! becomes `expected an object`).
//!
//! The body (already parsed into a [`Value`]) is read into its type by
//! [`value_de::Typed`], whose errors are typed [`shape::Shape`]s worded
//! here, never a library's message text. serde stops at the first error,
//! so the body is read again after each error, repaired where that error
//! was: an unknown field is removed, a wrongly typed or missing field gets
//! a stand-in value of a type that fits (the first of a few plain
//! candidates under which the next error is elsewhere). What stays
//! unrepairable ends the list. The work is bounded by [`MAX_ATTEMPTS`].
//!
//! A number with a zero fraction (`824.0`) where the type reads an integer
//! is that integer, not an error (JSON Schema's `integer` admits it:
//! docs/openapi.md, "Numbers").

use matchplane_matchmaker::{Code, FieldError};
use serde::de::DeserializeOwned;
use serde_json::{json, Value};
use serde_path_to_error::Segment;

mod shape;
mod value_de;
mod words;

pub use shape::{Got, Shape};
pub use words::looks_rusty;

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
    /// A number with a zero fraction refused (read from a buffered copy,
    /// where the deserializer could not take it as an integer itself).
    whole_float: bool,
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

/// Reads `value` as `T`, every error a typed [`Shape`] at its path.
fn read<T: DeserializeOwned>(value: &Value) -> Result<T, Issue> {
    serde_path_to_error::deserialize(value_de::Typed(value)).map_err(issue)
}

fn issue(err: serde_path_to_error::Error<Shape>) -> Issue {
    let steps = steps_of(err.path());
    let shape = err.into_inner();
    let (steps, repair) = match &shape {
        Shape::UnknownField { field, .. } => (ending_at(steps, field), Repair::Remove),
        Shape::MissingField(field) | Shape::DuplicateField(field) => {
            (ending_at(steps, field), Repair::StandIn)
        }
        _ => (steps, Repair::StandIn),
    };
    Issue {
        field: render(&steps),
        steps,
        message: shape.to_string(),
        whole_float: match &shape {
            Shape::InvalidType { got, .. } | Shape::InvalidValue { got, .. } => {
                got.is_whole_float()
            }
            _ => false,
        },
        repair,
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

/// `value` repaired at `steps` so that reading goes on past its error: the
/// first stand-in under which the next error is elsewhere, with that
/// error. Last, the member is left out: an enumeration's unknown name
/// (`"party": "median"`) takes no plain value, but a member with a default
/// reads without it. When nothing fits there, the member holding it is
/// repaired the same way, and so on up (an object whose `type` names no
/// type takes no stand-in, but the map holding it reads without it).
fn repair<T: DeserializeOwned>(
    value: &Value,
    steps: &[Step],
    attempts: &mut usize,
) -> Option<(Value, Option<Issue>)> {
    for depth in (1..=steps.len()).rev() {
        let at = &steps[..depth];
        let field = render(at);
        for stand_in in [
            Some(json!("")),
            Some(json!(0)),
            Some(json!(false)),
            Some(json!([])),
            Some(json!({})),
            Some(Value::Null),
            None,
        ] {
            if *attempts >= MAX_ATTEMPTS {
                return None;
            }
            let mut tried = value.clone();
            let repaired = match stand_in {
                Some(stand_in) => put(&mut tried, at, stand_in),
                None => remove(&mut tried, at),
            };
            if !repaired {
                continue;
            }
            *attempts += 1;
            let outcome = read::<T>(&tried).err();
            // The stand-in fits when the next error is elsewhere: neither
            // inside the field nor at a field holding it (serde names a
            // value it read from a buffered copy, as of an untagged enum,
            // by the field holding it).
            if outcome.as_ref().is_none_or(|later| {
                !is_within(&later.field, &field)
                    && (later.field == "$" || !is_within(&field, &later.field))
            }) {
                return Some((tried, outcome));
            }
        }
    }
    None
}

/// Deserializes `value` as `T`, or lists every shape error serde lets us
/// find (see the module docs), in the order found.
///
/// # Errors
/// The field errors, never empty, all `VALIDATION_ERROR`.
pub fn deserialize_all<T: DeserializeOwned>(mut value: Value) -> Result<T, Vec<FieldError>> {
    let mut attempts = 0;
    let mut next = match read::<T>(&value) {
        Ok(parsed) => return Ok(parsed),
        Err(found) => found,
    };
    let mut found: Vec<FieldError> = Vec::new();
    loop {
        if let Some(whole) = next
            .whole_float
            .then(|| whole_number_at(&value, &next.steps))
            .flatten()
        {
            let mut tried = value.clone();
            if attempts < MAX_ATTEMPTS && put(&mut tried, &next.steps, whole) {
                attempts += 1;
                match read::<T>(&tried) {
                    Ok(parsed) if found.is_empty() => return Ok(parsed),
                    Ok(_) => break,
                    Err(later) => {
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
                read::<T>(&value).err()
            }
            Repair::StandIn => match repair::<T>(&value, &next.steps, &mut attempts) {
                Some((repaired, outcome)) => {
                    value = repaired;
                    outcome
                }
                None => break,
            },
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
