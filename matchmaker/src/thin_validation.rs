//! Validation of the thin-pool blocks (docs/game-modes.md#thin-pools-smaller-matches-and-bots): flexible shapes,
//! `relaxations`, `bots` and `maxTolerance`. Called by
//! [`crate::validation::validate`], which lists every failure at once.

use crate::codes::Code;
use crate::config::{FlexibleShape, GameModeConfig, MatchShape};
use crate::tier::Tier;

/// Most relaxation steps a mode may have.
pub const MAX_RELAXATIONS: usize = 8;
/// Most teams of a flexible shape.
pub const MAX_FLEXIBLE_TEAMS: u32 = 100;
/// Largest `teamSize.max` of a flexible shape (players).
pub const MAX_TEAM_SIZE: u32 = 64;
/// Longest `settleAfterSeconds` (seconds).
pub const MAX_SETTLE_AFTER_SECONDS: f64 = 600.0;
/// Longest `afterSeconds` / `fillAfterSeconds` (seconds): one day.
pub const MAX_AFTER_SECONDS: f64 = 86_400.0;

/// The flexible `matchShape` rules of docs/game-modes.md#thin-pools-smaller-matches-and-bots.
pub(crate) fn check_flexible(
    flex: &FlexibleShape,
    config: &GameModeConfig,
    tier: &Tier,
    push: &mut impl FnMut(&str, Code, String),
) {
    if !(2..=MAX_FLEXIBLE_TEAMS).contains(&flex.teams) {
        push(
            "matchShape.teams",
            Code::ValidationError,
            format!("teams must be 2 to {MAX_FLEXIBLE_TEAMS}, is {}", flex.teams),
        );
    }
    let (min, max) = (flex.team_size.min, flex.team_size.max);
    if min < 1 {
        push(
            "matchShape.teamSize.min",
            Code::ValidationError,
            "teamSize.min must be at least 1".into(),
        );
    }
    if max < min || max > MAX_TEAM_SIZE {
        push(
            "matchShape.teamSize.max",
            Code::ValidationError,
            format!("teamSize.max must be at least min ({min}) and at most {MAX_TEAM_SIZE}"),
        );
    }
    if let Some(m) = flex.min_teams {
        if m < 2 || m > flex.teams {
            push(
                "matchShape.minTeams",
                Code::ValidationError,
                format!("minTeams must be 2 to teams ({}), is {m}", flex.teams),
            );
        }
    }
    if let Some(s) = flex.settle_after_seconds {
        if !(0.0..=MAX_SETTLE_AFTER_SECONDS).contains(&s) {
            push(
                "matchShape.settleAfterSeconds",
                Code::ValidationError,
                format!("settleAfterSeconds must be 0 to {MAX_SETTLE_AFTER_SECONDS}"),
            );
        }
    }
    let size = u64::from(flex.teams) * u64::from(max);
    if size > u64::from(tier.max_match_size) {
        push(
            "matchShape",
            Code::MatchSizeLimitExceeded,
            format!(
                "teams × teamSize.max is {size} players, tier {} allows {}",
                tier.name, tier.max_match_size
            ),
        );
    }
    if config.parties.max_size > max {
        push(
            "parties.maxSize",
            Code::PartySizeExceedsShape,
            format!(
                "a party of {} cannot be one team's core in teams of at most {max}",
                config.parties.max_size
            ),
        );
    }
    if !config.parties.keep_together {
        push(
            "parties.keepTogether",
            Code::ValidationError,
            "a flexible matchShape always keeps parties together; keepTogether false is refused"
                .into(),
        );
    }
}

