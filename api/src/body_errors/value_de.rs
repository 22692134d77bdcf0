//! A JSON value read into a type, with every refusal a typed [`Shape`].
//!
//! Like serde_json's own reading of a `Value`, each `deserialize_*` call
//! checks the JSON type before it visits, so a wrong type is found here,
//! with what the type asked for ([`Hint`]). Two things differ: an integer
//! field takes a number with a zero fraction (`824.0` is `824`, as JSON
//! Schema's `integer` admits: docs/openapi.md, "Numbers"), and a struct
//! takes only an object (serde_json's also takes an array of its fields).

use super::shape::{Got, Hint, Shape, MAX_EXACT};
use serde::de::value::{MapDeserializer, SeqDeserializer, StrDeserializer, StringDeserializer};
use serde::de::{
    DeserializeSeed, Deserializer, EnumAccess, IntoDeserializer, VariantAccess, Visitor,
};
use serde_json::{Map, Value};

/// The name serde_json gives the newtype it reads a raw JSON text through
/// (`Box<RawValue>`); such a field is handed the value's text. A test
/// (`a_raw_json_field_takes_the_value_text`) keeps this in step with
/// serde_json.
const RAW_VALUE_TOKEN: &str = "$serde_json::private::RawValue";

/// A borrowed JSON value as a serde deserializer whose errors are [`Shape`]s.
#[derive(Debug, Clone, Copy)]
pub struct Typed<'a>(pub &'a Value);

impl<'a> IntoDeserializer<'a, Shape> for Typed<'a> {
    type Deserializer = Self;

    fn into_deserializer(self) -> Self {
        self
    }
}

impl<'a> Typed<'a> {
    fn wrong(self, hint: Hint) -> Shape {
        Shape::InvalidType {
            got: Got::of(self.0),
            want: super::shape::Want::Hint(hint),
        }
    }

    /// An integer field from `min` to `max`.
    fn integer<V: Visitor<'a>>(self, visitor: V, min: i128, max: i128) -> Result<V::Value, Shape> {
        let hint = Hint::Integer { min, max };
        let Value::Number(n) = self.0 else {
            return Err(self.wrong(hint));
        };
        let whole = match (n.as_u64(), n.as_i64(), n.as_f64()) {
            (Some(u), _, _) => i128::from(u),
            (None, Some(i), _) => i128::from(i),
            (None, None, Some(f)) if f.fract() == 0.0 && f.abs() <= MAX_EXACT => f as i128,
            _ => return Err(self.wrong(hint)),
        };
        if !(min..=max).contains(&whole) {
            return Err(Shape::InvalidValue {
                got: Got::of(self.0),
                want: super::shape::Want::Hint(hint),
            });
        }
        match u64::try_from(whole) {
            Ok(u) => visitor.visit_u64(u),
            // In range of a signed type, so an i64.
            Err(_) => visitor.visit_i64(whole as i64),
        }
    }

    /// An object's members, `type` first: an enum tagged by `type` reads
    /// its variant's members with their paths only when the tag comes
    /// first (matchmaker/src/tagged.rs), and the map's keys are sorted.
    fn object<V: Visitor<'a>>(map: &'a Map<String, Value>, visitor: V) -> Result<V::Value, Shape> {
        let tag = map.get_key_value("type");
        let rest = map.iter().filter(|(key, _)| key.as_str() != "type");
        let mut entries = MapDeserializer::new(
            tag.into_iter()
                .chain(rest)
                .map(|(k, v)| (k.as_str(), Typed(v))),
        );
        let value = visitor.visit_map(&mut entries)?;
        entries.end()?;
        Ok(value)
    }

    fn array<V: Visitor<'a>>(items: &'a [Value], visitor: V) -> Result<V::Value, Shape> {
        let mut elements = SeqDeserializer::new(items.iter().map(Typed));
        let value = visitor.visit_seq(&mut elements)?;
        elements.end()?;
        Ok(value)
    }
}

macro_rules! integers {
    ($($method:ident: $t:ty),*) => {$(
        fn $method<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Shape> {
            self.integer(visitor, i128::from(<$t>::MIN), i128::from(<$t>::MAX))
        }
    )*};
}

