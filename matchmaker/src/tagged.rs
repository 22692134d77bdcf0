//! Enums tagged by a `type` member (`{"type": "equal", "name": ...}`), read
//! so that an error inside one is named at its own path.
//!
//! serde's derive reads such an object by first copying all of it into a
//! buffer that keeps no path, so a missing field of a relax step is named
//! at the rule (`rules[0]`), not at the step (`rules[0].relax[0].off`).
//! [`tagged_enum!`] declares the enum once and emits two types from it:
//! the public one, written (and described in the OpenAPI document) with
//! `type` inside the object, and a private twin read as `{"equal": {...}}`.
//! The public type's reader takes `type` from the first member and reads
//! the rest of the object straight into the twin's variant, through the
//! caller's own map reader: every error keeps its path. An object whose
//! first member is not `type` (a stored document whose keys a database
//! sorted) is buffered as JSON and read as before. The API's body reader
//! hands `type` first (api/src/body_errors/value_de.rs).

use serde::de::{
    self, Deserialize, DeserializeOwned, DeserializeSeed, Deserializer, EnumAccess, IgnoredAny,
    MapAccess, Unexpected, VariantAccess, Visitor,
};
use std::fmt;
use std::marker::PhantomData;

/// The member that names the variant.
pub(crate) const TAG: &str = "type";

