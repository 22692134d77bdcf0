//! Validation of a mode's `attributes` and `rules` (docs/rules.md): every
//! failure at once, each naming its field.

use super::declare::{Declaration, Rule};
use super::parse::value_of;
use super::value::{MAX_DECLARATIONS, MAX_SET_ENTRIES, MAX_TEXT_BYTES};
use crate::codes::Code;
use crate::config::GameModeConfig;

/// Most relax steps of one rule.
pub const MAX_RELAX_STEPS: usize = 8;
/// Most `values` of a declaration.
pub const MAX_VALUES: usize = 64;
/// Longest `afterSeconds` of a relax step (seconds).
pub const MAX_STEP_SECONDS: f64 = 3600.0;

/// Names of the attributes every mode has (docs/searching.md).
const RESERVED: [&str; 3] = ["mmr", "latencies", "data"];

/// `^[a-z][a-zA-Z0-9_]{0,31}$`: a declared attribute's name.
pub fn is_attribute_name(name: &str) -> bool {
    let b = name.as_bytes();
    !b.is_empty()
        && b.len() <= 32
        && b[0].is_ascii_lowercase()
        && b[1..]
            .iter()
            .all(|c| c.is_ascii_alphanumeric() || *c == b'_')
}

/// `^[a-z0-9][a-z0-9_-]{0,31}$`: a rule's name.
pub fn is_rule_name(name: &str) -> bool {
    let b = name.as_bytes();
    !b.is_empty()
        && b.len() <= 32
        && (b[0].is_ascii_lowercase() || b[0].is_ascii_digit())
        && b[1..]
            .iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'_' || *c == b'-')
}

/// Checks `attributes` and `rules` of `config`, pushing every failure.
pub fn check_rules(config: &GameModeConfig, push: &mut impl FnMut(&str, Code, String)) {
    let empty = super::Declarations::new();
    let declarations = config.attributes.as_ref().unwrap_or(&empty);
    if declarations.len() > MAX_DECLARATIONS {
        push(
            "attributes",
            Code::ValidationError,
            format!(
                "at most {MAX_DECLARATIONS} attributes, {} given",
                declarations.len()
            ),
        );
    }
    for (name, declaration) in declarations {
        check_declaration(name, declaration, push);
    }
    if config.rules.len() > MAX_DECLARATIONS {
        push(
            "rules",
            Code::ValidationError,
            format!(
                "at most {MAX_DECLARATIONS} rules, {} given",
                config.rules.len()
            ),
        );
    }
    for (i, rule) in config.rules.iter().enumerate() {
        let field = format!("rules[{i}]");
        if !is_rule_name(rule.name()) {
            push(
                &format!("{field}.name"),
                Code::ValidationError,
                "name is 1 to 32 lower-case letters, digits, - and _, starting with a letter or digit (^[a-z0-9][a-z0-9_-]{0,31}$)".into(),
            );
        } else if config.rules[..i].iter().any(|r| r.name() == rule.name()) {
            push(
                &format!("{field}.name"),
                Code::ValidationError,
                format!("rule {} is named twice", rule.name()),
            );
        }
        check_rule(&field, rule, declarations.get(rule.attribute()), push);
    }
}

fn check_declaration(
    name: &str,
    declaration: &Declaration,
    push: &mut impl FnMut(&str, Code, String),
) {
    let field = format!("attributes.{name}");
    if !is_attribute_name(name) {
        push(
            &field,
            Code::ValidationError,
            "an attribute's name must match ^[a-z][a-zA-Z0-9_]{0,31}$".into(),
        );
    } else if RESERVED.contains(&name) {
        push(
            &field,
            Code::ValidationError,
            format!("{name} is a ticket attribute of every mode and cannot be declared"),
        );
    }
    if let Some(values) = declaration.values() {
        if values.is_empty() || values.len() > MAX_VALUES {
            push(
                &format!("{field}.values"),
                Code::ValidationError,
                format!("values lists 1 to {MAX_VALUES} entries"),
            );
        }
        for (i, v) in values.iter().enumerate() {
            if v.is_empty() || v.len() > MAX_TEXT_BYTES {
                push(
                    &format!("{field}.values[{i}]"),
                    Code::ValidationError,
                    format!("a value is 1 to {MAX_TEXT_BYTES} bytes"),
                );
            } else if values[..i].contains(v) {
                push(
                    &format!("{field}.values[{i}]"),
                    Code::ValidationError,
                    format!("{v:?} is listed twice"),
                );
            }
        }
    }
    if let Declaration::Number { min, max, .. } = declaration {
        for (key, bound) in [("min", min), ("max", max)] {
            if bound.is_some_and(|b| !b.is_finite()) {
                push(
                    &format!("{field}.{key}"),
                    Code::ValidationError,
                    "must be a finite number".into(),
                );
            }
        }
        if let (Some(lo), Some(hi)) = (min, max) {
            if lo > hi {
                push(
                    &format!("{field}.max"),
                    Code::ValidationError,
                    format!("max {hi} is below min {lo}"),
                );
            }
        }
    }
    let default = match declaration {
        Declaration::String { default, .. } => default.as_ref().map(|d| serde_json::json!(d)),
        Declaration::Number { default, .. } => default.map(|d| serde_json::json!(d)),
        Declaration::StringSet { default, .. } | Declaration::PlayerSet { default } => {
            default.as_ref().map(|d| serde_json::json!(d))
        }
    };
    if let Some(default) = default {
        if let Err(errors) = value_of(declaration, &default, &format!("{field}.default")) {
            for e in errors {
                push(&e.field, e.code, e.message);
            }
        }
    }
}

