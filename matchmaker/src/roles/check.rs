//! Validation of `composition` (docs/rules.md, "Role queues"): every
//! failure reported with its field, beside the mode's other errors.

use super::{ANY, MAX_RELAX_STEPS};
use crate::codes::Code;
use crate::config::{GameModeConfig, MatchShape};
use crate::rules::Declaration;
use std::collections::BTreeMap;

/// Longest `relax[].afterSeconds` (one day).
const MAX_AFTER_SECONDS: f64 = 86_400.0;

/// Checks `config.composition`: the attribute a declared `stringSet` with
/// `values`, every role among them, counts summing to the team size of an
/// array shape of equal teams, at most 8 `relax` steps with increasing
/// `afterSeconds`; refused with a flexible shape and with `relaxations`.
pub fn check_composition(config: &GameModeConfig, report: &mut impl FnMut(&str, Code, String)) {
    let Some(c) = &config.composition else {
        return;
    };
    let mut errors = 0usize;
    let mut push = |field: &str, code: Code, message: String| {
        errors += 1;
        report(field, code, message);
    };
    let invalid = Code::ValidationError;
    let mut role_default: Option<&[String]> = None;
    let values: Option<&[String]> =
        match config.attributes.as_ref().and_then(|d| d.get(&c.attribute)) {
            Some(Declaration::StringSet {
                values, default, ..
            }) => {
                role_default = default.as_deref();
                if default.as_ref().is_some_and(Vec::is_empty) {
                    push(
                        &format!("attributes.{}.default", c.attribute),
                        invalid,
                        "a role attribute's default lists at least one role: an empty one \
                         refuses every ticket that leaves the attribute out"
                            .into(),
                    );
                }
                if values.is_none() {
                    push(
                        "composition.attribute",
                        invalid,
                        format!(
                        "attribute {} lists no values: a role attribute names its roles in values",
                        c.attribute
                    ),
                    );
                }
                if values.as_ref().is_some_and(|v| v.iter().any(|r| r == ANY)) {
                    push(
                        &format!("attributes.{}.values", c.attribute),
                        invalid,
                        format!(
                            "`{ANY}` is the seat any role may take in composition.perTeam; \
                             a role cannot be named `{ANY}`"
                        ),
                    );
                }
                values.as_deref()
            }
            Some(d) => {
                push(
                    "composition.attribute",
                    invalid,
                    format!(
                        "attribute {} is a {}; roles need a stringSet",
                        c.attribute,
                        d.type_name()
                    ),
                );
                None
            }
            None => {
                push(
                    "composition.attribute",
                    invalid,
                    format!("`{}` is not a declared attribute", c.attribute),
                );
                None
            }
        };
    let team_size = match &config.match_shape {
        MatchShape::Flexible(_) => {
            push(
                "composition",
                invalid,
                "composition needs an array matchShape, not a flexible one".into(),
            );
            None
        }
        MatchShape::Fixed(shape) => {
            let first = shape.first().copied();
            if shape.iter().any(|s| Some(*s) != first) {
                push(
                    "matchShape",
                    invalid,
                    "composition needs teams of equal size".into(),
                );
                None
            } else {
                first
            }
        }
    };
    if !config.relaxations.is_empty() {
        push(
            "relaxations",
            invalid,
            "shape relaxations are not allowed with composition: relax the roles with composition.relax".into(),
        );
    }
    check_per_team(
        &c.per_team,
        "composition.perTeam",
        values,
        team_size,
        &mut push,
    );
    if c.relax.len() > MAX_RELAX_STEPS {
        push(
            "composition.relax",
            invalid,
            format!(
                "at most {MAX_RELAX_STEPS} relax steps, found {}",
                c.relax.len()
            ),
        );
    }
    let mut previous: Option<f64> = None;
    for (i, step) in c.relax.iter().enumerate() {
        let field = format!("composition.relax[{i}].afterSeconds");
        let after = step.after_seconds;
        if !(0.0..=MAX_AFTER_SECONDS).contains(&after) {
            push(
                &field,
                invalid,
                format!("afterSeconds must be 0 to {MAX_AFTER_SECONDS} seconds"),
            );
        } else if previous.is_some_and(|p| after <= p) {
            push(
                &field,
                invalid,
                "afterSeconds must be strictly increasing".into(),
            );
        }
        if after.is_finite() {
            previous = Some(after);
        }
        check_per_team(
            &step.per_team,
            &format!("composition.relax[{i}].perTeam"),
            values,
            team_size,
            &mut push,
        );
    }
    // A default that no step seats (no role of it, and no `any` seat)
    // refuses every ticket that leaves the attribute out, as an empty one
    // does. Read only on an otherwise valid composition, which compiles.
    let Some(default) = role_default.filter(|d| !d.is_empty()) else {
        return;
    };
    if let Some(lists) = RoleLists::of(config).filter(|_| errors == 0) {
        if !lists.ever_seated(&[lists.mask(default)]) {
            report(
                &format!("attributes.{}.default", c.attribute),
                Code::ValidationError,
                "no step of the mode's composition has a seat for any role of this default: \
                 it refuses every ticket that leaves the attribute out"
                    .into(),
            );
        }
    }
}

