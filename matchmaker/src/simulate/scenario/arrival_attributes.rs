//! An arrival's `attributes` checked against the scenario's modes
//! (docs/simulate.md, "Inline events"; docs/rules.md): the declared ones
//! as a ticket's, with a compared mode's own ones against its declaration.

use crate::config::GameModeConfig;
use crate::rules::own_players::{check_own_players, Owner};
use crate::rules::DeclaredValues;
use crate::validation::FieldError;
use std::collections::BTreeMap;

/// Keys an arrival's `attributes` may not hold: the arrival's own fields
/// (docs/simulate.md), which a ticket's `attributes` holds beside them.
pub(crate) const OWN_FIELDS: [&str; 3] = ["mmr", "latencies", "data"];

/// An arrival's declared attributes, as JSON (an inline arrival's as
/// written, docs/simulate.md), checked as a ticket's
/// ([`crate::attributes::check_declared`], `POST …/tickets`): every failure,
/// in its words (a `null` or a value of the wrong type is one failure of
/// its attribute among the others). With a compared mode, an attribute
/// only that mode declares is checked against its declaration there, and
/// the scenario's own mode runs without it (as the compared mode runs
/// without one only the scenario's mode declares). An attribute neither
/// mode declares is refused, and so is `mmr`, `latencies` or `data`, each
/// the arrival's own field. A block list naming the arrival's own player
/// or a member of its party is refused in either mode's attributes, as a
/// ticket's ([`crate::rules::own_players`]).
///
/// Returns the values that parsed and every failure; the attributes are
/// valid only when the failures are empty.
pub(super) fn parse_arrival_attributes(
    config: &GameModeConfig,
    compare: Option<&GameModeConfig>,
    values: BTreeMap<String, serde_json::Value>,
    owner: Owner<'_>,
) -> (DeclaredValues, Vec<FieldError>) {
    let mut own = BTreeMap::new();
    let mut compared = Vec::new();
    let mut failed = Vec::new();
    let sent: Vec<String> = values.keys().cloned().collect();
    for (name, json) in values {
        match (
            declared_in(Some(config), &name),
            declared_in(compare, &name),
        ) {
            (None, Some(declaration)) if !OWN_FIELDS.contains(&name.as_str()) => {
                let field = format!("attributes.{name}");
                match crate::rules::parse::value_of(declaration, &json, &field) {
                    Ok(value) => compared.push((name, value)),
                    Err(e) => failed.extend(e),
                }
            }
            _ => {
                own.insert(name, json);
            }
        }
    }
    let (mut parsed, declared_failed) =
        crate::attributes::check_declared(own.into(), config, owner);
    let compared: DeclaredValues = compared.into_iter().collect();
    failed.extend(check_own_players(
        &compared,
        |name| declared_in(compare, name),
        owner,
    ));
    for (name, value) in compared.iter() {
        parsed.insert(name.clone(), value.clone());
    }
    // A ticket's words for a key its mode does not declare list `mmr`,
    // `latencies` and `data` as expected: they are fields of a ticket's
    // `attributes`, but of an arrival itself.
    failed.extend(declared_failed.into_iter().map(|mut e| {
        let name = e.field.strip_prefix("attributes.").unwrap_or_default();
        if sent.iter().any(|s| s == name) && declared_in(Some(config), name).is_none() {
            e.message = if OWN_FIELDS.contains(&name) {
                own_field(name)
            } else {
                unknown_attribute(config, compare)
            };
        }
        e
    }));
    (parsed, failed)
}

/// [`parse_arrival_attributes`] of values already read (an arrivals CSV's,
/// a recording's): every failure.
pub(super) fn check_arrival_attributes(
    config: &GameModeConfig,
    compare: Option<&GameModeConfig>,
    values: &DeclaredValues,
    owner: Owner<'_>,
) -> Vec<FieldError> {
    let json = values
        .iter()
        .map(|(name, value)| {
            let json = serde_json::to_value(value).unwrap_or(serde_json::Value::Null);
            (name.clone(), json)
        })
        .collect();
    parse_arrival_attributes(config, compare, json, owner).1
}

/// Why `name` (`mmr`, `latencies` or `data`) is refused inside an arrival's
/// `attributes` (docs/simulate.md): it is the arrival's own field.
pub(crate) fn own_field(name: &str) -> String {
    if name == "data" {
        // An arrivals CSV has no `data` column (docs/simulate.md, "`arrivalsCsv`").
        "data is a field of the arrival itself, not one of its attributes \
         (an arrivals CSV carries no data)"
            .into()
    } else {
        format!(
            "{name} is a field of the arrival itself (a column of its own in a CSV), \
             not one of its attributes"
        )
    }
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
