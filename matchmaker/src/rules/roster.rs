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
use crate::config::GameModeConfig;
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

/// Which object of a backfill request holds the values checked: the
/// request's own `attributes`, or a roster entry's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SentIn {
    /// The request's `attributes`, standing for the whole roster.
    Request,
    /// A roster entry's `attributes` (`teams[t].players[p].attributes`).
    Entry,
}

/// [`check_values`] for a backfill request of `config`'s mode, and the
/// composition's attribute refused when no rule reads it
/// ([`unread_roles`]): the seats of a role queue's backfill come from its
/// roster's `role`s (docs/rules.md, "Backfill by role"), so a value of it
/// would be kept and shown, and change nothing.
///
/// # Errors
/// Every failure, `VALIDATION_ERROR` on `<field>.<name>` (with `[i]` for a
/// set entry); the composition's attribute only on `<field>.<name>`.
pub fn check_sent(
    values: &DeclaredValues,
    config: &GameModeConfig,
    field: &str,
    sent_in: SentIn,
) -> Vec<FieldError> {
    let Some(roles) = unread_roles(config).filter(|r| values.contains_key(*r)) else {
        return check_values(values, config.attributes.as_ref(), field);
    };
    let others: DeclaredValues = values
        .iter()
        .filter(|(name, _)| name.as_str() != roles)
        .map(|(name, value)| (name.clone(), value.clone()))
        .collect();
    let mut errors = vec![roles_not_read(roles, field, sent_in)];
    errors.extend(check_values(&others, config.attributes.as_ref(), field));
    errors
}

/// The composition's attribute of `config` when no rule reads it: a value
/// a backfill request sends for it has no use.
pub fn unread_roles(config: &GameModeConfig) -> Option<&str> {
    let attribute = config.composition.as_ref()?.attribute.as_str();
    (!config.rules.iter().any(|r| r.attribute() == attribute)).then_some(attribute)
}

/// The refusal of a value of the composition's attribute `roles` (see
/// [`unread_roles`]) in the object at `field`.
pub fn roles_not_read(roles: &str, field: &str, sent_in: SentIn) -> FieldError {
    let what = match sent_in {
        SentIn::Request => {
            "a backfill's open seats follow its roster (each roster player's `role`, \
             else the one matchplane seated it in)"
        }
        SentIn::Entry => {
            "a roster player's seat is its `role` (`\"role\": \"tank\"`; left out, the \
             one matchplane seated it in): give `role` instead"
        }
    };
    FieldError::new(
        format!("{field}.{roles}"),
        Code::ValidationError,
        format!(
            "{roles} is the composition's attribute and no rule reads it: {what}, \
             so this value would change nothing; leave it out"
        ),
    )
}
