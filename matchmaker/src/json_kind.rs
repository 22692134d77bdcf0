//! What kind of JSON value was found where another was wanted, in the
//! project's words (`the number 1`, `an array`, `null`): the API's typed
//! body reader and the simulator's CSV `attributes` cells word a wrong
//! value alike with it (docs/errors.md).

use serde::de::Unexpected;
use serde_json::Value;
use std::fmt;

/// What a JSON text held where something else was wanted.
#[derive(Debug, Clone, PartialEq)]
pub enum Got {
    /// `true` or `false`.
    Bool(bool),
    /// A number, as written.
    Number(String),
    /// A string.
    Str(String),
    /// An array.
    Array,
    /// An object.
    Object,
    /// `null`.
    Null,
    /// Something JSON has no word for (a byte string, a unit variant).
    Other,
}

impl Got {
    /// What `value` is.
    pub fn of(value: &Value) -> Self {
        match value {
            Value::Null => Self::Null,
            Value::Bool(b) => Self::Bool(*b),
            Value::Number(n) => Self::Number(n.to_string()),
            Value::String(s) => Self::Str(s.clone()),
            Value::Array(_) => Self::Array,
            Value::Object(_) => Self::Object,
        }
    }

    /// What serde's `Unexpected` describes.
    pub fn from_unexpected(unexpected: &Unexpected<'_>) -> Self {
        match *unexpected {
            Unexpected::Bool(b) => Self::Bool(b),
            Unexpected::Unsigned(n) => Self::Number(n.to_string()),
            Unexpected::Signed(n) => Self::Number(n.to_string()),
            Unexpected::Float(f) => Self::Number(
                serde_json::Number::from_f64(f).map_or_else(|| f.to_string(), |n| n.to_string()),
            ),
            Unexpected::Char(c) => Self::Str(c.to_string()),
            Unexpected::Str(s) => Self::Str(s.to_owned()),
            Unexpected::Unit | Unexpected::Option => Self::Null,
            Unexpected::Seq => Self::Array,
            Unexpected::Map | Unexpected::StructVariant => Self::Object,
            _ => Self::Other,
        }
    }

    /// Whether this is a number with no fraction that a double holds
    /// exactly (`824.0`), which reads as the integer it stands for.
    pub fn is_whole_float(&self) -> bool {
        let Self::Number(text) = self else {
            return false;
        };
        text.parse::<f64>()
            .is_ok_and(|f| f.fract() == 0.0 && f.abs() <= MAX_EXACT)
            && text.contains(['.', 'e', 'E'])
    }
}

/// The largest integer a double holds exactly: 2^53.
pub const MAX_EXACT: f64 = 9_007_199_254_740_992.0;

impl fmt::Display for Got {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Bool(b) => write!(f, "{b}"),
            Self::Number(n) => write!(f, "the number {n}"),
            Self::Str(s) => write!(f, "the string {s:?}"),
            Self::Array => f.write_str("an array"),
            Self::Object => f.write_str("an object"),
            Self::Null => f.write_str("null"),
            Self::Other => f.write_str("a value of another type"),
        }
    }
}
