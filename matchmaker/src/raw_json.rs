//! [`RawJson`]: a JSON value kept as the exact text it arrived as (a
//! ticket's `attributes.data`, docs/searching.md), so what a studio sends is what its
//! game server and views get back, byte for byte.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;

/// A JSON value kept as its original text. Serialises as that text,
/// verbatim (no re-ordering of keys, no re-formatting of numbers); two are
/// equal when their texts are.
///
/// It deserialises only from JSON text (`serde_json::from_str` /
/// `from_slice`), not from a parsed `serde_json::Value`.
#[derive(Clone)]
pub struct RawJson(Box<RawValue>);

impl RawJson {
    /// The value of `text`.
    ///
    /// # Errors
    /// `text` is not one JSON value.
    pub fn from_text(text: impl Into<String>) -> Result<Self, serde_json::Error> {
        RawValue::from_string(text.into()).map(Self)
    }

    /// `value` serialised.
    ///
    /// # Errors
    /// `value`'s `Serialize` fails (plain data types do not).
    pub fn of<T: Serialize + ?Sized>(value: &T) -> Result<Self, serde_json::Error> {
        serde_json::value::to_raw_value(value).map(Self)
    }

    /// The original text.
    pub fn get(&self) -> &str {
        self.0.get()
    }
}

impl PartialEq for RawJson {
    fn eq(&self, other: &Self) -> bool {
        self.get() == other.get()
    }
}

impl Eq for RawJson {}

impl std::fmt::Debug for RawJson {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("RawJson").field(&self.get()).finish()
    }
}

impl Serialize for RawJson {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for RawJson {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Box::<RawValue>::deserialize(deserializer).map(Self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_goes_out_as_it_came_in() {
        let text = r#"{"z":1,"a":[1.50,  2e3],"k":"\u00e9"}"#;
        let body = format!(r#"{{"data":{text}}}"#);
        #[derive(Serialize, Deserialize)]
        struct Holder {
            data: RawJson,
        }
        let held: Holder = serde_json::from_str(&body).unwrap();
        assert_eq!(held.data.get(), text);
        assert_eq!(serde_json::to_string(&held).unwrap(), body);
        assert_eq!(held.data, RawJson::from_text(text).unwrap());
        assert_ne!(held.data, RawJson::from_text(r#"{"a":1}"#).unwrap());
        assert!(RawJson::from_text("{").is_err());
    }
}
