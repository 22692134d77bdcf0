//! A ticket that a rule alone keeps from ever being matched
//! (docs/rules.md, "Rules"): refused when it is generated instead of
//! waiting until it expires.
//!
//! An `intersect` rule holds only where the candidates share at least the
//! larger of their current `minOverlap`s; a set with fewer values than the
//! lowest `minOverlap` the rule ever relaxes to cannot share that many
//! with anyone, at any wait.

use super::declare::Rule;
use super::value::{ticket_value, AttributeValue, DeclaredValues};
use crate::codes::Code;
use crate::config::GameModeConfig;
use crate::validation::FieldError;

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
        if let Some(AttributeValue::Set(items)) = ticket_value(config, declared, attribute) {
            if let Some(e) = too_small(
                &items,
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
