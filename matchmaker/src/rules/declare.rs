//! The `attributes` and `rules` blocks of a game mode (docs/rules.md) as
//! the studio writes them. [`super::check`] validates them.

use crate::tagged::tagged_enum;
use serde::{Deserialize, Serialize};
use smallvec::SmallVec;
use std::collections::BTreeMap;

/// The attributes a mode's tickets carry beside `mmr`, `latencies` and
/// `data`, by name (`^[a-z][a-zA-Z0-9_]{0,31}$`, at most 16).
pub type Declarations = BTreeMap<String, Declaration>;

tagged_enum! {
/// One declared attribute, tagged by `type` (docs/rules.md, "Attributes").
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub enum Declaration via DeclarationTwin {
    /// A text of 1..=64 bytes, e.g. a client build. A party's members must
    /// all send the same value (`PARTY_ATTRIBUTES_DIFFER` otherwise).
    #[serde(rename_all = "camelCase")]
    String {
        /// The only values a ticket may send (1..=64 distinct); absent: any.
        #[serde(
            default,
            deserialize_with = "crate::config::present",
            skip_serializing_if = "Option::is_none"
        )]
        #[cfg_attr(feature = "openapi", schema(nullable = false))]
        values: Option<Vec<String>>,
        /// The value of a ticket that leaves the attribute out; absent: the
        /// attribute is required (`ATTRIBUTE_REQUIRED`).
        #[serde(
            default,
            deserialize_with = "crate::config::present",
            skip_serializing_if = "Option::is_none"
        )]
        #[cfg_attr(feature = "openapi", schema(nullable = false))]
        default: Option<String>,
    },
    /// A finite number, e.g. a level.
    #[serde(rename_all = "camelCase")]
    Number {
        /// Lowest value a ticket may send.
        #[serde(
            default,
            deserialize_with = "crate::config::present",
            skip_serializing_if = "Option::is_none"
        )]
        #[cfg_attr(feature = "openapi", schema(nullable = false))]
        min: Option<f64>,
        /// Highest value a ticket may send.
        #[serde(
            default,
            deserialize_with = "crate::config::present",
            skip_serializing_if = "Option::is_none"
        )]
        #[cfg_attr(feature = "openapi", schema(nullable = false))]
        max: Option<f64>,
        /// The value of a ticket that leaves it out; absent: required.
        #[serde(
            default,
            deserialize_with = "crate::config::present",
            skip_serializing_if = "Option::is_none"
        )]
        #[cfg_attr(feature = "openapi", schema(nullable = false))]
        default: Option<f64>,
        /// How a party's value is formed from its members' (default `mean`).
        #[serde(default)]
        party: NumberParty,
    },
    /// A set of 0..=32 distinct texts, e.g. the maps a player will play.
    #[serde(rename_all = "camelCase")]
    StringSet {
        /// The only values a ticket may send (1..=64 distinct); required
        /// when an `intersect` rule uses the attribute.
        #[serde(
            default,
            deserialize_with = "crate::config::present",
            skip_serializing_if = "Option::is_none"
        )]
        #[cfg_attr(feature = "openapi", schema(nullable = false))]
        values: Option<Vec<String>>,
        /// The value of a ticket that leaves it out; absent: required.
        #[serde(
            default,
            deserialize_with = "crate::config::present",
            skip_serializing_if = "Option::is_none"
        )]
        #[cfg_attr(feature = "openapi", schema(nullable = false))]
        default: Option<Vec<String>>,
        /// How a party's set is formed (default `intersection`: a value
        /// counts only if every member sent it).
        #[serde(default)]
        party: SetParty,
    },
    /// Player ids (0..=100) this player is never matched with; a party
    /// avoids everyone any member avoids.
    #[serde(rename_all = "camelCase")]
    PlayerSet {
        /// The value of a ticket that leaves it out (usually `[]`); absent:
        /// required.
        #[serde(
            default,
            deserialize_with = "crate::config::present",
            skip_serializing_if = "Option::is_none"
        )]
        #[cfg_attr(feature = "openapi", schema(nullable = false))]
        default: Option<Vec<String>>,
    },
}
}

