//! A ticket's values for the declared attributes (docs/rules.md,
//! "Attributes"): their one parse, used by ticket generation, the
//! simulator's arrivals and the cycle's re-check after a config change.

use super::declare::{Declaration, Declarations};
use crate::codes::Code;
use crate::validation::FieldError;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Most attributes a mode may declare (and rules it may have).
pub const MAX_DECLARATIONS: usize = 16;
/// Longest `string` value or set entry (bytes).
pub const MAX_TEXT_BYTES: usize = 64;
/// Most entries of a `stringSet` value.
pub const MAX_SET_ENTRIES: usize = 32;
/// Most player ids of a `playerSet` value.
pub const MAX_PLAYER_SET: usize = 100;

/// One declared attribute's value on a ticket: a number, a text, or a
/// list of texts (`stringSet` values, `playerSet` player ids). Serialised
/// as the plain JSON value the ticket sent.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(untagged)]
pub enum AttributeValue {
    /// A `number`.
    Number(f64),
    /// A `string`.
    Text(String),
    /// A `stringSet` or `playerSet`.
    Set(Vec<String>),
}

impl<'de> Deserialize<'de> for AttributeValue {
    /// By the JSON value's own type, in one pass: a set's entry that is
    /// not a string is refused at its index (`blocked[0]`), where trying
    /// each variant in turn could only say the whole value did not fit;
    /// and the worker, which reads every waiting search's values at each
    /// cycle, does not buffer each value first.
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Value;
        impl<'de> serde::de::Visitor<'de> for Value {
            type Value = AttributeValue;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a number, a string or a list of strings")
            }
            fn visit_f64<E>(self, v: f64) -> Result<AttributeValue, E> {
                Ok(AttributeValue::Number(v))
            }
            #[allow(clippy::cast_precision_loss)] // JSON numbers are doubles.
            fn visit_i64<E>(self, v: i64) -> Result<AttributeValue, E> {
                Ok(AttributeValue::Number(v as f64))
            }
            #[allow(clippy::cast_precision_loss)] // JSON numbers are doubles.
            fn visit_u64<E>(self, v: u64) -> Result<AttributeValue, E> {
                Ok(AttributeValue::Number(v as f64))
            }
            fn visit_str<E>(self, v: &str) -> Result<AttributeValue, E> {
                Ok(AttributeValue::Text(v.to_owned()))
            }
            fn visit_string<E>(self, v: String) -> Result<AttributeValue, E> {
                Ok(AttributeValue::Text(v))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<AttributeValue, A::Error> {
                let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(16));
                while let Some(item) = seq.next_element::<String>()? {
                    items.push(item);
                }
                Ok(AttributeValue::Set(items))
            }
        }
        d.deserialize_any(Value)
    }
}

/// The declared attributes of one ticket, by name (only those it sent;
/// [`effective`] adds a declaration's `default`).
///
/// Kept as one sorted array (a ticket holds at most 16): the cycle reads
/// every waiting search's values each time, and one small array costs it
/// a cache miss or two where a tree's node cost several
/// (docs/performance.md). It reads and writes as a JSON object, as a map
/// of the standard library does (never as a list of pairs, even empty).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DeclaredValues(litemap::LiteMap<String, AttributeValue>);

impl DeclaredValues {
    /// No values.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether there is no value (also serde's `skip_serializing_if`).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl std::ops::Deref for DeclaredValues {
    type Target = litemap::LiteMap<String, AttributeValue>;
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl std::ops::DerefMut for DeclaredValues {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}

impl FromIterator<(String, AttributeValue)> for DeclaredValues {
    fn from_iter<I: IntoIterator<Item = (String, AttributeValue)>>(iter: I) -> Self {
        Self(iter.into_iter().collect())
    }
}

impl Serialize for DeclaredValues {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.0.iter())
    }
}

impl<'de> Deserialize<'de> for DeclaredValues {
    /// Straight into the array (the worker reads every search of a pool
    /// at each cycle); a key given twice keeps its last value, as a map of
    /// the standard library does. Anything but an object is refused.
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Values;
        impl<'de> serde::de::Visitor<'de> for Values {
            type Value = DeclaredValues;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object of attribute values")
            }
            fn visit_map<M: serde::de::MapAccess<'de>>(
                self,
                mut access: M,
            ) -> Result<Self::Value, M::Error> {
                let mut values = DeclaredValues::new();
                while let Some((name, value)) = access.next_entry::<String, AttributeValue>()? {
                    values.insert(name, value);
                }
                Ok(values)
            }
        }
        d.deserialize_map(Values)
    }
}

