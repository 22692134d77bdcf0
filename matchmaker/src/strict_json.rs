//! JSON text read into a [`Value`] without losing a duplicate key: a plain
//! `Value` keeps the last of `{"mmr": 1, "mmr": 2}` silently, so a body is
//! read through [`Strict`] ([`read_strict`] names the key by its path),
//! which refuses the second one, as a typed parse would. [`has_duplicate_key`] checks the
//! same without building anything, for a body parsed straight into its
//! type (whose map-valued fields would keep the last key silently too).
//! [`nul_path`] finds a NUL character, which no field accepts.
//!
//! The API reads its request bodies with it (docs/errors.md), and the
//! simulator the `attributes` cells of an arrivals CSV (docs/simulate.md),
//! so both refuse the same texts.

use serde::de::{DeserializeSeed, Deserializer, Error as _, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};
use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::HashSet;
use std::fmt;

/// Reads a JSON value whose objects have no duplicate keys: the first key
/// found twice is put in `duplicate`, and the read fails there (the error
/// is the deserializer's; `duplicate` says why).
#[derive(Clone, Copy)]
pub struct Strict<'c> {
    /// Where the duplicate key is put.
    pub duplicate: &'c RefCell<Option<String>>,
}

impl<'de> DeserializeSeed<'de> for Strict<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Strict<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Value, E> {
        // JSON text cannot write a number that is not finite.
        Ok(Number::from_f64(v).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(self)? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut fields = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if fields.contains_key(&key) {
                *self.duplicate.borrow_mut() = Some(key);
                return Err(A::Error::custom("a key is given twice"));
            }
            let value = map.next_value_seed(self)?;
            fields.insert(key, value);
        }
        Ok(Value::Object(fields))
    }
}

/// Reads the value `d` holds as [`Strict`] does, refusing a key given twice
/// at any depth (a body read in one pass reads its JSON-valued fields so).
///
/// # Errors
/// The deserializer's, for a malformed value or a key given twice.
pub fn strict_value<'de, D: Deserializer<'de>>(d: D) -> Result<Value, D::Error> {
    let duplicate = RefCell::new(None);
    Strict {
        duplicate: &duplicate,
    }
    .deserialize(d)
}

/// Why [`read_strict`] refused a text.
#[derive(Debug, thiserror::Error)]
pub enum StrictError {
    /// A key is given twice; `field` is its path (`attributes.mmr`,
    /// `maps[0].k`).
    #[error("{field}: this field is given twice")]
    Duplicate {
        /// The path of the second key.
        field: String,
    },
    /// The text is not one JSON value; the parser's error says where.
    #[error("not JSON: {0}")]
    Json(serde_json::Error),
    /// Text follows the JSON value; the parser's error says where.
    #[error("text after the JSON value: {0}")]
    Trailing(serde_json::Error),
}

/// The words for a key given twice.
pub const GIVEN_TWICE: &str = "this field is given twice";

/// The words for a NUL character in a text.
pub const NUL_MESSAGE: &str = "text must not contain a NUL character (\\u0000)";

/// Reads one JSON value from `bytes` (nothing may follow it), refusing a
/// key given twice at any depth and naming it by its path.
///
/// # Errors
/// [`StrictError`].
pub fn read_strict(bytes: &[u8]) -> Result<Value, StrictError> {
    let duplicate = RefCell::new(None);
    let mut track = serde_path_to_error::Track::new();
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let read = Strict {
        duplicate: &duplicate,
    }
    .deserialize(serde_path_to_error::Deserializer::new(&mut de, &mut track));
    let value = read.map_err(|err| match duplicate.take() {
        Some(key) => StrictError::Duplicate {
            field: key_path(&track.path(), &key),
        },
        None => StrictError::Json(err),
    })?;
    de.end().map_err(StrictError::Trailing)?;
    Ok(value)
}

/// The path of `key` read inside `path` (which may already end with it).
fn key_path(path: &serde_path_to_error::Path, key: &str) -> String {
    use serde_path_to_error::Segment;
    let mut steps: Vec<String> = Vec::new();
    for segment in path.iter() {
        match segment {
            Segment::Seq { index } => steps.push(format!("[{index}]")),
            Segment::Map { key } => steps.push(key.clone()),
            Segment::Enum { variant } => steps.push(variant.clone()),
            // Past an unknown segment the path means nothing: stop there.
            Segment::Unknown => break,
        }
    }
    if steps.last().map(String::as_str) != Some(key) {
        steps.push(key.to_owned());
    }
    let mut out = String::new();
    for step in steps {
        if !out.is_empty() && !step.starts_with('[') {
            out.push('.');
        }
        out.push_str(&step);
    }
    out
}