impl Declaration {
    /// The type's name as written in JSON: `string`, `number`,
    /// `stringSet` or `playerSet`.
    pub fn type_name(&self) -> &'static str {
        match self {
            Declaration::String { .. } => "string",
            Declaration::Number { .. } => "number",
            Declaration::StringSet { .. } => "stringSet",
            Declaration::PlayerSet { .. } => "playerSet",
        }
    }

    /// The `values` list of a `string` or `stringSet`, if any.
    pub fn values(&self) -> Option<&[String]> {
        match self {
            Declaration::String { values, .. } | Declaration::StringSet { values, .. } => {
                values.as_deref()
            }
            _ => None,
        }
    }

    /// Whether a ticket may leave the attribute out.
    pub fn has_default(&self) -> bool {
        match self {
            Declaration::String { default, .. } => default.is_some(),
            Declaration::Number { default, .. } => default.is_some(),
            Declaration::StringSet { default, .. } | Declaration::PlayerSet { default } => {
                default.is_some()
            }
        }
    }
}

/// A party's `number` value: its members' `mean`, `min` or `max`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum NumberParty {
    /// The members' mean.
    #[default]
    Mean,
    /// The lowest member's.
    Min,
    /// The highest member's.
    Max,
}

/// A party's `stringSet` value: the `intersection` or `union` of its
/// members' sets.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum SetParty {
    /// Values every member sent.
    #[default]
    Intersection,
    /// Values any member sent.
    Union,
}

tagged_enum! {
/// One rule over a declared attribute, tagged by `type` (docs/rules.md,
/// "Rules"). Every rule holds between every two candidates of a match.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub enum Rule via RuleTwin {
    /// The same value (`string` or `number`).
    #[serde(rename_all = "camelCase")]
    Equal {
        /// `^[a-z0-9][a-z0-9_-]{0,31}$`, unique in the mode.
        name: String,
        /// The declared attribute it reads.
        attribute: String,
        /// Steps by the candidate's own wait; a step may turn the rule off.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        relax: Vec<EqualStep>,
    },
    /// The sets share at least `minOverlap` values (`stringSet` with
    /// `values`); the match carries the values everyone shares.
    #[serde(rename_all = "camelCase")]
    Intersect {
        /// Unique rule name.
        name: String,
        /// The declared attribute it reads.
        attribute: String,
        /// Values every candidate must share (1..=64, default 1).
        #[serde(default = "one")]
        min_overlap: u32,
        /// Steps lowering `minOverlap` (never raising it).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        relax: Vec<OverlapStep>,
    },
    /// The values differ by at most the smaller of the two candidates'
    /// current `max` (`number`).
    #[serde(rename_all = "camelCase")]
    Distance {
        /// Unique rule name.
        name: String,
        /// The declared attribute it reads.
        attribute: String,
        /// Largest difference (>= 0), in the attribute's unit.
        max: f64,
        /// Steps raising `max` (never lowering it).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        relax: Vec<DistanceStep>,
    },
    /// Neither candidate's set names a player of the other (`playerSet`).
    /// Never relaxed.
    #[serde(rename_all = "camelCase")]
    Avoid {
        /// Unique rule name.
        name: String,
        /// The declared attribute it reads.
        attribute: String,
    },
}
}

fn one() -> u32 {
    1
}

impl Rule {
    /// The rule's name.
    pub fn name(&self) -> &str {
        match self {
            Rule::Equal { name, .. }
            | Rule::Intersect { name, .. }
            | Rule::Distance { name, .. }
            | Rule::Avoid { name, .. } => name,
        }
    }

    /// The attribute the rule reads.
    pub fn attribute(&self) -> &str {
        match self {
            Rule::Equal { attribute, .. }
            | Rule::Intersect { attribute, .. }
            | Rule::Distance { attribute, .. }
            | Rule::Avoid { attribute, .. } => attribute,
        }
    }