/// Parses the declared attributes of a ticket: `extra` holds every key of
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
pub fn parse_declared(
    extra: BTreeMap<String, serde_json::Value>,
    declarations: Option<&Declarations>,
) -> (DeclaredValues, Vec<FieldError>) {
    let empty = Declarations::new();
    let declarations = declarations.unwrap_or(&empty);
    let mut errors = Vec::new();
    let mut values = DeclaredValues::new();
    let sent: Vec<String> = extra.keys().cloned().collect();
    for (name, raw) in extra {
        let field = format!("attributes.{name}");
        let Some(declaration) = declarations.get(&name) else {
            errors.push(unknown(field, declarations));
            continue;
        };
        match value_of(declaration, &raw, &field) {
            Ok(value) => {
                values.insert(name, value);
            }
            Err(e) => errors.push(e),
        }
    }
    for (name, declaration) in declarations {
        if !sent.contains(name) && !declaration.has_default() {
            errors.push(required(name));
        }
    }
    (values, errors)
}

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
    declarations: &'a Declarations,
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
                if let Err(e) = check_typed(declaration, value, &format!("attributes.{name}")) {
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
    declarations: &'a Declarations,
) -> impl Iterator<Item = (&'a String, &'a Declaration, Option<&'a AttributeValue>)> {
    let mut own = values.iter().peekable();
    declarations.iter().map(move |(name, declaration)| {
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

/// Whether [`check_typed`] takes `value`, without wording any error.
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

/// The value a candidate holds for `declaration`: its own, else the
/// declaration's `default`.
pub fn effective(
    declaration: &Declaration,
    own: Option<&AttributeValue>,
) -> Option<AttributeValue> {
    if let Some(v) = own {
        return Some(v.clone());
    }
    match declaration {
        Declaration::String { default, .. } => default.clone().map(AttributeValue::Text),
        Declaration::Number { default, .. } => default.map(AttributeValue::Number),
        Declaration::StringSet { default, .. } | Declaration::PlayerSet { default } => {
            default.clone().map(AttributeValue::Set)
        }
    }
}

/// A ticket's value of `attribute` as the mode reads it: its own, else the
/// declaration's `default`; an undeclared attribute's own value as is.
pub fn ticket_value(
    config: &crate::config::GameModeConfig,
    declared: &DeclaredValues,
    attribute: &str,
) -> Option<AttributeValue> {
    let own = declared.get(attribute);
    match config.attributes.as_ref().and_then(|d| d.get(attribute)) {
        Some(declaration) => effective(declaration, own),
        None => own.cloned(),
    }
}

/// Checks one JSON value against its declaration (used for tickets and
/// for a declaration's own `default`).
///
/// # Errors
/// `VALIDATION_ERROR` on `field` (or `field[i]` for a set entry).
pub fn value_of(
    declaration: &Declaration,
    raw: &serde_json::Value,
    field: &str,
) -> Result<AttributeValue, FieldError> {
    let invalid = |f: String, message: String| FieldError::new(f, Code::ValidationError, message);
    match declaration {
        Declaration::String { values, .. } => {
            let Some(text) = raw.as_str() else {
                return Err(invalid(field.into(), "must be a string".into()));
            };
            check_text(text, values.as_deref(), field)?;
            Ok(AttributeValue::Text(text.to_owned()))
        }
        Declaration::Number { min, max, .. } => {
            let Some(n) = raw.as_f64().filter(|n| n.is_finite()) else {
                return Err(invalid(field.into(), "must be a finite number".into()));
            };
            if min.is_some_and(|m| n < m) || max.is_some_and(|m| n > m) {
                return Err(invalid(
                    field.into(),
                    format!(
                        "{n} is outside [{}, {}]",
                        min.map_or("-inf".into(), |m| m.to_string()),
                        max.map_or("inf".into(), |m| m.to_string())
                    ),
                ));
            }
            Ok(AttributeValue::Number(n))
        }
        Declaration::StringSet { values, .. } => {
            let items = set_items(raw, field, MAX_SET_ENTRIES, |item, at| {
                check_text(item, values.as_deref(), at)
            })?;
            Ok(AttributeValue::Set(items))
        }
        Declaration::PlayerSet { .. } => {
            let items = set_items(raw, field, MAX_PLAYER_SET, |item, at| {
                if crate::ticket::is_valid_player_id(item) {
                    Ok(())
                } else {
                    Err(FieldError::new(
                        at,
                        Code::ValidationError,
                        "must be a player id: 1 to 128 printable characters",
                    ))
                }
            })?;
            Ok(AttributeValue::Set(items))
        }
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

/// The entries of a JSON array of distinct strings, at most `limit`, each
/// checked by `check` (given the entry and its field) in order: the first
/// bad entry is named with its index.
fn set_items(
    raw: &serde_json::Value,
    field: &str,
    limit: usize,
    check: impl Fn(&str, &str) -> Result<(), FieldError>,
) -> Result<Vec<String>, FieldError> {
    let Some(array) = raw.as_array() else {
        return Err(FieldError::new(
            field,
            Code::ValidationError,
            "must be an array of strings",
        ));
    };
    if array.len() > limit {
        return Err(FieldError::new(
            field,
            Code::ValidationError,
            format!("has {} entries; at most {limit}", array.len()),
        ));
    }
    let mut items: Vec<String> = Vec::with_capacity(array.len());
    for (i, item) in array.iter().enumerate() {
        let Some(text) = item.as_str() else {
            return Err(FieldError::new(
                format!("{field}[{i}]"),
                Code::ValidationError,
                "must be a string",
            ));
        };
        check(text, &format!("{field}[{i}]"))?;
        if items.iter().any(|s| s == text) {
            return Err(FieldError::new(
                format!("{field}[{i}]"),
                Code::ValidationError,
                format!("{text:?} is listed twice"),
            ));
        }
        items.push(text.to_owned());
    }
    Ok(items)
}

/// A simulated arrival's declared attributes (already typed) against the
/// mode (docs/simulate.md): every value checked as a ticket's, the first
/// failure returned.
///
/// # Errors
/// The failure on `attributes.<name>`: `ATTRIBUTE_REQUIRED`, or
/// `VALIDATION_ERROR` for an undeclared key or a value the declaration
/// refuses.
pub fn check_arrival(
    values: &DeclaredValues,
    declarations: Option<&Declarations>,
) -> Result<(), FieldError> {
    let empty = Declarations::new();
    let declarations = declarations.unwrap_or(&empty);
    for (name, value) in values.iter() {
        let field = format!("attributes.{name}");
        let Some(declaration) = declarations.get(name) else {
            return Err(unknown(field, declarations));
        };
        check_typed(declaration, value, &field)?;
    }
    match declarations
        .iter()
        .find(|(name, d)| !values.contains_key(*name) && !d.has_default())
    {
        Some((name, _)) => Err(required(name)),
        None => Ok(()),
    }
}

/// Checks a value already parsed against its declaration, as
/// [`value_of`] checks the JSON of a ticket (the re-check of every live
/// search at every cycle, so without a round trip through JSON).
///
/// # Errors
/// `VALIDATION_ERROR` on `field` (or `field[i]`).
pub fn check_typed(
    declaration: &Declaration,
    value: &AttributeValue,
    field: &str,
) -> Result<(), FieldError> {
    let wrong =
        |what: &str| FieldError::new(field, Code::ValidationError, format!("must be {what}"));
    match (declaration, value) {
        (Declaration::String { values, .. }, AttributeValue::Text(text)) => {
            check_text(text, values.as_deref(), field)
        }
        (Declaration::Number { min, max, .. }, AttributeValue::Number(n)) => {
            if !n.is_finite() || min.is_some_and(|m| *n < m) || max.is_some_and(|m| *n > m) {
                Err(wrong("a finite number within the declared min and max"))
            } else {
                Ok(())
            }
        }
        (Declaration::StringSet { values, .. }, AttributeValue::Set(items)) => {
            if items.len() > MAX_SET_ENTRIES {
                return Err(wrong("an array of at most 32 strings"));
            }
            for (i, item) in items.iter().enumerate() {
                check_text(item, values.as_deref(), &format!("{field}[{i}]"))?;
            }
            Ok(())
        }
        (Declaration::PlayerSet { .. }, AttributeValue::Set(items)) => {
            if items.len() > MAX_PLAYER_SET {
                return Err(wrong("an array of at most 100 player ids"));
            }
            Ok(())
        }
        (d, _) => Err(wrong(&format!("a {}", d.type_name()))),
    }
}