/// The `relaxations` rules of docs/game-modes.md#thin-pools-smaller-matches-and-bots: at most 8, `afterSeconds` strictly
/// increasing, same team count, every team 1..=the base's, sum >= 2; refused
/// with a flexible shape.
pub(crate) fn check_relaxations(
    config: &GameModeConfig,
    push: &mut impl FnMut(&str, Code, String),
) {
    let steps = &config.relaxations;
    if steps.is_empty() {
        return;
    }
    let base = match &config.match_shape {
        MatchShape::Fixed(base) => base,
        MatchShape::Flexible(_) => {
            push(
                "relaxations",
                Code::ValidationError,
                "relaxations need an array matchShape (a flexible shape settles instead)".into(),
            );
            return;
        }
    };
    if steps.len() > MAX_RELAXATIONS {
        push(
            "relaxations",
            Code::ValidationError,
            format!(
                "at most {MAX_RELAXATIONS} relaxations, found {}",
                steps.len()
            ),
        );
    }
    let mut previous: Option<f64> = None;
    // Players in all of the shape before (the base shape first): each step
    // is a smaller match, tried once the one before could not be made.
    let mut before: u64 = base.iter().map(|s| u64::from(*s)).sum();
    for (i, step) in steps.iter().enumerate() {
        let after = step.after_seconds;
        if !(0.0..=MAX_AFTER_SECONDS).contains(&after) {
            push(
                &format!("relaxations[{i}].afterSeconds"),
                Code::ValidationError,
                format!("afterSeconds must be 0 to {MAX_AFTER_SECONDS} seconds"),
            );
        } else if previous.is_some_and(|p| after <= p) {
            push(
                &format!("relaxations[{i}].afterSeconds"),
                Code::ValidationError,
                "afterSeconds must be strictly increasing".into(),
            );
        }
        if after.is_finite() {
            previous = Some(after);
        }
        let field = format!("relaxations[{i}].matchShape");
        let shape = &step.match_shape;
        if shape.len() != base.len() {
            push(
                &field,
                Code::ValidationError,
                format!(
                    "a relaxed shape has the base shape's {} teams, has {}",
                    base.len(),
                    shape.len()
                ),
            );
        }
        for (t, seats) in shape.iter().enumerate() {
            if *seats == 0 {
                push(
                    &format!("{field}[{t}]"),
                    Code::ValidationError,
                    "every team needs at least one player".into(),
                );
            } else if base.get(t).is_some_and(|b| seats > b) {
                push(
                    &format!("{field}[{t}]"),
                    Code::ValidationError,
                    format!(
                        "{seats} players exceed the base shape's team of {}",
                        base[t]
                    ),
                );
            }
        }
        let sum: u64 = shape.iter().map(|s| u64::from(*s)).sum();
        if sum < 2 {
            push(
                &field,
                Code::ValidationError,
                format!("a match needs at least 2 players, the shape sums to {sum}"),
            );
        } else if sum >= before {
            let what = if i == 0 {
                "the base shape"
            } else {
                "the step before"
            };
            push(
                &field,
                Code::ValidationError,
                format!("a relaxed shape is a smaller match: {sum} players, {what} has {before}"),
            );
        }
        before = before.min(sum);
    }
}

/// The `bots` rules of docs/game-modes.md#thin-pools-smaller-matches-and-bots: `fillAfterSeconds` >= 1 and >= the
/// last relaxation's `afterSeconds`, `minHumans` 1..=the match size.
pub(crate) fn check_bots(config: &GameModeConfig, push: &mut impl FnMut(&str, Code, String)) {
    let Some(bots) = &config.bots else {
        return;
    };
    let fill = bots.fill_after_seconds;
    if !fill.is_finite() || !(1.0..=MAX_AFTER_SECONDS).contains(&fill) {
        push(
            "bots.fillAfterSeconds",
            Code::ValidationError,
            format!("fillAfterSeconds must be 1 to {MAX_AFTER_SECONDS} seconds"),
        );
    } else if let Some(last) = config
        .relaxations
        .last()
        .map(|r| r.after_seconds)
        .filter(|a| a.is_finite())
    {
        if fill < last {
            push(
                "bots.fillAfterSeconds",
                Code::ValidationError,
                format!(
                    "fillAfterSeconds must be at least the last relaxation's afterSeconds ({last})"
                ),
            );
        }
    }
    let size = config.match_shape.size();
    if bots.min_humans < 1 || u64::from(bots.min_humans) > size {
        push(
            "bots.minHumans",
            Code::ValidationError,
            format!("minHumans must be 1 to the match size ({size})"),
        );
    }
}

/// `maxTolerance` (docs/game-modes.md#thin-pools-smaller-matches-and-bots): a percent above `baseTolerance`, at most 100.
pub(crate) fn check_max_tolerance(
    base: f64,
    max: Option<f64>,
    push: &mut impl FnMut(&str, Code, String),
) {
    let Some(max) = max else {
        return;
    };
    if !max.is_finite() || max > 100.0 || max <= base {
        push(
            "algorithm.maxTolerance",
            Code::ValidationError,
            format!("maxTolerance must be above baseTolerance ({base}) and at most 100"),
        );
    }
}
