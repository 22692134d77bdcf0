//! A backfill's roster under the mode's rules (docs/rules.md#backfill): the
//! values a fill must agree with, and their check when a studio sends them.
//!
//! A fill satisfies every rule against every roster player. The request's
//! own `attributes` (the match's current values, e.g. the map being
//! played) stand for the whole roster; otherwise each roster player's
//! values count: those the roster entry gives, else those a player
//! matchplane matched was matched with. A player with no values known fits
//! every rule but `avoid`, which reads the newcomer's own set against every
//! roster player's id.

use super::declare::Declarations;
use super::parse::check_typed;
use super::value::DeclaredValues;
use crate::codes::Code;
use crate::validation::FieldError;
use serde::{Deserialize, Serialize};

/// What a backfill's roster holds for the rules, kept with the open
/// backfill. Empty in a mode without rules.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RosterValues {
    /// The request's values, each standing for the whole roster.
    #[serde(
        default,
        skip_serializing_if = "crate::rules::DeclaredValues::is_empty"
    )]
    pub attributes: DeclaredValues,
    /// Every roster player, with the values known for them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub players: Vec<RosterMember>,
}

impl RosterValues {
    /// Whether nothing is known (no rule reads anything).
    pub fn is_empty(&self) -> bool {
        self.attributes.is_empty() && self.players.is_empty()
    }
}

/// One roster player under the rules.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RosterMember {
    /// The studio's player id (a newcomer's `avoid` set reads it).
    pub player_id: String,
    /// The player's values; empty when none is known.
    #[serde(
        default,
        skip_serializing_if = "crate::rules::DeclaredValues::is_empty"
    )]
    pub attributes: DeclaredValues,
}

/// Checks values a backfill request sends (its `attributes`, or a roster
/// player's) against the mode's declarations: every key declared, every
/// value of its declaration's type and bounds. Unlike a ticket's, any
/// subset may be sent. `field` is the JSON path of the object
/// (`attributes`, `teams[0].players[1].attributes`).
///
/// # Errors
/// Every failure, `VALIDATION_ERROR` on `<field>.<name>` (with `[i]` for a
/// set entry).
pub fn check_values(
    values: &DeclaredValues,
    declarations: Option<&Declarations>,
    field: &str,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    for (name, value) in values.iter() {
        let at = format!("{field}.{name}");
        match declarations.and_then(|d| d.get(name)) {
            None => errors.push(FieldError::new(
                at,
                Code::ValidationError,
                "not an attribute the game mode declares",
            )),
            Some(declaration) => {
                if let Err(e) = check_typed(declaration, value, &at) {
                    errors.extend(e);
                }
            }
        }
    }
    errors
}
