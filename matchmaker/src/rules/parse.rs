//! A ticket's declared values checked against the mode's declarations
//! (docs/rules.md, "Attributes"): the one parse of a ticket's JSON, used by
//! ticket generation and backfill rosters; the check of a simulated
//! arrival; and the cycle's re-check of every live search after a config
//! change ("Config changes").

use super::declare::{Declaration, Declarations};
use super::sent::{SentValue, SentValues};
use super::value::{
    AttributeValue, DeclaredValues, MAX_PLAYER_SET, MAX_SET_ENTRIES, MAX_TEXT_BYTES,
};
use crate::codes::Code;
use crate::validation::FieldError;
use smallvec::SmallVec;

/// Parses the declared attributes of a ticket: `sent` holds every key of
/// its `attributes` other than `mmr`, `latencies` and `data`. Returns the
/// values that parsed and every failure beside them, so that the checks
/// over several values (a rule's reach, roles) still list their own
/// failures with the rest (docs/rules.md: every failure of a ticket at
/// once); the ticket is valid only when the failures are empty.
///
/// The failures: an undeclared key (`VALIDATION_ERROR`, "unknown field"),
/// a value of the wrong type, out of `min`/`max` or not in `values`
/// (`VALIDATION_ERROR` on `attributes.<name>`, with `[i]` for a set
/// entry), a declared attribute without `default` left out
/// (`ATTRIBUTE_REQUIRED`).
///
/// Also returns each `playerSet` value that failed, as sent (its name and
/// JSON), for the checks of its entries against the ticket's owner
/// ([`super::own_players::check_own_players_sent`]).
pub fn parse_declared(
    sent: SentValues,
    declarations: Option<&Declarations>,
) -> (DeclaredValues, Vec<FieldError>, RefusedSets) {
    let empty = Declarations::new();
    let declarations = declarations.unwrap_or(&empty);
    let mut errors = Vec::new();
    // In name order, as the failures are listed (a name is sent once).
    let mut sent = sent.0;
    sent.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    let mut values = DeclaredValues::with_capacity(sent.len());
    let mut refused_sets = RefusedSets::new();
    // Listed after the sent values' failures: one pass over both sorted
    // lists.
    let mut missing = Vec::new();
    let mut names = sent.iter().map(|(k, _)| k).peekable();
    for (name, declaration) in declarations {
        while names.next_if(|k| *k < name).is_some() {}
        if names.peek() != Some(&name) && !declaration.has_default() {
            missing.push(required(name));
        }
    }
    for (name, raw) in sent {
        // The field is worded only for a failure (checked again then).
        let field = || format!("attributes.{name}");
        let Some(declaration) = declarations.get(&name) else {
            errors.push(unknown(field(), declarations));
            continue;
        };
        let refused = match raw {
            // Read typed: kept as is when it fits (no copy of its texts).
            SentValue::Typed(value) => {
                if check_typed(declaration, &value, "").is_ok() {
                    values.append(name, value);
                    continue;
                }
                SentValue::Typed(value).into_json()
            }
            SentValue::Json(json) => match value_of(declaration, &json, "") {
                Ok(value) => {
                    values.append(name, value);
                    continue;
                }
                Err(_) => json,
            },
        };
        // Worded from the JSON as sent, whichever form it was read in.
        errors.extend(
            value_of(declaration, &refused, &field())
                .err()
                .into_iter()
                .flatten(),
        );
        if matches!(declaration, Declaration::PlayerSet { .. }) {
            refused_sets.push((name, refused));
        }
    }
    errors.extend(missing);
    (values, errors, refused_sets)
}

/// The `playerSet` values of a ticket that failed their parse: each one's
/// name and JSON as sent.
pub type RefusedSets = Vec<(String, serde_json::Value)>;

fn unknown(field: String, declarations: &Declarations) -> FieldError {
    let mut known = vec!["mmr", "latencies", "data"];
    known.extend(declarations.keys().map(String::as_str));
    FieldError::new(
        field,
        Code::ValidationError,
        format!("unknown field; expected one of {}", known.join(", ")),
    )
}

