//! A ticket's declared attributes as its body sends them, before they are
//! checked against the mode (docs/rules.md, "Attributes"): read once,
//! straight into their typed form ([`AttributeValue`]) where they have one,
//! so that generating a ticket builds no JSON tree of them and copies no
//! string twice. A value of no attribute type (`null`, `true`, an object, a
//! list holding a number) is kept as JSON, for its refusal to say what it
//! was; the checks ([`super::parse::parse_declared`]) word every refusal
//! from the JSON, so both forms are refused in the same words.

use super::value::AttributeValue;
use crate::strict_json::strict_value;
use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt;

/// One declared attribute's value as sent.
#[derive(Debug, Clone, PartialEq)]
pub enum SentValue {
    /// A number, a string or a list of strings.
    Typed(AttributeValue),
    /// Anything else, as JSON.
    Json(Value),
}

impl SentValue {
    /// The value as JSON (for the words of its refusal).
    pub fn into_json(self) -> Value {
        match self {
            Self::Typed(AttributeValue::Number(n)) => number(n),
            Self::Typed(AttributeValue::Text(t)) => Value::String(t),
            Self::Typed(AttributeValue::Set(items)) => {
                Value::Array(items.into_iter().map(Value::String).collect())
            }
            Self::Json(v) => v,
        }
    }
}

/// `n` as JSON, an integer written as one (`1`, not `1.0`), as it was sent.
#[allow(clippy::cast_possible_truncation, clippy::cast_precision_loss)]
fn number(n: f64) -> Value {
    if n.fract() == 0.0 && n.abs() < 9e15 && !(n == 0.0 && n.is_sign_negative()) {
        Value::from(n as i64)
    } else {
        serde_json::Number::from_f64(n).map_or(Value::Null, Value::Number)
    }
}

impl From<Value> for SentValue {
    /// Typed where the JSON has an attribute type, kept as JSON otherwise.
    fn from(value: Value) -> Self {
        match value {
            Value::String(t) => Self::Typed(AttributeValue::Text(t)),
            Value::Number(n) => match n.as_f64() {
                Some(f) => Self::Typed(AttributeValue::Number(f + 0.0)),
                None => Self::Json(Value::Number(n)),
            },
            Value::Array(items) if items.iter().all(Value::is_string) => {
                Self::Typed(AttributeValue::Set(
                    items
                        .into_iter()
                        .filter_map(|i| match i {
                            Value::String(t) => Some(t),
                            _ => None,
                        })
                        .collect(),
                ))
            }
            other => Self::Json(other),
        }
    }
}

/// The declared attributes a ticket sent, by name, in the order sent (a
/// name is sent once: a body's duplicate key is refused before).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SentValues(pub Vec<(String, SentValue)>);

impl SentValues {
    /// Adds `value` under `name`.
    pub fn push(&mut self, name: String, value: SentValue) {
        self.0.push((name, value));
    }
}

impl From<BTreeMap<String, Value>> for SentValues {
    fn from(map: BTreeMap<String, Value>) -> Self {
        Self(map.into_iter().map(|(k, v)| (k, v.into())).collect())
    }
}

impl<'de> Deserialize<'de> for SentValues {
    /// An object of values (a test's or a tool's; a ticket's body is read
    /// key by key by [`crate::RawAttributes`]).
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        BTreeMap::<String, SentValue>::deserialize(d).map(|m| Self(m.into_iter().collect()))
    }
}

impl<'de> Deserialize<'de> for SentValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(Sent)
    }
}

/// Reads a value as [`SentValue`].
struct Sent;

impl<'de> Visitor<'de> for Sent {
    type Value = SentValue;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<SentValue, E> {
        Ok(SentValue::Json(Value::Bool(v)))
    }

    #[allow(clippy::cast_precision_loss)] // JSON numbers are doubles.
    fn visit_i64<E>(self, v: i64) -> Result<SentValue, E> {
        Ok(SentValue::Typed(AttributeValue::Number(v as f64)))
    }

    #[allow(clippy::cast_precision_loss)] // JSON numbers are doubles.
    fn visit_u64<E>(self, v: u64) -> Result<SentValue, E> {
        Ok(SentValue::Typed(AttributeValue::Number(v as f64)))
    }

    fn visit_f64<E>(self, v: f64) -> Result<SentValue, E> {
        // `-0.0` is 0 (it would be echoed as `-0.0`).
        Ok(SentValue::Typed(AttributeValue::Number(v + 0.0)))
    }

    fn visit_str<E>(self, v: &str) -> Result<SentValue, E> {
        Ok(SentValue::Typed(AttributeValue::Text(v.to_owned())))
    }

    fn visit_string<E>(self, v: String) -> Result<SentValue, E> {
        Ok(SentValue::Typed(AttributeValue::Text(v)))
    }

    fn visit_unit<E>(self) -> Result<SentValue, E> {
        Ok(SentValue::Json(Value::Null))
    }

    fn visit_none<E>(self) -> Result<SentValue, E> {
        Ok(SentValue::Json(Value::Null))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<SentValue, A::Error> {
        let mut texts: Vec<String> = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(16));
        while let Some(item) = seq.next_element::<SentValue>()? {
            match item {
                SentValue::Typed(AttributeValue::Text(t)) => texts.push(t),
                // An entry that is not a string: the rest is read as JSON.
                other => {
                    let mut items: Vec<Value> = texts.into_iter().map(Value::String).collect();
                    items.push(other.into_json());
                    if let Value::Array(rest) = strict_value(SeqAccessDeserializer::new(seq))? {
                        items.extend(rest);
                    }
                    return Ok(SentValue::Json(Value::Array(items)));
                }
            }
        }
        Ok(SentValue::Typed(AttributeValue::Set(texts)))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<SentValue, A::Error> {
        strict_value(MapAccessDeserializer::new(map)).map(SentValue::Json)
    }
}
