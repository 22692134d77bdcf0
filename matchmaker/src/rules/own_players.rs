//! A block list naming the ticket's own player or a member of its own
//! party (docs/rules.md, "Attributes"): refused when the ticket is
//! generated. An `avoid` rule compares candidates, and a party is one
//! candidate, so such an entry would never keep anyone apart: the party is
//! matched together whatever its members block, and nobody else is the
//! player itself.
//!
//! A backfill request's block lists (its own, standing for the whole
//! roster, and each roster player's) are checked alike against its roster
//! ([`check_roster_players`]): a roster is one match, as a party is one
//! candidate.
//!
//! Every `playerSet` is checked, whether or not an `avoid` rule reads it
//! now: its meaning (players this player is never matched with) is the
//! type's own, a rule added later reads it, and the cycle's re-check after
//! a config change never looks at a set's entries again.

use super::declare::Declaration;
use super::value::{AttributeValue, DeclaredValues};
use crate::codes::Code;
use crate::search::Party;
use crate::validation::FieldError;

/// Whose values a ticket's attributes are: its player and its party.
#[derive(Debug, Clone, Copy)]
pub struct Owner<'a> {
    /// The ticket's player id.
    pub player_id: &'a str,
    /// The ticket's party, if any (its members include the player).
    pub party: Option<&'a Party>,
}

impl<'a> Owner<'a> {
    /// The owner of a ticket of `player_id` in `party`.
    pub fn new(player_id: &'a str, party: Option<&'a Party>) -> Self {
        Self { player_id, party }
    }
}

/// Checks every `playerSet` value the ticket sent (`values`; a mode's
/// `default` is the mode's own) against its owner: an entry naming the
/// ticket's own player, or a member of its own party, is refused.
/// `declaration` gives each attribute's declaration (`None`: not one).
///
/// # Errors
/// Each such entry, `VALIDATION_ERROR` at `attributes.<name>[i]`.
pub fn check_own_players<'d>(
    values: &DeclaredValues,
    declaration: impl Fn(&str) -> Option<&'d Declaration>,
    owner: Owner<'_>,
) -> Vec<FieldError> {
    refused_entries(values, declaration, "attributes", |item| {
        owner.refusal(item)
    })
}

/// [`check_own_players`] over the `playerSet` values that failed their own
/// parse (`refused`: each one's name and value as sent), so that an entry
/// naming the owner is listed beside the entry that failed (every failure
/// of a ticket is listed at once): each text entry, at its index in the
/// list as sent.
///
/// # Errors
/// Each such entry, `VALIDATION_ERROR` at `attributes.<name>[i]`.
pub fn check_own_players_sent(
    refused: &[(String, serde_json::Value)],
    owner: Owner<'_>,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    for (name, value) in refused {
        let Some(items) = value.as_array() else {
            continue;
        };
        let texts = items
            .iter()
            .enumerate()
            .filter_map(|(i, item)| Some((i, item.as_str()?)));
        refused_in(
            name,
            texts,
            "attributes",
            |item| owner.refusal(item),
            &mut errors,
        );
    }
    errors
}

impl Owner<'_> {
    /// Why `item`, an entry of the owner's block list, is refused: it
    /// names the ticket's own player or a member of its own party.
    fn refusal(&self, item: &str) -> Option<String> {
        let members = self.party.map_or(&[][..], |p| p.members.as_slice());
        if item == self.player_id {
            Some(format!(
                "{item:?} names the ticket's own player: a block list names \
                 other players; leave it out"
            ))
        } else if members.iter().any(|m| m == item) {
            let party = self.party.map_or("", |p| p.id.as_str());
            Some(format!(
                "{item:?} names a member of the ticket's own party ({party}): a party \
                 is matched together, so its members never keep each other out; \
                 leave it out, or leave the party"
            ))
        } else {
            None
        }
    }
}

/// Checks every `playerSet` value of a backfill request's object at
/// `field` (`attributes`, or `teams[t].players[p].attributes`) against the
/// request's own roster (`roster`: its player ids): an entry naming a
/// roster player is refused, as a ticket's naming its own player or party
/// (the roster is already one match). `declaration` gives each
/// attribute's declaration (`None`: not one).
///
/// # Errors
/// Each such entry, `VALIDATION_ERROR` at `<field>.<name>[i]`.
pub fn check_roster_players<'d>(
    values: &DeclaredValues,
    declaration: impl Fn(&str) -> Option<&'d Declaration>,
    roster: &[&str],
    field: &str,
) -> Vec<FieldError> {
    refused_entries(values, declaration, field, |item| {
        roster.contains(&item).then(|| {
            format!(
                "{item:?} is a player of this backfill's own roster: the roster is \
                 already one match, so its players never keep each other out; \
                 leave it out"
            )
        })
    })
}

/// Each entry of a `playerSet` value in `values` that `refusal` words a
/// refusal for, as a `VALIDATION_ERROR` at `<field>.<name>[i]`.
fn refused_entries<'d>(
    values: &DeclaredValues,
    declaration: impl Fn(&str) -> Option<&'d Declaration>,
    field: &str,
    refusal: impl Fn(&str) -> Option<String>,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    for (name, value) in values.iter() {
        let (Some(Declaration::PlayerSet { .. }), AttributeValue::Set(items)) =
            (declaration(name), value)
        else {
            continue;
        };
        let texts = items.iter().enumerate().map(|(i, s)| (i, s.as_str()));
        refused_in(name, texts, field, &refusal, &mut errors);
    }
    errors
}

/// Adds to `errors` each of `entries` (index, text) of attribute `name`
/// that `refusal` words a refusal for, at `<field>.<name>[i]`.
fn refused_in<'i>(
    name: &str,
    entries: impl Iterator<Item = (usize, &'i str)>,
    field: &str,
    refusal: impl Fn(&str) -> Option<String>,
    errors: &mut Vec<FieldError>,
) {
    for (i, item) in entries {
        if let Some(message) = refusal(item) {
            errors.push(FieldError::new(
                format!("{field}.{name}[{i}]"),
                Code::ValidationError,
                message,
            ));
        }
    }
}