/// One `perTeam`: every role among `values` (or `any`), counts summing to
/// `team_size` (when the shape gives one).
fn check_per_team(
    per_team: &BTreeMap<String, u32>,
    field: &str,
    values: Option<&[String]>,
    team_size: Option<u32>,
    push: &mut impl FnMut(&str, Code, String),
) {
    if let Some(values) = values {
        for role in per_team.keys() {
            if role != ANY && !values.contains(role) {
                push(
                    &format!("{field}.{role}"),
                    Code::ValidationError,
                    format!("`{role}` is not among the attribute's values"),
                );
            }
        }
    }
    let sum: u64 = per_team.values().map(|n| u64::from(*n)).sum();
    if let Some(size) = team_size {
        if sum != u64::from(size) {
            push(
                field,
                Code::ValidationError,
                format!("role seats sum to {sum}; every team has {size} players"),
            );
        }
    }
}

/// A ticket's role list (docs/rules.md, "Role queues"): in a mode with
/// `composition`, the attribute's value (sent, or its `default`) lists at
/// least one role. Values outside the attribute's `values` are refused by
/// the attribute's own parse.
///
/// # Errors
/// `VALIDATION_ERROR` on `attributes.<attribute>` for an empty list, or a
/// list of roles no step of the composition has a seat for (nor an `any`
/// seat).
pub fn check_ticket_roles(
    config: &GameModeConfig,
    declared: &crate::rules::DeclaredValues,
) -> Result<(), crate::validation::FieldError> {
    RoleLists::of(config).map_or(Ok(()), |r| r.check(config, declared))
}

/// A composition's roles and every step's seats, compiled once: the
/// cycle's re-check reads every search's role list with them.
pub struct RoleLists<'c> {
    attribute: &'c str,
    roles: Vec<String>,
    steps: Vec<super::RoleSeats>,
    teams: u32,
}

impl<'c> RoleLists<'c> {
    /// `config`'s, `None` without `composition`. With
    /// `parties.keepTogether` a party sits on one team, else over all.
    pub fn of(config: &'c GameModeConfig) -> Option<Self> {
        let c = config.composition.as_ref()?;
        let teams = if config.parties.keep_together {
            1
        } else {
            u32::try_from(config.match_shape.caps().len()).unwrap_or(u32::MAX)
        };
        Some(Self {
            attribute: &c.attribute,
            roles: c.roles().into_iter().map(str::to_owned).collect(),
            steps: std::iter::once(&c.per_team)
                .chain(c.relax.iter().map(|s| &s.per_team))
                .map(|per_team| c.compile(per_team))
                .collect(),
            teams,
        })
    }

    /// A role list's mask over the roles.
    pub fn mask(&self, items: &[String]) -> u64 {
        super::table::mask_of(&self.roles, items)
    }

    /// Whether players listing `masks`, kept together as the mode says,
    /// can be seated at some step (docs/rules.md, "Parties"): a party
    /// that never can fails at the next cycle rather than waiting.
    pub fn ever_seated(&self, masks: &[u64]) -> bool {
        self.steps
            .iter()
            .any(|seats| super::seat::fits_in(masks, seats, self.teams))
    }

    /// [`check_ticket_roles`] with the composition compiled.
    ///
    /// # Errors
    /// As [`check_ticket_roles`].
    pub fn check(
        &self,
        config: &GameModeConfig,
        declared: &crate::rules::DeclaredValues,
    ) -> Result<(), crate::validation::FieldError> {
        let field = || format!("attributes.{}", self.attribute);
        match crate::rules::value::ticket_set(config, declared, self.attribute) {
            Some([]) => Err(crate::validation::FieldError::new(
                field(),
                Code::ValidationError,
                "list at least one role the player will play",
            )),
            Some(items) if !self.ever_seated(&[self.mask(items)]) => {
                Err(crate::validation::FieldError::new(
                    field(),
                    Code::ValidationError,
                    "no step of the mode's composition has a seat for any of these roles",
                ))
            }
            _ => Ok(()),
        }
    }
}
