//! An arrival's `attributes` checked against the scenario's modes
//! (docs/simulate.md, "Inline events"; docs/rules.md): the declared ones
//! as a ticket's, with a compared mode's own ones against its declaration.

use crate::config::GameModeConfig;
use crate::validation::FieldError;
use std::collections::BTreeMap;

/// Keys an arrival's `attributes` may not hold: the arrival's own fields
/// (docs/simulate.md), which a ticket's `attributes` holds beside them.
pub(super) const OWN_FIELDS: [&str; 3] = ["mmr", "latencies", "data"];

/// An arrival's declared attributes checked as a ticket's
/// ([`crate::attributes::check_declared`]): every failure. With a compared
/// mode, an attribute only that mode declares is checked against its
/// declaration there, and the scenario's own mode runs without it (as the
/// compared mode runs without one only the scenario's mode declares). An
/// attribute neither mode declares is refused, and so is `mmr`,
/// `latencies` or `data`, each the arrival's own field.
pub(super) fn check_arrival_attributes(
    config: &GameModeConfig,
    compare: Option<&GameModeConfig>,
    values: &crate::rules::DeclaredValues,
) -> Vec<FieldError> {
    let mut own = BTreeMap::new();
    let mut failed = Vec::new();
    for (name, value) in values.iter() {
        let json = serde_json::to_value(value).unwrap_or(serde_json::Value::Null);
        match (declared_in(Some(config), name), declared_in(compare, name)) {
            (None, Some(declaration)) if !OWN_FIELDS.contains(&name.as_str()) => {
                let field = format!("attributes.{name}");
                if let Err(e) = crate::rules::parse::value_of(declaration, &json, &field) {
                    failed.extend(e);
                }
            }
            _ => {
                own.insert(name.clone(), json);
            }
        }
    }
    let (_, declared_failed) = crate::attributes::check_declared(own, config);
    // A ticket's words for a key its mode does not declare list `mmr`,
    // `latencies` and `data` as expected: they are fields of a ticket's
    // `attributes`, but of an arrival itself.
    failed.extend(declared_failed.into_iter().map(|mut e| {
        let name = e.field.strip_prefix("attributes.").unwrap_or_default();
        if values.contains_key(name) && declared_in(Some(config), name).is_none() {
            e.message = if OWN_FIELDS.contains(&name) {
                format!(
                    "{name} is a field of the arrival itself (a column of its own in a CSV), \
                     not one of its attributes"
                )
            } else {
                unknown_attribute(config, compare)
            };
        }
        e
    }));
    failed
}

/// Why an arrival's attribute no mode declares is refused, with what the
/// modes declare.
fn unknown_attribute(config: &GameModeConfig, compare: Option<&GameModeConfig>) -> String {
    let mut names: Vec<&str> = [Some(config), compare]
        .into_iter()
        .flatten()
        .filter_map(|mode| mode.attributes.as_ref())
        .flat_map(|d| d.keys().map(String::as_str))
        .collect();
    names.sort_unstable();
    names.dedup();
    if names.is_empty() {
        "unknown attribute: the game mode declares no attributes".into()
    } else {
        format!(
            "unknown attribute; the attributes declared are {}",
            names.join(", ")
        )
    }
}

/// The declaration of `name` in `mode`, if it declares one.
pub(super) fn declared_in<'m>(
    mode: Option<&'m GameModeConfig>,
    name: &str,
) -> Option<&'m crate::rules::Declaration> {
    mode.and_then(|m| m.attributes.as_ref())
        .and_then(|d| d.get(name))
}
