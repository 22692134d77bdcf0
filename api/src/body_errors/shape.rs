//! A body's shape errors as values: what a type refused, told to the
//! deserializer through serde's error constructors (an unknown field, a
//! missing one, a wrong type) and kept typed, so that the answer is worded
//! here, never read back out of a library's message text.

use serde::de::{Expected, Unexpected};
use std::fmt;

pub use matchplane_matchmaker::json_kind::{Got, MAX_EXACT};

/// What the type wanted, as the deserializer was asked for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hint {
    /// An integer from `min` to `max`.
    Integer {
        /// Smallest accepted.
        min: i128,
        /// Largest accepted.
        max: i128,
    },
    /// Any number.
    Number,
    /// `true` or `false`.
    Bool,
    /// A string.
    Str,
    /// An array.
    Array,
    /// An object.
    Object,
    /// One of an enumeration's names.
    Variant,
    /// `null`.
    Null,
}

impl fmt::Display for Hint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::Integer { min: 0, max } if max >= i128::from(u64::MAX) => {
                f.write_str("a whole number of at least 0")
            }
            Self::Integer { min: 0, max } => write!(f, "a whole number from 0 to {max}"),
            Self::Integer { .. } => f.write_str("a whole number"),
            Self::Number => f.write_str("a number"),
            Self::Bool => f.write_str("true or false"),
            Self::Str => f.write_str("a string"),
            Self::Array => f.write_str("an array"),
            Self::Object => f.write_str("an object"),
            Self::Variant => f.write_str("one of the allowed values"),
            Self::Null => f.write_str("null"),
        }
    }
}

/// What a type wanted: known from the deserializer's own call, or only as
/// the refusing visitor describes itself (a value read from a buffered
/// copy inside an internally tagged or flattened object, or a type of our
/// own, which words its own refusals).
#[derive(Debug, Clone, PartialEq)]
pub enum Want {
    /// From the deserializer's call.
    Hint(Hint),
    /// From the visitor's description.
    Said(String),
}

impl fmt::Display for Want {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Hint(hint) => hint.fmt(f),
            Self::Said(said) => f.write_str(&super::words::expected(said)),
        }
    }
}

/// One shape error of a body, before it has a field name.
#[derive(Debug, Clone, PartialEq)]
pub enum Shape {
    /// A field the type does not have; `known` are those it has.
    UnknownField {
        /// The field as given.
        field: String,
        /// The type's fields.
        known: &'static [&'static str],
    },
    /// A required field not given.
    MissingField(&'static str),
    /// A field given twice.
    DuplicateField(&'static str),
    /// A name that is none of an enumeration's.
    UnknownVariant {
        /// The name as given.
        variant: String,
        /// The enumeration's names.
        known: &'static [&'static str],
    },
    /// A value of the wrong type.
    InvalidType {
        /// What was there.
        got: Got,
        /// What was wanted.
        want: Want,
    },
    /// A value of the right type the type still refused (out of range).
    InvalidValue {
        /// What was there.
        got: Got,
        /// What was wanted.
        want: Want,
    },
    /// An array of the wrong length.
    InvalidLength {
        /// Its length.
        len: usize,
        /// What was wanted.
        want: Want,
    },
    /// A type's own refusal, worded by it.
    Custom(String),
}

/// `names` as a choice: "`a`", "`a` or `b`", "one of `a`, `b`, `c`".
fn one_of(names: &[&str]) -> String {
    match names {
        [] => String::new(),
        [one] => format!("`{one}`"),
        [a, b] => format!("`{a}` or `{b}`"),
        many => {
            let listed: Vec<String> = many.iter().map(|n| format!("`{n}`")).collect();
            format!("one of {}", listed.join(", "))
        }
    }
}

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UnknownField { known: [], .. } => {
                f.write_str("unknown field; there are no fields")
            }
            Self::UnknownField { known, .. } => {
                write!(f, "unknown field; expected {}", one_of(known))
            }
            Self::MissingField(_) => f.write_str("this field is required"),
            Self::DuplicateField(_) => f.write_str("this field is given twice"),
            Self::UnknownVariant { variant, known: [] } => {
                write!(f, "unknown variant `{variant}`, there are no variants")
            }
            Self::UnknownVariant { variant, known } => {
                write!(f, "unknown variant `{variant}`, expected {}", one_of(known))
            }
            Self::InvalidType { got, want } | Self::InvalidValue { got, want } => {
                write!(f, "expected {want}, got {got}")
            }
            Self::InvalidLength { len, want } => write!(f, "expected {want}, got {len} items"),
            Self::Custom(text) if super::words::looks_rusty(text) => {
                f.write_str("this value is not valid here")
            }
            Self::Custom(text) => f.write_str(text),
        }
    }
}

impl std::error::Error for Shape {}

impl serde::de::Error for Shape {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Self::Custom(msg.to_string())
    }

    fn invalid_type(unexp: Unexpected<'_>, exp: &dyn Expected) -> Self {
        Self::InvalidType {
            got: Got::from_unexpected(&unexp),
            want: Want::Said(exp.to_string()),
        }
    }

    fn invalid_value(unexp: Unexpected<'_>, exp: &dyn Expected) -> Self {
        Self::InvalidValue {
            got: Got::from_unexpected(&unexp),
            want: Want::Said(exp.to_string()),
        }
    }

    fn invalid_length(len: usize, exp: &dyn Expected) -> Self {
        Self::InvalidLength {
            len,
            want: Want::Said(exp.to_string()),
        }
    }

    fn unknown_variant(variant: &str, expected: &'static [&'static str]) -> Self {
        Self::UnknownVariant {
            variant: variant.to_owned(),
            known: expected,
        }
    }

    fn unknown_field(field: &str, expected: &'static [&'static str]) -> Self {
        Self::UnknownField {
            field: field.to_owned(),
            known: expected,
        }
    }

    fn missing_field(field: &'static str) -> Self {
        Self::MissingField(field)
    }

    fn duplicate_field(field: &'static str) -> Self {
        Self::DuplicateField(field)
    }
}
