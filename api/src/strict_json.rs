//! JSON text read into a [`Value`] without losing a duplicate key: a plain
//! `Value` keeps the last of `{"mmr": 1, "mmr": 2}` silently, so a body is
//! read through [`Strict`], which refuses the second one and names it, as a
//! typed parse would. [`has_duplicate_key`] checks the
//! same without building anything, for a body parsed straight into its
//! type (whose map-valued fields would keep the last key silently too).

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
}
