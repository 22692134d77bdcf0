//! `needed` of a searching status (docs/searching.md#statuses): the seats of the smallest
//! match a candidate's wait allows now. (`found` comes from the cycle's own
//! tries, see [`crate::grouping::Grouper::found`].)

use crate::config::GameModeConfig;

/// Seats of the smallest match `config` allows a candidate that has waited
/// `wait_seconds`: the base shape's; a relaxed shape's once its
/// `afterSeconds` has passed; `minTeams × min` once a flexible shape
/// settles; `minHumans` once bots apply.
pub fn needed(config: &GameModeConfig, wait_seconds: f64) -> u32 {
    let mut needed = config.match_size();
    for step in &config.relaxations {
        if wait_seconds >= step.after_seconds {
            needed = needed.min(step.match_shape.iter().sum());
        }
    }
    if let Some(flex) = config.match_shape.flexible() {
        if wait_seconds >= flex.settle_after() {
            needed = needed.min(flex.min_teams().saturating_mul(flex.team_size.min));
        }
    }
    if let Some(bots) = &config.bots {
        if wait_seconds >= bots.fill_after_seconds {
            needed = needed.min(bots.min_humans);
        }
    }
    needed
}
