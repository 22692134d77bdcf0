//! A ticket that a rule alone keeps from ever being matched
//! (docs/rules.md, "Rules"): refused when it is generated instead of
//! waiting until it expires.
//!
//! An `intersect` rule holds only where the candidates share at least the
//! larger of their current `minOverlap`s; a set with fewer values than the
//! lowest `minOverlap` the rule ever relaxes to cannot share that many
//! with anyone, at any wait.

use super::declare::Rule;
use super::value::{ticket_set, AttributeValue, DeclaredValues};
use crate::codes::Code;
use crate::config::GameModeConfig;
use crate::validation::FieldError;
use smallvec::SmallVec;

/// Checks every `intersect` rule of `config` against the ticket's own
/// values (`declared`, defaults applied).
///
/// # Errors
/// The first attribute whose set is smaller than its rule's lowest
/// `minOverlap`: `VALIDATION_ERROR` at `attributes.<name>`.
pub fn check_reachable(
    config: &GameModeConfig,
    declared: &DeclaredValues,
) -> Result<(), FieldError> {
    for (attribute, lowest, name) in intersect_floors(config) {
        if let Some(items) = ticket_set(config, declared, attribute) {
            if let Some(e) = too_small(
                items,
                lowest,
                name,
                &format!("attributes.{attribute}"),
                "ticket",
            ) {
                return Err(e);
            }
        }
    }
    Ok(())
}

/// [`check_reachable`] for the values a backfill request sends
/// (docs/rules.md#backfill): only those present (an absent value is read
/// from the roster instead of a default); `field` is the JSON path of the
/// object.
///
/// # Errors
/// Each set smaller than its rule's lowest `minOverlap`:
/// `VALIDATION_ERROR` at `<field>.<name>`.
pub fn check_reachable_sent(
    config: &GameModeConfig,
    values: &DeclaredValues,
    field: &str,
) -> Vec<FieldError> {
    intersect_floors(config)
        .filter_map(|(attribute, lowest, name)| match values.get(attribute) {
            Some(AttributeValue::Set(items)) => too_small(
                items,
                lowest,
                name,
                &format!("{field}.{attribute}"),
                "backfill",
            ),
            _ => None,
        })
        .collect()
}

/// The `intersect` rules' floors by the position of their attribute in
/// the declarations' name order: the cycle's re-check of every waiting
/// search against rules changed since its ticket was generated
/// (docs/rules.md, "Changing the declarations").
pub(crate) struct Floors<'c> {
    /// (position, lowest `minOverlap`, rule name, attribute).
    floors: SmallVec<[(usize, u32, &'c str, &'c str); 2]>,
}

impl<'c> Floors<'c> {
    /// `config`'s; empty without `intersect` rules.
    pub(crate) fn of(config: &'c GameModeConfig) -> Self {
        let floors = config.attributes.as_ref().map_or_else(SmallVec::new, |d| {
            intersect_floors(config)
                .filter_map(|(attribute, lowest, name)| {
                    let at = d.keys().position(|k| k == attribute)?;
                    Some((at, lowest, name, attribute))
                })
                .collect()
        });
        Self { floors }
    }

    /// Checks a search's own values, `row` in the declarations' name order
    /// (`None`: the default, which the mode's validation already holds to
    /// the floor).
    ///
    /// # Errors
    /// The first set smaller than its rule's lowest `minOverlap`:
    /// `ATTRIBUTE_NOT_ALLOWED` at `attributes.<name>`.
    pub(crate) fn check_row(&self, row: &[Option<&AttributeValue>]) -> Result<(), FieldError> {
        for &(at, lowest, name, attribute) in &self.floors {
            let Some(Some(AttributeValue::Set(items))) = row.get(at) else {
                continue;
            };
            // The field is worded only on a failure: this runs for every
            // waiting search at every cycle.
            if items.len() >= lowest as usize {
                continue;
            }
            if let Some(e) = too_small(
                items,
                lowest,
                name,
                &format!("attributes.{attribute}"),
                "ticket",
            ) {
                return Err(FieldError::new(
                    e.field,
                    Code::AttributeNotAllowed,
                    format!(
                        "the game mode's rules no longer match attribute {attribute}: {}",
                        e.message
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// Each `intersect` rule's attribute, the lowest `minOverlap` it relaxes
/// to, and its name.
pub(crate) fn intersect_floors(config: &GameModeConfig) -> impl Iterator<Item = (&str, u32, &str)> {
    config.rules.iter().filter_map(|rule| match rule {
        Rule::Intersect {
            name,
            attribute,
            min_overlap,
            relax,
        } => Some((
            attribute.as_str(),
            relax
                .iter()
                .map(|step| step.min_overlap)
                .fold(*min_overlap, u32::min),
            name.as_str(),
        )),
        _ => None,
    })
}

/// `what` names the holder: `ticket` or `backfill`.
fn too_small(
    items: &[String],
    lowest: u32,
    name: &str,
    field: &str,
    what: &str,
) -> Option<FieldError> {
    (items.len() < lowest as usize).then(|| {
        FieldError::new(
            field,
            Code::ValidationError,
            format!(
                "lists {} value(s), but rule {name} needs at least {lowest} shared \
                 with every other player: this {what} could never be matched",
                items.len()
            ),
        )
    })
}