impl<'a> Deserializer<'a> for Typed<'a> {
    type Error = Shape;

    fn deserialize_any<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Shape> {
        match self.0 {
            Value::Null => visitor.visit_unit(),
            Value::Bool(b) => visitor.visit_bool(*b),
            Value::Number(n) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
                (Some(u), _, _) => visitor.visit_u64(u),
                (None, Some(i), _) => visitor.visit_i64(i),
                (None, None, Some(f)) => visitor.visit_f64(f),
                _ => Err(self.wrong(Hint::Number)),
            },
            Value::String(s) => visitor.visit_borrowed_str(s),
            Value::Array(items) => Self::array(items, visitor),
            Value::Object(map) => Self::object(map, visitor),
        }
    }

    integers!(deserialize_u8: u8, deserialize_u16: u16, deserialize_u32: u32, deserialize_u64: u64,
              deserialize_i8: i8, deserialize_i16: i16, deserialize_i32: i32, deserialize_i64: i64);

    fn deserialize_u128<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Shape> {
        self.integer(visitor, 0, i128::from(u64::MAX))
    }

    fn deserialize_i128<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Shape> {
        self.integer(visitor, i128::from(i64::MIN), i128::from(u64::MAX))
    }

    fn deserialize_f32<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Shape> {
        self.deserialize_f64(visitor)
    }

    fn deserialize_f64<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Shape> {
        match self.0 {
            Value::Number(_) => self.deserialize_any(visitor),
            _ => Err(self.wrong(Hint::Number)),
        }
    }

    fn deserialize_bool<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Shape> {
        match self.0 {
            Value::Bool(b) => visitor.visit_bool(*b),
            _ => Err(self.wrong(Hint::Bool)),
        }
    }

    fn deserialize_str<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Shape> {
        match self.0 {
            Value::String(s) => visitor.visit_borrowed_str(s),
            _ => Err(self.wrong(Hint::Str)),
        }
    }

    fn deserialize_string<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Shape> {
        self.deserialize_str(visitor)
    }

    fn deserialize_char<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Shape> {
        self.deserialize_str(visitor)
    }

    fn deserialize_bytes<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Shape> {
        self.deserialize_any(visitor)
    }

    fn deserialize_byte_buf<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Shape> {
        self.deserialize_any(visitor)
    }

    fn deserialize_option<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Shape> {
        match self.0 {
            Value::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_unit<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Shape> {
        match self.0 {
            Value::Null => visitor.visit_unit(),
            _ => Err(self.wrong(Hint::Null)),
        }
    }

    fn deserialize_unit_struct<V: Visitor<'a>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Shape> {
        self.deserialize_unit(visitor)
    }

    fn deserialize_newtype_struct<V: Visitor<'a>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Shape> {
        if name == RAW_VALUE_TOKEN {
            let text = self.0.to_string();
            let entry = std::iter::once((RAW_VALUE_TOKEN, text));
            let mut raw = MapDeserializer::<_, Shape>::new(entry);
            let value = visitor.visit_map(&mut raw)?;
            raw.end()?;
            return Ok(value);
        }
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_seq<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Shape> {
        match self.0 {
            Value::Array(items) => Self::array(items, visitor),
            _ => Err(self.wrong(Hint::Array)),
        }
    }

    fn deserialize_tuple<V: Visitor<'a>>(self, _len: usize, visitor: V) -> Result<V::Value, Shape> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'a>>(
        self,
        _name: &'static str,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, Shape> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_map<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Shape> {
        match self.0 {
            Value::Object(map) => Self::object(map, visitor),
            _ => Err(self.wrong(Hint::Object)),
        }
    }

    fn deserialize_struct<V: Visitor<'a>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Shape> {
        self.deserialize_map(visitor)
    }

    fn deserialize_enum<V: Visitor<'a>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Shape> {
        match self.0 {
            Value::String(s) => visitor.visit_enum(StrDeserializer::<Shape>::new(s)),
            Value::Object(map) if map.len() == 1 => match map.iter().next() {
                Some((name, value)) => visitor.visit_enum(Variant { name, value }),
                None => Err(self.wrong(Hint::Variant)),
            },
            _ => Err(self.wrong(Hint::Variant)),
        }
    }

    /// A tag's value (`"type": "mmr"`) names its variant, by name only:
    /// serde's own reading of a value also takes a variant's index (`0`
    /// for the first), which would accept a number no document allows.
    fn deserialize_identifier<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Shape> {
        match self.0 {
            Value::String(s) => visitor.visit_borrowed_str(s),
            _ => Err(self.wrong(Hint::Variant)),
        }
    }

    fn deserialize_ignored_any<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Shape> {
        visitor.visit_unit()
    }
}

/// An enumeration's variant given as a one-key object (`{"name": value}`).
struct Variant<'a> {
    name: &'a str,
    value: &'a Value,
}

impl<'a> EnumAccess<'a> for Variant<'a> {
    type Error = Shape;
    type Variant = Typed<'a>;

    fn variant_seed<S: DeserializeSeed<'a>>(self, seed: S) -> Result<(S::Value, Typed<'a>), Shape> {
        let name = seed.deserialize(StringDeserializer::<Shape>::new(self.name.to_owned()))?;
        Ok((name, Typed(self.value)))
    }
}

impl<'a> VariantAccess<'a> for Typed<'a> {
    type Error = Shape;

    fn unit_variant(self) -> Result<(), Shape> {
        match self.0 {
            Value::Null => Ok(()),
            _ => Err(self.wrong(Hint::Null)),
        }
    }

    fn newtype_variant_seed<S: DeserializeSeed<'a>>(self, seed: S) -> Result<S::Value, Shape> {
        seed.deserialize(self)
    }

    fn tuple_variant<V: Visitor<'a>>(self, _len: usize, visitor: V) -> Result<V::Value, Shape> {
        self.deserialize_seq(visitor)
    }

    fn struct_variant<V: Visitor<'a>>(
        self,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Shape> {
        self.deserialize_map(visitor)
    }
}
