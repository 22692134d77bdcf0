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
    for rule in &config.rules {
        let Rule::Intersect {
            name,
            attribute,
            min_overlap,
            relax,
        } = rule
        else {
            continue;
        };
        let lowest = relax
            .iter()
            .map(|step| step.min_overlap)
            .fold(*min_overlap, u32::min);
        if let Some(AttributeValue::Set(items)) = ticket_value(config, declared, attribute) {
            if items.len() < lowest as usize {
                return Err(FieldError::new(
                    format!("attributes.{attribute}"),
                    Code::ValidationError,
                    format!(
                        "lists {} value(s), but rule {name} needs at least {lowest} shared \
                         with every other player: this ticket could never be matched",
                        items.len()
                    ),
                ));
            }
        }
    }
    Ok(())
}
