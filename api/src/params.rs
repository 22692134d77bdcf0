//! Query parameters parsed by our own code (docs/error-codes.md): a query
//! string is read into a route's query struct by [`from_query`], whose
//! errors are typed ([`QueryError`]): a parameter that is missing, one
//! that does not parse as its type (classified by the parse error's kind,
//! never by the words of a dependency's message) and one a parameter type
//! of ours refuses with its own rule. Ranged parameters are newtypes that
//! carry their range and what they must be: [`PageLimit`],
//! [`BucketSeconds`], [`MatchId`]; RFC 3339 times are read by [`date_time`].

use chrono::{DateTime, FixedOffset, Utc};
use serde::de::{
    self, DeserializeOwned, Deserializer, Expected, IntoDeserializer, MapAccess, Unexpected,
    Visitor,
};
use serde::Deserialize;
use std::borrow::Cow;
use std::num::IntErrorKind;

/// Page size when a list route's `limit` is not given.
pub const DEFAULT_PAGE_LIMIT: u64 = 50;
/// Largest `limit` of a list route.
pub const MAX_PAGE_LIMIT: u64 = 200;

/// What an RFC 3339 query time must be.
const TIME_RULE: &str = "must be an RFC 3339 date-time such as 2026-12-01T10:00:00Z";

/// Why a query string was refused: the parameter, what it must be, and the
/// value sent when the answer names one other than the text of the
/// parameter (a number as parsed).
#[derive(Debug)]
pub struct QueryError {
    /// The parameter, once known.
    pub field: Option<String>,
    /// What the parameter must be ("is required", "must be a whole
    /// number", …), the words after "the `field` query parameter".
    pub rule: String,
    /// Whether the answer names the value sent (not for a missing
    /// parameter).
    pub shows_value: bool,
    /// The value to name, when it is not the text sent.
    pub value: Option<String>,
}

impl QueryError {
    fn rule(rule: impl Into<String>) -> Self {
        Self {
            field: None,
            rule: rule.into(),
            shows_value: true,
            value: None,
        }
    }

    fn about(field: &str, rule: impl Into<String>) -> Self {
        Self {
            field: Some(field.to_owned()),
            rule: rule.into(),
            shows_value: false,
            value: None,
        }
    }
}

impl std::fmt::Display for QueryError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let field = self.field.as_deref().unwrap_or("$");
        write!(f, "the `{field}` query parameter {}", self.rule)
    }
}

impl std::error::Error for QueryError {}

impl de::Error for QueryError {
    /// A message of a type's own `Deserialize`, shown as it is.
    fn custom<T: std::fmt::Display>(message: T) -> Self {
        Self::rule(format!("is not valid ({message})"))
    }

    /// A parameter type of ours refusing a value: `expected` is its rule,
    /// `unexpected` the value as it was read.
    fn invalid_value(unexpected: Unexpected<'_>, expected: &dyn Expected) -> Self {
        let value = match unexpected {
            Unexpected::Unsigned(n) => Some(n.to_string()),
            Unexpected::Signed(n) => Some(n.to_string()),
            _ => None,
        };
        Self {
            value,
            ..Self::rule(expected.to_string())
        }
    }

    fn unknown_variant(_: &str, expected: &'static [&'static str]) -> Self {
        let allowed: Vec<String> = expected.iter().map(|v| format!("`{v}`")).collect();
        Self::rule(format!("must be one of {}", allowed.join(", ")))
    }

    fn missing_field(field: &'static str) -> Self {
        Self::about(field, "is required")
    }

    fn duplicate_field(field: &'static str) -> Self {
        Self::about(field, "is given more than once")
    }
}

/// Parses the pairs of a query string (without `?`) into `T`.
///
/// # Errors
/// The first parameter that is missing or refused, as a [`QueryError`].
pub fn from_query<T: DeserializeOwned>(query: &str) -> Result<T, QueryError> {
    T::deserialize(Pairs {
        pairs: form_urlencoded::parse(query.as_bytes()),
    })
}

/// A whole query string, as a map of its parameters.
struct Pairs<'a> {
    pairs: form_urlencoded::Parse<'a>,
}

impl<'de> Deserializer<'de> for Pairs<'_> {
    type Error = QueryError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, QueryError> {
        visitor.visit_map(PairsAccess {
            pairs: self.pairs,
            value: None,
        })
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map struct enum identifier ignored_any
    }
}

/// Walks the parameters, naming each in the errors of its value.
struct PairsAccess<'a> {
    pairs: form_urlencoded::Parse<'a>,
    value: Option<(Cow<'a, str>, Cow<'a, str>)>,
}

impl<'de, 'a> MapAccess<'de> for PairsAccess<'a> {
    type Error = QueryError;