/// The path of the first string or key in `value` holding a NUL character
/// (`""` for `value` itself, `build`, `maps[1]`), if any.
pub fn nul_path(value: &Value) -> Option<String> {
    fn find(value: &Value, path: &str) -> Option<String> {
        match value {
            Value::String(text) if text.contains('\0') => Some(path.to_owned()),
            Value::Array(items) => items
                .iter()
                .enumerate()
                .find_map(|(i, item)| find(item, &format!("{path}[{i}]"))),
            Value::Object(fields) => fields.iter().find_map(|(key, item)| {
                let at = if path.is_empty() {
                    key.clone()
                } else {
                    format!("{path}.{key}")
                };
                if key.contains('\0') {
                    Some(at)
                } else {
                    find(item, &at)
                }
            }),
            _ => None,
        }
    }
    find(value, "")
}

/// Whether `json` has an object with a key twice, at any depth, or is not
/// JSON at all. Keys are compared as written (borrowed from the text unless
/// escaped), so a well-formed body allocates at most a key list per object.
pub fn has_duplicate_key(json: &[u8]) -> bool {
    let mut de = serde_json::Deserializer::from_slice(json);
    NoDuplicates.deserialize(&mut de).is_err()
}

/// Objects with more keys than this are checked with a hash set.
const LINEAR_KEYS: usize = 16;

/// Walks a JSON value, failing on a duplicate key.
struct NoDuplicates;

impl<'de> DeserializeSeed<'de> for NoDuplicates {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for NoDuplicates {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }

    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }

    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(NoDuplicates)?.is_some() {}
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut keys: Vec<Cow<'de, str>> = Vec::new();
        let mut many: HashSet<Cow<'de, str>> = HashSet::new();
        while let Some(key) = map.next_key_seed(Key)? {
            let seen = if many.is_empty() && keys.len() < LINEAR_KEYS {
                let seen = keys.contains(&key);
                keys.push(key);
                seen
            } else {
                many.extend(keys.drain(..));
                !many.insert(key)
            };
            if seen {
                return Err(A::Error::custom("duplicate key"));
            }
            map.next_value_seed(NoDuplicates)?;
        }
        Ok(())
    }
}

/// An object key, borrowed from the text when it has no escape.
struct Key;

impl<'de> DeserializeSeed<'de> for Key {
    type Value = Cow<'de, str>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Key {
    type Value = Cow<'de, str>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a key")
    }

    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Cow::Borrowed(v))
    }

    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Cow::Owned(v.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_duplicate_keys_at_any_depth_without_a_value() {
        assert!(!has_duplicate_key(
            br#"{"a": [{"b": 1, "c": 2}], "b": {"b": {}}}"#
        ));
        assert!(has_duplicate_key(br#"{"a": 1, "a": 2}"#));
        assert!(has_duplicate_key(br#"{"x": [{"m": {"k": 1, "k": 2}}]}"#));
        // An escaped key is the same key.
        assert!(has_duplicate_key(br#"{"mmr": 1, "\u006dmr": 2}"#));
        // Past the linear scan's size too.
        let many: Vec<String> = (0..40).map(|i| format!("\"k{i}\": {i}")).collect();
        let text = format!("{{{}}}", many.join(","));
        assert!(!has_duplicate_key(text.as_bytes()));
        let text = format!("{{{}, \"k3\": 0}}", many.join(","));
        assert!(has_duplicate_key(text.as_bytes()));
        assert!(has_duplicate_key(b"{"), "not JSON");
    }

    #[test]
    fn keeps_values_and_refuses_duplicate_keys() {
        let text = r#"{"a": [1, -2, 2.5, "x", true, null, {"b": {}}]}"#;
        let duplicate = RefCell::new(None);
        let strict = Strict {
            duplicate: &duplicate,
        };
        let mut de = serde_json::Deserializer::from_str(text);
        let value = strict.deserialize(&mut de).unwrap();
        assert_eq!(value, serde_json::from_str::<Value>(text).unwrap());
        assert_eq!(duplicate.take(), None);
        let mut de = serde_json::Deserializer::from_str(r#"{"a": {"mmr": 1, "mmr": 2}}"#);
        assert!(strict.deserialize(&mut de).is_err());
        assert_eq!(duplicate.take().as_deref(), Some("mmr"));
    }

    #[test]
    fn names_a_key_given_twice_and_a_nul_by_their_paths() {
        let Err(StrictError::Duplicate { field }) =
            read_strict(br#"{"a": [{"x": 1}, {"k": 1, "k": 2}]}"#)
        else {
            panic!("a duplicate key was accepted");
        };
        assert_eq!(field, "a[1].k");
        let Err(StrictError::Duplicate { field }) = read_strict(br#"{"b": 1, "b": 2}"#) else {
            panic!("a duplicate key was accepted");
        };
        assert_eq!(field, "b");
        assert!(matches!(
            read_strict(b"{} x"),
            Err(StrictError::Trailing(_))
        ));
        assert!(matches!(read_strict(b"{"), Err(StrictError::Json(_))));
        let value = read_strict(br#"{"m": ["a", "b\u0000"]}"#).unwrap();
        assert_eq!(nul_path(&value).as_deref(), Some("m[1]"));
        assert_eq!(nul_path(&serde_json::json!({"m": ["a"]})), None);
    }
}