fn required(name: &str) -> FieldError {
    FieldError::new(
        format!("attributes.{name}"),
        Code::AttributeRequired,
        format!("attribute {name} is declared without a default: every ticket sends it"),
    )
}

/// The re-check of a live search's values against the current
/// declarations (docs/rules.md, "Config changes"): the first failure,
/// `ATTRIBUTE_REQUIRED` for a newly required attribute the search lacks,
/// `ATTRIBUTE_NOT_ALLOWED` for a value the declarations no longer take.
/// Values of attributes no longer declared are ignored.
///
/// # Errors
/// The failure, naming `attributes.<name>`.
pub fn recheck_declared(
    values: &DeclaredValues,
    declarations: Option<&Declarations>,
) -> Result<(), FieldError> {
    let Some(declarations) = declarations else {
        return Ok(());
    };
    recheck_declared_row(values, declarations, &mut |_| {})
}

/// [`recheck_declared`], handing `row` each declaration's value in name
/// order as it is checked (what [`by_declaration`] gives): the cycle keeps
/// the values its rules read, so that a search's attributes are read once.
///
/// # Errors
/// As [`recheck_declared`].
pub fn recheck_declared_row<'a>(
    values: &'a DeclaredValues,
    declarations: impl IntoIterator<Item = (&'a String, &'a Declaration)>,
    row: &mut dyn FnMut(Option<&'a AttributeValue>),
) -> Result<(), FieldError> {
    for (name, declaration, value) in by_declaration(values, declarations) {
        row(value);
        match value {
            None if !declaration.has_default() => return Err(required(name)),
            None => {}
            // The field is worded only on a failure: this runs for every
            // live search at every cycle.
            Some(value) if typed_ok(declaration, value) => {}
            Some(value) => {
                let checked = check_typed(declaration, value, &format!("attributes.{name}"));
                if let Some(e) = checked.err().and_then(|e| e.into_iter().next()) {
                    return Err(FieldError::new(
                        e.field,
                        Code::AttributeNotAllowed,
                        format!(
                            "the game mode's declarations no longer allow attribute {name}: {}",
                            e.message
                        ),
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Each declaration in name order with the value `values` holds for it:
/// one pass over both sorted maps instead of a lookup per declaration
/// (this runs for every live search at every cycle).
pub fn by_declaration<'a>(
    values: &'a DeclaredValues,
    declarations: impl IntoIterator<Item = (&'a String, &'a Declaration)>,
) -> impl Iterator<Item = (&'a String, &'a Declaration, Option<&'a AttributeValue>)> {
    let mut own = values.iter().peekable();
    declarations.into_iter().map(move |(name, declaration)| {
        // One comparison of the names a step (a value's name is most often
        // the declaration's own).
        let value = loop {
            let Some((k, v)) = own.peek() else {
                break None;
            };
            match k.as_str().cmp(name.as_str()) {
                std::cmp::Ordering::Less => {
                    own.next();
                }
                std::cmp::Ordering::Equal => break Some(*v),
                std::cmp::Ordering::Greater => break None,
            }
        };
        (name, declaration, value)
    })
}

/// Whether [`check_typed`] takes `value` as the declarations decide it
/// (type, bounds, `values`), without wording any error: the cycle's
/// re-check after a config change. A set's own form (distinct entries,
/// player ids) is not the declarations' to change, and every live search
/// passed it when its ticket was generated.
fn typed_ok(declaration: &Declaration, value: &AttributeValue) -> bool {
    let text_ok = |text: &str, values: Option<&[String]>| {
        !text.is_empty()
            && text.len() <= MAX_TEXT_BYTES
            && values.is_none_or(|values| values.iter().any(|v| v == text))
    };
    match (declaration, value) {
        (Declaration::String { values, .. }, AttributeValue::Text(text)) => {
            text_ok(text, values.as_deref())
        }
        (Declaration::Number { min, max, .. }, AttributeValue::Number(n)) => {
            n.is_finite() && !min.is_some_and(|m| *n < m) && !max.is_some_and(|m| *n > m)
        }
        (Declaration::StringSet { values, .. }, AttributeValue::Set(items)) => {
            items.len() <= MAX_SET_ENTRIES
                && items.iter().all(|item| text_ok(item, values.as_deref()))
        }
        (Declaration::PlayerSet { .. }, AttributeValue::Set(items)) => {
            items.len() <= MAX_PLAYER_SET
        }
        _ => false,
    }
}

/// Checks one JSON value against its declaration (used for tickets and
/// for a declaration's own `default`).
///
/// # Errors
/// Every failure: `VALIDATION_ERROR` on `field`, or on `field[i]` for each
/// bad entry of a set.
pub fn value_of(
    declaration: &Declaration,
    raw: &serde_json::Value,
    field: &str,
) -> Result<AttributeValue, Vec<FieldError>> {
    let invalid =
        |f: String, message: String| vec![FieldError::new(f, Code::ValidationError, message)];
    match declaration {
        Declaration::String { values, .. } => {
            let Some(text) = raw.as_str() else {
                return Err(invalid(field.into(), "must be a string".into()));
            };
            check_text(text, values.as_deref(), field).map_err(|e| vec![e])?;
            Ok(AttributeValue::Text(text.to_owned()))
        }
        Declaration::Number { min, max, .. } => {
            // `-0.0` is 0, as a value read typed.
            let Some(n) = raw.as_f64().filter(|n| n.is_finite()).map(|n| n + 0.0) else {
                return Err(invalid(field.into(), "must be a finite number".into()));
            };
            check_number(n, *min, *max, field).map_err(|e| vec![e])?;
            Ok(AttributeValue::Number(n))
        }
        Declaration::StringSet { values, .. } => {
            let items = set_items(raw, field, MAX_SET_ENTRIES, |item, at| {
                check_text(item, values.as_deref(), at)
            })?;
            Ok(AttributeValue::Set(items))
        }
        Declaration::PlayerSet { .. } => {
            let items = set_items(raw, field, MAX_PLAYER_SET, player_id)?;
            Ok(AttributeValue::Set(items))
        }
    }
}

/// A finite number within its declaration's `min` and `max`, worded the
/// same for a ticket, a backfill and a config change's re-check.
fn check_number(n: f64, min: Option<f64>, max: Option<f64>, field: &str) -> Result<(), FieldError> {
    if min.is_some_and(|m| n < m) || max.is_some_and(|m| n > m) {
        return Err(FieldError::new(
            field,
            Code::ValidationError,
            format!(
                "{} is outside [{}, {}]",
                short(n),
                min.map_or("-inf".into(), short),
                max.map_or("inf".into(), short)
            ),
        ));
    }
    Ok(())
}

/// A number as a message shows it: in exponent form when very large or
/// small (`1e308`, not its 309 digits).
fn short(n: f64) -> String {
    if n != 0.0 && !(1e-6..1e15).contains(&n.abs()) {
        format!("{n:e}")
    } else {
        n.to_string()
    }
}

fn check_text(text: &str, values: Option<&[String]>, field: &str) -> Result<(), FieldError> {
    if text.is_empty() || text.len() > MAX_TEXT_BYTES {
        return Err(FieldError::new(
            field,
            Code::ValidationError,
            format!("must be 1 to {MAX_TEXT_BYTES} bytes"),
        ));
    }
    if let Some(values) = values {
        if !values.iter().any(|v| v == text) {
            return Err(FieldError::new(
                field,
                Code::ValidationError,
                format!("{text:?} is not one of {}", values.join(", ")),
            ));
        }
    }
    Ok(())
}

/// A `playerSet` entry: a player id.
fn player_id(item: &str, field: &str) -> Result<(), FieldError> {
    if crate::ticket::is_valid_player_id(item) {
        Ok(())
    } else {
        Err(FieldError::new(
            field,
            Code::ValidationError,
            "must be a player id: 1 to 128 printable characters",
        ))
    }
}

/// A set's entries in order, each a string (`None`: not one) checked by
/// `check` (given the entry and its field) and none listed twice: every
/// bad entry is named with its index (a repeated one at each repeat). The
/// JSON of a ticket ([`set_items`]) and values already read
/// ([`check_typed`]) alike.
fn distinct_entries<'a>(
    items: impl IntoIterator<Item = Option<&'a str>>,
    field: &str,
    check: impl Fn(&str, &str) -> Result<(), FieldError>,
) -> Result<SmallVec<[&'a str; 16]>, Vec<FieldError>> {
    let mut seen: SmallVec<[&str; 16]> = SmallVec::new();
    let mut errors = Vec::new();
    for (i, item) in items.into_iter().enumerate() {
        // The entry's field is worded only for a failure: a ticket's sets
        // are checked at every generation.
        let at = || format!("{field}[{i}]");
        let Some(text) = item else {
            errors.push(FieldError::new(
                at(),
                Code::ValidationError,
                "must be a string",
            ));
            continue;
        };
        if check(text, "").is_err() {
            errors.extend(check(text, &at()).err());
        } else if seen.contains(&text) {
            errors.push(FieldError::new(
                at(),
                Code::ValidationError,
                format!("{text:?} is listed twice"),
            ));
        } else {
            seen.push(text);
        }
    }
    if errors.is_empty() {
        Ok(seen)
    } else {
        Err(errors)
    }
}

/// The entries of a JSON array of distinct strings, at most `limit`, each
/// checked by `check` (given the entry and its field): every bad entry is
/// named with its index.
fn set_items(
    raw: &serde_json::Value,
    field: &str,
    limit: usize,
    check: impl Fn(&str, &str) -> Result<(), FieldError>,
) -> Result<Vec<String>, Vec<FieldError>> {
    let one = |message: String| vec![FieldError::new(field, Code::ValidationError, message)];
    let Some(array) = raw.as_array() else {
        return Err(one("must be an array of strings".into()));
    };
    if array.len() > limit {
        return Err(one(format!("has {} entries; at most {limit}", array.len())));
    }
    let items = distinct_entries(array.iter().map(serde_json::Value::as_str), field, check)?;
    Ok(items.into_iter().map(str::to_owned).collect())
}

/// Checks a value already parsed against its declaration, as
/// [`value_of`] checks the JSON of a ticket (the re-check of every live
/// search at every cycle, so without a round trip through JSON).
///
/// # Errors
/// Every failure: `VALIDATION_ERROR` on `field`, or on `field[i]` for each
/// bad entry of a set.
pub fn check_typed(
    declaration: &Declaration,
    value: &AttributeValue,
    field: &str,
) -> Result<(), Vec<FieldError>> {
    let wrong = |what: &str| {
        vec![FieldError::new(
            field,
            Code::ValidationError,
            format!("must be {what}"),
        )]
    };
    match (declaration, value) {
        (Declaration::String { values, .. }, AttributeValue::Text(text)) => {
            check_text(text, values.as_deref(), field).map_err(|e| vec![e])
        }
        (Declaration::Number { min, max, .. }, AttributeValue::Number(n)) => {
            if n.is_finite() {
                check_number(*n, *min, *max, field).map_err(|e| vec![e])
            } else {
                Err(wrong("a finite number"))
            }
        }
        (Declaration::StringSet { values, .. }, AttributeValue::Set(items)) => {
            if items.len() > MAX_SET_ENTRIES {
                return Err(wrong("an array of at most 32 strings"));
            }
            distinct_entries(items.iter().map(|s| Some(s.as_str())), field, |item, at| {
                check_text(item, values.as_deref(), at)
            })
            .map(drop)
        }
        (Declaration::PlayerSet { .. }, AttributeValue::Set(items)) => {
            if items.len() > MAX_PLAYER_SET {
                return Err(wrong("an array of at most 100 player ids"));
            }
            distinct_entries(items.iter().map(|s| Some(s.as_str())), field, player_id).map(drop)
        }
        // In the words a ticket's own parse uses for the same mistake.
        (Declaration::String { .. }, _) => Err(wrong("a string")),
        (Declaration::Number { .. }, _) => Err(wrong("a finite number")),
        (Declaration::StringSet { .. } | Declaration::PlayerSet { .. }, _) => {
            Err(wrong("an array of strings"))
        }
    }
}