    /// The type's name as written in JSON.
    pub fn type_name(&self) -> &'static str {
        match self {
            Rule::Equal { .. } => "equal",
            Rule::Intersect { .. } => "intersect",
            Rule::Distance { .. } => "distance",
            Rule::Avoid { .. } => "avoid",
        }
    }

    /// The `afterSeconds` of each relax step, in order (on the stack for
    /// the 8 steps a valid rule has at most: the cycle's hint reads them).
    pub fn step_times(&self) -> SmallVec<[f64; 8]> {
        match self {
            Rule::Equal { relax, .. } => relax.iter().map(|s| s.after_seconds).collect(),
            Rule::Intersect { relax, .. } => relax.iter().map(|s| s.after_seconds).collect(),
            Rule::Distance { relax, .. } => relax.iter().map(|s| s.after_seconds).collect(),
            Rule::Avoid { .. } => SmallVec::new(),
        }
    }
}

/// An `equal` rule's relax step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EqualStep {
    /// The candidate's wait (seconds, 1..=3600) from which the step holds.
    pub after_seconds: f64,
    /// `true`: the rule no longer binds this candidate (two candidates
    /// past their `off` step may differ).
    pub off: bool,
}

/// An `intersect` rule's relax step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OverlapStep {
    /// The candidate's wait (seconds, 1..=3600) from which the step holds.
    pub after_seconds: f64,
    /// Shared values needed from then on (1..=64, never above the step
    /// before).
    pub min_overlap: u32,
}

/// A `distance` rule's relax step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DistanceStep {
    /// The candidate's wait (seconds, 1..=3600) from which the step holds.
    pub after_seconds: f64,
    /// Largest difference from then on (never below the step before).
    pub max: f64,
}

/// A candidate's own version of a rule at its current wait.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Version {
    /// `equal`: whether the rule is off for it.
    Equal {
        /// Past an `off` step.
        off: bool,
    },
    /// `intersect`: values it needs shared.
    Intersect {
        /// Current `minOverlap`.
        min_overlap: u32,
    },
    /// `distance`: its current `max`.
    Distance {
        /// Current `max`.
        max: f64,
    },
    /// `avoid`: never relaxed.
    Avoid,
}

impl Rule {
    /// This rule's version for a candidate that has waited `wait` seconds:
    /// the last step whose `afterSeconds` it reached, else the base.
    pub fn version_at(&self, wait: f64) -> Version {
        match self {
            Rule::Equal { relax, .. } => Version::Equal {
                off: relax
                    .iter()
                    .rev()
                    .find(|s| wait >= s.after_seconds)
                    .is_some_and(|s| s.off),
            },
            Rule::Intersect {
                min_overlap, relax, ..
            } => Version::Intersect {
                min_overlap: relax
                    .iter()
                    .rev()
                    .find(|s| wait >= s.after_seconds)
                    .map_or(*min_overlap, |s| s.min_overlap),
            },
            Rule::Distance { max, relax, .. } => Version::Distance {
                max: relax
                    .iter()
                    .rev()
                    .find(|s| wait >= s.after_seconds)
                    .map_or(*max, |s| s.max),
            },
            Rule::Avoid { .. } => Version::Avoid,
        }
    }

    /// Seconds from a wait of `wait` until this candidate's own version of
    /// the rule allows `miss` (an `equal` rule: is off; an `intersect`
    /// rule: needs no more than the overlap; a `distance` rule: reaches
    /// the difference): `0` when it already does, `None` when no step
    /// will. A pair is kept apart until both sides allow it.
    pub fn allows_in(&self, wait: f64, miss: Version) -> Option<f64> {
        let allows = |v: Version| match (v, miss) {
            (Version::Equal { off }, _) => off,
            (Version::Intersect { min_overlap }, Version::Intersect { min_overlap: have }) => {
                min_overlap <= have
            }
            // As the group's check compares them (rules/group.rs).
            (Version::Distance { max }, Version::Distance { max: gap }) => max + 1e-9 >= gap,
            _ => false,
        };
        if allows(self.version_at(wait)) {
            return Some(0.0);
        }
        self.step_times()
            .into_iter()
            .filter(|t| *t > wait)
            .find(|t| allows(self.version_at(*t)))
            .map(|t| t - wait)
    }
}
