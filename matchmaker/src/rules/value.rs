//! A ticket's values for the declared attributes (docs/rules.md,
//! "Attributes") and the value a candidate holds for each; their parse and
//! checks are in [`super::parse`].

use super::declare::Declaration;
use crate::codes::Code;
use crate::validation::FieldError;
use serde::{Deserialize, Serialize};

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

impl AttributeValue {
    /// What a value may be, in the words of a refusal (`expected …, got null`).
    pub const EXPECTED: &'static str = "a number, a string or a list of strings";

    /// A value read from JSON already parsed (an arrivals CSV's
    /// `attributes` cell for an attribute no declaration types,
    /// docs/simulate.md), refused in the words of a typed reading:
    /// `expected a number, a string or a list
    /// of strings, got null` on `field`, or `expected a string, got the
    /// number 1` on `field[i]` for each entry of a list that is not a
    /// string. Whether the value fits its declaration is checked after.
    ///
    /// # Errors
    /// Every failure, each `VALIDATION_ERROR`.
    pub fn from_json(value: &serde_json::Value, field: &str) -> Result<Self, Vec<FieldError>> {
        use crate::json_kind::Got;
        let wrong = |at: String, want: &str, got: &serde_json::Value| {
            FieldError::new(
                at,
                Code::ValidationError,
                format!("expected {want}, got {}", Got::of(got)),
            )
        };
        match value {
            serde_json::Value::String(text) => Ok(Self::Text(text.clone())),
            serde_json::Value::Number(n) => n
                .as_f64()
                .map(Self::Number)
                .ok_or_else(|| vec![wrong(field.to_owned(), Self::EXPECTED, value)]),
            serde_json::Value::Array(items) => {
                let mut texts = Vec::with_capacity(items.len());
                let mut errors = Vec::new();
                for (i, item) in items.iter().enumerate() {
                    match item.as_str() {
                        Some(text) => texts.push(text.to_owned()),
                        None => errors.push(wrong(format!("{field}[{i}]"), "a string", item)),
                    }
                }
                if errors.is_empty() {
                    Ok(Self::Set(texts))
                } else {
                    Err(errors)
                }
            }
            _ => Err(vec![wrong(field.to_owned(), Self::EXPECTED, value)]),
        }
    }
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
                f.write_str(AttributeValue::EXPECTED)
            }
            fn visit_f64<E>(self, v: f64) -> Result<AttributeValue, E> {
                // `-0.0` is 0 (it would be echoed as `-0.0`).
                Ok(AttributeValue::Number(v + 0.0))
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

    /// No values, room for `n`.
    pub fn with_capacity(n: usize) -> Self {
        Self(litemap::LiteMap::with_capacity(n))
    }

    /// Adds `value` under `name`: at the end when `name` sorts after every
    /// name held (values added in name order cost no search), else in its
    /// place (a name held already gets the new value).
    pub fn append(&mut self, name: String, value: AttributeValue) {
        if let Some((name, value)) = self.0.try_append(name, value) {
            self.0.insert(name, value);
        }
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

/// The list a ticket holds for set attribute `attribute` as the mode reads
/// it: its own, else the declaration's `default`; `None` when that is not
/// a list or there is none.
pub fn ticket_set<'a>(
    config: &'a crate::config::GameModeConfig,
    declared: &'a DeclaredValues,
    attribute: &str,
) -> Option<&'a [String]> {
    match declared.get(attribute) {
        Some(AttributeValue::Set(items)) => Some(items),
        Some(_) => None,
        None => match config.attributes.as_ref()?.get(attribute)? {
            Declaration::StringSet { default, .. } | Declaration::PlayerSet { default } => {
                default.as_deref()
            }
            _ => None,
        },
    }
}
