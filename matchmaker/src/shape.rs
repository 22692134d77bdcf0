//! The `matchShape` of a mode: a fixed array of team sizes (docs/game-modes.md) or a
//! flexible object (free-for-all, battle royale, docs/game-modes.md#thin-pools-smaller-matches-and-bots).

use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};

/// Default `settleAfterSeconds` of a flexible shape (seconds).
pub const DEFAULT_SETTLE_AFTER_SECONDS: f64 = 15.0;

/// `matchShape`: `[5, 5]`, or `{"teams": 20, "teamSize": {"min": 1, "max": 3}}`.
///
/// Serialised as written: an array stays an array, an object an object.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(untagged)]
pub enum MatchShape {
    /// Players per team, e.g. `[5, 5]` (exactly that many, docs/game-modes.md).
    Fixed(Vec<u32>),
    /// Teams filled up to a maximum, settling short after a while.
    Flexible(FlexibleShape),
}

/// The flexible `matchShape` object (docs/game-modes.md#thin-pools-smaller-matches-and-bots).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FlexibleShape {
    /// Teams of a full match, 2..=100; `teams × teamSize.max` <= the tier's
    /// `maxMatchSize`.
    #[cfg_attr(feature = "openapi", schema(minimum = 2, maximum = 100))]
    pub teams: u32,
    /// Players per team: `min` >= 1, `min <= max <= 64`.
    pub team_size: TeamSize,
    /// Fewest teams a settled match may have, 2..=`teams`; default `teams`.
    #[serde(
        default,
        deserialize_with = "crate::config::present",
        skip_serializing_if = "Option::is_none"
    )]
    #[cfg_attr(
        feature = "openapi",
        schema(nullable = false, minimum = 2, maximum = 100)
    )]
    pub min_teams: Option<u32>,
    /// Wait of the anchor (seconds, 0..=600, default 15) after which a
    /// match may form with `minTeams` teams of at least `min` players.
    #[serde(
        default,
        deserialize_with = "crate::config::present",
        skip_serializing_if = "Option::is_none"
    )]
    #[cfg_attr(
        feature = "openapi",
        schema(nullable = false, minimum = 0, maximum = 600)
    )]
    pub settle_after_seconds: Option<f64>,
}

/// `teamSize` of a flexible shape (players).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct TeamSize {
    /// Fewest players of a team in a settled match, >= 1.
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 64))]
    pub min: u32,
    /// A team is full at `max`: `min..=64`.
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 64))]
    pub max: u32,
}

impl FlexibleShape {
    /// `minTeams`, defaulted to `teams`.
    pub fn min_teams(&self) -> u32 {
        self.min_teams.unwrap_or(self.teams)
    }

    /// `settleAfterSeconds`, defaulted to 15.
    pub fn settle_after(&self) -> f64 {
        self.settle_after_seconds
            .unwrap_or(DEFAULT_SETTLE_AFTER_SECONDS)
    }
}

impl MatchShape {
    /// The seats of a full match per team: the array itself, or `teams`
    /// teams of `max` players.
    pub fn caps(&self) -> Vec<u32> {
        match self {
            MatchShape::Fixed(v) => v.clone(),
            MatchShape::Flexible(f) => vec![f.team_size.max; f.teams as usize],
        }
    }

    /// The flexible object, if the shape is one.
    pub fn flexible(&self) -> Option<&FlexibleShape> {
        match self {
            MatchShape::Flexible(f) => Some(f),
            MatchShape::Fixed(_) => None,
        }
    }

    /// Seats of a full match (players): the sum, or `teams × max`.
    pub fn size(&self) -> u64 {
        match self {
            MatchShape::Fixed(v) => v.iter().map(|s| u64::from(*s)).sum(),
            MatchShape::Flexible(f) => u64::from(f.teams) * u64::from(f.team_size.max),
        }
    }

    /// The largest team (players).
    pub fn largest_team(&self) -> u32 {
        match self {
            MatchShape::Fixed(v) => v.iter().copied().max().unwrap_or(0),
            MatchShape::Flexible(f) => f.team_size.max,
        }
    }
}

impl From<Vec<u32>> for MatchShape {
    fn from(v: Vec<u32>) -> Self {
        MatchShape::Fixed(v)
    }
}

impl PartialEq<Vec<u32>> for MatchShape {
    fn eq(&self, other: &Vec<u32>) -> bool {
        matches!(self, MatchShape::Fixed(v) if v == other)
    }
}

impl PartialEq<MatchShape> for Vec<u32> {
    fn eq(&self, other: &MatchShape) -> bool {
        other == self
    }
}

/// An array is a fixed shape, an object a flexible one; anything else is
/// refused with a message naming both forms.
impl<'de> Deserialize<'de> for MatchShape {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ShapeVisitor;
        impl<'de> Visitor<'de> for ShapeVisitor {
            type Value = MatchShape;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an array of team sizes or a {\"teams\", \"teamSize\"} object")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<MatchShape, A::Error> {
                Vec::<u32>::deserialize(de::value::SeqAccessDeserializer::new(seq))
                    .map(MatchShape::Fixed)
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<MatchShape, A::Error> {
                FlexibleShape::deserialize(de::value::MapAccessDeserializer::new(map))
                    .map(MatchShape::Flexible)
            }
        }
        deserializer.deserialize_any(ShapeVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_forms_round_trip() {
        let fixed: MatchShape = serde_json::from_str("[5,5]").unwrap_or(MatchShape::Fixed(vec![]));
        assert_eq!(fixed, vec![5, 5]);
        assert_eq!(serde_json::to_string(&fixed).ok().as_deref(), Some("[5,5]"));
        let text = r#"{"teams":20,"teamSize":{"min":1,"max":3}}"#;
        let flex: Result<MatchShape, _> = serde_json::from_str(text);
        let flex = flex.ok();
        assert_eq!(flex.as_ref().map(MatchShape::size), Some(60));
        assert_eq!(
            flex.and_then(|f| serde_json::to_string(&f).ok()).as_deref(),
            Some(text)
        );
    }

    #[test]
    fn unknown_fields_and_scalars_are_refused() {
        assert!(serde_json::from_str::<MatchShape>(
            r#"{"teams":2,"teamSize":{"min":1,"max":1},"x":1}"#
        )
        .is_err());
        assert!(serde_json::from_str::<MatchShape>("5").is_err());
    }
}