    fn next_key_seed<K: de::DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, QueryError> {
        let Some((name, value)) = self.pairs.next() else {
            return Ok(None);
        };
        let key = seed.deserialize(IntoDeserializer::<QueryError>::into_deserializer(
            name.clone(),
        ))?;
        self.value = Some((name, value));
        Ok(Some(key))
    }

    fn next_value_seed<V: de::DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, QueryError> {
        let (name, text) = self
            .value
            .take()
            .ok_or_else(|| QueryError::rule("is not valid (a value without a name)"))?;
        seed.deserialize(Text(&text)).map_err(|mut error| {
            if error.field.is_none() {
                error.field = Some(name.into_owned());
                if error.shows_value && error.value.is_none() {
                    error.value = Some(text.into_owned());
                }
            }
            error
        })
    }
}

/// One parameter's value (percent-decoded), read as the type asked for.
struct Text<'a>(&'a str);

impl Text<'_> {
    /// What a whole number that does not parse must be, by the kind of the
    /// parse error.
    fn whole_number_rule(&self, kind: &IntErrorKind) -> &'static str {
        match kind {
            IntErrorKind::PosOverflow | IntErrorKind::NegOverflow => "is out of range",
            IntErrorKind::InvalidDigit if self.0.trim_start().starts_with('-') => {
                "must not be negative"
            }
            _ => "must be a whole number",
        }
    }
}

macro_rules! whole_numbers {
    ($($method:ident $visit:ident $ty:ty),*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, QueryError> {
            match self.0.parse::<$ty>() {
                Ok(n) => visitor.$visit(n),
                Err(e) => Err(QueryError::rule(self.whole_number_rule(e.kind()))),
            }
        }
    )*};
}

macro_rules! numbers {
    ($($method:ident $visit:ident $ty:ty),*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, QueryError> {
            match self.0.parse::<$ty>() {
                Ok(n) => visitor.$visit(n),
                // No text at all is told in the standard library's words.
                Err(e) if self.0.is_empty() => Err(de::Error::custom(e)),
                Err(_) => Err(QueryError::rule("must be a number")),
            }
        }
    )*};
}

impl<'de> Deserializer<'de> for Text<'_> {
    type Error = QueryError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, QueryError> {
        visitor.visit_str(self.0)
    }

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, QueryError> {
        match self.0 {
            "true" => visitor.visit_bool(true),
            "false" => visitor.visit_bool(false),
            _ => Err(QueryError::rule("must be `true` or `false`")),
        }
    }

    whole_numbers!(
        deserialize_i8 visit_i8 i8, deserialize_i16 visit_i16 i16,
        deserialize_i32 visit_i32 i32, deserialize_i64 visit_i64 i64,
        deserialize_u8 visit_u8 u8, deserialize_u16 visit_u16 u16,
        deserialize_u32 visit_u32 u32, deserialize_u64 visit_u64 u64
    );

    numbers!(deserialize_f32 visit_f32 f32, deserialize_f64 visit_f64 f64);

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, QueryError> {
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        visitor: V,
    ) -> Result<V::Value, QueryError> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, QueryError> {
        IntoDeserializer::<QueryError>::into_deserializer(self.0)
            .deserialize_enum(name, variants, visitor)
    }

    serde::forward_to_deserialize_any! {
        i128 u128 char str string bytes byte_buf unit unit_struct seq tuple
        tuple_struct map struct identifier ignored_any
    }
}

/// The rule a parameter type of ours refuses a value with.
struct Rule(&'static str);

impl Expected for Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

/// A list route's page size, `limit`: a whole number from 1 to
/// [`MAX_PAGE_LIMIT`] ([`DEFAULT_PAGE_LIMIT`] when not given).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageLimit(u64);

impl PageLimit {
    /// What `limit` must be.
    pub const RULE: &'static str = "must be a whole number from 1 to 200";

    /// The page size asked for, or [`DEFAULT_PAGE_LIMIT`].
    pub fn or_default(limit: Option<Self>) -> u64 {
        limit.map_or(DEFAULT_PAGE_LIMIT, |PageLimit(n)| n)
    }
}

impl<'de> Deserialize<'de> for PageLimit {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // What the answer names: the number as read, or the text sent.
        let text = Cow::<str>::deserialize(deserializer)?;
        match text.parse::<u64>() {
            Ok(n) if (1..=MAX_PAGE_LIMIT).contains(&n) => Ok(Self(n)),
            Ok(n) => Err(de::Error::invalid_value(
                Unexpected::Unsigned(n),
                &Rule(Self::RULE),
            )),
            Err(_) => Err(de::Error::invalid_value(
                Unexpected::Str(&text),
                &Rule(Self::RULE),
            )),
        }
    }
}

