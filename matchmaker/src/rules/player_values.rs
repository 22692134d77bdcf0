//! A matched player's values of the declared attributes (docs/rules.md,
//! "The match"): what the player's ticket sent, and the mode's `default`
//! of each attribute it left out.
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

/// A player's own values and the mode's defaults for the rest: read as one
/// map ([`PlayerValues::get`], [`PlayerValues::iter`]), serialised as one JSON object (an own value wins over a default).
#[derive(Debug, Clone, Default)]
pub struct PlayerValues {
    own: Arc<DeclaredValues>,
    defaults: Arc<DeclaredValues>,
}

impl PlayerValues {
    /// `own` values with `defaults` for the attributes `own` lacks.
    pub fn new(own: Arc<DeclaredValues>, defaults: Arc<DeclaredValues>) -> Self {
        Self { own, defaults }
    }

    /// The values of `own` alone.
    pub fn own(own: Arc<DeclaredValues>) -> Self {
        Self {
            own,
            defaults: Arc::default(),
        }
    }

    /// The player's value of attribute `name`, its own else the default.
    pub fn get(&self, name: &str) -> Option<&AttributeValue> {
        self.own.get(name).or_else(|| self.defaults.get(name))
    }

    /// Whether there is no value at all.
    pub fn is_empty(&self) -> bool {
        self.own.is_empty() && self.defaults.is_empty()
    }

    /// Every value by name, in name order (each name once).
    pub fn iter(&self) -> impl Iterator<Item = (&String, &AttributeValue)> {
        let own = &self.own;
        let defaults = self.defaults.iter().filter(|(k, _)| !own.contains_key(*k));
        let mut merged: Vec<(&String, &AttributeValue)> = own.iter().chain(defaults).collect();
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

/// Each declaration's `default`, by name: the values a player who left an
/// attribute out holds (empty without declarations).
pub fn defaults_of(config: &GameModeConfig) -> Arc<DeclaredValues> {
    let values = config
        .attributes
        .iter()
        .flatten()
        .filter_map(|(name, d)| effective(d, None).map(|v| (name.clone(), v)));
    Arc::new(values.collect())
}
