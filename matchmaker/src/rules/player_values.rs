//! A matched player's values of the declared attributes (docs/rules.md,
//! "The match"): what the player's ticket sent, and the mode's `default`
//! of each attribute it left out; a value of an attribute the mode no
//! longer declares is left out, as the cycle ignores it.
//!
//! Both parts are shared, not copied: the ticket's values with its search
//! in the pool, the defaults with every player of the cycle. A match of a
//! 100 000-search pool thus costs two reference counts per player, where a
//! filled-in copy cost a map and its strings (docs/performance.md, "Rules
//! over attributes"). Serialised, the two read as one JSON object.

use super::value::{effective, AttributeValue, DeclaredValues};
use crate::config::GameModeConfig;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::sync::Arc;

/// What a mode's declarations give every matched player alike: each
/// declared attribute's `default`, and the declared names (sorted).
#[derive(Debug, Default)]
pub struct ModeValues {
    defaults: DeclaredValues,
    /// `None`: every own value counts (values read back, with no mode).
    declared: Option<Vec<String>>,
}

impl ModeValues {
    fn declares(&self, name: &str) -> bool {
        self.declared
            .as_ref()
            .is_none_or(|names| names.binary_search_by(|n| n.as_str().cmp(name)).is_ok())
    }
}

/// A player's own values and the mode's defaults for the rest: read as one
/// map ([`PlayerValues::get`], [`PlayerValues::iter`]), serialised as one
/// JSON object (an own value wins over a default; an own value of an
/// attribute the mode does not declare is left out).
#[derive(Debug, Clone, Default)]
pub struct PlayerValues {
    own: Arc<DeclaredValues>,
    mode: Arc<ModeValues>,
}

impl PlayerValues {
    /// `own` values under the mode's declarations ([`defaults_of`]).
    pub fn new(own: Arc<DeclaredValues>, mode: Arc<ModeValues>) -> Self {
        Self { own, mode }
    }

    /// The values of `own` alone.
    pub fn own(own: Arc<DeclaredValues>) -> Self {
        Self {
            own,
            mode: Arc::default(),
        }
    }

    /// The player's value of attribute `name`, its own else the default.
    pub fn get(&self, name: &str) -> Option<&AttributeValue> {
        if !self.mode.declares(name) {
            return None;
        }
        self.own.get(name).or_else(|| self.mode.defaults.get(name))
    }

    /// Whether there is no value at all.
    pub fn is_empty(&self) -> bool {
        self.mode.defaults.is_empty() && self.own.keys().all(|k| !self.mode.declares(k))
    }

    /// Every value by name, in name order (each name once).
    pub fn iter(&self) -> impl Iterator<Item = (&String, &AttributeValue)> {
        let own = &self.own;
        let declared = self.own.iter().filter(|(k, _)| self.mode.declares(k));
        let defaults = self
            .mode
            .defaults
            .iter()
            .filter(|(k, _)| !own.contains_key(*k));
        let mut merged: Vec<(&String, &AttributeValue)> = declared.chain(defaults).collect();
        merged.sort_unstable_by(|a, b| a.0.cmp(b.0));
        merged.into_iter()
    }

    /// The values as one map (a copy).
    pub fn to_values(&self) -> DeclaredValues {
        self.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
    }
}

impl PartialEq for PlayerValues {
    fn eq(&self, other: &Self) -> bool {
        self.iter().eq(other.iter())
    }
}

impl From<DeclaredValues> for PlayerValues {
    fn from(own: DeclaredValues) -> Self {
        Self::own(Arc::new(own))
    }
}

impl Serialize for PlayerValues {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.iter())
    }
}

impl<'de> Deserialize<'de> for PlayerValues {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        DeclaredValues::deserialize(deserializer).map(Self::from)
    }
}

/// What `config`'s declarations give every matched player: each
/// declaration's `default` (the values a player who left an attribute out
/// holds) and the declared names (none without declarations).
pub fn defaults_of(config: &GameModeConfig) -> Arc<ModeValues> {
    let declarations = config.attributes.iter().flatten();
    let defaults = declarations
        .clone()
        .filter_map(|(name, d)| effective(d, None).map(|v| (name.clone(), v)))
        .collect();
    // A BTreeMap's keys come sorted.
    let declared = declarations.map(|(name, _)| name.clone()).collect();
    Arc::new(ModeValues {
        defaults,
        declared: Some(declared),
    })
}