fn check_rule(
    field: &str,
    rule: &Rule,
    declaration: Option<&Declaration>,
    push: &mut impl FnMut(&str, Code, String),
) {
    // An undeclared attribute is one failure among the rule's others, all
    // listed at once; the checks that read the declaration skip.
    if declaration.is_none() {
        push(
            &format!("{field}.attribute"),
            Code::ValidationError,
            format!(
                "attribute {} is not declared in attributes",
                rule.attribute()
            ),
        );
    }
    let fits = declaration.is_some_and(|declaration| {
        matches!(
            (rule, declaration),
            (
                Rule::Equal { .. },
                Declaration::String { .. } | Declaration::Number { .. }
            ) | (Rule::Intersect { .. }, Declaration::StringSet { .. })
                | (Rule::Distance { .. }, Declaration::Number { .. })
                | (Rule::Avoid { .. }, Declaration::PlayerSet { .. })
        )
    });
    if let Some(declaration) = declaration.filter(|_| !fits) {
        push(
            &format!("{field}.attribute"),
            Code::ValidationError,
            format!(
                "{} {} rule cannot read {} ({}): equal reads string or number, intersect stringSet, distance number, avoid playerSet",
                if rule.type_name().starts_with(['a', 'e', 'i', 'o', 'u']) {
                    "an"
                } else {
                    "a"
                },
                rule.type_name(),
                rule.attribute(),
                declaration.type_name()
            ),
        );
    }
    if matches!(rule, Rule::Intersect { .. })
        && fits
        && declaration.and_then(Declaration::values).is_none()
    {
        push(
            &format!("{field}.attribute"),
            Code::ValidationError,
            format!(
                "an intersect rule needs attribute {} to list its values",
                rule.attribute()
            ),
        );
    }
    let times = rule.step_times();
    if times.len() > MAX_RELAX_STEPS {
        push(
            &format!("{field}.relax"),
            Code::ValidationError,
            format!("at most {MAX_RELAX_STEPS} relax steps"),
        );
    }
    for (i, t) in times.iter().enumerate() {
        if !(1.0..=MAX_STEP_SECONDS).contains(t) {
            push(
                &format!("{field}.relax[{i}].afterSeconds"),
                Code::ValidationError,
                format!("afterSeconds is 1 to {MAX_STEP_SECONDS}"),
            );
        } else if i > 0 && *t <= times[i - 1] {
            push(
                &format!("{field}.relax[{i}].afterSeconds"),
                Code::ValidationError,
                "afterSeconds must increase strictly from step to step".into(),
            );
        }
    }
    match rule {
        Rule::Equal { relax, .. } => {
            for (i, step) in relax.iter().enumerate() {
                if !step.off {
                    push(
                        &format!("{field}.relax[{i}].off"),
                        Code::ValidationError,
                        "an equal rule's step turns it off: off must be true".into(),
                    );
                }
            }
        }
        Rule::Intersect {
            min_overlap, relax, ..
        } => {
            let mut before = *min_overlap;
            if !(1..=64).contains(min_overlap) {
                push(
                    &format!("{field}.minOverlap"),
                    Code::ValidationError,
                    "minOverlap is 1 to 64".into(),
                );
            }
            for (i, step) in relax.iter().enumerate() {
                if step.min_overlap < 1 || step.min_overlap > before {
                    push(
                        &format!("{field}.relax[{i}].minOverlap"),
                        Code::ValidationError,
                        format!("a step's minOverlap is 1 to the step before's ({before})"),
                    );
                }
                before = before.min(step.min_overlap);
            }
            // A ticket lists only declared values, at most
            // `MAX_SET_ENTRIES` of them: a set smaller than the lowest
            // minOverlap is refused (`check_reachable`), so past either
            // count every ticket would be.
            let declared = declaration
                .and_then(Declaration::values)
                .map_or(usize::MAX, <[String]>::len);
            let count = declared.min(MAX_SET_ENTRIES);
            if fits && before as usize > count {
                let what = if declared > MAX_SET_ENTRIES {
                    format!("the {MAX_SET_ENTRIES} entries a ticket's set may hold")
                } else {
                    format!("the {count} values attribute {} declares", rule.attribute())
                };
                push(
                    &format!("{field}.minOverlap"),
                    Code::ValidationError,
                    format!(
                        "minOverlap (at its lowest, after every relax step: {before}) is more than \
                         {what}: no ticket could ever be matched"
                    ),
                );
            }
            // Nor may the default that a ticket leaving the set out takes.
            if let Some(Declaration::StringSet {
                default: Some(default),
                ..
            }) = declaration
            {
                if fits && default.len() < before as usize {
                    push(
                        &format!("attributes.{}.default", rule.attribute()),
                        Code::ValidationError,
                        format!(
                            "the default lists {} value(s), but rule {} needs at least {before} \
                             shared with every other player: a ticket leaving the attribute out \
                             could never be matched",
                            default.len(),
                            rule.name()
                        ),
                    );
                }
            }
        }
        Rule::Distance { max, relax, .. } => {
            if !max.is_finite() || *max < 0.0 {
                push(
                    &format!("{field}.max"),
                    Code::ValidationError,
                    "max is a finite number >= 0".into(),
                );
            }
            let mut before = *max;
            for (i, step) in relax.iter().enumerate() {
                if !step.max.is_finite() || step.max < before {
                    push(
                        &format!("{field}.relax[{i}].max"),
                        Code::ValidationError,
                        format!("a step's max is finite and at least the step before's ({before})"),
                    );
                }
                before = before.max(step.max);
            }
        }
        Rule::Avoid { .. } => {}
    }
}