/// Declares an enum tagged by `type`, whose variants are structs. The
/// first name is the public enum; the second, after `via`, its private
/// twin for reading. Attributes and doc comments apply to both; the macro
/// adds `Serialize` with `tag = "type"` to the public enum, and a
/// `Deserialize` that reads through the twin ([`deserialize`]).
macro_rules! tagged_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident via $twin:ident {
            $(
                $(#[$variant_meta:meta])*
                $variant:ident {
                    $(
                        $(#[$field_meta:meta])*
                        $field:ident : $field_type:ty
                    ),* $(,)?
                }
            ),* $(,)?
        }
    ) => {
        #[derive(serde::Serialize)]
        #[serde(tag = "type")]
        $(#[$meta])*
        $vis enum $name {
            $(
                $(#[$variant_meta])*
                $variant {
                    $( $(#[$field_meta])* $field: $field_type, )*
                },
            )*
        }

        #[derive(serde::Deserialize)]
        $(#[$meta])*
        enum $twin {
            $(
                $(#[$variant_meta])*
                $variant {
                    $( $(#[$field_meta])* $field: $field_type, )*
                },
            )*
        }

        impl From<$twin> for $name {
            fn from(twin: $twin) -> Self {
                match twin {
                    $( $twin::$variant { $($field),* } => $name::$variant { $($field),* }, )*
                }
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                $crate::tagged::deserialize::<D, $twin>(deserializer).map(Self::from)
            }
        }
    };
}

pub(crate) use tagged_enum;

/// Reads an object tagged by `type` into `Twin`, an enum of struct
/// variants read in serde's external form (`{"variant": {...}}`).
///
/// # Errors
/// The deserializer's: not an object; `type` missing (a missing field
/// `type`), not a string or not a variant's name (at `type`); any error of
/// the variant's members, at its own path when `type` comes first.
pub(crate) fn deserialize<'de, D, Twin>(deserializer: D) -> Result<Twin, D::Error>
where
    D: Deserializer<'de>,
    Twin: DeserializeOwned,
{
    deserializer.deserialize_map(TaggedVisitor(PhantomData))
}

struct TaggedVisitor<Twin>(PhantomData<Twin>);

impl<'de, Twin: DeserializeOwned> Visitor<'de> for TaggedVisitor<Twin> {
    type Value = Twin;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object with a `type`")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Twin, A::Error> {
        match map.next_key_seed(KeySeed)? {
            None => Err(de::Error::missing_field(TAG)),
            Some(Key::Tag) => Twin::deserialize(TagFirst(map)),
            Some(Key::Other(first)) => buffered(first, map),
        }
    }
}

/// The first key: the tag, or another member's name.
enum Key {
    Tag,
    Other(String),
}

struct KeySeed;

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = Key;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Key, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeySeed {
    type Value = Key;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a member name")
    }

    fn visit_str<E: de::Error>(self, key: &str) -> Result<Key, E> {
        Ok(if key == TAG {
            Key::Tag
        } else {
            Key::Other(key.to_owned())
        })
    }
}

/// An object whose `type` was not first: every member as JSON, then read
/// as `{"<type>": {the other members}}`. Errors inside carry no path.
fn buffered<'de, A, Twin>(first: String, mut map: A) -> Result<Twin, A::Error>
where
    A: MapAccess<'de>,
    Twin: DeserializeOwned,
{
    let mut members = serde_json::Map::new();
    members.insert(first, map.next_value()?);
    while let Some(key) = map.next_key::<String>()? {
        let value = map.next_value()?;
        members.insert(key, value);
    }
    let tag = members
        .remove(TAG)
        .ok_or_else(|| de::Error::missing_field(TAG))?;
    let variant = String::deserialize(tag).map_err(de::Error::custom)?;
    let external = serde_json::Value::Object(serde_json::Map::from_iter([(
        variant,
        serde_json::Value::Object(members),
    )]));
    Twin::deserialize(external).map_err(de::Error::custom)
}

/// The rest of an object whose `type` key was just read, as an enum: the
/// tag's value names the variant, the remaining members are its fields.
struct TagFirst<A>(A);

impl<'de, A: MapAccess<'de>> Deserializer<'de> for TagFirst<A> {
    type Error = A::Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, A::Error> {
        visitor.visit_enum(self)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map struct enum identifier ignored_any
    }
}

impl<'de, A: MapAccess<'de>> EnumAccess<'de> for TagFirst<A> {
    type Error = A::Error;
    type Variant = Self;

    fn variant_seed<S: DeserializeSeed<'de>>(
        mut self,
        seed: S,
    ) -> Result<(S::Value, Self), A::Error> {
        // Read through the map, so an unknown name is named at `type`.
        let variant = self.0.next_value_seed(seed)?;
        Ok((variant, self))
    }
}

impl<'de, A: MapAccess<'de>> VariantAccess<'de> for TagFirst<A> {
    type Error = A::Error;

    fn unit_variant(mut self) -> Result<(), A::Error> {
        match self.0.next_key::<IgnoredAny>()? {
            None => Ok(()),
            Some(_) => Err(de::Error::invalid_length(1, &"no other member")),
        }
    }

    fn newtype_variant_seed<S: DeserializeSeed<'de>>(self, seed: S) -> Result<S::Value, A::Error> {
        seed.deserialize(de::value::MapAccessDeserializer::new(self.0))
    }

    fn tuple_variant<V: Visitor<'de>>(
        self,
        _len: usize,
        _visitor: V,
    ) -> Result<V::Value, A::Error> {
        Err(de::Error::invalid_type(Unexpected::Map, &"a list"))
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, A::Error> {
        visitor.visit_map(self.0)
    }
}

#[cfg(test)]
mod tests {
    use crate::config::Algorithm;
    use crate::rules::{EqualStep, Rule};
    use serde_json::json;

    fn path_of<T: serde::de::DeserializeOwned + std::fmt::Debug>(text: &str) -> String {
        let mut reader = serde_json::Deserializer::from_str(text);
        let err = serde_path_to_error::deserialize::<_, T>(&mut reader).unwrap_err();
        err.path().to_string()
    }

    #[test]
    fn a_member_error_is_named_at_its_path_when_type_comes_first() {
        // serde_json keeps the text's order: `type` first, as written.
        let text = r#"{"type": "equal", "name": "build", "attribute": "build",
                       "relax": [{"afterSeconds": 30}]}"#;
        let mut reader = serde_json::Deserializer::from_str(text);
        let err = serde_path_to_error::deserialize::<_, Rule>(&mut reader).unwrap_err();
        assert_eq!(err.path().to_string(), "relax[0]");
        assert!(err.to_string().contains("off"), "{err}");
        assert_eq!(
            path_of::<Algorithm>(r#"{"type": "ping", "maxDelta": "far"}"#),
            "maxDelta"
        );
        assert_eq!(
            path_of::<Rule>(
                r#"{"type": "distance", "name": "level", "attribute": "level", "max": 5, "min": 1}"#
            ),
            "min"
        );
        // `type` after another member: read from a copy, named at the object.
        assert_eq!(
            path_of::<Algorithm>(r#"{"maxDelta": "far", "type": "ping"}"#),
            "."
        );
    }

    #[test]
    fn an_unknown_type_is_named_at_type() {
        let text = r#"{"type": "same", "name": "build"}"#;
        let mut reader = serde_json::Deserializer::from_str(text);
        let err = serde_path_to_error::deserialize::<_, Rule>(&mut reader).unwrap_err();
        assert_eq!(err.path().to_string(), "type");
        assert!(err.to_string().contains("unknown variant"), "{err}");
    }

    #[test]
    fn type_anywhere_in_the_object_reads_the_same() {
        // serde_json's Value sorts keys, so `type` comes after `attribute`.
        let written = Rule::Equal {
            name: "build".into(),
            attribute: "build".into(),
            relax: vec![EqualStep {
                after_seconds: 30.0,
                off: true,
            }],
        };
        let value = serde_json::to_value(&written).unwrap();
        assert_eq!(
            value.as_object().unwrap().keys().next().unwrap(),
            "attribute"
        );
        assert_eq!(serde_json::from_value::<Rule>(value).unwrap(), written);
        let text = serde_json::to_string(&written).unwrap();
        assert!(text.starts_with(r#"{"type":"equal""#), "{text}");
        assert_eq!(serde_json::from_str::<Rule>(&text).unwrap(), written);
        let fifo = serde_json::from_value::<Algorithm>(json!({"type": "fifo"})).unwrap();
        assert_eq!(fifo, Algorithm::Fifo {});
    }

    #[test]
    fn anything_but_a_named_variant_is_refused() {
        for (value, says) in [
            (
                json!({"name": "x", "attribute": "y"}),
                "missing field `type`",
            ),
            (json!({}), "missing field `type`"),
            (
                json!({"type": 0, "name": "x", "attribute": "y"}),
                "invalid type",
            ),
            (json!({"name": "x", "type": 0}), "invalid type"),
            (
                json!({"type": "avoid", "name": "x", "attribute": "y", "max": 1}),
                "unknown field",
            ),
            (
                json!({"attribute": "y", "max": 1, "name": "x", "type": "avoid"}),
                "unknown field",
            ),
            (json!(["equal"]), "invalid type"),
        ] {
            let text = value.to_string();
            let err = serde_json::from_str::<Rule>(&text).unwrap_err().to_string();
            assert!(err.contains(says), "{value}: {err}");
            let err = serde_json::from_value::<Rule>(value.clone())
                .unwrap_err()
                .to_string();
            assert!(err.contains(says), "{value}: {err}");
        }
        assert!(serde_json::from_value::<Algorithm>(json!({"type": "fifo", "minMmr": 1})).is_err());
    }
}