/// The bucket length of a mode's history, `bucketSeconds`: a multiple of
/// 60 from 60 to 86 400 (60 when not given).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BucketSeconds(i64);

impl BucketSeconds {
    /// What `bucketSeconds` must be.
    pub const RULE: &'static str = "must be a multiple of 60 from 60 to 86400";

    /// The bucket length asked for, or 60 seconds.
    pub fn or_default(bucket: Option<Self>) -> i64 {
        bucket.map_or(60, |BucketSeconds(n)| n)
    }
}

impl<'de> Deserialize<'de> for BucketSeconds {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = Cow::<str>::deserialize(deserializer)?;
        match text.parse::<i64>() {
            Ok(n) if (60..=86_400).contains(&n) && n % 60 == 0 => Ok(Self(n)),
            Ok(n) => Err(de::Error::invalid_value(
                Unexpected::Signed(n),
                &Rule(Self::RULE),
            )),
            Err(_) => Err(de::Error::invalid_value(
                Unexpected::Str(&text),
                &Rule(Self::RULE),
            )),
        }
    }
}

/// A proposal's id as an answer names it, `matchId`: `mat_` and 1 to 64
/// letters or digits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MatchId(String);

impl MatchId {
    /// What `matchId` must be.
    pub const RULE: &'static str = "must be a match id: mat_ and 1 to 64 letters or digits";

    /// The id.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl<'de> Deserialize<'de> for MatchId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        let rest = text.strip_prefix("mat_").unwrap_or_default();
        if (1..=64).contains(&rest.len()) && rest.bytes().all(|b| b.is_ascii_alphanumeric()) {
            return Ok(Self(text));
        }
        Err(de::Error::invalid_value(
            Unexpected::Str(&text),
            &Rule(Self::RULE),
        ))
    }
}

/// An optional RFC 3339 time parameter (`from`, `to`), read as chrono
/// reads one (`#[serde(default, deserialize_with = "…")]`), refused with
/// what it must be.
///
/// # Errors
/// A value chrono does not read as a date-time.
pub fn date_time<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<DateTime<Utc>>, D::Error> {
    let text = Cow::<str>::deserialize(deserializer)?;
    text.parse::<DateTime<FixedOffset>>()
        .map(|time| Some(time.with_timezone(&Utc)))
        .map_err(|_| de::Error::invalid_value(Unexpected::Str(&text), &Rule(TIME_RULE)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Deserialize)]
    #[serde(rename_all = "camelCase")]
    #[allow(dead_code)]
    struct Q {
        name: String,
        limit: Option<PageLimit>,
        bucket_seconds: Option<BucketSeconds>,
        #[serde(default, deserialize_with = "date_time")]
        from: Option<DateTime<Utc>>,
        count: Option<u32>,
        share: Option<f64>,
        on: Option<bool>,
    }

    fn refusal(query: &str) -> (String, String, Option<String>) {
        let Err(e) = from_query::<Q>(query) else {
            panic!("{query} was accepted");
        };
        (e.field.unwrap_or_default(), e.rule, e.value)
    }

    #[test]
    fn each_refusal_names_the_parameter_and_its_rule() {
        let ok = from_query::<Q>("name=a&limit=%2B7&bucketSeconds=120&from=2026-12-01T10:00:00Z");
        let ok = ok.map_err(|e| e.to_string()).unwrap();
        assert_eq!(PageLimit::or_default(ok.limit), 7);
        assert_eq!(BucketSeconds::or_default(ok.bucket_seconds), 120);
        let rule = |r: &str| r.to_owned();
        assert_eq!(refusal(""), ("name".into(), rule("is required"), None));
        let limit = |v: &str| ("limit".into(), rule(PageLimit::RULE), Some(v.to_owned()));
        assert_eq!(refusal("name=a&limit=0"), limit("0"));
        assert_eq!(refusal("name=a&limit=%2B201"), limit("201"));
        assert_eq!(refusal("name=a&limit=x"), limit("x"));
        assert_eq!(
            refusal("name=a&limit=99999999999999999999"),
            limit("99999999999999999999")
        );
        assert_eq!(refusal("name=a&bucketSeconds=90").2.as_deref(), Some("90"));
        assert_eq!(refusal("name=a&from=yesterday").1, TIME_RULE);
        assert_eq!(refusal("name=a&count=-1").1, "must not be negative");
        assert_eq!(refusal("name=a&count=1.5").1, "must be a whole number");
        assert_eq!(refusal("name=a&count=99999999999").1, "is out of range");
        assert_eq!(refusal("name=a&share=x").1, "must be a number");
        assert_eq!(refusal("name=a&on=yes").1, "must be `true` or `false`");
    }
}
